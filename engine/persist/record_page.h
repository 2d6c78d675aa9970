// record_page: how the persistent tries lay out nodes inside one store page. A page payload
// (NodeStore::payload_bytes(), the page minus its checksummed trailer) holds a small table
// of variable-size records; a record is one tree node (an MPT node's RLP, a binary-trie
// group or stem blob) plus the on-disk locations of its children:
//
//   payload (little-endian):
//   +---------+---------+---------------------------+------------------------+---------+
//   | n  u16  | end u16 | offsets: n x u16 (record  | records back to back    | zero    |
//   |         | (bytes  | i starts at offsets[i],   | (record i ends where   | padding |
//   |         |  used)  | ends at offsets[i+1]/end) |  record i+1 starts)    |         |
//   +---------+---------+---------------------------+------------------------+---------+
//
//   record:
//   +---------+------------+--------------------------------+----------------------------+
//   | kind u8 | nchild u16 | nchild x Locator (u64 LE each) | body (the node's bytes)    |
//   +---------+------------+--------------------------------+----------------------------+
//
//   (nchild is 16 bits since database format version 2, io/manifest.h: a full GD-8 group
//   with its 256 children is one record; version 1 had an 8-bit count.)
//
//   Locator (u64): page id << 16 | record index within that page. kNoLocator = all ones.
//
// What kind and the child order mean is the tree's business (mpt_disk, bintrie_disk); this
// file only guarantees that a parsed page never yields a span outside the payload:
// check_record_page() checks n, the offsets (ascending, inside [header, end]), end <=
// payload size, zero padding after end, and that each record holds its kind, nchild and
// nchild locators. Anything else is an error message naming the page, never a crash.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace st::persist {

using Locator = uint64_t;
inline constexpr Locator kNoLocator = ~uint64_t(0);
inline constexpr uint32_t kRecordIndexBits = 16;
inline constexpr uint64_t kMaxPageId = (uint64_t(1) << (64 - kRecordIndexBits)) - 2;

inline Locator make_locator(uint64_t page_id, uint32_t record_index) {
  return (page_id << kRecordIndexBits) | record_index;
}
inline uint64_t locator_page(Locator l) { return l >> kRecordIndexBits; }
inline uint32_t locator_index(Locator l) { return uint32_t(l & ((1u << kRecordIndexBits) - 1)); }

inline constexpr uint32_t kPageHeaderBytes = 4;     // n, end
inline constexpr uint32_t kRecordOffsetBytes = 2;   // one offsets[] entry per record
inline constexpr uint32_t kRecordHeaderBytes = 3;   // kind u8, nchild u16
inline constexpr uint32_t kLocatorBytes = 8;
inline constexpr uint32_t kMaxChildren = 65535;     // what nchild holds (a page fits far fewer)

// Bytes a record takes in a page, its offsets[] entry included.
inline uint32_t record_footprint(size_t body_bytes, uint32_t child_count) {
  return uint32_t(kRecordOffsetBytes + kRecordHeaderBytes + child_count * kLocatorBytes + body_bytes);
}

// One record of a parsed page. Views into the page buffer (valid while it is).
struct RecordView {
  uint8_t kind = 0;
  uint16_t child_count = 0;
  const uint8_t* child_bytes = nullptr;  // child_count x u64 LE
  std::span<const uint8_t> body;
  Locator child(uint32_t i) const {
    uint64_t v;
    std::memcpy(&v, child_bytes + size_t(i) * kLocatorBytes, 8);
    return v;  // little-endian hosts only (static_assert in record_page.cpp)
  }
};

// Builds one page payload record by record.
class RecordPageBuilder {
 public:
  explicit RecordPageBuilder(uint32_t payload_bytes) : payload_bytes_(payload_bytes) { clear(); }
  void clear();
  uint32_t records() const { return uint32_t(kinds_.size()); }
  uint32_t bytes_used() const { return used_; }   // header + offsets + records
  uint32_t bytes_free() const { return payload_bytes_ - used_; }
  bool fits(size_t body_bytes, uint32_t child_count) const {
    return used_ + record_footprint(body_bytes, child_count) <= payload_bytes_;
  }
  // Appends a record (precondition: fits()); returns its index in the page.
  uint32_t add(uint8_t kind, std::span<const Locator> children, std::span<const uint8_t> body);
  // Writes the payload (exactly payload_bytes, zero padded) into out.
  void finish(uint8_t* out) const;

 private:
  uint32_t payload_bytes_;
  uint32_t used_ = 0;
  std::vector<uint8_t> kinds_;
  std::vector<uint32_t> starts_;  // within data_
  std::vector<uint8_t> data_;     // records back to back
};

// Checks a page's whole layout (see the top of this file): empty on success, else one line
// naming `page_id` and what is wrong. A page that passed is read with the checked_* calls
// below, which check nothing again and allocate nothing.
std::string check_record_page(uint64_t page_id, std::span<const uint8_t> payload);
// Records in a page that passed check_record_page.
uint32_t checked_record_count(const uint8_t* payload);
// Record i (< checked_record_count) of a page that passed check_record_page.
RecordView checked_record(const uint8_t* payload, uint32_t i);

// A parsed page: every record's view, after the same checks (`error` as above).
struct RecordPage {
  std::vector<RecordView> records;
};
std::string decode_record_page(uint64_t page_id, std::span<const uint8_t> payload, RecordPage* out);

}  // namespace st::persist
