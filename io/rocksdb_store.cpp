// rocksdb_store: WriteBatch + batched MultiGet over RocksDB (see the header).
#include "io/rocksdb_store.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdarg>
#include <mutex>
#include <numeric>
#include <thread>

#include <filesystem>
#include <time.h>

#ifdef STATETREE_HAVE_ROCKSDB
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/slice.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include "io/disk_space.h"
#include "kernels/support/clock.h"
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
  result->latency_ns.reserve(reads);
  uint64_t rng = seed;
  std::vector<std::string> key_store;
  std::vector<std::string_view> views;
  std::vector<std::string> values;
  std::vector<uint8_t> found;
  const uint64_t t0 = monotonic_ns();
  for (uint64_t done = 0; done < reads;) {
    const uint64_t n = std::min<uint64_t>(batch, reads - done);
    key_store.clear();
    views.clear();
    for (uint64_t i = 0; i < n; ++i) key_store.push_back(rocks_bench_key(random_page(rng, keys)));
    for (const auto& k : key_store) views.push_back(k);
    const uint64_t b0 = monotonic_ns();
    if (Status s = db.multi_get(views, &values, &found); !s.ok()) return s;
    const uint64_t lat = monotonic_ns() - b0;
    for (uint64_t i = 0; i < n; ++i) {
      if (!found[i] || values[i].size() != value_bytes)
        return Status(Errc::not_found, "rocks reads: key " + std::to_string(i) + " of a batch missing or wrong size");
      result->latency_ns.push_back(lat);
    }
    done += n;
  }
  result->wall_ns = monotonic_ns() - t0;
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

bool is_no_space(const rocksdb::Status& s) {
  return s.IsNoSpace() || (s.IsIOError() && s.ToString().find("No space left on device") != std::string::npos);
}

