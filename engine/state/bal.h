// bal: EIP-7928 block-level access lists (BAL) as statetree's block trace format, and the
// block files that carry them. Pure code: the codec works on byte spans, no I/O.
//
//   BlockAccessList = [AccountChanges, ...]                  accounts strictly increasing
//   AccountChanges  = [address (20 B),
//                      storage_changes [[slot, [[index, value], ...]], ...],  slots strictly increasing,
//                                                                             each with >= 1 change
//                      storage_reads   [slot, ...],                           strictly increasing,
//                                                                             disjoint from the written slots
//                      balance_changes [[index, post_balance], ...],
//                      nonce_changes   [[index, nonce], ...],
//                      code_changes    [[index, code], ...]]
//   every change list: indices strictly increasing (a field changes at most once per index)
//   slot, value, post_balance: uint256 RLP integers (minimal big-endian, zero = 0x80);
//   nonce: uint64; index (block access index): uint32, 0 = pre-execution system calls,
//   1..n = the block's transactions, n+1 = post-execution.
//
// A block file is a sequence of RLP items, one per block:
//
//   Block       = [BlockHeader, BlockAccessList]
//   BlockHeader = [number (uint64), tree ("mpt" | "bintrie" | "" = any),
//                  pre_state_root (32 B, or empty = the state after the previous block of the
//                  file), tx_count (uint32, or the empty list = unknown), [[gas_used, calls], ...]
//                  (one per transaction, or empty when the trace does not know them)]
//
// A file holding one bare BlockAccessList (a list whose items are AccountChanges, or the
// empty list) is a one-block file: number 0, tree any, root unknown, tx_count unknown.
//
// Strict decoding: non-canonical RLP (kernels/rlp.h) or integers (leading zero bytes, a
// zero as 0x00), wrong item counts, unsorted or duplicate accounts / slots / indices, an
// index past tx_count + 1 (when the header gives tx_count), an address that is not 20
// bytes, a slot both written and read, an empty change list in storage_changes, trailing
// bytes: an error, one line naming the block, the account (when inside one) and the byte
// offset in the input.
//
// Invariants: encode(decode(bytes)) == bytes for every accepted input; a model built by
// the generators is canonical (sorted, unique), which encode() asserts only in tests
// (bal_check()).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/state/state_types.h"

namespace st::state {

using BalIndex = uint32_t;  // block access index

struct StorageChange {
  BalIndex index = 0;
  U256 value{};
  bool operator==(const StorageChange&) const = default;
};
struct SlotChanges {
  Hash32 slot{};  // the slot key as a 32-byte big-endian integer
  std::vector<StorageChange> changes;
  bool operator==(const SlotChanges&) const = default;
};
struct BalanceChange {
  BalIndex index = 0;
  U256 post_balance{};
  bool operator==(const BalanceChange&) const = default;
};
struct NonceChange {
  BalIndex index = 0;
  uint64_t nonce = 0;
  bool operator==(const NonceChange&) const = default;
};
struct CodeChange {
  BalIndex index = 0;
  std::vector<uint8_t> code;
  bool operator==(const CodeChange&) const = default;
};

struct AccountChanges {
  Address address{};
  std::vector<SlotChanges> storage_changes;
  std::vector<Hash32> storage_reads;
  std::vector<BalanceChange> balance_changes;
  std::vector<NonceChange> nonce_changes;
  std::vector<CodeChange> code_changes;
  bool operator==(const AccountChanges&) const = default;
};

struct BlockAccessList {
  std::vector<AccountChanges> accounts;
  bool operator==(const BlockAccessList&) const = default;
};

// What a generated workload knows of one transaction (a user's BAL leaves it empty).
struct TxInfo {
  uint64_t gas_used = 0;
  uint64_t calls = 0;
  bool operator==(const TxInfo&) const = default;
};

enum class BalTree : uint8_t { any, mpt, bintrie };
const char* bal_tree_name(BalTree t);  // "" (any), "mpt", "bintrie"

struct BlockHeader {
  uint64_t number = 0;
  BalTree tree = BalTree::any;
  std::optional<Hash32> pre_state_root;  // nullopt: the state after the previous block
  std::optional<uint32_t> tx_count;       // nullopt: unknown (a bare BAL)
  std::vector<TxInfo> txs;                // empty, or one per transaction
  bool operator==(const BlockHeader&) const = default;
};

struct Block {
  BlockHeader header;
  BlockAccessList bal;
  bool operator==(const Block&) const = default;
};

// ---- codec -------------------------------------------------------------------------------

std::vector<uint8_t> encode_bal(const BlockAccessList& bal);
// keccak256(rlp(bal)).
Hash32 bal_hash(const BlockAccessList& bal);
// Encodes one block item ([header, bal]).
std::vector<uint8_t> encode_block(const Block& block);
// Appends encode_block(b) for every block.
std::vector<uint8_t> encode_blocks(std::span<const Block> blocks);

// Decodes exactly one BlockAccessList spanning `bytes`; tx_count (if given) bounds the
// indices to tx_count + 1. On error returns false and sets *error (one line; `block`
// names the block in it).
bool decode_bal(std::span<const uint8_t> bytes, std::optional<uint32_t> tx_count, BlockAccessList* out,
                std::string* error, uint64_t block = 0);
// Decodes a block file (a sequence of Block items, or one bare BAL).
bool decode_blocks(std::span<const uint8_t> bytes, std::vector<Block>* out, std::string* error);

// The canonical-form rules of the decoder, on a model (sorted, unique, disjoint reads and
// writes, non-empty slot change lists, indices within tx_count + 1 when given). Empty
// string when canonical.
std::string bal_check(const BlockAccessList& bal, std::optional<uint32_t> tx_count);

}  // namespace st::state
