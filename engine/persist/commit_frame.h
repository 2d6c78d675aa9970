// commit_frame: what the MPT and binary-trie block committers (mpt/commit.h, bintrie/commit.h)
// share around their tree-specific phases: the checks on the database, the reader of the
// dirty paths, the writer and packer of the new records, the phase clock, the superseded
// records, and the tail that publishes the commit and fills the stats both report.
//
//   CommitFrame f(files, dead, "mpt commit", &reuse);  t0; a PageReader over the arena's pages
//                                                  (serving first from reuse.pages, if set)
//   ... prepare + resolve through f.reader() ...   f.resolved()
//   ... apply / plan ...                           f.applied()
//   ... encode + hash the new nodes in memory ...  f.hashed()
//   ... pure hash (optional, timed apart) ...      f.pure_hashed(ns, nodes)
//   [f.hash_stage_done(): the committer's hash() ends here, its write() starts below]
//   f.begin_writes(): PageWriter + SubtreePacker; the compaction targets (<= N: the pages
//                     read, then chains: partly dead pages and their ancestors' pages)
//   ... the encoded records into f.packer(), each kept child through f.place_kept(locator)
//       (copied when its page is a target) ...    f.encoded()   (a failure: return f.fail(s))
//   f.supersede(records, bytes) per dead node
//   f.publish(outcome, spec, stats):  DeadPageLedger::release_dead -> manifest fields
//        (node_count, key_count, payload_bytes by deltas) -> DbFiles::commit_arena (commit
//        record, fsync, MANIFEST) -> DeadPageLedger::commit_durable -> CommitStats
//
// RocksDB (nodes keyed by path, db_files.h): the same frame, with the node source and sink
// swapped: the committers read the dirty paths through rocks() (one MultiGet per round,
// by path key), write their new nodes into rocks() (put) and name each node they replace
// by its key (supersede_key: a deletion, unless a new node takes the same key, which wins),
// and publish() writes all of it, the flat snapshot's changes (its column family) and the
// commit record as ONE synced WriteBatch (DbFiles::commit_rocks_batch), then the MANIFEST.
// Nothing is released (no pages).
//
// Invariants: nothing is published unless publish() returns ok; after begin_writes() every
// failure goes through fail() or publish() (the writes are reaped and the CowSpace aborts,
// so the previous manifest, root and free list stay current; RocksDB: the batch was never
// written).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "engine/persist/db_files.h"
#include "engine/persist/dead_pages.h"
#include "engine/persist/page_reader.h"
#include "engine/persist/page_writer.h"
#include "engine/persist/snapshot/update.h"
#include "engine/persist/subtree_packer.h"
#include "engine/state/state_types.h"

