// store_dir: create/open of a database directory (layout in the header).
#include "io/store_dir.h"

#include <filesystem>

namespace st::io {

Status StoreDir::create(const StoreDirOptions& o, std::unique_ptr<StoreDir>* out) {
  if (o.dir.empty()) return Status(Errc::bad_argument, "database directory is empty");
  if (!valid_page_size(o.params.page_size))
    return Status(Errc::bad_argument, "page size " + std::to_string(o.params.page_size) + " is not 4096 or 16384");
  std::error_code ec;
  std::filesystem::create_directories(o.dir, ec);
  if (ec) return Status(Errc::sys, "create directory " + o.dir + ": " + ec.message(), ec.value());
  std::unique_ptr<StoreDir> d(new StoreDir(o.dir));
  if (std::filesystem::exists(d->slot_.path(), ec))
    return Status(Errc::bad_argument, o.dir + " already holds a database (MANIFEST exists)");
  ArenaOptions a;
  a.path = d->arena_path();
  a.page_size = o.params.page_size;
  a.capacity_pages = o.initial_pages;
  a.queue_depth = o.queue_depth;
  a.create = true;
  a.direct_io = o.direct_io;
  if (Status s = ArenaFileStore::open(a, &d->pages_); !s.ok()) return s;
  if (Status s = d->pages_->sync(); !s.ok()) return s;
  Manifest empty;
  empty.params = o.params;
  if (Status s = d->slot_.publish(empty); !s.ok()) return s;
  d->space_ = std::make_unique<CowSpace>(*d->pages_, d->slot_, o.params);
  if (Status s = d->space_->open(); !s.ok()) return s;
  *out = std::move(d);
  return {};
}

Status StoreDir::open(const StoreDirOptions& o, std::unique_ptr<StoreDir>* out) {
  std::unique_ptr<StoreDir> d(new StoreDir(o.dir));
  Manifest m;
  if (Status s = d->slot_.load(&m); !s.ok()) return s;
  if (Status s = check_params(m.params, o.params); !s.ok()) return s;
  ArenaOptions a;
  a.path = d->arena_path();
  a.page_size = o.params.page_size;
  a.queue_depth = o.queue_depth;
  a.direct_io = o.direct_io;
  if (Status s = ArenaFileStore::open(a, &d->pages_); !s.ok()) return s;
  d->space_ = std::make_unique<CowSpace>(*d->pages_, d->slot_, o.params);
  if (Status s = d->space_->open(); !s.ok()) return s;
  *out = std::move(d);
  return {};
}

}  // namespace st::io
