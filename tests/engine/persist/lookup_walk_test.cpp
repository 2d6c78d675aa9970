// lookup_walk_test: the lookup walk driver (engine/persist/lookup_walk.h) over a toy tree
// whose "hash" of a node is one byte its parent lists, so each case can make one node lie:
//  - streamed (in-memory page store, completions shuffled): every cursor answers as the
//    in-memory walk; each page is read once; every record walked was checked before the
//    walk returned; a lone key's checks run before each wait for its next page (from
//    kCheckBatchMin queued) and at the end; a lying record (inner or the last one walked) fails the walk naming it, with no
//    read left outstanding and no check left queued; a cycle fails after kMaxNodes moves;
//  - rounds (RocksDB): the same answers; one MultiGet per depth of the distinct keys
//    (rounds, reads per round, reads); every node of a round is taken and checked before
//    any cursor steps through it; a lying node fails its round before any step; two
//    cursors naming one node by different hashes, a missing node and a cycle are errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "engine/persist/lookup_walk.h"
#include "engine/persist/page_writer.h"
#include "engine/persist/subtree_packer.h"
#include "io/memory_store.h"
#include "tests/io/io_test_util.h"

using namespace st::persist;
namespace io = st::io;

namespace {

// ---- the toy tree ----
// Node body: [own hash byte][id u32 LE][children u8][child hash bytes...][padding to 300
// bytes: a tree spans many pages]; a cursor with key k takes
// child (k >> (2 * depth)) % children at each node; its answer is the leaf's id.
struct ToyNode {
  uint32_t id = 0;
  std::vector<int> kids;
};
uint8_t toy_hash(uint32_t id) { return uint8_t(id * 37 + 11); }

struct ToyTree {
  std::vector<ToyNode> nodes;
  int root = -1;
  uint32_t liar = ~0u;  // this node's own hash byte differs from what its parent lists
  int make(std::mt19937_64& rng, int depth) {
    ToyNode n;
    if (depth > 0) {
      const int k = 1 + int(rng() % 4);
      for (int i = 0; i < k; ++i) n.kids.push_back(make(rng, depth - 1));
    }
    n.id = uint32_t(nodes.size());
    nodes.push_back(n);
    return int(nodes.size() - 1);
  }
  std::vector<uint8_t> body(int i) const {
    const ToyNode& n = nodes[size_t(i)];
    std::vector<uint8_t> b{uint8_t(toy_hash(n.id) ^ (n.id == liar ? 1 : 0))};
    for (int s = 0; s < 32; s += 8) b.push_back(uint8_t(n.id >> s));
    b.push_back(uint8_t(n.kids.size()));
    for (int k : n.kids) b.push_back(toy_hash(nodes[size_t(k)].id));
    b.resize(300, 0xee);
    return b;
  }
  // The leaf a key reaches, and the nodes on its path.
  int walk(uint64_t key, std::vector<int>* path = nullptr) const {
    int at = root;
    for (uint32_t d = 0;; ++d) {
      if (path) path->push_back(at);
      const ToyNode& n = nodes[size_t(at)];
      if (n.kids.empty()) return at;
      at = n.kids[(key >> (2 * d)) % n.kids.size()];
    }
  }
};

ToyTree random_toy(uint64_t seed, int depth) {
  std::mt19937_64 rng(seed);
  ToyTree t;
  t.root = t.make(rng, depth);
  return t;
}

std::vector<uint64_t> random_keys(uint64_t seed, size_t n) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> keys(n);
  for (auto& k : keys) k = rng();
  return keys;
}

uint32_t body_id(std::span<const uint8_t> b) {
  REQUIRE(b.size() >= 6);
  return uint32_t(b[1]) | uint32_t(b[2]) << 8 | uint32_t(b[3]) << 16 | uint32_t(b[4]) << 24;
}

struct ToyCursor {
  uint64_t key = 0;
  uint32_t depth = 0;
  uint8_t expect = 0;
  bool done = false;
  uint32_t answer = ~0u;
  Locator loc = kNoLocator;  // streamed
};

// ---- streamed: the tree in record pages ----

struct MemDb {
  io::MemoryStore store{4096, 4096};
  io::MemoryManifestSlot slot;
  io::StoreParams params;
  io::CowSpace space{store, slot, params};
  MemDb() { REQUIRE(space.open().ok()); }
};