// The threads of a store's parallel MultiGet: run(n, job) calls job(0..n-1), each once, on
// the pool's threads and the caller's, and returns when all have returned. One run at a
// time (a caller that finds one under way reads on its own thread instead: try_run).
class ReadPool {
 public:
  explicit ReadPool(uint32_t threads) {
    for (uint32_t i = 0; i < threads; ++i) threads_.emplace_back([this] { work(); });
  }
  ~ReadPool() {
    {
      std::lock_guard<std::mutex> lk(m_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  // false: another run is under way (nothing was called).
  bool try_run(size_t n, const std::function<void(size_t)>& job) {
    std::unique_lock<std::mutex> run(run_m_, std::try_to_lock);
    if (!run.owns_lock()) return false;
    uint64_t gen = 0;
    {
      std::lock_guard<std::mutex> lk(m_);
      job_ = &job;
      chunks_ = n;
      next_ = done_ = 0;
      gen = ++generation_;
    }
    wake_.notify_all();
    drain(gen);
    std::unique_lock<std::mutex> lk(m_);
    done_cv_.wait(lk, [&] { return done_ == chunks_; });
    job_ = nullptr;
    return true;
  }

 private:
  // Claims chunks of run `gen` until none is left; job_ stays valid while one is unclaimed
  // (the run waits for every claimed chunk to be done).
  void drain(uint64_t gen) {
    std::unique_lock<std::mutex> lk(m_);
    while (generation_ == gen && next_ < chunks_) {
      const size_t i = next_++;
      const std::function<void(size_t)>* job = job_;
      lk.unlock();
      (*job)(i);
      lk.lock();
      if (++done_ == chunks_) done_cv_.notify_all();
    }
  }
  void work() {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lk(m_);
        wake_.wait(lk, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
      }
      drain(seen);
    }
  }

  std::mutex run_m_;  // one run at a time
  std::mutex m_;
  std::condition_variable wake_, done_cv_;
  const std::function<void(size_t)>* job_ = nullptr;
  size_t chunks_ = 0, next_ = 0, done_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

// A multi_get fans out only in ranges of at least this many keys (a thread per few keys
// would cost more than it overlaps).
constexpr size_t kMinKeysPerReadThread = 16;

// The read-only instance's info log: RocksDB would otherwise create (and rotate) DIR/LOG.
class DiscardLogger final : public rocksdb::Logger {
 public:
  using rocksdb::Logger::Logv;
  void Logv(const char*, va_list) override {}
};
}  // namespace

// A view (RocksKvStore::snapshot_view) reads the DB of the store it was made from and does
// not own it: its deleter leaves the DB (and the family handles) to that store.
struct DbDeleter {
  bool owns = true;
  void operator()(rocksdb::DB* db) const {
    if (owns) delete db;
  }
};

struct RocksKvStore::Impl {
  RocksOptions opt;
  std::unique_ptr<rocksdb::DB, DbDeleter> db;
  const rocksdb::Snapshot* snapshot = nullptr;  // a view's: every read sees the DB as of it
  rocksdb::ColumnFamilyOptions family_options;  // every family's (the table options above)
  std::vector<rocksdb::ColumnFamilyHandle*> families;  // [0] = default
  std::vector<std::string> family_names;
  Status write_failed;  // the first failed write: RocksDB's writers must not be used again
  std::unique_ptr<ReadPool> read_pool;  // read_threads - 1 threads (none when 1)
  std::atomic<uint64_t> read_ranges{0};  // MultiGet calls issued

  ~Impl() {
    if (db && snapshot) db->ReleaseSnapshot(snapshot);
    if (db && db.get_deleter().owns)
      for (rocksdb::ColumnFamilyHandle* h : families) (void)db->DestroyColumnFamilyHandle(h);
  }

  rocksdb::ReadOptions read_options() const {
    rocksdb::ReadOptions ro;
    ro.verify_checksums = true;
    ro.snapshot = snapshot;
    ro.fill_cache = snapshot == nullptr;  // a view's reads leave the block cache to the writer's
    return ro;
  }

  rocksdb::ColumnFamilyHandle* family(uint32_t i) const { return i < families.size() ? families[i] : nullptr; }
  Status no_family(uint32_t i) const {
    return Status(Errc::bad_argument, "rocksdb " + opt.dir + ": no column family #" + std::to_string(i));
  }

  // Refuses a write before RocksDB starts it: read-only, an earlier failure, or less free
  // space than `bytes` + the margin. `what` names the write for the message.
  Status may_write(uint64_t bytes, const std::string& what) const {
    if (opt.read_only) return Status(Errc::bad_argument, "rocksdb " + opt.dir + " is open read-only: " + what + " refused");
    if (!write_failed.ok())
      return Status(Errc::sys, "rocksdb " + opt.dir + ": an earlier write failed (" + write_failed.message() +
                                   "); reopen the database to write again");
    const uint64_t need = bytes + opt.free_space_margin_bytes;
    uint64_t avail = 0;
    if (available_bytes(opt.dir, &avail).ok() && avail < need)
      return no_space(opt.dir, need, std::to_string(bytes) + " bytes of WAL and SST for " + what + " in " + opt.dir +
                                         ", " + std::to_string(opt.free_space_margin_bytes) + " bytes kept free");
    return {};
  }

  // A failed write: one line, Errc::full for a full disk; later writes are refused.
  Status failed(const rocksdb::Status& s, uint64_t bytes, const std::string& what) {
    write_failed = is_no_space(s) ? no_space(opt.dir, bytes + opt.free_space_margin_bytes,
                                             what + " in " + opt.dir + ": " + s.ToString())
                                  : from_rocks(s, "rocksdb " + what);
    return write_failed;
  }
};

RocksKvStore::RocksKvStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RocksKvStore::~RocksKvStore() = default;

Status RocksKvStore::open(const RocksOptions& o, std::unique_ptr<RocksKvStore>* out) {
  if (o.dir.empty()) return Status(Errc::bad_argument, "rocksdb directory is empty");
  rocksdb::Options options;
  options.create_if_missing = o.create;
  options.use_direct_reads = o.direct_reads;
  options.use_direct_io_for_flush_and_compaction = false;
  // No preallocation: RocksDB reserves ~1.1 x write_buffer_size (70 MiB) for each WAL with
  // fallocate, which on ext4 takes what free space there is (64 MiB disk: a 9 MiB build
  // hit ENOSPC in its WAL and aborted). Files then take only what is written, which is
  // what the free-space check before each write counts.
  options.allow_fallocate = false;
  options.max_open_files = -1;
  rocksdb::BlockBasedTableOptions table;
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(double(o.bloom_bits_per_key)));
  if (o.block_cache_bytes == 0)
    table.no_block_cache = true;
  else
    table.block_cache = rocksdb::NewLRUCache(size_t(o.block_cache_bytes));
  table.block_size = o.block_size_bytes;
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s;
  if (o.read_only) {
    options.create_if_missing = false;
    options.info_log = std::make_shared<DiscardLogger>();
  }
  // Every family the database holds (a new database: the default one), default first.
  std::vector<std::string> names;
  if (!rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(options), o.dir, &names).ok() || names.empty())
    names = {rocksdb::kDefaultColumnFamilyName};
  if (auto d = std::find(names.begin(), names.end(), rocksdb::kDefaultColumnFamilyName); d != names.end())
    std::iter_swap(names.begin(), d);
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  for (const std::string& n : names) descriptors.emplace_back(n, rocksdb::ColumnFamilyOptions(options));
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  if (o.read_only) {
    s = rocksdb::DB::OpenForReadOnly(rocksdb::DBOptions(options), o.dir, descriptors, &handles, &raw);
  } else {
    // Opening for writing writes a WAL, a MANIFEST and an OPTIONS file: on a full disk that
    // fails half-way inside RocksDB, so refuse first.
    uint64_t avail = 0;
    const std::string where = std::filesystem::exists(o.dir) ? o.dir : std::filesystem::path(o.dir).parent_path().string();
    if (available_bytes(where, &avail).ok() && avail < o.free_space_margin_bytes)
      return no_space(where, o.free_space_margin_bytes, "opening rocksdb " + o.dir + " for writing");
    s = rocksdb::DB::Open(rocksdb::DBOptions(options), o.dir, descriptors, &handles, &raw);
  }
  if (!s.ok()) return from_rocks(s, "rocksdb open " + o.dir);
  auto impl = std::make_unique<Impl>();
  impl->opt = o;
  impl->db.reset(raw);
  impl->family_options = rocksdb::ColumnFamilyOptions(options);
  impl->families = std::move(handles);
  impl->family_names = std::move(names);
  if (o.read_threads > 1) impl->read_pool = std::make_unique<ReadPool>(o.read_threads - 1);
  out->reset(new RocksKvStore(std::move(impl)));
  return {};
}

