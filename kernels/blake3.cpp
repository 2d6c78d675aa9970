// blake3: portable BLAKE3 compression function, chunk chaining and parent merging.
// See blake3.h. Words are little-endian; the message schedule is applied by permuting the
// message words between rounds (7 rounds per compression).
#include "kernels/blake3.h"

#include <cstring>

#include "kernels/support/byte_order.h"

namespace st::kernels {
namespace {

constexpr uint32_t kIv[8] = {0x6A09E667u, 0xBB67AE85u, 0x3C6EF372u, 0xA54FF53Au,
                             0x510E527Fu, 0x9B05688Cu, 0x1F83D9ABu, 0x5BE0CD19u};
constexpr uint32_t kChunkStart = 1, kChunkEnd = 2, kParent = 4, kRoot = 8;
constexpr size_t kBlockBytes = 64, kChunkBytes = 1024;

inline uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

#define ST_B3_G(a, b, c, d, x, y)          \
  do {                                     \
    s[a] = s[a] + s[b] + (x);              \
    s[d] = rotr(s[d] ^ s[a], 16);          \
    s[c] = s[c] + s[d];                    \
    s[b] = rotr(s[b] ^ s[c], 12);          \
    s[a] = s[a] + s[b] + (y);              \
    s[d] = rotr(s[d] ^ s[a], 8);           \
    s[c] = s[c] + s[d];                    \
    s[b] = rotr(s[b] ^ s[c], 7);           \
  } while (0)

// Compresses one 64-byte block (words m) into cv_out (8 words, the truncated output).
inline void compress(const uint32_t cv[8], const uint32_t m_in[16], uint64_t counter, uint32_t block_len,
                     uint32_t flags, uint32_t out[8]) {
  uint32_t s[16] = {cv[0], cv[1], cv[2], cv[3], cv[4], cv[5], cv[6], cv[7],
                    kIv[0], kIv[1], kIv[2], kIv[3],
                    uint32_t(counter), uint32_t(counter >> 32), block_len, flags};
  uint32_t m[16];
  std::memcpy(m, m_in, sizeof m);
  for (int round = 0; round < 7; ++round) {
    ST_B3_G(0, 4, 8, 12, m[0], m[1]);
    ST_B3_G(1, 5, 9, 13, m[2], m[3]);
    ST_B3_G(2, 6, 10, 14, m[4], m[5]);
    ST_B3_G(3, 7, 11, 15, m[6], m[7]);
    ST_B3_G(0, 5, 10, 15, m[8], m[9]);
    ST_B3_G(1, 6, 11, 12, m[10], m[11]);
    ST_B3_G(2, 7, 8, 13, m[12], m[13]);
    ST_B3_G(3, 4, 9, 14, m[14], m[15]);
    if (round < 6) {  // message permutation 2,6,3,10,7,0,4,13,1,11,12,5,9,14,15,8
      const uint32_t t[16] = {m[2], m[6], m[3], m[10], m[7], m[0], m[4], m[13],
                              m[1], m[11], m[12], m[5], m[9], m[14], m[15], m[8]};
      std::memcpy(m, t, sizeof m);
    }
  }
  for (int i = 0; i < 8; ++i) out[i] = s[i] ^ s[i + 8];
}
#undef ST_B3_G

inline void load_block(const uint8_t* p, size_t len, uint32_t m[16]) {
  uint8_t buf[kBlockBytes] = {};
  if (len) std::memcpy(buf, p, len);  // p may be null for the empty message
  for (int i = 0; i < 16; ++i) m[i] = load_le32(buf + 4 * i);
}

inline void store_cv(const uint32_t cv[8], uint8_t* out) {
  for (int i = 0; i < 8; ++i) store_le32(out + 4 * i, cv[i]);
}

// A message of at most one block: a single root compression.
inline void hash_one_block(const uint8_t* data, size_t len, uint8_t* out) {
  uint32_t m[16], cv[8];
  load_block(data, len, m);
  compress(kIv, m, 0, uint32_t(len), kChunkStart | kChunkEnd | kRoot, cv);
  store_cv(cv, out);
}

// Chains the blocks of one chunk (1..1024 bytes; 0 only for the empty message). When
// root_flag is set the last block carries ROOT (the message is this single chunk).
inline void chunk_cv(const uint8_t* data, size_t len, uint64_t chunk_counter, bool root, uint32_t cv_out[8]) {
  uint32_t cv[8];
  std::memcpy(cv, kIv, sizeof cv);
  size_t off = 0;
  const size_t nblocks = len == 0 ? 1 : (len + kBlockBytes - 1) / kBlockBytes;
  for (size_t b = 0; b < nblocks; ++b) {
    const size_t blen = (b + 1 == nblocks) ? len - off : kBlockBytes;
    uint32_t m[16];
    load_block(data + off, blen, m);
    uint32_t flags = 0;
    if (b == 0) flags |= kChunkStart;
    if (b + 1 == nblocks) flags |= kChunkEnd | (root ? kRoot : 0);
    compress(cv, m, chunk_counter, uint32_t(blen), flags, cv);
    off += blen;
  }
  std::memcpy(cv_out, cv, sizeof cv);
}

inline void parent_cv(const uint32_t left[8], const uint32_t right[8], bool root, uint32_t out[8]) {
  uint32_t m[16];
  std::memcpy(m, left, 32);
  std::memcpy(m + 8, right, 32);
  compress(kIv, m, 0, kBlockBytes, kParent | (root ? kRoot : 0), out);
}

}  // namespace

void blake3(const uint8_t* data, size_t len, uint8_t* out) {
  if (len <= kBlockBytes) { hash_one_block(data, len, out); return; }
  if (len <= kChunkBytes) {
    uint32_t cv[8];
    chunk_cv(data, len, 0, true, cv);
    store_cv(cv, out);
    return;
  }
  // Multi-chunk: every chunk but the last is pushed onto the CV stack and merged while the
  // number of completed chunks has trailing zero bits; then the last chunk's CV is folded
  // with the stack from the top, the final parent carrying ROOT.
  uint32_t stack[64][8];
  size_t depth = 0;
  const uint64_t nchunks = (len + kChunkBytes - 1) / kChunkBytes;
  for (uint64_t c = 0; c + 1 < nchunks; ++c) {
    uint32_t cv[8];
    chunk_cv(data + c * kChunkBytes, kChunkBytes, c, false, cv);
    uint64_t total = c + 1;
    while ((total & 1) == 0) {
      parent_cv(stack[--depth], cv, false, cv);
      total >>= 1;
    }
    std::memcpy(stack[depth++], cv, 32);
  }
  const uint64_t last = nchunks - 1;
  uint32_t cv[8];
  chunk_cv(data + last * kChunkBytes, len - last * kChunkBytes, last, false, cv);
  while (depth > 0) {
    --depth;
    parent_cv(stack[depth], cv, depth == 0, cv);
  }
  store_cv(cv, out);
}

void blake3_hash32_batch(const uint8_t* in, uint8_t* out, size_t n) {
  for (size_t i = 0; i < n; ++i) hash_one_block(in + 32 * i, 32, out + 32 * i);
}

void blake3_hash64_batch(const uint8_t* in, uint8_t* out, size_t n) {
  // hash_one_block reads the whole block before writing, so out == in is safe in order.
  for (size_t i = 0; i < n; ++i) hash_one_block(in + 64 * i, 64, out + 32 * i);
}

void blake3_hash_batch(const uint8_t* const* msgs, const size_t* lens, uint8_t* out, size_t n) {
  for (size_t i = 0; i < n; ++i) blake3(msgs[i], lens[i], out + 32 * i);
}

}  // namespace st::kernels
