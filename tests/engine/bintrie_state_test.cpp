// bintrie_state_test: the state model over the mutable tree: genesis allocation == batch
// root of the allocation's leaves == the vectors' account roots (keccak from kernels/), and
// state diffs against a plain key -> value model of go-ethereum's semantics.
#include <doctest/doctest.h>

#include <map>

#include "engine/bintrie/state_tree.h"
#include "tests/engine/bintrie_test_util.h"

using namespace st::bintrie;
using namespace bintrie_test;

namespace {
st::state::Account account_from(const nlohmann::json& a) {
  st::state::Account acc;
  acc.nonce = a["nonce"];
  acc.balance = dec_to_be(a["balance"]);
  acc.code = unhex(a["code"]);
  for (const auto& [slot, value] : a["storage"].items()) acc.storage[dec_to_be(slot)] = left_pad(value);
  return acc;
}
Address addr_of(const std::string& h) {
  auto v = unhex(h);
  Address a{};
  std::copy(v.begin(), v.end(), a.begin());
  return a;
}
}  // namespace

TEST_CASE("bintrie state: genesis account cases with keccak code hashes") {
  for (const auto& c : vectors()["account_cases"]) {
    CAPTURE(c["name"].get<std::string>());
    st::state::Allocation alloc;
    for (const auto& a : c["accounts"]) {
      alloc.accounts.push_back({addr_of(a["address"]), account_from(a)});
      Hash32 ch;
      code_hash_keccak256(alloc.accounts.back().second.code.data(), alloc.accounts.back().second.code.size(), ch.data());
      CHECK(hex(ch) == a["code_hash_keccak256"].get<std::string>());
    }
    KeyScheme ks;
    ks.hasher = make_hasher(HashKind::sha256);
    StateTree st(ks);
    CHECK(st.apply_allocation(alloc) == "");
    CHECK(hex(st.commit()) == c["root"]["geth_sha256_be"].get<std::string>());
    KeyScheme kb;
    kb.hasher = make_hasher(HashKind::blake3);
    StateTree sb(kb);
    CHECK(sb.apply_allocation(alloc) == "");
    CHECK(hex(sb.commit()) == c["root"]["eip_blake3_be"].get<std::string>());
  }
}

TEST_CASE("bintrie state: balance over 128 bits is an error value") {
  st::state::Allocation alloc;
  st::state::Account acc;
  acc.balance[0] = 1;
  alloc.accounts.push_back({Address{}, acc});
  KeyScheme ks;
  ks.hasher = make_hasher(HashKind::sha256);
  StateTree st(ks);
  CHECK(st.apply_allocation(alloc).find("128 bits") != std::string::npos);
}

TEST_CASE("bintrie state: diffs follow go-ethereum semantics (present zeros, destruction)") {
  KeyScheme ks;
  ks.hasher = make_hasher(HashKind::sha256);
  StateTree st(ks);
  std::map<Hash32, Hash32> model;  // key -> value, what go-ethereum's tree holds
  auto model_root = [&] {
    std::vector<Entry> e;
    for (const auto& [k, v] : model) e.push_back({k, v});
    return hex(batch_root(ks.hasher, e));
  };
  Address a{}, b{};
  a[19] = 0xaa;
  b[19] = 0xbb;
  // Block 1: create a with balance and code, b with storage.
  st::state::StateDiff d1;
  st::state::AccountDiff da;
  da.address = a;
  da.nonce = 1;
  st::state::U256 bal{};
  bal[31] = 100;
  da.balance = bal;
  da.code = std::vector<uint8_t>{0x60, 0x01, 0x60, 0x02, 0x01};
  d1.accounts.push_back(da);
  st::state::AccountDiff db;
  db.address = b;
  Hash32 slot{}, val{};
  slot[31] = 5;
  val[31] = 9;
  db.storage_writes.push_back({slot, val});
  d1.accounts.push_back(db);
  CHECK(st.apply_diff(d1) == "");
  const Hash32 ha = basic_data_key(ks, a);
  model[ha] = basic_data_leaf(1, bal, 5);
  Hash32 hc = ha;
  hc[31] = 1;
  code_hash_keccak256(da.code->data(), da.code->size(), model[hc].data());
  model[code_chunk_key(ks, a, 0)] = chunkify_code(*da.code)[0];
  model[storage_slot_key(ks, b, slot)] = val;
  CHECK(hex(st.commit()) == model_root());
  // Block 2: delete b's slot (present zero), bump a's nonce only (balance and code size kept).
  st::state::StateDiff d2;
  st::state::AccountDiff da2;
  da2.address = a;
  da2.nonce = 2;
  d2.accounts.push_back(da2);
  st::state::AccountDiff db2;
  db2.address = b;
  db2.storage_writes.push_back({slot, Hash32{}});
  d2.accounts.push_back(db2);
  CHECK(st.apply_diff(d2) == "");
  model[ha] = basic_data_leaf(2, bal, 5);
  model[storage_slot_key(ks, b, slot)] = Hash32{};
  CHECK(hex(st.commit()) == model_root());
  CHECK(st.tree().get(storage_slot_key(ks, b, slot)).has_value());
  // Block 3: destroy a: zero basic data and code hash; its code chunk stays.
  st::state::StateDiff d3;
  st::state::AccountDiff da3;
  da3.address = a;
  da3.destroyed = true;
  d3.accounts.push_back(da3);
  CHECK(st.apply_diff(d3) == "");
  model[ha] = Hash32{};
  model[hc] = Hash32{};
  CHECK(hex(st.commit()) == model_root());
}
