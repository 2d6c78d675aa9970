// gas_schedule: see gas_schedule.h.
#include "workloads/gas_schedule.h"

#include <algorithm>
#include <cstring>

#include "kernels/keccak256.h"
#include "kernels/support/check.h"

namespace st::workloads::gas {

namespace {
bool zero(const state::U256& v) {
  return std::all_of(v.begin(), v.end(), [](uint8_t b) { return b == 0; });
}
bintrie::Stem stem_of(const bintrie::Hash32& key) {
  bintrie::Stem s;
  std::memcpy(s.data(), key.data(), s.size());
  return s;
}
}  // namespace

uint64_t mpt_account_access(bool warm) { return warm ? kWarmStorageRead : kColdAccountAccess; }
uint64_t mpt_sload(bool warm) { return warm ? kWarmStorageRead : kColdSload; }

SstoreCharge mpt_sstore(bool warm, const state::U256& o, const state::U256& c, const state::U256& v) {
  SstoreCharge r;
  r.gas = warm ? 0 : kColdSload;
  if (v == c) {
    r.gas += kWarmStorageRead;
    return r;
  }
  if (c == o) {
    if (zero(o)) {
      r.gas += kSstoreSet;
    } else {
      r.gas += kSstoreReset;
      if (zero(v)) r.refund += int64_t(kSstoreClearsRefund);
    }
    return r;
  }
  r.gas += kWarmStorageRead;  // a dirty slot
  if (!zero(o)) {
    if (zero(c)) r.refund -= int64_t(kSstoreClearsRefund);
    else if (zero(v)) r.refund += int64_t(kSstoreClearsRefund);
  }
  if (v == o) r.refund += int64_t(zero(o) ? kSstoreSet - kWarmStorageRead : kSstoreReset - kWarmStorageRead);
  return r;
}

uint64_t WitnessCharges::read(const bintrie::Hash32& key) {
  uint64_t g = 0;
  if (stems_read_.insert(stem_of(key)).second) g += kWitnessBranchCost;
  if (leaves_read_.insert(key).second) g += kWitnessChunkCost;
  return g;
}

uint64_t WitnessCharges::write(const bintrie::Hash32& key) {
  uint64_t g = read(key);
  if (stems_edited_.insert(stem_of(key)).second) g += kSubtreeEditCost;
  if (leaves_edited_.insert(key).second) g += kChunkEditCost;
  return g;  // + kChunkFillCost for a new leaf in the EIP text; go-ethereum does not charge it
}

uint64_t WitnessCharges::peek_read(const bintrie::Hash32& key) const {
  return (stems_read_.count(stem_of(key)) ? 0 : kWitnessBranchCost) + (leaves_read_.count(key) ? 0 : kWitnessChunkCost);
}

uint64_t WitnessCharges::peek_write(const bintrie::Hash32& key) const {
  return peek_read(key) + (stems_edited_.count(stem_of(key)) ? 0 : kSubtreeEditCost) +
         (leaves_edited_.count(key) ? 0 : kChunkEditCost);
}

uint64_t calldata_gas(std::span<const uint8_t> data) {
  uint64_t g = 0;
  for (uint8_t b : data) g += b ? kCalldataNonZeroByte : kCalldataZeroByte;
  return g;
}

uint64_t intrinsic_gas(std::span<const uint8_t> calldata, uint64_t al_addresses, uint64_t al_slots) {
  return kTxBase + calldata_gas(calldata) + al_addresses * kAccessListAddress + al_slots * kAccessListSlot;
}

uint64_t apply_refund(uint64_t gas, int64_t refund) {
  if (refund <= 0) return gas;
  return gas - std::min<uint64_t>(uint64_t(refund), gas / kMaxRefundQuotient);
}

std::vector<uint8_t> attack_calldata(uint64_t first, uint64_t count) {
  static const char sig[] = "run(uint256,uint256)";
  uint8_t h[32];
  kernels::keccak256(reinterpret_cast<const uint8_t*>(sig), sizeof sig - 1, h);
  std::vector<uint8_t> d(4 + 64, 0);
  std::memcpy(d.data(), h, 4);
  for (int i = 0; i < 8; ++i) {
    d[4 + 31 - size_t(i)] = uint8_t(first >> (8 * i));
    d[4 + 63 - size_t(i)] = uint8_t(count >> (8 * i));
  }
  return d;
}

uint64_t per_call_gas(Call call, Tree tree, uint64_t evm_work) {
  ST_CHECK(tree == Tree::mpt || tree == Tree::bintrie, "gas schedules exist for the MPT and the binary trie");
  state::U256 zero_v{}, one{};
  one[31] = 1;
  if (tree == Tree::mpt) {
    if (call == Call::balance_of) return evm_work + mpt_sload(false);
    return evm_work + mpt_sstore(false, zero_v, zero_v, one).gas;
  }
  WitnessCharges w;  // a slot on a stem the transaction has not touched
  bintrie::Hash32 key{};
  key[0] = 0x5a;
  return evm_work + (call == Call::balance_of ? w.sload(key) : w.sstore(key));
}

}  // namespace st::workloads::gas
