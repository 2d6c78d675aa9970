// bintrie/commit_tree: the binary-trie block commit's tree and the committer that builds it
// (phases in bintrie/commit.h). Internal to the committer: only the committer's files
// (bintrie/commit*.cpp) include it.
//
//   StemWrites  the block's writes to one stem (prepare)
//   Node        a record on a dirty path, read from disk, decoded and hash-checked (resolve)
//   Plan        the new tree: placed = an unchanged subtree on disk, by locator; stem / group
//               = a new record; a new group's unchanged entries are kept by locator in its
//               child list, with no Plan each (plan)
//   Listed      a new stem or group as the plan listed it, with what the hash phase reads
//               and writes of it, dense in listing order (BintrieHashScratch; hash)
//   Committer   the phases over them, one file each:
//                 commit_writes.cpp   prepare (the diff as writes per stem), apply (to a stem)
//                 commit_resolve.cpp  resolve: the dirty paths read level by level through
//                                     the verified fetch (bintrie/verified_fetch.h)
//                 commit_plan.cpp     plan: the new tree's Plans over the resolved nodes
//                 commit_hash.cpp     hash_plan (the plan's new nodes, level by level), the
//                                     plan's listing for it (note_group), pure_hash
//                 commit_emit.cpp     emit: the writes, post-order
//               and bintrie/commit.cpp holds BintrieCommitter's calls over them.
//
// Invariants: no Node is linked into the dirty paths or planned from before its hash matched
// its parent's entry (the root: the manifest's); a Node whose plan is not `placed` is
// superseded by the commit; a new Plan's hash is zero except the root's (hash_plan writes
// the digests into the parents' entries and the listing).
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/bintrie/account_leaves.h"
#include "engine/bintrie/group_blob.h"
#include "engine/persist/bintrie/blob_checks.h"
#include "engine/persist/bintrie/commit.h"
#include "engine/persist/bintrie/disk.h"
#include "engine/persist/bintrie/level_hash.h"
#include "engine/persist/bintrie/pure_hash.h"
#include "engine/persist/bintrie/verified_fetch.h"

namespace st::persist {

namespace bintrie_commit {

using bintrie::Hash32;
namespace bd = bintrie_disk;
using Key32 = std::array<uint8_t, 32>;  // a stem + one zero byte (key_bits reads up to bit 255)

// Writes to one stem. sub -> value; the header patch (subs 0 and 1) needs the old leaves.
struct StemWrites {
  Key32 stem{};
  std::map<uint8_t, Hash32> values;
  std::optional<bintrie::HeaderPatch> patch;  // an account of this header stem changed (account_leaves.h)
};

struct Node {
  Locator loc = kNoLocator;         // RocksDB: kKeyed (named by path / depth)
  Key32 path{};                     // a key under the node (its first `depth` bits are its path)
  unsigned depth = 0;
  bool group = false;
  bintrie::GroupBlob blob;          // group
  std::vector<Locator> children;    // group: one per entry
  bintrie::StemBlob stem;           // stem
  Hash32 hash{};
  std::vector<Locator> records;     // this record + stem pieces
  uint64_t body_bytes = 0;          // blob bytes of its records
  std::vector<int> child_node;      // group: loaded child per entry, -1 if not loaded
  bool reused = false;
};

constexpr Locator kKeyed = 0;  // a RocksDB node's locator: it is named by its path key

struct Plan {
  enum Kind { placed, stem, group } kind = placed;
  Locator loc = kNoLocator;                 // placed
  int node = -1;                            // placed: the loaded node it keeps (-1: never read)
  Hash32 hash{};                            // placed; new: set by hash_plan for the root only
  uint32_t listed = 0;                      // stem / group: its index in its list (BintrieHashScratch)
  uint32_t src_seg = 0;                     // new group: its entries' first slot in the entry sources
  uint32_t height = 0;                      // new group: 1 + its highest new child's (stems: 0)
  bintrie::StemBlob stem_blob;              // stem
  bintrie::GroupBlob group_blob;            // group
  // A group's child: its plan, or (plan null) an unchanged entry's subtree kept by its locator
  // with no Plan of its own (most entries of a touched group: no allocation per entry).
  struct Kid {
    std::unique_ptr<Plan> plan;
    Locator loc = kNoLocator;  // plan null: the kept subtree
  };
  std::vector<Kid> kids;           // group: one per entry
  std::vector<uint32_t> new_kids;  // group: the entries whose kid is not placed, ascending
};

// A new stem or group as listed by the plan, with what the hash phase reads and writes of it
// (dense, in listing order, so that the cold Plan objects are not touched for them).
struct Listed {
  Plan* plan = nullptr;
  DigestRef ref;                 // its digest in the level hash (hash_plan)
  uint32_t src_at = UINT32_MAX;  // under a new group: its slot in the entry sources
  Hash32* up = nullptr;          // under a new group: the parent entry's hash; null: the root
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

}  // namespace bintrie_commit

// The hash phase's arrays, kept across commits: the levels' messages (hash_plan); the new
// stems, the new groups per height and every new group's entry sources (filled by the plan,
// note_group).
struct BintrieHashScratch {
  BintrieLevelHash levels;
  std::vector<bintrie_commit::Listed> stems;                  // new stems as planned
  std::vector<std::vector<bintrie_commit::Listed>> by_height;  // new groups by height above the stems (0: height 1)
  std::vector<DigestRef> entry_src;  // per new group, one per entry (a new child's digest, else zero)
};

namespace bintrie_commit {

// One commit's phases over the dirty paths (nodes_) and the plan; BintrieCommitter runs them
// in order (prepare, resolve, plan, hash_plan, pure_hash, then emit) and reads the figures.
class Committer {
 public:
  Committer(CommitFrame& frame, const bintrie::Hasher& h, unsigned g) : frame_(frame), h_(h), g_(g) {}

