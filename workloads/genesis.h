// genesis: the genesis allocation loader shared by the MPT and binary-trie engines.
//
// Accepted files (JSON):
//   {"alloc": {<address>: <account>, ...}, "expected_state_root": "0x<64 hex>",
//    "expected_genesis_block_hash": "0x<64 hex>", "network": "...", "accounts": <count>, ...}
//   or directly the alloc object {<address>: <account>, ...} (no "alloc" key at the top).
// In the wrapped form the other top-level keys are optional; unknown ones are ignored
// (a go-ethereum genesis.json with "config", "gasLimit" ... loads too). "accounts", when
// present, must equal the number of accounts.
//
//   <address>  "0x"/"0X" optional, 40 hex digits of either case (exactly 20 bytes)
//   <account>  "<balance>"  (a statetree short form: decimal, or 0x-hex with 1..64 digits,
//                            the strict spellings of u256.h)
//            | {"balance": ..., "nonce": ..., "code": ..., "storage": {<slot>: <value>, ...}}
//
// Object fields follow go-ethereum (core/types/account.go: math.HexOrDecimal256,
// math.HexOrDecimal64, hexutil.Bytes, storageJSON); see genesis_values.h:
//   balance  required (null counts as absent). A JSON integer of any size, or a string: ""
//            (0), decimal digits, or "0x"/"0X" then hex digits; an optional '+' before the
//            digits; <= 2^256-1. Refused: fractions and exponents, "0x" alone, a '-' sign
//            (go-ethereum reads "-1" and wraps it to 2^256-1; statetree refuses it).
//   nonce    optional (0; null = absent). A JSON integer, or a string: "" (0), decimal
//            digits, or "0x"/"0X" then hex digits; no sign; <= 2^64-1. "0x" alone is refused.
//   code     optional (empty; null = absent). A string: "" or "0x" (empty), else "0x"/"0X"
//            then an even number of hex digits.
//   storage  optional (null = absent); an object. Slot and value: an optional lowercase
//            "0x", then an even number (0..64) of hex digits, left-padded to 32 bytes; ""
//            and "0x" are 0; a null value is 0; "0X", odd lengths and numbers are refused.
//            Zero values are kept as written.
//   any other key is an error (catches typos such as "nounce"; go-ethereum ignores it).
//
// Strictness beyond go-ethereum (which keeps the last of duplicate keys and ignores unknown
// fields): malformed JSON (nlohmann's message with line and column), JSON nested deeper than
// 64 levels, a bad address, number or hex string, a duplicate address (also when spelled
// differently: case, 0x) or a duplicate storage slot (also "0x01" / "0x0001"), a duplicate
// JSON key anywhere: a one-line error naming the account (as written in the file) and the
// field. JSON string escapes are decoded before the rules above apply.
//
// Order and cost: accounts keep the order of the file. The text is read once by nlohmann's
// SAX parser (no DOM); time and memory are linear in the file size, and nothing is sized
// from a number in the file ("accounts" is only compared at the end).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "engine/state/state_types.h"

namespace st::workloads {

struct GenesisFile {
  st::state::Allocation alloc;                                // accounts in file order
  std::optional<st::state::Hash32> expected_state_root;      // "expected_state_root"
  std::optional<st::state::Hash32> expected_genesis_block_hash;
  std::string network;                                        // "network", empty if absent
};

// Parses JSON text; `source` names it in error messages (e.g. the path).
std::variant<GenesisFile, std::string> parse_genesis_json(std::string_view text,
                                                          const std::string& source = "genesis");

// Reads and parses a file.
std::variant<GenesisFile, std::string> load_genesis_file(const std::string& path);

// The allocation only.
std::variant<st::state::Allocation, std::string> load_genesis_alloc(const std::string& path);

}  // namespace st::workloads
