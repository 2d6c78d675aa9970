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
  // seg, carry and next keep one readable slot before and after their items: the merge
  // below reads one item past either end of a list and masks it out.
  ReduceSlim* seg = S.seg.grow(n + 2) + 1;
  seg[-1] = seg[n] = ReduceSlim{};
  {
    // db[d] is used as the fill cursor, then restored.
    for (size_t i = 0; i < n; ++i) seg[db[depth[i]]++] = in[i];
    for (unsigned d = maxd + 1; d > 0; --d) db[d] = db[d - 1];
    db[0] = 0;
  }
  // Parents carried into the current depth (ping-pong buffers).
  ReduceSlim* carry = S.par_a.grow(n + 3) + 1;
  ReduceSlim* next = S.par_b.grow(n + 3) + 1;
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
    Hash32* pool = S.pool.grow(pool_size + most, pool_size);
    Hash32* msgs = S.msgs.grow(2 * most);
    // Depth d's list: the depth-d items of seg merged with the carried parents, in rep
    // order (the two never share a rep). Branch-free (a pointer select): which side comes
    // next is a coin toss for random keys, so a branch would mispredict about half the
    // time. Each step waits on the previous one (load, compare, advance), so the merge runs
    // from both ends at once, two independent chains: the front emits the (most + 1) / 2
    // smallest items, the back the rest. A list's slot past either end is readable (seg's
    // neighbours or padding, carry's sentinels) and masked out by the bounds terms.
    ReduceSlim* cur = S.cur.grow(most + 1);
    carry[-1] = carry[ncarry] = ReduceSlim{};
    auto pick = [](const ReduceSlim* x, const ReduceSlim* y, bool take_x) {
      // select by mask: compilers turn a ?: of two pointers into a branch here
      const uintptr_t mask = uintptr_t(0) - uintptr_t(take_x);
      return *reinterpret_cast<const ReduceSlim*>((reinterpret_cast<uintptr_t>(x) & mask) |
                                                  (reinterpret_cast<uintptr_t>(y) & ~mask));
    };
    size_t ia = 0, ic = 0;                                  // front cursors
    ptrdiff_t ja = ptrdiff_t(na) - 1, jc = ptrdiff_t(ncarry) - 1;  // back cursors
    const size_t back_steps = most / 2, front_steps = most - back_steps;
    for (size_t t = 0; t < back_steps; ++t) {
      const bool fa = (ic >= ncarry) | ((ia < na) & (a[ia].rep < carry[ic].rep));
      cur[t] = pick(a + ia, carry + ic, fa);
      ia += fa;
      ic += !fa;
      const bool ba = (jc < 0) | ((ja >= 0) & (a[ja].rep > carry[jc].rep));
      cur[most - 1 - t] = pick(a + ja, carry + jc, ba);
      ja -= ba;
      jc -= !ba;
    }
    if (front_steps > back_steps) {  // odd count: the middle item
      const bool fa = (ic >= ncarry) | ((ia < na) & (a[ia].rep < carry[ic].rep));
      cur[back_steps] = pick(a + ia, carry + ic, fa);
    }
    const size_t nc = most;
    cur[nc] = cur[nc - 1];  // readable sentinel for the pairing test of the last item
    // Pairing, branch-free as well (pair or lone is close to a coin toss too): a pair
    // hashes (x || y); a lone item x goes to the side its bit d-1 names, a zero sibling on
    // the other.
    static const Hash32 kZero{};
    const uintptr_t zero = reinterpret_cast<uintptr_t>(&kZero);
    const uint32_t base = uint32_t(pool_size);
    size_t m = 0;
    for (size_t j = 0; j < nc;) {
      const ReduceSlim& x = cur[j];
      const ReduceSlim& y = cur[j + 1];
      const bool pair = (j + 1 < nc) & siblings(x, y);
      const unsigned side = bit(x);
      const uintptr_t px = reinterpret_cast<uintptr_t>(&pool[x.hidx]);
      const uintptr_t py = reinterpret_cast<uintptr_t>(&pool[y.hidx]);
      const uintptr_t pair_mask = uintptr_t(0) - uintptr_t(pair);
      const uintptr_t right_mask = uintptr_t(0) - uintptr_t(side);
      // lone: left = side 0 ? x : zero, right = side 1 ? x : zero
      const uintptr_t lone_left = (px & ~right_mask) | (zero & right_mask);
      const uintptr_t lone_right = (px & right_mask) | (zero & ~right_mask);
      const uintptr_t left = (px & pair_mask) | (lone_left & ~pair_mask);
      const uintptr_t right = (py & pair_mask) | (lone_right & ~pair_mask);
      Hash32* msg = msgs + 2 * m;
      copy32(msg[0].data(), reinterpret_cast<const uint8_t*>(left));
      copy32(msg[1].data(), reinterpret_cast<const uint8_t*>(right));
      next[m] = {x.prefix, x.rep, uint32_t(base + m)};
      ++m;
      j += 1 + size_t(pair);
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
