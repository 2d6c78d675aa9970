// io_bench: the io-bench protocol (see the header): the fills, and the store / raw /
// RocksDB random reads at each queue depth.
#include "engine/experiments/io_bench.h"

#include <time.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <memory>

#include "engine/stats/summary.h"
#include "io/arena_store.h"
#include "io/cold_cache.h"
#include "io/random_reads.h"
#include "io/raw_reads.h"
#include "io/rocksdb_store.h"
#include "kernels/support/clock.h"
#include "kernels/support/splitmix64.h"

namespace st::experiments {
namespace {

double now_s() { return double(monotonic_ns()) * 1e-9; }

// One timed run's figures; bytes_per_read: the page (store, raw) or value (RocksDB) size.
ReadRateRun to_run(const io::RandomReadResult& r, double bytes_per_read) {
  const stats::Latency l = stats::latency(r.latency_ns);
  const double mbps = r.wall_ns ? double(r.reads) * bytes_per_read / (double(r.wall_ns) * 1e-9) / 1e6 : 0;
  return {r.iops(), r.us_per_read(), l.mean / 1e3, l.p50 / 1e3, l.p99 / 1e3, l.p90 / 1e3, l.p999 / 1e3, mbps};
}

// Writes every page once (sealed, deterministic payload) at QD 64, then fdatasync.
io::Status fill_arena(io::ArenaFileStore& store) {
  const uint32_t payload = store.payload_bytes();
  const uint32_t batch = 256;
  std::vector<unsigned char> bufs(size_t(batch) * payload);
  std::vector<io::PageOp> ops;
  for (uint64_t first = 0; first < store.capacity_pages(); first += batch) {
    ops.clear();
    for (uint64_t p = first; p < std::min<uint64_t>(first + batch, store.capacity_pages()); ++p) {
      unsigned char* b = bufs.data() + size_t(p - first) * payload;
      for (uint32_t i = 0; i < payload; i += 8) {
        const uint64_t v = (p * kSplitmix64Gamma) ^ i;
        std::memcpy(b + i, &v, std::min<uint32_t>(8, payload - i));
      }
      ops.push_back({io::PageOpKind::write, p, b, p});
    }
    if (io::Status s = io::run_batch(store, ops); !s.ok()) return s;
  }
  return store.sync();
}

// `count` incompressible values of `payload` bytes (like node hashes) under rocks_bench_key(i).
io::Status fill_rocks(io::RocksKvStore& db, uint64_t count, uint32_t payload) {
  std::vector<std::string> keys, values;
  std::vector<io::KvWrite> batch;
  for (uint64_t first = 0; first < count; first += 1024) {
    keys.clear();
    values.clear();
    batch.clear();
    for (uint64_t i = first; i < std::min<uint64_t>(first + 1024, count); ++i) {
      keys.push_back(io::rocks_bench_key(i));
      std::string v(payload, '\0');
      uint64_t x = i;
      for (uint32_t b = 0; b < payload; b += 8) {
        const uint64_t r = io::random_page(x, ~uint64_t(0));
        std::memcpy(v.data() + b, &r, std::min<uint32_t>(8, payload - b));
      }
      values.push_back(std::move(v));
    }
    for (size_t k = 0; k < keys.size(); ++k) batch.push_back({keys[k], values[k]});
    if (io::Status s = db.write_batch(batch); !s.ok()) return s;
  }
  return db.flush();
}

// One io-bench run: its files (deleted at the end unless kept) and what it measures.
class IoBench {
 public:
  IoBench(const IoBenchOptions& o, IoBenchResult* out) : o_(o), out_(out), rocks_dir_(o.path + ".rocksdb") {
    ro_.dir = rocks_dir_;
  }
  ~IoBench() {
    std::error_code ec;
    if (created_ && !o_.keep) std::filesystem::remove(o_.path, ec);
    if (rocks_created_ && !o_.keep) std::filesystem::remove_all(rocks_dir_, ec);
  }

