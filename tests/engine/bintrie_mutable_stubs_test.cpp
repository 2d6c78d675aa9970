// bintrie_mutable_stubs_test: a mutable binary trie that starts as one unread root (a stub)
// and reads only the group and stem blobs its batches reach. The blobs come from a
// content-addressed store of a full in-memory tree's blobs at group depth g (every blob the
// full tree ever committed, by hash, each group with its entries' locators); every resolve
// checks the blob against the stub's hash. Block after block (group depths 1..8, dense and
// sparse stems, new stems splitting read and unread stems, several applies before one
// commit) the root must equal the full tree's and the from-scratch root of the model; after
// resolving what stubs_to_resolve lists no write's path ends at a stub, and the first
// block reads exactly the blobs on its paths; the blocks are checked to have split read and
// unread stems and written to unread dense stems. Tampered blobs are refused and change
// nothing. A tree cleared and restarted from the root's stub each block (as the block
// commit on disk uses one), resolved from views the caller checked, matches a fresh one.
#include <doctest/doctest.h>

#include <cstring>
#include <map>
#include <random>
#include <set>

#include "engine/bintrie/batch_root.h"
#include "engine/bintrie/group_blob.h"
#include "engine/bintrie/mutable_tree.h"
#include "engine/bintrie/stem_bits.h"
#include "tests/engine/bintrie_test_util.h"

using namespace st::bintrie;
using bintrie_test::random_entry;

namespace {

using Bytes = std::vector<uint8_t>;

// Every blob a full tree committed, by hash (append-only: a locator stays valid), each with
// its path key (blob_key) and, for a group, its entries' locators in bitmap order.
struct BlobStore {
  struct Record {
    Bytes bytes, key;
    bool group = false;
    std::vector<uint64_t> entry_locators;
  };
  Hasher h;
  unsigned g;
  std::vector<Record> records;
  std::map<Hash32, uint64_t> by_hash;

