// mpt_commit: MptCommitter, a block's state diff as one copy-on-write commit of an arena
// MPT database (see mpt_commit.h for the four phases). The partial trie of the dirty paths
// (resolve, apply, encode) is mpt_dirty_trie.h; this file runs it and counts the superseded
// records and keys; the release, publish and stats are CommitFrame's (commit_tail.h).
#include "engine/persist/mpt_commit.h"

#include <cstring>
#include <unordered_map>

#include "engine/persist/commit_tail.h"
#include "engine/persist/mpt_dirty_trie.h"

namespace st::persist {

namespace {

using mpt_commit_detail::AccountOp;
using mpt_commit_detail::DirtyTrie;
using mpt_commit_detail::Node;
using mpt_commit_detail::Op;

}  // namespace

io::Status MptCommitter::commit(const state::StateDiff& diff, const std::string& spec_json, MptCommitStats* stats) {
  if (io::Status s = CommitFrame::check_target(files_, io::TreeKind::mpt, "mpt commit", "an MPT"); !s.ok()) return s;
  CommitFrame frame(files_, dead_, "mpt commit", &reuse_, read_latency_);
  DirtyTrie c(files_, frame);
  if (io::Status s = c.prepare(diff); !s.ok()) return s;
  if (io::Status s = c.resolve(); !s.ok()) return s;
  frame.resolved();
  if (io::Status s = c.apply_all(); !s.ok()) return s;
  frame.applied();
  CommitFrame::Outcome o;
  if (io::Status s = c.hash_all(&o.root_hash); !s.ok()) return s;
  frame.hashed();
  if (frame.pure_hash()) {
    uint64_t ns = 0, nodes = 0, calls = 0;
    if (io::Status s = c.pure_hash(&ns, &nodes, &calls); !s.ok()) return s;
    frame.pure_hashed(ns, nodes, calls);
  }
  frame.begin_writes();
  if (io::Status s = c.write_all(&o.root); !s.ok()) return frame.fail(s);
  frame.encoded();
  // Superseded records: read from the committed state, not reused by the new tree.
  for (const Node& n : c.nodes_) {
    if (n.kind == Node::stub || n.fresh || n.loc == kNoLocator || n.reused) continue;
    if (frame.keyed()) frame.supersede_key(c.key_of(n), n.body_len);
    else frame.supersede({&n.loc, 1}, n.body_len);
  }
  for (const AccountOp& a : c.accts_) {
    o.keys_delta += int64_t(!a.removed) - int64_t(a.old_leaf >= 0);
    o.keys_delta -= int64_t(a.old_slots);
    for (const Op& op : a.slots) {
      if (op.existed && op.del) --o.keys_delta;
      if (!op.existed && !op.del) ++o.keys_delta;
    }
    o.slot_writes += a.slots.size();
  }
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
  o.records_written = c.records_written;
  o.bytes_written = c.bytes_written;
  o.accounts_written = c.accts_.size();
  o.records_read = c.records_read;
  o.apply_passes = c.passes;
  return frame.publish(o, spec_json, stats);
}

}  // namespace st::persist
