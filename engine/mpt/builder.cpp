// builder: batch MPT root over sorted pairs (see builder.h for the shape).
//
// Arena of one chunk (per thread, reused across chunks, cleared not freed):
//
//   ops[]   : Op {key, a, b, c, kind, height}   24 bytes, post-order
//               leaf      key = pair index, a = first nibble of its path (path = [a, 2*key_len))
//               branch    key = leftmost pair, a = depth D, b = slot block index
//               extension key = leftmost pair, a = path begin, b = path end (= branch D), c = child op
//   slots[] : 17 uint32 per branch: child op ids for nibbles 0..15 (kNone = empty), then the
//             pair index of the value stored in the branch (prefix key) or kNone
//   refs[]  : NodeRef per op, filled height by height
//
// Invariant: ops are emitted only after all their children (post-order), so a node's height
// is known when it is emitted, and every child of a height-h node has height < h.
#include "engine/mpt/builder.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <cassert>
#include <cstring>

#include "engine/mpt/node_codec.h"
#include "engine/pipeline/parallel.h"
#include "kernels/hex_prefix.h"
#include "kernels/keccak256.h"

namespace st::mpt {

using st::kernels::key_nibble;

namespace {

constexpr uint32_t kNone = 0xffffffffu;
enum : uint8_t { kLeaf = 0, kBranch = 1, kExt = 2 };

struct Op {
  uint32_t key, a, b, c;
  uint8_t kind;
  uint32_t height;
};

struct Open {
  uint32_t depth, slot, first_key;
  uint32_t height;
};

// The subtree most recently completed and not yet attached to a parent.
struct Cur {
  bool is_leaf;
  uint32_t id;  // pair index (leaf) or branch op id
  uint32_t first_key;
  uint32_t depth;  // branch depth (unused for leaves)
  uint32_t height;
};

struct Scratch {
  std::vector<Op> ops;
  std::vector<uint32_t> slots;
  std::vector<NodeRef> refs;
  std::vector<uint32_t> order, height_start;
  std::vector<size_t> msg_off;  // per hashed node of the current height: where its encoding begins in buf
  std::vector<uint8_t> buf;
  std::vector<const uint8_t*> msgs;
  std::vector<size_t> lens;
  std::vector<uint32_t> msg_op;
  std::vector<uint8_t> digests;
  std::vector<Open> stack;
  BuildStats stats;
};

struct Ctx {
  std::span<const KeyValue> kv;
  size_t chunk;
  NodeCapture* capture;
  bool parallel;
  std::vector<Scratch>* scratch;  // one per thread slot (pipeline::thread_slot())
  Scratch& local() const { return parallel ? (*scratch)[st::pipeline::thread_slot()] : (*scratch)[0]; }
};

inline size_t nibble_len(const KeyValue& k) { return size_t(k.key_len) * 2; }

inline size_t lcp_nibbles(const KeyValue& x, const KeyValue& y) {
  const size_t n = std::min(x.key_len, y.key_len);
  size_t i = 0;
  while (i + 8 <= n) {
    uint64_t a, b;
    std::memcpy(&a, x.key + i, 8);
    std::memcpy(&b, y.key + i, 8);
    if (a != b) break;
    i += 8;
  }
  while (i < n && x.key[i] == y.key[i]) ++i;
  if (i == n) return 2 * n;
  return 2 * i + ((x.key[i] >> 4) == (y.key[i] >> 4) ? 1 : 0);
}

void capture_append(NodeCapture* cap, const uint8_t* enc, size_t len) {
  if (!cap) return;
  if (cap->offsets.empty()) cap->offsets.push_back(0);
  cap->bytes.insert(cap->bytes.end(), enc, enc + len);
  cap->offsets.push_back(cap->bytes.size());
}

class ChunkBuilder {
 public:
  ChunkBuilder(Scratch& s, std::span<const KeyValue> kv, NodeCapture* cap) : s_(s), kv_(kv), cap_(cap) {}

