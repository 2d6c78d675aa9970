// kv_file: see kv_file.h. Records hold arena offsets, not pointers, until the arena is final;
// they are made in line order, so a record's index is the order of the writes. Field
// boundaries and hex digits are handled 8 characters at a time (SWAR).
#include "workloads/kv_file.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>

#include "workloads/bucket_sort.h"
#include "workloads/hex_swar.h"
#include "workloads/huge_pages.h"
#include "workloads/input_file.h"
#include "workloads/u256.h"

namespace st::workloads {

namespace {

constexpr uint64_t kMaxKeyBytes = uint64_t(1) << 20;
constexpr uint64_t kMaxSecureKeyBytes = uint64_t(1) << 30;
constexpr uint64_t kMaxValueBytes = uint64_t(1) << 30;

constexpr std::array<int8_t, 256> make_hex_table() {
  std::array<int8_t, 256> t{};
  for (auto& v : t) v = -1;
  for (int c = '0'; c <= '9'; ++c) t[size_t(c)] = int8_t(c - '0');
  for (int c = 'a'; c <= 'f'; ++c) t[size_t(c)] = int8_t(c - 'a' + 10);
  for (int c = 'A'; c <= 'F'; ++c) t[size_t(c)] = int8_t(c - 'A' + 10);
  return t;
}
constexpr std::array<int8_t, 256> kHex = make_hex_table();

using hex_swar::k01;
using hex_swar::k80;
using hex_swar::kSwar;
using hex_swar::load8;

bool is_blank(char c) { return c == ' ' || c == '\t'; }

// The first ' ' or '\t' in [p, end), or end.
const char* find_blank(const char* p, const char* end) {
  if constexpr (kSwar) {
    while (end - p >= 8) {
      const uint64_t x = load8(p);
      const uint64_t s = x ^ (k01 * ' '), t = x ^ (k01 * '\t');
      const uint64_t zero = (((s - k01) & ~s) | ((t - k01) & ~t)) & k80;  // exact at the lowest set byte
      if (zero) return p + (std::countr_zero(zero) >> 3);
      p += 8;
    }
  }
  while (p < end && !is_blank(*p)) ++p;
  return p;
}

struct Record {
  uint64_t prefix;   // first 8 key bytes, big-endian, zero-padded: the fast comparison
  uint64_t key_off;
  uint64_t value_off;
  uint32_t key_len;
  uint32_t value_len;
};

std::string_view strip_prefix(std::string_view s) {
  if (s.size() >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  return s;
}

// Decodes even-length hex digits (no prefix) to out; false if one is not a hex digit.
bool decode_hex(std::string_view digits, uint8_t* out) {
  const size_t n = digits.size() / 2;
  const char* in = digits.data();
  size_t i = 0;
  if constexpr (kSwar) {
    for (; i + 4 <= n; i += 4)
      if (!hex_swar::decode8(in + 2 * i, out + i)) return false;
  }
  int bad = 0;
  for (; i < n; ++i) {
    const int hi = kHex[static_cast<unsigned char>(in[2 * i])], lo = kHex[static_cast<unsigned char>(in[2 * i + 1])];
    bad |= hi | lo;
    out[i] = uint8_t(hi << 4 | lo);
  }
  return bad >= 0;
}

// Byte order of the keys (the prefix decides most comparisons without touching the arena).
int key_compare(const Record& a, const Record& b, const uint8_t* arena) {
  if (a.prefix != b.prefix) return a.prefix < b.prefix ? -1 : 1;
  const uint32_t n = std::min(a.key_len, b.key_len);
  if (n > 8) {
    const int c = std::memcmp(arena + a.key_off + 8, arena + b.key_off + 8, n - 8);
    if (c != 0) return c;
  }
  return a.key_len == b.key_len ? 0 : a.key_len < b.key_len ? -1 : 1;
}

// Decodes one data line's two fields (key, value) into the arena at *used as a record;
// "" or the error (without the line's position).
std::string decode_record(std::string_view key_field, std::string_view value_field, uint64_t max_key, bool secure,
                          uint8_t* arena_base, uint64_t* used, Record* r) {
  const std::string_view key_hex = strip_prefix(key_field), value_hex = strip_prefix(value_field);
  if (key_hex.size() % 2) return "bad hex key " + quote_for_error(key_field) + " (odd length)";
  if (value_hex.size() % 2) return "bad hex value " + quote_for_error(value_field) + " (odd length)";
  if (key_hex.size() / 2 > max_key) return secure ? "key longer than 1 GiB" : "key longer than 1 MiB";
  if (value_hex.size() / 2 > kMaxValueBytes) return "value longer than 1 GiB";
  r->key_off = *used;
  r->key_len = uint32_t(key_hex.size() / 2);
  if (!decode_hex(key_hex, arena_base + *used)) return "bad hex key " + quote_for_error(key_field);
  *used += r->key_len;
  r->value_off = *used;
  r->value_len = uint32_t(value_hex.size() / 2);
  if (!decode_hex(value_hex, arena_base + *used)) return "bad hex value " + quote_for_error(value_field);
  *used += r->value_len;
  uint8_t pre[8] = {};
  std::memcpy(pre, arena_base + r->key_off, std::min<size_t>(8, r->key_len));
  for (uint8_t b : pre) r->prefix = r->prefix << 8 | b;
  return "";
}

// The data lines of text (blank lines and '#' comments skipped) decoded into the arena, keys
// and values back to back, as records in line order; "" or the error naming the line.
std::string parse_records(std::string_view text, const std::string& source, bool secure, uint8_t* arena_base,
                          uint64_t* used, std::vector<Record>* records) {
  const uint64_t max_key = secure ? kMaxSecureKeyBytes : kMaxKeyBytes;
  const char* p = text.data();
  const char* const end = p + text.size();
  uint64_t lineno = 0;
  while (p < end) {
    ++lineno;
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', size_t(end - p)));
    const char* line_end = nl ? nl : end;
    const char* next = nl ? nl + 1 : end;
    if (line_end > p && line_end[-1] == '\r') --line_end;
    const char* q = p;
    p = next;
    while (q < line_end && is_blank(*q)) ++q;
    if (q == line_end || *q == '#') continue;
    // Up to two fields, then count any further ones for the message.
    std::string_view fields[2];
    size_t nfields = 0;
    while (q < line_end) {
      const char* f = q;
      q = find_blank(q, line_end);
      if (nfields < 2) fields[nfields] = std::string_view(f, size_t(q - f));
      ++nfields;
      while (q < line_end && is_blank(*q)) ++q;
    }
    auto where = [&] { return source + ":" + std::to_string(lineno) + ": "; };  // built only for an error
    if (nfields != 2) return where() + "expected 'hexkey hexvalue', got " + std::to_string(nfields) + " fields";
    Record r{};
    if (std::string e = decode_record(fields[0], fields[1], max_key, secure, arena_base, used, &r); !e.empty())
      return where() + e;
    reserve_one_more(*records);
    records->push_back(r);
  }
  return "";
}

// The pairs sorted by key, each key's latest write (line order) only, empty values dropped.
void sorted_pairs(const std::vector<Record>& records, const uint8_t* arena, std::vector<st::mpt::KeyValue>* pairs) {
  struct SortKey {
    uint64_t prefix;
    uint64_t index;  // into records: the line order
  };
  std::vector<SortKey> order;
  order.reserve(records.size());
  advise_huge_pages(order.data(), order.capacity() * sizeof(SortKey));
  order.resize(records.size());
  for (size_t i = 0; i < records.size(); ++i) order[i] = {records[i].prefix, i};
  bucket_sort(order, [](const SortKey& k) { return k.prefix; }, [&](const SortKey& a, const SortKey& b) {
    if (a.prefix != b.prefix) return a.prefix < b.prefix;
    const int c = key_compare(records[a.index], records[b.index], arena);
    return c != 0 ? c < 0 : a.index < b.index;
  });
  pairs->reserve(records.size());
  advise_huge_pages(pairs->data(), pairs->capacity() * sizeof(st::mpt::KeyValue));
  for (size_t i = 0; i < order.size();) {
    size_t j = i + 1;
    while (j < order.size() && key_compare(records[order[i].index], records[order[j].index], arena) == 0) ++j;
    const Record& last = records[order[j - 1].index];  // the latest write of this key
    if (last.value_len != 0) pairs->push_back({arena + last.key_off, last.key_len, arena + last.value_off, last.value_len});
    i = j;
  }
}

}  // namespace

std::variant<KvFile, std::string> parse_kv_text(std::string_view text, const std::string& source, bool secure) {
  KvFile out;
  // Every decoded byte comes from two characters of the text: half its size is an upper bound.
  out.arena.reserve(text.size() / 2);
  advise_huge_pages(out.arena.data(), out.arena.capacity());
  out.arena.resize(text.size() / 2);
  uint64_t used = 0;
  std::vector<Record> records;
  if (std::string e = parse_records(text, source, secure, out.arena.data(), &used, &records); !e.empty()) return e;
  out.data_lines = records.size();
  out.arena.resize(used);  // (no reallocation: the pointers below are into this buffer)
  sorted_pairs(records, out.arena.data(), &out.pairs);
  return out;
}

std::variant<KvFile, std::string> read_kv_file(const std::string& path, bool secure) {
  auto f = InputFile::open(path, "--kv file ");
  if (auto* err = std::get_if<std::string>(&f)) return std::move(*err);
  return parse_kv_text(std::get<InputFile>(f).text(), path, secure);
}

}  // namespace st::workloads