  Hash32 blob_hash(const Bytes& b) const {
    if (b[0] == kGroupBlobVersion) return reconstruct_group(h, std::get<GroupBlob>(decode_group_blob(b, g)))[0];
    return stem_blob_hash(h, std::get<StemBlob>(decode_stem_blob(b)));
  }
  // Adds the blobs of the committed tree t not stored yet; returns the root's locator.
  uint64_t add_tree(const MutableTree& t) {
    std::vector<uint64_t> added;
    encode_tree_blobs(t, g, [&](std::span<const uint8_t> key, std::span<const uint8_t> blob) {
      Record r{Bytes(blob.begin(), blob.end()), Bytes(key.begin(), key.end()), blob[0] == kGroupBlobVersion, {}};
      const Hash32 hh = blob_hash(r.bytes);
      if (by_hash.count(hh)) return;
      by_hash[hh] = records.size();
      added.push_back(records.size());
      records.push_back(std::move(r));
    });
    for (uint64_t l : added) {  // the entries' blobs are all stored by now
      if (!records[l].group) continue;
      const GroupBlob blob = std::get<GroupBlob>(decode_group_blob(records[l].bytes, g));
      for (const GroupEntry& e : blob.entries) records[l].entry_locators.push_back(by_hash.at(e.hash));
    }
    return by_hash.at(t.root());
  }
};

// Resolves, round by round, every stub the writes reach; returns the blobs read. Each
// stub's path names the blob the store holds under its hash.
size_t resolve_for(MutableTree& t, const BlobStore& store, std::span<const Entry> ws) {
  size_t reads = 0;
  for (int round = 0;; ++round) {
    REQUIRE(round < 300);
    std::vector<MutableTree::StubId> need;
    t.stubs_to_resolve(ws, &need);
    if (need.empty()) return reads;
    for (MutableTree::StubId id : need) {
      const MutableTree::Stub s = t.stub(id);
      REQUIRE(s.locator < store.records.size());
      const BlobStore::Record& r = store.records[s.locator];
      uint8_t path[32];
      const unsigned depth = t.stub_path(id, path);
      REQUIRE(blob_key(path, depth) == r.key);
      const std::string err = r.group ? t.resolve_group_stub(id, store.g, r.bytes, r.entry_locators)
                                      : t.resolve_stem_stub(id, r.bytes);
      REQUIRE(err == "");
      ++reads;
    }
  }
}

// The slot a stem's path ends at in t (empty, a stem or a stub).
NodeRef path_end(const MutableTree& t, const uint8_t* stem31) {
  NodeRef r = t.root_ref();
  for (unsigned d = 0; ref_is_internal(r); ++d) r = t.internal(ref_index(r)).child[stem_bit(stem31, d)];
  return r;
}

// The blobs at group depth g on the writes' paths in the committed tree t: the group roots
// (internal nodes at depths = 0 mod g) and the stems the paths end at.
size_t blobs_on_paths(const MutableTree& t, unsigned g, std::span<const Entry> ws) {
  std::set<NodeRef> seen;
  for (const Entry& e : ws) {
    NodeRef r = t.root_ref();
    for (unsigned d = 0; ref_is_internal(r); ++d) {
      if (d % g == 0) seen.insert(r);
      r = t.internal(ref_index(r)).child[stem_bit(e.key.data(), d)];
    }
    if (ref_is_stem(r)) seen.insert(r);
  }
  return seen.size();
}

// The state before block 0: sparse stems (1-3 values), stems near the dense threshold
// (20-31 values) and dense stems (32-200 values).
std::vector<Entry> initial_state(std::mt19937_64& rng, size_t sparse, size_t near_dense, size_t dense) {
  std::vector<Entry> out;
  auto stem_with = [&](size_t values) {
    Entry e = random_entry(rng);
    for (size_t i = 0; i < values; ++i) {
      e.key[31] = uint8_t(rng());
      for (auto& x : e.value) x = uint8_t(rng());
      out.push_back(e);
    }
  };
  for (size_t i = 0; i < sparse; ++i) stem_with(1 + rng() % 3);
  for (size_t i = 0; i < near_dense; ++i) stem_with(20 + rng() % 12);
  for (size_t i = 0; i < dense; ++i) stem_with(32 + rng() % 169);
  return out;
}

// A batch: overwrites, new values in existing stems, new stems splitting an existing stem
// (one of the last block's, which the tree has read, or any), fresh stems, zero values and a
// key written twice.
std::vector<Entry> random_batch(std::mt19937_64& rng, const std::vector<Entry>& history, const std::vector<Entry>& last,
                                size_t n) {
  std::vector<Entry> out;
  for (size_t i = 0; i < n; ++i) {
    Entry e = random_entry(rng);
    const unsigned mode = unsigned(rng() % 8);
    const std::vector<Entry>& from = (mode % 2 && !last.empty()) ? last : history;
    if (mode < 2) e.key = from[rng() % from.size()].key;
    if (mode == 2 || mode == 3) { e.key = from[rng() % from.size()].key; e.key[31] = uint8_t(rng()); }
    if (mode == 4 || mode == 5) {
      e.key = from[rng() % from.size()].key;
      const unsigned flip = unsigned(rng() % kStemBits);
      e.key[flip / 8] ^= uint8_t(0x80 >> (flip % 8));
    }
    if (rng() % 16 == 0) e.value = Hash32{};
    out.push_back(e);
  }
  if (!out.empty()) {
    Entry again = out[rng() % out.size()];
    for (auto& x : again.value) x = uint8_t(rng());
    out.push_back(again);
  }
  return out;
}

Hash32 model_root(const Hasher& h, const std::map<Hash32, Hash32>& model) {
  std::vector<Entry> all;
  for (const auto& [k, v] : model) all.push_back({k, v});
  return batch_root(h, all);
}

struct RunShape {
  size_t sparse, near_dense, dense, blocks, batch;
};

// What the blocks did (writes of the first apply of each block): a new stem splitting a stem
// the tree had read before the block or one still unread; writes to dense stems unread.
struct Coverage {
  size_t split_read = 0, split_unread = 0, dense_unread = 0;
  void count(const MutableTree& t, std::span<const Entry> ws, const std::vector<bool>& was_unread) {
    for (size_t i = 0; i < ws.size(); ++i) {
      const NodeRef r = path_end(t, ws[i].key.data());
      if (!ref_is_stem(r)) continue;
      const uint32_t si = ref_index(r);
      if (std::memcmp(t.stem(si).stem.data(), ws[i].key.data(), 31) != 0) ++(was_unread[i] ? split_unread : split_read);
      else if (was_unread[i] && t.slots(si).size() >= kDenseStemValues) ++dense_unread;
    }
  }
};

void run_blocks(uint64_t seed, unsigned g, const RunShape& shape, Coverage* cov = nullptr) {
  std::mt19937_64 rng(seed * 1000 + g);
  const Hasher h = make_hasher(st::HashKind::sha256);
  std::vector<Entry> history = initial_state(rng, shape.sparse, shape.near_dense, shape.dense);
  std::map<Hash32, Hash32> model;
  MutableTree full(h), part(h);
  full.apply(history);
  full.commit();
  for (const Entry& e : history) model[e.key] = e.value;
  BlobStore store{h, g, {}, {}};
  if (history.empty()) part.reset_to_stub(Hash32{}, 0);
  else part.reset_to_stub(full.root(), store.add_tree(full));
  std::vector<Entry> last;
  for (size_t b = 0; b < shape.blocks; ++b) {
    CAPTURE(b);
    const std::vector<Entry> batch = random_batch(rng, history.empty() ? std::vector<Entry>{random_entry(rng)} : history, last, shape.batch);
    // Two applies before one commit, each read for just before it.
    const size_t half = batch.size() / 2;
    const std::span<const Entry> first(batch.data(), half), second(batch.data() + half, batch.size() - half);
    const size_t on_paths = blobs_on_paths(full, g, first);
    std::vector<bool> was_unread;
    for (const Entry& e : first) was_unread.push_back(ref_is_stub(path_end(part, e.key.data())));
    const size_t reads = resolve_for(part, store, first);
    if (cov) cov->count(part, first, was_unread);
    if (b == 0) CHECK(reads == on_paths);  // exactly the blobs on the paths
    else CHECK(reads <= on_paths);
    for (const Entry& e : first) {
      REQUIRE(!ref_is_stub(path_end(part, e.key.data())));
      CHECK(part.get(e.key) == full.get(e.key));
    }
    part.apply(first);
    resolve_for(part, store, second);
    for (const Entry& e : second) REQUIRE(!ref_is_stub(path_end(part, e.key.data())));
    part.apply(second);
    full.apply(batch);
    for (const Entry& e : batch) model[e.key] = e.value;
    const Hash32 want = full.commit();
    REQUIRE(part.commit() == want);
    REQUIRE(want == model_root(h, model));
    store.add_tree(full);
    history.insert(history.end(), batch.begin(), batch.end());
    last = batch;
  }
  CHECK(part.stem_count() <= full.stem_count());
}

}  // namespace

