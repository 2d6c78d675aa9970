// rocksdb_store: WriteBatch + batched MultiGet over RocksDB (see the header).
#include "io/rocksdb_store.h"

#include <algorithm>

#include <filesystem>
#include <time.h>

#ifdef STATETREE_HAVE_ROCKSDB
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/slice.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>
#endif

namespace st::io {

std::string rocks_bench_key(uint64_t i) {
  std::string k = "page/";
  for (int b = 7; b >= 0; --b) k.push_back(char(uint8_t(i >> (8 * b))));
  return k;
}

Status rocks_random_reads(RocksKvStore& db, uint64_t keys, uint32_t value_bytes, uint64_t reads, uint32_t batch,
                          uint64_t seed, RandomReadResult* result) {
  *result = RandomReadResult{};
  if (keys == 0 || batch == 0) return Status(Errc::bad_argument, "rocks reads: no keys or batch 0");
  auto now_ns = [] {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
  };
  result->latency_ns.reserve(reads);
  uint64_t rng = seed;
  std::vector<std::string> key_store;
  std::vector<std::string_view> views;
  std::vector<std::string> values;
  std::vector<uint8_t> found;
  const uint64_t t0 = now_ns();
  for (uint64_t done = 0; done < reads;) {
    const uint64_t n = std::min<uint64_t>(batch, reads - done);
    key_store.clear();
    views.clear();
    for (uint64_t i = 0; i < n; ++i) key_store.push_back(rocks_bench_key(random_page(rng, keys)));
    for (const auto& k : key_store) views.push_back(k);
    const uint64_t b0 = now_ns();
    if (Status s = db.multi_get(views, &values, &found); !s.ok()) return s;
    const uint64_t lat = now_ns() - b0;
    for (uint64_t i = 0; i < n; ++i) {
      if (!found[i] || values[i].size() != value_bytes)
        return Status(Errc::not_found, "rocks reads: key " + std::to_string(i) + " of a batch missing or wrong size");
      result->latency_ns.push_back(lat);
    }
    done += n;
  }
  result->wall_ns = now_ns() - t0;
  result->reads = result->latency_ns.size();
  return {};
}

#ifdef STATETREE_HAVE_ROCKSDB

bool rocksdb_available() { return true; }

namespace {
Status from_rocks(const rocksdb::Status& s, const std::string& what) {
  return Status(s.IsNotFound() ? Errc::not_found : (s.IsCorruption() ? Errc::corrupt_page : Errc::sys),
                what + ": " + s.ToString());
}
}  // namespace

struct RocksKvStore::Impl {
  RocksOptions opt;
  std::unique_ptr<rocksdb::DB> db;
};

RocksKvStore::RocksKvStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RocksKvStore::~RocksKvStore() = default;

Status RocksKvStore::open(const RocksOptions& o, std::unique_ptr<RocksKvStore>* out) {
  if (o.dir.empty()) return Status(Errc::bad_argument, "rocksdb directory is empty");
  rocksdb::Options options;
  options.create_if_missing = o.create;
  options.use_direct_reads = o.direct_reads;
  options.use_direct_io_for_flush_and_compaction = false;
  options.max_open_files = -1;
  rocksdb::BlockBasedTableOptions table;
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(double(o.bloom_bits_per_key)));
  table.block_cache = rocksdb::NewLRUCache(size_t(o.block_cache_bytes));
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = o.read_only ? rocksdb::DB::OpenForReadOnly(options, o.dir, &raw)
                                  : rocksdb::DB::Open(options, o.dir, &raw);
  if (!s.ok()) return from_rocks(s, "rocksdb open " + o.dir);
  auto impl = std::make_unique<Impl>();
  impl->opt = o;
  impl->db.reset(raw);
  out->reset(new RocksKvStore(std::move(impl)));
  return {};
}

Status RocksKvStore::write_batch(std::span<const KvWrite> writes) {
  rocksdb::WriteBatch batch;
  for (const KvWrite& w : writes) {
    const rocksdb::Slice key(w.key.data(), w.key.size());
    rocksdb::Status s = w.erase ? batch.Delete(key)
                                : batch.Put(key, rocksdb::Slice(w.value.data(), w.value.size()));
    if (!s.ok()) return from_rocks(s, "rocksdb batch");
  }
  rocksdb::WriteOptions wo;
  wo.sync = impl_->opt.sync_writes;
  rocksdb::Status s = impl_->db->Write(wo, &batch);
  return s.ok() ? Status() : from_rocks(s, "rocksdb write");
}

Status RocksKvStore::multi_get(std::span<const std::string_view> keys, std::vector<std::string>* values,
                               std::vector<uint8_t>* found) {
  const size_t n = keys.size();
  std::vector<rocksdb::Slice> slices(n);
  for (size_t i = 0; i < n; ++i) slices[i] = rocksdb::Slice(keys[i].data(), keys[i].size());
  std::vector<rocksdb::PinnableSlice> pinned(n);
  std::vector<rocksdb::Status> statuses(n);
  rocksdb::ReadOptions ro;
  ro.verify_checksums = true;
  impl_->db->MultiGet(ro, impl_->db->DefaultColumnFamily(), n, slices.data(), pinned.data(),
                      statuses.data());
  values->assign(n, std::string());
  found->assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (statuses[i].ok()) {
      (*values)[i].assign(pinned[i].data(), pinned[i].size());
      (*found)[i] = 1;
    } else if (!statuses[i].IsNotFound()) {
      return from_rocks(statuses[i], "rocksdb multi_get key " + std::to_string(i));
    }
  }
  return {};
}

Status RocksKvStore::flush() {
  rocksdb::FlushOptions fo;
  fo.wait = true;
  rocksdb::Status s = impl_->db->Flush(fo);
  return s.ok() ? Status() : from_rocks(s, "rocksdb flush");
}

uint64_t RocksKvStore::disk_bytes() const {
  uint64_t total = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(impl_->opt.dir, ec))
    if (e.is_regular_file(ec)) total += e.file_size(ec);
  return total;
}

const std::string& RocksKvStore::dir() const { return impl_->opt.dir; }

#else  // !STATETREE_HAVE_ROCKSDB

bool rocksdb_available() { return false; }
struct RocksKvStore::Impl { RocksOptions opt; };
RocksKvStore::RocksKvStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RocksKvStore::~RocksKvStore() = default;
Status RocksKvStore::open(const RocksOptions&, std::unique_ptr<RocksKvStore>*) {
  return Status(Errc::unsupported, "built without RocksDB (install librocksdb-dev and reconfigure)");
}
Status RocksKvStore::write_batch(std::span<const KvWrite>) { return Status(Errc::unsupported, "no RocksDB"); }
Status RocksKvStore::multi_get(std::span<const std::string_view>, std::vector<std::string>*, std::vector<uint8_t>*) {
  return Status(Errc::unsupported, "no RocksDB");
}
Status RocksKvStore::flush() { return Status(Errc::unsupported, "no RocksDB"); }
uint64_t RocksKvStore::disk_bytes() const { return 0; }
const std::string& RocksKvStore::dir() const { return impl_->opt.dir; }

#endif

}  // namespace st::io
