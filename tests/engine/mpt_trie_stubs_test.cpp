// mpt_trie_stubs_test: a trie that starts as one unread root (a stub) and reads only what
// its batches need. Its nodes come from a content-addressed store of a full trie's
// encodings (each read checked against the hash its parent holds); after every batch its
// root must equal the full trie's and the from-scratch root of the model, whatever the
// batch deletes (collapses onto unread siblings), on hashed 32-byte keys and on short
// plain keys (embedded nodes, branch values, keys ending at branches: one-by-one edits).
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "engine/mpt/trie.h"
#include "kernels/keccak256.h"
#include "tests/engine/mpt_test_util.h"

using namespace st;
using mpt_test::Bytes;

namespace {

// Stored nodes by locator (append-only, so a locator stays valid after the trie that wrote
// it moves on), each with its hashed children's locators: every hashed node a full trie
// ever committed, shared by hash, or (AppendStore) one record per node handed over.
struct NodeStore {
  struct Entry {
    Bytes rlp;
    std::vector<uint64_t> child_locators;  // hashed children, nibble order
  };
  std::vector<Entry> entries;
  std::map<mpt::Hash32, uint64_t> by_hash;

  // Adds node id of t (committed) and everything below it; returns its locator if hashed.
  // shared: a node already stored under its hash is not stored again (else one record per
  // node, as a store that only appends keeps them).
  std::optional<uint64_t> add(const mpt::Trie& t, mpt::NodeId id, bool shared = true) {
    const mpt::NodeView v = t.view(id);
    std::vector<uint64_t> kids;
    if (v.kind == mpt::NodeKind::extension) {
      if (auto l = add(t, v.child, shared)) kids.push_back(*l);
    } else if (v.kind == mpt::NodeKind::branch) {
      for (mpt::NodeId c : v.children)
        if (c != mpt::kNoNode)
          if (auto l = add(t, c, shared)) kids.push_back(*l);
    }
    Bytes rlp;
    t.encode(id, &rlp);
    if (rlp.size() < 32 && id != t.root_id()) return std::nullopt;  // embedded in its parent
    mpt::Hash32 h;
    kernels::keccak256(rlp.data(), rlp.size(), h.data());
    if (auto it = by_hash.find(h); shared && it != by_hash.end()) return it->second;
    entries.push_back({rlp, kids});
    if (shared) by_hash[h] = entries.size() - 1;
    return entries.size() - 1;
  }
};

// Resolves every stub the writes need, round by round, each read checked against its hash.
// Returns the number of nodes read.
size_t resolve_for(mpt::Trie& p, const NodeStore& store, std::span<const mpt::Trie::Write> ws) {
  size_t reads = 0;
  std::vector<mpt::Trie::StubWalk> walks, next;  // the resumed listing, beside the one from the root
  for (int round = 0;; ++round) {
    REQUIRE(round < 200);
    std::vector<mpt::NodeId> need, resumed;
    size_t siblings = 0, resumed_siblings = 0;
    p.stubs_to_resolve(ws, &need, &siblings, round == 0 ? &next : nullptr);
    if (round > 0) p.stubs_to_resolve_from(ws, walks, &resumed, &resumed_siblings, &next);
    if (round > 0) REQUIRE(resumed == need);  // resuming where the last round stopped lists the same
    if (round > 0) REQUIRE(resumed_siblings == siblings);
    walks.swap(next);
    next.clear();
    if (need.empty()) return reads;
    for (mpt::NodeId id : need) {
      const mpt::Trie::Stub s = p.stub(id);
      REQUIRE(s.locator < store.entries.size());
      const NodeStore::Entry& e = store.entries[s.locator];
      mpt::Hash32 h;
      kernels::keccak256(e.rlp.data(), e.rlp.size(), h.data());
      REQUIRE(h == s.hash);
      REQUIRE(p.resolve_stub(id, e.rlp, e.child_locators) == "");
      ++reads;
    }
  }
}

// A batch over the model m: deletes of present keys (often all below a prefix: collapses),
// updates, new keys and deletes of absent ones; strictly ascending, one write per key.
std::vector<std::pair<Bytes, Bytes>> random_batch(std::mt19937_64& rng, const std::map<Bytes, Bytes>& m, bool hashed,
                                                  size_t n) {
  std::map<Bytes, Bytes> b;
  std::vector<Bytes> keys;
  for (const auto& kv : m) keys.push_back(kv.first);
  auto value = [&] {
    Bytes v(1 + rng() % (hashed ? 33 : 4));
    for (auto& x : v) x = uint8_t(rng());
    return v;
  };
  auto new_key = [&] {
    Bytes k(hashed ? 32 : rng() % 5);
    for (auto& x : k) x = hashed ? uint8_t(rng()) : uint8_t(rng() % 3 * 0x11 + rng() % 2);
    return k;
  };
  for (size_t i = 0; i < n; ++i) {
    const unsigned r = unsigned(rng() % 10);
    if (r < 5 && !keys.empty()) {
      const size_t at = rng() % keys.size();
      const size_t run = 1 + rng() % 4;  // neighbours too: whole subtrees go
      for (size_t j = at; j < std::min(keys.size(), at + run); ++j) b[keys[j]] = {};
    } else if (r < 7 && !keys.empty()) {
      b[keys[rng() % keys.size()]] = value();
    } else if (r < 9) {
      b[new_key()] = value();
    } else {
      b[new_key()] = {};
    }
  }
  return {b.begin(), b.end()};
}

// The state before block 0: `initial` random 32-byte keys, or a plain set of short keys.
std::map<Bytes, Bytes> initial_set(std::mt19937_64& rng, uint64_t seed, bool hashed, size_t initial) {
  if (!hashed) return mpt_test::random_plain_set(rng, int(seed));
  std::map<Bytes, Bytes> m;
  for (size_t i = 0; i < initial; ++i) {
    Bytes k(32), v(1 + rng() % 33);
    for (auto& x : k) x = uint8_t(rng());
    for (auto& x : v) x = uint8_t(rng());
    m[k] = v;
  }
  return m;
}

void run_blocks(uint64_t seed, bool hashed, size_t initial, size_t blocks, size_t batch) {
  std::mt19937_64 rng(seed);
  std::map<Bytes, Bytes> m = initial_set(rng, seed, hashed, initial);
  mpt::Trie full;
  for (const auto& [k, v] : m) full.put(k, v);
  NodeStore store;
  const mpt::Hash32 root0 = full.root_hash();
  mpt::Trie part;
  if (!m.empty()) part.reset_to_stub(root0, *store.add(full, full.root_id()));
  size_t reads = 0;
  for (size_t b = 0; b < blocks; ++b) {
    CAPTURE(b);
    const auto batch_writes = random_batch(rng, m, hashed, batch);
    std::vector<mpt::Trie::Write> ws;
    for (const auto& [k, v] : batch_writes) ws.push_back({k, v});
    reads += resolve_for(part, store, ws);
    part.apply_sorted(ws);
    mpt_test::apply_writes(full, m, batch_writes, true);
    const mpt::Hash32 want = full.root_hash();
    REQUIRE(part.root_hash() == want);
    REQUIRE(want == mpt_test::scratch_root(m));
    if (full.root_id() != mpt::kNoNode) store.add(full, full.root_id());
  }
  if (initial >= 1000) CHECK(reads < store.entries.size() / 2);  // only the batches' paths were read
}

}  // namespace

