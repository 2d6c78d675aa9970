// bintrie/commit: one block's state diff applied to a binary-trie database in the arena
// store (bintrie/db.h, layout bintrie/disk.h) as ONE copy-on-write commit
// (docs/persist-commit.md, "Binary trie"). The steps are the phases of one commit's
// Committer (bintrie/commit_tree.h, internal to the committer), one file each:
//
//   1. keys     (commit_writes.cpp) the diff becomes writes per stem by account_leaves.h's
//               rule, the in-memory state's (account_diff_writes: code chunks and storage
//               slots as leaves, a zero storage value as a present zero value; the header
//               patch resolved against the old stem in step 3: fields over the old basic
//               data, a destroyed account's basic data and code hash zeroed; nothing is
//               ever removed)
//   2. resolve  (commit_resolve.cpp) the records on the dirty paths are read level by level
//               (one PageReader::load per level, plus one for the stem pieces met on it),
//               decoded strictly (group / stem blob codecs), their child counts checked
//               against the blob and their hashes against the parent's entry (root: the
//               manifest)
//   3. plan     (commit_plan.cpp) per touched group the entries are re-derived from the
//               unchanged entries (kept as they are), the touched children and the new
//               stems (a new stem in an existing stem's region splits it, as the builder
//               would place both); a subtree whose blobs do not change is kept whole (its
//               locator)
//   4. hash     (commit_hash.cpp) the plan's new stems and groups, level by level, one batch
//               kernel call per level (bintrie/level_hash.h); the pure hash beside it
//   5. write    (commit_emit.cpp) post-order through the SubtreePacker: unchanged children
//               by locator (push_placed), new / changed stems and groups as new records;
//               commit via DbFiles::commit_arena. A page is released only when all its
//               records are superseded (counted across the commits of one
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

namespace st::persist {

// The commit's figures (commit_frame.h, as the MPT's; sibling_reads stays 0: nothing is ever removed).
using BintrieCommitStats = CommitStats;

// The hash phase's scratch, kept across the commits of one committer (bintrie/commit_tree.h).
struct BintrieHashScratch;

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
  std::unique_ptr<Pending> pending_;  // hashed (hash() to write_pages())
  std::unique_ptr<Pending> packed_;   // written (write_pages() to publish()): the next hash() may run meanwhile
  std::unique_ptr<BintrieHashScratch> hash_scratch_;  // used by hash() only
};

}  // namespace st::persist