  NodeRef build(size_t lo, size_t hi, size_t d0) {
    s_.ops.clear();
    s_.slots.clear();
    s_.stack.clear();
    Cur cur{true, uint32_t(lo), uint32_t(lo), 0, 0};
    for (size_t i = lo + 1; i < hi; ++i) {
      const uint32_t l = uint32_t(lcp_nibbles(kv_[i - 1], kv_[i]));
      assert(l >= d0);
      while (!s_.stack.empty() && s_.stack.back().depth > l) {
        Open o = s_.stack.back();
        s_.stack.pop_back();
        attach(cur, o);
        cur = close(o);
      }
      if (s_.stack.empty() || s_.stack.back().depth < l) {
        const uint32_t slot = uint32_t(s_.slots.size() / 17);
        s_.slots.resize(s_.slots.size() + 17, kNone);
        s_.stack.push_back(Open{l, slot, cur.first_key, 1});
      }
      attach(cur, s_.stack.back());
      cur = Cur{true, uint32_t(i), uint32_t(i), 0, 0};
    }
    while (!s_.stack.empty()) {
      Open o = s_.stack.back();
      s_.stack.pop_back();
      attach(cur, o);
      cur = close(o);
    }
    uint32_t root_op;
    if (cur.is_leaf) root_op = emit(Op{cur.id, uint32_t(d0), 0, 0, kLeaf, 0});
    else root_op = wrap(cur, uint32_t(d0));
    hash_all();
    return s_.refs[root_op];
  }

 private:
  uint32_t emit(const Op& op) {
    s_.ops.push_back(op);
    return uint32_t(s_.ops.size() - 1);
  }

  // A completed branch placed under a parent whose child path starts at path_begin.
  uint32_t wrap(const Cur& cur, uint32_t path_begin) {
    if (cur.depth > path_begin) return emit(Op{cur.first_key, path_begin, cur.depth, cur.id, kExt, cur.height + 1});
    return cur.id;
  }

  void attach(const Cur& cur, Open& parent) {
    const uint32_t P = parent.depth;
    uint32_t* slot = &s_.slots[size_t(parent.slot) * 17];
    if (cur.is_leaf) {
      if (nibble_len(kv_[cur.id]) == P) {
        slot[16] = cur.id;
        return;
      }
      const uint32_t op = emit(Op{cur.id, P + 1, 0, 0, kLeaf, 0});
      slot[key_nibble(kv_[cur.id].key, P)] = op;
      return;
    }
    const uint32_t op = wrap(cur, P + 1);
    slot[key_nibble(kv_[cur.first_key].key, P)] = op;
    parent.height = std::max<uint32_t>(parent.height, s_.ops[op].height + 1);
  }

  Cur close(const Open& o) {
    const uint32_t op = emit(Op{o.first_key, o.depth, o.slot, 0, kBranch, o.height});
    return Cur{false, op, o.first_key, o.depth, o.height};
  }

  // Upper bound of an op's encoding (exact for leaves and extensions).
  size_t bound(const Op& op) const {
    const KeyValue& k = kv_[op.key];
    switch (op.kind) {
      case kLeaf: return leaf_size(size_t(k.key_len) * 2 - op.a, k.value, k.value_len);
      case kExt: return extension_size(op.b - op.a, s_.refs[op.c]);
      default: {
        const uint32_t v = s_.slots[size_t(op.b) * 17 + 16];
        return kBranchMaxFixed + (v == kNone ? 0 : st::kernels::rlp_string_size(kv_[v].value, kv_[v].value_len));
      }
    }
  }

