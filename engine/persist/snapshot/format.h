// snapshot/format: the on-disk layout of the flat snapshot, a sorted key -> value table kept
// beside a tree in the same arena (and the same copy-on-write commit) so that a lookup is
// ONE device read instead of a walk from the root.
//
// Keys are the tree's own leaf keys, so one sorted table answers both trees and verify can
// compare it leaf by leaf with the tree:
//   MPT:          account  keccak(address)                     (32 bytes)
//                 slot     keccak(address) || keccak(slot)      (64 bytes)
//                 value    the leaf's bytes (account RLP; RLP of the trimmed slot value)
//   binary trie:  every leaf, stem || suffix (32 bytes) -> its 32-byte value (account
//                 fields, code chunks and slots alike)
// Order: bytewise, a key that is a prefix of another first (an MPT account sorts just before
// its slots).
//
// Pages are record pages (record_page.h), so the store's checksum and the strict layout
// decoder check them like tree pages, and the streamed PageReader reads them:
//   data page       records of kind kSnapEntry, ascending key, no children:
//                   body = [key len u8][key][value]
//                   An account's basic-data and code-hash leaves (binary trie, suffixes 0
//                   and 1 of one stem) never straddle two pages: one read answers an account.
//   index page      records of kind kSnapIndex, one per data page in key order, one child
//                   (the data page's locator, record 0): body = [key len u8][first key]
//   directory page  one record of kind kSnapDirectory: body = index page ids, u64 LE each
// The commit record (db_files.h) names the directory pages and the counts (SnapshotRef). A
// reader loads the directory and the index pages once at open: the in-memory index is the
// first key of every data page, so a lookup is a binary search in memory and one page read.
//
// Invariants: data pages hold every entry once, keys strictly ascending across the whole
// table; index page i lists data pages in order and their first keys; entry_count and
// data_pages equal what the pages hold (the reader checks both at open / scan).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace st::persist {

inline constexpr uint8_t kSnapEntry = 0x51;      // data page record
inline constexpr uint8_t kSnapIndex = 0x52;      // index page record
inline constexpr uint8_t kSnapDirectory = 0x53;  // directory page record
inline constexpr size_t kSnapMaxKey = 64;
inline constexpr size_t kSnapMaxValue = 255;

// What the commit record says about the snapshot of its commit.
struct SnapshotRef {
  uint64_t entries = 0;       // key -> value entries
  uint64_t data_pages = 0;
  uint64_t index_pages = 0;
  std::vector<uint64_t> directory_pages;  // in order; their index page ids concatenated = the index
  bool operator==(const SnapshotRef&) const = default;
};

// The commit record's snapshot block (appended after the spec):
//   ["STSN" u32][version u32][entries u64][data pages u64][index pages u64][n u32][n x page u64]
inline constexpr uint32_t kSnapRefMagic = 0x4e535453u;  // "STSN"
inline constexpr uint32_t kSnapRefVersion = 1;
void append_snapshot_ref(const SnapshotRef& r, std::vector<uint8_t>* out);
size_t snapshot_ref_bytes(const SnapshotRef& r);
// `rest` starts at the block's magic. Error text ("" = ok); *used = bytes consumed.
std::string decode_snapshot_ref(std::span<const uint8_t> rest, SnapshotRef* out, size_t* used);

// -1, 0, 1: bytewise, a proper prefix first.
int compare_snapshot_keys(std::span<const uint8_t> a, std::span<const uint8_t> b);

// Error text ("" = ok): key length 1..64, value length <= 255 (what an entry may hold, on
// either store).
std::string snapshot_entry_error(std::span<const uint8_t> key, std::span<const uint8_t> value);

// Record bodies.
void encode_snapshot_entry(std::span<const uint8_t> key, std::span<const uint8_t> value, std::vector<uint8_t>* body);
// Error text ("" = ok): key length 1..64, value length <= 255, nothing past the value.
std::string decode_snapshot_entry(std::span<const uint8_t> body, std::span<const uint8_t>* key,
                                  std::span<const uint8_t>* value);
// Index record body: [len u8][first key].
std::string decode_snapshot_index(std::span<const uint8_t> body, std::span<const uint8_t>* first_key);

}  // namespace st::persist
