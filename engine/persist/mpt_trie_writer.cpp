// mpt_trie_writer: recursive post-order build of one secure MPT (see mpt_trie_writer.h).
#include "engine/persist/mpt_trie_writer.h"

#include <cstring>

#include "engine/mpt/node_codec.h"
#include "kernels/hex_prefix.h"

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
  Writer w{keys, stride, leaf_kind, hook, sink, counts ? *counts : local, {}, {}};
  mpt::NodeRef top;
  if (io::Status s = w.build(0, n, 0, true, &top); !s.ok()) return s;
  *root = mpt::root_hash_of(top);
  return {};
}

}  // namespace st::persist
