// state_source_test: the synthetic ERC20 state and the allocation adapter: determinism,
// unique addresses and slots, slot_key/slot_value agree with account(), the documented
// mapping-slot formulas, spec_json round trip and strict parsing.
#include <doctest/doctest.h>

#include <cstring>
#include <map>
#include <set>
#include <variant>

#include "engine/state/state_source.h"
#include "kernels/keccak256.h"
#include "workloads/synthetic_state.h"

using namespace st::state;

namespace {

Hash32 mapping_slot(const Address& key, const Hash32& slot) {
  uint8_t m[64] = {};
  std::memcpy(m + 12, key.data(), 20);
  std::memcpy(m + 32, slot.data(), 32);
  Hash32 out;
  st::kernels::keccak256(m, 64, out.data());
  return out;
}

Hash32 small(uint8_t v) {
  Hash32 b{};
  b[31] = v;
  return b;
}

bool all_zero(const Hash32& v) {
  for (uint8_t b : v)
    if (b) return false;
  return true;
}

}  // namespace

TEST_CASE("synthetic state: deterministic, random access") {
  const SyntheticSpec spec{300, 7, 40, 42};
  SyntheticState a(spec), b(spec);
  AccountRecord ra, rb;
  for (uint64_t i : {299ull, 0ull, 6ull, 7ull, 150ull, 3ull}) {  // any order
    a.account(i, &ra);
    b.account(i, &rb);
    CHECK(ra.address == rb.address);
    CHECK(ra.nonce == rb.nonce);
    CHECK(ra.balance == rb.balance);
    CHECK(ra.code == rb.code);
    CHECK(ra.storage == rb.storage);
    CHECK(ra.address == a.address(i));
  }
  SyntheticState other({300, 7, 40, 43});
  CHECK(other.address(0) != a.address(0));
  a.account(0, &ra);
  other.account(0, &rb);
  CHECK(ra.storage != rb.storage);
}

TEST_CASE("synthetic state: unique addresses, unique non-zero slots, shapes") {
  for (const SyntheticSpec spec : {SyntheticSpec{2000, 20, 300, 1}, SyntheticSpec{12, 12, 50, 5},
                                   SyntheticSpec{30, 3, 101, 9}, SyntheticSpec{5, 0, 10, 2}}) {
    CAPTURE(spec.accounts);
    CAPTURE(spec.contracts);
    SyntheticState s(spec);
    CHECK(s.slot_count() == spec.contracts * spec.slots_per_contract);
    std::set<Address> addrs;
    AccountRecord r;
    uint64_t slots = 0;
    for (uint64_t i = 0; i < spec.accounts; ++i) {
      s.account(i, &r);
      addrs.insert(r.address);
      REQUIRE(r.storage.size() == s.storage_size(i));
      slots += r.storage.size();
      if (i < spec.contracts) {
        CHECK(r.nonce == 1);
        CHECK(r.code.size() == kStubCodeBytes);
        std::set<Hash32> keys;
        for (const auto& [k, v] : r.storage) {
          keys.insert(k);
          CHECK(!all_zero(v));
        }
        CHECK(keys.size() == r.storage.size());
      } else {
        CHECK(r.code.empty());
        CHECK(r.nonce < 1000);
        CHECK(!all_zero(r.balance));
      }
    }
    CHECK(addrs.size() == spec.accounts);
    CHECK(slots == s.slot_count());
  }
  // distinct contracts hold distinct code
  SyntheticState s({10, 2, 0, 1});
  AccountRecord r0, r1;
  s.account(0, &r0);
  s.account(1, &r1);
  CHECK(r0.code != r1.code);
}

TEST_CASE("synthetic state: slot_key and slot_value equal account()'s entries") {
  // slots_per_contract > 256 so the batched account() spans several chunks.
  SyntheticState s({40, 4, 600, 77});
  AccountRecord r;
  for (uint64_t i = 0; i < 5; ++i) {
    s.account(i, &r);
    for (uint64_t j = 0; j < r.storage.size(); ++j) {
      auto k = s.slot_key(i, j);
      REQUIRE(k.has_value());
      CHECK(k->address == r.address);
      REQUIRE(k->slot.has_value());
      CHECK(*k->slot == r.storage[j].first);
      CHECK(s.slot_value(i, j) == r.storage[j].second);
    }
    CHECK(!s.slot_key(i, s.storage_size(i)).has_value());
    CHECK(!s.slot_value(i, s.storage_size(i)).has_value());
  }
  CHECK(!s.slot_key(39, 0).has_value());  // an EOA has no storage
}

