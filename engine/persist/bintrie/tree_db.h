// bintrie/tree_db.h: BintrieTreeDb, the binary trie database opened for reading (db.h:
// open_bintrie), over the arena (record pages) or RocksDB (blobs keyed by path); layout:
// disk.h. The class and its open are in tree_db.cpp, the batched lookups in lookup.cpp,
// verify() in verify.cpp, prove() in prove.cpp; every one takes its nodes through the
// verified fetch (bintrie/verified_fetch.h: read, hash check, strict decode).
//
// Invariants: every decode is strict (group_blob.h); a record's kind and child count must
// match its blob; a lookup answers only from blobs whose hashes matched their parents'
// entries up to the manifest's root; proofs check each node on their path the same way;
// walks stop at depth 248, so hostile data cannot loop.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/bintrie/group_blob.h"
#include "engine/bintrie/keys.h"
#include "engine/bintrie/stem_bits.h"
#include "engine/persist/bintrie/blob_checks.h"
#include "engine/persist/bintrie/disk.h"
#include "engine/persist/bintrie/verified_fetch.h"
#include "engine/persist/lookup_walk.h"
#include "engine/persist/stored_tree_db.h"

namespace st::persist::bintrie_read {

class BintrieTreeDb final : public StoredTreeDb {
 public:
  BintrieTreeDb(DbFiles&& f, const bintrie::Hasher& h, unsigned g, size_t verify_cache_pages, bool slot_key_accounts)
      : StoredTreeDb(std::move(f)), h_(h), ks_{h, bintrie::TreeIndexEndian::big}, g_(g),
        verify_cache_pages_(verify_cache_pages), slot_key_accounts_(slot_key_accounts), checks_(h, g) {}

  io::NodeStore* page_store() override { return files_.store == StoreKind::arena ? &files_.arena->pages() : nullptr; }

  io::Status lookup(std::span<const state::StateKey> keys, std::vector<LookupAnswer>* out, LookupStats* stats,
                    bool cold_pages) override;
  io::Status verify(VerifyReport* report, const ProgressFn& progress) override;
  io::Status prove(const state::StateKey& key, StateProof* out) override;

 private:
  static constexpr unsigned kMaxDepth = bintrie::kStemBits;  // no internal node at depth >= 248

  struct Cursor {
    Hash32 key{};
    bool account = false;
    bool done = false;
    bool stem_only = false;  // the parent's entry ends before the group's bottom: a stem
    unsigned depth = 0;      // bit depth of the next node
    Locator loc = kNoLocator;
    Hash32 expect{};        // the hash the next node must have (its parent's entry; the root: the manifest's)
    uint32_t waits = 0;         // arena: page requests not yet landed
  };

  // A node as a streamed lookup needs it: strictly checked views into cached pages (valid
  // for the batch: the cache is dropped only between batches), nothing copied.
  struct LiteNode {
    bool is_group = false;
    uint8_t kind = 0;
    bintrie::GroupBlobView group;
    bintrie::StemBlobView stem;
    RecordView rec;               // the group's record: its children
    Hash32 expect{};             // the hash it was first reached with (its check is queued)
  };
  struct LookupState {
    std::vector<Cursor>* cur = nullptr;
    std::vector<LookupAnswer>* ans = nullptr;
    std::unordered_map<Locator, uint32_t> memo;  // decoded nodes by locator
    std::vector<LiteNode> nodes;
    std::deque<std::vector<uint8_t>> chunked;    // chunked stems, reassembled
    uint64_t visits = 0;
  };
  // The node at l (its page cached) into *out; *complete = false when parts of it (stem
  // pieces) are still being read: cursor i then waits on them (its waits counted).
  io::Status read_lite(Locator l, uint32_t i, LookupState& ls, LiteNode* out, bool* complete);
  // Moves cursor i through one node whose page is cached, or makes it wait for the page.
  io::Status step_arena(uint32_t i, LookupState& ls, WalkStep* out);
  io::Status lite_node_at(uint32_t i, LookupState& ls, uint32_t* ni);
  static constexpr uint32_t kNoNode = ~0u;
  void finish_stem_view(Cursor& c, const bintrie::StemBlobView* stem, LookupAnswer* ans);

  bool empty_tree() const { return files_.manifest.root_hash == Hash32{}; }
  Locator root_loc() const { return files_.commit.root; }

  // RocksDB: the node at (path, depth) through the verified fetch's decode_keyed; found =
  // false when absent.
  io::Status rocks_get(const uint8_t* path, unsigned depth, Node* out, bool* found);

