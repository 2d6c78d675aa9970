// check: the out-of-line failure path of ST_CHECK (see check.h).
#include "kernels/support/check.h"

#include <cstdio>
#include <cstdlib>

namespace st {

void check_failed(const char* file, int line, const char* cond, const char* message) {
  std::fprintf(stderr, "statetree: check failed at %s:%d: %s (%s)\n", file, line, message, cond);
  std::fflush(stderr);
  std::abort();
}

}  // namespace st
