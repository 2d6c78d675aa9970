// bintrie/disk: how the binary trie at group depth g lives in record pages (record_page.h)
// and in RocksDB, shared by the writer (bintrie/build.cpp) and the reader
// (bintrie/{tree_db,lookup,verify,prove}.cpp).
//
// Nodes are go-ethereum's blobs (bintrie/group_blob.h): a group blob for every internal node
// at depth = 0 mod g, a stem blob for every stem. In the arena a blob is one record:
//
//   kind            body                 children (locators, in this order)
//   1 stem          stem blob            none
//   2 group         group blob           one per blob entry, in bitmap order (the stems
//                                        that end inside the group, and the next groups /
//                                        stems at its bottom): up to 256, a full GD-8
//                                        group included (record_page.h: 16-bit counts)
//   5 stem, chunked empty                pieces; the stem blob = their bodies concatenated
//                                        (only a stem blob too large for one page: a stem
//                                        with more than ~125 values in 4 KiB pages)
//   6 piece         part of a stem blob  none
//
// Kinds 3 and 4 are not used (database format version 1 split a full GD-8 group into a
// record of 254 entries plus a "half" record of the last 2, as its records held at most
// 255 children; such databases are refused by the manifest's version check).
//
// Records are pushed in post-order, so the packer (subtree_packer.h) keeps a group with as
// much of its subtree as fits in one page.
//
// RocksDB: the same blobs keyed as go-ethereum's path database keys them: blob_key(path
// bits MSB first, bit length) (a node at depth d under the stem bits p[0..d)).
//
// Invariants: a group blob's entries and its record's children correspond one to one; a
// group's size for a given g is bounded (group_blob_size(g, 2^g)) and must fit a page
// (check_group_fits, before anything is written); stem blobs of any size are stored.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "engine/bintrie/group_blob.h"
#include "engine/persist/record_page.h"
#include "io/manifest.h"
#include "io/status.h"

namespace st::persist::bintrie_disk {

using bintrie::Hash32;

enum RecordKind : uint8_t {
  kStem = 1,
  kGroup = 2,
  kStemChunked = 5,
  kPiece = 6,
};

// The trie's hash from the store parameters (sha256 or blake3; anything else is an error).
io::Status hasher_for(const io::StoreParams& p, bintrie::Hasher* out);

// ok if the largest group record at p.group_depth fits one page payload of p.page_size;
// otherwise a one-line bad_argument error suggesting --page-size 16384 or a smaller --gd.
io::Status check_group_fits(const io::StoreParams& p);

// Bits [d, d + g) of a 32-byte key, MSB first (d + g <= 256, g <= 8).
inline uint32_t key_bits(const uint8_t* key32, unsigned d, unsigned g) {  // g <= 8
  const unsigned byte = d >> 3, off = d & 7;
  uint32_t w = uint32_t(key32[byte]) << 8;
  if (off + g > 8) w |= key32[byte + 1];  // d + g <= 256: byte + 1 < 32 here
  return (w >> (16 - off - g)) & ((1u << g) - 1);
}

// Index of the entry of `blob` covering relative position `pos` (g bits), or nullopt if
// the position is empty (entries ascend by pos and do not overlap: decode_group_blob).
std::optional<uint32_t> find_entry(const bintrie::GroupBlob& blob, uint32_t pos);

// The value of slot `sub` of a decoded stem blob, if present.
std::optional<Hash32> stem_value(const bintrie::StemBlob& blob, uint8_t sub);
uint32_t stem_value_count(const bintrie::StemBlob& blob);

// Whether a stem is an account's header stem (verify counts these as the accounts) and, if
// so, its account's number of code chunks (all of them: past the header's 128 they live in
// stems of their own); nullopt for any other stem. A leaf does not say what it holds, and
// sub 0 alone does not tell: a storage slot = 0 mod 256 (or code chunk 128 + 256k) sits at
// sub 0 of its own stem. A header stem has the basic-data shape (EIP-7864, keys.h): sub 0
// present with version 0 and reserved bytes [1..4] zero, the code hash at sub 1, the
// reserved subs 2..63 absent, code chunks 0..n-1 at subs 128.. exactly (n = ceil(code_size
// / 31), at most 128) and, for code size 0, the code hash keccak256(""). Any other stem
// would need a storage layout or value mimicking all of that.
std::optional<uint64_t> account_code_chunks(const bintrie::StemBlob& blob);

// Whether the first `bits` bits of two 31-byte stems / keys agree.
bool same_prefix(const uint8_t* a, const uint8_t* b, unsigned bits);

std::string hex(std::span<const uint8_t> bytes);
std::string locator_name(Locator l);  // "page 17 record 3"

}  // namespace st::persist::bintrie_disk