namespace {
// The order a batch is handed to RocksDB in: by (family, key), stable, so several writes of
// one key keep their order and the last still wins; a family with a range deletion keeps
// the given order (a put after the range must stay after it).
std::vector<size_t> batch_order(std::span<const KvWrite> writes) {
  std::vector<size_t> order(writes.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::vector<uint32_t> ranged;
  for (const KvWrite& w : writes)
    if (w.erase_range && std::find(ranged.begin(), ranged.end(), w.family) == ranged.end()) ranged.push_back(w.family);
  auto keeps_order = [&](uint32_t f) { return std::find(ranged.begin(), ranged.end(), f) != ranged.end(); };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const KvWrite &x = writes[a], &y = writes[b];
    if (x.family != y.family) return x.family < y.family;
    return !keeps_order(x.family) && x.key < y.key;
  });
  return order;
}
}  // namespace

Status RocksKvStore::write_batch(std::span<const KvWrite> writes) {
  if (impl_->opt.read_only || !impl_->write_failed.ok()) return impl_->may_write(0, "a write batch");
  rocksdb::WriteBatch batch;
  for (const size_t i : batch_order(writes)) {
    const KvWrite& w = writes[i];
    rocksdb::ColumnFamilyHandle* cf = impl_->family(w.family);
    if (!cf) return impl_->no_family(w.family);
    const rocksdb::Slice key(w.key.data(), w.key.size()), value(w.value.data(), w.value.size());
    rocksdb::Status s = w.erase_range ? batch.DeleteRange(cf, key, value)
                                      : (w.erase ? batch.Delete(cf, key) : batch.Put(cf, key, value));
    if (!s.ok()) return from_rocks(s, "rocksdb batch");
  }
  // The batch lands in the WAL now, and with the memtables it joins in SSTs when they are
  // flushed (by RocksDB in the background once full): count both.
  uint64_t memtable_bytes = 0;
  impl_->db->GetAggregatedIntProperty(rocksdb::DB::Properties::kCurSizeAllMemTables, &memtable_bytes);
  const uint64_t bytes = 2 * uint64_t(batch.GetDataSize()) + memtable_bytes;
  if (Status m = impl_->may_write(bytes, "a write batch"); !m.ok()) return m;
  rocksdb::WriteOptions wo;
  wo.sync = impl_->opt.sync_writes;
  rocksdb::Status s = impl_->db->Write(wo, &batch);
  return s.ok() ? Status() : impl_->failed(s, bytes, "write batch");
}

