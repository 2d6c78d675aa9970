// mpt_state_test: the Ethereum state model and proofs. Random allocations and random state
// diffs against the reference (after every diff, and the batch-builder allocation root);
// account/storage proofs equal the reference's proof nodes, verify, and fail with any byte
// changed; plain-trie proofs with prefix keys (branch values, embedded nodes).
#include <doctest/doctest.h>

#include <map>
#include <random>

#include "engine/mpt/proof.h"
#include "engine/mpt/state.h"
#include "engine/mpt/trie.h"
#include "tests/reference/mpt_reference.h"

using namespace st;
using st::ref::Bytes;
using st::state::Address;
using st::state::Hash32;

namespace {

std::string hex(const mpt::Hash32& h) { return ref::to_hex(h); }

Address addr_of(uint64_t i) {
  Address a{};
  for (int b = 0; b < 8; ++b) a[19 - b] = uint8_t(i >> (8 * b));
  a[0] = 0xaa;
  return a;
}
Hash32 word(uint64_t v) {
  Hash32 w{};
  for (int b = 0; b < 8; ++b) w[31 - b] = uint8_t(v >> (8 * b));
  return w;
}

st::state::Allocation random_alloc(std::mt19937_64& rng, size_t n) {
  st::state::Allocation alloc;
  for (size_t i = 0; i < n; ++i) {
    st::state::Account a;
    if (rng() % 3) a.balance = word(rng() >> (rng() % 64));
    if (rng() % 4 == 0) a.nonce = rng() % 1000;
    if (rng() % 5 == 0) {
      a.code.resize(1 + rng() % 100);
      for (auto& b : a.code) b = uint8_t(rng());
      const size_t slots = rng() % 40;
      for (size_t s = 0; s < slots; ++s) a.storage[word(rng() % 64)] = word(rng() % 4 ? rng() : 0);
    }
    alloc.accounts.emplace_back(addr_of(i), a);  // some accounts stay empty: still committed
  }
  return alloc;
}

st::state::StateDiff random_diff(std::mt19937_64& rng, size_t accounts) {
  st::state::StateDiff diff;
  const size_t n = 1 + rng() % 12;
  for (size_t i = 0; i < n; ++i) {
    st::state::AccountDiff d;
    d.address = addr_of(rng() % (accounts + 5));  // some new accounts
    const int kind = int(rng() % 10);
    if (kind == 0) d.destroyed = true;
    if (kind != 0 || rng() % 2) {
      if (rng() % 2) d.balance = word(rng());
      if (rng() % 3 == 0) d.nonce = rng() % 100;
      if (rng() % 8 == 0) d.code = std::vector<uint8_t>{1, 2, uint8_t(rng())};
      const size_t w = rng() % 10;
      for (size_t s = 0; s < w; ++s) d.storage_writes.emplace_back(word(rng() % 64), word(rng() % 3 ? rng() % 100000 : 0));
    }
    diff.accounts.push_back(d);
  }
  return diff;
}

std::map<Bytes, Bytes> ref_account_kv(const ref::State& s) {
  std::map<Bytes, Bytes> kv;
  for (const auto& [a, acc] : s) kv[ref::keccak(Bytes(a.begin(), a.end()))] = ref::account_rlp(acc);
  return kv;
}

// Every byte of every element changed (or a stride of bytes for long proofs): must fail.
size_t tamper_all(const mpt::Hash32& root, const Bytes& key, const std::vector<Bytes>& proof) {
  size_t tried = 0;
  for (size_t e = 0; e < proof.size(); ++e)
    for (size_t i = 0; i < proof[e].size(); i += 1 + proof[e].size() / 97) {
      std::vector<Bytes> bad = proof;
      bad[e][i] ^= uint8_t(1 + (i % 255));
      CHECK_FALSE(mpt::verify_proof(root, key, bad).ok());
      ++tried;
    }
  return tried;
}

}  // namespace

TEST_CASE("mpt state: random allocations and diffs match the reference after every diff") {
  std::mt19937_64 rng(5);
  for (int round = 0; round < 6; ++round) {
    const size_t n = 1 + rng() % 60;
    auto alloc = random_alloc(rng, n);
    ref::State rs = ref::from_allocation(alloc);
    mpt::MptState s;
    s.load(alloc);
    const std::string want = ref::to_hex(ref::state_root(rs));
    CHECK(hex(s.root()) == want);
    CHECK(hex(mpt::allocation_root(alloc)) == want);
    mpt::BuildOptions two;
    two.threads = 2;
    CHECK(hex(mpt::allocation_root(alloc, two)) == want);
    for (int b = 0; b < 10; ++b) {
      auto diff = random_diff(rng, n);
      ref::apply_diff(rs, diff);
      s.apply(diff);
      CAPTURE(round); CAPTURE(b);
      CHECK(hex(s.root()) == ref::to_hex(ref::state_root(rs)));
      CHECK(s.account_count() == rs.size());
    }
  }
  mpt::MptState empty;
  CHECK(hex(empty.root()) == "56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421");
}

