// tree_db: what `statetree build / verify / get / read-bench` see of a persistent state
// tree, whichever tree (MPT: mpt/db.h, binary trie: bintrie/db.h) and whichever store
// (the flat arena file, RocksDB keyed by path).
//
// A database directory:
//   DIR/MANIFEST      the manifest (io/manifest.h): format version, tree, hash, GD, page
//                     size, root hash, counts; replaced atomically by each commit
//   DIR/pages.arena   arena store: the record pages (record_page.h); the manifest's
//                     root_page names the commit record page (db_files.h)
//   DIR/rocksdb/      RocksDB store: nodes keyed by path, plus the commit record under
//                     kRocksCommitKey, written in the commit's last WriteBatch before the
//                     manifest is published
//   DIR/LOCK          the one writer's lock (build, rebuild, commit; io/db_lock.h)
//   DIR/READERS       the readers' pins: pages a commit frees wait while readers exist
//
// Lookups are batched: lookup() resolves all keys of the batch together. Arena: streamed
// (page_reader.h), each key's walk advances as soon as the page it needs lands, the device
// queue kept full across levels; RocksDB: level by level, one MultiGet per depth.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "engine/bintrie/proof.h"
#include "engine/mpt/proof.h"
#include "engine/state/state_source.h"
#include "engine/stats/summary.h"
#include "io/manifest.h"
#include "io/node_store.h"
#include "io/status.h"

namespace st::persist {

class PageReader;
class SnapshotReader;
class SnapshotTable;

enum class StoreKind : uint8_t { arena, rocksdb };
const char* store_kind_name(StoreKind k);

struct DbOptions {
  std::string dir;
  StoreKind store = StoreKind::arena;
  io::StoreParams params;        // tree kind, hash, group depth, page size
  uint32_t queue_depth = 32;     // arena: ops in the kernel
  bool direct_io = true;
  uint64_t rocks_block_cache_bytes = 8ull << 20;
  // RocksDB: MultiGets in flight per read round (io::RocksOptions::read_threads); 1 = one
  // MultiGet on the caller's thread. `commit` and `apply` set it to their --qd.
  uint32_t rocks_read_threads = 1;
  // Binary-trie verify: its page cache is dropped whenever it holds more pages than this
  // (bounded memory; tests set it small to exercise the drops on a small database).
  size_t verify_cache_pages = 16384;
  // Binary trie: a slot key's answer also carries its account (one more walk per distinct
  // address of the batch's slot keys). read-bench turns it off by default to time the slot
  // reads alone (the MPT's walk passes through the account leaf anyway, so it has no such
  // switch).
  bool slot_key_accounts = true;
  // A reader (open_db): open the state this manifest names, not the current one (see
  // open_any_db's same_state_as).
  std::optional<io::Manifest> read_state;
  // build: also write the flat snapshot (snapshot/format.h) in the same commit (arena) or
  // the same build (RocksDB: a column family of its own, snapshot/rocks.h).
  bool snapshot = false;
};

// Called now and then during long operations: done / total in the operation's own unit.
using ProgressFn = std::function<void(uint64_t done, uint64_t total)>;

struct BuildReport {
  std::array<uint8_t, 32> root{};
  uint64_t accounts = 0, slots = 0;       // what the source held
  uint64_t nodes = 0;                     // records / RocksDB node entries written
  uint64_t pages = 0;                     // arena pages written (0 for RocksDB)
  uint64_t node_bytes = 0;                // encoded node bytes (bodies)
  uint64_t disk_bytes = 0;                // bytes of the database files after the build
  double page_fill = 0;                   // arena: record bytes / payload bytes
  uint64_t snapshot_entries = 0;          // --snapshot: entries and pages of the flat snapshot
  uint64_t snapshot_pages = 0;
  uint64_t build_ns = 0;                  // hashing + encoding + writing, commit included
  uint64_t commit_ns = 0;                 // sync + manifest publish
};

struct AccountInfo {
  bool exists = false;
  uint64_t nonce = 0;
  state::U256 balance{};
  state::Hash32 code_hash{};
  state::Hash32 storage_root{};  // MPT only (zero for the binary trie)
  uint64_t code_size = 0;         // binary trie only (its basic-data leaf holds it)
};

// For an account key: the account. For a slot key: the slot value and its account (the MPT's
// walk passes through the account leaf; the binary trie walks the account's header stem,
// where its basic-data and code-hash leaves live, in the same batch: one more walk per
// distinct address that the batch does not already ask for; with
// DbOptions::slot_key_accounts off it does not, and the account stays empty).
struct LookupAnswer {
  AccountInfo account;
  std::optional<state::Hash32> slot_value;  // for a slot key: the value; nullopt = absent
};

struct LookupStats {
  uint64_t keys = 0;
  uint64_t rounds = 0;            // arena: waits that returned pages ("waves"); RocksDB: MultiGet calls
  uint64_t page_reads = 0;        // arena pages read; RocksDB: keys fetched by MultiGet
  uint64_t bytes_read = 0;        // arena: device bytes; RocksDB: value bytes returned
  uint64_t nodes_visited = 0;     // records / nodes decoded on the keys' paths
  uint64_t io_wait_ns = 0;        // arena: time blocked waiting for page reads (the rest of a lookup is CPU)
  std::vector<uint32_t> reads_per_round;  // level-by-level rounds (RocksDB); empty for streamed arena walks
  // Arena (streamed walks): blocking waits for completions, and the reads outstanding at
  // each wave (reads_in_flight_sum / rounds = how full the walks kept the queue; max).
  uint64_t io_waits = 0;
  // Arena: CPU time of the calling thread during the lookup (user + system, its syscalls
  // included). wall - io_wait_ns - cpu_ns = time runnable but not running (a loaded machine).
  uint64_t cpu_ns = 0;
  uint64_t reads_in_flight_sum = 0;
  uint64_t reads_in_flight_max = 0;
};

struct VerifyReport {
  bool ok = false;
  std::string error;              // first inconsistency (one line) when !ok
  uint64_t nodes = 0, pages = 0, bytes = 0;
  // Leaves found: every key the tree holds (MPT: accounts + storage slots; binary trie:
  // every present leaf value: account fields, code chunks and storage alike).
  // accounts, slots: the accounts and their storage slots. MPT: counted as found. Binary
  // trie: a leaf does not say what it holds, so accounts = the stems shaped as an account's
  // header stem (bintrie_disk::account_code_chunks) and slots = leaves minus each account's
  // two header fields and all of its code chunks (the header's and those in stems of their
  // own, which the header's code size counts); a deleted slot is a present zero leaf there
  // (go-ethereum's semantics), so it still counts.
  uint64_t leaves = 0, accounts = 0, slots = 0;
  std::array<uint8_t, 32> root{};     // recomputed
};

// A proof in the tree's own shape (mpt: eth_getProof; bintrie: the key proofs of the
// account's basic-data and code-hash leaves, and of the slot).
struct BintrieStateProof {
  bintrie::KeyProof basic_data, code_hash;
  std::optional<bintrie::KeyProof> slot;
  state::Hash32 slot_key{};           // tree key of the slot
  state::Hash32 basic_data_key{}, code_hash_key{};
};
using StateProof = std::variant<mpt::AccountProof, BintrieStateProof>;

class TreeDb {
 public:
  virtual ~TreeDb() = default;
  virtual const io::Manifest& manifest() const = 0;
  // The spec_json() of the source the database was built from.
  virtual const std::string& source_spec() const = 0;
  // Level-by-level batched lookup. cold_pages: drop the page cache of the reader first
  // (each batch starts cold at the engine level; the OS cache is the caller's business).
  virtual io::Status lookup(std::span<const state::StateKey> keys, std::vector<LookupAnswer>* out,
                            LookupStats* stats, bool cold_pages = true) = 0;
  // Re-reads every node, re-hashes, checks every page checksum and the root.
  virtual io::Status verify(VerifyReport* report, const ProgressFn& progress = {}) = 0;
  virtual io::Status prove(const state::StateKey& key, StateProof* out) = 0;
  // Files a cold run must evict (arena file or RocksDB SST files).
  virtual std::vector<std::string> data_files() const = 0;
  // The page store (arena only; nullptr for RocksDB): for the raw-read reference.
  virtual io::NodeStore* page_store() = 0;
  // The reader's page cache (arena only; nullptr otherwise): the block pipeline hands the
  // pages its lookups read to the commit (PageReader::take_pages).
  virtual PageReader* page_reader() { return nullptr; }
  // Arena: every page read of this handle from now on adds its device latency (ns) to
  // `sink` (PageReader::set_latency_sink; nullptr stops it). RocksDB: nothing is recorded.
  virtual void record_read_latency(stats::LogHistogram* sink) { (void)sink; }
  // The arena's flat snapshot of the state this handle reads (snapshot/reader.h), over its
  // own page cache on the same store; not_found when the database has none (built without
  // --snapshot, or RocksDB: open_snapshot_table below covers both stores).
  virtual io::Status open_snapshot(std::unique_ptr<SnapshotReader>* out);
  // The same on either store (snapshot/table.h): the arena's SnapshotReader, or the RocksDB
  // column family; not_found when the database has none.
  virtual io::Status open_snapshot_table(std::unique_ptr<SnapshotTable>* out);
  // Verify hands every leaf it finds to this function: the tree's own key (MPT:
  // keccak(address), or keccak(address) || keccak(slot); binary trie: stem || suffix) and
  // the leaf's value bytes, in no particular order (the snapshot check, snapshot/verify.h).
  using LeafFn = std::function<void(std::span<const uint8_t> key, std::span<const uint8_t> value)>;
  void set_verify_leaf_sink(LeafFn fn) { leaf_sink_ = std::move(fn); }