TEST_CASE("mpt trie stubs: hashed keys, blocks of puts and deletes read only their paths, roots as the full trie's") {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    CAPTURE(seed);
    run_blocks(seed, true, 3000, 6, 40 + seed * 10);
  }
}

TEST_CASE("mpt trie stubs: a few hashed keys, batches deleting most of them (collapses onto unread siblings)") {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    CAPTURE(seed);
    run_blocks(seed, true, 2 + seed % 7, 5, 1 + seed % 5);
  }
}

TEST_CASE("mpt trie stubs: plain short keys (embedded nodes, branch values, one-by-one edits)") {
  for (uint64_t seed = 1; seed <= 150; ++seed) {
    CAPTURE(seed);
    run_blocks(seed, false, 0, 6, 1 + seed % 12);
  }
}

TEST_CASE("mpt trie stubs: a bad node or wrong locators are refused and leave the stub unread") {
  mpt::Trie full;
  for (int i = 0; i < 64; ++i) {
    Bytes k(32, uint8_t(i * 7)), v(20, uint8_t(i));
    k[31] = uint8_t(i);
    full.put(k, v);
  }
  NodeStore store;
  const mpt::Hash32 root = full.root_hash();
  const uint64_t loc = *store.add(full, full.root_id());
  mpt::Trie part;
  part.reset_to_stub(root, loc);
  const NodeStore::Entry& e = store.entries[loc];
  REQUIRE(part.is_stub(part.root_id()));
  CHECK(part.stub(part.root_id()).locator == loc);
  Bytes bad = e.rlp;
  bad.pop_back();
  CHECK(part.resolve_stub(part.root_id(), bad, e.child_locators) != "");
  std::vector<uint64_t> fewer = e.child_locators;
  fewer.pop_back();
  CHECK(part.resolve_stub(part.root_id(), e.rlp, fewer) != "");
  CHECK(part.is_stub(part.root_id()));
  CHECK(part.root_hash() == root);  // a trie of one unread root commits to it
  REQUIRE(part.resolve_stub(part.root_id(), e.rlp, e.child_locators) == "");
  CHECK(!part.is_stub(part.root_id()));
  CHECK(part.root_hash() == root);
}

