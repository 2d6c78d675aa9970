// store_dir: a database directory on disk: the arena file and the manifest, opened together
// with the parameter check and the directory's locks. What `statetree build / verify / get
// / read-bench / commit` open.
//
//   DIR/
//     pages.arena     the flat arena file (ArenaFileStore), page size from StoreParams
//     MANIFEST        the current manifest (FileManifestSlot; MANIFEST.tmp while publishing)
//     LOCK            the writer's lock (db_lock.h): one writer at a time, refused at once
//     READERS         the readers' pins (db_lock.h): what keeps freed pages from reuse
//
// create() refuses a directory that already holds a MANIFEST and publishes an empty
// manifest (commit_seq 0), so a crash before the first commit still leaves a database that
// opens (empty) with its parameters. open() reads the manifest first: a database built
// with other parameters is a one-line mismatch error before any page is touched.
//
// Access::write (create, open): holds DIR/LOCK for the handle's life; the CowSpace defers
// the pages its commits free until no reader exists (cow_space.h). Access::read (open only):
// pins DIR/READERS for the handle's life BEFORE it loads the manifest, loads the manifest
// once, then opens the arena O_RDONLY (its size then covers the manifest's high water); it
// creates no file it may not create (a read-only database is read unpinned), and its
// CowSpace refuses to allocate or commit.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "io/arena_store.h"
#include "io/cow_space.h"
#include "io/db_lock.h"
#include "io/manifest.h"

namespace st::io {

enum class Access : uint8_t { write, read };

struct StoreDirOptions {
  std::string dir;
  StoreParams params;
  uint32_t queue_depth = 32;
  uint64_t initial_pages = 1024;  // create: arena size to preallocate
  bool direct_io = true;
  Access access = Access::write;
  // Access::read: open the state this manifest names instead of the current one (a second
  // handle on the state another reader handle of this process loaded; sound only while that
  // handle stays open, since its pin is what keeps the state's pages from reuse).
  std::optional<Manifest> read_state;
};

class StoreDir {
 public:
  // lock: the writer lock of options.dir if the caller already holds it (else taken here).
  static Status create(const StoreDirOptions& options, std::unique_ptr<StoreDir>* out,
                       std::unique_ptr<WriterLock> lock = nullptr);
  static Status open(const StoreDirOptions& options, std::unique_ptr<StoreDir>* out,
                     std::unique_ptr<WriterLock> lock = nullptr);

  ArenaFileStore& pages() { return *pages_; }
  FileManifestSlot& manifest_slot() { return slot_; }
  CowSpace& space() { return *space_; }
  const std::string& dir() const { return dir_; }
  std::string arena_path() const { return dir_ + "/pages.arena"; }
  bool read_only() const { return access_ == Access::read; }
  bool reader_pinned() const { return pin_ != nullptr; }  // false: a read-only directory

 private:
  StoreDir(std::string dir, Access access) : dir_(std::move(dir)), access_(access), slot_(dir_) {}

  // Declared first, released last: the files are closed before the lock or pin goes.
  std::unique_ptr<WriterLock> lock_;
  std::unique_ptr<ReaderPin> pin_;
  std::unique_ptr<ReaderGate> gate_;
  std::string dir_;
  Access access_;
  FileManifestSlot slot_;
  std::unique_ptr<ArenaFileStore> pages_;
  std::unique_ptr<CowSpace> space_;
};

}  // namespace st::io
