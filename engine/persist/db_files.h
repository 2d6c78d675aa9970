// db_files: the files of one database directory opened for a tree (tree_db.h has the
// layout), and the commit protocol around a tree writer, the same for every tree:
//
//   arena:   PageWriter w(files.arena->pages(), files.arena->space());
//            SubtreePacker p(w); ... p.push(...) ...; p.finish(&roots);
//            files.commit_arena(w, root_locator, manifest_fields)
//              -> writes the commit record page (root locator + source spec), w.finish(),
//                 CowSpace::commit (sync, publish MANIFEST); on error CowSpace::abort()
//   rocksdb: build:  files.rocks->write_batch(node batches ...);
//                    files.commit_rocks(manifest_fields)
//                      -> writes the commit record under kRocksCommitKey, flushes the
//                         memtables to SSTs, publishes MANIFEST
//            block:  files.commit_rocks_batch(node puts + deletes, manifest_fields)
//                      -> ONE synced WriteBatch: the nodes, the deletions, the flat
//                         snapshot's changes (its column family, snapshot/rocks.h) and the
//                         commit record; then MANIFEST (no flush: the synced WAL holds the block)
//
//   commit record (arena: one page's payload; RocksDB: the value):
//   +--------------+-----------+-------------------+--------------+----------------------+
//   | "STCR" u32   | version   | root locator u64  | spec len u32 | spec bytes (JSON)    |
//   +--------------+-----------+-------------------+--------------+----------------------+
//   RocksDB adds the manifest fields of its commit after the spec (the record is then the
//   commit's authority: the WriteBatch that holds it holds the nodes it names):
//   +--------------+----------------+----------------+------------------------------------+
//   | "STRF" u32   | commit seq u64 | root hash [32] | node, key count, payload bytes u64 |
//   +--------------+----------------+----------------+------------------------------------+
//   A RocksDB database opened after a crash between its batch and the MANIFEST is at the
//   record's commit (a writer republishes the MANIFEST from it; a reader uses its fields);
//   a record without these fields (an older build) leaves the MANIFEST's.
//
// Invariants: a commit is visible only once the MANIFEST naming it is published; opening
// checks the manifest's parameters before touching any page; a directory with a manifest
// but no commit (a build that crashed before its first commit) opens as "holds no state".
// One writer per directory: for_build and for_commit hold DIR/LOCK for the DbFiles' life
// (a second writer is refused at once, Errc::locked, naming the holder's pid and command);
// for_read pins the published states (DIR/READERS) and opens every file read-only, so a
// reader sees the one state its manifest names while a writer commits (io/db_lock.h,
// io/cow_space.h), and a read-only database can be read.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>

#include "engine/persist/page_reader.h"
#include "engine/persist/page_writer.h"
#include "engine/persist/record_page.h"
#include "engine/persist/snapshot/format.h"
#include "engine/persist/tree_db.h"
#include "io/rocksdb_store.h"
#include "io/store_dir.h"

