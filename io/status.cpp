// status: names and messages for the io layer's error values.
#include "io/status.h"

#include <cstring>

namespace st::io {

const char* errc_name(Errc c) {
  switch (c) {
    case Errc::ok: return "ok";
    case Errc::sys: return "system error";
    case Errc::corrupt_page: return "corrupt page";
    case Errc::out_of_range: return "page out of range";
    case Errc::end_of_file: return "unexpected end of file";
    case Errc::unsupported: return "unsupported";
    case Errc::bad_argument: return "bad argument";
    case Errc::mismatch: return "parameter mismatch";
    case Errc::injected_fault: return "injected fault";
    case Errc::crashed: return "store crashed";
    case Errc::not_found: return "not found";
    case Errc::full: return "no free space";
    case Errc::locked: return "locked";
  }
  return "unknown";
}

Status Status::from_errno(int err, const std::string& what) {
  return Status(Errc::sys, what + ": " + std::strerror(err) + " (errno " + std::to_string(err) + ")", err);
}

}  // namespace st::io