void push_toy(SubtreePacker& p, const ToyTree& t, int i) {
  for (int k : t.nodes[size_t(i)].kids) push_toy(p, t, k);
  const std::vector<uint8_t> b = t.body(i);
  REQUIRE(p.push(1, b, uint32_t(t.nodes[size_t(i)].kids.size())).ok());
}

Locator write_toy(MemDb& db, const ToyTree& t) {
  std::vector<Locator> roots;
  PageWriter w(db.store, db.space);
  SubtreePacker p(w);
  push_toy(p, t, t.root);
  REQUIRE(p.finish(&roots).ok());
  REQUIRE(w.finish().ok());
  REQUIRE(db.store.sync().ok());
  REQUIRE(roots.size() == 1);
  return roots[0];
}

template <size_t CheckBatchMin, bool SubmitBeforeChecks = true>
struct ToyStream {
  static constexpr size_t kCheckBatchMin = CheckBatchMin;
  static constexpr bool kSubmitBeforeChecks = SubmitBeforeChecks;
  static constexpr uint32_t kMaxNodes = 16;
  PageReader& reader;
  std::vector<ToyCursor>& cs;
  Locator root = kNoLocator;
  uint8_t root_hash = 0;
  bool cycle = false;  // a leaf leads back to the root (hostile data)
  struct Check {
    Locator loc;
    uint8_t want, got;
  };
  std::vector<Check> queued;
  std::set<Locator> walked, checked;
  size_t check_runs = 0;

  bool done(uint32_t i) const { return cs[i].done; }
  bool wake(uint32_t) { return true; }
  io::Status step(uint32_t i, WalkStep* out) {
    ToyCursor& c = cs[i];
    *out = WalkStep::done;
    if (c.done) return {};
    if (!reader.loaded(locator_page(c.loc)) && !reader.request(locator_page(c.loc), i)) {
      *out = WalkStep::waits;
      return {};
    }
    RecordView v;
    if (io::Status s = reader.record(c.loc, &v); !s.ok()) return s;
    walked.insert(c.loc);
    queued.push_back({c.loc, c.expect, v.body[0]});
    if (v.child_count == 0 && !cycle) {
      c.done = true;
      c.answer = body_id(v.body);
      return {};
    }
    if (v.child_count == 0) {
      c.loc = root;
      c.expect = root_hash;
    } else {
      const uint32_t k = uint32_t((c.key >> (2 * c.depth)) % v.child_count);
      c.expect = v.body[6 + k];
      c.loc = v.child(k);
      ++c.depth;
    }
    *out = WalkStep::moved;
    return {};
  }
  size_t checks_pending() const { return queued.size(); }
  io::Status run_checks() {
    ++check_runs;
    std::vector<Check> q;
    q.swap(queued);
    for (const Check& c : q) {
      if (c.want != c.got) return {io::Errc::corrupt_page, "toy record " + std::to_string(c.loc) + ": hash does not match"};
      checked.insert(c.loc);
    }
    return {};
  }
  void drop_checks() { queued.clear(); }
};

struct StreamRun {
  io::Status status;
  LookupStats stats;
  std::vector<ToyCursor> cs;
  std::set<Locator> walked, checked;
  std::set<uint64_t> walked_pages;
  size_t check_runs = 0, queued_after = 0;
  bool reader_idle = false;
};

template <size_t CheckBatchMin = 1, bool SubmitBeforeChecks = true>
StreamRun stream_toy(const ToyTree& t, const std::vector<uint64_t>& keys, uint64_t shuffle_seed, bool cycle = false) {
  MemDb db;
  const Locator root = write_toy(db, t);
  db.store.set_completion_shuffle(shuffle_seed);
  PageReader reader(db.store);
  StreamRun r;
  r.cs.resize(keys.size());
  const uint8_t root_hash = toy_hash(t.nodes[size_t(t.root)].id);
  for (size_t i = 0; i < keys.size(); ++i) {
    r.cs[i].key = keys[i];
    r.cs[i].loc = root;
    r.cs[i].expect = root_hash;
  }
  ToyStream<CheckBatchMin, SubmitBeforeChecks> w{reader, r.cs, root, root_hash, cycle, {}, {}, {}, 0};
  r.status = stream_lookup(reader, w, r.cs.size(), true, &r.stats);
  r.walked = w.walked;
  r.checked = w.checked;
  for (Locator l : w.walked) r.walked_pages.insert(locator_page(l));
  r.check_runs = w.check_runs;
  r.queued_after = w.queued.size();
  r.reader_idle = reader.idle();
  return r;
}