TEST_CASE("synthetic state: slots follow the ERC20 mapping formulas") {
  // Small domain (10 EOAs) so the holder of each slot can be found by search.
  const SyntheticSpec spec{13, 3, 9, 11};
  SyntheticState s(spec);
  std::vector<Address> holders;
  for (uint64_t h = 0; h < 10; ++h) holders.push_back(s.address(spec.contracts + h));
  AccountRecord r;
  s.account(1, &r);
  CHECK(r.storage[0].first == Hash32{});  // totalSupply at slot 0
  std::set<size_t> balance_holders;
  for (uint64_t j = 1; j < spec.slots_per_contract; ++j) {
    CAPTURE(j);
    bool found = false;
    for (size_t o = 0; o < holders.size() && !found; ++o) {
      if (j % 2 == 0) {
        if (mapping_slot(holders[o], small(2)) == r.storage[j].first) {
          found = true;
          balance_holders.insert(o);
        }
      } else {
        const Hash32 inner = mapping_slot(holders[o], small(3));
        for (size_t sp = 0; sp < holders.size() && !found; ++sp)
          found = mapping_slot(holders[sp], inner) == r.storage[j].first;
      }
    }
    CHECK(found);
  }
  CHECK(balance_holders.size() == 4);  // j = 2, 4, 6, 8: four distinct holders
  // the study's check value: balance(1) = keccak256(pad32(1) || pad32(2))
  Address one{};
  one[19] = 1;
  uint8_t expect[32] = {0xe9, 0x0b, 0x7b, 0xce, 0xb6, 0xe7, 0xdf, 0x54, 0x18, 0xfb, 0x78, 0xd8, 0xee, 0x54, 0x6e, 0x97,
                        0xc8, 0x3a, 0x08, 0xbb, 0xcc, 0xc0, 0x1a, 0x06, 0x44, 0xd5, 0x99, 0xcc, 0xd2, 0xa7, 0xc2, 0xe0};
  CHECK(std::memcmp(mapping_slot(one, small(2)).data(), expect, 32) == 0);
}

TEST_CASE("synthetic state: spec_json round trip and strict parsing") {
  for (const SyntheticSpec spec : {SyntheticSpec{1000, 0, 0, 1}, SyntheticSpec{10000000, 1000, 10000, ~0ull}}) {
    SyntheticState s(spec);
    auto parsed = parse_synthetic_spec(s.spec_json());
    REQUIRE(std::holds_alternative<SyntheticSpec>(parsed));
    CHECK(std::get<SyntheticSpec>(parsed) == spec);
  }
  auto ok = parse_synthetic_spec(
      " { \"seed\" : 3, \"slots_per_contract\":2,\"contracts\":1,\"accounts\":4,\"version\":1,\"kind\":\"synthetic\" } ");
  REQUIRE(std::holds_alternative<SyntheticSpec>(ok));
  CHECK(std::get<SyntheticSpec>(ok) == SyntheticSpec{4, 1, 2, 3});
  const char* bad[] = {
      "",
      "{}",
      "{\"kind\":\"alloc\",\"version\":1,\"accounts\":4,\"contracts\":1,\"slots_per_contract\":2,\"seed\":3}",
      "{\"kind\":\"synthetic\",\"version\":2,\"accounts\":4,\"contracts\":1,\"slots_per_contract\":2,\"seed\":3}",
      "{\"kind\":\"synthetic\",\"version\":1,\"accounts\":4,\"contracts\":1,\"slots_per_contract\":2}",
      "{\"kind\":\"synthetic\",\"version\":1,\"accounts\":4,\"contracts\":1,\"slots_per_contract\":2,\"seed\":3,\"x\":1}",
      "{\"kind\":\"synthetic\",\"version\":1,\"accounts\":4,\"contracts\":5,\"slots_per_contract\":2,\"seed\":3}",
      "{\"kind\":\"synthetic\",\"version\":1,\"accounts\":4,\"contracts\":1,\"slots_per_contract\":2,\"seed\":-3}",
      "{\"kind\":\"synthetic\",\"version\":1,\"accounts\":4,\"contracts\":1,\"slots_per_contract\":2,\"seed\":3} x",
      "{\"kind\":\"synthetic\",\"version\":1,\"accounts\":99999999999999999999,\"contracts\":1,\"slots_per_contract\":2,\"seed\":3}",
      "{\"kind\":\"synthetic\",\"kind\":\"synthetic\",\"version\":1,\"accounts\":4,\"contracts\":1,\"slots_per_contract\":2,\"seed\":3}",
  };
  for (const char* b : bad) {
    CAPTURE(b);
    auto r = parse_synthetic_spec(b);
    REQUIRE(std::holds_alternative<std::string>(r));
    CHECK(!std::get<std::string>(r).empty());
  }
}

