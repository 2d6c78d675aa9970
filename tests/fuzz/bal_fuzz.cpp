// bal_fuzz: the EIP-7928 block access list decoders (engine/state/bal.h) on arbitrary bytes.
// The first byte picks the decoder: a block file (decode_blocks) or one bare list
// (decode_bal, with a tx_count bound or none). The invariants are bal.h's: an accepted input
// re-encodes to the same bytes, the model it gives is canonical (bal_check), and an error is
// one non-empty line.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/state/bal.h"
#include "tests/fuzz/fuzz_util.h"

using namespace st::state;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t sel = data[0];
  const std::span<const uint8_t> bytes(data + 1, size - 1);
  std::string error;
  if ((sel & 3) == 0) {
    std::vector<Block> blocks;
    if (decode_blocks(bytes, &blocks, &error)) {
      FUZZ_CHECK(!blocks.empty());
      for (const auto& b : blocks) FUZZ_CHECK(bal_check(b.bal, b.header.tx_count).empty());
      // A bare list is a one-block file: it re-encodes as a bare list, not as a block item.
      const std::vector<uint8_t> again = encode_blocks(blocks);
      const std::vector<uint8_t> bare = blocks.size() == 1 ? encode_bal(blocks[0].bal) : std::vector<uint8_t>{};
      const bool same = std::equal(again.begin(), again.end(), bytes.begin(), bytes.end()) ||
                        std::equal(bare.begin(), bare.end(), bytes.begin(), bytes.end());
      FUZZ_CHECK(same);
    } else {
      FUZZ_CHECK(!error.empty() && error.find('\n') == std::string::npos);
    }
  } else {
    const std::optional<uint32_t> tx_count =
        (sel & 3) == 1 ? std::nullopt : std::optional<uint32_t>((sel & 3) == 2 ? sel >> 2 : UINT32_MAX - 1);
    BlockAccessList bal;
    if (decode_bal(bytes, tx_count, &bal, &error)) {
      FUZZ_CHECK(bal_check(bal, tx_count).empty());
      const std::vector<uint8_t> again = encode_bal(bal);
      FUZZ_CHECK(std::equal(again.begin(), again.end(), bytes.begin(), bytes.end()));
    } else {
      FUZZ_CHECK(!error.empty() && error.find('\n') == std::string::npos);
    }
  }
  return 0;
}
