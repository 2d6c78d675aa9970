// rocksdb_store: the LSM node store (RocksDB 7.8 from Debian), the analogue of go-ethereum's
// Pebble path database, for the "which database" experiment: nodes are values keyed by
// their path (the key scheme is the engine's). Writes go in one WriteBatch per call, reads
// in one MultiGet per call (the batched PinnableSlice overload). RocksDB headers are
// included only by rocksdb_store.cpp; without RocksDB (STATETREE_HAVE_ROCKSDB undefined)
// open() returns Errc::unsupported. Integrity is RocksDB's own (block checksums, verified
// on every read: ReadOptions::verify_checksums).
#pragma once

#include <cstdint>
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
};

struct RocksOptions {
  std::string dir;
  bool create = true;            // create the database if missing
  bool direct_reads = true;      // O_DIRECT for SST reads (cold-read experiments)
  uint64_t block_cache_bytes = 8ull << 20;
  int bloom_bits_per_key = 10;
  bool sync_writes = true;       // every write_batch() is fsynced (WAL) before returning
  bool read_only = false;        // DB::OpenForReadOnly: no writes, no RocksDB lock taken
};

class RocksKvStore {
 public:
  static Status open(const RocksOptions& options, std::unique_ptr<RocksKvStore>* out);
  ~RocksKvStore();

  Status write_batch(std::span<const KvWrite> writes);
  // values->size() == found->size() == keys.size() on return; found[i] = 0 for a missing
  // key. Any other per-key error fails the call (naming the key index).
  Status multi_get(std::span<const std::string_view> keys, std::vector<std::string>* values,
                   std::vector<uint8_t>* found);
  Status flush();  // memtable -> SST, then the files are what a cold reopen reads
  uint64_t disk_bytes() const;  // bytes of all regular files in the database directory
  const std::string& dir() const;

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
