// persist_mpt_db_test: the persistent MPT end to end, both stores: build -> reopen ->
// every key looked up equals the source (absent keys absent) -> verify -> eth_getProof from
// disk verifies and equals the in-memory state's proof; root == mpt::allocation_root and the
// genesis roots; rebuild of an arena directory replaces the state (the old one readable
// until the commit); hand-made embedded nodes through the trie writer.
#include <doctest/doctest.h>

#include <cstring>
#include <set>

#include "engine/mpt/builder.h"
#include "engine/persist/mpt/node.h"
#include "tests/engine/persist_mpt_test_util.h"
#include "tests/reference/mpt_reference.h"
#include "workloads/genesis.h"
#include "test_paths.h"

using namespace pmpt_test;

namespace {

// Every key of the allocation (accounts, their non-zero slots) plus absent ones.
struct KeySet {
  std::vector<state::StateKey> keys;
};

KeySet keys_of(const state::Allocation& a, uint64_t seed) {
  std::mt19937_64 rng(seed);
  KeySet ks;
  for (const auto& [addr, acc] : a.accounts) {
    ks.keys.push_back({addr, std::nullopt});
    for (const auto& [slot, v] : acc.storage) ks.keys.push_back({addr, slot});
    state::Hash32 absent{};
    for (auto& b : absent) b = uint8_t(rng());
    ks.keys.push_back({addr, absent});  // an absent slot of every account (EOAs included)
  }
  for (int i = 0; i < 20; ++i) {
    state::Address addr;
    for (auto& b : addr) b = uint8_t(rng());
    state::Hash32 slot{};
    slot[31] = uint8_t(i);
    ks.keys.push_back({addr, std::nullopt});
    ks.keys.push_back({addr, slot});
  }
  return ks;
}

void check_answers(const state::Allocation& a, std::span<const state::StateKey> keys,
                   const std::vector<persist::LookupAnswer>& ans, mpt::MptState& mem) {
  std::map<state::Address, const state::Account*> by_addr;
  for (const auto& [addr, acc] : a.accounts) by_addr[addr] = &acc;
  REQUIRE(ans.size() == keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    const auto& k = keys[i];
    auto it = by_addr.find(k.address);
    if (it == by_addr.end()) {
      CHECK_FALSE(ans[i].account.exists);
      CHECK_FALSE(ans[i].slot_value.has_value());
      continue;
    }
    const state::Account& acc = *it->second;
    REQUIRE(ans[i].account.exists);
    CHECK(ans[i].account.nonce == acc.nonce);
    CHECK(ans[i].account.balance == acc.balance);
    const auto f = mem.account(k.address);
    REQUIRE(f);
    CHECK(ans[i].account.storage_root == f->storage_root);
    CHECK(ans[i].account.code_hash == f->code_hash);
    if (k.slot) {
      auto s = acc.storage.find(*k.slot);
      if (s == acc.storage.end() || mpt::is_zero(s->second)) CHECK_FALSE(ans[i].slot_value.has_value());
      else {
        REQUIRE(ans[i].slot_value.has_value());
        CHECK(*ans[i].slot_value == s->second);
      }
    } else {
      CHECK_FALSE(ans[i].slot_value.has_value());
    }
  }
}

void full_check(StoreKind store, const state::Allocation& a, uint64_t seed) {
  const std::string store_name = persist::store_kind_name(store);
  CAPTURE(store_name);
  TempDir dir("db");
  const DbOptions o = mpt_options(dir.path, store);
  state::AllocationSource src(a, kTestSpec);
  persist::BuildReport rep;
  uint64_t progress_calls = 0;
  REQUIRE(build(o, src, &rep, [&](uint64_t, uint64_t) { ++progress_calls; }).message() == "");
  const mpt::Hash32 want = mpt::allocation_root(a);
  CHECK(ref::to_hex(rep.root) == ref::to_hex(want));
  CHECK(rep.accounts == a.accounts.size());
  CHECK(rep.slots == src.slot_count());
  CHECK(rep.nodes > 0);
  CHECK(rep.disk_bytes > 0);
  CHECK(progress_calls > 0);
  if (store == StoreKind::arena) CHECK(rep.pages > 0);

  {  // (RocksDB allows one opener at a time)
    std::unique_ptr<persist::TreeDb> any;  // the dispatch from the manifest's parameters
    REQUIRE(persist::open_any_db(o.dir, 8, &any).message() == "");
    CHECK(any->manifest().root_hash == want);
  }
  std::unique_ptr<persist::TreeDb> db;
  REQUIRE(open(o, &db).message() == "");
  CHECK(ref::to_hex(db->manifest().root_hash) == ref::to_hex(want));
  CHECK(db->source_spec() == src.spec_json());
  CHECK(!db->data_files().empty());
  CHECK((db->page_store() != nullptr) == (store == StoreKind::arena));

  mpt::MptState mem;
  mem.load(a);
  REQUIRE(mem.root() == want);
  const KeySet ks = keys_of(a, seed);
  std::vector<persist::LookupAnswer> ans;
  persist::LookupStats st;
  REQUIRE(db->lookup(ks.keys, &ans, &st).message() == "");
  check_answers(a, ks.keys, ans, mem);
  CHECK(st.keys == ks.keys.size());
  CHECK(st.rounds >= 1);
  CHECK(st.page_reads > 0);
  CHECK(st.nodes_visited >= ks.keys.size());
  if (store == StoreKind::rocksdb) {
    CHECK(st.rounds <= 20);  // level by level: about the depth, not keys x depth
    CHECK(st.reads_per_round.size() == st.rounds);
  } else {  // streamed: rounds are waves of completions, each page read once per batch
    CHECK(st.rounds <= st.page_reads);
    CHECK(st.reads_per_round.empty());
    CHECK(st.reads_in_flight_max >= 1);
  }
  // Batches of one key and of a few keys give the same answers.
  for (size_t i = 0; i < ks.keys.size(); i += 37) {
    std::vector<persist::LookupAnswer> one;
    REQUIRE(db->lookup({&ks.keys[i], 1}, &one, &st, true).ok());
    check_answers(a, {&ks.keys[i], 1}, one, mem);
  }

  persist::VerifyReport vr;
  REQUIRE(db->verify(&vr).message() == "");
  CHECK(vr.ok);
  CHECK(vr.accounts == a.accounts.size());
  CHECK(vr.slots == src.slot_count());
  CHECK(vr.nodes == rep.nodes);
  CHECK(vr.root == want);
  if (store == StoreKind::arena) CHECK(vr.pages == rep.pages);

  // Proofs from disk verify against the root and equal the in-memory state's proofs.
  for (size_t i = 0; i < ks.keys.size(); i += 7) {
    const auto& k = ks.keys[i];
    persist::StateProof sp;
    REQUIRE(db->prove(k, &sp).message() == "");
    REQUIRE(std::holds_alternative<mpt::AccountProof>(sp));
    const auto& p = std::get<mpt::AccountProof>(sp);
    CHECK(mpt::verify_account_proof(want, p) == "");
    std::vector<state::Hash32> slots;
    if (k.slot) slots.push_back(*k.slot);
    const mpt::AccountProof m = mem.prove(k.address, slots);
    CHECK(p.exists == m.exists);
    CHECK(p.account_proof == m.account_proof);
    REQUIRE(p.storage_proofs.size() == m.storage_proofs.size());
    for (size_t j = 0; j < p.storage_proofs.size(); ++j) {
      CHECK(p.storage_proofs[j].proof == m.storage_proofs[j].proof);
      CHECK(p.storage_proofs[j].value == m.storage_proofs[j].value);
    }
  }
}

}  // namespace

