// hasher: binds HashKind to the kernels (see hasher.h).
#include "engine/bintrie/hasher.h"

#include "kernels/blake3.h"
#include "kernels/support/check.h"
#include "kernels/sha256.h"

namespace st::bintrie {

std::optional<HashKind> hash_kind_from_name(std::string_view name) {
  if (name == "sha256") return HashKind::sha256;
  if (name == "blake3") return HashKind::blake3;
  return std::nullopt;
}

Hasher make_hasher(HashKind kind) {
  ST_CHECK(kind == HashKind::sha256 || kind == HashKind::blake3, "the binary trie hashes with SHA-256 or BLAKE3");
  Hasher h;
  h.kind = kind;
  if (kind == HashKind::sha256) {
    const auto& k = st::kernels::sha256_active();
    h.hash = k.hash;
    h.hash32_batch = k.hash32_batch;
    h.hash64_batch = k.hash64_batch;
  } else {
    h.hash = st::kernels::blake3;
    h.hash32_batch = st::kernels::blake3_hash32_batch;
    h.hash64_batch = st::kernels::blake3_hash64_batch;
  }
  return h;
}

}  // namespace st::bintrie
