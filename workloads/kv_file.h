// kv_file: the --kv input of `statetree root --tree mpt`: one `hexkey hexvalue` pair per line.
//
// Format: fields are separated by spaces or tabs; a trailing '\r' is dropped; blank lines and
// lines whose first non-blank character is '#' are skipped; hex is "0x"/"0X" optional, an even
// number of digits of either case ("0x" is empty). A later line for the same key wins; an
// empty value deletes the key. Limits: a key at most 1 MiB (1 GiB with --secure, where only
// its hash is a path), a value at most 1 GiB, checked before any byte is decoded. Errors are
// one line naming the file and line: "<path>:<line>: <what>".
//
// Cost: the file is mapped (input_file.h) and read once; hex goes straight into one arena, one
// record per line; one sort by (key, line) then a linear pass keeps the last write per key.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "engine/mpt/builder.h"

namespace st::workloads {

struct KvFile {
  std::vector<uint8_t> arena;              // decoded keys and values
  std::vector<st::mpt::KeyValue> pairs;    // into arena: raw keys strictly ascending, values non-empty
  uint64_t data_lines = 0;                 // lines that held a pair (before last-write-wins)
};

// Parses the text of a --kv file; `source` names it in errors. `secure` only raises the key
// length limit (the caller hashes the keys).
std::variant<KvFile, std::string> parse_kv_text(std::string_view text, const std::string& source, bool secure);

// Opens (regular files only) and parses a --kv file.
std::variant<KvFile, std::string> read_kv_file(const std::string& path, bool secure);

}  // namespace st::workloads