namespace {
// One MultiGet of keys[0..n) into pinned / statuses (n > 0).
void multi_get_range(rocksdb::DB& db, const rocksdb::ReadOptions& ro, rocksdb::ColumnFamilyHandle* cf, size_t n,
                     const rocksdb::Slice* keys, rocksdb::PinnableSlice* pinned, rocksdb::Status* statuses, bool sorted) {
  db.MultiGet(ro, cf, n, keys, pinned, statuses, sorted);
}
}  // namespace

Status RocksKvStore::multi_get(std::span<const std::string_view> keys, std::vector<std::string>* values,
                               std::vector<uint8_t>* found, uint32_t family) {
  rocksdb::ColumnFamilyHandle* cf = impl_->family(family);
  if (!cf) return impl_->no_family(family);
  const size_t n = keys.size();
  // order[j]: the key read at position j (sorted by key when the read fans out).
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t(0));
  const size_t ranges = impl_->read_pool ? std::min<size_t>(impl_->opt.read_threads, n / kMinKeysPerReadThread) : 1;
  if (ranges > 1)
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return keys[a] < keys[b]; });
  std::vector<rocksdb::Slice> slices(n);
  for (size_t j = 0; j < n; ++j) slices[j] = rocksdb::Slice(keys[order[j]].data(), keys[order[j]].size());
  std::vector<rocksdb::PinnableSlice> pinned(n);
  std::vector<rocksdb::Status> statuses(n);
  const rocksdb::ReadOptions ro = impl_->read_options();
  const std::function<void(size_t)> range = [&](size_t r) {
    const size_t lo = n * r / ranges, hi = n * (r + 1) / ranges;
    if (hi > lo) multi_get_range(*impl_->db, ro, cf, hi - lo, slices.data() + lo, pinned.data() + lo, statuses.data() + lo, true);
  };
  if (n > 0 && ranges > 1 && impl_->read_pool->try_run(ranges, range)) {
    impl_->read_ranges += ranges;
  } else if (n > 0) {
    multi_get_range(*impl_->db, ro, cf, n, slices.data(), pinned.data(), statuses.data(), false);
    ++impl_->read_ranges;
  }
  values->assign(n, std::string());
  found->assign(n, 0);
  for (size_t j = 0; j < n; ++j) {
    const size_t i = order[j];
    if (statuses[j].ok()) {
      (*values)[i].assign(pinned[j].data(), pinned[j].size());
      (*found)[i] = 1;
    } else if (!statuses[j].IsNotFound()) {
      return from_rocks(statuses[j], "rocksdb multi_get key " + std::to_string(i));
    }
  }
  return {};
}

Status RocksKvStore::flush() {
  uint64_t memtable_bytes = 0;
  if (!impl_->opt.read_only)
    impl_->db->GetAggregatedIntProperty(rocksdb::DB::Properties::kCurSizeAllMemTables, &memtable_bytes);
  if (Status m = impl_->may_write(memtable_bytes, "a flush"); !m.ok()) return m;
  rocksdb::FlushOptions fo;
  fo.wait = true;
  rocksdb::Status s = impl_->db->Flush(fo, impl_->families);
  return s.ok() ? Status() : impl_->failed(s, memtable_bytes, "flush");
}

Status RocksKvStore::for_each(const std::function<void(std::string_view, std::string_view)>& fn) const {
  return for_each_in(0, [&](std::string_view k, std::string_view v) {
    fn(k, v);
    return true;
  });
}

Status RocksKvStore::for_each_in(uint32_t family, const std::function<bool(std::string_view, std::string_view)>& fn) const {
  rocksdb::ColumnFamilyHandle* cf = impl_->family(family);
  if (!cf) return impl_->no_family(family);
  const rocksdb::ReadOptions ro = impl_->read_options();
  std::unique_ptr<rocksdb::Iterator> it(impl_->db->NewIterator(ro, cf));
  for (it->SeekToFirst(); it->Valid(); it->Next())
    if (!fn(std::string_view(it->key().data(), it->key().size()), std::string_view(it->value().data(), it->value().size())))
      break;
  return it->status().ok() ? Status() : from_rocks(it->status(), "rocksdb scan");
}

