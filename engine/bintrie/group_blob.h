// group_blob: go-ethereum's group-depth disk layout of the binary trie (layout only: it never
// changes the root). With group depth g (1..8) only internal nodes at depth = 0 mod g are
// written; each writes its g-level internal subtree as one blob holding the hashes of the up
// to 2^g entries at its bottom; the 2^g - 1 inner hashes are recomputed on load.
//
// Internal group blob:
//   +------+---+---------------------+---------------------------+--------------------+
//   | 0x02 | g | bitmap: 2^g bits,   | K x 3 bits (depth off - 1)| K x 32-byte hashes |
//   |      |   | MSB first,          | MSB first, zero-padded to | in bitmap order    |
//   |      |   | max(1, 2^g/8) bytes | whole bytes               |                    |
//   +------+---+---------------------+---------------------------+--------------------+
//   An entry ending early (a stem) at relative depth r with relative path p sits at bitmap
//   position p << (g - r); entries at r = g are the next groups' roots or stems.
//   Full blob sizes: GD-4 522, GD-5 1042, GD-6 2082, GD-7 4162, GD-8 8322 bytes.
//
// Stem blob:
//   +------+---------+-----------------------------------+-------------------------------+
//   | 0x01 | stem 31 | presence bitmap 32 bytes (bit i = | present values, 32 bytes each, |
//   |      |         | slot i, MSB first)                | ascending slot order           |
//   +------+---------+-----------------------------------+-------------------------------+
//
// Blob key: the node's bit path packed MSB first, then one byte holding the bit length.
//
// Strict decoding: wrong version byte, wrong or out-of-range g, truncation or trailing
// bytes, bitmap bits beyond 2^g, non-zero padding, a depth offset > g, a misaligned entry,
// overlapping entries, an empty group, or an early-ending entry without a sibling (a shape
// the canonical tree never has) are error values, never a crash.
//
// Views (check_group_blob / check_stem_blob) run exactly the strict checks of the decoders
// (the decoders are built on them) but copy nothing: a lookup that needs one entry of a
// group, or one value of a stem, reads it in place. Bit counting is a portable SWAR
// popcount (the portable build has no -mpopcnt; std::popcount would call libgcc).
//
// Invariants: decode(encode(x)) == x; encode(decode(b)) == b for every accepted b; a view
// accepts exactly the blobs its decoder accepts, with the same error message.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "engine/bintrie/mutable_tree.h"

namespace st::bintrie {

inline constexpr uint8_t kGroupBlobVersion = 0x02;
inline constexpr uint8_t kStemBlobVersion = 0x01;

struct GroupEntry {
  uint16_t pos = 0;   // bitmap position (0 .. 2^g - 1)
  uint8_t depth = 0;  // relative depth r (1..g)
  Hash32 hash{};
};

struct GroupBlob {
  uint8_t g = 0;
  std::vector<GroupEntry> entries;  // ascending pos
};

struct StemBlob {
  Stem stem{};
  std::array<uint8_t, 32> bitmap{};
  std::vector<Hash32> values;  // ascending slot
};

// Set bits of x (portable SWAR, no libgcc call).
inline unsigned bit_count64(uint64_t x) {
  x = x - ((x >> 1) & 0x5555555555555555ull);
  x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
  x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
  return unsigned((x * 0x0101010101010101ull) >> 56);
}

// A strictly checked group blob, read in place (valid while the bytes are).
struct GroupBlobView {
  uint8_t g = 0;
  uint32_t k = 0;                   // entries
  uint64_t words[4] = {};           // the bitmap, big-endian words: position q of word w = bit 63 - q
  const uint8_t* depths = nullptr;  // K x 3 bits
  const uint8_t* hashes = nullptr;  // K x 32 bytes
  unsigned depth(uint32_t i) const {  // relative depth r of entry i (1..g)
    const size_t at = 3 * size_t(i);
    const unsigned w = unsigned(depths[at / 8]) << 8 | depths[at / 8 + 1];  // in bounds: hashes follow
    return ((w >> (13 - at % 8)) & 7u) + 1;
  }
  const uint8_t* hash(uint32_t i) const { return hashes + 32 * size_t(i); }
  // The entry covering relative position pos (g bits): its index and depth; false when
  // the position is empty.
  bool find(uint32_t pos, uint32_t* index, unsigned* depth) const;
};
// "" and *out filled, or the error decode_group_blob would return.
std::string check_group_blob(std::span<const uint8_t> bytes, unsigned expected_g, GroupBlobView* out);

// A strictly checked stem blob, read in place.
struct StemBlobView {
  const uint8_t* stem = nullptr;    // 31 bytes
  const uint8_t* bitmap = nullptr;  // 32 bytes, slot i = bit 7 - i % 8 of byte i / 8
  const uint8_t* values = nullptr;  // count x 32 bytes, ascending slot
  uint32_t count = 0;
  const uint8_t* value(uint8_t sub) const;  // nullptr when slot `sub` is absent
};
std::string check_stem_blob(std::span<const uint8_t> bytes, StemBlobView* out);
// A decoded stem blob read as a view (valid while the blob is, unmoved), as check_stem_blob
// reads its encoding.
inline StemBlobView stem_blob_view(const StemBlob& b) {
  StemBlobView v;
  v.stem = b.stem.data();
  v.bitmap = b.bitmap.data();
  v.values = b.values.empty() ? nullptr : b.values[0].data();
  v.count = uint32_t(b.values.size());
  return v;
}

size_t group_blob_bitmap_bytes(unsigned g);
size_t group_blob_size(unsigned g, size_t entries);

void encode_group_blob(const GroupBlob& blob, std::vector<uint8_t>* out);
std::variant<GroupBlob, std::string> decode_group_blob(std::span<const uint8_t> bytes, unsigned expected_g);
// The blob a checked view reads (decode_group_blob is check_group_blob, then this).
GroupBlob group_blob_from_view(const GroupBlobView& v);

void encode_stem_blob(const StemBlob& blob, std::vector<uint8_t>* out);
std::variant<StemBlob, std::string> decode_stem_blob(std::span<const uint8_t> bytes);

// A loaded group as a heap over relative depths 0..g (2^(g+1) - 1 positions; index 0 = the
// group root, children of i at 2i+1, 2i+2): each entry's hash at its position and its index
// in blob.entries in *entry_at (-1: none), the positions above hashed up from them (empty
// ones are 32 zero bytes), one hash64_batch call per level. Returns how many of those inner
// hashes are not zero.
size_t group_heap(const Hasher& h, const GroupBlob& blob, std::vector<Hash32>* node, std::vector<int32_t>* entry_at);
// Inner hashes of a loaded group, heap order (group_heap's first 2^g - 1 positions).
std::vector<Hash32> reconstruct_group(const Hasher& h, const GroupBlob& blob, size_t* hashes_computed = nullptr);
// The stem node hash of a loaded stem blob.
Hash32 stem_blob_hash(const Hasher& h, const StemBlob& blob);

// Blob key: bits packed MSB first, then the bit length.
std::vector<uint8_t> blob_key(const uint8_t* path_bits_msb_first, unsigned bit_len);

// Walks a committed tree and emits every blob at group depth g: callback(key, bytes).
struct BlobCounts {
  size_t group_blobs = 0, group_bytes = 0, group_entries = 0, group_full = 0;
  size_t stem_blobs = 0, stem_bytes = 0;
};
BlobCounts encode_tree_blobs(const MutableTree& tree, unsigned g,
                             const std::function<void(std::span<const uint8_t> key, std::span<const uint8_t> blob)>& emit);

}  // namespace st::bintrie