namespace st::persist {

// One block commit, as both committers report it (the CLI prints these fields as they are).
struct CommitStats {
  std::array<uint8_t, 32> root{};
  uint64_t accounts_written = 0;   // after merging duplicates in the diff
  uint64_t slot_writes = 0;        // MPT: storage writes; binary trie: leaf writes (all stems)
  uint64_t records_read = 0;       // records decoded from pages on the dirty paths
  uint64_t pages_read = 0, read_rounds = 0;
  uint64_t sibling_reads = 0;      // MPT: records read only as the child a branch's deletes may leave
                                   // alone (a collapse reads its kind); binary trie: 0
  uint64_t records_written = 0, pages_written = 0;  // tree pages (the commit record page not included)
  // Device write operations of the commit's writer (tree, snapshot and commit record pages;
  // a run of consecutive pages is one, PageWriter); the free list's pages not included.
  uint64_t page_write_ops = 0;
  uint64_t records_superseded = 0;
  uint64_t pages_released = 0;     // tree pages proven dead + the previous commit record page
  int64_t keys_delta = 0;          // keys created minus deleted (binary trie: leaves created)
  uint64_t commit_ns = 0;          // whole commit: reads, apply, encode, writes, sync, manifest (made in
                                   // two calls, hash() and write(): their own time, not the wait between)
  uint64_t read_ns = 0;            // inside page-read rounds (PageReader::load)
  uint64_t resolve_ns = 0;         // prepare + resolve (reads, hash checks, decoding)
  uint64_t apply_ns = 0;           // apply passes / plan
  uint64_t write_ns = 0;           // encode, hash, pack, page writes (window-bounded waits) = hash_ns + page_write_ns
  uint64_t hash_ns = 0;            // the new nodes encoded and hashed in memory (MPT: RLP + keccak256
                                   // bottom-up; binary trie: stem and group hashing of the plan)
  uint64_t page_write_ns = 0;      // the encoded records packed into pages and written
  // Pages the resolve took from the pages the block's readers had read (PageReuse) instead
  // of reading them.
  uint64_t pages_reused = 0;
  // The pure hash (PageReuse::pure_hash): the exact inputs the commit hashed, hashed again
  // alone level by level through the batch kernels (outside every phase above), timed by
  // pure_hash_protocol.h (inputs gathered before the clock, the faster of two passes); the
  // nodes (MPT: records hashed; binary trie: stems + groups) and hash calls of one pass.
  uint64_t pure_hash_ns = 0, pure_hash_nodes = 0, pure_hash_calls = 0;
  uint64_t publish_ns = 0;         // commit_arena: commit record, reaping the writes, fsync, MANIFEST
                                   // (RocksDB: the one synced WriteBatch, MANIFEST)
  uint64_t disk_bytes = 0;         // pages up to the high-water mark after the commit (RocksDB: its files)
  uint64_t in_use_bytes = 0;       // pages the committed state holds x page size (DbFiles::in_use_bytes)
  uint64_t live_keys = 0;          // the manifest's key count after the commit (MPT: accounts + slots;
                                   // binary trie: leaves)
  // Compaction (arena): pages picked for compaction, and the live records copied out of them.
  uint64_t pages_compacted = 0, records_relocated = 0;
  // ... of which pages not on the block's dirty paths: partly dead pages (emptiest first) and
  // the pages of their records' ancestors (the chain rewritten so that they can move).
  uint64_t chain_pages = 0;
  // RocksDB: pages_read = keys fetched, read_rounds = MultiGet calls, pages_written and
  // pages_released 0; keys_deleted = nodes replaced whose key no new node took.
  uint64_t keys_deleted = 0;
};

// The RocksDB side of a block commit, for both trees: the committed nodes read by path key
// (one MultiGet per round, counted) and the writes of the commit's one WriteBatch.
class RocksCommitBatch {
 public:
  explicit RocksCommitBatch(io::RocksKvStore& db) : db_(db) {}
  // One round: (*values)[i] = the value of keys[i]; a missing key is an error
  // ("<who>: <name(key)> is missing").
  io::Status read(std::span<const std::string> keys, std::vector<std::string>* values, const char* who,
                  std::string (*name)(std::string_view key));
  void put(std::string key, std::string value);
  void erase(std::string key);
  // The batch: the deletions of keys no put of this batch takes, then the puts (a key
  // replaced and rewritten is only its put: a delete before it would change nothing but
  // cost WAL bytes and a memtable entry).
  std::vector<io::KvWrite> writes() const;
  // Deletions that no put of this batch overrides.
  uint64_t net_deletes() const;
  uint64_t rounds = 0, keys_read = 0, bytes_read = 0, read_ns = 0;