 protected:
  LeafFn leaf_sink_;
};

// Builds the state of `source` into options.dir (a new directory, or an existing arena
// database of the same parameters: the build then replaces its state in one copy-on-write
// commit; the previous state stays readable until the commit is durable).
io::Status build_db(const DbOptions& options, const state::StateSource& source, BuildReport* report,
                    const ProgressFn& progress = {});
// Opens a database for reading; options.params must match what it was built with
// (one-line error). options.params.tree_kind picks the tree; open_any_db() takes every
// parameter from the manifest instead (verify / get / read-bench). A reader sees the one
// state the manifest it loaded names, for its whole life, while a writer commits newer ones
// (db_files.h). same_state_as: open the state that open handle reads (another queue depth
// over the same state); it must stay open meanwhile.
io::Status open_db(const DbOptions& options, std::unique_ptr<TreeDb>* out);
io::Status open_any_db(const std::string& dir, uint32_t queue_depth, std::unique_ptr<TreeDb>* out,
                       bool slot_key_accounts = true, const TreeDb* same_state_as = nullptr);
// RocksDB: a reader over the writer's open store at a RocksDB snapshot of now
// (DbFiles::rocks_view_of: the last whole commit batch; `base` is the writer's manifest as
// opened). It must be closed before `writer`.
struct DbFiles;
io::Status open_rocks_reader(const DbFiles& writer, const io::Manifest& base, bool slot_key_accounts,
                             std::unique_ptr<TreeDb>* out);

}  // namespace st::persist
