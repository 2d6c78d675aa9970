// trie_commit: root_hash and commit_many. The dirty nodes of all tries, by depth (from the
// batch logs or by a walk), are encoded and hashed deepest first through
// keccak256_batch_pull; each digest goes where the parent reads it, then one epoch bump
// cleans every node. Children are always hashed before their parents.
#include "engine/mpt/trie_internal.h"

#include "kernels/keccak256.h"

namespace st::mpt {

using trie_detail::common_prefix;
using trie_detail::same;
using trie_detail::to_nibbles;

namespace {

// Branch encoding from a children block's dense slots (present children in nibble order;
// embedded bits by slot): a present child writes 0xa0 and its 32 bytes, an absent one 0x80.
// Without embedded refs (secure tries) no branch depends on the fill pattern (the lower
// levels' patterns are random: a mispredicted branch per slot cost more than the copies): a
// full branch is 16 straight copies; otherwise one step per present child, whose gap of
// absent nibbles before it is written as 16 bytes of 0x80 and then stepped over. The last
// 0x80 run may pass the encoding's end by up to 15 bytes but ends at most at out + 9 + 32c
// + 32 <= out + 521 (c <= 15 present children), inside kBranchMaxFixed = 538. The payload
// is written at out + 9 and the list header right in front of it; returns the first byte
// and sets *end one past the last. Same bytes as put_branch over the slots' refs; writes
// within out[0, kBranchMaxFixed + rlp_string_size(value)).
inline uint8_t* put_branch_slots(uint8_t* out, const uint8_t (*slots)[32], uint32_t present, uint32_t embedded,
                                 const uint8_t* value, size_t value_len, uint8_t** end) {
  static constexpr uint64_t kAbsent8 = 0x8080808080808080ull;
  uint8_t* const body = out + 9;
  uint8_t* p = body;
  if (embedded == 0 && present == 0xffff) {
    for (uint32_t s = 0; s < 16; ++s, p += 33) {
      *p = 0xa0;
      std::memcpy(p + 1, slots[s], 32);
    }
  } else if (embedded == 0) {
    unsigned next = 0;  // the first nibble not written yet
    for (uint32_t m = present, s = 0; m; m &= m - 1, ++s) {
      const unsigned i = unsigned(__builtin_ctz(m));
      std::memcpy(p, &kAbsent8, 8);  // nibbles next .. i - 1 (at most 15) are absent
      std::memcpy(p + 8, &kAbsent8, 8);
      p += i - next;
      *p = 0xa0;
      std::memcpy(p + 1, slots[s], 32);
      p += 33;
      next = i + 1;
    }
    std::memcpy(p, &kAbsent8, 8);
    std::memcpy(p + 8, &kAbsent8, 8);
    p += 16 - next;
  } else {
    uint32_t s = 0;  // the next dense slot
    for (uint32_t i = 0; i < 16; ++i) {
      if (!((present >> i) & 1)) {
        *p++ = 0x80;
        continue;
      }
      if ((embedded >> s) & 1) {
        const size_t len = slots[s][31];
        std::memcpy(p, slots[s], len);
        p += len;
      } else {
        *p = 0xa0;
        std::memcpy(p + 1, slots[s], 32);
        p += 33;
      }
      ++s;
    }
  }
  return finish_branch(body, p, value, value_len, end);
}

}  // namespace

// A dirty node to commit, with where its ref goes.
struct Trie::CommitItem {
  void* t;  // Trie*
  NodeId id;
  uint32_t parent_kids;  // the parent branch's children block (kNoNode: root or extension child)
  uint32_t nib;          // slot in that block; with parent_kids == kNoNode: the parent extension's id (kNoNode: the root)
  uint32_t kids = kNoNode;  // from a batch log, a branch without a value: its children block (its node line is not read)
  uint16_t kid_mask = 0;    // with kids: the branch's kid_mask
};

// Per-thread buffers of commit_many, reused across calls (no page faults per block).
struct Trie::CommitScratch {
  std::vector<std::vector<CommitItem>> by_depth;
  std::vector<CommitItem>& level_at(size_t d) {
    if (by_depth.size() <= d) by_depth.resize(d + 1);
    return by_depth[d];
  }
  struct ParentSlot {
    void* t;        // Trie*
    uint32_t kids;  // the parent branch's children block (kNoNode: see nib)
    uint32_t nib;   // its slot; with kids == kNoNode: the parent extension's id, or kNoNode for the root
  };
  std::vector<ParentSlot> parent_targets;  // per hashed node of the current pull call (<= kPullChunk): where its ref goes
  std::vector<uint8_t> digests;            // per hashed node of the current pull call: 32 bytes
  std::vector<uint8_t> lane_buf[st::kernels::kKeccak256PullLanes];  // pull-fed commit: one encoding per kernel lane
};

// The producer of the pull-fed commit (Trie::commit_feed_next): items [i, end) of one depth.
struct Trie::CommitFeed {
  const std::vector<CommitItem>* level;
  size_t i, end;
  CommitScratch* sc;
  CommitStats* st;
  NodeCapture* capture;
};

namespace {

void capture_node(NodeCapture* capture, const uint8_t* p, size_t len) {
  if (!capture) return;
  if (capture->offsets.empty()) capture->offsets.push_back(0);
  capture->bytes.insert(capture->bytes.end(), p, p + len);
  capture->offsets.push_back(capture->bytes.size());
}

constexpr size_t kPrefetchAhead = 8;
// Nodes per keccak256_batch_pull call of the commit: bounds its digest array (64 KiB) and
// parent list, and a bulk load's commit stays in the same small buffers.
constexpr size_t kPullChunk = 2048;
// Scratch (commit lists, dirty logs) of up to this many nodes is kept for the next block;
// a bulk load's (a 1M-slot trie: ~1.6M nodes, ~64 MB of lists) is released.
constexpr size_t kKeepScratchItems = size_t(1) << 17;

}  // namespace

// The commit feed's prefetches for item i, in two stages: the node line 2 * ahead, then
// (from that line) the children slot lines or the leaf's path and value 1 * ahead; they
// arrive while the kernel permutes.
inline void Trie::commit_prefetch(const std::vector<CommitItem>& level, size_t i) {
  if (i + 2 * kPrefetchAhead < level.size()) {
    const CommitItem& p = level[i + 2 * kPrefetchAhead];
    if (p.kids == kNoNode) __builtin_prefetch(&static_cast<const Trie*>(p.t)->nodes_[p.id]);
  }
  if (i + kPrefetchAhead < level.size()) {
    const CommitItem& p = level[i + kPrefetchAhead];
    const Trie* pt = static_cast<const Trie*>(p.t);
    const Node* px = p.kids == kNoNode ? &pt->nodes_[p.id] : nullptr;  // (its line was requested above)
    if (!px || px->kind == NodeKind::branch) {
      // the slot lines of the present children (dense: slots 0 .. c-1 in lines 1 .. ceil(c / 2)),
      // from the record for a logged branch
      const char* kb = reinterpret_cast<const char*>(&pt->kids_[px ? px->child : p.kids]);
      for (int j = 0, lines = (popcount16(px ? px->kid_mask : p.kid_mask) + 1) / 2; j < lines; ++j) __builtin_prefetch(kb + 64 + 64 * j);
    } else {  // line 1: the rest of the path, the value (a leaf's) or child ref (an extension's)
      __builtin_prefetch(reinterpret_cast<const char*>(px) + 64);
    }
  }
}

// (trie.h) The buffer grown as needed, or space in enc_bytes_ taken once written. A branch
// is encoded from its children block's slot lines: a logged branch without a value from its
// record alone (its node line is not read), any other from its node. No node line is
// written (the epoch bump cleans every node).
inline uint8_t* Trie::encode_commit_item(const CommitItem& it, std::vector<uint8_t>& lane_buf, uint8_t** end) {
  const auto space = [&](size_t need) {
    if (tracks_locs_) return enc_bytes_.space(need);
    if (lane_buf.size() < need) lane_buf.resize(need);
    return lane_buf.data();
  };
  const auto keep = [&](uint8_t* at, uint8_t* first) {
    if (!tracks_locs_) return first;
    enc_bytes_.take(size_t(*end - at));
    if (enc_at_.size() <= it.id) enc_at_.resize(size_t(it.id) + 1);
    enc_at_[it.id] = {first, uint32_t(*end - first)};
    return first;
  };
  const Node* x = it.kids == kNoNode ? &nodes_[it.id] : nullptr;
  if (x && x->kind != NodeKind::branch) {
    uint8_t* at = space(encoded_bound(*x));
    *end = put_encoding(*x, at);
    return keep(at, at);
  }
  const uint32_t k = x ? x->child : it.kids;
  const uint16_t kid_mask = x ? x->kid_mask : it.kid_mask;
#ifndef NDEBUG
  if (!x) {
    const Node& dx = nodes_[it.id];
    assert(dx.kind == NodeKind::branch && !dx.has_value && dx.child == it.kids && dx.kid_mask == it.kid_mask);
  }
  for (unsigned b = 0; b < 16; ++b) assert(((kid_mask >> b) & 1) == (kids_[k].id[b] != kNoNode));
#endif
  uint8_t* at = space(x ? encoded_bound(*x) : kBranchMaxFixed);
  const uint32_t embedded = any_embedded_ ? kids_embedded_[k] & ((1u << popcount16(kid_mask)) - 1) : 0;
  const bool value = x && x->has_value;
  return keep(at, put_branch_slots(at, kids_[k].slot, kid_mask, embedded, value ? x->bytes.value_data() : nullptr,
                                   value ? x->bytes.value_size() : 0, end));
}

bool Trie::commit_feed_next(void* ctx, unsigned lane, st::kernels::Keccak256Message* m) {
  CommitFeed& f = *static_cast<CommitFeed*>(ctx);
  const std::vector<CommitItem>& level = *f.level;
  assert(lane < st::kernels::kKeccak256PullLanes);
  std::vector<uint8_t>& buf = f.sc->lane_buf[lane];
  for (; f.i < f.end; ++f.i) {
    const size_t i = f.i;
    commit_prefetch(level, i);
    const CommitItem& it = level[i];
    Trie* t = static_cast<Trie*>(it.t);
    uint8_t* end;
    uint8_t* out = t->encode_commit_item(it, buf, &end);
    const size_t len = size_t(end - out);
    // The ref goes where the parent reads it (its children slot, the parent extension's
    // value, or the trie's root ref): an embedded ref now, a 32-byte ref after the pull call
    // (the digest array, then store_ref).
    if (len < 32) {
      NodeRef r;
      r.len = uint8_t(len);
      std::memcpy(r.bytes, out, len);
      t->store_ref(it.parent_kids, it.nib, r);
      if (it.id == t->root_) {  // a short root stays embedded in its ref; root_hash() hashes it
        ++f.st->keccak_calls;
        f.st->keccak_bytes += len;
        capture_node(f.capture, out, len);
      }
      continue;
    }
    const size_t h = f.sc->parent_targets.size();
    f.sc->parent_targets.push_back({t, it.parent_kids, it.nib});
    *m = {out, len, f.sc->digests.data() + 32 * h};
    ++f.st->keccak_calls;
    f.st->keccak_bytes += len;
    capture_node(f.capture, out, len);
    ++f.i;
    return true;
  }
  return false;
}

// Whether every dirty trie of the commit has a valid batch log; *max_height: the tallest
// logged node's height.
bool Trie::commit_logs_valid(std::span<Trie* const> tries, uint32_t* max_height) {
  *max_height = 0;
  for (Trie* t : tries) {
    if (!t->dirty()) continue;
    if (!t->dirty_log_valid_) return false;
    for (const DirtyRecord& r : t->dirty_log_) *max_height = std::max(*max_height, uint32_t(r.height));
  }
  return true;
}

// The commit lists from the batch logs, by height (index max_height - height, so the hash
// pass still runs from the last index to 0 and children come first). Returns the depths.
size_t Trie::commit_lists_from_logs(std::span<Trie* const> tries, CommitScratch& sc, uint32_t max_height) {
  size_t depths = 0;
  for (size_t d = 0; d <= max_height; ++d) sc.level_at(d).clear();
  for (Trie* t : tries) {
    if (!t->dirty()) continue;
    for (const DirtyRecord& r : t->dirty_log_) sc.by_depth[max_height - r.height].push_back({t, r.id, r.parent_kids, r.nib, r.kids, r.kid_mask});
    depths = max_height + 1;
  }
  return depths;
}

// The batch logs are used up: cleared, and a bulk load's (millions of records) not kept for
// the blocks that follow.
void Trie::release_dirty_logs(std::span<Trie* const> tries) {
  for (Trie* t : tries) {
    if (t->dirty_log_.capacity() > kKeepScratchItems) std::vector<DirtyRecord>().swap(t->dirty_log_);
    else t->dirty_log_.clear();
    t->dirty_log_valid_ = false;
  }
}

// The dirty children of one depth's items into `next` (each node line and a branch's ids
// line prefetched a few items ahead).
void Trie::commit_collect_level(const std::vector<CommitItem>& level, std::vector<CommitItem>& next) {
  for (size_t i = 0; i < level.size(); ++i) {
    if (i + 2 * kPrefetchAhead < level.size()) {
      const CommitItem& f = level[i + 2 * kPrefetchAhead];
      __builtin_prefetch(&static_cast<Trie*>(f.t)->nodes_[f.id]);
    }
    if (i + kPrefetchAhead < level.size()) {  // its node line was prefetched above
      const CommitItem& f = level[i + kPrefetchAhead];
      const Trie* ft = static_cast<const Trie*>(f.t);
      const Node& fx = ft->nodes_[f.id];
      if (fx.kind == NodeKind::branch) __builtin_prefetch(&ft->kids_[fx.child].id);  // line 0: the ids
    }
    const CommitItem& it = level[i];
    Trie* t = static_cast<Trie*>(it.t);
    const Node& x = t->nodes_[it.id];
    if (x.kind == NodeKind::extension) {
      if (t->is_dirty(t->nodes_[x.child])) next.push_back({t, x.child, kNoNode, it.id});
    } else if (x.kind == NodeKind::branch && t->dirty_kids(x)) {
      const Kids& k = t->kids_[x.child];
      for (uint32_t m = t->dirty_kids(x); m; m &= m - 1) {
        const uint32_t nib = uint32_t(__builtin_ctz(m));
        next.push_back({t, k.id[nib], x.child, slot_rank(x.kid_mask, nib)});
      }
    }
  }
}

// The commit lists by walking down from the dirty roots, one depth at a time (breadth
// first, so the nodes of the next depth can be prefetched while this one is scanned).
// Returns the depths.
size_t Trie::commit_lists_by_walk(std::span<Trie* const> tries, CommitScratch& sc) {
  auto& l0 = sc.level_at(0);
  l0.clear();
  for (Trie* t : tries)
    if (t->dirty()) l0.push_back({t, t->root_, kNoNode, kNoNode});
  size_t depths = l0.empty() ? 0 : 1;
  for (size_t d = 0; d < depths; ++d) {
    auto& next = sc.level_at(d + 1);
    next.clear();
    commit_collect_level(sc.by_depth[d], next);
    if (!next.empty()) depths = d + 2;
  }
  return depths;
}

// 2. Deepest depth first, one keccak256_batch_pull per kPullChunk nodes of a depth: the
//    kernel asks for the next node whenever a lane is free, and commit_feed_next encodes
//    it into that lane's buffer from lines it prefetched a few nodes earlier, so the
//    misses of the clean siblings' ref lines are served while the kernel permutes.
//    Digests land in a small array and go to where each parent reads them after the call
//    (written from inside the kernel, a store to a cold line held up its own stores).
void Trie::commit_hash_lists(CommitScratch& sc, size_t depths, CommitStats& st, NodeCapture* capture) {
  sc.digests.resize(32 * kPullChunk);
  for (size_t d = depths; d-- > 0;) {
    CommitFeed feed{&sc.by_depth[d], 0, 0, &sc, &st, capture};
    while (feed.i < feed.level->size()) {
      feed.end = std::min(feed.level->size(), feed.i + kPullChunk);
      sc.parent_targets.clear();
      st::kernels::keccak256_batch_pull(&Trie::commit_feed_next, &feed);
      for (size_t h = 0; h < sc.parent_targets.size(); ++h) {
        const auto& ps = sc.parent_targets[h];
        NodeRef r;
        r.len = 32;
        std::memcpy(r.bytes, sc.digests.data() + 32 * h, 32);
        static_cast<Trie*>(ps.t)->store_ref(ps.kids, ps.nib, r);
      }
    }
    st.nodes_rehashed += sc.by_depth[d].size();
    ++st.depths;
  }
}

void Trie::commit_many(std::span<Trie* const> tries, CommitStats* stats, NodeCapture* capture) {
  for (Trie* t : tries) t->enc_bytes_.clear();  // (a trie with locators keeps them only for hand_to)
  hash_dirty_many(tries, stats, capture);
  // 3. Every node of the committed tries is clean now: one epoch bump each (a trie listed
  //    twice is bumped once: after its bump it is no longer dirty).
  for (Trie* t : tries)
    if (t->dirty()) t->bump_epoch();
}

// commit_many's first two steps: every dirty node hashed and its ref stored where its parent
// reads it; the nodes still marked dirty.
void Trie::hash_dirty_many(std::span<Trie* const> tries, CommitStats* stats, NodeCapture* capture) {
  thread_local CommitScratch sc;
  // 1. Collect the dirty nodes of every trie, by depth: from the batch logs when every
  //    dirty trie has one, else by a walk from the roots.
  uint32_t max_height = 0;
  const bool logged = commit_logs_valid(tries, &max_height);
  size_t depths = logged ? commit_lists_from_logs(tries, sc, max_height) : 0;
  release_dirty_logs(tries);
  if (!logged) depths = commit_lists_by_walk(tries, sc);
  CommitStats st;
  commit_hash_lists(sc, depths, st, capture);
  if (stats) {
    stats->nodes_rehashed += st.nodes_rehashed;
    stats->keccak_calls += st.keccak_calls;
    stats->keccak_bytes += st.keccak_bytes;
    stats->depths = std::max(stats->depths, st.depths);
    if (logged && depths) ++stats->from_batch_log;
  }
  if (st.nodes_rehashed > kKeepScratchItems) sc.by_depth = {};  // a bulk commit: give its per-depth lists back
}

void Trie::bump_epoch() {
  if (epoch_ == UINT16_MAX) {  // wrap: no node may keep an epoch that epoch_ will reach again
    for (size_t i = 0; i < nodes_.size(); ++i) nodes_[i].epoch = 0;
    epoch_ = 1;
  } else {
    ++epoch_;
  }
}

Hash32 Trie::root_hash(CommitStats* stats, NodeCapture* capture) {
  Trie* self = this;
  commit_many(std::span<Trie* const>(&self, 1), stats, capture);
  if (root_ == kNoNode) return kEmptyRoot;
  return root_hash_of(root_ref_);
}

}  // namespace st::mpt
