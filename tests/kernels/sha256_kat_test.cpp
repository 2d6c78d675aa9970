// sha256_kat_test: NIST known answers through every tier available on this machine, and
// each tier's built-in self-test.
#include <doctest/doctest.h>

#include <string>

#include "kernels/sha256.h"

using namespace st::kernels;

TEST_CASE("sha256 self-test passes for every available tier") {
  for (Sha256Tier t : {Sha256Tier::portable, Sha256Tier::shani, Sha256Tier::avx2, Sha256Tier::avx512}) {
    if (!sha256_tier_available(t)) { MESSAGE("tier not available here: " << std::string(sha256_tier_name(t))); continue; }
    CAPTURE(sha256_tier_name(t));
    CHECK(sha256_self_test(t) == "");
  }
}

TEST_CASE("sha256_select rejects unknown names") {
  auto err = sha256_select("sha3");
  REQUIRE(err.has_value());
  CHECK(err->find("unknown kernel") != std::string::npos);
  CHECK_FALSE(sha256_select("auto").has_value());
}