TEST_CASE("persist mpt: build, reopen, lookup, verify, prove (arena)") {
  full_check(StoreKind::arena, random_alloc(1, 400, 25, 300), 11);
}

TEST_CASE("persist mpt: build, reopen, lookup, verify, prove (rocksdb)") {
  REQUIRE_MESSAGE(io::rocksdb_available(), "RocksDB not compiled in (librocksdb-dev is a required package)");
  full_check(StoreKind::rocksdb, random_alloc(2, 300, 20, 200), 12);
}

TEST_CASE("persist mpt: tiny and empty states") {
  for (StoreKind store : {StoreKind::arena, StoreKind::rocksdb}) {
    if (store == StoreKind::rocksdb && !io::rocksdb_available()) continue;
    const std::string store_name = persist::store_kind_name(store);
  CAPTURE(store_name);
    full_check(store, random_alloc(3, 1, 1, 1), 13);  // one account, one slot
    full_check(store, random_alloc(4, 2, 0, 1), 14);  // two EOAs
    // empty state
    TempDir dir("empty");
    const DbOptions o = mpt_options(dir.path, store);
    state::Allocation none;
    state::AllocationSource src(none, kTestSpec);
    persist::BuildReport rep;
    REQUIRE(build(o, src, &rep).message() == "");
    CHECK(rep.root == mpt::kEmptyRoot);
    std::unique_ptr<persist::TreeDb> db;
    REQUIRE(open(o, &db).message() == "");
    std::vector<state::StateKey> keys{{state::Address{}, std::nullopt}, {state::Address{}, state::Hash32{}}};
    std::vector<persist::LookupAnswer> ans;
    REQUIRE(db->lookup(keys, &ans, nullptr).ok());
    CHECK_FALSE(ans[0].account.exists);
    CHECK_FALSE(ans[1].slot_value.has_value());
    persist::VerifyReport vr;
    CHECK(db->verify(&vr).ok());
    persist::StateProof sp;
    REQUIRE(db->prove(keys[1], &sp).ok());
    CHECK(mpt::verify_account_proof(mpt::kEmptyRoot, std::get<mpt::AccountProof>(sp)) == "");
  }
}

