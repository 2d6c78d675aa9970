// bintrie/block_tree: one binary-trie block commit as engine/bintrie's MutableTree over the
// database (docs/bintrie.md, "Unread subtrees"), the same apply and hash code as the
// in-memory tree. Internal to the committer: only bintrie/commit.cpp and the block_tree
// files include it.
//
//   read   (block_tree_read.cpp) the diff as writes per stem (account_leaves.h's rule);
//          the tree starts as one stub for the committed root, and the stubs the writes'
//          paths reach (MutableTree::stubs_to_resolve) are read round by round, a round's
//          records in one PageReader::load (then one for the stem pieces met) or one
//          MultiGet of their path keys (RocksDB), each through the verified fetch (strict
//          decode, record checks) and resolved into the tree, which checks its hash against
//          the stub's (the root: the manifest's) before it changes anything
//   apply  (block_tree_apply.cpp) the header patches against the old leaves, the writes
//          applied, the tree committed (hashed)
//   write  (block_tree_write.cpp) post-order from the root, the blobs at the disk layout's
//          positions (a group blob every g levels, a stem blob per stem): an unread stub, a
//          read stem or group whose hash did not change kept by locator (RocksDB: its key,
//          a kept stem that a split moved deeper rewritten under its new key), every other
//          node a new record (arena: SubtreePacker; RocksDB: the commit's batch) and the
//          record it was read from superseded; the new blobs are also what the pure hash
//          hashes again
//
// Invariants: no record's content reaches the tree before its hash matched what its parent
// holds; a record read is superseded exactly when the new tree does not keep it (a kept
// group keeps everything below it); the new root equals the in-memory tree's root of (old
// leaves + writes).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/bintrie/account_leaves.h"
#include "engine/bintrie/group_blob.h"
#include "engine/bintrie/mutable_tree.h"
#include "engine/persist/bintrie/disk.h"
#include "engine/persist/bintrie/pure_hash.h"
#include "engine/persist/commit_frame.h"
#include "engine/state/state_types.h"

namespace st::persist::bintrie_commit {

using bintrie::Hash32;
namespace bd = bintrie_disk;
using Key32 = std::array<uint8_t, 32>;  // a stem + one zero byte (key_bits reads up to bit 255)

// Writes to one stem. sub -> value; the header patch (subs 0 and 1) needs the old leaves.
struct StemWrites {
  Key32 stem{};
  std::map<uint8_t, Hash32> values;
  std::optional<bintrie::HeaderPatch> patch;  // an account of this header stem changed (account_leaves.h)
};

constexpr Locator kKeyed = 0;  // a RocksDB node's locator: it is named by its path key

// A record the commit read and resolved into the tree: where it was and what it held.
struct ReadRecord {
  std::vector<Locator> records;  // arena: the record and a chunked stem's pieces
  uint64_t body_bytes = 0;
  Hash32 hash{};                 // its committed hash (checked)
  Key32 path{};                  // RocksDB: its key is blob_key(path, depth) (arena: not set)
  unsigned depth = 0;
  bool group = false;
};

// A new blob of the commit, as the pure hash takes it.
struct NewBlobs {
  std::vector<bintrie::StemBlob> stems;
  std::vector<Hash32> stem_hashes;
  std::vector<bintrie::GroupBlob> groups;  // children before parents
  std::vector<Hash32> group_hashes;
  void clear() { stems.clear(), stem_hashes.clear(), groups.clear(), group_hashes.clear(); }
};

// "binary trie commit: page P record R: m" (Errc::corrupt_page).
inline io::Status err(Locator l, const std::string& m) {
  return {io::Errc::corrupt_page, "binary trie commit: " + bd::locator_name(l) + ": " + m};
}
// A RocksDB node's key: blob_key(path, depth) as a string.
inline std::string blob_key_string(const uint8_t* path, unsigned depth) {
  const std::vector<uint8_t> k = bintrie::blob_key(path, depth);
  return std::string(reinterpret_cast<const char*>(k.data()), k.size());
}

// One commit's tree over the database; BintrieCommitter runs its phases in order: prepare,
// resolve, apply, hash, then (optionally) pure_hash, and write.
class BlockTree {
 public:
  // tree: empty (MutableTree::clear), reused across commits.
  BlockTree(CommitFrame& frame, bintrie::MutableTree& tree, unsigned g) : frame_(frame), tree_(tree), g_(g) {}

  // block_tree_read.cpp
  io::Status prepare(const state::StateDiff& diff);
  io::Status resolve();
  // block_tree_apply.cpp
  void apply();
  Hash32 hash();
  // block_tree_write.cpp: the new nodes' blobs hashed again alone (pure_hash.h); the writes.
  io::Status pure_hash(PureHashCount* c);
  io::Status write(Locator* root);

  const std::vector<StemWrites>& writes() const { return writes_; }
  uint64_t accounts = 0, records_read = 0, records_written = 0, bytes_written = 0;
  int64_t new_leaves = 0;

 private:
  // block_tree_read.cpp
  io::Status read_round(const std::vector<bintrie::MutableTree::StubId>& ids, std::vector<std::string>* keys,
                        std::vector<std::string>* values);
  io::Status take(bintrie::MutableTree::StubId id, size_t i, const std::vector<std::string>& keys,
                  const std::vector<std::string>& values);
  // block_tree_write.cpp
  io::Status emit(bintrie::NodeRef ref, const Key32& path, unsigned depth);
  io::Status emit_stem(uint32_t si, unsigned depth, const ReadRecord* was);
  io::Status emit_group(uint32_t ii, const Key32& path, unsigned depth, const ReadRecord* was);
  void collect(bintrie::NodeRef ref, Key32& path, unsigned depth, unsigned r, unsigned p, bintrie::GroupBlob& blob,
               std::vector<std::pair<bintrie::NodeRef, Key32>>& kids) const;
  void supersede(const ReadRecord& r);
  const ReadRecord* read_of(bintrie::NodeRef ref) const;

  CommitFrame& frame_;
  bintrie::MutableTree& tree_;
  unsigned g_;
  std::vector<StemWrites> writes_;
  std::vector<bintrie::Entry> entries_;  // the writes as the tree takes them (apply)
  // What each resolved node was read from: by stem index and by internal index (a group's
  // top node), an index into read_ (-1: made by this commit).
  std::vector<ReadRecord> read_;
  std::vector<int32_t> read_of_stem_, read_of_internal_;
  NewBlobs new_blobs_;
  bool list_blobs_ = false;  // write() fills new_blobs_ (pure_hash)
  std::vector<uint8_t> buf_;
  uint32_t packer_payload_ = 0;
};

}  // namespace st::persist::bintrie_commit