  // Writes an op's encoding into out[0..bound(op)) (one pass: sizes and bytes together) and
  // returns [begin, end) of it. A branch's children are written first at out + 9 (room for
  // the largest RLP list header), then its header right in front of them, so the branch
  // starts at out + 9 - header size: no separate sizing pass over the 16 child refs.
  std::pair<uint8_t*, uint8_t*> encode(const Op& op, uint8_t* out) const {
    const KeyValue& k = kv_[op.key];
    switch (op.kind) {
      case kLeaf: return {out, put_leaf_key(out, k.key, op.a, size_t(k.key_len) * 2, k.value, k.value_len)};
      case kExt: return {out, put_extension_key(out, k.key, op.a, op.b, s_.refs[op.c])};
      default: {
        const uint32_t* slot = &s_.slots[size_t(op.b) * 17];
        uint8_t* const body = out + 9;
        uint8_t* p = body;
        for (int c = 0; c < 16; ++c) {
          const uint32_t id = slot[c];
          if (id == kNone) { *p++ = 0x80; continue; }
          const NodeRef& r = s_.refs[id];
          if (r.len == 32) {
            *p = 0xa0;
            std::memcpy(p + 1, r.bytes, 32);
            p += 33;
          } else {
            std::memcpy(p, r.bytes, r.len);
            p += r.len;
          }
        }
        if (slot[16] != kNone) p = st::kernels::rlp_put_string(p, kv_[slot[16]].value, kv_[slot[16]].value_len);
        else *p++ = 0x80;
        const size_t payload = size_t(p - body);
        uint8_t* begin = body - st::kernels::rlp_header_size(payload);
        st::kernels::rlp_put_list_header(begin, payload);
        return {begin, p};
      }
    }
  }

  void hash_all() {
    const size_t n = s_.ops.size();
    uint32_t max_h = 0;
    for (const Op& op : s_.ops) max_h = std::max(max_h, op.height);
    s_.height_start.assign(size_t(max_h) + 2, 0);
    for (const Op& op : s_.ops) ++s_.height_start[size_t(op.height) + 1];
    for (size_t h = 1; h < s_.height_start.size(); ++h) s_.height_start[h] += s_.height_start[h - 1];
    s_.order.resize(n);
    {
      std::vector<uint32_t>& pos = s_.msg_op;  // reuse as a cursor array
      pos.assign(s_.height_start.begin(), s_.height_start.end() - 1);
      for (uint32_t i = 0; i < n; ++i) s_.order[pos[s_.ops[i].height]++] = i;
    }
    s_.refs.resize(n);
    BuildStats& st = s_.stats;
    for (size_t h = 0; h <= max_h; ++h) {
      const uint32_t b = s_.height_start[h], e = s_.height_start[h + 1];
      // 1. encode every node of this height into one flat buffer (bounded, one pass); a short
      //    encoding is embedded in its ref right away, a long one is queued for the batch
      //    (by offset: buf may grow during the pass)
      const size_t count = size_t(e - b);
      s_.msg_off.resize(count);
      s_.lens.resize(count);
      s_.msg_op.resize(count);
      size_t total = 0, m = 0;
      for (uint32_t j = b; j < e; ++j) {
        const uint32_t id = s_.order[j];
        const Op& op = s_.ops[id];
        const size_t need = total + bound(op);
        if (s_.buf.size() < need) s_.buf.resize(std::max(need, s_.buf.size() * 2));
        uint8_t* const base = s_.buf.data();
        const auto [begin, end] = encode(op, base + total);
        total = size_t(end - base);
        const size_t len = size_t(end - begin);
        if (len < 32) {
          NodeRef& r = s_.refs[id];
          r.len = uint8_t(len);
          std::memcpy(r.bytes, begin, len);
        } else {
          s_.msg_off[m] = size_t(begin - base);
          s_.lens[m] = len;
          s_.msg_op[m] = id;
          ++m;
        }
        if (op.kind == kLeaf) ++st.leaves; else if (op.kind == kBranch) ++st.branches; else ++st.extensions;
      }
      // 2. hash the long ones in one batch
      if (!m) continue;
      s_.msgs.resize(m);
      for (size_t j = 0; j < m; ++j) {
        s_.msgs[j] = s_.buf.data() + s_.msg_off[j];
        capture_append(cap_, s_.msgs[j], s_.lens[j]);
      }
      s_.digests.resize(32 * m);
      st::kernels::keccak256_batch(s_.msgs.data(), s_.lens.data(), s_.digests.data(), m);
      st.keccak_calls += m;
      for (size_t j = 0; j < m; ++j) {
        NodeRef& r = s_.refs[s_.msg_op[j]];
        r.len = 32;
        std::memcpy(r.bytes, s_.digests.data() + 32 * j, 32);
        st.keccak_bytes += s_.lens[j];
      }
    }
  }

