// account_leaves: an account's leaves at genesis and a block diff's writes (see account_leaves.h).
#include "engine/bintrie/account_leaves.h"

#include <span>
#include <string>

namespace st::bintrie {

namespace {

Hash32 with_sub(const Hash32& key, unsigned sub) {
  Hash32 k = key;
  k[31] = uint8_t(sub);
  return k;
}

// The code's chunks as writes: chunks < 128 share the header stem; the others derive one
// stem per tree index.
void append_code_chunks(const KeyScheme& ks, const Address& addr, const Hash32& header, std::span<const uint8_t> code,
                        std::vector<Entry>* out) {
  const std::vector<Hash32> chunks = chunkify_code(code);
  Hash32 last_ti{};
  Hash32 last_key{};
  bool have_last = false;
  for (size_t i = 0; i < chunks.size(); ++i) {
    Hash32 ti;
    uint8_t sub;
    code_chunk_position(i, &ti, &sub);
    Hash32 key;
    if (ti == Hash32{}) {
      key = with_sub(header, sub);
    } else {
      if (!have_last || ti != last_ti) { last_key = get_tree_key(ks, addr, ti, 0); last_ti = ti; have_last = true; }
      key = with_sub(last_key, sub);
    }
    out->push_back({key, chunks[i]});
  }
}

Hash32 storage_key(const KeyScheme& ks, const Address& addr, const Hash32& header, const Hash32& slot) {
  Hash32 ti;
  uint8_t sub;
  storage_slot_position(slot, &ti, &sub);
  return ti == Hash32{} ? with_sub(header, sub) : get_tree_key(ks, addr, ti, sub);
}

}  // namespace

void append_account_leaves(const KeyScheme& ks, const Address& addr, const st::state::Account& account,
                           const Hash32& code_hash, std::vector<Entry>* out) {
  // The header stem holds basic data, code hash, slots < 64 and chunks < 128: derive its
  // stem once.
  const Hash32 header = basic_data_key(ks, addr);
  out->push_back({header, basic_data_leaf(account.nonce, account.balance, uint32_t(account.code.size()))});
  out->push_back({with_sub(header, kCodeHashLeafKey), code_hash});
  append_code_chunks(ks, addr, header, account.code, out);
  for (const auto& [slot, value] : account.storage) {
    if (value == Hash32{}) continue;
    out->push_back({storage_key(ks, addr, header, slot), value});
  }
}

std::vector<Entry> allocation_leaves(const KeyScheme& ks, const st::state::Allocation& alloc, CodeHashFn code_hash) {
  std::vector<Entry> out;
  for (const auto& [addr, account] : alloc.accounts) {
    Hash32 ch;
    code_hash(account.code.data(), account.code.size(), ch.data());
    append_account_leaves(ks, addr, account, ch, &out);
  }
  return out;
}

std::string check_account(const st::state::Account& account) {
  for (int i = 0; i < 16; ++i)
    if (account.balance[i] != 0) return "balance does not fit 128 bits (the basic-data leaf holds 16 bytes)";
  if (account.code.size() >= (size_t(1) << 24)) return "code longer than 2^24-1 bytes";
  return "";
}

std::string check_account_diff(const st::state::AccountDiff& diff) {
  if (diff.balance)
    for (int i = 0; i < 16; ++i)
      if ((*diff.balance)[i] != 0) return "balance does not fit 128 bits (the basic-data leaf holds 16 bytes)";
  if (diff.code && diff.code->size() >= (size_t(1) << 24)) return "code longer than 2^24-1 bytes";
  return "";
}

void account_diff_writes(const KeyScheme& ks, const st::state::AccountDiff& diff, CodeHashFn code_hash,
                         AccountWrites* out) {
  out->header = basic_data_key(ks, diff.address);
  out->leaves.clear();
  HeaderPatch& p = out->patch;
  p = HeaderPatch{};
  p.reset = diff.destroyed;
  p.fields = diff.nonce || diff.balance || diff.code;
  p.nonce = diff.nonce;
  p.balance_be = diff.balance;
  if (diff.code) {
    p.code_size = uint32_t(diff.code->size());
    Hash32 h;
    code_hash(diff.code->data(), diff.code->size(), h.data());
    p.code_hash = h;
    append_code_chunks(ks, diff.address, out->header, *diff.code, &out->leaves);
  }
  for (const auto& [slot, value] : diff.storage_writes)
    out->leaves.push_back({storage_key(ks, diff.address, out->header, slot), value});
}

void merge_header_patch(HeaderPatch* into, const HeaderPatch& later) {
  if (later.reset) {  // a destruction forgets what came before it
    *into = later;
    return;
  }
  into->fields |= later.fields;
  if (later.nonce) into->nonce = later.nonce;
  if (later.balance_be) into->balance_be = later.balance_be;
  if (later.code_size) into->code_size = later.code_size;
  if (later.code_hash) into->code_hash = later.code_hash;
}

bool account_exists(const std::optional<Hash32>& basic_data_leaf, const std::optional<Hash32>& code_hash_leaf) {
  if (!basic_data_leaf && !code_hash_leaf) return false;
  return !(basic_data_leaf && code_hash_leaf && *basic_data_leaf == Hash32{} && *code_hash_leaf == Hash32{});
}

HeaderLeaves resolve_header(const HeaderPatch& patch, const std::optional<Hash32>& old_basic_data,
                            const std::optional<Hash32>& old_code_hash, CodeHashFn code_hash) {
  HeaderLeaves out;
  if (!patch.fields) {  // destroyed, nothing recreated: go-ethereum's DeleteAccount
    out.code_hash = Hash32{};
    return out;
  }
  const BasicData old = patch.reset || !old_basic_data ? BasicData{} : parse_basic_data(*old_basic_data);
  out.basic_data = basic_data_leaf(patch.nonce.value_or(old.nonce), patch.balance_be.value_or(old.balance_be),
                                   patch.code_size.value_or(old.code_size));
  const bool existed = !patch.reset && account_exists(old_basic_data, old_code_hash);
  if (patch.code_hash) {
    out.code_hash = patch.code_hash;
  } else if (!existed || !old_code_hash) {  // GetAccount reads a missing code hash as the empty code's
    static const uint8_t kNothing = 0;
    Hash32 empty;
    code_hash(&kNothing, 0, empty.data());
    out.code_hash = empty;
  }
  return out;
}

}  // namespace st::bintrie
