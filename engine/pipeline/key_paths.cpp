// key_paths: see key_paths.h.
#include "engine/pipeline/key_paths.h"

#include "engine/bintrie/keys.h"
#include "kernels/keccak256.h"

namespace st::pipeline {

void path_first_bytes(const io::StoreParams& params, std::span<const state::StateKey> keys, std::vector<uint8_t>* out) {
  out->resize(keys.size());
  state::Hash32 path{};
  if (params.tree_kind == io::TreeKind::bintrie) {
    const bintrie::KeyScheme ks{bintrie::make_hasher(params.hash_kind), bintrie::TreeIndexEndian::big};
    for (size_t i = 0; i < keys.size(); ++i) {
      const state::StateKey& k = keys[i];
      path = k.slot ? bintrie::storage_slot_key(ks, k.address, *k.slot) : bintrie::basic_data_key(ks, k.address);
      (*out)[i] = path[0];
    }
    return;
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    const state::StateKey& k = keys[i];
    if (k.slot) kernels::keccak256(k.slot->data(), 32, path.data());
    else kernels::keccak256(k.address.data(), k.address.size(), path.data());
    (*out)[i] = path[0];
  }
}

}  // namespace st::pipeline
