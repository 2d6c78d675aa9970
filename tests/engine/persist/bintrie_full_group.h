// bintrie_full_group: test helpers for full GD-8 groups. Addresses whose account header stems
// start with each of the 256 byte values (a GD-8 tree holding them has a root group with all
// 256 entries, whatever else it holds), and a census of the records reachable from an arena
// database's root (kinds, child counts), read straight from its pages.
#pragma once

#include <doctest/doctest.h>

#include <array>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "engine/bintrie/keys.h"
#include "engine/persist/db_files.h"
#include "engine/persist/record_page.h"
#include "io/node_store.h"
#include "kernels/support/splitmix64.h"

namespace st::persist::test {

// 256 addresses; the i-th one's basic-data key starts with byte i. Drawn from a seeded
// splitmix64 sequence (about 1,600 key hashes).
inline std::vector<state::Address> full_root_group_addresses(const bintrie::KeyScheme& ks, uint64_t seed) {
  std::array<std::optional<state::Address>, 256> by_first{};
  size_t found = 0;
  uint64_t x = seed;
  while (found < by_first.size()) {
    state::Address a;
    for (size_t i = 0; i < a.size(); i += 8) {
      const uint64_t v = st::splitmix64(x);
      std::memcpy(a.data() + i, &v, std::min<size_t>(8, a.size() - i));
    }
    const bintrie::Hash32 k = bintrie::basic_data_key(ks, a);
    if (!by_first[k[0]]) by_first[k[0]] = a, ++found;
  }
  std::vector<state::Address> out;
  for (const auto& a : by_first) out.push_back(*a);
  return out;
}

struct RecordCensus {
  uint64_t records = 0;                // reachable from the root, stem pieces included
  uint64_t full_groups = 0;            // records with 256 children
  uint8_t root_kind = 0;
  uint32_t root_children = 0;
  std::map<uint8_t, uint64_t> kinds;   // record kind -> count
};

// Every record reachable from the committed root of the arena database o, each once.
inline RecordCensus record_census(const DbOptions& o) {
  DbFiles files;
  REQUIRE(DbFiles::for_read(o, &files).message() == "");
  REQUIRE(files.arena);
  io::NodeStore& store = files.arena->pages();
  std::map<uint64_t, std::vector<uint8_t>> pages;
  std::map<uint64_t, RecordPage> parsed;
  auto record = [&](Locator l) -> const RecordView& {
    const uint64_t p = locator_page(l);
    if (!parsed.count(p)) {
      std::vector<uint8_t>& buf = pages[p];
      buf.resize(store.payload_bytes());
      io::PageOp op{io::PageOpKind::read, p, buf.data(), 0};
      REQUIRE(io::run_batch(store, {&op, 1}).ok());
      REQUIRE(decode_record_page(p, buf, &parsed[p]).empty());
    }
    const RecordPage& rp = parsed[p];
    REQUIRE(locator_index(l) < rp.records.size());
    return rp.records[locator_index(l)];
  };
  RecordCensus c;
  if (files.commit.root == kNoLocator) return c;
  std::vector<Locator> todo{files.commit.root};
  std::set<Locator> seen;
  while (!todo.empty()) {
    const Locator l = todo.back();
    todo.pop_back();
    if (!seen.insert(l).second) continue;
    const RecordView& r = record(l);
    if (l == files.commit.root) c.root_kind = r.kind, c.root_children = r.child_count;
    ++c.records;
    ++c.kinds[r.kind];
    c.full_groups += r.child_count == 256;
    for (uint32_t i = 0; i < r.child_count; ++i) todo.push_back(r.child(i));
  }
  return c;
}

}  // namespace st::persist::test
