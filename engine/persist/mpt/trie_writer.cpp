// mpt/trie_writer: recursive post-order build of one secure MPT (see mpt/trie_writer.h).
#include "engine/persist/mpt/trie_writer.h"

#include <algorithm>
#include <cstring>

#include "engine/mpt/node_codec.h"
#include "kernels/hex_prefix.h"
#include "kernels/keccak256.h"

namespace st::persist {

using st::kernels::key_nibble;

namespace {

constexpr uint32_t kKeyNibbles = 64;

struct Writer {
  const uint8_t* keys;
  size_t stride;
  MptRecordKind leaf_kind;
  MptLeafHook& hook;
  MptNodeSink& sink;
  MptTrieCounts& counts;
  std::vector<uint8_t> value;  // leaf value scratch
  std::vector<uint8_t> enc;    // leaf encoding scratch
  // values_known(): every leaf encoded and hashed up front (leaf i = pre_enc[pre_off[i],
  // pre_off[i+1]) at depth pre_depth[i], its hash at pre_hash[32 i]).
  bool pre = false;
  std::vector<uint8_t> pre_enc, pre_hash, pre_depth;
  std::vector<size_t> pre_off;

  static uint32_t lcp(const uint8_t* a, const uint8_t* b) {
    uint32_t i = 0;
    while (i < kKeyNibbles && key_nibble(a, i) == key_nibble(b, i)) ++i;
    return i;
  }

  // A leaf hangs just below the deepest branch separating it from its neighbours:
  // depth = 1 + max(lcp(prev, it), lcp(it, next)) (0 for a single key).
  io::Status prepare_leaves(size_t n) {
    pre = true;
    pre_off.assign(1, 0);
    pre_depth.resize(n);
    pre_enc.clear();
    uint32_t left = 0;
    for (size_t i = 0; i < n; ++i) {
      const uint32_t right = i + 1 < n ? lcp(key(i), key(i + 1)) : 0;
      if (right == kKeyNibbles) return {io::Errc::bad_argument, "mpt build: duplicate key"};
      const uint32_t d = n == 1 ? 0 : 1 + std::max(left, right);
      left = right;
      pre_depth[i] = uint8_t(d);
      uint32_t rec_children = 0;
      if (io::Status s = hook.leaf(i, &value, &rec_children); !s.ok()) return s;
      if (rec_children) return {io::Errc::bad_argument, "mpt build: a leaf with record children in a values-known trie"};
      const size_t at = pre_enc.size();
      pre_enc.resize(at + mpt::leaf_size(kKeyNibbles - d, value.data(), value.size()));
      mpt::put_leaf_key(pre_enc.data() + at, key(i), d, kKeyNibbles, value.data(), value.size());
      pre_off.push_back(pre_enc.size());
    }
    std::vector<const uint8_t*> msgs(n);
    std::vector<size_t> lens(n);
    for (size_t i = 0; i < n; ++i) {
      msgs[i] = pre_enc.data() + pre_off[i];
      lens[i] = pre_off[i + 1] - pre_off[i];
    }
    pre_hash.resize(32 * n);
    st::kernels::keccak256_batch(msgs.data(), lens.data(), pre_hash.data(), n);
    return {};
  }

  const uint8_t* key(size_t i) const { return keys + i * stride; }

  io::Status emit(MptRecordKind kind, const uint8_t* p, size_t len, uint32_t children, const uint8_t* k, uint32_t d,
                  bool top, mpt::NodeRef* ref) {
    *ref = mpt::make_ref(p, len);
    if (len >= 32 || top) {
      ++counts.sunk;
      counts.sunk_bytes += len;
      return sink.node(kind, {p, len}, children, k, d);
    }
    return {};
  }

