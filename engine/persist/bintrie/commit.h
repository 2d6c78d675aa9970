// bintrie/commit: one block's state diff applied to a binary-trie database (arena or
// RocksDB; bintrie/db.h, layout bintrie/disk.h) as ONE copy-on-write commit
// (docs/persist-commit.md, "Binary trie"): engine/bintrie's MutableTree over the database
// (bintrie/block_tree.h), the in-memory tree's apply and hash:
//
//   1. keys     (block_tree_read.cpp) the diff becomes writes per stem by account_leaves.h's
//               rule, the in-memory state's (account_diff_writes: code chunks and storage
//               slots as leaves, a zero storage value as a present zero value; the header
//               patch resolved against the old stem in step 3; nothing is ever removed)
//   2. resolve  (block_tree_read.cpp) the tree starts as the committed root's stub; the
//               records the writes' paths reach are read round by round (one
//               PageReader::load per round, plus one for the stem pieces met; RocksDB one
//               MultiGet), decoded strictly through the verified fetch and resolved into the
//               tree, which checks each against its parent's entry (root: the manifest)
//   3. apply    (block_tree_apply.cpp) header patches against the old leaves, the writes
//   4. hash     (block_tree_apply.cpp) the tree's commit: the dirty nodes level by level
//               through the batch kernels; the pure hash beside it (block_tree_write.cpp)
//   5. write    (block_tree_write.cpp) post-order through the SubtreePacker: unread and
//               unchanged subtrees by locator (place_kept), new / changed stems and groups as
//               new records; commit via DbFiles::commit_arena. A page is released only when
//               all its records are superseded (counted across the commits of one
//               BintrieCommitter), and the previous commit record page always. The release
//               and commit are CommitFrame's (commit_frame.h), shared with the MPT.
//
// Invariants: the new root equals the in-memory binary trie's root of (old leaves + writes)
// (tested against bintrie::batch_root); nothing of the committed state is overwritten; a
// failed or crashed commit leaves the previous manifest current. RocksDB databases take the
// same phases with blobs read by path key and the commit written as ONE synced WriteBatch
// (new blobs, deletions of replaced and moved ones, commit record; commit_frame.h).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "engine/persist/commit_frame.h"
#include "engine/state/state_types.h"

namespace st::bintrie {
class MutableTree;
struct Hasher;
}  // namespace st::bintrie

namespace st::persist {

// The commit's figures (commit_frame.h, as the MPT's; sibling_reads stays 0: nothing is ever removed).
using BintrieCommitStats = CommitStats;

// files: a binary-trie database, arena or RocksDB (CommitterBase).
class BintrieCommitter : public CommitterBase {
 public:
  explicit BintrieCommitter(DbFiles& files);
  ~BintrieCommitter();
  // The calls of CommitterBase. hash(): steps 1-4 (and the pure hash); write_pages() and
  // publish(): step 5.
  io::Status hash(const state::StateDiff& diff, std::array<uint8_t, 32>* root_hash = nullptr) override;
  io::Status write_pages() override;
  io::Status publish(const std::string& spec_json, BintrieCommitStats* stats) override;

 private:
  struct Pending;
  struct SpareTree;
  std::unique_ptr<bintrie::MutableTree> take_tree(const bintrie::Hasher& h);
  void give_back_tree(std::unique_ptr<bintrie::MutableTree> t);
  std::unique_ptr<Pending> pending_;  // hashed (hash() to write_pages())
  std::unique_ptr<Pending> packed_;   // written (write_pages() to publish()): the next hash() may run meanwhile
  std::unique_ptr<SpareTree> spare_;  // the tree of the last commit written, emptied, memory kept
};

}  // namespace st::persist
