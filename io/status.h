// status: the io layer's operating-error values. Programmer errors are assertions; anything
// the outside world can cause (errno, a corrupt page, a parameter mismatch, a missing kernel
// feature) is an Errc plus a one-line message. Completions carry only the small Errc + errno
// + page id (no allocation per page); describe() turns them into the message on demand.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

namespace st::io {

enum class Errc : uint8_t {
  ok = 0,
  sys,             // an errno from the kernel (sys_errno holds it)
  corrupt_page,    // page checksum / trailer mismatch: the page id is named
  out_of_range,    // page id beyond the store's capacity
  end_of_file,     // a read returned 0 bytes before the page was complete
  unsupported,     // a kernel feature the store needs is missing
  bad_argument,    // caller passed something invalid (bad page size, bad option value)
  mismatch,        // opened with other parameters than the data was built with
  injected_fault,  // MemoryStore fault injection
  crashed,         // MemoryStore after crash(): everything fails until recover()
  not_found,       // a file / key that should exist does not
  full,            // no free space left (allocator / capacity)
  locked,          // the database is held by another writer (db_lock.h)
};

const char* errc_name(Errc c);

// A value-typed result for control-plane calls (open, sync, manifest I/O).
class Status {
 public:
  Status() = default;
  Status(Errc code, std::string message, int sys_errno = 0)
      : code_(code), sys_errno_(sys_errno), message_(std::move(message)) {}
  // errno-based error: "<what>: <strerror(err)>".
  static Status from_errno(int err, const std::string& what);

  bool ok() const { return code_ == Errc::ok; }
  explicit operator bool() const { return ok(); }
  Errc code() const { return code_; }
  int sys_errno() const { return sys_errno_; }
  const std::string& message() const { return message_; }

 private:
  Errc code_ = Errc::ok;
  int sys_errno_ = 0;
  std::string message_;
};

}  // namespace st::io
