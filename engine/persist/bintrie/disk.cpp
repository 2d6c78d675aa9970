// bintrie/disk: the binary trie's record kinds and helpers (see bintrie/disk.h).
#include "engine/persist/bintrie/disk.h"

#include <algorithm>
#include <bit>

#include "engine/bintrie/keys.h"
#include "io/page_format.h"
#include "kernels/keccak256.h"

namespace st::persist::bintrie_disk {

io::Status hasher_for(const io::StoreParams& p, bintrie::Hasher* out) {
  switch (p.hash_kind) {
    case io::HashKind::sha256: *out = bintrie::make_hasher(bintrie::HashKind::sha256); return {};
    case io::HashKind::blake3: *out = bintrie::make_hasher(bintrie::HashKind::blake3); return {};
    default:
      return {io::Errc::bad_argument,
              std::string("binary trie hash must be sha256 or blake3, not ") + io::hash_kind_name(p.hash_kind)};
  }
}

io::Status check_group_fits(const io::StoreParams& p) {
  const unsigned g = p.group_depth;
  if (g < 1 || g > 8)
    return {io::Errc::bad_argument, "binary trie group depth " + std::to_string(g) + " out of range 1..8"};
  const size_t entries = size_t(1) << g;
  const size_t blob = bintrie::group_blob_size(g, entries);
  const uint32_t need = record_footprint(blob, uint32_t(entries)) + kPageHeaderBytes;
  const uint32_t have = io::page_payload_bytes(p.page_size);
  if (need > have)
    return {io::Errc::bad_argument,
            "a full group at --gd " + std::to_string(g) + " is " + std::to_string(blob) + " bytes (" +
                std::to_string(need) + " with its record), more than a " + std::to_string(p.page_size) +
                "-byte page holds (" + std::to_string(have) + "): use --page-size 16384 or a smaller --gd"};
  return {};
}

std::optional<uint32_t> find_entry(const bintrie::GroupBlob& blob, uint32_t pos) {
  const auto& e = blob.entries;
  auto it = std::upper_bound(e.begin(), e.end(), pos, [](uint32_t p, const bintrie::GroupEntry& x) { return p < x.pos; });
  if (it == e.begin()) return std::nullopt;
  --it;
  const uint32_t span = 1u << (blob.g - it->depth);
  if (pos >= uint32_t(it->pos) + span) return std::nullopt;
  return uint32_t(it - e.begin());
}

std::optional<Hash32> stem_value(const bintrie::StemBlob& blob, uint8_t sub) {
  if (!((blob.bitmap[sub / 8] >> (7 - sub % 8)) & 1)) return std::nullopt;
  size_t idx = 0;
  for (unsigned i = 0; i < sub / 8u; ++i) idx += bintrie::bit_count64(blob.bitmap[i]);
  const unsigned in_byte = sub % 8;
  if (in_byte) idx += bintrie::bit_count64(unsigned(blob.bitmap[sub / 8] >> (8 - in_byte)));
  return blob.values[idx];
}

uint32_t stem_value_count(const bintrie::StemBlob& blob) { return uint32_t(blob.values.size()); }

std::optional<uint64_t> account_code_chunks(const bintrie::StemBlob& blob) {
  auto has = [&](unsigned sub) { return (blob.bitmap[sub / 8] >> (7 - sub % 8)) & 1; };
  const auto basic = stem_value(blob, bintrie::kBasicDataLeafKey);
  const auto code_hash = stem_value(blob, bintrie::kCodeHashLeafKey);
  if (!basic || !code_hash) return std::nullopt;
  const bintrie::BasicData d = bintrie::parse_basic_data(*basic);
  if (d.version != 0 || (*basic)[1] || (*basic)[2] || (*basic)[3] || (*basic)[4]) return std::nullopt;
  for (unsigned sub = 2; sub < bintrie::kHeaderStorageOffset; ++sub)
    if (has(sub)) return std::nullopt;
  const uint64_t all_chunks = (d.code_size + bintrie::kCodeChunkBytes - 1) / bintrie::kCodeChunkBytes;
  const uint64_t chunks = std::min<uint64_t>(all_chunks, 256 - bintrie::kCodeOffset);
  for (unsigned sub = bintrie::kCodeOffset; sub < 256; ++sub)
    if (bool(has(sub)) != (sub - bintrie::kCodeOffset < chunks)) return std::nullopt;
  if (d.code_size == 0) {
    static const Hash32 kEmptyCodeHash = [] {
      Hash32 h;
      kernels::keccak256(nullptr, 0, h.data());
      return h;
    }();
    if (*code_hash != kEmptyCodeHash) return std::nullopt;
  }
  return all_chunks;
}

bool same_prefix(const uint8_t* a, const uint8_t* b, unsigned bits) {
  const unsigned full = bits / 8;
  for (unsigned i = 0; i < full; ++i)
    if (a[i] != b[i]) return false;
  const unsigned rest = bits % 8;
  if (rest == 0) return true;
  const uint8_t mask = uint8_t(0xff << (8 - rest));
  return ((a[full] ^ b[full]) & mask) == 0;
}

std::string hex(std::span<const uint8_t> bytes) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (uint8_t b : bytes) { s += d[b >> 4]; s += d[b & 15]; }
  return s;
}

std::string locator_name(Locator l) {
  return "page " + std::to_string(locator_page(l)) + " record " + std::to_string(locator_index(l));
}

}  // namespace st::persist::bintrie_disk