TEST_CASE("persist mpt: genesis state roots from disk") {
  for (const char* net : {"mainnet", "sepolia", "holesky", "hoodi"}) {
    CAPTURE(net);
    const std::string path = std::string(STATETREE_GENESIS_DIR) + "/" + net + "_genesis_alloc.json";
    auto r = workloads::load_genesis_file(path);
    REQUIRE(std::holds_alternative<workloads::GenesisFile>(r));
    const auto& g = std::get<workloads::GenesisFile>(r);
    REQUIRE(g.expected_state_root);
    const StoreKind store = std::string(net) == "sepolia" && io::rocksdb_available() ? StoreKind::rocksdb : StoreKind::arena;
    TempDir dir(net);
    const DbOptions o = mpt_options(dir.path, store);
    state::AllocationSource src(g.alloc, kTestSpec);
    persist::BuildReport rep;
    REQUIRE(build(o, src, &rep).message() == "");
    CHECK(ref::to_hex(rep.root) == ref::to_hex(*g.expected_state_root));
    std::unique_ptr<persist::TreeDb> db;
    REQUIRE(open(o, &db).message() == "");
    persist::VerifyReport vr;
    CHECK(db->verify(&vr).message() == "");
    CHECK(vr.accounts == g.alloc.accounts.size());
    CHECK(ref::to_hex(vr.root) == ref::to_hex(*g.expected_state_root));
  }
}

TEST_CASE("persist mpt: rebuild replaces the state; the old one stays readable until the commit") {
  TempDir dir("rebuild");
  const DbOptions o = mpt_options(dir.path, StoreKind::arena);
  const state::Allocation a = random_alloc(21, 200, 10, 100), b = random_alloc(22, 150, 12, 120);
  state::AllocationSource sa(a, kTestSpec), sb(b, "{\"test\":\"b\"}");
  persist::BuildReport ra, rb;
  REQUIRE(build(o, sa, &ra).ok());
  // During B's build (pages of B being written) the directory still opens at A.
  int checked = 0;
  REQUIRE(build(o, sb, &rb, [&](uint64_t done, uint64_t total) {
            if (checked || done == total) return;
            ++checked;
            std::unique_ptr<persist::TreeDb> db;
            REQUIRE(open(o, &db).message() == "");
            CHECK(db->manifest().root_hash == ra.root);
            persist::VerifyReport vr;
            CHECK(db->verify(&vr).message() == "");
            CHECK(vr.accounts == a.accounts.size());
          }).message() == "");
  CHECK(checked == 1);
  CHECK(rb.root == mpt::allocation_root(b));
  std::unique_ptr<persist::TreeDb> db;
  REQUIRE(open(o, &db).ok());
  CHECK(db->manifest().root_hash == rb.root);
  CHECK(db->source_spec() == sb.spec_json());
  persist::VerifyReport vr;
  CHECK(db->verify(&vr).message() == "");
  CHECK(vr.accounts == b.accounts.size());
  mpt::MptState mem;
  mem.load(b);
  const KeySet ks = keys_of(b, 5);
  std::vector<persist::LookupAnswer> ans;
  REQUIRE(db->lookup(ks.keys, &ans, nullptr).ok());
  check_answers(b, ks.keys, ans, mem);
  // An account of A only is absent now.
  std::vector<state::StateKey> old{{a.accounts[0].first, std::nullopt}};
  REQUIRE(db->lookup(old, &ans, nullptr).ok());
  CHECK_FALSE(ans[0].account.exists);
}