TEST_CASE("lookup walk, streamed: answers, one read per page, every walked record checked before the return") {
  const ToyTree t = random_toy(7, 7);
  const std::vector<uint64_t> keys = random_keys(8, 300);
  for (uint64_t shuffle : {1u, 2u, 3u}) {
    const StreamRun r = stream_toy(t, keys, shuffle);
    REQUIRE_MESSAGE(r.status.ok(), r.status.message());
    for (size_t i = 0; i < keys.size(); ++i) {
      CHECK(r.cs[i].done);
      CHECK(r.cs[i].answer == t.nodes[size_t(t.walk(keys[i]))].id);
    }
    CHECK(r.checked == r.walked);  // each record walked was checked (the last ones at the end)
    CHECK(r.stats.page_reads == r.walked_pages.size());  // one read per distinct page
    CHECK(r.stats.bytes_read == r.stats.page_reads * 4096);
    CHECK(r.stats.rounds >= 1);
    CHECK(r.stats.rounds <= r.stats.page_reads);
    CHECK(r.stats.reads_per_round.empty());
    CHECK(r.reader_idle);
  }
  // A lone key: the records of each page it walked are checked before it waits for the
  // next page (P pages: P - 1 runs), the last ones at the end; from a batch of 100000 (never
  // reached) only at the end.
  size_t multi_page = 0;
  for (size_t i = 0; i < 20; ++i) {
    const StreamRun one = stream_toy(t, {keys[i]}, 1);
    REQUIRE(one.status.ok());
    CHECK(one.check_runs == one.walked_pages.size());
    CHECK(one.checked == one.walked);
    multi_page += one.walked_pages.size() > 1;
    const StreamRun late = stream_toy<100000>(t, {keys[i]}, 1);
    REQUIRE(late.status.ok());
    CHECK(late.check_runs == 1);
    CHECK(late.checked == late.walked);
    const StreamRun unsent = stream_toy<1, false>(t, {keys[i]}, 1);  // checks before the reads go out
    REQUIRE(unsent.status.ok());
    CHECK(unsent.check_runs == one.check_runs);
    CHECK(unsent.checked == unsent.walked);
    CHECK(unsent.stats.page_reads == one.stats.page_reads);
  }
  CHECK(multi_page > 0);
}

TEST_CASE("lookup walk, streamed: a record that fails its check stops the walk naming it") {
  ToyTree t = random_toy(7, 7);
  const std::vector<uint64_t> keys = random_keys(8, 300);
  std::vector<int> path;
  t.walk(keys[123], &path);
  REQUIRE(path.size() >= 3);
  for (int liar : {path[1], path.back()}) {  // an inner node; the last node of a walk
    t.liar = t.nodes[size_t(liar)].id;
    for (uint64_t shuffle : {1u, 2u}) {
      const StreamRun r = stream_toy(t, keys, shuffle);
      REQUIRE_FALSE(r.status.ok());
      CHECK(r.status.code() == io::Errc::corrupt_page);
      CHECK(r.status.message().find("hash does not match") != std::string::npos);
      CHECK(r.reader_idle);  // no read left outstanding
      CHECK(r.queued_after == 0);
    }
  }
}

TEST_CASE("lookup walk, streamed: a cycle in the data ends in an error after kMaxNodes moves") {
  const ToyTree t = random_toy(9, 3);
  const StreamRun r = stream_toy(t, random_keys(3, 20), 1, true);
  REQUIRE_FALSE(r.status.ok());
  CHECK(r.status.message().find("passed more than 16 nodes") != std::string::npos);
  CHECK(r.reader_idle);
}

// ---- rounds: the tree in RocksDB, a node keyed by its path ----

std::string toy_key(const std::vector<uint8_t>& path) {
  std::string k(1 + path.size(), 'n');
  std::copy(path.begin(), path.end(), k.begin() + 1);
  return k;
}

