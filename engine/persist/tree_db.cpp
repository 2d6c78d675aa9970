// tree_db: build / open dispatch to the tree implementations (mpt/db.h, bintrie/db.h).
#include "engine/persist/tree_db.h"

#include "engine/persist/db_files.h"
#include "engine/persist/snapshot/reader.h"

namespace st::persist {

// Implemented in mpt/build.cpp, mpt/tree_db.cpp, bintrie/build.cpp, bintrie/tree_db.cpp
// (declared in mpt/db.h, bintrie/db.h).
io::Status build_mpt(DbFiles& files, const DbOptions& o, const state::StateSource& src, BuildReport* report,
                     const ProgressFn& progress);
io::Status open_mpt(DbFiles&& files, const DbOptions& o, std::unique_ptr<TreeDb>* out);
io::Status build_bintrie(DbFiles& files, const DbOptions& o, const state::StateSource& src, BuildReport* report,
                         const ProgressFn& progress);
io::Status open_bintrie(DbFiles&& files, const DbOptions& o, std::unique_ptr<TreeDb>* out);

namespace {
io::Status check_tree_params(const io::StoreParams& p) {
  switch (p.tree_kind) {
    case io::TreeKind::mpt:
      if (p.hash_kind != io::HashKind::keccak256 || p.group_depth != 0)
        return io::Status(io::Errc::bad_argument, "the MPT uses keccak256 and no group depth");
      return {};
    case io::TreeKind::bintrie:
      if (p.hash_kind == io::HashKind::keccak256)
        return io::Status(io::Errc::bad_argument, "the binary trie hashes with sha256 or blake3");
      if (p.group_depth < 1 || p.group_depth > 8)
        return io::Status(io::Errc::bad_argument, "group depth " + std::to_string(p.group_depth) + " is not 1..8");
      return {};
    default:
      return io::Status(io::Errc::bad_argument, std::string("tree kind ") + io::tree_kind_name(p.tree_kind) +
                                                    " has no persistent form");
  }
}
}  // namespace

io::Status TreeDb::open_snapshot(std::unique_ptr<SnapshotReader>*) {
  return {io::Errc::not_found, "the database has no snapshot (build it with --snapshot)"};
}

io::Status TreeDb::open_snapshot_table(std::unique_ptr<SnapshotTable>* out) {
  std::unique_ptr<SnapshotReader> r;
  if (io::Status s = open_snapshot(&r); !s.ok()) return s;
  *out = std::move(r);
  return {};
}

io::Status build_db(const DbOptions& o, const state::StateSource& source, BuildReport* report,
                    const ProgressFn& progress) {
  if (io::Status s = check_tree_params(o.params); !s.ok()) return s;
  DbFiles files;
  if (io::Status s = DbFiles::for_build(o, &files); !s.ok()) return s;
  if (o.params.tree_kind == io::TreeKind::mpt) return build_mpt(files, o, source, report, progress);
  return build_bintrie(files, o, source, report, progress);
}

io::Status open_db(const DbOptions& o, std::unique_ptr<TreeDb>* out) {
  if (io::Status s = check_tree_params(o.params); !s.ok()) return s;
  DbFiles files;
  if (io::Status s = DbFiles::for_read(o, &files); !s.ok()) return s;
  if (o.params.tree_kind == io::TreeKind::mpt) return open_mpt(std::move(files), o, out);
  return open_bintrie(std::move(files), o, out);
}

io::Status open_any_db(const std::string& dir, uint32_t queue_depth, std::unique_ptr<TreeDb>* out,
                       bool slot_key_accounts, const TreeDb* same_state_as) {
  DbOptions o;
  if (io::Status s = DbFiles::probe(dir, &o); !s.ok()) return s;
  o.queue_depth = queue_depth;
  o.slot_key_accounts = slot_key_accounts;
  if (same_state_as) o.read_state = same_state_as->manifest();
  return open_db(o, out);
}

io::Status open_rocks_reader(const DbFiles& writer, const io::Manifest& base, bool slot_key_accounts,
                             std::unique_ptr<TreeDb>* out) {
  DbFiles files;
  if (io::Status s = DbFiles::rocks_view_of(writer, base, &files); !s.ok()) return s;
  DbOptions o;
  o.dir = writer.dir;
  o.store = StoreKind::rocksdb;
  o.params = base.params;
  o.slot_key_accounts = slot_key_accounts;
  if (o.params.tree_kind == io::TreeKind::mpt) return open_mpt(std::move(files), o, out);
  return open_bintrie(std::move(files), o, out);
}

}  // namespace st::persist