int RocksKvStore::family(std::string_view name) const {
  for (size_t i = 0; i < impl_->family_names.size(); ++i)
    if (impl_->family_names[i] == name) return int(i);
  return -1;
}

Status RocksKvStore::create_family(const std::string& name, uint32_t* index) {
  if (family(name) >= 0) return Status(Errc::bad_argument, "rocksdb " + impl_->opt.dir + ": column family " + name + " exists");
  if (Status m = impl_->may_write(0, "creating column family " + name); !m.ok()) return m;
  rocksdb::ColumnFamilyHandle* h = nullptr;
  rocksdb::Status s = impl_->db->CreateColumnFamily(impl_->family_options, name, &h);
  if (!s.ok()) return impl_->failed(s, 0, "create column family " + name);
  impl_->families.push_back(h);
  impl_->family_names.push_back(name);
  *index = uint32_t(impl_->families.size() - 1);
  return {};
}

Status RocksKvStore::snapshot_view(std::unique_ptr<RocksKvStore>* out) const {
  auto view = std::make_unique<Impl>();
  view->opt = impl_->opt;
  view->opt.read_only = true;
  view->db = std::unique_ptr<rocksdb::DB, DbDeleter>(impl_->db.get(), DbDeleter{false});
  view->snapshot = impl_->db->GetSnapshot();
  if (!view->snapshot) return Status(Errc::sys, "rocksdb " + impl_->opt.dir + ": no snapshot could be taken");
  view->family_options = impl_->family_options;
  view->families = impl_->families;
  view->family_names = impl_->family_names;
  if (view->opt.read_threads > 1) view->read_pool = std::make_unique<ReadPool>(view->opt.read_threads - 1);
  out->reset(new RocksKvStore(std::move(view)));
  return {};
}

void RocksKvStore::set_free_space_margin_bytes(uint64_t bytes) { impl_->opt.free_space_margin_bytes = bytes; }

uint64_t RocksKvStore::disk_bytes() const {
  uint64_t total = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(impl_->opt.dir, ec))
    if (e.is_regular_file(ec)) total += e.file_size(ec);
  return total;
}

const std::string& RocksKvStore::dir() const { return impl_->opt.dir; }
const RocksOptions& RocksKvStore::options() const { return impl_->opt; }
uint64_t RocksKvStore::read_ranges() const { return impl_->read_ranges.load(); }

#else  // !STATETREE_HAVE_ROCKSDB

bool rocksdb_available() { return false; }
struct RocksKvStore::Impl { RocksOptions opt; };
RocksKvStore::RocksKvStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RocksKvStore::~RocksKvStore() = default;
Status RocksKvStore::open(const RocksOptions&, std::unique_ptr<RocksKvStore>*) {
  return Status(Errc::unsupported, "built without RocksDB (install librocksdb-dev and reconfigure)");
}
Status RocksKvStore::write_batch(std::span<const KvWrite>) { return Status(Errc::unsupported, "no RocksDB"); }
Status RocksKvStore::multi_get(std::span<const std::string_view>, std::vector<std::string>*, std::vector<uint8_t>*,
                               uint32_t) {
  return Status(Errc::unsupported, "no RocksDB");
}
Status RocksKvStore::flush() { return Status(Errc::unsupported, "no RocksDB"); }
Status RocksKvStore::for_each(const std::function<void(std::string_view, std::string_view)>&) const {
  return Status(Errc::unsupported, "no RocksDB");
}
Status RocksKvStore::for_each_in(uint32_t, const std::function<bool(std::string_view, std::string_view)>&) const {
  return Status(Errc::unsupported, "no RocksDB");
}
int RocksKvStore::family(std::string_view) const { return -1; }
Status RocksKvStore::create_family(const std::string&, uint32_t*) { return Status(Errc::unsupported, "no RocksDB"); }
Status RocksKvStore::snapshot_view(std::unique_ptr<RocksKvStore>*) const { return Status(Errc::unsupported, "no RocksDB"); }
void RocksKvStore::set_free_space_margin_bytes(uint64_t bytes) { impl_->opt.free_space_margin_bytes = bytes; }
uint64_t RocksKvStore::disk_bytes() const { return 0; }
uint64_t RocksKvStore::read_ranges() const { return 0; }
const std::string& RocksKvStore::dir() const { return impl_->opt.dir; }
const RocksOptions& RocksKvStore::options() const { return impl_->opt; }

#endif

}  // namespace st::io
