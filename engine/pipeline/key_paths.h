// key_paths: where each state key's walk goes in the tree, as the first byte of its path
// (MPT: keccak256 of the slot, or of the address for an account; binary trie: the EIP-7864
// tree key, engine/bintrie/keys.h). A split `bal` prefetch deals the block's keys out by
// it, so that each share walks its own subtrees and the shares read few pages twice.
//
// Invariants: first_byte is a pure function of the keys and the database's tree and hash
// kinds (one byte per key, in key order); the vectors are refilled per call, their capacity
// kept (no allocation once they have held a batch as large).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/state/state_source.h"
#include "io/manifest.h"

namespace st::pipeline {

struct KeyPaths {
  std::vector<uint8_t> first_byte;
  void compute(const io::StoreParams& params, std::span<const state::StateKey> keys);

 private:
  std::vector<const uint8_t*> slot_msgs_;  // MPT: the slot keys, hashed 8 at a time
  std::vector<uint32_t> slot_pos_;
  std::vector<uint8_t> digests_;
};

}  // namespace st::pipeline
