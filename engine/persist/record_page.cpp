// record_page: building and strict parsing of record pages (layout in the header).
#include "engine/persist/record_page.h"

#include <bit>

namespace st::persist {

static_assert(std::endian::native == std::endian::little, "record pages store locators as host u64 (LE)");

namespace {
void put_u16(uint8_t* p, uint32_t v) {
  p[0] = uint8_t(v);
  p[1] = uint8_t(v >> 8);
}
uint32_t get_u16(const uint8_t* p) { return uint32_t(p[0]) | (uint32_t(p[1]) << 8); }
// Where record i of a page of n records and `end` bytes used starts and stops, as the offset
// table says (unchecked: check_record_page checks them, checked_record trusts them).
struct RecordBounds {
  uint32_t begin, stop;
};
RecordBounds record_bounds(const uint8_t* p, uint32_t n, uint32_t end, uint32_t i) {
  const uint32_t begin = get_u16(p + kPageHeaderBytes + i * kRecordOffsetBytes);
  return {begin, i + 1 < n ? get_u16(p + kPageHeaderBytes + (i + 1) * kRecordOffsetBytes) : end};
}
// Word at a time (the padding of every page read is checked).
bool all_zero(const uint8_t* p, size_t n) {
  uint64_t acc = 0;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    acc |= w;
  }
  for (; i < n; ++i) acc |= p[i];
  return acc == 0;
}
}  // namespace

void RecordPageBuilder::clear() {
  used_ = kPageHeaderBytes;
  kinds_.clear();
  starts_.clear();
  data_.clear();
}

uint32_t RecordPageBuilder::add(uint8_t kind, std::span<const Locator> children, std::span<const uint8_t> body) {
  const uint32_t index = uint32_t(kinds_.size());
  kinds_.push_back(kind);
  starts_.push_back(uint32_t(data_.size()));
  data_.push_back(kind);
  data_.push_back(uint8_t(children.size()));
  data_.push_back(uint8_t(children.size() >> 8));
  for (Locator l : children) {
    uint8_t b[8];
    std::memcpy(b, &l, 8);
    data_.insert(data_.end(), b, b + 8);
  }
  data_.insert(data_.end(), body.begin(), body.end());
  used_ += record_footprint(body.size(), uint32_t(children.size()));
  return index;
}

void RecordPageBuilder::finish(uint8_t* out) const {
  std::memset(out, 0, payload_bytes_);
  const uint32_t n = uint32_t(kinds_.size());
  const uint32_t table = kPageHeaderBytes + n * kRecordOffsetBytes;
  put_u16(out, n);
  put_u16(out + 2, table + uint32_t(data_.size()));
  for (uint32_t i = 0; i < n; ++i) put_u16(out + kPageHeaderBytes + i * kRecordOffsetBytes, table + starts_[i]);
  if (!data_.empty()) std::memcpy(out + table, data_.data(), data_.size());
}

std::string check_record_page(uint64_t page_id, std::span<const uint8_t> payload) {
  auto bad = [&](const std::string& what) {
    return "page " + std::to_string(page_id) + ": bad record page (" + what + ")";
  };
  const size_t size = payload.size();
  if (size < kPageHeaderBytes || size > 65535) return bad("payload size");
  const uint8_t* p = payload.data();
  const uint32_t n = get_u16(p), end = get_u16(p + 2);
  const size_t table = kPageHeaderBytes + size_t(n) * kRecordOffsetBytes;
  if (table > size) return bad("record count " + std::to_string(n) + " too large");
  if (end < table || end > size) return bad("end offset " + std::to_string(end));
  if (!all_zero(p + end, size - end)) {
    size_t i = end;
    while (p[i] == 0) ++i;
    return bad("non-zero padding at byte " + std::to_string(i));
  }
  for (uint32_t i = 0; i < n; ++i) {
    const auto [begin, stop] = record_bounds(p, n, end, i);
    if (begin < table || stop < begin || stop > end) return bad("record " + std::to_string(i) + " offsets");
    if (i == 0 && begin != table) return bad("record 0 does not start after the table");
    if (stop - begin < kRecordHeaderBytes) return bad("record " + std::to_string(i) + " too short");
    const size_t children_end = size_t(begin) + kRecordHeaderBytes + size_t(get_u16(p + begin + 1)) * kLocatorBytes;
    if (children_end > stop) return bad("record " + std::to_string(i) + " child table past its end");
  }
  return {};
}

uint32_t checked_record_count(const uint8_t* payload) { return get_u16(payload); }

RecordView checked_record(const uint8_t* p, uint32_t i) {
  const auto [begin, stop] = record_bounds(p, get_u16(p), get_u16(p + 2), i);
  RecordView r;
  r.kind = p[begin];
  r.child_count = uint16_t(get_u16(p + begin + 1));
  const size_t children_end = size_t(begin) + kRecordHeaderBytes + size_t(r.child_count) * kLocatorBytes;
  r.child_bytes = p + begin + kRecordHeaderBytes;
  r.body = std::span<const uint8_t>(p + children_end, stop - children_end);
  return r;
}

std::string decode_record_page(uint64_t page_id, std::span<const uint8_t> payload, RecordPage* out) {
  out->records.clear();
  std::string err = check_record_page(page_id, payload);
  if (!err.empty()) return err;
  const uint32_t n = checked_record_count(payload.data());
  out->records.reserve(n);
  for (uint32_t i = 0; i < n; ++i) out->records.push_back(checked_record(payload.data(), i));
  return {};
}

}  // namespace st::persist
