// rocksdb_store: the LSM node store (RocksDB 7.8 from Debian), the analogue of go-ethereum's
// Pebble path database, for the "which database" experiment: nodes are values keyed by
// their path (the key scheme is the engine's). Writes go in one WriteBatch per call (its
// entries sorted by key, see write_batch), reads in one MultiGet per call (the batched
// PinnableSlice overload), or, with RocksOptions::read_threads > 1, in up to that many
// MultiGets of disjoint sorted key ranges at once (below). RocksDB headers are
// included only by rocksdb_store.cpp; without RocksDB (STATETREE_HAVE_ROCKSDB undefined)
// open() returns Errc::unsupported. Integrity is RocksDB's own (block checksums, verified
// on every read: ReadOptions::verify_checksums).
//
// Column families: the default one holds what the engine keys by path; others (a flat
// snapshot's table) are created by name (create_family) and named by their index in every
// read and write. open() opens every family the database holds (DB::ListColumnFamilies),
// so a database without one opens as before; one WriteBatch may span families (atomic as
// a whole), and flush() flushes them all.
//
// A full disk must not reach RocksDB's writers: after one failed write Debian's build (asserts
// on) aborts the process at its next use of that writer ("sync_without_flush_called_").
// So: read_only opens with DB::OpenForReadOnly, which writes no file at all (no WAL,
// MANIFEST, OPTIONS or info LOG), and refuses writes itself; a writable open needs
// free_space_margin_bytes free; write_batch() and flush() first check free space
// (statvfs) against what they can write plus free_space_margin_bytes
// and return "no space left on device: need N bytes, have M (...)" (Errc::full) instead of
// starting; a RocksDB NoSpace / IOError status that still comes back is a one-line error,
// and after it the store refuses further writes (reads still work; reopen to write again).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "io/random_reads.h"
#include "io/status.h"

namespace st::io {

bool rocksdb_available();

struct KvWrite {
  std::string_view key;
  std::string_view value;
  bool erase = false;  // delete `key` (value ignored)
  uint32_t family = 0;  // column family index (0 = default; RocksKvStore::family)
  bool erase_range = false;  // delete every key in [key, value) (`value` is the end key)
};

struct RocksOptions {
  std::string dir;
  bool create = true;            // create the database if missing
  bool direct_reads = true;      // O_DIRECT for SST reads (cold-read experiments)
  uint64_t block_cache_bytes = 8ull << 20;  // 0: no block cache (every data block read from the files)
  uint32_t block_size_bytes = 4096;  // SST data block (BlockBasedTableOptions::block_size)
  int bloom_bits_per_key = 10;
  bool sync_writes = true;       // every write_batch() is fsynced (WAL) before returning
  // Reads in flight: a multi_get of n keys is split into min(read_threads, n / 16) ranges of
  // the sorted keys, each one MultiGet (sorted_input) on a thread of the store's pool (the
  // caller's included). Debian's RocksDB has no io_uring, so one MultiGet reads its blocks
  // one pread after another; this is the analogue of the arena's queue depth. 1 = one
  // MultiGet on the caller's thread. The answers are the same either way.
  uint32_t read_threads = 1;
  bool read_only = false;        // DB::OpenForReadOnly: writes no file; write_batch/flush refused, no RocksDB lock taken
  // A writable open needs this much free, and write_batch() / flush() refuse (Errc::full)
  // unless this much stays free after what they write (a batch: its WAL record, and the SST
  // of the memtable it joins; a flush: the memtables' SST): room for RocksDB's MANIFEST,
  // compactions and the info log.
  uint64_t free_space_margin_bytes = 8ull << 20;
};

class RocksKvStore {
 public:
  static Status open(const RocksOptions& options, std::unique_ptr<RocksKvStore>* out);
  ~RocksKvStore();

  // Errors: read-only (bad_argument), no space (full), an earlier write failed (sys), RocksDB's.
  // The batch is applied as if in the given order (for one key the last write wins), but is
  // handed to RocksDB sorted by (family, key), which makes its memtable inserts sequential
  // (the skip list's insert splice); several writes of one key keep their order.
  Status write_batch(std::span<const KvWrite> writes);
  // values->size() == found->size() == keys.size() on return; found[i] = 0 for a missing
  // key. Any other per-key error fails the call (naming the key index).
  // family: the column family's index.
  Status multi_get(std::span<const std::string_view> keys, std::vector<std::string>* values,
                   std::vector<uint8_t>* found, uint32_t family = 0);
  // RocksDB MultiGet calls issued so far (a fanned-out multi_get counts one per range).
  uint64_t read_ranges() const;
  Status flush();  // every family's memtable -> SST, then the files are what a cold reopen reads
  // Every key of `family` in key order (verify, and tests compare a database's whole
  // content): fn(key, value); fn returns false to stop.
  Status for_each(const std::function<void(std::string_view key, std::string_view value)>& fn) const;
  Status for_each_in(uint32_t family, const std::function<bool(std::string_view key, std::string_view value)>& fn) const;
  // The index of the column family `name`, or -1 when the database has none of that name.
  int family(std::string_view name) const;
  // Creates the column family `name` (writable stores; an existing one is bad_argument).
  Status create_family(const std::string& name, uint32_t* index);
  // A read-only view of this store's database as it is now (a RocksDB snapshot: every
  // WriteBatch applied before the call, none after; a batch is never seen in part), for
  // reads on any thread while this store goes on writing. It shares this store's DB and
  // column families (those created later are not in it) and must be destroyed before this
  // store; its reads use the block cache but do not fill it; writes through it are refused.
  Status snapshot_view(std::unique_ptr<RocksKvStore>* out) const;
  // RocksOptions::free_space_margin_bytes from now on (tests play a full disk with it).
  void set_free_space_margin_bytes(uint64_t bytes);
  uint64_t disk_bytes() const;  // bytes of all regular files in the database directory
  const std::string& dir() const;
  // The options it was opened with (a run records them in its regime).
  const RocksOptions& options() const;

  struct Impl;

 private:
  explicit RocksKvStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The RocksDB counterpart of random_reads(): `reads` Gets of keys chosen uniformly (same
// generator as random_reads) among `keys` keys named rocks_bench_key(i), issued as
// MultiGet batches of `batch` keys (MultiGet is synchronous: each key's latency is its
// batch's). Every key must exist with a value of `value_bytes` bytes.
std::string rocks_bench_key(uint64_t i);
Status rocks_random_reads(RocksKvStore& db, uint64_t keys, uint32_t value_bytes, uint64_t reads, uint32_t batch,
                          uint64_t seed, RandomReadResult* result);

}  // namespace st::io
