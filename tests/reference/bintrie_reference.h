// bintrie_reference: a slow, obviously correct EIP-7864 binary trie oracle, written straight
// from the spec's recursive definition (T(empty) = Empty, T({s}) = Stem(s), else
// Internal(T(S0), T(S1)) split on the next bit), with full 256-leaf stem subtrees and the
// zero rule applied everywhere. SHA-256 comes from OpenSSL (independent of our kernels).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace st::reference {

using RefBytes32 = std::array<uint8_t, 32>;
using RefHashFn = void (*)(const uint8_t* data, size_t len, uint8_t* out32);

void ref_sha256_openssl(const uint8_t* data, size_t len, uint8_t* out32);

// Root of a set of writes (later writes to the same key win).
RefBytes32 bintrie_reference_root(const std::vector<std::pair<RefBytes32, RefBytes32>>& writes, RefHashFn H);

// Same, over a key -> value map.
RefBytes32 bintrie_reference_root(const std::map<RefBytes32, RefBytes32>& kv, RefHashFn H);

}  // namespace st::reference