  Scratch& s_;
  std::span<const KeyValue> kv_;
  NodeCapture* cap_;
};

NodeRef hash_small(Scratch& s, NodeCapture* cap, const std::vector<uint8_t>& enc) {
  if (enc.size() >= 32) {
    capture_append(cap, enc.data(), enc.size());
    ++s.stats.keccak_calls;
    s.stats.keccak_bytes += enc.size();
  }
  return make_ref(enc.data(), enc.size());
}

NodeRef build_range(const Ctx& c, size_t lo, size_t hi, size_t d0) {
  if (hi - lo <= c.chunk) {
    Scratch& s = c.local();
    return ChunkBuilder(s, c.kv, c.capture).build(lo, hi, d0);
  }
  const std::span<const KeyValue> kv = c.kv;
  const size_t D = lcp_nibbles(kv[lo], kv[hi - 1]);
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
    if (bounds[nib + 1] > bounds[nib]) child[nib] = build_range(c, bounds[nib], bounds[nib + 1], D + 1);
  };
  if (c.parallel) st::pipeline::parallel_for(16, 1, [&](size_t b, size_t e) { for (size_t nib = b; nib < e; ++nib) body(nib); });
  else for (size_t nib = 0; nib < 16; ++nib) body(nib);

  Scratch& s = c.local();
  const uint8_t* v = value_pair ? value_pair->value : nullptr;
  const size_t vlen = value_pair ? value_pair->value_len : 0;
  std::vector<uint8_t> enc(branch_size(child, v, vlen));
  put_branch(enc.data(), child, v, vlen);
  ++s.stats.branches;
  NodeRef ref = hash_small(s, c.capture, enc);
  if (D > d0) {
    enc.resize(extension_size(D - d0, ref));
    put_extension_key(enc.data(), kv[lo].key, d0, D, ref);
    ++s.stats.extensions;
    ref = hash_small(s, c.capture, enc);
  }
  return ref;
}

}  // namespace

bool is_sorted_unique(std::span<const KeyValue> pairs) {
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (pairs[i].value_len == 0) return false;
    if (i == 0) continue;
    const KeyValue& a = pairs[i - 1];
    const KeyValue& b = pairs[i];
    const uint32_t m = std::min(a.key_len, b.key_len);
    const int c = m ? std::memcmp(a.key, b.key, m) : 0;
    if (c > 0 || (c == 0 && a.key_len >= b.key_len)) return false;
  }
  return true;
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
  NodeRef top = build_range(c, 0, pairs.size(), 0);
  if (top.len < 32) {
    capture_append(options.capture, top.bytes, top.len);
    ++c.local().stats.keccak_calls;
    c.local().stats.keccak_bytes += top.len;
  }
  if (stats) {
    *stats = BuildStats{};
    for (const Scratch& s : scratch) {
      stats->leaves += s.stats.leaves;
      stats->branches += s.stats.branches;
      stats->extensions += s.stats.extensions;
      stats->keccak_calls += s.stats.keccak_calls;
      stats->keccak_bytes += s.stats.keccak_bytes;
      if (s.stats.leaves) ++stats->threads_used;
    }
  }
  return root_hash_of(top);
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
