// record_page_fuzz: the record page parser and the MPT disk-node decoder on arbitrary
// bytes. record_page.h promises a parsed page never yields a span outside the payload;
// every record body of an accepted page is also fed to mpt::decode_node (which must only
// answer, never crash).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "engine/mpt/node_decode.h"
#include "engine/persist/mpt/node.h"
#include "engine/persist/record_page.h"
#include "tests/fuzz/fuzz_util.h"

using namespace st::persist;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> payload(data, size);
  RecordPage page;
  const std::string why = decode_record_page(7, payload, &page);
  if (!why.empty()) return 0;
  for (const RecordView& r : page.records) {
    FUZZ_CHECK(r.body.data() >= data && r.body.data() + r.body.size() <= data + size);
    FUZZ_CHECK(r.child_count == 0 || (r.child_bytes >= data && r.child_bytes + 8 * size_t(r.child_count) <= data + size));
    st::mpt::DecodedNode node;
    (void)st::mpt::decode_node(r.body, &node);
  }
  return 0;
}
