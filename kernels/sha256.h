// sha256: the SHA-256 kernel family and its run-time dispatch.
//
// Tiers: portable (any CPU), shani (SHA-NI, 1 stream for single messages, 2-4 interleaved
// streams for batches), avx2 (8 lanes), avx512 (16 lanes, multi-buffer). Every tier
// implements the same table of entry points; `sha256_active()` is the tier chosen once at
// start-up (or forced with sha256_select) after a mandatory self-test.
//
// Word-sliced blocks (the Merkle engine's storage format, see also merkle_arena.h):
//   one block = 16 digests x 8 words = 128 uint32 = 512 bytes, 64-byte aligned;
//   word w of digest j lives at block[w * 16 + j]; words are the SHA-256 state words,
//   i.e. the big-endian reading of the digest bytes (digest byte 4w is the top byte of word w).
//   Parent blocks are computed from pairs of child blocks with no byte swapping at all.
//
// Invariants: kernels never allocate, lock, log or throw; pointers may be unaligned unless a
// comment says otherwise; in == out aliasing is allowed only where stated.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace st::kernels {

enum class Sha256Tier { portable, shani, avx2, avx512 };

inline constexpr size_t kSha256DigestBytes = 32;
inline constexpr size_t kSlicedLanes = 16;                    // digests per sliced block
inline constexpr size_t kSlicedBlockWords = 8 * kSlicedLanes;  // uint32 per sliced block

struct Sha256Kernel {
  const char* name;  // "portable", "shani", "avx2", "avx512"
  Sha256Tier tier;

  // One message of any length (0 allowed) -> out[32].
  void (*hash)(const uint8_t* data, size_t len, uint8_t* out);

  // n independent 32-byte messages, contiguous in[32*i], digests to out[32*i].
  // in == out (exact aliasing) is allowed.
  void (*hash32_batch)(const uint8_t* in, uint8_t* out, size_t n);

  // n independent 64-byte messages, contiguous in[64*i], digests to out[32*i].
  // (Merkle parents: message i = node 2i || node 2i+1.) out may equal in.
  void (*hash64_batch)(const uint8_t* in, uint8_t* out, size_t n);

  // n independent messages of any lengths: msgs[i] / lens[i] -> out[32*i].
  void (*hash_batch)(const uint8_t* const* msgs, const size_t* lens, uint8_t* out, size_t n);

  // Merkle leaf level: 16*nblocks leaves of 32 bytes (contiguous, any alignment) ->
  // nblocks word-sliced blocks of their SHA-256 digests. out 64-byte aligned.
  void (*leaves32_sliced)(const uint8_t* leaves, uint32_t* out_sliced, size_t nblocks);

  // Merkle parent level: 2*nblocks child blocks (sliced, contiguous, 64-byte aligned) ->
  // nblocks parent blocks: parent j of block b = SHA256(child 2j || child 2j+1) over the
  // 32 children of child blocks 2b and 2b+1 (children 0..15 in block 2b, 16..31 in 2b+1).
  // parents == children (in place: parent block b overwrites child block b) is allowed.
  void (*parents_sliced)(const uint32_t* children, uint32_t* parents, size_t nblocks);

  // Re-hash sliced digests as 32-byte messages (double SHA-256): out = SHA256(in digest),
  // block by block. in == out allowed. Both 64-byte aligned.
  void (*digests_sliced)(const uint32_t* in, uint32_t* out, size_t nblocks);
};

// The tiers compiled into this binary AND supported by this CPU (portable always).
bool sha256_tier_available(Sha256Tier tier);
std::optional<Sha256Tier> sha256_tier_from_name(std::string_view name);
const char* sha256_tier_name(Sha256Tier tier);

// The kernel table of one tier (precondition: sha256_tier_available(tier)).
const Sha256Kernel& sha256_kernel(Sha256Tier tier);

// Runs the known-answer self-test of one tier; returns an empty string when it passes,
// otherwise a one-line description of the first failure.
std::string sha256_self_test(Sha256Tier tier);

// Selects the process-wide kernel: "auto" picks the best available tier. Runs the
// self-test. Returns an error message (unknown name, tier not supported by this CPU, or
// self-test failure), or nullopt on success. Call once at start-up, before worker threads.
std::optional<std::string> sha256_select(std::string_view name);

// The selected kernel (auto-selected and self-tested on first use if none was selected).
const Sha256Kernel& sha256_active();

// Convenience one-shot with the active kernel.
inline void sha256(const uint8_t* data, size_t len, uint8_t* out) { sha256_active().hash(data, len, out); }

}  // namespace st::kernels
