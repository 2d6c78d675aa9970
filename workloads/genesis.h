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
//   <address>  "0x" optional, 40 hex digits of either case (exactly 20 bytes)
//   <account>  "<balance>"  (decimal, or 0x-hex)
//            | {"balance": "<balance>", "nonce": <nonce>, "code": "0x<hex>",
//               "storage": {"<slot>": "<value>", ...}}
//              balance  required; decimal or 0x-hex string, or a JSON integer; <= 2^256-1
//              nonce    optional (0); JSON integer, decimal or 0x-hex string; <= 2^64-1
//              code     optional (empty); "0x" then an even number of hex digits
//              storage  optional; slot and value: "0x" optional, 1..64 hex digits
//                       (left-padded to 32 bytes); zero values are kept as written
//              any other key is an error (catches typos such as "nounce")
//
// Strictness: malformed JSON (nlohmann's message with line and column), a bad address,
// number or hex string, a duplicate address (also when spelled differently: case, 0x) or a
// duplicate storage slot, a duplicate JSON key anywhere: a one-line error naming the account
// (as written in the file) and the field.
//
// Order: accounts keep the order of the file (the JSON is parsed into nlohmann::json, whose
// objects are sorted, and the file order of the alloc keys is recorded by a parser callback;
// nlohmann::ordered_json is avoided because its inserts are linear, ~25x slower on mainnet).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "engine/state/state_types.h"

namespace st::workloads {

struct GenesisFile {
  st::state::Allocation alloc;                                // accounts in file order
  std::optional<st::state::Bytes32> expected_state_root;      // "expected_state_root"
  std::optional<st::state::Bytes32> expected_genesis_block_hash;
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
