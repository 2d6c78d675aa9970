// builder: batch MPT root (or nodes, with a sink) over sorted pairs (see builder.h for the shape).
//
// One chunk (per thread, buffers reused across chunks, cleared not freed):
//
//   stack pass   adjacent-key common prefixes drive a stack of open branches. A leaf is
//                encoded the moment it is attached (its path starts one nibble below its
//                parent) straight into buf, the buffer the first keccak batch reads; a
//                closed branch is queued in branches[height] with the slot (dst) where its
//                handle must go; an extension (rare) in exts[height].
//   hash         height 0: one keccak256_batch over all leaf encodings, digests straight
//                into digests[]. Height h >= 1: every queued extension and branch is
//                encoded from its children's handles into buf, its own handle is written to
//                its dst, then one keccak256_batch for the height.
//
//   slots[]   uint32 handles. Element 0: the chunk root. Branch block (18 elements):
//             handles of children 0..15, then 1 + the pair index of the branch's value
//             (prefix key), 0 = none, then the mask of non-empty children (bit c = child
//             c). Extension: one element, its child's handle.
//   handle    0                   empty slot
//             1 .. 2^31-1         hashed: digest at digests[32*handle] (digest 0 = zeros)
//             kEmbTag | off       embedded (< 32 bytes): encoding at emb[off], length
//                                 emb[off] - 0xbf (an embedded node is a list with a
//                                 one-byte header 0xc0 + payload)
//
// Invariant: a node's handle is written before any node that reads it is encoded (a
// parent's height exceeds its children's), so a branch is encoded in one pass over its
// non-empty children (mask) with no lookups beyond the digest it copies.
//
// With a sink (write_trie) the stack pass also notes every node in the order it closes
// (post-order: a leaf when attached, a branch, then its extension, when attached to its
// parent), buf keeps every batch's encodings (enc_off/enc_len by digest index), and after
// the last batch the noted nodes that are hashed (or the chunk root, when it is the top)
// go to the sink in that order.
#include "engine/mpt/builder.h"

#include <algorithm>
#include <bit>
#include <optional>
#include <utility>
#include <cassert>
#include <cstring>

#include "engine/mpt/builder_codec.h"
#include "engine/mpt/node_codec.h"
#include "engine/pipeline/parallel.h"
#include "kernels/hex_prefix.h"
#include "kernels/keccak256.h"

namespace st::mpt {

using st::kernels::key_nibble;

namespace {

constexpr uint32_t kEmbTag = 0x80000000u;
constexpr uint32_t kBlock = 18;  // slots per branch block: 16 children, value, child mask

struct Open {
  uint32_t depth, slot, first_key;
  uint32_t height;
};

// The subtree most recently completed and not yet attached to a parent.
struct Cur {
  bool is_leaf;
  uint32_t id;  // pair index (leaf) or the branch's slot block offset
  uint32_t first_key;
  uint32_t depth;  // branch depth (unused for leaves)
  uint32_t height;
};

struct BranchRec {
  uint32_t slot, dst;  // slot block offset; where its handle goes
};
struct ExtRec {
  uint32_t key, begin, end, child, dst;  // path = nibbles [begin, end) of pair key; child handle slot
};
// A node noted for the sink: its handle is at slots[slot]; its children at slots[block ..]
// (branch: 16 slots, extension: 1).
struct Noted {
  uint32_t slot, block, key, depth;  // key: a pair of its range
  NodeKind kind;
};

struct Scratch {
  std::vector<uint32_t> slots;
  std::vector<Open> stack;
  std::vector<std::vector<BranchRec>> branches;  // by height
  std::vector<std::vector<ExtRec>> exts;         // by height
  std::vector<uint8_t> buf;                      // encodings of the batch being built
  std::vector<const uint8_t*> msgs;              // into buf (rebased when buf grows)
  std::vector<size_t> lens;
  std::vector<uint8_t> digests;                  // 32 bytes per hashed node of the chunk
  std::vector<uint8_t> emb;                      // embedded encodings
  std::vector<Noted> noted;                      // with a sink: the chunk's nodes in post-order
  std::vector<uint32_t> enc_off, enc_len;        // with a sink: encoding of digest i in buf
  std::vector<uint8_t> value, enc;               // hook leaves and split nodes
  BuildStats stats;
};

struct Ctx {
  std::span<const KeyValue> kv;
  size_t chunk;
  NodeCapture* capture;
  bool parallel;
  std::vector<Scratch>* scratch;  // one per thread slot (pipeline::thread_slot())
  NodeSink* sink = nullptr;       // write_trie (serial)
  LeafHook* hook = nullptr;
  io::Status* status = nullptr;   // with a sink: the first error; nothing is sunk after it
  Scratch& local() const { return parallel ? (*scratch)[st::pipeline::thread_slot()] : (*scratch)[0]; }
  bool failed() const { return status && !status->ok(); }
  void fail(io::Status s) const {
    if (!s.ok() && !failed()) *status = std::move(s);
  }
};

inline bool is_hashed(uint32_t handle) { return handle != 0 && !(handle & kEmbTag); }

inline size_t nibble_len(const KeyValue& k) { return size_t(k.key_len) * 2; }

inline size_t lcp_nibbles(const KeyValue& x, const KeyValue& y) { return lcp_nibbles_of(x.key, x.key_len, y.key, y.key_len); }

void capture_append(NodeCapture* cap, const uint8_t* enc, size_t len) {
  if (!cap) return;
  if (cap->offsets.empty()) cap->offsets.push_back(0);
  cap->bytes.insert(cap->bytes.end(), enc, enc + len);
  cap->offsets.push_back(cap->bytes.size());
}

// kSink: the build notes its nodes for a sink (a template parameter, so the in-memory
// root's stack pass carries no test of it).
template <bool kSink>
class ChunkBuilder {
 public:
  ChunkBuilder(Scratch& s, std::span<const KeyValue> kv, NodeCapture* cap, NodeSink* sink)
      : s_(s), kv_(kv), cap_(cap), sink_(sink) {}

