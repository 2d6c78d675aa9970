// bintrie_state_reference: the state model (see bintrie_state_reference.h). Deliberately naive.
#include "tests/reference/bintrie_state_reference.h"

#include <cstring>

#include "kernels/keccak256.h"

namespace st::reference {
namespace {

// A 256-bit big-endian number from a small one.
RefBytes32 u256(uint64_t v) {
  RefBytes32 out{};
  for (int i = 0; i < 8; ++i) out[31 - i] = uint8_t(v >> (8 * i));
  return out;
}

RefBytes32 header_key(const st::state::Address& a, uint8_t sub) { return ref_tree_key(a, RefBytes32{}, sub); }

RefBytes32 empty_code_hash() {
  RefBytes32 h;
  st::kernels::keccak256(nullptr, 0, h.data());
  return h;
}

}  // namespace

RefBytes32 ref_tree_key(const st::state::Address& a, const RefBytes32& tree_index_be, uint8_t sub) {
  uint8_t msg[64] = {};
  std::memcpy(msg + 12, a.data(), 20);  // address32 = 12 zero bytes || address20
  std::memcpy(msg + 32, tree_index_be.data(), 32);
  RefBytes32 h;
  ref_sha256_openssl(msg, 64, h.data());
  h[31] = sub;
  return h;
}

std::vector<RefBytes32> ref_chunkify(const std::vector<uint8_t>& code) {
  const size_t n = (code.size() + 30) / 31;
  std::vector<bool> is_push_data(n * 31, false);
  for (size_t pc = 0; pc < code.size(); ++pc) {
    if (code[pc] < 0x60 || code[pc] > 0x7f) continue;
    const size_t data = code[pc] - 0x60 + 1;  // PUSH1 .. PUSH32
    for (size_t k = 1; k <= data && pc + k < is_push_data.size(); ++k) is_push_data[pc + k] = true;
    pc += data;
  }
  std::vector<RefBytes32> chunks(n);
  for (size_t j = 0; j < n; ++j) {
    uint8_t pending = 0;
    while (pending < 31 && is_push_data[31 * j + pending]) ++pending;
    chunks[j][0] = pending;
    for (size_t k = 0; k < 31; ++k)
      if (31 * j + k < code.size()) chunks[j][1 + k] = code[31 * j + k];
  }
  return chunks;
}

void BintrieStateReference::update_account(const st::state::Address& a, uint64_t nonce, const st::state::U256& balance,
                                           uint64_t code_size, const RefBytes32& code_hash) {
  RefBytes32 basic{};  // [0] version 0, [1..4] reserved, [5..7] code size, [8..15] nonce, [16..31] balance
  basic[5] = uint8_t(code_size >> 16);
  basic[6] = uint8_t(code_size >> 8);
  basic[7] = uint8_t(code_size);
  for (int i = 0; i < 8; ++i) basic[8 + i] = uint8_t(nonce >> (56 - 8 * i));
  for (int i = 16; i < 32; ++i) basic[i] = balance[i];
  leaves_[header_key(a, 0)] = basic;
  leaves_[header_key(a, 1)] = code_hash;
}

void BintrieStateReference::delete_account(const st::state::Address& a) {
  leaves_[header_key(a, 0)] = RefBytes32{};
  leaves_[header_key(a, 1)] = RefBytes32{};
}

void BintrieStateReference::update_code(const st::state::Address& a, const std::vector<uint8_t>& code) {
  const std::vector<RefBytes32> chunks = ref_chunkify(code);
  for (size_t i = 0; i < chunks.size(); ++i) {
    const uint64_t pos = 128 + i;  // CODE_OFFSET + i
    leaves_[ref_tree_key(a, u256(pos >> 8), uint8_t(pos & 0xff))] = chunks[i];
  }
}

void BintrieStateReference::update_storage(const st::state::Address& a, const RefBytes32& slot, const RefBytes32& value) {
  bool small = slot[31] < 64;
  for (int i = 0; i < 31; ++i) small = small && slot[i] == 0;
  if (small) {
    leaves_[header_key(a, uint8_t(64 + slot[31]))] = value;
    return;
  }
  // pos = 2^248 + s; tree_index = pos >> 8 = 2^240 + (s >> 8); sub = s & 0xff.
  RefBytes32 ti{};
  for (int i = 1; i < 32; ++i) ti[i] = slot[i - 1];
  unsigned carry = 1;  // 2^240 is bit 0 of byte 1
  for (int i = 1; i >= 0 && carry; --i) {
    const unsigned v = ti[i] + carry;
    ti[i] = uint8_t(v);
    carry = v >> 8;
  }
  leaves_[ref_tree_key(a, ti, slot[31])] = value;
}

void BintrieStateReference::apply_allocation(const st::state::Allocation& alloc) {
  for (const auto& [a, acc] : alloc.accounts) {
    RefBytes32 ch;
    st::kernels::keccak256(acc.code.data(), acc.code.size(), ch.data());
    update_account(a, acc.nonce, acc.balance, acc.code.size(), ch);
    update_code(a, acc.code);
    for (const auto& [slot, v] : acc.storage)
      if (v != RefBytes32{}) update_storage(a, slot, v);  // SetState of zero on a fresh slot: nothing
  }
}

std::optional<BintrieStateReference::Account> BintrieStateReference::get_account(const st::state::Address& a) const {
  const auto b = leaves_.find(header_key(a, 0));
  const auto c = leaves_.find(header_key(a, 1));
  const bool absent = (b == leaves_.end() && c == leaves_.end()) ||
                      (b != leaves_.end() && c != leaves_.end() && b->second == RefBytes32{} && c->second == RefBytes32{});
  if (absent) return std::nullopt;
  Account acc;
  const RefBytes32 basic = b == leaves_.end() ? RefBytes32{} : b->second;
  for (int i = 0; i < 8; ++i) acc.nonce = acc.nonce << 8 | basic[8 + i];
  acc.code_size = uint64_t(basic[5]) << 16 | uint64_t(basic[6]) << 8 | basic[7];
  for (int i = 16; i < 32; ++i) acc.balance[i] = basic[i];
  acc.code_hash = c == leaves_.end() ? empty_code_hash() : c->second;
  return acc;
}

void BintrieStateReference::apply_diff(const st::state::StateDiff& diff) {
  for (const st::state::AccountDiff& d : diff.accounts) {
    if (d.destroyed) delete_account(d.address);
    if (d.nonce || d.balance || d.code) {
      Account acc = get_account(d.address).value_or(Account{0, 0, {}, empty_code_hash()});
      if (d.nonce) acc.nonce = *d.nonce;
      if (d.balance) acc.balance = *d.balance;
      if (d.code) {
        acc.code_size = d.code->size();
        st::kernels::keccak256(d.code->data(), d.code->size(), acc.code_hash.data());
      }
      update_account(d.address, acc.nonce, acc.balance, acc.code_size, acc.code_hash);
      if (d.code) update_code(d.address, *d.code);
    }
    for (const auto& [slot, v] : d.storage_writes) update_storage(d.address, slot, v);
  }
}

RefBytes32 BintrieStateReference::root() const { return bintrie_reference_root(leaves_, ref_sha256_openssl); }

}  // namespace st::reference