 private:
  io::RocksKvStore& db_;
  std::vector<std::string> put_keys_, put_values_, erase_keys_;
  std::vector<std::string_view> views_;
  std::vector<uint8_t> found_;
};

// What a caller hands a committer for its next commits, and what it gets back.
struct PageReuse {
  // Arena: pages read from the committed state by the block's own readers; the resolve takes
  // a page from here instead of reading it (every record is still checked against its
  // parent's hash). The caller must have erased every page id a commit rewrote since they
  // were read (`written` of those commits). nullptr: none.
  const SharedPages* pages = nullptr;
  // Hash the commit's new nodes again, alone, through the batch kernels (CommitStats::
  // pure_hash_ns, pure_hash_protocol.h); a digest that differs from the committed one fails
  // the commit.
  bool pure_hash = false;
  // Out: the tree page ids the last successful commit wrote (arena).
  std::vector<uint64_t> written;
  // Arena: keep the record pages the last commit wrote (written_pages()) and serve the next
  // commit's resolve from them too (its dirty paths start in them). They stay valid until a
  // later commit rewrites their ids, and only the next commit uses them. They are handed over
  // when the commit's pages are packed (before its publish): two sets alternate, so the
  // commit being published keeps the set its own reader borrowed.
  bool keep_written = false;
  std::array<SharedPages, 2> written_sets;
  uint8_t newest_written = 0;
  const SharedPages& written_pages() const { return written_sets[newest_written]; }
  // Arena: hash() reads pages through a store of its own (a second ring over the arena
  // file, opened per commit), not the writer's, so that it may run on another thread while
  // the previous commit's write() is in flight (block_run's hash stage).
  bool own_read_store = false;
  // Compaction (arena): at most this many of the pages the commit read are compaction
  // targets (0: none); see CommitFrame::place_kept. Each target is written at most once
  // more (its live records copied), so the default covers the pages a 4,096-write block
  // reads on a 10M-slot state (~12,900) and a commit never writes more than it read plus
  // its own records.
  uint32_t compact_pages = kDefaultCompactPages;
  // Compaction chains (CommitFrame::add_chain_targets): partly dead pages the commit did not
  // read, and their ancestors' pages, as targets with the budget left. They read pages
  // beyond the block's; `statetree commit` turns them on, the block pipeline does not.
  bool compact_chains = false;
  // Arena: pages with consecutive ids are written as one write run (PageWriter); off: one
  // write per page.
  bool write_runs = true;
  static constexpr uint32_t kDefaultCompactPages = 16384;
};

// The committed state a commit starts from: the root record, the root hash, the store's
// parameters and whether it has a flat snapshot.
struct CommitBase {
  Locator root = kNoLocator;
  std::array<uint8_t, 32> root_hash{};
  io::StoreParams params;
  bool snapshot = false;
};

// What a block committer keeps across its commits: the database (opened with
// DbFiles::for_commit; it must outlive the committer, and each commit updates its manifest and
// commit record) and the superseded-record counts of its partly dead pages.
class CommitterBase {
 public:
  explicit CommitterBase(DbFiles& files) : files_(files) {}
  virtual ~CommitterBase() = default;
  CommitterBase(const CommitterBase&) = delete;
  CommitterBase& operator=(const CommitterBase&) = delete;

  // One block's diff as one commit, in three calls (the block pipeline's hash and commit
  // stages make them apart). hash(): read the dirty paths, apply, hash; nothing written;
  // *root_hash (may be null) the new root; a hash() drops a commit hashed and not written.
  // write_pages(): pack and write the new records (arena: their pages become written_pages()
  // and the base of the next hash(), which may then run on another thread). publish():
  // release, fsync, MANIFEST with `spec_json` in the commit record. Nothing else may change
  // the database between them. On error nothing is published (the previous root stays
  // current) and the error names what failed.
  virtual io::Status hash(const state::StateDiff& diff, std::array<uint8_t, 32>* root_hash = nullptr) = 0;
  virtual io::Status write_pages() = 0;
  virtual io::Status publish(const std::string& spec_json, CommitStats* stats) = 0;
  // = write_pages() then publish().
  io::Status write(const std::string& spec_json, CommitStats* stats);
  // = hash() then write().
  io::Status commit(const state::StateDiff& diff, const std::string& spec_json, CommitStats* stats);

