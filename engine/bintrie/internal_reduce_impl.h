// internal_reduce_impl: the template body of reduce_levels_generic (see internal_reduce.h).
// Internally items are 16 bytes (stem prefix, representative, index of the hash in a pool
// that grows by one hash64_batch output per depth), so the per-depth lists and merges move
// little memory; hashes are copied only into the messages.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstring>

#include "engine/bintrie/stem_bits.h"

namespace st::bintrie {

template <class StemOf>
std::vector<ReduceItem> reduce_levels_generic(const Hasher& h, StemOf stem_of, std::vector<ReduceItem> items,
                                              unsigned stop_depth, ReduceStats* stats) {
  struct Slim {
    uint64_t prefix;
    uint32_t rep;
    uint32_t hidx;
  };
  unsigned maxd = stop_depth;
  for (const auto& it : items) maxd = std::max<unsigned>(maxd, it.depth);
  std::vector<size_t> count(maxd + 1, 0);
  for (const auto& it : items) count[it.depth]++;
  std::vector<std::vector<Slim>> levels(maxd + 1);
  for (unsigned d = 0; d <= maxd; ++d) levels[d].reserve(count[d] + (d < maxd ? count[d + 1] : 0));
  std::vector<Bytes32> pool;
  pool.reserve(2 * items.size() + 64);
  for (const auto& it : items) {
    levels[it.depth].push_back({it.prefix, it.rep, uint32_t(pool.size())});
    pool.push_back(it.hash);
  }
  items.clear();
  items.shrink_to_fit();
  std::vector<Slim> parents, merged;
  std::vector<Bytes32> msgs;  // 2 per message
  for (unsigned d = maxd; d > stop_depth; --d) {
    std::vector<Slim>& L = levels[d];
    if (L.empty()) continue;
    const unsigned shared = d - 1;  // siblings share d-1 leading bits
    auto siblings = [&](const Slim& a, const Slim& b) {
      if (shared == 0) return true;
      if (shared <= 64) return ((a.prefix ^ b.prefix) >> (64 - shared)) == 0;
      return a.prefix == b.prefix && stem_lcp(stem_of(a.rep), stem_of(b.rep)) >= shared;
    };
    auto bit = [&](const Slim& a) {
      return shared < 64 ? unsigned(a.prefix >> (63 - shared)) & 1u : stem_bit(stem_of(a.rep), shared);
    };
    msgs.resize(2 * L.size());
    parents.clear();
    const uint32_t base = uint32_t(pool.size());
    size_t m = 0;
    for (size_t i = 0; i < L.size(); ++m) {
      const Slim& a = L[i];
      if (i + 1 < L.size() && siblings(a, L[i + 1])) {
        msgs[2 * m] = pool[a.hidx];
        msgs[2 * m + 1] = pool[L[i + 1].hidx];
        i += 2;
      } else if (bit(a)) {
        msgs[2 * m] = Bytes32{};
        msgs[2 * m + 1] = pool[a.hidx];
        i += 1;
      } else {
        msgs[2 * m] = pool[a.hidx];
        msgs[2 * m + 1] = Bytes32{};
        i += 1;
      }
      parents.push_back({a.prefix, a.rep, uint32_t(base + m)});
    }
    pool.resize(base + m);
    h.hash64_batch(msgs[0].data(), pool[base].data(), m);
    if (stats) stats->messages += m;
    std::vector<Slim>& up = levels[d - 1];
    if (up.empty()) {
      up.swap(parents);
    } else {
      merged.clear();
      merged.reserve(up.size() + parents.size());
      std::merge(up.begin(), up.end(), parents.begin(), parents.end(), std::back_inserter(merged),
                 [](const Slim& a, const Slim& b) { return a.rep < b.rep; });
      up.swap(merged);
    }
    L.clear();
    L.shrink_to_fit();
  }
  std::vector<ReduceItem> out;
  for (const Slim& s : levels[stop_depth]) out.push_back({s.rep, uint8_t(stop_depth), s.prefix, pool[s.hidx]});
  return out;
}

}  // namespace st::bintrie