  NodeRef build(size_t lo, size_t hi, size_t d0) {
    const size_t keys = hi - lo;
    reset(keys);
    Open* const stack = s_.stack.data();
    size_t top = 0;  // open branches: stack[0 .. top)
    Cur cur{true, uint32_t(lo), uint32_t(lo), 0, 0};
    for (size_t i = lo + 1; i < hi; ++i) {
      const uint32_t l = uint32_t(lcp_nibbles(kv_[i - 1], kv_[i]));
      assert(l >= d0);
      while (top && stack[top - 1].depth > l) {
        Open o = stack[--top];
        attach(cur, o);
        cur = Cur{false, o.slot, o.first_key, o.depth, o.height};
      }
      if (!top || stack[top - 1].depth < l) {
        const uint32_t slot = nslots_;
        std::memset(slots_ + slot, 0, kBlock * sizeof(uint32_t));
        nslots_ += kBlock;
        stack[top++] = Open{l, slot, cur.first_key, 1};
      }
      attach(cur, stack[top - 1]);
      cur = Cur{true, uint32_t(i), uint32_t(i), 0, 0};
    }
    while (top) {
      Open o = stack[--top];
      attach(cur, o);
      cur = Cur{false, o.slot, o.first_key, o.depth, o.height};
    }
    if (cur.is_leaf) {
      slots_[0] = leaf_handle(cur.id, d0);
      note(NodeKind::leaf, 0, 0, cur.id, uint32_t(d0));
    } else {
      place_branch(cur, uint32_t(d0), 0);
    }
    assert(nslots_ <= s_.slots.size());

    hash_batch();  // the leaves
    s_.stats.leaves += keys;
    for (uint32_t h = 1; h <= max_h_; ++h) {
      const std::vector<ExtRec>& exts = s_.exts[h];
      const std::vector<BranchRec>& branches = s_.branches[h];
      begin_batch(exts.size() + branches.size());
      for (const ExtRec& e : exts) encode_ext(e);
      for (const BranchRec& b : branches) encode_branch(b);
      s_.stats.extensions += exts.size();
      s_.stats.branches += branches.size();
      hash_batch();
    }
    return ref_of(slots_[0]);
  }