  // commit_writes.cpp: the diff as writes per stem (writes_).
  io::Status prepare(const state::StateDiff& diff);
  // commit_resolve.cpp: every record on a dirty path into nodes_, checked.
  io::Status resolve();
  // commit_plan.cpp: the new tree (null: nothing to write); its new nodes listed in x.
  io::Status plan(BintrieHashScratch& x, std::unique_ptr<Plan>* out);
  // commit_emit.cpp: the plan's records (arena: the packer; RocksDB: the batch).
  io::Status emit_stem(const Plan& p, unsigned depth);
  io::Status emit(const Plan& p, const Key32& path, unsigned depth);
  // commit_hash.cpp: the plan's new nodes hashed; the listing the plan makes for it.
  static void prefetch_entries(const bintrie::GroupBlob& b);
  void hash_plan(BintrieHashScratch& x);
  Hash32 listed_hash(const Listed& l) const;
  void note_group(Plan* p);
  void unnote_group(const Plan& p);
  io::Status pure_hash(PureHashCount* c) const;

  std::vector<Node> nodes_;
  std::vector<StemWrites> writes_;
  BintrieHashScratch* scratch_ = nullptr;  // plan(): the new stems, groups by height, their entry sources
  uint64_t accounts = 0, records_read = 0, records_written = 0, bytes_written = 0;
  int64_t new_leaves = 0;
  uint32_t packer_payload_ = 0;

 private:
  // A node on a dirty path to read: where it is, the hash its parent's entry holds for it
  // (the root: the manifest's), its depth, the dirty stems below it, its parent's node and
  // entry.
  struct ResolveItem {
    Locator loc;
    Hash32 hash;
    unsigned depth;
    std::vector<uint32_t> dirty;  // indices into writes_
    int parent;
    uint32_t entry;
  };
  // The key under an item (RocksDB: its first `depth` bits name the node).
  Key32 path_of(const ResolveItem& it) const { return it.dirty.empty() ? Key32{} : writes_[it.dirty[0]].stem; }

  // commit_resolve.cpp
  io::Status read_level(const std::vector<ResolveItem>& level, std::vector<std::string>* keys,
                        std::vector<std::string>* values);
  io::Status take_level(const std::vector<ResolveItem>& level, const std::vector<std::string>& keys,
                        const std::vector<std::string>& values);
  void queue_check(const Node& n, const ResolveItem& it, const bintrie::GroupBlobView& group_view);
  io::Status descend(const ResolveItem& it, int id, std::vector<ResolveItem>* next);

  // One thing a group's entries are derived from.
  struct Item {
    enum Kind { keep, sub, stem } kind = keep;
    uint16_t pos = 0;      // keep: entry position; sub: position (depth g)
    uint8_t depth = 0;     // keep: entry depth
    Hash32 hash{};        // keep
    Locator loc = kNoLocator;
    int node = -1;         // sub: the loaded child group; stem: the loaded stem (or -1: new)
    std::vector<uint32_t> dirty;  // sub
    bintrie::StemBlob blob;       // stem: after the writes
    bool changed = false;         // stem
  };

  // commit_resolve.cpp: a node through the verified fetch (a group with the view its strict
  // check made, valid while the level's pages or values are).
  void take_fetched(bintrie_read::Node&& f, Locator loc, Node* n, bintrie::GroupBlobView* group_view);
  io::Status decode_value(const std::string& value, const std::string& key, Node* n,
                          bintrie::GroupBlobView* group_view);
  io::Status decode(Locator loc, Node* n, bintrie::GroupBlobView* group_view);

  // commit_writes.cpp
  bool apply(uint32_t w, bintrie::StemBlob* blob);

  // commit_plan.cpp
  void add_new_stem(uint32_t w, std::vector<Item>* items);
  void collect_stem(int id, const std::vector<uint32_t>& dirty, std::vector<Item>* items);
  io::Status plan_group(int id, unsigned d, const std::vector<uint32_t>& dirty, std::unique_ptr<Plan>* out);
  uint32_t rel_pos(const Item& it, unsigned d) const {
    return it.kind == Item::stem ? bd::key_bits(key_of(it).data(), d, g_) : it.pos;
  }
  static Key32 key_of(const Item& it) {
    Key32 k{};
    std::memcpy(k.data(), it.blob.stem.data(), 31);
    return k;
  }
  io::Status stem_plan(Item& it, std::unique_ptr<Plan>* out);
  io::Status place(std::vector<Item>& items, unsigned d, std::unique_ptr<Plan>* out);
  static void add_kid(Plan* p, const bintrie::GroupEntry& ge, std::unique_ptr<Plan> kid);
  // Whether a group's child is the subtree at `loc`, unchanged.
  static bool kept_as(const Plan::Kid& k, Locator loc) {
    return k.plan ? k.plan->kind == Plan::placed && k.plan->loc == loc : k.loc == loc;
  }
  io::Status walk(std::vector<Item>& items, size_t a, size_t b, unsigned d, unsigned r, uint32_t q, Plan* p);

  // commit_emit.cpp
  io::Status emit_moved_stem(const Node& n, unsigned depth);

  CommitFrame& frame_;
  const bintrie::Hasher& h_;
  unsigned g_;
  BlobHashChecks checks_{h_, g_};  // resolve: a level's nodes against their parents' entries
  int root_ = -1;
  std::vector<uint8_t> buf_;
};

}  // namespace bintrie_commit
}  // namespace st::persist