TEST_CASE("allocation source: zero values dropped, keys and values agree with account()") {
  Allocation alloc;
  Account a;
  a.nonce = 5;
  a.balance = small(9);
  a.code = {0x60, 0x00};
  a.storage[small(1)] = small(7);
  a.storage[small(2)] = Hash32{};  // zero: absent state
  a.storage[small(3)] = small(8);
  Address x{}, y{};
  x[0] = 1;
  y[0] = 2;
  alloc.accounts.push_back({x, a});
  alloc.accounts.push_back({y, Account{}});
  AllocationSource src(alloc, "{\"kind\":\"alloc\"}");
  CHECK(src.account_count() == 2);
  CHECK(src.slot_count() == 2);
  CHECK(src.storage_size(0) == 2);
  CHECK(src.storage_size(1) == 0);
  CHECK(src.spec_json() == "{\"kind\":\"alloc\"}");
  AccountRecord r;
  src.account(0, &r);
  CHECK(r.address == x);
  CHECK(r.nonce == 5);
  CHECK(r.code == a.code);
  REQUIRE(r.storage.size() == 2);
  for (uint64_t j = 0; j < 2; ++j) {
    CHECK(src.slot_key(0, j)->slot == r.storage[j].first);
    CHECK(src.slot_key(0, j)->address == x);
    CHECK(src.slot_value(0, j) == r.storage[j].second);
    // the generic default (generating the account) agrees
    CHECK(src.StateSource::slot_value(0, j) == r.storage[j].second);
  }
  CHECK(!src.slot_key(0, 2).has_value());
  CHECK(!src.slot_key(1, 0).has_value());
  CHECK(!src.StateSource::slot_value(1, 0).has_value());
  src.account(1, &r);
  CHECK(r.address == y);
  CHECK(r.storage.empty());
  CHECK(r.code.empty());
}

TEST_CASE("synthetic state: blocks replay deterministically; the overlay is the state after the diffs") {
  SyntheticSpec spec{60, 4, 30, 9};
  spec.block_seed = 3;
  spec.block_writes = 40;
  SyntheticState base(spec), live(spec);
  // The expected state: the base state plus every diff applied in order.
  std::map<Address, std::pair<uint64_t, std::map<Hash32, Hash32>>> model;
  std::map<Address, U256> balances;
  AccountRecord r;
  for (uint64_t i = 0; i < base.account_count(); ++i) {
    base.account(i, &r);
    auto& m = model[r.address];
    m.first = r.nonce;
    balances[r.address] = r.balance;
    for (auto& [k, v] : r.storage) m.second[k] = v;
  }
  uint64_t deletes = 0, news = 0;
  for (int b = 0; b < 12; ++b) {
    StateDiff d;
    live.next_block(&d);
    for (const AccountDiff& a : d.accounts) {
      REQUIRE(model.count(a.address));
      auto& m = model[a.address];
      if (a.nonce) m.first = *a.nonce;
      if (a.balance) balances[a.address] = *a.balance;
      for (auto& [k, v] : a.storage_writes) {
        if (all_zero(v)) deletes += m.second.erase(k);
        else news += m.second.emplace(k, v).second, m.second[k] = v;
      }
    }
  }
  CHECK(live.spec().blocks == 12);
  CHECK(deletes > 0);
  CHECK(news > 0);
  // A source built from the spec with 12 blocks replays them: the same state as `live`.
  CHECK(parse_synthetic_spec(live.spec_json()) == std::variant<SyntheticSpec, std::string>(live.spec()));
  SyntheticState replayed(live.spec());
  uint64_t slots = 0;
  for (const SyntheticState* s : {&live, &replayed}) {
    slots = 0;
    for (uint64_t i = 0; i < s->account_count(); ++i) {
      s->account(i, &r);
      const auto& m = model.at(r.address);
      CHECK(r.nonce == m.first);
      CHECK(r.balance == balances.at(r.address));
      REQUIRE(r.storage.size() == m.second.size());
      REQUIRE(s->storage_size(i) == r.storage.size());
      for (uint64_t j = 0; j < r.storage.size(); ++j) {
        CHECK(m.second.at(r.storage[j].first) == r.storage[j].second);
        CHECK(s->slot_key(i, j)->slot == r.storage[j].first);
        CHECK(*s->slot_value(i, j) == r.storage[j].second);
      }
      CHECK(!s->slot_key(i, r.storage.size()));
      slots += r.storage.size();
      AccountRecord f;  // account_fields: the same account, after the blocks too, without storage
      f.storage.push_back({});
      s->account_fields(i, &f);
      CHECK(f.address == r.address);
      CHECK(f.nonce == r.nonce);
      CHECK(f.balance == r.balance);
      CHECK(f.code == r.code);
      CHECK(f.storage.empty());
    }
    CHECK(s->slot_count() == slots);
  }
  // Without blocks the spec text is unchanged (databases built before blocks existed).
  CHECK(base.spec_json().find("blocks") == std::string::npos);
  CHECK(std::holds_alternative<std::string>(
      parse_synthetic_spec("{\"kind\":\"synthetic\",\"version\":1,\"accounts\":5,\"contracts\":1,"
                           "\"slots_per_contract\":2,\"seed\":1,\"blocks\":2}")));
}
