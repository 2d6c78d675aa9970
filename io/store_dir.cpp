// store_dir: create/open of a database directory (layout and access modes in the header).
#include "io/store_dir.h"

#include <filesystem>

namespace st::io {

namespace {
// The writer's side of a directory: its lock (unless the caller holds it) and reader gate.
Status take_writer(const std::string& dir, std::unique_ptr<WriterLock>* lock, std::unique_ptr<ReaderGate>* gate) {
  if (!*lock)
    if (Status s = WriterLock::acquire(dir, lock); !s.ok()) return s;
  return ReaderGate::open(dir, gate);
}
}  // namespace

Status StoreDir::create(const StoreDirOptions& o, std::unique_ptr<StoreDir>* out, std::unique_ptr<WriterLock> lock) {
  if (o.dir.empty()) return Status(Errc::bad_argument, "database directory is empty");
  if (o.access != Access::write) return Status(Errc::bad_argument, "a database is created for writing");
  if (!valid_page_size(o.params.page_size))
    return Status(Errc::bad_argument, "page size " + std::to_string(o.params.page_size) + " is not 4096 or 16384");
  std::error_code ec;
  std::filesystem::create_directories(o.dir, ec);
  if (ec) return Status(Errc::sys, "create directory " + o.dir + ": " + ec.message(), ec.value());
  std::unique_ptr<StoreDir> d(new StoreDir(o.dir, Access::write));
  d->lock_ = std::move(lock);
  if (Status s = take_writer(o.dir, &d->lock_, &d->gate_); !s.ok()) return s;
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
  ReaderGate* gate = d->gate_.get();
  d->space_->set_reader_gate([gate](uint64_t seq) { return gate->no_reader_before(seq); });
  if (Status s = d->space_->open(empty); !s.ok()) return s;
  *out = std::move(d);
  return {};
}

Status StoreDir::open(const StoreDirOptions& o, std::unique_ptr<StoreDir>* out, std::unique_ptr<WriterLock> lock) {
  std::unique_ptr<StoreDir> d(new StoreDir(o.dir, o.access));
  const bool reader = o.access == Access::read;
  if (reader) {
    if (lock) return Status(Errc::bad_argument, "a reader holds no writer lock");
    // Pinned before the manifest is loaded: no page of the root it names is reused while we live.
    if (Status s = ReaderPin::acquire(o.dir, &d->pin_); !s.ok()) return s;
  } else {
    d->lock_ = std::move(lock);
    if (Status s = take_writer(o.dir, &d->lock_, &d->gate_); !s.ok()) return s;
  }
  if (o.read_state && !reader) return Status(Errc::bad_argument, "a writer opens the current state");
  Manifest m;
  if (o.read_state) m = *o.read_state;
  else if (Status s = d->slot_.load(&m); !s.ok()) return s;
  if (Status s = check_params(m.params, o.params); !s.ok()) return s;
  if (d->pin_)  // from now on the pin holds the state it walks, not "loading"
    if (Status s = d->pin_->pin_state(m.commit_seq); !s.ok()) return s;
  ArenaOptions a;
  a.path = d->arena_path();
  a.page_size = o.params.page_size;
  a.queue_depth = o.queue_depth;
  a.direct_io = o.direct_io;
  a.read_only = reader;
  if (Status s = ArenaFileStore::open(a, &d->pages_); !s.ok()) return s;
  d->space_ = std::make_unique<CowSpace>(*d->pages_, d->slot_, o.params);
  if (reader) {
    d->space_->set_read_only(true);
  } else {
    ReaderGate* gate = d->gate_.get();
    d->space_->set_reader_gate([gate](uint64_t seq) { return gate->no_reader_before(seq); });
  }
  // The manifest loaded above (the writer holds the lock, so it is still the current one;
  // a reader must walk the one it loaded after pinning, which the arena's size covers).
  if (Status s = d->space_->open(m); !s.ok()) return s;
  *out = std::move(d);
  return {};
}

}  // namespace st::io