  // After build: the noted nodes that are hashed (and the chunk root when top) to the sink.
  io::Status sink_nodes(bool top) {
    const uint8_t* const buf = s_.buf.data();
    for (const Noted& n : s_.noted) {
      const uint32_t h = slots_[n.slot];
      if (!is_hashed(h) && !(top && n.slot == 0)) continue;
      const std::span<const uint8_t> rlp = is_hashed(h) ? std::span<const uint8_t>(buf + s_.enc_off[h], s_.enc_len[h])
                                                        : emb_span(h);
      uint32_t children = 0;
      if (n.kind == NodeKind::branch)
        for (unsigned c = 0; c < 16; ++c) children += is_hashed(slots_[n.block + c]);
      else if (n.kind == NodeKind::extension)
        children = is_hashed(slots_[n.block]);
      ++s_.stats.sunk;
      s_.stats.sunk_bytes += rlp.size();
      if (io::Status st = sink_->node(n.kind, rlp, children, kv_[n.key].key, n.depth); !st.ok()) return st;
    }
    return {};
  }

 private:
  // Bounds of one chunk: at most keys - 1 branches (17 slots each) and as many extensions
  // (1 slot each), keys open branches, keys messages per batch.
  void reset(size_t keys) {
    if (s_.slots.size() < 1 + (kBlock + 1) * keys) s_.slots.resize(1 + (kBlock + 1) * keys);
    slots_ = s_.slots.data();
    slots_[0] = 0;
    nslots_ = 1;
    if (s_.stack.size() < keys + 1) s_.stack.resize(keys + 1);
    for (auto& v : s_.branches) v.clear();
    for (auto& v : s_.exts) v.clear();
    max_h_ = 0;
    s_.emb.clear();
    has_emb_ = false;
    if (s_.buf.size() < 65536) s_.buf.resize(65536);
    w_ = s_.buf.data();
    buf_end_ = w_ + s_.buf.size();
    begin_batch(keys);
    digest_count_ = 1;  // digest 0: zeros, read for empty slots
    if (s_.digests.size() < 32) s_.digests.resize(32);
    std::memset(s_.digests.data(), 0, 32);
    if constexpr (kSink) {
      s_.noted.clear();
      s_.enc_off.assign(1, 0);
      s_.enc_len.assign(1, 0);
    }
  }

  [[gnu::always_inline]] void note(NodeKind kind, uint32_t slot, uint32_t block, uint32_t key, uint32_t depth) {
    if constexpr (kSink) s_.noted.push_back(Noted{slot, block, key, depth, kind});
  }

  std::span<const uint8_t> emb_span(uint32_t h) const {
    const uint8_t* e = s_.emb.data() + (h & ~kEmbTag);
    return {e, size_t(e[0] - 0xbf)};
  }

  NodeRef ref_of(uint32_t h) const {
    NodeRef r;
    if (h == 0) return r;
    if (h & kEmbTag) {
      const std::span<const uint8_t> e = emb_span(h);
      r.len = uint8_t(e.size());
      std::memcpy(r.bytes, e.data(), e.size());
    } else {
      r.len = 32;
      std::memcpy(r.bytes, s_.digests.data() + 32 * size_t(h), 32);
    }
    return r;
  }

  // Room for `need` more bytes at w_; growing buf moves it, so queued messages are rebased.
  [[gnu::always_inline]] void reserve(size_t need) {
    if (size_t(buf_end_ - w_) < need) [[unlikely]] grow(need);
  }
  [[gnu::noinline]] void grow(size_t need) {
    uint8_t* const base = s_.buf.data();
    const size_t used = size_t(w_ - base);
    s_.buf.resize(std::max(2 * s_.buf.size(), used + need));
    uint8_t* const nb = s_.buf.data();
    for (size_t j = 0; j < m_; ++j) msgs_[j] = nb + (msgs_[j] - base);
    w_ = nb + used;
    buf_end_ = nb + s_.buf.size();
  }

  // The handle of the encoding just written at [w_, end): embedded when short (w_ not
  // advanced), else queued for this height's batch.
  [[gnu::always_inline]] uint32_t finish(uint8_t* begin, uint8_t* end) {
    const size_t len = size_t(end - begin);
    if (len < 32) {
      const size_t off = s_.emb.size();
      s_.emb.insert(s_.emb.end(), begin, end);
      has_emb_ = true;
      return kEmbTag | uint32_t(off);
    }
    msgs_[m_] = begin;
    lens_[m_] = len;
    if constexpr (kSink) {
      s_.enc_off.push_back(uint32_t(begin - s_.buf.data()));
      s_.enc_len.push_back(uint32_t(len));
    }
    batch_bytes_ += len;
    w_ = end;
    return uint32_t(digest_count_ + m_++);
  }

