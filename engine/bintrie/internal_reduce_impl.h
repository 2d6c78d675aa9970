// internal_reduce_impl: the template body of reduce_levels_generic (see internal_reduce.h).
#pragma once

#include <algorithm>
#include <cstring>

#include "engine/bintrie/stem_bits.h"

namespace st::bintrie {

template <class StemOf>
std::vector<ReduceItem> reduce_levels_generic(const Hasher& h, StemOf stem_of, std::vector<ReduceItem> items,
                                              unsigned stop_depth, ReduceStats* stats) {
  unsigned maxd = stop_depth;
  for (const auto& it : items) maxd = std::max<unsigned>(maxd, it.depth);
  std::vector<std::vector<ReduceItem>> levels(maxd + 1);
  for (auto& it : items) levels[it.depth].push_back(it);
  items.clear();
  items.shrink_to_fit();
  std::vector<ReduceItem> parents, merged;
  std::vector<Bytes32> msgs;  // 2 per message
  std::vector<Bytes32> out;
  for (unsigned d = maxd; d > stop_depth; --d) {
    std::vector<ReduceItem>& L = levels[d];
    if (L.empty()) continue;
    parents.clear();
    msgs.clear();
    for (size_t i = 0; i < L.size();) {
      const uint32_t rep = L[i].rep;
      if (i + 1 < L.size() && stem_lcp(stem_of(rep), stem_of(L[i + 1].rep)) >= d - 1) {
        msgs.push_back(L[i].hash);
        msgs.push_back(L[i + 1].hash);
        i += 2;
      } else if (stem_bit(stem_of(rep), d - 1)) {
        msgs.push_back(Bytes32{});
        msgs.push_back(L[i].hash);
        i += 1;
      } else {
        msgs.push_back(L[i].hash);
        msgs.push_back(Bytes32{});
        i += 1;
      }
      parents.push_back({rep, uint8_t(d - 1), {}});
    }
    const size_t m = parents.size();
    out.resize(m);
    h.hash64_batch(msgs[0].data(), out[0].data(), m);
    if (stats) stats->messages += m;
    for (size_t j = 0; j < m; ++j) parents[j].hash = out[j];
    std::vector<ReduceItem>& up = levels[d - 1];
    if (up.empty()) {
      up.swap(parents);
    } else {
      merged.clear();
      merged.reserve(up.size() + parents.size());
      std::merge(up.begin(), up.end(), parents.begin(), parents.end(), std::back_inserter(merged),
                 [](const ReduceItem& a, const ReduceItem& b) { return a.rep < b.rep; });
      up.swap(merged);
    }
    L.clear();
    L.shrink_to_fit();
  }
  return std::move(levels[stop_depth]);
}

}  // namespace st::bintrie
