// snapshot/format: encoders and strict decoders of the snapshot's records and of its block
// in the commit record (layout in snapshot/format.h).
#include "engine/persist/snapshot/format.h"

#include <algorithm>
#include <cstring>

#include "kernels/support/byte_order.h"

namespace st::persist {

size_t snapshot_ref_bytes(const SnapshotRef& r) { return 36 + 8 * r.directory_pages.size(); }

void append_snapshot_ref(const SnapshotRef& r, std::vector<uint8_t>* out) {
  const size_t at = out->size();
  out->resize(at + snapshot_ref_bytes(r));
  uint8_t* p = out->data() + at;
  st::put_u32(p, kSnapRefMagic);
  st::put_u32(p + 4, kSnapRefVersion);
  st::put_u64(p + 8, r.entries);
  st::put_u64(p + 16, r.data_pages);
  st::put_u64(p + 24, r.index_pages);
  st::put_u32(p + 32, uint32_t(r.directory_pages.size()));
  for (size_t i = 0; i < r.directory_pages.size(); ++i) st::put_u64(p + 36 + 8 * i, r.directory_pages[i]);
}

std::string decode_snapshot_ref(std::span<const uint8_t> b, SnapshotRef* out, size_t* used) {
  if (b.size() < 36 || st::get_u32(b.data()) != kSnapRefMagic) return "snapshot block: bad magic or truncated";
  if (st::get_u32(b.data() + 4) != kSnapRefVersion)
    return "snapshot block version " + std::to_string(st::get_u32(b.data() + 4)) + ", this build reads version " +
           std::to_string(kSnapRefVersion);
  SnapshotRef r;
  r.entries = st::get_u64(b.data() + 8);
  r.data_pages = st::get_u64(b.data() + 16);
  r.index_pages = st::get_u64(b.data() + 24);
  const uint32_t n = st::get_u32(b.data() + 32);
  if (n > (b.size() - 36) / 8) return "snapshot block: directory page list past its end";
  for (uint32_t i = 0; i < n; ++i) r.directory_pages.push_back(st::get_u64(b.data() + 36 + 8 * i));
  if (r.data_pages > r.entries || (r.entries > 0 && r.data_pages == 0) || r.index_pages > r.data_pages ||
      (r.data_pages > 0 && (r.index_pages == 0 || n == 0)) || n > r.index_pages)
    return "snapshot block: inconsistent counts (" + std::to_string(r.entries) + " entries, " +
           std::to_string(r.data_pages) + " data pages, " + std::to_string(r.index_pages) + " index pages, " +
           std::to_string(n) + " directory pages)";
  *out = std::move(r);
  *used = 36 + 8 * size_t(n);
  return "";
}

int compare_snapshot_keys(std::span<const uint8_t> a, std::span<const uint8_t> b) {
  const size_t n = std::min(a.size(), b.size());
  if (n) {
    const int c = std::memcmp(a.data(), b.data(), n);
    if (c) return c < 0 ? -1 : 1;
  }
  return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
}

std::string snapshot_entry_error(std::span<const uint8_t> key, std::span<const uint8_t> value) {
  if (key.empty() || key.size() > kSnapMaxKey || value.size() > kSnapMaxValue)
    return "snapshot: entry with a key of " + std::to_string(key.size()) + " bytes and a value of " +
           std::to_string(value.size()) + " bytes";
  return "";
}

void encode_snapshot_entry(std::span<const uint8_t> key, std::span<const uint8_t> value, std::vector<uint8_t>* body) {
  body->clear();
  body->push_back(uint8_t(key.size()));
  body->insert(body->end(), key.begin(), key.end());
  body->insert(body->end(), value.begin(), value.end());
}

std::string decode_snapshot_entry(std::span<const uint8_t> body, std::span<const uint8_t>* key,
                                  std::span<const uint8_t>* value) {
  if (body.empty()) return "empty snapshot entry";
  const size_t klen = body[0];
  if (klen == 0 || klen > kSnapMaxKey || klen + 1 > body.size())
    return "snapshot entry with a key of " + std::to_string(klen) + " bytes in a body of " + std::to_string(body.size());
  if (body.size() - 1 - klen > kSnapMaxValue) return "snapshot entry value longer than 255 bytes";
  *key = body.subspan(1, klen);
  *value = body.subspan(1 + klen);
  return "";
}

std::string decode_snapshot_index(std::span<const uint8_t> body, std::span<const uint8_t>* first_key) {
  if (body.empty() || body[0] == 0 || body[0] > kSnapMaxKey || size_t(body[0]) + 1 != body.size())
    return "snapshot index record of " + std::to_string(body.size()) + " bytes is malformed";
  *first_key = body.subspan(1);
  return "";
}

}  // namespace st::persist
