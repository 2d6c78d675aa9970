// key_paths: see key_paths.h.
#include "engine/pipeline/key_paths.h"

#include "engine/bintrie/keys.h"
#include "kernels/keccak256.h"

namespace st::pipeline {

void KeyPaths::compute(const io::StoreParams& params, std::span<const state::StateKey> keys) {
  first_byte.resize(keys.size());
  state::Hash32 path{};
  if (params.tree_kind == io::TreeKind::bintrie) {
    const bintrie::KeyScheme ks{bintrie::make_hasher(params.hash_kind), bintrie::TreeIndexEndian::big};
    for (size_t i = 0; i < keys.size(); ++i) {
      const state::StateKey& k = keys[i];
      path = k.slot ? bintrie::storage_slot_key(ks, k.address, *k.slot) : bintrie::basic_data_key(ks, k.address);
      first_byte[i] = path[0];
    }
    return;
  }
  // MPT: the accounts one by one, the slots (most keys) through the 8-lane batch.
  slot_msgs_.clear();
  slot_pos_.clear();
  for (size_t i = 0; i < keys.size(); ++i) {
    const state::StateKey& k = keys[i];
    if (k.slot) {
      slot_msgs_.push_back(k.slot->data());
      slot_pos_.push_back(uint32_t(i));
    } else {
      kernels::keccak256(k.address.data(), k.address.size(), path.data());
      first_byte[i] = path[0];
    }
  }
  digests_.resize(32 * slot_msgs_.size());
  kernels::keccak256_batch32(slot_msgs_.data(), digests_.data(), slot_msgs_.size());
  for (size_t j = 0; j < slot_pos_.size(); ++j) first_byte[slot_pos_[j]] = digests_[32 * j];
}

}  // namespace st::pipeline
