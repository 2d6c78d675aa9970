// db_files: opening a database directory and the commit protocol around tree writers.
#include "engine/persist/db_files.h"

#include <cstring>
#include <filesystem>

#include "kernels/support/byte_order.h"

namespace st::persist {

namespace fs = std::filesystem;

namespace {
constexpr size_t kCommitHeaderBytes = 20;  // magic, version, root locator, spec length
constexpr size_t kCommitFieldsBytes = 4 + 8 + 32 + 3 * 8;

std::string rocks_dir(const std::string& dir) { return dir + "/rocksdb"; }
std::string arena_file(const std::string& dir) { return dir + "/pages.arena"; }
bool exists(const std::string& p) {
  std::error_code ec;
  return fs::exists(p, ec);
}

// A build (create) writes its node batches unsynced: nothing is visible before the commit,
// and commit_rocks() flushes the memtable to synced SST files before the manifest names it.
// A reader opens RocksDB read-only (no lock of RocksDB's own, no file written).
io::Status open_rocks(const DbOptions& o, bool create, io::Access access, std::unique_ptr<io::RocksKvStore>* out) {
  io::RocksOptions r;
  r.sync_writes = !create;
  r.dir = rocks_dir(o.dir);
  r.create = create;
  r.read_only = access == io::Access::read;  // DB::OpenForReadOnly writes nothing (safe on a full disk)
  r.direct_reads = o.direct_io;
  r.block_cache_bytes = o.rocks_block_cache_bytes;
  r.read_threads = o.rocks_read_threads;
  return io::RocksKvStore::open(r, out);
}

io::StoreDirOptions arena_options(const DbOptions& o, io::Access access) {
  io::StoreDirOptions s;
  s.access = access;
  if (access == io::Access::read) s.read_state = o.read_state;
  s.dir = o.dir;
  s.params = o.params;
  s.queue_depth = o.queue_depth;
  s.direct_io = o.direct_io;
  return s;
}
}  // namespace

const char* store_kind_name(StoreKind k) { return k == StoreKind::arena ? "arena" : "rocksdb"; }

std::vector<uint8_t> encode_commit_record(const CommitInfo& c, const CommitFields* fields) {
  std::vector<uint8_t> b(kCommitHeaderBytes + c.spec.size() + (fields ? kCommitFieldsBytes : 0));
  st::put_u32(b.data(), kCommitRecordMagic);
  st::put_u32(b.data() + 4, kCommitRecordVersion);
  st::put_u64(b.data() + 8, c.root);
  st::put_u32(b.data() + 16, uint32_t(c.spec.size()));
  std::memcpy(b.data() + kCommitHeaderBytes, c.spec.data(), c.spec.size());
  if (fields) {
    uint8_t* p = b.data() + kCommitHeaderBytes + c.spec.size();
    st::put_u32(p, kCommitFieldsMagic);
    st::put_u64(p + 4, fields->commit_seq);
    std::memcpy(p + 12, fields->root_hash.data(), 32);
    st::put_u64(p + 44, fields->node_count);
    st::put_u64(p + 52, fields->key_count);
    st::put_u64(p + 60, fields->payload_bytes);
  }
  if (c.snapshot) append_snapshot_ref(*c.snapshot, &b);
  return b;
}

io::Status decode_commit_record(std::span<const uint8_t> b, CommitInfo* out, std::optional<CommitFields>* fields) {
  if (b.size() < kCommitHeaderBytes || st::get_u32(b.data()) != kCommitRecordMagic)
    return io::Status(io::Errc::corrupt_page, "commit record: bad magic");
  if (st::get_u32(b.data() + 4) != kCommitRecordVersion)
    return io::Status(io::Errc::mismatch, "commit record version " + std::to_string(st::get_u32(b.data() + 4)) +
                                              ", this build reads version " + std::to_string(kCommitRecordVersion));
  const uint32_t len = st::get_u32(b.data() + 16);
  if (len > b.size() - kCommitHeaderBytes) return io::Status(io::Errc::corrupt_page, "commit record: spec past its end");
  out->root = st::get_u64(b.data() + 8);
  out->spec.assign(reinterpret_cast<const char*>(b.data() + kCommitHeaderBytes), len);
  out->snapshot.reset();
  if (fields) fields->reset();
  const uint8_t* p = b.data() + kCommitHeaderBytes + len;
  size_t rest = b.size() - kCommitHeaderBytes - len;
  if (rest >= 4 && st::get_u32(p) == kCommitFieldsMagic) {
    if (rest < kCommitFieldsBytes) return io::Status(io::Errc::corrupt_page, "commit record: manifest fields past its end");
    CommitFields f;
    f.commit_seq = st::get_u64(p + 4);
    std::memcpy(f.root_hash.data(), p + 12, 32);
    f.node_count = st::get_u64(p + 44);
    f.key_count = st::get_u64(p + 52);
    f.payload_bytes = st::get_u64(p + 60);
    if (fields) *fields = f;
    p += kCommitFieldsBytes;
    rest -= kCommitFieldsBytes;
  }
  if (rest >= 4 && st::get_u32(p) == kSnapRefMagic) {
    SnapshotRef r;
    size_t used = 0;
    if (std::string e = decode_snapshot_ref({p, rest}, &r, &used); !e.empty())
      return io::Status(io::Errc::corrupt_page, "commit record: " + e);
    out->snapshot = std::move(r);
  }
  return {};
}

io::Status DbFiles::probe(const std::string& dir, DbOptions* o) {
  if (!exists(dir)) return io::Status(io::Errc::not_found, dir + ": no such database directory");
  io::FileManifestSlot slot(dir);
  io::Manifest m;
  if (io::Status s = slot.load(&m); !s.ok()) {
    if (s.code() == io::Errc::not_found) return io::Status(io::Errc::not_found, dir + ": not a statetree database (no MANIFEST)");
    return s;
  }
  o->dir = dir;
  o->params = m.params;
  if (exists(arena_file(dir))) o->store = StoreKind::arena;
  else if (exists(rocks_dir(dir))) o->store = StoreKind::rocksdb;
  else return io::Status(io::Errc::not_found, dir + ": MANIFEST without pages.arena or rocksdb/");
  return {};
}

io::Status DbFiles::for_build(const DbOptions& o, DbFiles* out) {
  out->store = o.store;
  out->dir = o.dir;
  if (o.dir.empty()) return io::Status(io::Errc::bad_argument, "--db: empty directory name");
  std::error_code ec;
  fs::create_directories(o.dir, ec);
  if (ec) return io::Status(io::Errc::sys, "create directory " + o.dir + ": " + ec.message(), ec.value());
  // The writer lock before anything is looked at: a second build or commit is refused here.
  std::unique_ptr<io::WriterLock> lock;
  if (io::Status s = io::WriterLock::acquire(o.dir, &lock); !s.ok()) return s;
  const bool has_manifest = exists(o.dir + "/MANIFEST");
  if (o.store == StoreKind::rocksdb) {
    if (has_manifest)
      return io::Status(io::Errc::bad_argument, o.dir + " already holds a database; a RocksDB store (nodes keyed by "
                                                       "path, overwritten in place) is built into a new directory");
    out->writer_lock = std::move(lock);
    if (io::Status s = open_rocks(o, true, io::Access::write, &out->rocks); !s.ok()) return s;
    out->rocks_manifest = std::make_unique<io::FileManifestSlot>(o.dir);
    out->manifest = io::Manifest{};
    out->manifest.params = o.params;
    return out->rocks_manifest->publish(out->manifest);
  }
  if (!has_manifest) {
    if (io::Status s = io::StoreDir::create(arena_options(o, io::Access::write), &out->arena, std::move(lock)); !s.ok())
      return s;
    out->manifest = out->arena->space().committed();
    return {};
  }
  DbOptions probed;
  if (io::Status s = probe(o.dir, &probed); !s.ok()) return s;
  if (probed.store != StoreKind::arena)
    return io::Status(io::Errc::mismatch, o.dir + " holds a " + std::string(store_kind_name(probed.store)) +
                                              " database, not an arena one");
  if (io::Status s = io::StoreDir::open(arena_options(o, io::Access::write), &out->arena, std::move(lock)); !s.ok())
    return s;
  io::CowSpace& space = out->arena->space();
  out->manifest = space.committed();
  // A rebuild replaces the state: every page of the committed state is superseded by this
  // commit (its free-list pages are released by CowSpace::commit itself). They stay intact
  // until the new manifest is published.
  const io::Manifest& m = out->manifest;
  const uint64_t fl_begin = m.free_list_page, fl_end = m.free_list_page == io::kNoPage ? 0 : fl_begin + m.free_list_pages;
  for (uint64_t p = 0; p < space.allocator().high_water(); ++p)
    if (!space.allocator().is_free(p) && !(p >= fl_begin && p < fl_end)) space.release(p);
  return {};
}

namespace {
io::Status open_existing(const DbOptions& o, io::Access access, DbFiles* out);
}  // namespace

io::Status DbFiles::for_read(const DbOptions& o, DbFiles* out) { return open_existing(o, io::Access::read, out); }
io::Status DbFiles::for_commit(const DbOptions& o, DbFiles* out) { return open_existing(o, io::Access::write, out); }

namespace {
// The RocksDB commit record through out->rocks, decoded into out->commit and *fields.
io::Status read_rocks_record(DbFiles* out, std::optional<CommitFields>* fields) {
  const std::string_view key = kRocksCommitKey;
  std::vector<std::string> values;
  std::vector<uint8_t> found;
  if (io::Status s = out->rocks->multi_get(std::span<const std::string_view>(&key, 1), &values, &found); !s.ok())
    return s;
  if (!found[0]) return io::Status(io::Errc::corrupt_page, out->dir + ": the manifest names a commit RocksDB does not hold");
  const std::vector<uint8_t> record(values[0].begin(), values[0].end());
  return decode_commit_record(record, &out->commit, fields);
}

io::Status open_existing(const DbOptions& o, io::Access access, DbFiles* out) {
  DbOptions probed;
  if (io::Status s = DbFiles::probe(o.dir, &probed); !s.ok()) return s;
  if (io::Status s = io::check_params(probed.params, o.params); !s.ok()) return s;
  if (probed.store != o.store)
    return io::Status(io::Errc::mismatch, std::string("store mismatch: database is ") + store_kind_name(probed.store) +
                                              ", opened as " + store_kind_name(o.store));
  out->store = o.store;
  out->dir = o.dir;
  std::vector<uint8_t> record;
  if (o.store == StoreKind::arena) {
    if (io::Status s = io::StoreDir::open(arena_options(o, access), &out->arena); !s.ok()) return s;
    out->manifest = out->arena->space().committed();
    if (out->manifest.commit_seq == 0)
      return io::Status(io::Errc::not_found, o.dir + " holds no state: its build never committed");
    io::NodeStore& store = out->arena->pages();
    record.resize(store.payload_bytes());
    const io::PageOp op{io::PageOpKind::read, out->manifest.root_page, record.data(), 0};
    if (io::Status s = io::run_batch(store, std::span<const io::PageOp>(&op, 1)); !s.ok()) return s;
  } else {
    if (access == io::Access::read) {
      if (io::Status s = io::ReaderPin::acquire(o.dir, &out->reader_pin); !s.ok()) return s;
    } else if (io::Status s = io::WriterLock::acquire(o.dir, &out->writer_lock); !s.ok()) {
      return s;
    }
    out->rocks_manifest = std::make_unique<io::FileManifestSlot>(o.dir);
    if (io::Status s = out->rocks_manifest->load(&out->manifest); !s.ok()) return s;
    if (out->reader_pin)
      if (io::Status s = out->reader_pin->pin_state(out->manifest.commit_seq); !s.ok()) return s;
    if (out->manifest.commit_seq == 0)
      return io::Status(io::Errc::not_found, o.dir + " holds no state: its build never committed");
    if (io::Status s = open_rocks(o, false, access, &out->rocks); !s.ok()) return s;
    std::optional<CommitFields> fields;
    if (io::Status s = read_rocks_record(out, &fields); !s.ok()) return s;
    // The commit record is written in the same atomic batch as the nodes it names; the
    // MANIFEST after it. A crash between the two leaves the MANIFEST one commit behind:
    // the database is at the record's commit (a writer republishes the MANIFEST now).
    if (const auto& f = fields; f && f->commit_seq != out->manifest.commit_seq) {
      if (f->commit_seq < out->manifest.commit_seq)
        return io::Status(io::Errc::corrupt_page, o.dir + ": the MANIFEST names commit " +
                                                      std::to_string(out->manifest.commit_seq) + ", RocksDB holds commit " +
                                                      std::to_string(f->commit_seq));
      io::Manifest& m = out->manifest;
      m.commit_seq = f->commit_seq;
      m.root_hash = f->root_hash;
      m.node_count = f->node_count;
      m.key_count = f->key_count;
      m.payload_bytes = f->payload_bytes;
      if (access == io::Access::write)
        if (io::Status s = out->rocks_manifest->publish(m); !s.ok()) return s;
    }
    return {};
  }
  return decode_commit_record(record, &out->commit);
}
}  // namespace

io::Status DbFiles::rocks_view_of(const DbFiles& writer, const io::Manifest& base, DbFiles* out) {
  if (writer.store != StoreKind::rocksdb || !writer.rocks)
    return io::Status(io::Errc::bad_argument, "rocks_view_of: not a RocksDB database");
  out->store = StoreKind::rocksdb;
  out->dir = writer.dir;
  if (io::Status s = writer.rocks->snapshot_view(&out->rocks); !s.ok()) return s;
  std::optional<CommitFields> fields;
  if (io::Status s = read_rocks_record(out, &fields); !s.ok()) return s;
  out->manifest = base;
  if (fields) {
    out->manifest.commit_seq = fields->commit_seq;
    out->manifest.root_hash = fields->root_hash;
    out->manifest.node_count = fields->node_count;
    out->manifest.key_count = fields->key_count;
    out->manifest.payload_bytes = fields->payload_bytes;
  }
  return {};
}

io::Status DbFiles::commit_arena(PageWriter& w, Locator root, const Fields& f, const std::string& spec,
                                 const SnapshotRef* snapshot) {
  io::CowSpace& space = arena->space();
  auto fail = [&](io::Status s) {
    (void)w.finish();
    space.abort();
    return s;
  };
  CommitInfo info{root, spec, {}};
  if (snapshot) info.snapshot = *snapshot;
  std::vector<uint8_t> rec = encode_commit_record(info);
  if (rec.size() > w.payload_bytes())
    return fail(io::Status(io::Errc::bad_argument, snapshot ? "source spec and snapshot directory too long for the commit record"
                                                             : "source spec too long for the commit record"));
  rec.resize(w.payload_bytes(), 0);
  uint64_t page = 0;
  if (io::Status s = w.new_page(&page); !s.ok()) return fail(s);
  if (io::Status s = w.write(page, rec.data()); !s.ok()) return fail(s);
  if (io::Status s = w.finish(); !s.ok()) {
    space.abort();
    return s;
  }
  io::Manifest next;
  next.root_hash = f.root_hash;
  next.root_page = page;
  next.node_count = f.node_count;
  next.key_count = f.key_count;
  next.payload_bytes = f.payload_bytes;
  next.pages_used = space.allocator().high_water() - space.allocator().free_pages() - space.allocator().deferred_pages();
  if (io::Status s = space.commit(next); !s.ok()) return s;  // commit() aborts on failure itself
  manifest = space.committed();
  commit = info;
  return {};
}

namespace {
// The writes of a RocksDB commit plus its commit record (the manifest fields in it), in
// one batch; then the MANIFEST. flush: a build's unsynced batches become SSTs first.
io::Status rocks_commit(DbFiles& db, std::vector<io::KvWrite>& writes, const DbFiles::Fields& f,
                        const std::string& spec, bool flush, const SnapshotRef* snapshot) {
  CommitFields cf;
  cf.commit_seq = db.manifest.commit_seq + 1;
  cf.root_hash = f.root_hash;
  cf.node_count = f.node_count;
  cf.key_count = f.key_count;
  cf.payload_bytes = f.payload_bytes;
  CommitInfo info{kNoLocator, spec, {}};
  if (snapshot) info.snapshot = *snapshot;
  const std::vector<uint8_t> rec = encode_commit_record(info, &cf);
  writes.push_back({kRocksCommitKey, std::string_view(reinterpret_cast<const char*>(rec.data()), rec.size()), false});
  io::Status s = db.rocks->write_batch(writes);
  writes.pop_back();
  if (!s.ok()) return s;
  if (flush)
    if (io::Status fs = db.rocks->flush(); !fs.ok()) return fs;
  io::Manifest next = db.manifest;
  next.commit_seq = cf.commit_seq;
  next.root_hash = f.root_hash;
  next.node_count = f.node_count;
  next.key_count = f.key_count;
  next.payload_bytes = f.payload_bytes;
  if (io::Status ps = db.rocks_manifest->publish(next); !ps.ok()) return ps;
  db.manifest = next;
  db.commit = info;
  return {};
}
}  // namespace

io::Status DbFiles::commit_rocks(const Fields& f, const std::string& spec, const SnapshotRef* snapshot) {
  std::vector<io::KvWrite> none;
  return rocks_commit(*this, none, f, spec, true, snapshot);
}

io::Status DbFiles::commit_rocks_batch(std::vector<io::KvWrite>& writes, const Fields& f, const std::string& spec) {
  if (store != StoreKind::rocksdb || !rocks) return io::Status(io::Errc::bad_argument, "commit_rocks_batch: not a RocksDB database");
  return rocks_commit(*this, writes, f, spec, false, commit.snapshot ? &*commit.snapshot : nullptr);
}

uint64_t DbFiles::disk_bytes() const {
  if (store == StoreKind::rocksdb) return rocks ? rocks->disk_bytes() : 0;
  return manifest.page_high_water * uint64_t(manifest.params.page_size);
}

uint64_t DbFiles::in_use_bytes() const {
  if (store == StoreKind::rocksdb || !arena) return disk_bytes();
  const io::PageAllocator& a = arena->space().allocator();
  return (a.high_water() - a.free_pages() - a.deferred_pages()) * uint64_t(manifest.params.page_size);
}

std::vector<std::string> DbFiles::data_files() const {
  std::vector<std::string> files;
  if (store == StoreKind::arena) {
    files.push_back(arena_file(dir));
    return files;
  }
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(rocks_dir(dir), ec))
    if (e.is_regular_file(ec)) files.push_back(e.path().string());
  return files;
}

}  // namespace st::persist