  io::Status build(size_t lo, size_t hi, uint32_t d, bool top, mpt::NodeRef* ref) {
    const uint8_t* first = key(lo);
    if (hi - lo == 1 && pre) {
      ++counts.leaves;
      if (pre_depth[lo] != d) return {io::Errc::bad_argument, "mpt build: leaf depth mismatch (keys not sorted?)"};
      const uint8_t* p = pre_enc.data() + pre_off[lo];
      const size_t len = pre_off[lo + 1] - pre_off[lo];
      if (len >= 32) {
        ref->len = 32;
        std::memcpy(ref->bytes, pre_hash.data() + 32 * lo, 32);
      } else {
        *ref = mpt::make_ref(p, len);
      }
      if (len >= 32 || top) {
        ++counts.sunk;
        counts.sunk_bytes += len;
        return sink.node(leaf_kind, {p, len}, 0, first, d);
      }
      return {};
    }
    if (hi - lo == 1) {
      ++counts.leaves;
      uint32_t rec_children = 0;
      if (io::Status s = hook.leaf(lo, &value, &rec_children); !s.ok()) return s;
      enc.resize(mpt::leaf_size(kKeyNibbles - d, value.data(), value.size()));
      uint8_t* end = mpt::put_leaf_key(enc.data(), first, d, kKeyNibbles, value.data(), value.size());
      return emit(leaf_kind, enc.data(), size_t(end - enc.data()), rec_children, first, d, top, ref);
    }
    const uint8_t* last = key(hi - 1);
    uint32_t c = d;
    while (c < kKeyNibbles && key_nibble(first, c) == key_nibble(last, c)) ++c;
    if (c == kKeyNibbles) return {io::Errc::bad_argument, "mpt build: duplicate key"};
    if (c > d) {
      ++counts.extensions;
      mpt::NodeRef child;
      if (io::Status s = build(lo, hi, c, false, &child); !s.ok()) return s;
      uint8_t buf[80];  // list header 2 + HP item 34 + child ref 33
      uint8_t* end = mpt::put_extension_key(buf, first, d, c, child);
      return emit(MptRecordKind::extension, buf, size_t(end - buf), child.is_hash() ? 1 : 0, first, d, top, ref);
    }
    ++counts.branches;
    mpt::NodeRef refs[16];
    uint32_t hashed = 0;
    size_t i = lo;
    while (i < hi) {
      const uint8_t nib = key_nibble(key(i), d);
      size_t j = i + 1;
      while (j < hi && key_nibble(key(j), d) == nib) ++j;
      // Keys ascending: a nibble seen again after a larger one means unsorted input.
      if (!refs[nib].empty()) return {io::Errc::bad_argument, "mpt build: keys not sorted"};
      if (io::Status s = build(i, j, d + 1, false, &refs[nib]); !s.ok()) return s;
      hashed += refs[nib].is_hash();
      i = j;
    }
    uint8_t buf[mpt::kBranchMaxFixed];
    uint8_t* end = nullptr;
    uint8_t* begin = mpt::put_branch_tail(buf, refs, nullptr, 0, &end);
    return emit(MptRecordKind::branch, begin, size_t(end - begin), hashed, first, d, top, ref);
  }
};

}  // namespace

io::Status write_mpt_trie(const uint8_t* keys, size_t stride, size_t n, MptRecordKind leaf_kind, MptLeafHook& hook,
                          MptNodeSink& sink, mpt::Hash32* root, MptTrieCounts* counts) {
  if (n == 0) {
    *root = mpt::kEmptyRoot;
    return {};
  }
  for (size_t i = 1; i < n; ++i)
    if (std::memcmp(keys + (i - 1) * stride, keys + i * stride, 32) >= 0)
      return {io::Errc::bad_argument, "mpt build: keys not strictly ascending (duplicate key?)"};
  MptTrieCounts local;
  Writer w{keys, stride, leaf_kind, hook, sink, counts ? *counts : local, {}, {}, false, {}, {}, {}, {}};
  if (hook.values_known())
    if (io::Status s = w.prepare_leaves(n); !s.ok()) return s;
  mpt::NodeRef top;
  if (io::Status s = w.build(0, n, 0, true, &top); !s.ok()) return s;
  *root = mpt::root_hash_of(top);
  return {};
}

}  // namespace st::persist
