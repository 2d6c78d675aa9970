// bal_recreate_test: storage wiped and written again, code cleared and re-created, as block
// access lists express them. EIP-7928 has no destruction marker: an account whose storage
// is wiped shows as writes of zero to each of its slots, a cleared code as a code change to
// the empty code, so a BAL's post-state diff never sets AccountDiff::destroyed and no
// account is ever removed (it stays with whatever nonce, balance and code the BAL leaves it,
// an all-empty account included). Four blocks on a synthetic state:
//
//   0  contract 3: every slot zeroed (its storage root back to the empty root); contract 2:
//      code cleared and every slot zeroed; a new contract N created (tx 1), its slot and code
//      wiped (tx 2) and written again (tx 3, shorter code); contract 1: ten slots zeroed
//      (tx 2), five of them written again (tx 3); a new account E by a balance
//   1  contract 3: old slot keys and new ones written (storage re-created), one zeroed again
//      in tx 2; contract 2: code re-created shorter than before (3 chunks, was 5), an old
//      slot key and a new one; E's balance back to zero (an empty account, kept)
//   2  contract 3 emptied again; contract 0's code cleared (storage kept); N's storage and
//      code wiped (N kept: nonce 1)
//   3  N's first code and slots re-created; contract 3 one new slot
//
// Each block's root, in memory (mpt::MptState, bintrie::StateTree) and on disk (`statetree
// apply`, also one file in two parts) and `root --alloc --blocks`, equals the root from
// scratch: the MPT's of the state after the block (mpt::allocation_root), the binary trie's
// of every leaf ever written, last value wins (nothing is removed from the binary trie: a
// zeroed slot is a present zero leaf, a shortened code leaves its old chunks past the new
// length), both derived here from the BAL without bal_derive.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/bintrie/account_leaves.h"
#include "engine/bintrie/batch_root.h"
#include "engine/bintrie/keys.h"
#include "engine/bintrie/state_tree.h"
#include "engine/mpt/node_ref.h"
#include "engine/mpt/state.h"
#include "engine/state/bal_builder.h"
#include "engine/state/bal_derive.h"
#include "reference/run_command.h"
#include "workloads/block_file.h"
#include "workloads/synthetic_state.h"
#include "workloads/u256.h"
#include "tests/workloads/cli_test_util.h"

using namespace st;
using st::reference::run_statetree;
using nlohmann::json;

namespace {

using state::Account;
using state::Address;
using state::Hash32;

std::string tmp_path(const std::string& name) { return st::test::fresh_tmp_path("bal_recreate", name); }

Hash32 u(uint64_t x) {
  Hash32 r{};
  for (int i = 31; i >= 24; --i, x >>= 8) r[size_t(i)] = uint8_t(x);
  return r;
}
bool is_zero(const Hash32& v) {
  return std::all_of(v.begin(), v.end(), [](uint8_t b) { return b == 0; });
}
std::string hex(const uint8_t* p, size_t n) { return workloads::bytes_to_hex(p, n); }

bintrie::KeyScheme sha_ks() {
  bintrie::KeyScheme ks;
  ks.hasher = bintrie::make_hasher(bintrie::HashKind::sha256);
  return ks;
}

// The reference: the state and the binary trie's leaves after each block, from the BAL's
// last change of every field (read here, not through bal_derive).
struct Reference {
  std::map<Address, Account> accounts;
  std::vector<Address> order;  // first appearance
  std::map<bintrie::Hash32, bintrie::Hash32> leaves;
  bintrie::KeyScheme ks = sha_ks();

