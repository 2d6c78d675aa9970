// mpt/commit: MptCommitter, a block's state diff as one copy-on-write commit of an arena
// MPT database (see mpt/commit.h for the four phases). The partial trie of the dirty paths
// (resolve, apply, encode) is mpt/dirty_trie.h; this file runs it and counts the superseded
// records and keys; the release, publish and stats are CommitFrame's (commit_frame.h).
#include "engine/persist/mpt/commit.h"

#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "engine/persist/commit_frame.h"
#include "engine/persist/mpt/dirty_trie.h"

namespace st::persist {

namespace {

using mpt_commit_detail::AccountOp;
using mpt_commit_detail::DirtyTrie;
using mpt_commit_detail::Node;
using mpt_commit_detail::Op;

// The outcome's counts of keys and writes.
void count_keys(const DirtyTrie& c, CommitFrame::Outcome* out) {
  CommitFrame::Outcome& o = *out;
  for (const AccountOp& a : c.accts_) {
    o.keys_delta += int64_t(!a.removed) - int64_t(a.old_leaf >= 0);
    o.keys_delta -= int64_t(a.old_slots);
    for (const Op& op : a.slots) {
      if (op.existed && op.del) --o.keys_delta;
      if (!op.existed && !op.del) ++o.keys_delta;
    }
    o.slot_writes += a.slots.size();
  }
  o.records_written = c.records_written;
  o.bytes_written = c.bytes_written;
  o.accounts_written = c.accts_.size();
  o.records_read = c.records_read;
  o.apply_passes = c.passes;
}

}  // namespace

// The commit between its calls: the read store, the frame (phase clock, reader, later the
// writer), the partial trie of the dirty paths, hashed; the outcome.
struct MptCommitter::Pending {
  Pending(DbFiles& files, DeadPageLedger& dead, const CommitBase& base, std::unique_ptr<io::ArenaFileStore> store,
          PageReuse* reuse, stats::LogHistogram* latency)
      : read_store(std::move(store)), frame(files, dead, "mpt commit", base, read_store.get(), reuse, latency),
        trie(files, frame) {}
  std::unique_ptr<io::ArenaFileStore> read_store;
  CommitFrame frame;
  DirtyTrie trie;
  CommitFrame::Outcome out;
};

// A published commit's arrays (DirtyTrie::Buffers) for the next hash(), which may run on
// another thread while publish() hands them over.
struct MptCommitter::Spare {
  std::mutex mu;
  std::optional<DirtyTrie::Buffers> buffers;
  void put(DirtyTrie::Buffers b) {
    std::lock_guard<std::mutex> lock(mu);
    buffers = std::move(b);
  }
  std::optional<DirtyTrie::Buffers> take() {
    std::lock_guard<std::mutex> lock(mu);
    std::optional<DirtyTrie::Buffers> b = std::move(buffers);
    buffers.reset();
    return b;
  }
};

MptCommitter::MptCommitter(DbFiles& files) : CommitterBase(files), spare_(std::make_unique<Spare>()) {}
MptCommitter::~MptCommitter() = default;

io::Status MptCommitter::hash(const state::StateDiff& diff, std::array<uint8_t, 32>* root_hash) {
  pending_.reset();
  const CommitBase base = base_for_hash();
  if (io::Status s = CommitFrame::check_target(files_, base.params, io::TreeKind::mpt, "mpt commit", "an MPT"); !s.ok())
    return s;
  std::unique_ptr<io::ArenaFileStore> store;
  if (io::Status s = open_read_store(&store); !s.ok()) return s;
  auto p = std::make_unique<Pending>(files_, dead_, base, std::move(store), &reuse_, read_latency_);
  CommitFrame& frame = p->frame;
  DirtyTrie& c = p->trie;
  if (std::optional<DirtyTrie::Buffers> b = spare_->take()) c.take_buffers(std::move(*b));
  if (io::Status s = c.prepare(diff); !s.ok()) return s;
  if (io::Status s = c.resolve(); !s.ok()) return s;
  frame.resolved();
  if (io::Status s = c.apply_all(); !s.ok()) return s;
  frame.applied();
  if (io::Status s = c.hash_all(&p->out.root_hash); !s.ok()) return s;
  frame.hashed();
  if (frame.pure_hash()) {
    PureHashCount pc;
    if (io::Status s = c.pure_hash(&pc); !s.ok()) return s;
    frame.pure_hashed(pc.ns, pc.nodes, pc.calls);
  }
  frame.hash_stage_done();
  if (root_hash) *root_hash = p->out.root_hash;
  pending_ = std::move(p);
  return {};
}

io::Status MptCommitter::write_pages() {
  if (!pending_) return {io::Errc::bad_argument, "mpt commit: write_pages() without a hashed commit"};
  packed_ = std::move(pending_);  // the next hash() may start once this returns
  Pending& p = *packed_;
  CommitFrame& frame = p.frame;
  DirtyTrie& c = p.trie;
  CommitFrame::Outcome& o = p.out;
  io::Status began = frame.begin_writes();
  if (io::Status s = began.ok() ? c.write_all(&o.root) : began; !s.ok()) {
    const std::unique_ptr<Pending> dropped = std::move(packed_);
    return frame.fail(s);
  }
  frame.encoded();
  // Superseded records: read from the committed state, not reused by the new tree.
  for (const Node& n : c.nodes_) {
    if (n.kind == Node::stub || n.fresh || n.loc == kNoLocator || n.reused) continue;
    if (frame.keyed()) frame.supersede_key(c.key_of(n), n.body_len);
    else frame.supersede({&n.loc, 1}, n.body_len);
  }
  count_keys(c, &o);
  // The flat snapshot: what the diff deletes (the leaves it writes came from encode_all).
  if (SnapshotDelta* snap = frame.snapshot())
    for (const AccountOp& a : c.accts_) {
      if (a.destroyed) snap->erase_prefix(a.key);  // the account and its old storage
      uint8_t key[64];
      std::memcpy(key, a.key.data(), 32);
      for (const Op& op : a.slots)
        if (op.del) {
          std::memcpy(key + 32, op.key.data(), 32);
          snap->erase({key, 64});
        }
    }
  if (!frame.keyed()) {
    frame.hand_over_written();
    set_next_base({o.root, o.root_hash, frame.base().params, frame.base().snapshot});
  }
  return {};
}

io::Status MptCommitter::publish(const std::string& spec_json, MptCommitStats* stats) {
  if (!packed_) return {io::Errc::bad_argument, "mpt commit: publish() without written pages"};
  const std::unique_ptr<Pending> p = std::move(packed_);
  io::Status s = p->frame.publish(p->out, spec_json, stats);
  spare_->put(p->trie.give_buffers());
  clear_next_base();
  return s;
}

}  // namespace st::persist
