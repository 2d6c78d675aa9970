// bintrie/tree_db.cpp: BintrieTreeDb's RocksDB node read by path key (decoded through the
// verified fetch, bintrie/verified_fetch.h, which also reads the arena's records) and
// open_bintrie.
#include "engine/persist/bintrie/tree_db.h"

#include <string>

#include "engine/persist/bintrie/db.h"

namespace st::persist::bintrie_read {

io::Status BintrieTreeDb::rocks_get(const uint8_t* path, unsigned depth, Node* out, bool* found) {
  const std::vector<uint8_t> k = bintrie::blob_key(path, depth);
  std::string_view key(reinterpret_cast<const char*>(k.data()), k.size());
  std::vector<std::string> values;
  std::vector<uint8_t> f;
  if (io::Status st = files_.rocks->multi_get({&key, 1}, &values, &f); !st) return st;
  *found = f[0] != 0;
  if (!*found) return {};
  return decode_keyed({reinterpret_cast<const uint8_t*>(values[0].data()), values[0].size()}, g_,
                      key_name(kReader, key), out);
}

}  // namespace st::persist::bintrie_read

namespace st::persist {

io::Status open_bintrie(DbFiles&& files, const DbOptions& o, std::unique_ptr<TreeDb>* out) {
  const io::StoreParams& p = files.manifest.params;
  if (p.tree_kind != io::TreeKind::bintrie) return {io::Errc::mismatch, "open_bintrie: the database does not hold a binary trie"};
  bintrie::Hasher h;
  if (io::Status st = bintrie_disk::hasher_for(p, &h); !st) return st;
  if (p.group_depth < 1 || p.group_depth > 8)
    return {io::Errc::mismatch, "binary trie group depth " + std::to_string(p.group_depth) + " out of range 1..8"};
  if (files.store == StoreKind::arena && !files.arena) return {io::Errc::bad_argument, "open_bintrie: arena store not open"};
  if (files.store == StoreKind::rocksdb && !files.rocks) return {io::Errc::bad_argument, "open_bintrie: RocksDB store not open"};
  const unsigned g = p.group_depth;
  *out = std::make_unique<bintrie_read::BintrieTreeDb>(std::move(files), h, g, o.verify_cache_pages, o.slot_key_accounts);
  return {};
}

}  // namespace st::persist