TEST_CASE("bintrie stubs: blocks over a stub-started tree, group depths 1..8, roots as the full tree's") {
  for (unsigned g = 1; g <= 8; ++g) {
    Coverage cov;
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      CAPTURE(g);
      CAPTURE(seed);
      run_blocks(seed, g, {600 + 200 * seed, 20, 12, 8, 20 + 15 * seed}, &cov);
    }
    CAPTURE(g);
    CHECK(cov.split_read > 0);
    CHECK(cov.split_unread > 0);
    CHECK(cov.dense_unread > 0);
  }
}

TEST_CASE("bintrie stubs: tiny trees (empty, one stem at the root, a few stems), many blocks") {
  for (unsigned g = 1; g <= 8; ++g) {
    for (uint64_t seed = 1; seed <= 12; ++seed) {
      CAPTURE(g);
      CAPTURE(seed);
      run_blocks(seed, g, {seed % 4, seed % 3 == 0 ? 1u : 0u, seed % 5 == 0 ? 1u : 0u, 10, 1 + seed % 4});
    }
  }
}

TEST_CASE("bintrie stubs: a batch of a few keys reads a few blobs of a large tree") {
  const Hasher h = make_hasher(st::HashKind::sha256);
  std::mt19937_64 rng(7);
  const std::vector<Entry> state = initial_state(rng, 20000, 0, 0);
  MutableTree full(h);
  full.apply(state);
  full.commit();
  for (unsigned g : {1u, 4u, 8u}) {
    CAPTURE(g);
    BlobStore store{h, g, {}, {}};
    MutableTree part(h);
    part.reset_to_stub(full.root(), store.add_tree(full));
    const std::vector<Entry> batch{state[5], random_entry(rng), state[700]};
    const size_t reads = resolve_for(part, store, batch);
    CHECK(reads == blobs_on_paths(full, g, batch));
    CHECK(reads <= 3 * (40 / g + 2));  // (paths of ~15-25 levels at 20,000 stems)
    CHECK(reads * 20 < store.records.size());
    part.apply(batch);
    full.apply(batch);
    CHECK(part.commit() == full.commit());
  }
}

