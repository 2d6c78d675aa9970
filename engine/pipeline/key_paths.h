// key_paths: where each state key's walk goes in the tree, as the first byte of its path
// (MPT: keccak256 of the slot, or of the address for an account; binary trie: the EIP-7864
// tree key, engine/bintrie/keys.h). A split `bal` prefetch deals the block's keys out by
// it, so that each share walks its own subtrees and the shares read few pages twice.
//
// Invariants: a pure function of the keys and the database's tree and hash kinds; out is
// refilled (one byte per key, in key order), its capacity kept.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/state/state_source.h"
#include "io/manifest.h"

namespace st::pipeline {

void path_first_bytes(const io::StoreParams& params, std::span<const state::StateKey> keys, std::vector<uint8_t>* out);

}  // namespace st::pipeline
