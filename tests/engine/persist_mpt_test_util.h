// persist_mpt_test_util: shared helpers of the persistent-MPT tests: a random Allocation
// (EOAs + contracts with storage values of every RLP shape), AllocationSource with a test
// spec, temp database directories removed at scope exit, and build / open through
// DbFiles + build_mpt / open_mpt directly (the entry points under test; the db test also
// opens through tree_db.cpp's open_any_db).
#pragma once

#include <doctest/doctest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <random>
#include <string>

#include "engine/mpt/state.h"
#include "engine/persist/db_files.h"
#include "engine/persist/mpt/db.h"
#include "engine/state/state_source.h"

namespace pmpt_test {

using namespace st;
using st::persist::DbFiles;
using st::persist::DbOptions;
using st::persist::StoreKind;

// The spec stored with the tests' databases (AllocationSource(alloc, kTestSpec)).
inline const std::string kTestSpec = "{\"test\":true}";

inline state::Hash32 random_value(std::mt19937_64& rng) {
  state::Hash32 v{};
  switch (rng() % 4) {
    case 0: v[31] = uint8_t(1 + rng() % 0x7f); break;   // one byte < 0x80: RLP is the byte itself
    case 1: v[31] = uint8_t(0x80 + rng() % 0x80); break; // one byte >= 0x80
    case 2: for (int i = 24; i < 32; ++i) v[i] = uint8_t(rng()); v[24] |= 1; break;
    default: for (auto& b : v) b = uint8_t(rng()); v[0] |= 0x80; break;
  }
  return v;
}

// accounts accounts, the first `contracts` of them with code and 1..max_slots slots (one
// with exactly one slot), some storage values zero (absent state).
inline state::Allocation random_alloc(uint64_t seed, size_t accounts, size_t contracts, size_t max_slots) {
  std::mt19937_64 rng(seed);
  state::Allocation a;
  for (size_t i = 0; i < accounts; ++i) {
    state::Address addr;
    for (auto& b : addr) b = uint8_t(rng());
    state::Account acc;
    acc.nonce = rng() % 3 == 0 ? 0 : rng() % 100000;
    if (rng() % 5) for (int k = 20; k < 32; ++k) acc.balance[k] = uint8_t(rng());
    if (i < contracts) {
      acc.code.resize(10 + rng() % 50);
      for (auto& b : acc.code) b = uint8_t(rng());
      const size_t n = i == 0 ? 1 : 1 + rng() % max_slots;
      for (size_t j = 0; j < n; ++j) {
        state::Hash32 slot{};
        if (rng() % 2) slot[31] = uint8_t(j);  // small Solidity-like slots
        else for (auto& b : slot) b = uint8_t(rng());
        acc.storage[slot] = (j % 17 == 5) ? state::Hash32{} : random_value(rng);
      }
    }
    a.accounts.emplace_back(addr, std::move(acc));
  }
  return a;
}

struct TempDir {
  std::string path;
  explicit TempDir(const std::string& tag) {
    static std::atomic<int> n{0};
    path = "/tmp/persist_mpt_" + tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(n++);
    std::filesystem::remove_all(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

inline DbOptions mpt_options(const std::string& dir, StoreKind store) {
  DbOptions o;
  o.dir = dir;
  o.store = store;
  o.params.tree_kind = io::TreeKind::mpt;
  o.params.hash_kind = io::HashKind::keccak256;
  o.params.group_depth = 0;
  o.params.page_size = 4096;
  o.queue_depth = 8;
  o.direct_io = false;  // tmpfs-friendly; the read path is the same
  return o;
}

inline io::Status build(const DbOptions& o, const state::StateSource& src, persist::BuildReport* rep,
                        const persist::ProgressFn& progress = {}) {
  DbFiles files;
  if (io::Status s = DbFiles::for_build(o, &files); !s.ok()) return s;
  return persist::build_mpt(files, o, src, rep, progress);
}

// A random allocation (random_alloc's arguments) built into o's database, which must succeed.
inline state::Allocation build_random(const DbOptions& o, uint64_t seed, size_t accounts, size_t contracts,
                                      size_t max_slots) {
  state::Allocation a = random_alloc(seed, accounts, contracts, max_slots);
  state::AllocationSource src(a, kTestSpec);
  persist::BuildReport rep;
  REQUIRE(build(o, src, &rep).ok());
  return a;
}

inline io::Status open(const DbOptions& o, std::unique_ptr<persist::TreeDb>* db) {
  DbFiles files;
  if (io::Status s = DbFiles::for_read(o, &files); !s.ok()) return s;
  return persist::open_mpt(std::move(files), o, db);
}

}  // namespace pmpt_test