  IoBenchStatus run() {
    if (IoBenchStatus s = check_files(); !s.ok()) return s;
    if (IoBenchStatus s = open_or_fill_arena(); !s.ok()) return s;
    if (o_.rocksdb && !rocks_existed_)
      if (io::Status s = create_rocks(); !s.ok()) return {s};
    ro_.sync_writes = true;
    ro_.create = false;
    // The raw baseline always reads with O_DIRECT: against a buffered store it would compare
    // the page cache with the device, so buffered runs go without it.
    out_->raw = !o_.no_raw && !o_.buffered;
    for (uint32_t qd : o_.queue_depths) out_->by_qd.push_back(IoBenchQueueDepth{qd, {}, {}, {}, {}});
    const uint64_t n = o_.queue_depths.size();
    for (uint64_t rep = 0; rep < o_.reps; ++rep)
      for (size_t qi = 0; qi < n; ++qi) {
        if (o_.progress) o_.progress(rep * n + qi, o_.reps * n);
        if (io::Status s = run_queue_depth(rep, qi); !s.ok()) return {s};
      }
    return {};
  }

 private:
  static IoBenchStatus bad(const std::string& message) { return {io::Status(io::Errc::bad_argument, message), true}; }

  IoBenchStatus check_files() {
    if (!io::valid_page_size(uint32_t(o_.page_size)) || o_.page_size > 16384)
      return bad("--page-size must be 4096 or 16384 (got " + std::to_string(o_.page_size) + ")");
    std::error_code ec;
    existed_ = std::filesystem::exists(o_.path, ec);
    if (existed_ && !o_.reuse) return bad(o_.path + " exists; remove it or pass --reuse");
    if (!existed_ && o_.reuse) return bad(o_.path + " does not exist (--reuse needs an arena file)");
    if (o_.rocksdb && !io::rocksdb_available()) return bad("--rocksdb: this build has no RocksDB");
    rocks_existed_ = o_.rocksdb && std::filesystem::exists(rocks_dir_, ec);
    if (rocks_existed_ && !o_.reuse) return bad(rocks_dir_ + " exists; remove it or pass --reuse");
    out_->file_existed = existed_;
    return {};
  }

  IoBenchStatus open_or_fill_arena() {
    ao_.path = o_.path;
    ao_.page_size = uint32_t(o_.page_size);
    ao_.capacity_pages = existed_ ? 0 : (o_.size_mib << 20) / o_.page_size;
    ao_.create = !existed_;
    ao_.direct_io = !o_.buffered;
    ao_.queue_depth = 64;
    std::unique_ptr<io::ArenaFileStore> store;
    io::Status s = io::ArenaFileStore::open(ao_, &store);
    if (!s.ok()) return {s, s.code() != io::Errc::unsupported};
    created_ = !existed_;
    const io::ArenaFeatures f = store->features();
    out_->direct_io = f.direct_io, out_->registered_buffers = f.registered_buffers;
    out_->registered_file = f.registered_file, out_->feature_notes = f.notes;
    out_->pages = store->capacity_pages();
    if (!existed_) {
      if (o_.announce)
        o_.announce("io-bench: filling " + o_.path + " (" + std::to_string(out_->pages) + " pages of " +
                    std::to_string(o_.page_size) + " B)...");
      const double t0 = now_s();
      s = fill_arena(*store);
      out_->fill_seconds = now_s() - t0;
      if (!s.ok()) return {io::Status(s.code(), "fill: " + s.message())};
    }
    ao_.create = false;
    ao_.capacity_pages = 0;
    return {};
  }

  io::Status create_rocks() {
    const uint32_t payload = io::page_payload_bytes(uint32_t(o_.page_size));
    ro_.sync_writes = false;  // the fill is one bulk load; flush() makes it durable
    std::unique_ptr<io::RocksKvStore> db;
    if (io::Status s = io::RocksKvStore::open(ro_, &db); !s.ok()) return s;
    rocks_created_ = true;
    if (o_.announce)
      o_.announce("io-bench: filling " + rocks_dir_ + " (" + std::to_string(out_->pages) + " values of " +
                  std::to_string(payload) + " B)...");
    const double t0 = now_s();
    if (io::Status s = fill_rocks(*db, out_->pages, payload); !s.ok()) return s;
    out_->rocks_fill_seconds = now_s() - t0;
    return {};
  }

  io::Status evict(const std::vector<std::string>& files) {
    if (!o_.cold) return {};
    io::ColdResult r;
    io::Status s = io::make_cold(files, true, &r);
    out_->cold_protocol = io::cold_protocol_name(r.protocol), out_->cold_detail = r.detail;
    return s;
  }

