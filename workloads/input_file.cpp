// input_file: see input_file.h. open(O_NONBLOCK) + fstat + mmap(MAP_PRIVATE, PROT_READ).
#include "workloads/input_file.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace st::workloads {

namespace {

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "is a directory";
  if (S_ISFIFO(mode)) return "is a FIFO, not a regular file";
  if (S_ISSOCK(mode)) return "is a socket, not a regular file";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "is a device, not a regular file";
  return "is not a regular file";
}

}  // namespace

InputFile::InputFile(InputFile&& o) noexcept : data_(o.data_), size_(o.size_), map_(o.map_) {
  o.data_ = nullptr;
  o.size_ = 0;
  o.map_ = nullptr;
}

InputFile& InputFile::operator=(InputFile&& o) noexcept {
  if (this != &o) {
    if (map_) ::munmap(map_, size_);
    data_ = o.data_;
    size_ = o.size_;
    map_ = o.map_;
    o.data_ = nullptr;
    o.size_ = 0;
    o.map_ = nullptr;
  }
  return *this;
}

InputFile::~InputFile() {
  if (map_) ::munmap(map_, size_);
}

std::variant<InputFile, std::string> InputFile::open(const std::string& path, const std::string& what) {
  const std::string who = what + path + ": ";
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return "cannot open " + who + std::strerror(errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    return "cannot stat " + who + std::strerror(e);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return who + file_kind(st.st_mode);
  }
  InputFile f;
  if (st.st_size > 0) {
    const size_t n = size_t(st.st_size);
    // Files up to 4 GiB are faulted in by the mmap call itself (one batched pass instead of a
    // fault per few pages); larger ones are read on demand.
    const int populate = n <= (size_t(4) << 30) ? MAP_POPULATE : 0;
    void* p = ::mmap(nullptr, n, PROT_READ, MAP_PRIVATE | populate, fd, 0);
    if (p == MAP_FAILED) {
      const int e = errno;
      ::close(fd);
      return "cannot map " + who + std::strerror(e);
    }
    ::madvise(p, n, MADV_SEQUENTIAL);
    f.map_ = p;
    f.data_ = static_cast<const char*>(p);
    f.size_ = n;
  }
  ::close(fd);
  return f;
}

}  // namespace st::workloads
