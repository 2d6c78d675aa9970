// db_lock: the writer lock, the reader pins and the writer's reader gate (see the header).
#include "io/db_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <iterator>
#include <string>

namespace st::io {

namespace {

// Bytes of READERS (header): the loading byte, then one per manifest commit_seq. Seqs past
// the largest offset share its byte (a later state's pin is only ever more conservative).
constexpr uint64_t kLastSeqByte = uint64_t(1) << 62;
off_t seq_byte(uint64_t commit_seq) { return off_t(commit_seq < kLastSeqByte - 1 ? commit_seq + 1 : kLastSeqByte); }

// An OFD lock request over [start, start + len): F_RDLCK, F_WRLCK or F_UNLCK.
int ofd_lock(int fd, int cmd, short type, off_t start, off_t len, struct flock* out = nullptr) {
  struct flock l {};
  l.l_type = type;
  l.l_whence = SEEK_SET;
  l.l_start = start;
  l.l_len = len;
  int r;
  do r = ::fcntl(fd, cmd, &l);
  while (r != 0 && errno == EINTR);
  if (out) *out = l;
  return r;
}

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
  if (ofd_lock(fd, F_OFD_SETLK, F_RDLCK, 0, 1) != 0) {  // "loading"
    const int err = errno;
    ::close(fd);
    return Status::from_errno(err, "lock " + path);
  }
  out->reset(new ReaderPin(fd));
  return {};
}

Status ReaderPin::pin_state(uint64_t commit_seq) {
  if (ofd_lock(fd_, F_OFD_SETLK, F_RDLCK, seq_byte(commit_seq), 1) != 0)
    return Status::from_errno(errno, "lock the readers' file at state " + std::to_string(commit_seq));
  // Dropping the loading byte cannot fail in a way that matters: kept, it only delays reuse.
  ofd_lock(fd_, F_OFD_SETLK, F_UNLCK, 0, 1);
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

bool ReaderGate::no_reader_before(uint64_t commit_seq) {
  struct flock l {};
  if (ofd_lock(fd_, F_OFD_GETLK, F_WRLCK, 0, seq_byte(commit_seq), &l) != 0) return false;
  return l.l_type == F_UNLCK;
}

}  // namespace st::io