  // The page reuse and pure-hash settings for the next commits (above).
  PageReuse& reuse() { return reuse_; }
  // Arena: every page the later commits read (resolve, release) adds its device latency
  // (ns) to `sink` (nullptr: not recorded); RocksDB: nothing is recorded.
  void record_read_latency(stats::LogHistogram* sink) { read_latency_ = sink; }
  // The state the next hash() starts from: between a write_pages() and the end of its
  // publish(), the root that commit packed (its pages are in written_pages()); else the
  // database's. Safe to call while another thread runs that publish().
  CommitBase base_for_hash();

 protected:
  // write_pages() (arena) hands its packed root to the next hash(); publish() ends that.
  void set_next_base(const CommitBase& b);
  void clear_next_base();
  // For hash(): with PageReuse::own_read_store (arena), a read-only store over the arena file.
  io::Status open_read_store(std::unique_ptr<io::ArenaFileStore>* out);

  DbFiles& files_;
  DeadPageLedger dead_;
  PageReuse reuse_;
  stats::LogHistogram* read_latency_ = nullptr;
  std::mutex base_mu_;
  std::optional<CommitBase> next_base_;
};

class CommitFrame {
 public:
  // files: a database opened with DbFiles::for_commit (arena or RocksDB); dead: the
  // committer's ledger (arena). `who` ("mpt commit") prefixes the errors. Both must outlive
  // the frame.
  // reuse (may be null): the pages to serve the resolve from; gets the pages written.
  // read_latency: where the reader's page-read latencies go (nullptr: nowhere).
  CommitFrame(DbFiles& files, DeadPageLedger& dead, const char* who, PageReuse* reuse = nullptr,
              stats::LogHistogram* read_latency = nullptr);
  // The same from `base` (CommitterBase::base_for_hash()), reading pages through
  // `read_store` (nullptr: the writer's store); files.manifest and files.commit are not read
  // before begin_writes(), so another commit may publish meanwhile.
  CommitFrame(DbFiles& files, DeadPageLedger& dead, const char* who, const CommitBase& base, io::NodeStore* read_store,
              PageReuse* reuse, stats::LogHistogram* read_latency);
  CommitFrame(const CommitFrame&) = delete;
  CommitFrame& operator=(const CommitFrame&) = delete;

  // ok if `files` is a database of tree `kind` (`what`: "an MPT", "a binary trie").
  static io::Status check_target(const DbFiles& files, io::TreeKind kind, const char* who, const char* what);
  // The same with the tree kind from `params` (a base, not files.manifest).
  static io::Status check_target(const DbFiles& files, const io::StoreParams& params, io::TreeKind kind, const char* who,
                                 const char* what);
  // The committed state this commit starts from.
  const CommitBase& base() const { return base_; }

  // RocksDB: nodes by path key through rocks(); arena: records by locator through reader().
  bool keyed() const { return rocks_.has_value(); }
  PageReader& reader() { return *reader_; }
  RocksCommitBatch& rocks() { return *rocks_; }
  void resolved();      // prepare + resolve done
  void applied();       // apply / plan done
  void hashed();        // the new nodes encoded and hashed in memory
  bool pure_hash() const { return reuse_ && reuse_->pure_hash; }
  void pure_hashed(uint64_t ns, uint64_t nodes, uint64_t calls) { pure_ns_ = ns, pure_nodes_ = nodes, pure_calls_ = calls; }
  // The committer's hash() is done (the root known, nothing written): a commit made in two
  // calls (hash, then write) counts in commit_ns only its two calls' own time.
  void hash_stage_done();
  // Opens the writer and the packer over fresh pages and picks the compaction targets
  // (arena; may read pages: the targets beyond the pages read, and at a committer's first
  // compacting commit the walk that rebuilds its ledger). A failure: return fail(s).
  io::Status begin_writes();
  PageWriter& writer() { return *writer_; }
  SubtreePacker& packer() { return *packer_; }
  void encoded();       // the new records are all in the packer
  // Arena, after encoded(): the pages written go to PageReuse (written ids, and with
  // keep_written the other written_sets entry becomes the newest), for the next commit.
  // Kept if the publish then fails: their page ids are free in the committed state, so no
  // walk from its root reaches them.
  void hand_over_written();
  // A record of the committed state that the new tree keeps (a child of a rewritten node):
  // push_placed(l), unless its page is a compaction target of this commit; then it is
  // copied (kind, children, body unchanged, so its hash is too) into the new pages with the
  // records below it on target pages, and the copies are superseded (counted in the
  // ledger, so a target page whose records are all gone is released by publish()).
  io::Status place_kept(Locator l);
  // A failure after begin_writes(): reaps the writes, aborts the space, returns s.
  io::Status fail(io::Status s);

