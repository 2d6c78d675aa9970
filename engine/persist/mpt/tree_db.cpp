// mpt/tree_db.cpp: open_mpt, the MPT's TreeDb over either store (its lookups, verify and
// proofs: lookup.cpp, verify.cpp, prove.cpp).
#include "engine/persist/mpt/tree_db.h"

namespace st::persist {

io::Status open_mpt(DbFiles&& files, const DbOptions& o, std::unique_ptr<TreeDb>* out) {
  (void)o;
  if (files.store == StoreKind::arena && !files.arena) return {io::Errc::bad_argument, "mpt open: arena store not open"};
  if (files.store == StoreKind::rocksdb && !files.rocks) return {io::Errc::bad_argument, "mpt open: RocksDB store not open"};
  *out = std::make_unique<mpt_read::MptTreeDb>(std::move(files));
  return {};
}

}  // namespace st::persist
