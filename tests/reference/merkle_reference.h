// merkle_reference: the slow, obviously correct Merkle oracle (OpenSSL SHA-256, vectors of
// byte arrays, one hash at a time, straight from the spec's wording).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace st::reference {

using Digest32 = std::array<uint8_t, 32>;

Digest32 sha256_openssl(const uint8_t* data, size_t len);

// Root of the leaves; `twice` = double SHA-256 everywhere. Precondition: leaves non-empty.
Digest32 merkle_root(const std::vector<std::vector<uint8_t>>& leaves, bool twice, bool* mutated = nullptr);

// Synthetic benchmark leaf i: 32 bytes each equal to i mod 256.
std::vector<std::vector<uint8_t>> synthetic_leaves(size_t n);

}  // namespace st::reference