  // A node read from the committed state and not kept: its records are unreachable.
  void supersede(std::span<const Locator> records, uint64_t body_bytes);
  // RocksDB: the node at `key` read from the committed state and not kept: deleted, unless
  // a new node is put at the same key.
  void supersede_key(std::string key, uint64_t body_bytes);

  // The flat snapshot's changes (snapshot/update.h): null unless the database has a
  // snapshot. The committers hand it every leaf they write or delete; publish() rewrites
  // the snapshot pages they reach in the same commit (arena), or puts the changes into the
  // block's one WriteBatch on the snapshot's column family (RocksDB, snapshot/rocks.h).
  SnapshotDelta* snapshot() { return snapshot_ ? &*snapshot_ : nullptr; }

  // What the tree-specific phases produced.
  struct Outcome {
    Locator root = kNoLocator;
    std::array<uint8_t, 32> root_hash{};
    uint64_t records_written = 0, bytes_written = 0;
    int64_t keys_delta = 0;
    uint64_t accounts_written = 0, slot_writes = 0, records_read = 0, sibling_reads = 0;
  };
  // Releases the pages proven dead, publishes the commit (spec_json in its commit record)
  // and, when stats is set, fills it (all of it: reset first). On error nothing is published.
  io::Status publish(const Outcome& o, const std::string& spec_json, CommitStats* stats);

 private:
  uint64_t own_ns() const;
  io::Status publish_rocks(const Outcome& o, const std::string& spec_json, CommitStats* stats);
  void fill_common_stats(const Outcome& o, uint64_t publish_ns, CommitStats* stats) const;
  void fill_arena_stats(const Outcome& o, uint64_t pages_written, uint64_t pages_released, uint64_t publish_ns,
                        CommitStats* stats) const;

  DbFiles& files_;
  DeadPageLedger& dead_;
  const char* who_;
  CommitBase base_;
  std::optional<PageReader> reader_;
  std::optional<RocksCommitBatch> rocks_;
  std::optional<PageWriter> writer_;
  std::optional<SubtreePacker> packer_;
  PageReuse* reuse_;
  std::optional<SnapshotDelta> snapshot_;
  uint64_t t0_ = 0, t_resolved_ = 0, t_applied_ = 0, t_hashed_ = 0, t_hash_stage_ = 0, t_writes_ = 0, t_encoded_ = 0;
  uint64_t pure_ns_ = 0, pure_nodes_ = 0, pure_calls_ = 0;
  uint64_t superseded_ = 0, superseded_bytes_ = 0;
  // Compaction: target pages (loaded in reader_), records copied out of them.
  io::Status choose_compaction_targets();
  io::Status rebuild_compaction_index();
  io::Status add_chain_targets(size_t budget);
  io::Status relocate(Locator l);
  io::NodeStore* store_ = nullptr;  // the store reader_ reads (arena)
  std::unordered_set<uint64_t> compact_;
  uint64_t relocated_ = 0, chain_pages_ = 0;
};

}  // namespace st::persist
