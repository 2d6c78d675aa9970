// state_tree: Allocation / StateDiff over the mutable binary trie (see state_tree.h).
#include "engine/bintrie/state_tree.h"

#include "kernels/keccak256.h"

namespace st::bintrie {

void code_hash_keccak256(const uint8_t* code, size_t len, uint8_t* out32) { st::kernels::keccak256(code, len, out32); }

std::string StateTree::apply_allocation(const st::state::Allocation& alloc) {
  for (size_t i = 0; i < alloc.accounts.size(); ++i) {
    const std::string err = check_account(alloc.accounts[i].second);
    if (!err.empty()) return "account #" + std::to_string(i) + ": " + err;
  }
  const std::vector<Entry> leaves = allocation_leaves(ks_, alloc, code_hash_keccak256);
  tree_.apply(leaves);
  return "";
}

std::string StateTree::apply_diff(const st::state::StateDiff& diff) {
  for (const auto& ad : diff.accounts) {
    if (ad.balance) {
      for (int i = 0; i < 16; ++i)
        if ((*ad.balance)[i] != 0) return "balance does not fit 128 bits";
    }
    if (ad.code && ad.code->size() >= (size_t(1) << 24)) return "code longer than 2^24-1 bytes";
  }
  std::vector<Entry> writes;
  for (const auto& ad : diff.accounts) {
    writes.clear();
    const Hash32 header = basic_data_key(ks_, ad.address);
    Hash32 code_hash_k = header;
    code_hash_k[31] = kCodeHashLeafKey;
    BasicData cur;
    if (!ad.destroyed) {
      if (auto v = tree_.get(header)) cur = parse_basic_data(*v);
    }
    bool write_basic = ad.destroyed;
    if (ad.destroyed) writes.push_back({code_hash_k, Hash32{}});
    if (ad.nonce) { cur.nonce = *ad.nonce; write_basic = true; }
    if (ad.balance) { cur.balance_be = *ad.balance; write_basic = true; }
    if (ad.code) {
      cur.code_size = uint32_t(ad.code->size());
      write_basic = true;
      Hash32 ch;
      code_hash_keccak256(ad.code->data(), ad.code->size(), ch.data());
      writes.push_back({code_hash_k, ch});
      const std::vector<Hash32> chunks = chunkify_code(*ad.code);
      for (size_t i = 0; i < chunks.size(); ++i) writes.push_back({code_chunk_key(ks_, ad.address, i), chunks[i]});
    }
    // A new account gets the empty code hash with its basic data (go-ethereum's UpdateAccount
    // writes both leaves; the on-disk committer does the same).
    if (write_basic && !ad.code && !ad.destroyed && !tree_.get(code_hash_k)) {
      static const uint8_t kNothing = 0;
      Hash32 empty;
      code_hash_keccak256(&kNothing, 0, empty.data());
      writes.push_back({code_hash_k, empty});
    }
    // After destruction alone this is the all-zero leaf (cur was reset).
    if (write_basic) writes.push_back({header, basic_data_leaf(cur.nonce, cur.balance_be, cur.code_size)});
    for (const auto& [slot, value] : ad.storage_writes) writes.push_back({storage_slot_key(ks_, ad.address, slot), value});
    tree_.apply(writes);
  }
  return "";
}

}  // namespace st::bintrie
