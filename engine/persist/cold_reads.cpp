// cold_reads: see cold_reads.h. The arena file is the data file named pages.arena; its
// page count for the raw reference is the manifest's page_high_water (pages ever
// allocated: all hold sealed pages), else the file size.
#include "engine/persist/cold_reads.h"

#include <sys/stat.h>

#include "engine/stats/summary.h"
#include "io/cold_cache.h"
#include "io/random_reads.h"
#include "io/raw_reads.h"

namespace st::persist {
namespace {

uint64_t file_bytes(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? uint64_t(st.st_size) : 0;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

uint64_t percentile_ns(std::vector<uint64_t> sample, double q) { return stats::percentile(std::move(sample), q); }

double RawReadFigures::latency_us_percentile(double q) const { return double(percentile_ns(latency_ns, q)) / 1e3; }

io::Status make_db_cold(const TreeDb& db, bool allow_drop_caches, ColdInfo* out) {
  const std::vector<std::string> files = db.data_files();
  io::ColdResult r;
  io::Status s = io::make_cold(files, allow_drop_caches, &r);
  out->protocol = io::cold_protocol_name(r.protocol);
  out->detail = r.detail;
  return s;
}

io::Status warm_up_db(const TreeDb& db, uint32_t reads, uint64_t seed, WarmUpInfo* out) {
  *out = {};
  std::string best;
  uint64_t best_bytes = 0;
  for (const std::string& f : db.data_files()) {
    const uint64_t b = file_bytes(f);
    if (b > best_bytes) best = f, best_bytes = b;
  }
  const uint64_t pages = best_bytes / 4096;
  if (pages == 0 || reads == 0) return {};
  io::RandomReadResult r;
  if (io::Status s = io::raw_random_reads(best, 4096, pages, 1, reads, seed, &r); !s.ok()) return s;
  out->reads = uint32_t(r.reads);
  if (!r.latency_ns.empty()) {
    out->first_read_us = double(r.latency_ns.front()) / 1e3;
    out->last_read_us = double(r.latency_ns.back()) / 1e3;
  }
  return {};
}

io::Status raw_page_reads(const TreeDb& db, uint64_t reads, uint32_t queue_depth, uint64_t seed,
                          RawReadFigures* out) {
  *out = {};
  std::string arena;
  for (const std::string& f : db.data_files())
    if (ends_with(f, "pages.arena")) arena = f;
  if (arena.empty()) return io::Status(io::Errc::bad_argument, "raw page reads: the database has no arena file");
  const uint32_t page_size = db.manifest().params.page_size;
  uint64_t pages = db.manifest().page_high_water;
  const uint64_t file_pages = file_bytes(arena) / page_size;
  if (pages == 0 || pages > file_pages) pages = file_pages;
  if (reads == 0) return {};
  io::RandomReadResult r;
  if (io::Status s = io::raw_random_reads(arena, page_size, pages, queue_depth, reads, seed, &r); !s.ok()) return s;
  out->reads = r.reads;
  out->wall_ns = r.wall_ns;
  out->latency_ns = std::move(r.latency_ns);
  return {};
}

io::Status device_reference(const std::string& dir, uint64_t reads, uint32_t queue_depth, bool cold,
                            uint32_t warm_up_reads, uint64_t seed, DeviceReference* out) {
  *out = {};
  std::unique_ptr<TreeDb> db;
  if (io::Status s = open_any_db(dir, queue_depth, &db); !s.ok()) return s;
  ColdInfo evicted;
  if (cold)
    if (io::Status s = make_db_cold(*db, true, &evicted); !s.ok()) return s;
  WarmUpInfo warm;
  if (io::Status s = warm_up_db(*db, warm_up_reads, seed, &warm); !s.ok()) return s;
  RawReadFigures raw;
  if (io::Status s = raw_page_reads(*db, reads, queue_depth, seed * 53 + 7, &raw); !s.ok()) return s;
  out->reads = raw.reads;
  out->us_per_read = raw.us_per_read();
  out->p50_us = raw.latency_us_percentile(0.5);
  return {};
}

}  // namespace st::persist
