// bal_json: the human JSON form of block access lists and block files (the shape of
// tests/vectors/bal/*.json):
//
//   {"accounts": [{"address": "0x..20 bytes..",
//                  "storage_changes": [["0x<slot>", [[index, "0x<value>"], ...]], ...],
//                  "storage_reads": ["0x<slot>", ...],
//                  "balance_changes": [[index, "0x<balance>"], ...],
//                  "nonce_changes": [[index, nonce], ...],
//                  "code_changes": [[index, "0x<code bytes>"], ...]}, ...]}
//
// Integers are minimal lowercase 0x-hex ("0x0" for zero) on output; input accepts any
// 0x-hex of at most 32 bytes (either case), addresses in any case (EIP-55 is not checked).
// A block adds "number", "tree", "pre_state_root" (null = after the previous block),
// "tx_count" (null = unknown), "txs" ([{"gas_used", "calls"}]) and, on output, "bal_hash".
// bal_from_json does not sort: the model it returns is checked with state::bal_check by
// the caller that needs canonical form.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "engine/state/bal.h"

namespace st::workloads {

nlohmann::json bal_to_json(const state::BlockAccessList& bal);
nlohmann::json block_to_json(const state::Block& block);
// Errors: one line naming the field.
bool bal_from_json(const nlohmann::json& j, state::BlockAccessList* out, std::string* error);

}  // namespace st::workloads
