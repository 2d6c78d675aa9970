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
  for (const auto& ad : diff.accounts)
    if (std::string err = check_account_diff(ad); !err.empty()) return err;
  AccountWrites aw;
  for (const auto& ad : diff.accounts) {
    account_diff_writes(ks_, ad, code_hash_keccak256, &aw);
    if (aw.patch.active()) {
      Hash32 code_hash_k = aw.header;
      code_hash_k[31] = kCodeHashLeafKey;
      const HeaderLeaves h = resolve_header(aw.patch, tree_.get(aw.header), tree_.get(code_hash_k), code_hash_keccak256);
      aw.leaves.push_back({aw.header, h.basic_data});
      if (h.code_hash) aw.leaves.push_back({code_hash_k, *h.code_hash});
    }
    tree_.apply(aw.leaves);
  }
  return "";
}

}  // namespace st::bintrie
