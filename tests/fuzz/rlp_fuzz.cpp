// rlp_fuzz: the strict RLP item decoder on arbitrary bytes: never reads outside the input,
// an accepted item lies inside it, and rlp_decode_exact accepts exactly the inputs whose
// first item spans all of them.
#include <cstddef>
#include <cstdint>

#include "kernels/rlp.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  st::kernels::RlpItem item{};
  const auto err = st::kernels::rlp_decode_item(data, size, &item);
  st::kernels::RlpItem exact{};
  const auto err_exact = st::kernels::rlp_decode_exact(data, size, &exact);
  if (err == st::kernels::RlpError::ok) {
    FUZZ_CHECK(size_t(item.header_len) + size_t(item.payload_len) <= size);
    const bool spans_all = size_t(item.header_len) + size_t(item.payload_len) == size;
    FUZZ_CHECK((err_exact == st::kernels::RlpError::ok) == spans_all);
  } else {
    FUZZ_CHECK(err_exact != st::kernels::RlpError::ok);
  }
  return 0;
}
