// mpt/pure_hash: the MPT commit's pure hash (pure_hash_protocol.h): the encodings its hash
// phase hashed (every new record, >= 32 bytes, and the tries' tops), gathered by level
// (1 = no hashed child) into KeccakLevels before the clock, their bytes copied into one
// array in that order (so the reading depends neither on where the commit laid them out nor
// on what it read last), then hashed again alone, each level ONE keccak256_batch, the
// fastest of kPureHashPasses passes timed.
//
// Invariants: the records hold their children's digests already (the commit patched them
// in), so every level's inputs are known before the clock and a pass writes only `out`;
// mpt_pure_hash allocates nothing on success (the scratch is sized before: prepare(),
// gather_bytes()); every digest is compared with the commit's (`expect`), a difference is an
// error naming the record's level and length.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/persist/pure_hash_protocol.h"
#include "io/status.h"

namespace st::persist {

struct KeccakLevels {
  // Message i (level order: level 1's, then level 2's, ...): its bytes, its length, the
  // digest the commit gave it (32 bytes).
  std::vector<const uint8_t*> msgs;
  std::vector<size_t> lens;
  std::vector<const uint8_t*> expect;
  // level_end[l]: one past level l's last message (level l = [level_end[l - 1], level_end[l]));
  // level_end[0] = 0 (no record is at level 0).
  std::vector<uint32_t> level_end;
  std::vector<uint8_t> out;    // 32 bytes a message
  std::vector<uint8_t> bytes;  // gather_bytes(): every message's bytes, in message order

  // For n messages over levels 1..levels: level_end from counts[l] (messages at level l),
  // the arrays sized (out zero-filled); capacity kept between blocks. Then fill slot i
  // (msgs[i] may point anywhere) and call gather_bytes().
  void prepare(const std::vector<uint32_t>& counts, size_t n);
  // Every message copied into `bytes`, back to back in message order; msgs point there.
  void gather_bytes();
};

// The timed passes over lv (prepared and filled), then the comparison with lv.expect.
io::Status mpt_pure_hash(KeccakLevels& lv, PureHashCount* out);

}  // namespace st::persist
