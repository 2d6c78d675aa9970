// bintrie/block_tree_apply: the commit's apply and hash (bintrie/block_tree.h): each header
// patch resolved against its stem's old leaves (resolve_header: unchanged fields from the old
// basic data; code hash keccak256(code), or keccak256("") when the account did not exist),
// the writes applied to the tree (a patch's leaves after the stem's other writes: they win),
// then the tree's own commit hashes the dirty nodes level by level (MutableTree::commit).
// Invariant: every key the writes reach was resolved (BlockTree::resolve) before apply.
#include <cstring>

#include "engine/bintrie/keys.h"
#include "engine/persist/bintrie/block_tree.h"
#include "kernels/keccak256.h"

namespace st::persist::bintrie_commit {
namespace {

void code_hash_keccak256(const uint8_t* code, size_t len, uint8_t* out32) { kernels::keccak256(code, len, out32); }

}  // namespace

void BlockTree::apply() {
  entries_.clear();
  const size_t before = tree_.value_count();
  for (const StemWrites& w : writes_) {
    Hash32 key{};
    std::memcpy(key.data(), w.stem.data(), 31);
    for (const auto& [sub, v] : w.values) {
      key[31] = sub;
      entries_.push_back({key, v});
    }
    if (!w.patch) continue;
    auto old = [&](uint8_t sub) {
      key[31] = sub;
      return tree_.get(key);
    };
    const std::optional<Hash32> basic = old(bintrie::kBasicDataLeafKey), code = old(bintrie::kCodeHashLeafKey);
    const bintrie::HeaderLeaves h = bintrie::resolve_header(*w.patch, basic, code, code_hash_keccak256);
    key[31] = bintrie::kBasicDataLeafKey;
    entries_.push_back({key, h.basic_data});
    if (h.code_hash) {
      key[31] = bintrie::kCodeHashLeafKey;
      entries_.push_back({key, *h.code_hash});
    }
  }
  tree_.apply(entries_);
  new_leaves = int64_t(tree_.value_count()) - int64_t(before);
}

Hash32 BlockTree::hash() { return tree_.commit(); }

}  // namespace st::persist::bintrie_commit