void write_toy_rocks(io::RocksKvStore& kv, const ToyTree& t, int i, std::vector<uint8_t>& path,
                     std::vector<std::pair<std::string, std::string>>* out) {
  const std::vector<uint8_t> b = t.body(i);
  out->push_back({toy_key(path), std::string(b.begin(), b.end())});
  const auto& kids = t.nodes[size_t(i)].kids;
  for (size_t k = 0; k < kids.size(); ++k) {
    path.push_back(uint8_t(k));
    write_toy_rocks(kv, t, kids[k], path, out);
    path.pop_back();
  }
}

struct ToyRounds {
  static constexpr uint32_t kMaxNodes = 16;
  std::vector<ToyCursor>& cs;
  std::vector<std::vector<uint8_t>> paths;  // per cursor
  uint8_t root_hash = 0;
  bool cycle = false;
  std::vector<std::pair<uint32_t, uint8_t>> queued;  // key index, got
  std::vector<char> events;  // t: take, c: checks, s: step
  bool done(uint32_t i) const { return cs[i].done; }
  void path_key(uint32_t i, std::string* out) const { *out = toy_key(paths[i]); }
  std::array<uint8_t, 32> expect(uint32_t i) const { return {cs[i].expect}; }
  io::Status hash_conflict(const RocksRound& r, uint32_t j) const {
    return {io::Errc::corrupt_page, "toy node " + r.keys[j] + ": two hashes"};
  }
  io::Status take(const RocksRound& r, uint32_t j) {
    events.push_back('t');
    if (!r.found[j]) return {io::Errc::not_found, "toy node " + r.keys[j] + " is missing"};
    queued.push_back({j, r.value(j)[0]});
    return {};
  }
  io::Status run_checks(const RocksRound& r) {
    events.push_back('c');
    std::vector<std::pair<uint32_t, uint8_t>> q;
    q.swap(queued);
    for (auto [j, got] : q)
      if (got != r.expect[j][0]) return {io::Errc::corrupt_page, "toy node " + r.keys[j] + ": hash does not match"};
    return {};
  }
  void drop_checks() { queued.clear(); }
  io::Status step(uint32_t i, const RocksRound& r, uint32_t j) {
    events.push_back('s');
    ToyCursor& c = cs[i];
    const std::span<const uint8_t> b = r.value(j);
    const size_t kids = b[5];
    if (kids == 0 && !cycle) {
      c.done = true;
      c.answer = body_id(b);
      return {};
    }
    if (kids == 0) {
      paths[i].clear();  // back to the root
      c.expect = root_hash;
    } else {
      const uint32_t k = uint32_t((c.key >> (2 * c.depth)) % kids);
      c.expect = b[6 + k];
      paths[i].push_back(uint8_t(k));
      ++c.depth;
    }
    return {};
  }
};

struct RoundsRun {
  io::Status status;
  LookupStats stats;
  std::vector<ToyCursor> cs;
  std::vector<char> events;
  size_t queued_after = 0;
};

// Builds the toy tree into a fresh RocksDB (without the node `drop`, when given) and walks
// the keys; `tweak` may change the cursors first.
RoundsRun rounds_toy(const ToyTree& t, const std::vector<uint64_t>& keys, bool cycle = false, const std::string& drop = "",
                     void (*tweak)(std::vector<ToyCursor>&) = nullptr) {
  io::test::TempDir dir;
  io::RocksOptions o;
  o.dir = dir.file("rocks");
  o.sync_writes = false;
  std::unique_ptr<io::RocksKvStore> kv;
  REQUIRE(io::RocksKvStore::open(o, &kv).ok());
  std::vector<std::pair<std::string, std::string>> nodes;
  std::vector<uint8_t> path;
  write_toy_rocks(*kv, t, t.root, path, &nodes);
  std::vector<io::KvWrite> writes;
  for (const auto& [k, v] : nodes)
    if (k != drop) writes.push_back({k, v});
  REQUIRE(kv->write_batch(writes).ok());
  RoundsRun r;
  r.cs.resize(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    r.cs[i].key = keys[i];
    r.cs[i].expect = toy_hash(t.nodes[size_t(t.root)].id);
  }
  if (tweak) tweak(r.cs);
  ToyRounds w{r.cs, std::vector<std::vector<uint8_t>>(keys.size()), toy_hash(t.nodes[size_t(t.root)].id), cycle, {}, {}};
  r.status = rounds_lookup(*kv, w, r.cs.size(), &r.stats);
  r.events = w.events;
  r.queued_after = w.queued.size();
  return r;
}

