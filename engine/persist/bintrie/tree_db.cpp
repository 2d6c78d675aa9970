// bintrie/tree_db.cpp: BintrieTreeDb's node reads (an arena record, decoded strictly and
// checked against its kind and child count, a chunked stem reassembled from its pieces; a
// RocksDB blob by path key) and open_bintrie.
#include "engine/persist/bintrie/tree_db.h"

#include <string>

#include "engine/persist/bintrie/db.h"

namespace st::persist::bintrie_read {

// What is wrong with the record at l, as an error naming it.
io::Status record_error(Locator l, const std::string& what) {
  return {io::Errc::corrupt_page, "binary trie " + bd::locator_name(l) + ": " + what};
}

// A group record's children into out->children: one per blob entry.
io::Status BintrieTreeDb::read_group_children(Locator l, const RecordView& rec, Node* out) {
  const size_t k = out->group.entries.size();
  out->children.clear();
  if (rec.child_count != k)
    return record_error(l, "group of " + std::to_string(k) + " entries has " + std::to_string(rec.child_count) + " children");
  for (uint32_t i = 0; i < k; ++i) out->children.push_back(rec.child(i));
  return {};
}

// A chunked stem: once every piece's page is cached (else they go to *need), the pieces
// reassembled and decoded as one stem blob.
io::Status BintrieTreeDb::read_chunked_stem(Locator l, const RecordView& rec, Node* out, bool* complete,
                                            std::vector<Locator>* need, uint64_t* records) {
  if (rec.child_count == 0 || !rec.body.empty()) return record_error(l, "chunked stem without pieces");
  bool all = true;
  for (uint32_t i = 0; i < rec.child_count; ++i)
    if (!reader_->loaded(locator_page(rec.child(i)))) { need->push_back(rec.child(i)); all = false; }
  if (!all) return {};
  std::vector<uint8_t> blob;
  for (uint32_t i = 0; i < rec.child_count; ++i) {
    RecordView piece;
    if (io::Status st = reader_->record(rec.child(i), &piece); !st) return st;
    ++*records;
    if (piece.kind != bd::kPiece || piece.child_count != 0)
      return record_error(l, "piece " + std::to_string(i) + " (" + bd::locator_name(rec.child(i)) + ") is not a stem piece");
    blob.insert(blob.end(), piece.body.begin(), piece.body.end());
  }
  if (io::Status st = decode_blob(blob, g_, [&] { return "binary trie " + bd::locator_name(l); }, out, 1); !st) return st;
  if (out->is_group) return record_error(l, "chunked stem holds a group blob");
  *complete = true;
  return {};
}

io::Status BintrieTreeDb::read_node(Locator l, Node* out, bool* complete, std::vector<Locator>* need, uint64_t* records) {
  *complete = false;
  RecordView rec;
  if (io::Status st = reader_->record(l, &rec); !st) return st;
  ++*records;
  auto where = [&] { return "binary trie " + bd::locator_name(l); };
  switch (rec.kind) {
    case bd::kStem:
    case bd::kGroup: {
      if (io::Status st = decode_blob(rec.body, g_, where, out, rec.kind == bd::kStem ? 1 : 2); !st) return st;
      if (rec.kind == bd::kStem) {
        if (out->is_group) return record_error(l, "stem record holds a group blob");
        if (rec.child_count != 0) return record_error(l, "stem record with " + std::to_string(rec.child_count) + " children");
        *complete = true;
        return {};
      }
      if (!out->is_group) return record_error(l, "group record holds a stem blob");
      if (io::Status st = read_group_children(l, rec, out); !st) return st;
      *complete = true;
      return {};
    }
    case bd::kStemChunked:
      return read_chunked_stem(l, rec, out, complete, need, records);
    default:
      return record_error(l, "unexpected record kind " + std::to_string(rec.kind));
  }
}

io::Status BintrieTreeDb::read_node_sync(Locator l, Node* out, uint64_t* records) {
  std::vector<Locator> need{l};
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (io::Status st = reader_->load(need); !st) return st;
    need.clear();
    bool complete = false;
    uint64_t n = 0;
    if (io::Status st = read_node(l, out, &complete, &need, &n); !st) return st;
    if (complete) { *records += n; return {}; }
  }
  return {io::Errc::corrupt_page, "binary trie " + bd::locator_name(l) + ": record parts did not load"};
}

io::Status BintrieTreeDb::rocks_get(const uint8_t* path, unsigned depth, Node* out, bool* found) {
  const std::vector<uint8_t> k = bintrie::blob_key(path, depth);
  std::string_view key(reinterpret_cast<const char*>(k.data()), k.size());
  std::vector<std::string> values;
  std::vector<uint8_t> f;
  if (io::Status st = files_.rocks->multi_get({&key, 1}, &values, &f); !st) return st;
  *found = f[0] != 0;
  if (!*found) return {};
  return decode_blob({reinterpret_cast<const uint8_t*>(values[0].data()), values[0].size()}, g_,
                     [&] { return "binary trie node at path key " + bd::hex(k); }, out);
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
