// blob_fuzz: the binary trie's group and stem blob decoders on arbitrary bytes. The first
// byte picks the group depth (1..8) and which decoder; the invariants are group_blob.h's:
// an accepted blob re-encodes to the same bytes, and a view accepts exactly what the
// decoder accepts, with the same message.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "engine/bintrie/group_blob.h"
#include "tests/fuzz/fuzz_util.h"

using namespace st::bintrie;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t sel = data[0];
  const std::span<const uint8_t> bytes(data + 1, size - 1);
  if (sel & 0x80) {
    auto r = decode_stem_blob(bytes);
    StemBlobView view;
    const std::string why = check_stem_blob(bytes, &view);
    if (auto* blob = std::get_if<StemBlob>(&r)) {
      FUZZ_CHECK(why.empty());
      std::vector<uint8_t> again;
      encode_stem_blob(*blob, &again);
      FUZZ_CHECK(again.size() == bytes.size() && std::equal(again.begin(), again.end(), bytes.begin()));
    } else {
      FUZZ_CHECK(why == std::get<std::string>(r));
    }
  } else {
    const unsigned g = 1 + (sel & 7);
    auto r = decode_group_blob(bytes, g);
    GroupBlobView view;
    const std::string why = check_group_blob(bytes, g, &view);
    if (auto* blob = std::get_if<GroupBlob>(&r)) {
      FUZZ_CHECK(why.empty());
      std::vector<uint8_t> again;
      encode_group_blob(*blob, &again);
      FUZZ_CHECK(again.size() == bytes.size() && std::equal(again.begin(), again.end(), bytes.begin()));
    } else {
      FUZZ_CHECK(why == std::get<std::string>(r));
    }
  }
  return 0;
}
