// stem_subtree: sparse batched and dense single-stem subtree hashing (see stem_subtree.h).
#include "engine/bintrie/stem_subtree.h"

#include <algorithm>

namespace st::bintrie {

size_t stem_subtree_roots(const Hasher& h, StemLevels& L) {
  size_t total = 0;
  for (int level = 0; level < 8; ++level) {
    const size_t n = L.off.back();
    const size_t groups = L.off.size() - 1;
    if (n == groups) {
      // One node per stem (the common case of sparse stems): no pairing, offsets unchanged,
      // and it stays so for the remaining levels. Those run back to back on blocks of
      // kBlock stems, so the messages and hashes of a block stay in L1 between levels.
      constexpr size_t kBlock = 128;  // 8 KiB of messages + 4 KiB of hashes
      L.msgs.resize(2 * std::min(n, kBlock));
      Hash32* msgs = L.msgs.data();
      for (size_t b0 = 0; b0 < n; b0 += kBlock) {
        const size_t bn = std::min(kBlock, n - b0);
        Hash32* hash = L.hash.data() + b0;
        uint8_t* pos = L.pos.data() + b0;
        for (int l = 0; l < 8 - level; ++l) {
          for (size_t s = 0; s < bn; ++s) {
            const unsigned right = (pos[s] >> l) & 1u;
            copy32(msgs[2 * s + right], hash[s]);
            msgs[2 * s + (right ^ 1u)] = Hash32{};
          }
          h.hash64_batch(msgs[0].data(), hash[0].data(), bn);
        }
        for (size_t s = 0; s < bn; ++s) pos[s] = 0;  // every stem's root is at position 0
      }
      total += n * size_t(8 - level);
      break;
    }
    L.msgs.resize(2 * n);
    L.next_pos.resize(n);
    L.next_off.resize(L.off.size());
    size_t m = 0;
    for (size_t s = 0; s + 1 < L.off.size(); ++s) {
      L.next_off[s] = uint32_t(m);
      const size_t end = L.off[s + 1];
      for (size_t i = L.off[s]; i < end;) {
        const uint8_t p = L.pos[i];
        Hash32* msg = &L.msgs[2 * m];
        if (i + 1 < end && (L.pos[i + 1] >> 1) == (p >> 1)) {
          copy32(msg[0], L.hash[i]);
          copy32(msg[1], L.hash[i + 1]);
          i += 2;
        } else {
          copy32(msg[p & 1], L.hash[i]);
          msg[(p & 1) ^ 1] = Hash32{};
          i += 1;
        }
        L.next_pos[m] = uint8_t(p >> 1);
        ++m;
      }
    }
    L.next_off.back() = uint32_t(m);
    L.hash.resize(m);
    if (m) h.hash64_batch(L.msgs[0].data(), L.hash[0].data(), m);
    total += m;
    L.pos.swap(L.next_pos);
    L.off.swap(L.next_off);
  }
  return total;
}

void dense_stem_tree(const Hasher& h, const Hash32 leaf_hash[256], DenseStemTree* out) {
  // Leaves at heap indices 255..510.
  for (int i = 0; i < 256; ++i) out->node[255 + i] = leaf_hash[i];
  for (int i = 254; i >= 0; --i) hash_pair(h, out->node[2 * i + 1].data(), out->node[2 * i + 2].data(), out->node[i].data());
}

void DenseStemTree::siblings(uint8_t sub, Hash32 out[8]) const {
  size_t i = 255 + size_t(sub);
  for (int l = 0; l < 8; ++l) {
    const size_t sib = (i & 1) ? i + 1 : i - 1;
    out[l] = node[sib];
    i = (i - 1) / 2;
  }
}

}  // namespace st::bintrie