  explicit Reference(const state::Allocation& alloc) {
    for (const auto& [a, acc] : alloc.accounts) accounts[a] = acc, order.push_back(a);
    for (const bintrie::Entry& e : bintrie::allocation_leaves(ks, alloc, bintrie::code_hash_keccak256))
      leaves[e.key] = e.value;
  }
  void apply(const state::BlockAccessList& bal) {
    for (const state::AccountChanges& c : bal.accounts) {
      const bool changed = !c.storage_changes.empty() || !c.balance_changes.empty() || !c.nonce_changes.empty() ||
                           !c.code_changes.empty();
      if (!changed) continue;
      if (!accounts.count(c.address)) order.push_back(c.address);
      Account& acc = accounts[c.address];
      if (!c.nonce_changes.empty()) acc.nonce = c.nonce_changes.back().nonce;
      if (!c.balance_changes.empty()) acc.balance = c.balance_changes.back().post_balance;
      if (!c.code_changes.empty()) acc.code = c.code_changes.back().code;
      std::vector<Hash32> zeroed;
      for (const state::SlotChanges& s : c.storage_changes) {
        const Hash32& v = s.changes.back().value;
        if (is_zero(v)) acc.storage.erase(s.slot), zeroed.push_back(s.slot);
        else acc.storage[s.slot] = v;
      }
      // The binary trie: the account's leaves now, over whatever was there (nothing removed).
      state::Allocation one;
      one.accounts.push_back({c.address, acc});
      for (const bintrie::Entry& e : bintrie::allocation_leaves(ks, one, bintrie::code_hash_keccak256))
        leaves[e.key] = e.value;
      for (const Hash32& s : zeroed) leaves[bintrie::storage_slot_key(ks, c.address, s)] = bintrie::Hash32{};
    }
  }
  state::Allocation allocation() const {
    state::Allocation a;
    for (const Address& x : order) a.accounts.push_back({x, accounts.at(x)});
    return a;
  }
  Hash32 mpt_root() const { return mpt::allocation_root(allocation()); }
  Hash32 bintrie_root() const {
    std::vector<bintrie::Entry> v;
    for (const auto& [k, val] : leaves) v.push_back({k, val});
    return bintrie::batch_root(ks.hasher, v);
  }
};

state::SyntheticSpec spec() {
  state::SyntheticSpec s;
  s.accounts = 60;
  s.contracts = 4;
  s.slots_per_contract = 50;
  s.seed = 3;
  return s;
}

std::vector<uint8_t> code_of(uint8_t fill, size_t n) {
  std::vector<uint8_t> c(n, fill);
  c[0] = 0x60;  // PUSH1 fill, so that no chunk starts inside push data by accident
  c.back() = 0x00;
  return c;
}

// The four blocks; `ref` is the state before block 0 (advanced here, block by block, to
// give each block's pre-values to the builder).
std::vector<state::Block> recreate_blocks(const state::SyntheticState& src, Reference ref) {
  const Address c0 = src.address(0), c1 = src.address(1), c2 = src.address(2), c3 = src.address(3);
  Address n{}, e{};
  n[0] = 0xab, n[19] = 0x01;
  e[0] = 0xab, e[19] = 0x02;
  const std::vector<uint8_t> code_x = code_of(0x5b, 40), code_y = code_of(0x5c, 10), code_z = code_of(0x5d, 70);
  std::vector<state::Block> blocks;
  state::BalBuilder b;
  auto slot_pre = [&](const Address& a, const Hash32& s) {
    auto it = ref.accounts.find(a);
    if (it == ref.accounts.end()) return Hash32{};
    auto v = it->second.storage.find(s);
    return v == it->second.storage.end() ? Hash32{} : v->second;
  };
  auto code_pre = [&](const Address& a) {
    auto it = ref.accounts.find(a);
    return it == ref.accounts.end() ? std::vector<uint8_t>{} : it->second.code;
  };
  auto balance_pre = [&](const Address& a) {
    auto it = ref.accounts.find(a);
    return it == ref.accounts.end() ? Hash32{} : it->second.balance;
  };
  auto write = [&](const Address& a, const Hash32& s, const Hash32& v) { b.write_slot(a, s, slot_pre(a, s), v); };
  auto wipe = [&](const Address& a) {  // every slot the account holds before the block
    for (const auto& [s, v] : ref.accounts.at(a).storage) write(a, s, Hash32{});
  };
  auto finish = [&](uint32_t txs) {
    state::Block blk;
    blk.header.number = blocks.size();
    blk.header.tx_count = txs;
    blk.bal = b.finish();
    REQUIRE(state::bal_check(blk.bal, txs) == "");
    ref.apply(blk.bal);
    blocks.push_back(std::move(blk));
  };
  std::vector<Hash32> c1_slots, c3_slots;
  for (const auto& [s, v] : ref.accounts.at(c1).storage) c1_slots.push_back(s);
  for (const auto& [s, v] : ref.accounts.at(c3).storage) c3_slots.push_back(s);
  REQUIRE(c3_slots.size() == 50);
  REQUIRE(ref.accounts.at(c2).storage.count(u(0)));  // totalSupply: an old key block 1 writes again

  // Block 0.
  b.begin(1);
  wipe(c3);
  wipe(c2);
  b.set_code(c2, code_pre(c2), {});
  b.set_nonce(n, 0, 1);
  b.set_code(n, {}, code_x);
  write(n, u(1), u(0x11));
  write(n, u(2), u(0x22));
  b.set_balance(e, Hash32{}, u(5));
  b.end();
  b.begin(2);
  write(n, u(1), Hash32{});
  b.set_code(n, {}, {});
  for (size_t i = 0; i < 10; ++i) write(c1, c1_slots[i], Hash32{});
  b.end();
  b.begin(3);
  write(n, u(1), u(0x33));
  write(n, u(3), u(0x44));
  b.set_code(n, {}, code_y);
  for (size_t i = 0; i < 5; ++i) write(c1, c1_slots[i], u(1000 + i));
  write(c1, u(0xc1), u(0xc1c1));
  b.end();
  finish(3);

  // Block 1.
  b.begin(1);
  for (size_t i = 0; i < 5; ++i) write(c3, c3_slots[i], u(2000 + i));
  for (uint64_t i = 0; i < 3; ++i) write(c3, u(0x3000 + i), u(3000 + i));
  b.set_code(c2, code_pre(c2), code_z);
  write(c2, u(0), u(0x2222));  // slot 0 (totalSupply), zeroed in block 0
  write(c2, u(0x2000), u(0x2001));
  b.end();
  b.begin(2);
  write(c3, c3_slots[0], Hash32{});
  b.set_balance(e, balance_pre(e), Hash32{});
  b.end();
  finish(2);

  // Block 2.
  b.begin(1);
  wipe(c3);
  b.set_code(c0, code_pre(c0), {});
  wipe(n);
  b.set_code(n, code_pre(n), {});
  b.end();
  finish(1);

  // Block 3.
  b.begin(1);
  b.set_code(n, code_pre(n), code_x);
  write(n, u(1), u(0x11));
  write(n, u(2), u(0x22));
  write(c3, u(0x4000), u(4000));
  b.end();
  finish(1);
  return blocks;
}

void write_genesis(const state::Allocation& alloc, const std::string& path) {
  json j = json::object();
  for (const auto& [a, acc] : alloc.accounts) {
    json st = json::object();
    for (const auto& [k, v] : acc.storage) st[hex(k.data(), 32)] = hex(v.data(), 32);
    j[hex(a.data(), 20)] = {{"balance", workloads::u256_to_hex(acc.balance)}, {"nonce", acc.nonce},
                            {"code", hex(acc.code.data(), acc.code.size())}, {"storage", st}};
  }
  std::ofstream(path) << json{{"alloc", j}}.dump();
}

}  // namespace

