// check: ST_CHECK(cond, "message"), the assertion that stays on in Release (NDEBUG) for the
// invariants that guard data: a page's bounds and checksum before its bytes are used, record
// counts, manifest sizes, the page allocator's ranges. A violated one prints
// "statetree: check failed at FILE:LINE: MESSAGE (COND)" to stderr and aborts.
//
// Invariants: for broken invariants of the program, never for bad input (bad input gets its
// one-line error and exit code 2 from the caller); cond is evaluated exactly once; the
// failure path is out of line and cold, so a passing check costs one predictable branch.
#pragma once

namespace st {

[[noreturn]] void check_failed(const char* file, int line, const char* cond, const char* message);

}  // namespace st

#define ST_CHECK(cond, message)                                                 \
  do {                                                                          \
    if (__builtin_expect(!(cond), 0)) ::st::check_failed(__FILE__, __LINE__, #cond, message); \
  } while (0)
