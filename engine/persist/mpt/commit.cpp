// mpt/commit: MptCommitter, a block's state diff as one copy-on-write commit of an arena
// MPT database (see mpt/commit.h for the four phases). The block's tries over the database
// (resolve, apply, hash, write) are mpt/block_tries.h; this file runs them and counts the
// keys; the release, publish and stats are CommitFrame's (commit_frame.h).
#include "engine/persist/mpt/commit.h"

#include <cstring>
#include <memory>
#include <mutex>
#include <optional>

#include "engine/persist/commit_frame.h"
#include "engine/persist/mpt/block_tries.h"

namespace st::persist {

namespace {

using mpt_commit_detail::AccountOp;
using mpt_commit_detail::BlockTries;
using mpt_commit_detail::Op;

// The outcome's counts of keys and writes.
void count_keys(const BlockTries& c, CommitFrame::Outcome* out) {
  CommitFrame::Outcome& o = *out;
  for (const AccountOp& a : c.accts_) {
    o.keys_delta += int64_t(!a.removed) - int64_t(a.existed);
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
  o.sibling_reads = c.sibling_reads;
}

}  // namespace

// The commit between its calls: the read store, the frame (phase clock, reader, later the
// writer), the block's tries, hashed; the outcome.
struct MptCommitter::Pending {
  Pending(DbFiles& files, DeadPageLedger& dead, const CommitBase& base, std::unique_ptr<io::ArenaFileStore> store,
          PageReuse* reuse, stats::LogHistogram* latency)
      : read_store(std::move(store)), frame(files, dead, "mpt commit", base, read_store.get(), reuse, latency),
        tries(frame) {}
  std::unique_ptr<io::ArenaFileStore> read_store;
  CommitFrame frame;
  BlockTries tries;
  CommitFrame::Outcome out;
};

// A published commit's tries and arrays (BlockTries::Buffers) for the next hash(), which may
// run on another thread while publish() hands them over.
struct MptCommitter::Spare {
  std::mutex mu;
  std::optional<BlockTries::Buffers> buffers;
  void put(BlockTries::Buffers b) {
    std::lock_guard<std::mutex> lock(mu);
    buffers = std::move(b);
  }
  std::optional<BlockTries::Buffers> take() {
    std::lock_guard<std::mutex> lock(mu);
    std::optional<BlockTries::Buffers> b = std::move(buffers);
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
  BlockTries& c = p->tries;
  if (std::optional<BlockTries::Buffers> b = spare_->take()) c.take_buffers(std::move(*b));
  if (io::Status s = c.prepare(diff); !s.ok()) return s;
  if (io::Status s = c.resolve(); !s.ok()) return s;
  frame.resolved();
  if (io::Status s = c.apply(); !s.ok()) return s;
  frame.applied();
  if (io::Status s = c.hash(&p->out.root_hash); !s.ok()) return s;
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
  BlockTries& c = p.tries;
  CommitFrame::Outcome& o = p.out;
  io::Status began = frame.begin_writes();
  if (io::Status s = began.ok() ? c.write(&o.root) : began; !s.ok()) {
    const std::unique_ptr<Pending> dropped = std::move(packed_);
    return frame.fail(s);
  }
  frame.encoded();
  count_keys(c, &o);
  // The flat snapshot: what the diff deletes (write() put the leaves it writes).
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
  spare_->put(p->tries.give_buffers());
  clear_next_base();
  return s;
}

}  // namespace st::persist
