// db_lock: the writer lock, the reader pins and the writer's reader gate (see the header).
#include "io/db_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <iterator>

namespace st::io {

namespace {

int flock_retry(int fd, int op) {
  int r;
  do r = ::flock(fd, op);
  while (r != 0 && errno == EINTR);
  return r;
}

// "PID CMDLINE" of this process (arguments joined by spaces, one line).
std::string holder_text() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string cmd((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!cmd.empty() && cmd.back() == '\0') cmd.pop_back();
  for (char& c : cmd)
    if (c == '\0' || c == '\n' || c == '\r') c = ' ';
  if (cmd.empty()) cmd = "unknown command";
  return std::to_string(::getpid()) + " " + cmd + "\n";
}

// The refusal, from the holder's text ("PID CMDLINE").
std::string locked_message(const std::string& dir, int fd) {
  std::string text;
  char buf[4096];
  ssize_t r;
  off_t off = 0;
  while ((r = ::pread(fd, buf, sizeof(buf), off)) > 0 && text.size() < 4096) {
    text.append(buf, size_t(r));
    off += r;
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  const size_t sp = text.find(' ');
  const std::string pid = text.substr(0, sp);
  const bool pid_ok = !pid.empty() && pid.find_first_not_of("0123456789") == std::string::npos;
  if (!pid_ok) return "database " + dir + " is locked by another process";
  const std::string cmd = sp == std::string::npos ? "" : text.substr(sp + 1);
  return "database " + dir + " is locked by pid " + pid + (cmd.empty() ? "" : " (" + cmd + ")");
}

}  // namespace

Status WriterLock::acquire(const std::string& dir, std::unique_ptr<WriterLock>* out) {
  const std::string path = dir + "/" + kLockFileName;
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (errno == ENOENT) return Status(Errc::not_found, dir + ": no such database directory");
    return Status::from_errno(errno, "database " + dir + ": cannot open its lock file " + path);
  }
  if (flock_retry(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    Status s = err == EWOULDBLOCK ? Status(Errc::locked, locked_message(dir, fd))
                                  : Status::from_errno(err, "flock " + path);
    ::close(fd);
    return s;
  }
  // Ours now: replace a previous (dead) holder's text. Written first, then cut to length, so
  // the file never reads empty while we hold it.
  const std::string text = holder_text();
  if (::pwrite(fd, text.data(), text.size(), 0) != ssize_t(text.size()) || ::ftruncate(fd, off_t(text.size())) != 0) {
    const int err = errno;
    ::close(fd);
    return Status::from_errno(err, "write lock file " + path);
  }
  out->reset(new WriterLock(fd));
  return {};
}

WriterLock::~WriterLock() { ::close(fd_); }

Status ReaderPin::acquire(const std::string& dir, std::unique_ptr<ReaderPin>* out) {
  out->reset();
  const std::string path = dir + "/" + kReadersFileName;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) fd = ::open(path.c_str(), O_RDONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    // A database we may not write to has no writer we could race with: read it unpinned.
    if (errno == EACCES || errno == EPERM || errno == EROFS) return {};
    if (errno == ENOENT) return Status(Errc::not_found, dir + ": no such database directory");
    return Status::from_errno(errno, "open " + path);
  }
  if (flock_retry(fd, LOCK_SH) != 0) {
    const int err = errno;
    ::close(fd);
    return Status::from_errno(err, "flock " + path);
  }
  out->reset(new ReaderPin(fd));
  return {};
}

ReaderPin::~ReaderPin() { ::close(fd_); }

Status ReaderGate::open(const std::string& dir, std::unique_ptr<ReaderGate>* out) {
  const std::string path = dir + "/" + kReadersFileName;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Status::from_errno(errno, "open " + path);
  out->reset(new ReaderGate(fd));
  return {};
}

ReaderGate::~ReaderGate() { ::close(fd_); }

bool ReaderGate::readers_absent() {
  if (flock_retry(fd_, LOCK_EX | LOCK_NB) != 0) return false;
  flock_retry(fd_, LOCK_UN);
  return true;
}

}  // namespace st::io