TEST_CASE("mpt state: account and storage proofs verify, match the reference, fail when tampered") {
  std::mt19937_64 rng(9);
  auto alloc = random_alloc(rng, 80);
  // one contract with plenty of storage so storage proofs have several levels
  st::state::Account big;
  big.code = {0x60, 0x00};
  for (int s = 0; s < 300; ++s) big.storage[word(s)] = word(1000 + s);
  alloc.accounts.emplace_back(addr_of(500), big);
  mpt::MptState s;
  s.load(alloc);
  ref::State rs = ref::from_allocation(alloc);
  const mpt::Hash32 root = s.root();
  const auto kv = ref_account_kv(rs);
  size_t tampered = 0;
  for (uint64_t i : {uint64_t(0), uint64_t(7), uint64_t(500), uint64_t(12345) /* absent */}) {
    const Address a = addr_of(i);
    std::vector<Hash32> slots = {word(0), word(5), word(299), word(777) /* absent */};
    mpt::AccountProof p = s.prove(a, slots);
    CAPTURE(i);
    CHECK(mpt::verify_account_proof(root, p) == "");
    CHECK(p.exists == (i != 12345));
    const Bytes key = ref::keccak(Bytes(a.begin(), a.end()));
    CHECK(p.account_proof == ref::mpt_proof(kv, key));
    tampered += tamper_all(root, key, p.account_proof);
    if (i == 500) {
      CHECK(p.storage_proofs[1].value == word(1005));
      CHECK(p.storage_proofs[3].value == word(0));
      std::map<Bytes, Bytes> skv;
      for (int k = 0; k < 300; ++k) {
        const Hash32 w = word(k), v = word(1000 + k);
        skv[ref::keccak(Bytes(w.begin(), w.end()))] = ref::rlp_uint_be(Bytes(v.begin(), v.end()));
      }
      for (const auto& sp : p.storage_proofs) {
        const Bytes sk = ref::keccak(Bytes(sp.slot.begin(), sp.slot.end()));
        CHECK(sp.proof == ref::mpt_proof(skv, sk));
        tampered += tamper_all(p.storage_root, sk, sp.proof);
      }
      // lying about a value or a field fails
      mpt::AccountProof lie = p;
      lie.storage_proofs[1].value = word(1006);
      CHECK(mpt::verify_account_proof(root, lie) != "");
      lie = p;
      lie.nonce += 1;
      CHECK(mpt::verify_account_proof(root, lie) != "");
      lie = p;
      lie.storage_proofs[0].proof.pop_back();
      CHECK(mpt::verify_account_proof(root, lie) != "");
    }
  }
  CHECK(tampered > 100);
}

TEST_CASE("mpt proofs: plain tries with prefix keys and embedded nodes") {
  std::mt19937_64 rng(21);
  for (int round = 0; round < 30; ++round) {
    mpt::Trie t;
    std::map<Bytes, Bytes> m;
    const size_t n = 1 + rng() % 40;
    for (size_t i = 0; i < n; ++i) {
      Bytes k(rng() % 4);
      for (auto& b : k) b = uint8_t(rng() % 3);
      Bytes v(1 + rng() % (round % 2 ? 2 : 40));
      for (auto& b : v) b = uint8_t(rng());
      m[k] = v;
      t.put(k, v);
    }
    const mpt::Hash32 root = t.root_hash();
    for (int q = 0; q < 10; ++q) {
      Bytes k(rng() % 5);
      for (auto& b : k) b = uint8_t(rng() % 3);
      auto proof = mpt::prove(t, k);
      CHECK(proof == ref::mpt_proof(m, k));
      auto r = mpt::verify_proof(root, k, proof);
      CAPTURE(round); CAPTURE(ref::to_hex(k));
      REQUIRE(r.ok());
      auto it = m.find(k);
      CHECK(r.value == (it == m.end() ? std::optional<Bytes>() : std::optional<Bytes>(it->second)));
      if (q == 0) tamper_all(root, k, proof);
    }
  }
  // empty trie: the empty proof proves absence; a garbage proof fails cleanly
  mpt::Trie e;
  CHECK(mpt::verify_proof(e.root_hash(), Bytes{1}, {}).ok());
  CHECK_FALSE(mpt::verify_proof(e.root_hash(), Bytes{1}, std::vector<Bytes>{Bytes{0xc0}}).ok());
}
