// mpt/commit: one block's state diff applied to an MPT database in the arena store as ONE
// copy-on-write commit (docs/persist-commit.md):
//
//   1. resolve  the account trie and every touched storage trie (engine/mpt's Trie, each
//               starting as one unread root) read what the block's writes need, round by
//               round (pages the caller already read, PageReuse::pages, are taken from
//               there): each round loads the distinct pages of all listed records in one
//               PageReader submission; every record is checked against the hash its parent
//               (or the manifest) holds (one keccak256 batch per round), decoded strictly
//               and checked against its record (kind, child count)
//   2. apply    the writes are applied by the trie's own code in canonical form (deletes
//               collapse one-slot branches and merge short nodes; the child a collapse
//               may need was read with the paths)
//   3. hash     the new nodes are hashed in memory (the storage tries together, then the
//               account trie with the accounts' new values) and handed over in the
//               packer's post-order (storage trie, then its account leaf, then the
//               account trie's upper nodes); optionally (PageReuse::pure_hash) their
//               encodings are hashed again alone, one keccak256_batch per level, and must
//               give the same digests
//      write    then pushed into the SubtreePacker in that order; an unchanged child is
//               referenced by its existing locator (SubtreePacker::push_placed), so only
//               the dirty paths are written
//   4. commit   (CommitFrame, commit_frame.h, shared with the binary trie)
//               DbFiles::commit_arena: commit record (root locator + spec), fsync, MANIFEST
//               replaced atomically. Pages are released only when every record of the page
//               is proven unreachable: superseded in this commit or in an earlier commit of
//               the same MptCommitter (records have exactly one parent, so a superseded
//               record is unreachable). Partly dead pages stay until the next full build.
//
// Invariants: the new root equals the MPT root of (old state + diff) (tested against
// engine/mpt); nothing of the committed state is overwritten (fresh pages only); a failed
// or crashed commit leaves the previous manifest, root and free list current.
// AccountDiff::destroyed (as mpt::MptState applies it: the account and its storage go, then
// any given field or write recreates it) reads the whole old storage trie, so its records
// are counted out of the manifest and its pages can be released.
// RocksDB databases take the same phases with the nodes read by path key and the commit
// written as ONE synced WriteBatch (new nodes, deletions of replaced ones, commit record;
// CommitFrame, commit_frame.h); the roots equal the arena store's.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "engine/persist/commit_frame.h"
#include "engine/state/state_types.h"

namespace st::persist {

// The commit's figures (commit_frame.h: the same fields as the binary trie's).
using MptCommitStats = CommitStats;

// files: an MPT database, arena or RocksDB (CommitterBase).
class MptCommitter : public CommitterBase {
 public:
  explicit MptCommitter(DbFiles& files);
  ~MptCommitter();
  // The calls of CommitterBase. hash(): phases 1-3 up to the new root (resolve, apply,
  // encode + hash in memory, the pure hash); write_pages() and publish(): phase 4.
  io::Status hash(const state::StateDiff& diff, std::array<uint8_t, 32>* root_hash = nullptr) override;
  io::Status write_pages() override;
  io::Status publish(const std::string& spec_json, MptCommitStats* stats) override;

 private:
  struct Pending;
  std::unique_ptr<Pending> pending_;  // hashed (hash() to write_pages())
  std::unique_ptr<Pending> packed_;   // written (write_pages() to publish()): the next hash() may run meanwhile
  struct Spare;
  std::unique_ptr<Spare> spare_;  // a published commit's tries and arrays, for the next hash() (locked)
};

}  // namespace st::persist