namespace {
struct CaptureSink final : mpt::NodeSink {
  std::vector<std::pair<mpt::NodeKind, std::vector<uint8_t>>> nodes;
  std::vector<uint32_t> children;
  io::Status node(mpt::NodeKind k, std::span<const uint8_t> rlp, uint32_t c, const uint8_t*, uint32_t) override {
    nodes.emplace_back(k, std::vector<uint8_t>(rlp.begin(), rlp.end()));
    children.push_back(c);
    return {};
  }
};
struct ValueHook final : mpt::LeafHook {
  std::vector<std::vector<uint8_t>> values;
  bool known = false;  // exercise the batched-leaf path: the values in the pairs, no hook
  io::Status leaf(size_t i, std::vector<uint8_t>* v, uint32_t* c) override {
    *v = values[i];
    *c = 0;
    return {};
  }
};
// The first n keys through mpt::write_trie: leaf values from the hook, or (hook.known) in
// the pairs, built in chunks of chunk_keys.
io::Status write_trie(const std::vector<std::array<uint8_t, 32>>& keys, size_t n, ValueHook& hook, CaptureSink& sink,
                      mpt::Hash32* root, size_t chunk_keys = 4096) {
  std::vector<mpt::KeyValue> kv;
  for (size_t i = 0; i < n; ++i)
    kv.push_back({keys[i].data(), 32, hook.known ? hook.values[i].data() : nullptr,
                  hook.known ? uint32_t(hook.values[i].size()) : 0});
  mpt::WriteOptions o;
  o.chunk_keys = chunk_keys;
  if (!hook.known) o.hook = &hook;
  return mpt::write_trie(kv, sink, root, o);
}
}  // namespace