TEST_CASE("bal recreate: wiped and re-created storage and code, in memory on both trees == from scratch") {
  const state::SyntheticState src(spec());
  const state::Allocation alloc = allocation_of(src);
  const std::vector<state::Block> blocks = recreate_blocks(src, Reference(alloc));
  REQUIRE(blocks.size() == 4);
  // No destruction reaches the trees: the diff only writes.
  for (const state::Block& blk : blocks)
    for (const state::AccountDiff& d : state::post_state_diff(blk.bal).accounts) CHECK(!d.destroyed);

  const Address c0 = src.address(0), c2 = src.address(2), c3 = src.address(3);
  Address n{}, e{};
  n[0] = 0xab, n[19] = 0x01;
  e[0] = 0xab, e[19] = 0x02;
  Reference ref(alloc);
  mpt::MptState m;
  m.load(alloc);
  bintrie::StateTree t(sha_ks());
  REQUIRE(t.apply_allocation(alloc) == "");
  std::vector<Hash32> mpt_roots, bt_roots;
  for (size_t i = 0; i < blocks.size(); ++i) {
    CAPTURE(i);
    ref.apply(blocks[i].bal);
    const state::StateDiff d = state::post_state_diff(blocks[i].bal);
    m.apply(d);
    REQUIRE(t.apply_diff(d) == "");
    const Hash32 mr = m.root(), br = t.commit();
    CHECK(mr == ref.mpt_root());
    CHECK(br == ref.bintrie_root());
    mpt_roots.push_back(mr), bt_roots.push_back(br);
    const auto a3 = m.account(c3);
    REQUIRE(a3);  // never removed
    if (i == 0 || i == 2) CHECK(a3->storage_root == mpt::kEmptyRoot);  // every slot zeroed
    else CHECK(a3->storage_root != mpt::kEmptyRoot);                    // written again
  }
  CHECK(mpt_roots[0] != mpt_roots[1]);
  // What the blocks left: N kept with nonce 1, no code and no storage after block 2, its
  // code and slots back after block 3; E an empty account (kept); contract 0 without code.
  const auto an = m.account(n), ae = m.account(e), a0 = m.account(c0), a2 = m.account(c2);
  REQUIRE(an);
  REQUIRE(ae);
  CHECK(an->nonce == 1);
  CHECK(an->storage_root != mpt::kEmptyRoot);
  CHECK(ae->nonce == 0);
  CHECK(ae->balance == Hash32{});
  CHECK(ae->code_hash == mpt::kEmptyCodeHash);
  CHECK(a0->code_hash == mpt::kEmptyCodeHash);
  CHECK(a0->storage_root != mpt::kEmptyRoot);
  CHECK(a2->code_hash != mpt::kEmptyCodeHash);
  // The binary trie keeps what was written: contract 2's fifth code chunk (of the 128-byte
  // code it had) outlives the 70-byte code that replaced it, and contract 3's zeroed slots
  // are present zero leaves.
  const bintrie::KeyScheme ks = sha_ks();
  CHECK(t.tree().get(bintrie::code_chunk_key(ks, c2, 4)).has_value());
  state::AccountRecord r3;
  src.account(3, &r3);
  REQUIRE(!r3.storage.empty());
  const auto zero_leaf = t.tree().get(bintrie::storage_slot_key(ks, c3, r3.storage.back().first));
  REQUIRE(zero_leaf.has_value());
  CHECK(*zero_leaf == bintrie::Hash32{});
}

