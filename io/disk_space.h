// disk_space: how much room the filesystem holding a path has left (statvfs), and the one
// error every store returns when it runs out:
//
//   "no space left on device: need N bytes, have M (what was being written)"
//
// code Errc::full, sys_errno ENOSPC. "have" is statvfs's f_bavail * f_frsize: the bytes an
// unprivileged writer may still use (what `df` shows as Avail). Stores check it before a
// write that would otherwise fail half-way (arena growth, a RocksDB batch or flush), and map
// ENOSPC / EDQUOT from the kernel to the same message when the check could not foresee it.
#pragma once

#include <cstdint>
#include <string>

#include "io/status.h"

namespace st::io {

// Bytes available to unprivileged writers on the filesystem holding `path` (a file or a
// directory that exists). Errors: statvfs's errno.
Status available_bytes(const std::string& path, uint64_t* bytes);

// ENOSPC (device full) or EDQUOT (quota exhausted): both mean "no room to write".
bool is_no_space_errno(int err);

// The one-line error: Errc::full, "no space left on device: need N bytes, have M (what)".
// `have` is measured at `path` now; when statvfs fails it says "have unknown".
Status no_space(const std::string& path, uint64_t need_bytes, const std::string& what);

}  // namespace st::io