  [[gnu::always_inline]] uint32_t leaf_handle(uint32_t i, size_t path_begin) {
    const KeyValue& k = kv_[i];
    reserve(leaf_suffix_bound(k.key_len, k.value_len));
    uint8_t* const end = put_leaf_suffix(w_, k.key, k.key_len, path_begin, k.value, k.value_len);
    return finish(w_, end);
  }

  [[gnu::always_inline]] void attach(const Cur& cur, Open& parent) {
    const uint32_t P = parent.depth;
    if (cur.is_leaf) {
      const KeyValue& k = kv_[cur.id];
      if (nibble_len(k) == P) {
        slots_[parent.slot + 16] = cur.id + 1;
        return;
      }
      const uint32_t h = leaf_handle(cur.id, P + 1);
      const unsigned nib = nibble_at(k.key, P);
      slots_[parent.slot + nib] = h;
      note(NodeKind::leaf, parent.slot + nib, 0, cur.id, P + 1);
      slots_[parent.slot + 17] |= 1u << nib;
      return;
    }
    const unsigned nib = nibble_at(kv_[cur.first_key].key, P);
    slots_[parent.slot + 17] |= 1u << nib;
    const uint32_t placed = place_branch(cur, P + 1, parent.slot + nib);
    parent.height = std::max<uint32_t>(parent.height, placed + 1);
  }

  // Queues a closed branch (and the extension over [path_begin, depth) when its path is
  // longer) whose handle goes to slots[dst]; returns the height of the node at dst.
  uint32_t place_branch(const Cur& cur, uint32_t path_begin, uint32_t dst) {
    const uint32_t h = cur.height;
    if (h + 2 > s_.branches.size()) {
      s_.branches.resize(h + 2);
      s_.exts.resize(h + 2);
    }
    if (cur.depth > path_begin) {
      const uint32_t e = nslots_++;
      slots_[e] = 0;
      s_.branches[h].push_back(BranchRec{cur.id, e});
      s_.exts[h + 1].push_back(ExtRec{cur.first_key, path_begin, cur.depth, e, dst});
      note(NodeKind::branch, e, cur.id, cur.first_key, cur.depth);
      note(NodeKind::extension, dst, e, cur.first_key, path_begin);
      max_h_ = std::max(max_h_, h + 1);
      return h + 1;
    }
    s_.branches[h].push_back(BranchRec{cur.id, dst});
    note(NodeKind::branch, dst, cur.id, cur.first_key, cur.depth);
    max_h_ = std::max(max_h_, h);
    return h;
  }

  void encode_ext(const ExtRec& e) {
    const NodeRef child = ref_of(slots_[e.child]);
    const uint8_t* key = kv_[e.key].key;
    reserve(extension_size(e.end - e.begin, child));
    uint8_t* const end = put_extension_key(w_, key, e.begin, e.end, child);
    slots_[e.dst] = finish(w_, end);
  }