TEST_CASE("lookup walk, rounds: answers; one MultiGet per depth of the distinct keys; checks before steps") {
  if (!io::rocksdb_available()) return;
  const ToyTree t = random_toy(7, 6);
  const std::vector<uint64_t> keys = random_keys(8, 200);
  const RoundsRun r = rounds_toy(t, keys);
  REQUIRE_MESSAGE(r.status.ok(), r.status.message());
  std::vector<std::set<int>> per_depth;  // distinct nodes at each depth of the keys' paths
  for (size_t i = 0; i < keys.size(); ++i) {
    std::vector<int> path;
    CHECK(r.cs[i].answer == t.nodes[size_t(t.walk(keys[i], &path))].id);
    for (size_t d = 0; d < path.size(); ++d) {
      if (per_depth.size() <= d) per_depth.resize(d + 1);
      per_depth[d].insert(path[d]);
    }
  }
  CHECK(r.stats.rounds == per_depth.size());
  REQUIRE(r.stats.reads_per_round.size() == per_depth.size());
  uint64_t reads = 0;
  for (size_t d = 0; d < per_depth.size(); ++d) {
    CHECK(r.stats.reads_per_round[d] == per_depth[d].size());
    reads += per_depth[d].size();
  }
  CHECK(r.stats.page_reads == reads);
  // Within each round: every take, then the checks, then the steps.
  std::string ev(r.events.begin(), r.events.end());
  size_t at = 0;
  for (size_t d = 0; d < per_depth.size(); ++d) {
    const size_t c = ev.find('c', at);
    REQUIRE(c != std::string::npos);
    CHECK(ev.substr(at, c - at) == std::string(per_depth[d].size(), 't'));
    at = ev.find('t', c);
    if (at == std::string::npos) at = ev.size();
    CHECK(ev.substr(c + 1, at - c - 1).find_first_not_of('s') == std::string::npos);
  }
}

TEST_CASE("lookup walk, rounds: a lying node, two hashes for one node, a missing node, a cycle") {
  if (!io::rocksdb_available()) return;
  ToyTree t = random_toy(7, 6);
  const std::vector<uint64_t> keys = random_keys(8, 200);
  SUBCASE("a lying node fails its round before any cursor steps through it") {
    std::vector<int> path;
    t.walk(keys[17], &path);
    t.liar = t.nodes[size_t(path[2])].id;
    const RoundsRun r = rounds_toy(t, keys);
    REQUIRE_FALSE(r.status.ok());
    CHECK(r.status.message().find(": hash does not match") != std::string::npos);
    CHECK(r.stats.rounds == 3);
    CHECK(r.events.back() == 'c');  // no step after the failed checks
    CHECK(r.queued_after == 0);
  }
  SUBCASE("two cursors naming one node by different hashes") {
    const RoundsRun r = rounds_toy(t, keys, false, "", [](std::vector<ToyCursor>& cs) { cs[5].expect ^= 1; });
    REQUIRE_FALSE(r.status.ok());
    CHECK(r.status.message() == "toy node n: two hashes");
    CHECK(r.stats.rounds == 0);  // found before anything is read
  }
  SUBCASE("a missing node") {
    std::vector<int> path;
    t.walk(keys[0], &path);
    std::string key = "n";
    key += char((keys[0] >> 0) % t.nodes[size_t(path[0])].kids.size());
    const RoundsRun r = rounds_toy(t, keys, false, key);
    REQUIRE_FALSE(r.status.ok());
    CHECK(r.status.code() == io::Errc::not_found);
    CHECK(r.status.message() == "toy node " + key + " is missing");
  }
  SUBCASE("a cycle") {
    const RoundsRun r = rounds_toy(t, keys, true);
    REQUIRE_FALSE(r.status.ok());
    CHECK(r.status.message().find("passed more than 16 nodes") != std::string::npos);
    CHECK(r.stats.rounds == 17);
  }
}

}  // namespace