  // A cursor at a decoded node: moves on (group) or finishes (stem) and fills the answer.
  // Returns nullptr, or what is wrong with the node (the caller names it).
  const char* step(Cursor& c, const Node& n, LookupAnswer* ans);
  void finish_stem(Cursor& c, const bintrie::StemBlob* stem, LookupAnswer* ans);

  // The tree's side of the two walks whose scheduling is lookup_walk.h's: ArenaWalk
  // (streamed: step_arena through cached records, BlobHashChecks run before every wait) and
  // RocksWalk (one MultiGet per round; each distinct blob decoded and checked once).
  struct ArenaWalk;
  struct RocksWalk;
  io::Status walk_arena(std::vector<Cursor>& cur, std::vector<LookupAnswer>& ans, LookupStats* stats, bool cold);
  io::Status walk_rocks(std::vector<Cursor>& cur, std::vector<LookupAnswer>& ans, LookupStats* stats);
  io::Status prove_key(const Hash32& key, bintrie::KeyProof* out);
  // prove_key's position: the node (arena: its locator), its bit depth, whether its
  // parent's entry ends in a stem, the hash it must have.
  struct ProvePos {
    Locator loc;
    unsigned depth;
    bool stem_only;
    Hash32 expect;
  };
  io::Status read_prove_node(const Hash32& key, const ProvePos& at, Node* node, std::string* where, uint64_t* records);
  io::Status prove_at_stem(const bintrie::StemBlob& stem, const Hash32& key, const ProvePos& at,
                           const std::string& where, bintrie::KeyProof* p);
  io::Status prove_in_group(const bintrie::GroupBlob& group, const std::vector<Locator>& children, const Hash32& key,
                            ProvePos& at, const std::string& where, bintrie::KeyProof* p, bool* done);

  // verify(): a node still to check, with the hash its parent committed to.
  struct VerifyItem {
    Locator loc;
    Hash32 expect;
    Hash32 path;        // the first `depth` bits are the node's position
    uint8_t depth;
    uint8_t stem_only;
  };
  // verify()'s walk: todo, the nodes still to check, a stack (depth-first, so it stays
  // small); each round takes up to kVerifyChunk from its top (chunk) and loads their pages
  // in one submission. cached: arena children whose page is already cached, checked in the
  // same round (their page may hold a whole subtree), so a page is read about once even
  // though the cache is dropped. Nodes are checked in batches (batch, nodes: up to
  // kVerifyBatch decoded nodes; checks: their hashes through the batch kernels) before any
  // of them queues its children. The rest: buffers reused across chunks, and the counts.
  struct VerifyWalk {
    VerifyWalk(const bintrie::Hasher& h, unsigned g) : checks(h, g) {}
    VerifyReport rep;
    bool arena = false;
    std::vector<VerifyItem> todo, chunk, cached, batch;
    std::vector<Node> nodes;          // batch[i] decoded
    std::vector<uint32_t> batch_key;  // RocksDB: batch[i]'s index in keys
    BlobHashChecks checks;
    uint64_t records = 0, done_nodes = 0, rocks_bytes = 0;
    uint64_t account_leaves = 0;  // leaves the accounts found hold: not storage slots
    std::vector<Locator> locs;
    std::vector<std::string> keys;
    std::vector<std::string_view> views;
    std::vector<std::string> values;
    std::vector<uint8_t> found;
  };
  // A batch's failure: the first in batch order (a node's own checks in verify's order:
  // its place, its hash, its entries), or the decode error of the node after the batch.
  io::Status verify_batch(VerifyWalk& w, size_t n, io::Status after);
  io::Status verify_place(const VerifyWalk& w, size_t i) const;
  void queue_hash_check(VerifyWalk& w, size_t i);
  std::string verify_name(const VerifyWalk& w, size_t i) const;
  void verify_stem(VerifyWalk& w, size_t i);
  io::Status verify_group(VerifyWalk& w, size_t i);
  io::Status verify_cached_arena(VerifyWalk& w);
  io::Status verify_chunk_arena(VerifyWalk& w);
  io::Status verify_chunk_rocks(VerifyWalk& w);
  io::Status finish_verify(VerifyWalk& w, const ReadCounters& before);

  bintrie::Hasher h_;
  bintrie::KeyScheme ks_;
  unsigned g_;
  size_t verify_cache_pages_;  // DbOptions::verify_cache_pages
  bool slot_key_accounts_;     // DbOptions::slot_key_accounts
  BlobHashChecks checks_;      // lookups: the blobs used, hashed in batches before any answer
  // Runs the queued checks; a mismatch is an error naming the node (name(tag)).
  template <class Name>
  io::Status run_checks(const Name& name);
};

}  // namespace st::persist::bintrie_read