  // Branch in one pass over its non-empty children: children at w_ + 9 (room for the
  // largest list header), the header right in front. Without embedded nodes in the chunk
  // every child is hashed (a0 || digest); a run of empty slots before it is one 16-byte
  // store of 0x80 advanced by the run length (writes up to 16 bytes past the last slot,
  // inside the reserved bound, overwritten by the value item).
  void encode_branch(const BranchRec& b) {
    const uint32_t* const slot = slots_ + b.slot;
    const uint32_t vpair = slot[16];
    const KeyValue* v = vpair ? &kv_[vpair - 1] : nullptr;
    reserve(kBranchMaxFixed + 16 + (v ? st::kernels::rlp_string_size(v->value, v->value_len) : 0));
    uint8_t* const body = w_ + 9;
    uint8_t* p = body;
    const uint8_t* const digests = s_.digests.data();
    if (!has_emb_) {
      uint8_t empties[16];
      std::memset(empties, 0x80, 16);
      uint32_t mask = slot[17];
      unsigned next = 0;  // first slot not yet written
      while (mask) {
        const unsigned c = unsigned(std::countr_zero(mask));
        mask &= mask - 1;
        std::memcpy(p, empties, 16);
        p += c - next;
        *p = 0xa0;
        std::memcpy(p + 1, digests + 32 * size_t(slot[c]), 32);
        p += 33;
        next = c + 1;
      }
      std::memcpy(p, empties, 16);
      p += 16 - next;
    } else {
      for (int c = 0; c < 16; ++c) {
        const uint32_t h = slot[c];
        if (h == 0) {
          *p++ = 0x80;
        } else if (h & kEmbTag) {
          const uint8_t* e = s_.emb.data() + (h & ~kEmbTag);
          const size_t len = size_t(e[0] - 0xbf);
          std::memcpy(p, e, len);
          p += len;
        } else {
          *p = 0xa0;
          std::memcpy(p + 1, digests + 32 * size_t(h), 32);
          p += 33;
        }
      }
    }
    if (v) p = st::kernels::rlp_put_string(p, v->value, v->value_len);
    else *p++ = 0x80;
    const size_t payload = size_t(p - body);
    uint8_t* const begin = body - st::kernels::rlp_header_size(payload);
    st::kernels::rlp_put_list_header(begin, payload);
    slots_[b.dst] = finish(begin, p);
  }

  // Hashes the queued messages into digests[digest_count_ ..] and starts the next batch.
  void hash_batch() {
    const size_t m = m_;
    if (m) {
      s_.digests.resize(32 * (digest_count_ + m));
      if (cap_)
        for (size_t j = 0; j < m; ++j) capture_append(cap_, msgs_[j], lens_[j]);
      st::kernels::keccak256_batch(msgs_, lens_, s_.digests.data() + 32 * digest_count_, m);
      s_.stats.keccak_calls += m;
      s_.stats.keccak_bytes += batch_bytes_;
      digest_count_ += m;
    }
    m_ = 0;
    batch_bytes_ = 0;
    if constexpr (!kSink) w_ = s_.buf.data();  // with a sink, buf keeps every encoding until sink_nodes
  }

  // Room for n messages in the next batch.
  void begin_batch(size_t n) {
    if (s_.msgs.size() < n) {
      s_.msgs.resize(n);
      s_.lens.resize(n);
    }
    msgs_ = s_.msgs.data();
    lens_ = s_.lens.data();
    m_ = 0;
  }

