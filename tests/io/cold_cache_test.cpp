// cold_cache_test: the fadvise protocol runs (and says so) when drop_caches is not asked
// for; missing files are an error value; warm-up issues the requested QD1 reads.
// (drop_caches itself is not exercised here: it would disturb other processes' caches.)
#include <doctest/doctest.h>

#include <fstream>

#include "io/cold_cache.h"
#include "io/memory_store.h"
#include "tests/io/io_test_util.h"

using namespace st::io;

TEST_CASE("cold cache: fadvise protocol, reported, and errors as values") {
  st::io::test::TempDir dir;
  const std::string f = dir.file("data");
  { std::ofstream(f) << std::string(1 << 16, 'x'); }
  ColdResult r;
  const std::string files[] = {f};
  REQUIRE(make_cold(files, false, &r).ok());
  CHECK(r.protocol == ColdProtocol::fadvise_dontneed);
  CHECK(std::string(cold_protocol_name(r.protocol)) == "fadvise_dontneed");
  CHECK(r.detail == "drop_caches not requested");
  const std::string missing[] = {dir.file("missing")};
  Status s = make_cold(missing, false, &r);
  CHECK(s.code() == Errc::sys);
  CHECK(s.message().find("missing") != std::string::npos);
}

TEST_CASE("warm-up issues QD1 reads and tolerates never-written pages") {
  MemoryStore store(kPageSize4K, 64);
  const WarmUpResult w = warm_up(store, 25, 9);
  CHECK(w.reads == 25);
  CHECK(store.counters().corrupt_pages == 25);  // all-zero pages, content ignored
  CHECK(store.outstanding() == 0);
}