  io::Status store_reads(uint64_t rep, size_t qi, uint64_t run_seed) {
    if (io::Status s = evict({o_.path}); !s.ok()) return s;
    ao_.queue_depth = o_.queue_depths[qi];
    std::unique_ptr<io::ArenaFileStore> store;
    if (io::Status s = io::ArenaFileStore::open(ao_, &store); !s.ok()) return s;
    const io::WarmUpResult w = io::warm_up(*store, uint32_t(o_.warmup_reads), o_.seed * 7919 + rep * 31 + qi);
    out_->warm_first_read_us = w.first_read_us, out_->warm_last_read_us = w.last_read_us;
    io::RandomReadResult r;
    if (io::Status s = io::random_reads(*store, o_.reads, 2 * ao_.queue_depth, run_seed, &r); !s.ok()) return s;
    out_->by_qd[qi].store.push_back(to_run(r, double(o_.page_size)));
    return {};
  }

  io::Status raw_reads(uint64_t rep, size_t qi, uint64_t run_seed) {
    if (io::Status s = evict({o_.path}); !s.ok()) return s;
    const uint32_t qd = o_.queue_depths[qi], page = uint32_t(o_.page_size);
    io::RandomReadResult r;
    if (io::Status s = io::raw_random_reads(o_.path, page, out_->pages, qd, o_.warmup_reads, o_.seed * 7919 + rep * 31 + qi, &r);
        !s.ok())
      return s;
    if (io::Status s = io::raw_random_reads(o_.path, page, out_->pages, qd, o_.reads, run_seed, &r); !s.ok()) return s;
    out_->by_qd[qi].raw.push_back(to_run(r, double(o_.page_size)));
    return {};
  }

  io::Status rocks_reads(size_t qi, uint64_t run_seed) {
    std::error_code ec;
    std::vector<std::string> files;
    for (const auto& e : std::filesystem::directory_iterator(rocks_dir_, ec))
      if (e.is_regular_file(ec)) files.push_back(e.path().string());
    if (io::Status s = evict(files); !s.ok()) return s;
    std::unique_ptr<io::RocksKvStore> db;
    if (io::Status s = io::RocksKvStore::open(ro_, &db); !s.ok()) return s;
    out_->rocks_disk_bytes = db->disk_bytes();
    const uint32_t payload = io::page_payload_bytes(uint32_t(o_.page_size));
    io::RandomReadResult r;
    if (io::Status s = io::rocks_random_reads(*db, out_->pages, payload, o_.warmup_reads, 1, run_seed ^ 0x55, &r); !s.ok())
      return s;
    if (io::Status s = io::rocks_random_reads(*db, out_->pages, payload, o_.reads, o_.queue_depths[qi], run_seed, &r); !s.ok())
      return s;
    out_->by_qd[qi].rocksdb.push_back(to_run(r, double(payload)));
    return {};
  }

  io::Status run_queue_depth(uint64_t rep, size_t qi) {
    const uint64_t run_seed = o_.seed + rep * 1000003 + qi * 101;
    const bool raw = out_->raw;
    // Alternate which goes first so neither always gets the warmer device.
    const bool raw_first = raw && rep % 2 == 1;
    if (raw_first)
      if (io::Status s = raw_reads(rep, qi, run_seed); !s.ok()) return s;
    if (io::Status s = store_reads(rep, qi, run_seed); !s.ok()) return s;
    if (raw && !raw_first)
      if (io::Status s = raw_reads(rep, qi, run_seed); !s.ok()) return s;
    IoBenchQueueDepth& q = out_->by_qd[qi];
    if (raw) q.store_over_raw.push_back(q.store.back().us_per_read / q.raw.back().us_per_read);
    if (o_.rocksdb) return rocks_reads(qi, run_seed);
    return {};
  }

  const IoBenchOptions& o_;
  IoBenchResult* out_;
  const std::string rocks_dir_;
  io::ArenaOptions ao_;
  io::RocksOptions ro_;
  bool existed_ = false, rocks_existed_ = false, created_ = false, rocks_created_ = false;
};

}  // namespace

IoBenchStatus run_io_bench(const IoBenchOptions& options, IoBenchResult* out) {
  *out = IoBenchResult{};
  out->rocks_dir = options.path + ".rocksdb";
  out->rocks_value_bytes = io::page_payload_bytes(uint32_t(options.page_size));
  return IoBench(options, out).run();
}

}  // namespace st::experiments