TEST_CASE("persist mpt: trie writer with embedded nodes equals the batch builder") {
  // Keys sharing 63 nibbles with one-byte values: the leaves and their branch are shorter
  // than 32 bytes and live inside their parent; only the top node is sunk.
  std::vector<std::array<uint8_t, 32>> keys(3);
  for (size_t i = 0; i < keys.size(); ++i) keys[i][31] = uint8_t(i);
  ValueHook hook;
  for (size_t i = 0; i < keys.size(); ++i) hook.values.push_back({uint8_t(1 + i)});
  CaptureSink sink;
  mpt::Hash32 root;
  REQUIRE(write_trie(keys, keys.size(), hook, sink, &root).ok());
  std::vector<mpt::KeyValue> kv;
  for (size_t i = 0; i < keys.size(); ++i) kv.push_back({keys[i].data(), 32, hook.values[i].data(), 1});
  CHECK(root == mpt::build_root(kv));
  REQUIRE(sink.nodes.size() == 1);  // the top extension only
  CHECK(sink.nodes[0].first == mpt::NodeKind::extension);
  CHECK(sink.children[0] == 0);     // its branch is embedded
  mpt::DecodedNode n;
  REQUIRE(mpt::decode_node(sink.nodes[0].second, &n) == "");
  CHECK(n.kind == mpt::DecodedNode::extension);
  CHECK(n.path_len == 63);
  CHECK(n.refs[0].kind == mpt::ChildRef::embedded);
  mpt::DecodedNode br;
  REQUIRE(mpt::decode_node({n.refs[0].bytes, n.refs[0].len}, &br) == "");
  CHECK(br.kind == mpt::DecodedNode::branch);
  CHECK(br.hashed_refs() == 0);
  CHECK(br.refs[0].kind == mpt::ChildRef::embedded);

  // Random keys: the sunk nodes are exactly the hashed ones plus the top, in post-order.
  std::mt19937_64 rng(9);
  std::vector<std::array<uint8_t, 32>> rk(500);
  for (auto& k : rk) for (auto& b : k) b = uint8_t(rng());
  std::sort(rk.begin(), rk.end());
  ValueHook h2;
  for (size_t i = 0; i < rk.size(); ++i) h2.values.push_back({uint8_t(0x80 | i), uint8_t(i)});
  CaptureSink s2;
  REQUIRE(write_trie(rk, rk.size(), h2, s2, &root).ok());
  kv.clear();
  for (size_t i = 0; i < rk.size(); ++i) kv.push_back({rk[i].data(), 32, h2.values[i].data(), 2});
  CHECK(root == mpt::build_root(kv));
  uint8_t top[32];
  st::kernels::keccak256(s2.nodes.back().second.data(), s2.nodes.back().second.size(), top);
  CHECK(std::memcmp(top, root.data(), 32) == 0);
  uint64_t claimed = 0;
  for (uint32_t c : s2.children) claimed += c;
  CHECK(claimed + 1 == s2.nodes.size());  // every sunk node but the top has one parent
  // Leaves encoded and hashed in one batch up front: the same nodes in the same order.
  for (ValueHook* h : {&hook, &h2}) {
    h->known = true;
    CaptureSink s3;
    mpt::Hash32 root3;
    const bool small = h == &hook;
    REQUIRE(write_trie(small ? keys : rk, small ? keys.size() : rk.size(), *h, s3, &root3).ok());
    const CaptureSink& want = small ? sink : s2;
    CHECK(s3.nodes == want.nodes);
    CHECK(s3.children == want.children);
    // Chunks of a few keys: the split nodes above them sunk between the chunks' nodes.
    for (size_t chunk : {1, 2, 7, 64}) {
      CaptureSink s5;
      mpt::Hash32 root5;
      REQUIRE(write_trie(small ? keys : rk, small ? keys.size() : rk.size(), *h, s5, &root5, chunk).ok());
      CHECK(root5 == root3);
      CHECK(s5.nodes == want.nodes);
      CHECK(s5.children == want.children);
    }
    h->known = false;
  }
  // One key: its leaf is the top (depth 0) on both paths.
  for (bool known : {false, true}) {
    ValueHook one;
    one.known = known;
    one.values.push_back({0x42});
    CaptureSink s4;
    REQUIRE(write_trie(rk, 1, one, s4, &root).ok());
    kv.assign(1, {rk[0].data(), 32, one.values[0].data(), 1});
    CHECK(root == mpt::build_root(kv));
    CHECK(s4.nodes.size() == 1);
  }
  // Duplicate keys are an error, not a wrong trie.
  rk[1] = rk[0];
  for (bool known : {false, true}) {
    h2.known = known;
    CHECK(write_trie(rk, rk.size(), h2, s2, &root).code() == io::Errc::bad_argument);
  }
}

TEST_CASE("persist mpt: the disk-node decoder refuses hostile bytes") {
  mpt::DecodedNode n;
  const std::vector<std::vector<uint8_t>> bad = {
      {},                          // nothing
      {0x80},                      // a string, not a list
      {0xc0},                      // empty list
      {0xc2, 0x80, 0x80},          // empty path item
      {0xc3, 0x82, 0x00, 0x80},    // extension without child
      {0xc3, 0x11, 0x81, 0x05},    // odd ext path, non-canonical single byte
      {0xc2, 0x20, 0x80},          // leaf with empty value
      {0xc3, 0x30, 0x82, 0x01},    // truncated
  };
  for (const auto& b : bad) CHECK(mpt::decode_node(b, &n) != "");
  // A path whose hex-prefix is malformed is named for what is wrong with it.
  CHECK(mpt::decode_node(std::vector<uint8_t>{0xc4, 0x82, 0x40, 0x12, 0x01}, &n) ==
        "mpt node: bad hex-prefix flag nibble");
  CHECK(mpt::decode_node(std::vector<uint8_t>{0xc4, 0x82, 0x05, 0x12, 0x01}, &n) ==
        "mpt node: nonzero padding nibble in an even hex-prefix path");
  // A branch with only one entry, a child ref of 5 bytes.
  std::vector<uint8_t> br{0xd1};
  for (int i = 0; i < 17; ++i) br.push_back(0x80);
  br[1] = 0x01;
  CHECK(mpt::decode_node(br, &n) != "");
  std::array<uint8_t, 32> v;
  CHECK(persist::decode_storage_value(std::vector<uint8_t>{0x82, 0x00, 0x01}, &v) != "");
  CHECK(persist::decode_storage_value(std::vector<uint8_t>{0x05}, &v) == "");
  CHECK(v[31] == 5);
}
