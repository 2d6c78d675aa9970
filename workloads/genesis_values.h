// genesis_values: the spellings go-ethereum accepts for the fields of a genesis account
// (core/types/account.go: balance math.HexOrDecimal256, nonce math.HexOrDecimal64, code
// hexutil.Bytes, storage keys and values storageJSON), as pure functions on the text of a
// JSON string (or the raw text of a JSON number). Each returns the value or a one-line error
// that quotes the text. The rules are listed in genesis.h.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "engine/state/state_types.h"

namespace st::workloads {

// Balance: "" is 0; "0x"/"0X" then hex digits, else decimal digits; an optional '+' before
// the digits; <= 2^256-1. A '-' sign is refused (go-ethereum reads it and wraps it modulo
// 2^256 when it builds the state).
std::variant<st::state::U256, std::string> geth_balance(std::string_view text);

// Nonce: "" is 0; "0x"/"0X" then hex digits, else decimal digits; no sign; <= 2^64-1.
std::variant<uint64_t, std::string> geth_nonce(std::string_view text);

// Code: "" or "0x"/"0X" then an even number of hex digits (possibly none).
std::variant<std::vector<uint8_t>, std::string> geth_code(std::string_view text);

// Storage key or value: an optional lowercase "0x", then an even number (0..64) of hex digits,
// left-padded to 32 bytes ("" and "0x" are 0; "0X" is not a prefix there).
std::variant<st::state::Hash32, std::string> geth_storage_word(std::string_view text);

}  // namespace st::workloads