namespace {

// A stub-started tree over a 300-stem state with dense stems, and its store.
struct Tampering {
  Hasher h = make_hasher(st::HashKind::sha256);
  MutableTree full{h}, part{h};
  BlobStore store{h, 4, {}, {}};
  explicit Tampering(uint64_t seed) {
    std::mt19937_64 rng(seed);
    full.apply(initial_state(rng, 300, 0, 4));
    full.commit();
    part.reset_to_stub(full.root(), store.add_tree(full));
  }
  // The tree's shape, unchanged by a refused resolve.
  std::vector<size_t> shape() const { return {part.internal_count(), part.stem_count(), part.stub_count(), part.value_count()}; }
};

}  // namespace

TEST_CASE("bintrie stubs: a tampered group blob, wrong locators or a wrong group depth are refused") {
  Tampering t(11);
  const MutableTree::StubId root = ref_index(t.part.root_ref());
  REQUIRE(ref_is_stub(t.part.root_ref()));
  CHECK(t.part.stub(root).hash == t.full.root());
  const BlobStore::Record& r = t.store.records[t.part.stub(root).locator];
  REQUIRE(r.group);
  const auto before = t.shape();
  Bytes bad = r.bytes;
  bad.back() ^= 1;  // the last entry's hash
  CHECK(t.part.resolve_group_stub(root, 4, bad, r.entry_locators).find("hashes to") != std::string::npos);
  bad = r.bytes;
  bad.pop_back();
  CHECK(t.part.resolve_group_stub(root, 4, bad, r.entry_locators) != "");
  std::vector<uint64_t> fewer = r.entry_locators;
  fewer.pop_back();
  CHECK(t.part.resolve_group_stub(root, 4, r.bytes, fewer) != "");
  CHECK(t.part.resolve_group_stub(root, 5, r.bytes, r.entry_locators) != "");
  CHECK(t.part.resolve_stem_stub(root, r.bytes) != "");
  CHECK(t.shape() == before);
  CHECK(ref_is_stub(t.part.root_ref()));
  CHECK(t.part.commit() == t.full.root());  // a tree of one unread root commits to it
  REQUIRE(t.part.resolve_group_stub(root, 4, r.bytes, r.entry_locators) == "");
  CHECK(ref_is_internal(t.part.root_ref()));
  CHECK(t.part.commit() == t.full.root());
}