namespace st::persist {

inline constexpr uint32_t kCommitRecordMagic = 0x52435453u;  // "STCR"
inline constexpr uint32_t kCommitRecordVersion = 1;
inline constexpr std::string_view kRocksCommitKey = "\xff" "commit";

inline constexpr uint32_t kCommitFieldsMagic = 0x46525453u;  // "STRF"

// The manifest fields a RocksDB commit record carries (see above).
struct CommitFields {
  uint64_t commit_seq = 0;
  std::array<uint8_t, 32> root_hash{};
  uint64_t node_count = 0, key_count = 0, payload_bytes = 0;
};

struct CommitInfo {
  Locator root = kNoLocator;   // arena: the root record (kNoLocator = empty tree)
  std::string spec;            // the source's spec_json()
  // The flat snapshot of this commit (snapshot/format.h), when the database has one (arena:
  // its pages and counts; RocksDB: zero counts, the entries are in its column family).
  // Encoded after the spec (and the RocksDB fields) as the "STSN" block.
  std::optional<SnapshotRef> snapshot;
};

// fields: appended after the spec (RocksDB); decode sets *fields when the record has them
// (reset otherwise).
std::vector<uint8_t> encode_commit_record(const CommitInfo& c, const CommitFields* fields = nullptr);
io::Status decode_commit_record(std::span<const uint8_t> bytes, CommitInfo* out,
                                std::optional<CommitFields>* fields = nullptr);

struct DbFiles {
  StoreKind store = StoreKind::arena;
  std::string dir;
  // RocksDB store: the writer lock or the reader pin (the arena's are inside StoreDir).
  // Declared before the stores, so they are released after the stores are closed.
  std::unique_ptr<io::WriterLock> writer_lock;
  std::unique_ptr<io::ReaderPin> reader_pin;
  std::unique_ptr<io::StoreDir> arena;          // arena store
  std::unique_ptr<io::RocksKvStore> rocks;      // rocksdb store
  std::unique_ptr<io::FileManifestSlot> rocks_manifest;
  io::Manifest manifest;                        // as opened / last committed
  CommitInfo commit;                            // of the last commit (when manifest.commit_seq > 0)

  // Creates or opens DIR for a build (an existing arena database must have the same
  // parameters; an existing RocksDB database is refused: path-keyed nodes are overwritten
  // in place, so it cannot keep the previous state readable).
  static io::Status for_build(const DbOptions& o, DbFiles* out);
  // Opens an existing database for reading (pinned, read-only files); reads the commit
  // record. Errors: no database, another version or parameters, no commit yet ("holds no
  // state: the build never committed").
  static io::Status for_read(const DbOptions& o, DbFiles* out);
  // The same for a writer (block commits): takes the writer lock first (Errc::locked if
  // another writer holds it), opens the files read-write.
  static io::Status for_commit(const DbOptions& o, DbFiles* out);
  // RocksDB: a reader over the writer's own open store, at a RocksDB snapshot taken now (the
  // last whole WriteBatch: a block's nodes and its commit record land together), so it needs
  // no reopen and sees one state while the writer commits newer ones. Its manifest is `base`
  // (the writer's as opened) with the fields of the commit record the snapshot holds. The
  // view must be closed before `writer`; it takes no reader pin (the writer's process holds
  // the database).
  static io::Status rocks_view_of(const DbFiles& writer, const io::Manifest& base, DbFiles* out);
  // Reads the store kind and parameters of DIR from its files (open_any_db()).
  static io::Status probe(const std::string& dir, DbOptions* o);

  // The manifest fields a tree fills in; commit_* set the rest.
  struct Fields {
    std::array<uint8_t, 32> root_hash{};
    uint64_t node_count = 0, key_count = 0, payload_bytes = 0;
  };
  // snapshot: the commit's flat snapshot (written through w), or nullptr for none.
  io::Status commit_arena(PageWriter& w, Locator root, const Fields& f, const std::string& spec,
                          const SnapshotRef* snapshot = nullptr);
  // snapshot: the build wrote the flat snapshot's column family (snapshot/rocks.h); the
  // record carries the ref (zero counts) that says so. Block commits keep the last one's.
  io::Status commit_rocks(const Fields& f, const std::string& spec, const SnapshotRef* snapshot = nullptr);
  // A RocksDB block commit: `writes` (new path-keyed nodes, deletions of replaced ones; a
  // later write of a key wins) and the commit record in ONE synced WriteBatch, then the
  // MANIFEST. On error nothing of the batch is applied (RocksDB's atomic batch).
  io::Status commit_rocks_batch(std::vector<io::KvWrite>& writes, const Fields& f, const std::string& spec);
  uint64_t disk_bytes() const;
  // Arena: pages the committed state holds (below the high-water mark, neither free nor
  // deferred: its records, snapshot, free list, commit record) x page size. RocksDB:
  // disk_bytes(). The measure of space that compaction bounds (docs/persist-commit.md).
  uint64_t in_use_bytes() const;
  std::vector<std::string> data_files() const;
};

}  // namespace st::persist
