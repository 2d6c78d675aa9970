// disk_space: statvfs and the "no space left on device" error (see the header).
#include "io/disk_space.h"

#include <sys/statvfs.h>

#include <cerrno>

namespace st::io {

Status available_bytes(const std::string& path, uint64_t* bytes) {
  struct statvfs v;
  int r;
  do r = ::statvfs(path.c_str(), &v);
  while (r != 0 && errno == EINTR);
  if (r != 0) return Status::from_errno(errno, "statvfs " + path);
  *bytes = uint64_t(v.f_bavail) * uint64_t(v.f_frsize);
  return {};
}

bool is_no_space_errno(int err) { return err == ENOSPC || err == EDQUOT; }

Status no_space(const std::string& path, uint64_t need_bytes, const std::string& what) {
  uint64_t have = 0;
  const std::string have_text = available_bytes(path, &have).ok() ? std::to_string(have) : "unknown";
  return Status(Errc::full,
                "no space left on device: need " + std::to_string(need_bytes) + " bytes, have " + have_text + " (" +
                    what + ")",
                ENOSPC);
}

}  // namespace st::io