  Scratch& s_;
  std::span<const KeyValue> kv_;
  NodeCapture* cap_;
  NodeSink* sink_;
  uint8_t* w_ = nullptr;
  uint8_t* buf_end_ = nullptr;
  uint32_t* slots_ = nullptr;
  uint32_t nslots_ = 0;
  const uint8_t** msgs_ = nullptr;
  size_t* lens_ = nullptr;
  size_t m_ = 0;
  size_t batch_bytes_ = 0;
  size_t digest_count_ = 1;
  uint32_t max_h_ = 0;
  bool has_emb_ = false;
};

// The reference to a node built above the chunks (a split node or a hook leaf), sunk first
// when the sink takes it (hashed, or the top).
NodeRef close_node(const Ctx& c, NodeKind kind, const uint8_t* enc, size_t len, uint32_t hashed_children,
                   const uint8_t* key, size_t depth, bool top) {
  Scratch& s = c.local();
  if (len >= 32) {
    capture_append(c.capture, enc, len);
    ++s.stats.keccak_calls;
    s.stats.keccak_bytes += len;
  }
  if (c.sink && (len >= 32 || top) && !c.failed()) {
    ++s.stats.sunk;
    s.stats.sunk_bytes += len;
    c.fail(c.sink->node(kind, {enc, len}, hashed_children, key, uint32_t(depth)));
  }
  return make_ref(enc, len);
}

// A single key with a hook: its value (and record children) from the hook, then its leaf.
NodeRef hook_leaf(const Ctx& c, size_t i, size_t depth, bool top) {
  Scratch& s = c.local();
  uint32_t record_children = 0;
  c.fail(c.hook->leaf(i, &s.value, &record_children));
  if (c.failed()) return {};
  const KeyValue& k = c.kv[i];
  s.enc.resize(leaf_size(nibble_len(k) - depth, s.value.data(), s.value.size()));
  const uint8_t* end = put_leaf_key(s.enc.data(), k.key, depth, nibble_len(k), s.value.data(), s.value.size());
  ++s.stats.leaves;
  return close_node(c, NodeKind::leaf, s.enc.data(), size_t(end - s.enc.data()), record_children, k.key, depth, top);
}

NodeRef build_range(const Ctx& c, size_t lo, size_t hi, size_t d0, bool top);

// The branch at depth D over [lo, hi) (and the extension over [d0, D) when D > d0): its
// sub-ranges of nibble D, found by binary search, built in parallel, then the branch.
NodeRef build_split(const Ctx& c, size_t lo, size_t hi, size_t d0, size_t D, bool top) {
  const std::span<const KeyValue> kv = c.kv;
  size_t first = lo;
  const KeyValue* value_pair = nullptr;
  if (nibble_len(kv[lo]) == D) { value_pair = &kv[lo]; first = lo + 1; }
  size_t bounds[17];
  bounds[0] = first;
  for (unsigned nib = 0; nib < 16; ++nib)
    bounds[nib + 1] = size_t(std::partition_point(kv.begin() + bounds[nib], kv.begin() + hi,
                                                  [&](const KeyValue& p) { return key_nibble(p.key, D) <= nib; }) -
                             kv.begin());
  assert(bounds[16] == hi);
  NodeRef child[16];
  auto body = [&](size_t nib) {
    if (bounds[nib + 1] > bounds[nib]) child[nib] = build_range(c, bounds[nib], bounds[nib + 1], D + 1, false);
  };
  if (c.parallel) st::pipeline::parallel_for(16, 1, [&](size_t b, size_t e) { for (size_t nib = b; nib < e; ++nib) body(nib); });
  else for (size_t nib = 0; nib < 16; ++nib) body(nib);
  if (c.failed()) return {};

  Scratch& s = c.local();
  const uint8_t* v = value_pair ? value_pair->value : nullptr;
  const size_t vlen = value_pair ? value_pair->value_len : 0;
  uint32_t hashed = 0;
  for (const NodeRef& r : child) hashed += r.is_hash();
  s.enc.resize(branch_size(child, v, vlen));
  put_branch(s.enc.data(), child, v, vlen);
  ++s.stats.branches;
  NodeRef ref = close_node(c, NodeKind::branch, s.enc.data(), s.enc.size(), hashed, kv[lo].key, D, top && D == d0);
  if (D > d0) {
    s.enc.resize(extension_size(D - d0, ref));
    put_extension_key(s.enc.data(), kv[lo].key, d0, D, ref);
    ++s.stats.extensions;
    ref = close_node(c, NodeKind::extension, s.enc.data(), s.enc.size(), ref.is_hash(), kv[lo].key, d0, top);
  }
  return ref;
}

// The node over [lo, hi) at depth d0 (all its keys share nibbles [0, d0)); top: the trie's
// top node (sunk even when embedded).
NodeRef build_range(const Ctx& c, size_t lo, size_t hi, size_t d0, bool top) {
  if (c.failed()) return {};
  if (c.hook && hi - lo == 1) return hook_leaf(c, lo, d0, top);
  if (hi - lo <= c.chunk) {
    if (!c.sink) return ChunkBuilder<false>(c.local(), c.kv, c.capture, nullptr).build(lo, hi, d0);
    ChunkBuilder<true> chunk(c.local(), c.kv, c.capture, c.sink);
    const NodeRef ref = chunk.build(lo, hi, d0);
    c.fail(chunk.sink_nodes(top));
    return ref;
  }
  return build_split(c, lo, hi, d0, lcp_nibbles(c.kv[lo], c.kv[hi - 1]), top);
}

// Sums the per-thread counts (the top node's keccak counted here when it is embedded).
BuildStats merged_stats(const std::vector<Scratch>& scratch, const NodeRef& top) {
  BuildStats t;
  for (const Scratch& s : scratch) {
    t.leaves += s.stats.leaves;
    t.branches += s.stats.branches;
    t.extensions += s.stats.extensions;
    t.keccak_calls += s.stats.keccak_calls;
    t.keccak_bytes += s.stats.keccak_bytes;
    t.sunk += s.stats.sunk;
    t.sunk_bytes += s.stats.sunk_bytes;
    if (s.stats.leaves) ++t.threads_used;
  }
  if (top.len < 32) {
    ++t.keccak_calls;
    t.keccak_bytes += top.len;
  }
  return t;
}

// Keys strictly ascending in byte order.
bool keys_ascending(std::span<const KeyValue> pairs) {
  for (size_t i = 1; i < pairs.size(); ++i) {
    const KeyValue& a = pairs[i - 1];
    const KeyValue& b = pairs[i];
    const uint32_t m = std::min(a.key_len, b.key_len);
    const int c = m ? std::memcmp(a.key, b.key, m) : 0;
    if (c > 0 || (c == 0 && a.key_len >= b.key_len)) return false;
  }
  return true;
}

}  // namespace

bool is_sorted_unique(std::span<const KeyValue> pairs) {
  for (const KeyValue& p : pairs)
    if (p.value_len == 0) return false;
  return keys_ascending(pairs);
}

Hash32 build_root(std::span<const KeyValue> pairs, const BuildOptions& options, BuildStats* stats) {
  if (pairs.empty()) return kEmptyRoot;
  assert(is_sorted_unique(pairs));
  const bool parallel = !options.capture && options.threads != 1;
  std::optional<st::pipeline::ThreadScope> scope;
  if (parallel) scope.emplace(options.threads);
  // Slots of the scope's threads are < concurrency(); the calling thread outside the
  // scope's loops keeps whatever slot it has elsewhere (never concurrently with them).
  std::vector<Scratch> scratch(parallel ? std::max(st::pipeline::concurrency(), st::pipeline::thread_slot() + 1) : 1);
  Ctx c{pairs, std::max<size_t>(options.chunk_keys, 1), options.capture, parallel, &scratch};
  NodeRef top = build_range(c, 0, pairs.size(), 0, true);
  if (top.len < 32) capture_append(options.capture, top.bytes, top.len);
  if (stats) *stats = merged_stats(scratch, top);
  return root_hash_of(top);
}

io::Status write_trie(std::span<const KeyValue> pairs, NodeSink& sink, Hash32* root, const WriteOptions& options,
                      BuildStats* stats) {
  if (!keys_ascending(pairs)) return {io::Errc::bad_argument, "mpt build: keys not strictly ascending (duplicate key?)"};
  for (const KeyValue& p : pairs) {
    if (options.hook ? p.key_len != pairs[0].key_len : p.value_len == 0)
      return {io::Errc::bad_argument, options.hook ? "mpt build: keys of different lengths" : "mpt build: an empty value"};
  }
  *root = kEmptyRoot;
  if (pairs.empty()) return {};
  std::vector<Scratch> scratch(1);
  io::Status status;
  // With a hook no range is a chunk: every leaf is built alone, in key order.
  Ctx c{pairs, options.hook ? 0 : std::max<size_t>(options.chunk_keys, 1), nullptr, false, &scratch, &sink, options.hook, &status};
  const NodeRef top = build_range(c, 0, pairs.size(), 0, true);
  if (!status.ok()) return status;
  if (stats) *stats = merged_stats(scratch, top);
  *root = root_hash_of(top);
  return {};
}

Hash32 build_secure_root(std::span<const KeyValue> pairs, const BuildOptions& options, BuildStats* stats) {
  const size_t n = pairs.size();
  std::vector<uint8_t> hashed(32 * n);
  std::vector<const uint8_t*> msgs(n);
  std::vector<size_t> lens(n);
  for (size_t i = 0; i < n; ++i) { msgs[i] = pairs[i].key; lens[i] = pairs[i].key_len; }
  if (n) st::kernels::keccak256_batch(msgs.data(), lens.data(), hashed.data(), n);
  std::vector<KeyValue> sorted(n);
  for (size_t i = 0; i < n; ++i) sorted[i] = KeyValue{hashed.data() + 32 * i, 32, pairs[i].value, pairs[i].value_len};
  auto less = [](const KeyValue& a, const KeyValue& b) { return std::memcmp(a.key, b.key, 32) < 0; };
  if (options.threads == 1 || options.capture) {
    std::sort(sorted.begin(), sorted.end(), less);
  } else {
    st::pipeline::ThreadScope scope(options.threads);
    st::pipeline::parallel_sort(sorted.begin(), sorted.end(), less);
  }
  return build_root(sorted, options, stats);
}

}  // namespace st::mpt