namespace {

// A store that only ever appends records (one per node handed over, no sharing), with the
// dead ones set aside: the sink side of a trie that reads and writes through it.
struct AppendStore final : mpt::Trie::CommitSink {
  NodeStore records;  // one per node handed over, never shared
  std::set<uint64_t> dead_set;
  std::vector<uint64_t> pending;  // subtrees handed over, not yet taken by a parent
  std::map<uint64_t, Bytes> path_of;  // the place each record was handed over at
  std::vector<std::pair<Bytes, Bytes>> leaves;  // the new leaves reported: key nibbles, value

  void kept(uint64_t locator, std::span<const uint8_t> path) override {
    REQUIRE(locator < records.entries.size());
    REQUIRE(!dead_set.count(locator));
    if (auto it = path_of.find(locator); it != path_of.end())  // a kept node never moves
      REQUIRE(it->second == Bytes(path.begin(), path.end()));
    pending.push_back(locator);
  }
  uint32_t leaf(std::span<const uint8_t> key_nibbles, std::span<const uint8_t> value) override {
    leaves.push_back({Bytes(key_nibbles.begin(), key_nibbles.end()), Bytes(value.begin(), value.end())});
    return 0;
  }
  uint64_t node(mpt::NodeKind, std::span<const uint8_t> rlp, uint32_t children, std::span<const uint8_t> path,
                const mpt::Hash32& hash) override {
    REQUIRE(children <= pending.size());
    mpt::Hash32 h;
    kernels::keccak256(rlp.data(), rlp.size(), h.data());
    REQUIRE(h == hash);
    std::vector<uint64_t> kids(pending.end() - children, pending.end());
    pending.resize(pending.size() - children);
    records.entries.push_back({Bytes(rlp.begin(), rlp.end()), kids});
    pending.push_back(records.entries.size() - 1);
    path_of[records.entries.size() - 1] = Bytes(path.begin(), path.end());
    return records.entries.size() - 1;
  }
  void dead(uint64_t locator) override {
    REQUIRE(locator < records.entries.size());
    REQUIRE(dead_set.insert(locator).second);  // never twice
  }
  void reachable(uint64_t l, std::set<uint64_t>* out) const {
    if (!out->insert(l).second) return;
    for (uint64_t c : records.entries[l].child_locators) reachable(c, out);
  }
};

// What pending_encodings listed is what hand_to handed over as new records (entries from
// `first` on): each encoding hashes to its digest, one per new record, and each level is
// one more than its highest new child's (1 without one), a child listed before its parent.
void check_pending_encodings(const std::vector<mpt::Trie::PendingEncoding>& encs, const NodeStore& records,
                             size_t first) {
  REQUIRE(encs.size() == records.entries.size() - first);
  std::map<mpt::Hash32, uint32_t> level_of;
  std::map<mpt::Hash32, size_t> listed_at;  // (first listing)
  auto hash_of = [](const Bytes& b) {
    mpt::Hash32 h;
    kernels::keccak256(b.data(), b.size(), h.data());
    return h;
  };
  for (const auto& e : encs) {
    mpt::Hash32 h;
    kernels::keccak256(e.bytes, e.len, h.data());
    REQUIRE(h == e.hash);
    listed_at.emplace(e.hash, listed_at.size());
    const auto [it, added] = level_of.emplace(e.hash, e.level);
    REQUIRE(it->second == e.level);  // (an equal node elsewhere: the same level)
  }
  for (size_t r = first; r < records.entries.size(); ++r) {
    const auto it = level_of.find(hash_of(records.entries[r].rlp));
    REQUIRE(it != level_of.end());
    uint32_t below = 0;
    for (uint64_t c : records.entries[r].child_locators) {
      if (c < first) continue;  // (kept)
      const mpt::Hash32 ch = hash_of(records.entries[c].rlp);
      below = std::max(below, level_of.at(ch));
      REQUIRE(listed_at.at(ch) < listed_at.at(it->first));
    }
    REQUIRE(it->second == below + 1);
  }
}

// The trie reads its nodes from the store and hands its new ones back, block after block:
// the roots stay the full trie's, a fresh trie over the store at the new root holds the
// model, and the live records are exactly the ones not reported dead.
void run_round_trip(uint64_t seed, bool hashed, size_t initial, size_t blocks, size_t batch) {
  std::mt19937_64 rng(seed);
  std::map<Bytes, Bytes> m = initial_set(rng, seed, hashed, initial);
  mpt::Trie full;
  for (const auto& [k, v] : m) full.put(k, v);
  AppendStore store;
  mpt::Trie part;
  const mpt::Hash32 root0 = full.root_hash();  // (committed before its nodes are stored)
  if (!m.empty()) part.reset_to_stub(root0, *store.records.add(full, full.root_id(), false));
  else part.reset_to_stub(mpt::kEmptyRoot, mpt::Trie::kNoLocator);
  for (size_t b = 0; b < blocks; ++b) {
    CAPTURE(b);
    const auto batch_writes = random_batch(rng, m, hashed, batch);
    std::vector<mpt::Trie::Write> ws;
    for (const auto& [k, v] : batch_writes) ws.push_back({k, v});
    resolve_for(part, store.records, ws);
    part.apply_sorted(ws);
    mpt_test::apply_writes(full, m, batch_writes, true);
    store.leaves.clear();
    const size_t records_before = store.records.entries.size();
    mpt::Hash32 root;
    if (b % 2 == 0) {
      root = part.root_hash_to(store);
    } else {  // the two halves, with what hash_pending hashed listed in between
      mpt::Trie* self = &part;
      mpt::Trie::hash_pending({&self, 1});
      root = part.pending_root();
      std::vector<mpt::Trie::PendingEncoding> encs;
      part.pending_encodings(&encs);
      part.hand_to(store);
      check_pending_encodings(encs, store.records, records_before);
    }
    REQUIRE(root == full.root_hash());
    for (const auto& [nibs, value] : store.leaves) {  // each new leaf: a key the batch holds, its value
      REQUIRE(nibs.size() % 2 == 0);
      Bytes key(nibs.size() / 2);
      for (size_t i = 0; i < key.size(); ++i) key[i] = uint8_t(nibs[2 * i] << 4 | nibs[2 * i + 1]);
      REQUIRE(m.count(key) == 1);
      REQUIRE(m.at(key) == value);
    }
    REQUIRE(root == mpt_test::scratch_root(m));
    if (m.empty()) {
      REQUIRE(part.root_locator() == mpt::Trie::kNoLocator);
      continue;
    }
    if (!store.pending.empty()) {  // the root (kept or new) is the one subtree left
      REQUIRE(store.pending.size() == 1);
      REQUIRE(store.pending[0] == part.root_locator());
      store.pending.clear();
    }
    std::set<uint64_t> live;
    store.reachable(part.root_locator(), &live);
    for (uint64_t l = 0; l < store.records.entries.size(); ++l) REQUIRE(live.count(l) != store.dead_set.count(l));
    mpt::Trie fresh;  // everything read back from the store alone
    fresh.reset_to_stub(root, part.root_locator());
    std::vector<mpt::Trie::Write> all;
    for (const auto& [k, v] : m) all.push_back({k, v});
    resolve_for(fresh, store.records, all);
    for (const auto& [k, v] : m) REQUIRE(fresh.get(k) == v);
  }
}

}  // namespace

TEST_CASE("mpt trie stubs: a trie over a store, its new nodes handed back, block after block") {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    CAPTURE(seed);
    run_round_trip(seed, true, 2000, 5, 30 + seed * 10);
  }
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    CAPTURE(seed);
    run_round_trip(seed, true, 2 + seed % 7, 5, 1 + seed % 5);
  }
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    CAPTURE(seed);
    run_round_trip(seed, false, 0, 6, 1 + seed % 12);
  }
}