TEST_CASE("bal recreate: statetree apply == root --alloc --blocks == from scratch, per block, both trees") {
  const state::SyntheticState src(spec());
  const state::Allocation alloc = allocation_of(src);
  const std::vector<state::Block> blocks = recreate_blocks(src, Reference(alloc));
  std::vector<std::string> want_mpt, want_bt;
  {
    Reference ref(alloc);
    for (const state::Block& blk : blocks) {
      ref.apply(blk.bal);
      const Hash32 mr = ref.mpt_root(), br = ref.bintrie_root();
      want_mpt.push_back(hex(mr.data(), 32)), want_bt.push_back(hex(br.data(), 32));
    }
  }
  const std::string gen = tmp_path("genesis.json"), all = tmp_path("all.bal"), first = tmp_path("first.bal"),
                    last = tmp_path("last.bal");
  write_genesis(alloc, gen);
  REQUIRE(!workloads::write_block_file(all, blocks));
  REQUIRE(!workloads::write_block_file(first, std::vector<state::Block>(blocks.begin(), blocks.begin() + 3)));
  REQUIRE(!workloads::write_block_file(last, std::vector<state::Block>(blocks.begin() + 3, blocks.end())));
  const std::string c3 = hex(src.address(3).data(), 20);
  for (const char* tree : {"mpt", "bintrie"}) {
    CAPTURE(tree);
    const bool bt = std::string(tree) == "bintrie";
    const std::vector<std::string>& want = bt ? want_bt : want_mpt;
    auto mem = run_statetree(std::string("root --tree ") + tree + " --alloc " + gen + " --blocks " + all + " --json");
    REQUIRE_MESSAGE(mem.exit_code == 0, mem.err);
    const json mj = json::parse(mem.out);
    REQUIRE(mj["blocks"].size() == 4);
    for (size_t i = 0; i < 4; ++i) CHECK(mj["blocks"][i]["root"] == want[i]);

    // On disk: the whole file, and the same blocks in two files (three, then one).
    const std::string db = tmp_path(std::string("db_") + tree), db2 = tmp_path(std::string("db2_") + tree);
    const std::string build = std::string("build --tree ") + tree +
                              " --accounts 60 --contracts 4 --slots-per-contract 50 --seed 3 --db ";
    REQUIRE(run_statetree(build + db).exit_code == 0);
    REQUIRE(run_statetree(build + db2).exit_code == 0);
    auto ap = run_statetree("apply --db " + db + " --blocks " + all + " --json");
    REQUIRE_MESSAGE(ap.exit_code == 0, ap.err);
    const json aj = json::parse(ap.out);
    REQUIRE(aj["blocks"].size() == 4);
    for (size_t i = 0; i < 4; ++i) CHECK(aj["blocks"][i]["root"] == want[i]);
    CHECK(run_statetree("verify --db " + db).exit_code == 0);

    auto ap1 = run_statetree("apply --db " + db2 + " --blocks " + first + " --json");
    REQUIRE_MESSAGE(ap1.exit_code == 0, ap1.err);
    CHECK(json::parse(ap1.out)["root"] == want[2]);
    CHECK(run_statetree("verify --db " + db2).exit_code == 0);
    // After block 2 contract 3 holds no storage: on disk its account says the empty root (MPT).
    auto g = run_statetree("get --db " + db2 + " --address " + c3 + " --json");
    REQUIRE_MESSAGE(g.exit_code == 0, g.err);
    const json gj = json::parse(g.out);
    CHECK(gj["exists"] == true);
    if (!bt) CHECK(gj["storage_root"] == hex(mpt::kEmptyRoot.data(), 32));
    auto ap2 = run_statetree("apply --db " + db2 + " --blocks " + last + " --json");
    REQUIRE_MESSAGE(ap2.exit_code == 0, ap2.err);
    CHECK(json::parse(ap2.out)["root"] == want[3]);
    CHECK(run_statetree("verify --db " + db2).exit_code == 0);
    std::filesystem::remove_all(db);
    std::filesystem::remove_all(db2);
  }
  for (const std::string& f : {gen, all, first, last}) std::filesystem::remove(f);
}