namespace {

// Resolves the groups on stem si's path (a write to it), up to the stub of the stem itself.
MutableTree::StubId read_to_stem(Tampering& t, uint32_t si) {
  Entry e;
  std::copy(t.full.stem(si).stem.begin(), t.full.stem(si).stem.end(), e.key.begin());
  const std::vector<Entry> ws{e};
  for (int round = 0; round < 100; ++round) {
    std::vector<MutableTree::StubId> need;
    t.part.stubs_to_resolve(ws, &need);
    REQUIRE(need.size() == 1);
    const BlobStore::Record& r = t.store.records[t.part.stub(need[0]).locator];
    if (!r.group) return need[0];
    REQUIRE(t.part.resolve_group_stub(need[0], t.store.g, r.bytes, r.entry_locators) == "");
  }
  FAIL("no stem stub on the path");
  return 0;
}

// Depth of stem si in the full tree.
unsigned stem_depth(const MutableTree& t, uint32_t si) {
  unsigned d = 0;
  for (NodeRef r = t.root_ref(); ref_is_internal(r); ++d) r = t.internal(ref_index(r)).child[stem_bit(t.stem(si).stem.data(), d)];
  return d;
}

}  // namespace

TEST_CASE("bintrie stubs: a tampered stem blob is refused and changes nothing") {
  Tampering t(12);
  uint32_t dense = UINT32_MAX;
  for (uint32_t si = 0; si < t.full.stem_count() && dense == UINT32_MAX; ++si)
    if (t.full.slots(si).size() >= kDenseStemValues) dense = si;
  REQUIRE(dense != UINT32_MAX);
  const MutableTree::StubId id = read_to_stem(t, dense);
  const BlobStore::Record& r = t.store.records[t.part.stub(id).locator];
  const auto before = t.shape();
  Bytes bad = r.bytes;
  bad[64] ^= 0x40;  // the first value
  CHECK(t.part.resolve_stem_stub(id, bad).find("hashes to") != std::string::npos);
  bad = r.bytes;
  bad[1] ^= 0x01;  // the stem
  CHECK(t.part.resolve_stem_stub(id, bad) != "");
  bad = r.bytes;
  bad.resize(bad.size() - 32);  // a value short of the bitmap
  CHECK(t.part.resolve_stem_stub(id, bad) != "");
  const BlobStore::Record& g0 = t.store.records[0];  // the root group
  REQUIRE(g0.group);
  CHECK(t.part.resolve_group_stub(id, 4, g0.bytes, g0.entry_locators) != "");
  CHECK(t.shape() == before);
  REQUIRE(t.part.resolve_stem_stub(id, r.bytes) == "");
  Entry w;
  std::copy(t.full.stem(dense).stem.begin(), t.full.stem(dense).stem.end(), w.key.begin());
  for (const StemSlot& sl : t.full.slots(dense)) {
    w.key[31] = sl.sub;
    CHECK(t.part.get(w.key) == sl.value);
  }
  w.value[0] = 1;
  t.part.apply({&w, 1});
  t.full.apply({&w, 1});
  CHECK(t.part.commit() == t.full.commit());
}

