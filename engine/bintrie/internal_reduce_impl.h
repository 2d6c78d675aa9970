// internal_reduce_impl: the template body of reduce_levels (see internal_reduce.h).
#pragma once

#include <algorithm>
#include <cassert>
#include <cstring>
#include <span>

#include "engine/bintrie/stem_bits.h"
#include "engine/bintrie/stem_subtree.h"

namespace st::bintrie {

template <class StemOf>
std::span<const ReduceSlim> reduce_levels(const Hasher& h, StemOf stem_of, ReduceScratch& S, size_t n,
                                          unsigned stop_depth, ReduceStats* stats) {
  const ReduceSlim* in = S.in.data();
  const uint8_t* depth = S.depth.data();
  unsigned maxd = stop_depth;
  for (size_t i = 0; i < n; ++i) maxd = std::max<unsigned>(maxd, depth[i]);
  // Regroup the items by depth (counting sort, stable).
  std::vector<uint32_t>& db = S.depth_begin;
  db.assign(maxd + 2, 0);
  for (size_t i = 0; i < n; ++i) db[depth[i] + 1]++;
  for (unsigned d = 0; d <= maxd; ++d) db[d + 1] += db[d];
  ReduceSlim* seg = S.seg.grow(n);
  {
    // db[d] is used as the fill cursor, then restored.
    for (size_t i = 0; i < n; ++i) seg[db[depth[i]]++] = in[i];
    for (unsigned d = maxd + 1; d > 0; --d) db[d] = db[d - 1];
    db[0] = 0;
  }
  // Parents carried into the current depth (ping-pong buffers).
  ReduceSlim* carry = S.par_a.grow(n + 1);
  ReduceSlim* next = S.par_b.grow(n + 1);
  size_t ncarry = 0;
  size_t pool_size = n;
  for (unsigned d = maxd; d > stop_depth; --d) {
    const ReduceSlim* a = seg + db[d];
    const size_t na = db[d + 1] - db[d];
    if (na + ncarry == 0) continue;
    const unsigned shared = d - 1;  // siblings share d-1 leading bits
    auto siblings = [&](const ReduceSlim& x, const ReduceSlim& y) {
      if (shared == 0) return true;
      if (shared <= 64) return ((x.prefix ^ y.prefix) >> (64 - shared)) == 0;
      return x.prefix == y.prefix && stem_lcp(stem_of(x.rep), stem_of(y.rep)) >= shared;
    };
    auto bit = [&](const ReduceSlim& x) {
      return shared < 64 ? unsigned(x.prefix >> (63 - shared)) & 1u : stem_bit(stem_of(x.rep), shared);
    };
    const size_t most = na + ncarry;  // at most one message per item
    Bytes32* pool = S.pool.grow(pool_size + most, pool_size);
    Bytes32* msgs = S.msgs.grow(2 * most);
    // Merge-walk the depth-d items of seg and the carried parents, in rep order.
    size_t ia = 0, ic = 0, m = 0;
    auto has = [&] { return ia < na || ic < ncarry; };
    auto take = [&]() -> const ReduceSlim& {
      if (ic == ncarry || (ia < na && a[ia].rep < carry[ic].rep)) return a[ia++];
      return carry[ic++];
    };
    auto peek = [&]() -> const ReduceSlim& {
      if (ic == ncarry || (ia < na && a[ia].rep < carry[ic].rep)) return a[ia];
      return carry[ic];
    };
    const uint32_t base = uint32_t(pool_size);
    while (has()) {
      const ReduceSlim x = take();
      Bytes32* msg = msgs + 2 * m;
      if (has() && siblings(x, peek())) {
        const ReduceSlim& y = take();
        copy32(msg[0], pool[x.hidx]);
        copy32(msg[1], pool[y.hidx]);
      } else {
        const unsigned side = bit(x);
        copy32(msg[side], pool[x.hidx]);
        msg[side ^ 1] = Bytes32{};
      }
      next[m] = {x.prefix, x.rep, uint32_t(base + m)};
      ++m;
    }
    h.hash64_batch(msgs[0].data(), pool[base].data(), m);
    pool_size += m;
    if (stats) stats->messages += m;
    std::swap(carry, next);
    ncarry = m;
  }
  // The items at stop_depth: the inputs already there merged with the last parents.
  const ReduceSlim* a = seg + db[stop_depth];
  const size_t na = db[stop_depth + 1] - db[stop_depth];
  if (na == 0) return {carry, ncarry};
  if (ncarry == 0) return {a, na};
  std::merge(a, a + na, carry, carry + ncarry, next,
             [](const ReduceSlim& x, const ReduceSlim& y) { return x.rep < y.rep; });
  return {next, na + ncarry};
}

}  // namespace st::bintrie
