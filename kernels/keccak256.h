// keccak256: Ethereum's Keccak-256 (the original Keccak submission padding: 0x01 ... 0x80,
// rate 136 bytes, capacity 512 bits), NOT FIPS-202 SHA3-256 (which pads with 0x06).
//
// Tiers: "portable" (fully unrolled scalar Keccak-f[1600], lanes in local variables) and,
// where compiled in (STATETREE_HAVE_KECCAK256_AVX512) and supported by the CPU, "avx512x8":
// keccak256_batch runs 8 independent states, one per 64-bit lane of 25 zmm registers, and
// keccak256 runs one state in 25 xmm registers with AVX-512VL ternary-logic and rotates.
// The batch tier is chosen once (thread-safe static init) after a known-answer self-test
// (a failing self-test falls back to portable), or forced with keccak256_select.
//
// Invariants: pure functions, no allocation, no locks, no I/O, never throw. Inputs may be
// unaligned; len 0 is allowed (data may then be null). Outputs are 32 bytes per message
// and must not overlap the inputs of the same call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace st::kernels {

inline constexpr size_t kKeccak256DigestBytes = 32;
inline constexpr size_t kKeccak256RateBytes = 136;  // one absorbed block

// One message of any length -> out32[32].
void keccak256(const uint8_t* data, size_t len, uint8_t* out32);

// n independent messages: msgs[i] / lens[i] -> out[32*i .. 32*i+31].
void keccak256_batch(const uint8_t* const* msgs, const size_t* lens, uint8_t* out, size_t n);

// n messages of exactly 32 bytes each (hashed keys, slot keys): msgs[i][0..32) ->
// out[32*i .. 32*i+31]. Same digests as keccak256_batch with lens 32, without its per-message
// block scheduling (each message is one padded block).
void keccak256_batch32(const uint8_t* const* msgs, uint8_t* out, size_t n);

// Pull-fed batch, for producers that build each message just before it is hashed (the MPT
// commit encodes nodes from cache lines it prefetched: the kernel's permutations then run
// while those lines arrive). The kernel calls next(ctx, lane, &m) whenever one of its
// lanes (< kKeccak256PullLanes) is free; next returns false when there are no more
// messages. m.data[0, m.len) is hashed into m.out[0, 32). A message's bytes are read only
// until its digest is written, and a lane asks for its next message only after its
// previous digest was written, so a producer may keep one buffer per lane. Digests are
// written in no particular order; every digest is written before the call returns.
inline constexpr unsigned kKeccak256PullLanes = 8;
struct Keccak256Message {
  const uint8_t* data;
  size_t len;
  uint8_t* out;
};
using Keccak256Next = bool (*)(void* ctx, unsigned lane, Keccak256Message* m);
void keccak256_batch_pull(Keccak256Next next, void* ctx);

// The tier keccak256_batch uses in this process: "portable" or "avx512x8".
const char* keccak256_kernel_name();

// Forces the batch tier for experiments: "auto" (best available), "portable", "avx512x8".
// Returns an error (unknown name, not compiled in, CPU lacks it, self-test failed) or
// nullopt. Call at start-up, before worker threads hash.
std::optional<std::string> keccak256_select(std::string_view name);

// The permutation itself (24 rounds) over 25 little-endian-interpreted lanes,
// lane index = x + 5*y. Exposed for tests and for other tiers' tails.
void keccak_f1600(uint64_t state[25]);

}  // namespace st::kernels
