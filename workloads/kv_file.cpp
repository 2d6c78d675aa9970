// kv_file: see kv_file.h. Records hold arena offsets, not pointers, until the arena is final.
#include "workloads/kv_file.h"

#include <algorithm>
#include <array>
#include <cstring>

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

struct Record {
  uint64_t prefix;   // first 8 key bytes, big-endian, zero-padded: the fast comparison
  uint64_t key_off;
  uint64_t value_off;
  uint32_t key_len;
  uint32_t value_len;
  uint64_t line;     // order of the writes
};

std::string_view strip_prefix(std::string_view s) {
  if (s.size() >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  return s;
}

// Decodes even-length hex digits (no prefix) onto the end of the arena.
bool decode_hex(std::string_view digits, std::vector<uint8_t>& arena) {
  const size_t n = digits.size() / 2;
  const size_t at = arena.size();
  arena.resize(at + n);
  uint8_t* out = arena.data() + at;
  const auto* in = reinterpret_cast<const unsigned char*>(digits.data());
  int bad = 0;
  for (size_t i = 0; i < n; ++i) {
    const int hi = kHex[in[2 * i]], lo = kHex[in[2 * i + 1]];
    bad |= hi | lo;
    out[i] = uint8_t(hi << 4 | lo);
  }
  if (bad < 0) { arena.resize(at); return false; }
  return true;
}

bool is_blank(char c) { return c == ' ' || c == '\t'; }

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

}  // namespace

std::variant<KvFile, std::string> parse_kv_text(std::string_view text, const std::string& source, bool secure) {
  KvFile out;
  out.arena.reserve(text.size() / 2);
  std::vector<Record> records;
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
      while (q < line_end && !is_blank(*q)) ++q;
      if (nfields < 2) fields[nfields] = std::string_view(f, size_t(q - f));
      ++nfields;
      while (q < line_end && is_blank(*q)) ++q;
    }
    auto where = [&] { return source + ":" + std::to_string(lineno) + ": "; };
    if (nfields != 2) return where() + "expected 'hexkey hexvalue', got " + std::to_string(nfields) + " fields";
    const std::string_view key_hex = strip_prefix(fields[0]), value_hex = strip_prefix(fields[1]);
    if (key_hex.size() % 2) return where() + "bad hex key " + quote_for_error(fields[0]) + " (odd length)";
    if (value_hex.size() % 2) return where() + "bad hex value " + quote_for_error(fields[1]) + " (odd length)";
    if (key_hex.size() / 2 > max_key)
      return where() + (secure ? "key longer than 1 GiB" : "key longer than 1 MiB");
    if (value_hex.size() / 2 > kMaxValueBytes) return where() + "value longer than 1 GiB";
    Record r{};
    r.key_off = out.arena.size();
    r.key_len = uint32_t(key_hex.size() / 2);
    if (!decode_hex(key_hex, out.arena)) return where() + "bad hex key " + quote_for_error(fields[0]);
    r.value_off = out.arena.size();
    r.value_len = uint32_t(value_hex.size() / 2);
    if (!decode_hex(value_hex, out.arena)) return where() + "bad hex value " + quote_for_error(fields[1]);
    uint8_t pre[8] = {};
    std::memcpy(pre, out.arena.data() + r.key_off, std::min<size_t>(8, r.key_len));
    for (uint8_t b : pre) r.prefix = r.prefix << 8 | b;
    r.line = lineno;
    records.push_back(r);
  }
  out.data_lines = records.size();

  const uint8_t* arena = out.arena.data();
  std::sort(records.begin(), records.end(), [arena](const Record& a, const Record& b) {
    const int c = key_compare(a, b, arena);
    return c != 0 ? c < 0 : a.line < b.line;
  });
  out.pairs.reserve(records.size());
  for (size_t i = 0; i < records.size();) {
    size_t j = i + 1;
    while (j < records.size() && key_compare(records[i], records[j], arena) == 0) ++j;
    const Record& last = records[j - 1];  // the latest write of this key
    if (last.value_len != 0)
      out.pairs.push_back({arena + last.key_off, last.key_len, arena + last.value_off, last.value_len});
    i = j;
  }
  return out;
}

std::variant<KvFile, std::string> read_kv_file(const std::string& path, bool secure) {
  auto f = InputFile::open(path, "--kv file ");
  if (auto* err = std::get_if<std::string>(&f)) return std::move(*err);
  return parse_kv_text(std::get<InputFile>(f).text(), path, secure);
}

}  // namespace st::workloads