TEST_CASE("bintrie stubs: a group blob that hashes as a stem is refused where the stem ended its group early") {
  // A stem's hash H(stem || 0x00 || R) is also the hash of an internal node with children
  // stem || 0x00 and R: a crafted group with those two entries passes the hash check. A stub
  // that was an entry ending above its group's bottom is known to be a stem and refuses it.
  Tampering t(13);
  uint32_t si = 0;
  while (si < t.full.stem_count() && stem_depth(t.full, si) % t.store.g == 0) ++si;
  REQUIRE(si < t.full.stem_count());
  const MutableTree::StubId id = read_to_stem(t, si);
  Hash32 leaves[256];
  t.full.stem_leaf_hashes(si, leaves);
  DenseStemTree dt;
  dense_stem_tree(t.h, leaves, &dt);
  GroupBlob crafted;
  crafted.g = 4;
  crafted.entries.push_back({0, 1, {}});
  std::copy(t.full.stem(si).stem.begin(), t.full.stem(si).stem.end(), crafted.entries[0].hash.begin());
  crafted.entries.push_back({8, 1, dt.root()});
  REQUIRE(reconstruct_group(t.h, crafted)[0] == t.part.stub(id).hash);
  Bytes bytes;
  encode_group_blob(crafted, &bytes);
  const auto before = t.shape();
  CHECK(t.part.resolve_group_stub(id, 4, bytes, std::vector<uint64_t>{0, 0}).find("is a stem") != std::string::npos);
  CHECK(t.shape() == before);
}

// Resolves every stub the writes reach from views checked here (the store is content
// addressed: a stem a split moved keeps its first key, so no path check); each resolve must
// report the ref that took the stub's place. Returns the blobs read.
size_t resolve_from_views(MutableTree& t, const BlobStore& store, std::span<const Entry> ws) {
  size_t reads = 0;
  for (std::vector<MutableTree::StubId> need;; ++reads) {
    REQUIRE(reads < 100000);
    need.clear();
    t.stubs_to_resolve(ws, &need);
    if (need.empty()) return reads;
    const MutableTree::StubId id = need[0];
    const BlobStore::Record& r = store.records[t.stub(id).locator];
    NodeRef placed = kEmptyRef;
    bool mismatch = true;
    std::string err;
    if (r.group) {
      GroupBlobView v;
      REQUIRE(check_group_blob(r.bytes, store.g, &v) == "");
      err = t.resolve_group_stub(id, v, r.entry_locators, &placed, &mismatch);
      CHECK(ref_is_internal(placed));
    } else {
      StemBlobView v;
      REQUIRE(check_stem_blob(r.bytes, &v) == "");
      err = t.resolve_stem_stub(id, v, &placed, &mismatch);
      CHECK(ref_is_stem(placed));
    }
    REQUIRE(err == "");
    CHECK(!mismatch);
  }
}

// A block commit's use: one tree (no huge pages) cleared and restarted from the committed
// root's stub every block, resolved from checked views, gives the full tree's roots and
// reads what a fresh tree reads.
TEST_CASE("bintrie stubs: a tree cleared and restarted from a stub each block; resolves from checked views") {
  for (unsigned g : {2u, 5u}) {
    CAPTURE(g);
    std::mt19937_64 rng(91 + g);
    const Hasher h = make_hasher(st::HashKind::sha256);
    std::vector<Entry> history = initial_state(rng, 500, 10, 5);
    MutableTree full(h), reused(h, false);
    full.apply(history);
    full.commit();
    BlobStore store{h, g, {}, {}};
    uint64_t root_loc = store.add_tree(full);
    std::vector<Entry> last;
    for (int b = 0; b < 12; ++b) {
      CAPTURE(b);
      const std::vector<Entry> batch = random_batch(rng, history, last, 25);
      MutableTree fresh(h);
      fresh.reset_to_stub(full.root(), root_loc);
      const size_t fresh_reads = resolve_from_views(fresh, store, batch);
      reused.clear();
      CHECK(reused.stem_count() == 0);
      CHECK(reused.internal_count() == 0);
      reused.reset_to_stub(full.root(), root_loc);
      CHECK(resolve_from_views(reused, store, batch) == fresh_reads);
      CHECK(fresh_reads > 0);
      reused.apply(batch);
      fresh.apply(batch);
      full.apply(batch);
      const Hash32 want = full.commit();
      CHECK(reused.commit() == want);
      CHECK(fresh.commit() == want);
      root_loc = store.add_tree(full);
      history.insert(history.end(), batch.begin(), batch.end());
      last = batch;
    }
  }
}
