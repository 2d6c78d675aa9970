// rep_copy: see rep_copy.h.
#include "engine/pipeline/rep_copy.h"

#include <algorithm>
#include <filesystem>
#include <memory>

#include "io/db_lock.h"

namespace st::pipeline {
namespace fs = std::filesystem;

namespace {
io::Status sys(const std::string& what, const std::error_code& ec) {
  return io::Status(io::Errc::sys, what + ": " + ec.message(), ec.value());
}
// Whether path p is dir or inside it (both made absolute, symbolic links resolved as far as
// they exist).
bool inside(const std::string& p, const std::string& dir) {
  std::error_code ec;
  const fs::path a = fs::weakly_canonical(p, ec);
  if (ec) return false;
  const fs::path d = fs::weakly_canonical(dir, ec);
  if (ec) return false;
  return std::mismatch(d.begin(), d.end(), a.begin(), a.end()).first == d.end();
}
}  // namespace

io::Status prepare_scratch(const std::string& dir, const std::string& database) {
  std::error_code ec;
  if (inside(dir, database))
    return io::Status(io::Errc::bad_argument, "--scratch " + dir + " is inside the database directory " + database);
  const fs::file_status st = fs::status(dir, ec);
  if (st.type() == fs::file_type::not_found) {
    if (!fs::create_directories(dir, ec) && ec) return sys("create scratch directory " + dir, ec);
    return {};
  }
  if (ec) return sys(dir, ec);
  if (st.type() != fs::file_type::directory)
    return io::Status(io::Errc::bad_argument, "--scratch " + dir + " is not a directory");
  const bool empty = fs::is_empty(dir, ec);
  if (ec) return sys(dir, ec);
  if (!empty)
    return io::Status(io::Errc::bad_argument,
                      "--scratch " + dir + " is not empty (give an empty or absent directory: its copies are made there)");
  return {};
}

io::Status copy_database(const std::string& from, const std::string& to) {
  std::error_code ec;
  if (!fs::is_directory(from, ec)) return io::Status(io::Errc::not_found, from + ": no such database directory");
  if (fs::exists(to, ec)) return io::Status(io::Errc::bad_argument, "copy of " + from + ": " + to + " exists");
  if (inside(to, from))
    return io::Status(io::Errc::bad_argument, "copy of " + from + ": " + to + " is inside the database directory");
  std::unique_ptr<io::WriterLock> lock;
  if (io::Status s = io::WriterLock::acquire(from, &lock); !s.ok()) return s;
  if (!fs::create_directories(to, ec) && ec) return sys("create " + to, ec);
  for (auto it = fs::recursive_directory_iterator(from, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    const fs::path rel = fs::relative(it->path(), from, ec);
    if (ec) break;
    if (it.depth() == 0 && (rel == io::kLockFileName || rel == io::kReadersFileName)) continue;
    const fs::path dst = fs::path(to) / rel;
    if (it->is_directory(ec)) {
      fs::create_directories(dst, ec);
    } else if (it->is_regular_file(ec)) {
      fs::copy_file(it->path(), dst, fs::copy_options::none, ec);
      if (ec) return sys("copy " + it->path().string() + " to " + dst.string(), ec);
    }
    if (ec) return sys("copy " + it->path().string(), ec);
  }
  if (ec) return sys("copy " + from + " to " + to, ec);
  return {};
}

}  // namespace st::pipeline
