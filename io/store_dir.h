// store_dir: a database directory on disk: the arena file and the manifest, opened together
// with the parameter check. What `statetree build / verify / get / read-bench` open.
//
//   DIR/
//     pages.arena     the flat arena file (ArenaFileStore), page size from StoreParams
//     MANIFEST        the current manifest (FileManifestSlot; MANIFEST.tmp while publishing)
//
// create() refuses a directory that already holds a MANIFEST and publishes an empty
// manifest (commit_seq 0), so a crash before the first commit still leaves a database that
// opens (empty) with its parameters. open() reads the manifest first: a database built
// with other parameters is a one-line mismatch error before any page is touched.
#pragma once

#include <memory>
#include <string>

#include "io/arena_store.h"
#include "io/cow_space.h"
#include "io/manifest.h"

namespace st::io {

struct StoreDirOptions {
  std::string dir;
  StoreParams params;
  uint32_t queue_depth = 32;
  uint64_t initial_pages = 1024;  // create: arena size to preallocate
  bool direct_io = true;
};

class StoreDir {
 public:
  static Status create(const StoreDirOptions& options, std::unique_ptr<StoreDir>* out);
  static Status open(const StoreDirOptions& options, std::unique_ptr<StoreDir>* out);

  ArenaFileStore& pages() { return *pages_; }
  FileManifestSlot& manifest_slot() { return slot_; }
  CowSpace& space() { return *space_; }
  const std::string& dir() const { return dir_; }
  std::string arena_path() const { return dir_ + "/pages.arena"; }

 private:
  StoreDir(std::string dir) : dir_(std::move(dir)), slot_(dir_) {}
  std::string dir_;
  FileManifestSlot slot_;
  std::unique_ptr<ArenaFileStore> pages_;
  std::unique_ptr<CowSpace> space_;
};

}  // namespace st::io
