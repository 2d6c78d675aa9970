// gas_schedule_test: the published per-call figures (2,727 balanceOf on both trees; 22,897
// approve on the MPT, 6,397 on the binary trie) come out of the rules; the SSTORE rules of
// EIP-2200 + EIP-2929 + EIP-3529 case by case; go-ethereum's EIP-4762 access events (stem
// and leaf, read and edit, once per transaction, no chunk fill); transaction costs.
#include <doctest/doctest.h>

#include "engine/bintrie/keys.h"
#include "workloads/gas_schedule.h"

using namespace st::workloads::gas;
using st::state::U256;

namespace {
U256 v(uint64_t x) {
  U256 r{};
  for (int i = 31; i >= 24; --i, x >>= 8) r[size_t(i)] = uint8_t(x);
  return r;
}
}  // namespace

TEST_CASE("gas: the published per-call totals follow from the rules") {
  CHECK(per_call_gas(Call::balance_of, Tree::mpt, kEvmWorkBalanceOf) == 2727);
  CHECK(per_call_gas(Call::balance_of, Tree::bintrie, kEvmWorkBalanceOf) == 2727);
  CHECK(per_call_gas(Call::approve, Tree::mpt, kEvmWorkApprove) == 22897);
  CHECK(per_call_gas(Call::approve, Tree::bintrie, kEvmWorkApprove) == 6397);
  // The EVM work is a parameter.
  CHECK(per_call_gas(Call::approve, Tree::mpt, 0) == 22100);
  CHECK(per_call_gas(Call::approve, Tree::bintrie, 0) == 5600);
}

TEST_CASE("gas: SSTORE per EIP-2200 with EIP-2929 cold access and EIP-3529 refunds") {
  // (warm, original, current, new) -> gas, refund
  auto s = [](bool warm, uint64_t o, uint64_t c, uint64_t n) { return mpt_sstore(warm, v(o), v(c), v(n)); };
  CHECK(s(false, 0, 0, 1).gas == 22100);
  CHECK(s(false, 0, 0, 1).refund == 0);
  CHECK(s(true, 0, 0, 0).gas == 100);      // no-op
  CHECK(s(true, 1, 1, 2).gas == 2900);     // update
  CHECK(s(true, 1, 1, 0).gas == 2900);     // clear
  CHECK(s(true, 1, 1, 0).refund == 4800);
  CHECK(s(true, 1, 2, 0).refund == 4800);  // dirty, then cleared
  CHECK(s(true, 1, 0, 2).refund == -4800); // a clear undone
  CHECK(s(true, 1, 2, 1).refund == 2800);  // restored to a non-zero original
  CHECK(s(true, 1, 2, 1).gas == 100);
  CHECK(s(true, 0, 1, 0).refund == 19900); // restored to a zero original
  CHECK(s(true, 1, 0, 1).refund == -4800 + 2800);
  CHECK(s(false, 1, 1, 1).gas == 2200);    // cold no-op
  CHECK(mpt_sload(false) == 2100);
  CHECK(mpt_sload(true) == 100);
  CHECK(mpt_account_access(false) == 2600);
  CHECK(mpt_account_access(true) == 100);
  // The refund cap: at most a fifth of the gas used.
  CHECK(apply_refund(100000, 4800) == 95200);
  CHECK(apply_refund(10000, 4800) == 8000);
  CHECK(apply_refund(10000, -5) == 10000);
}

TEST_CASE("gas: EIP-4762 access events as go-ethereum charges them") {
  WitnessCharges w;
  st::bintrie::Hash32 a{}, b{}, c{};
  a[0] = 1;
  b = a;
  b[31] = 7;  // same stem, another leaf
  c[0] = 2;   // another stem
  CHECK(w.read(a) == 1900 + 200);
  CHECK(w.read(a) == 0);
  CHECK(w.sload(a) == 100);  // warm
  CHECK(w.read(b) == 200);   // the stem is already in the witness
  CHECK(w.write(b) == 3000 + 500);
  CHECK(w.write(b) == 0);
  CHECK(w.sstore(b) == 100);
  CHECK(w.write(a) == 500);  // the stem is already edited
  CHECK(w.write(c) == 1900 + 200 + 3000 + 500);  // no CHUNK_FILL_COST
  // A contract's basic data and its first 128 code chunks share its header stem: the CALL
  // witness costs 2,100 (2,000 over the warm 100 the EVM work holds), each chunk 200.
  st::bintrie::KeyScheme ks;
  ks.hasher = st::bintrie::make_hasher(st::bintrie::HashKind::sha256);
  st::state::Address token{};
  token[19] = 0x42;
  WitnessCharges t;
  CHECK(t.read(st::bintrie::basic_data_key(ks, token)) - kWarmStorageRead == 2000);
  uint64_t chunks = 0;
  for (uint64_t i = 0; i < kChunksBalanceOf; ++i) chunks += t.read(st::bintrie::code_chunk_key(ks, token, i));
  CHECK(chunks == 11 * 200);
}

TEST_CASE("gas: transaction intrinsic cost, calldata bytes counted") {
  const std::vector<uint8_t> d = attack_calldata(1, 300);
  REQUIRE(d.size() == 68);
  size_t nz = 0;
  for (uint8_t x : d) nz += x != 0;
  CHECK(calldata_gas(d) == 16 * nz + 4 * (68 - nz));
  CHECK(intrinsic_gas(d, 1, 0) == 21000 + 2400 + calldata_gas(d));
  CHECK(intrinsic_gas({}, 0, 0) == 21000);
  CHECK(intrinsic_gas({}, 1, 2) == 21000 + 2400 + 2 * 1900);
  // run(uint256,uint256)'s selector is the first 4 bytes of its keccak256; 300 = 0x012c.
  CHECK(d[4 + 62] == 0x01);
  CHECK(d[4 + 63] == 0x2c);
  CHECK(d[4 + 31] == 0x01);
}
