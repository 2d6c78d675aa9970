// bintrie/verified_fetch: the binary trie's verified node fetch (see bintrie/verified_fetch.h).
#include "engine/persist/bintrie/verified_fetch.h"

namespace st::persist::bintrie_read {

std::string record_name(std::string_view who, Locator l) { return std::string(who) + bd::locator_name(l); }

std::string key_name(std::string_view who, std::string_view key) {
  return std::string(who) + "node at path key " + bd::hex({reinterpret_cast<const uint8_t*>(key.data()), key.size()});
}

io::Status record_error(std::string_view who, Locator l, const std::string& what) {
  return {io::Errc::corrupt_page, record_name(who, l) + ": " + what};
}

io::Status decode_keyed(std::span<const uint8_t> blob, unsigned g, const std::string& where, Node* out) {
  if (!blob.empty() && blob[0] != bintrie::kGroupBlobVersion && blob[0] != bintrie::kStemBlobVersion)
    return {io::Errc::corrupt_page, where + ": unknown blob version byte " + std::to_string(blob[0])};
  out->children.clear();
  out->pieces.clear();
  return decode_blob(blob, g, [&] { return where; }, out);
}

std::string stem_record_error(const RecordView& rec) {
  if (rec.child_count == 0) return {};
  return "stem record with " + std::to_string(rec.child_count) + " children";
}

std::string group_record_error(const RecordView& rec, size_t entries) {
  if (rec.child_count == entries) return {};
  return "group of " + std::to_string(entries) + " entries has " + std::to_string(rec.child_count) + " children";
}

std::string chunked_record_error(const RecordView& rec) {
  if (rec.child_count != 0 && rec.body.empty()) return {};
  return "chunked stem without pieces";
}

std::string piece_record_error(const RecordView& piece, uint32_t p, Locator l) {
  if (piece.kind == bd::kPiece && piece.child_count == 0) return {};
  return "piece " + std::to_string(p) + " (" + bd::locator_name(l) + ") is not a stem piece";
}

namespace {

// A chunked stem: once every piece's page is loaded (else they go to *need), the pieces
// reassembled and decoded as one stem blob.
io::Status fetch_chunked_stem(const PageReader& reader, unsigned g, std::string_view who, Locator l,
                              const RecordView& rec, Node* out, bool* complete, std::vector<Locator>* need) {
  if (std::string e = chunked_record_error(rec); !e.empty()) return record_error(who, l, e);
  bool all = true;
  for (uint32_t i = 0; i < rec.child_count; ++i)
    if (!reader.loaded(locator_page(rec.child(i)))) {
      need->push_back(rec.child(i));
      all = false;
    }
  if (!all) return {};
  std::vector<uint8_t> blob;
  for (uint32_t i = 0; i < rec.child_count; ++i) {
    RecordView piece;
    if (io::Status st = reader.record(rec.child(i), &piece); !st) return st;
    if (std::string e = piece_record_error(piece, i, rec.child(i)); !e.empty()) return record_error(who, l, e);
    out->pieces.push_back(rec.child(i));
    blob.insert(blob.end(), piece.body.begin(), piece.body.end());
  }
  if (io::Status st = decode_blob(blob, g, [&] { return record_name(who, l); }, out, 1); !st) return st;
  if (out->is_group) return record_error(who, l, "chunked stem holds a group blob");
  *complete = true;
  return {};
}

}  // namespace

io::Status fetch_record(const PageReader& reader, unsigned g, std::string_view who, Locator l, Node* out,
                        bool* complete, std::vector<Locator>* need) {
  *complete = false;
  out->children.clear();
  out->pieces.clear();
  RecordView rec;
  if (io::Status st = reader.record(l, &rec); !st) return st;
  auto where = [&] { return record_name(who, l); };
  switch (rec.kind) {
    case bd::kStem: {
      if (io::Status st = decode_blob(rec.body, g, where, out, 1); !st) return st;
      if (out->is_group) return record_error(who, l, "stem record holds a group blob");
      if (std::string e = stem_record_error(rec); !e.empty()) return record_error(who, l, e);
      *complete = true;
      return {};
    }
    case bd::kGroup: {
      if (io::Status st = decode_blob(rec.body, g, where, out, 2); !st) return st;
      if (!out->is_group) return record_error(who, l, "group record holds a stem blob");
      const size_t k = out->group.entries.size();
      if (std::string e = group_record_error(rec, k); !e.empty()) return record_error(who, l, e);
      for (uint32_t i = 0; i < k; ++i) out->children.push_back(rec.child(i));
      *complete = true;
      return {};
    }
    case bd::kStemChunked:
      return fetch_chunked_stem(reader, g, who, l, rec, out, complete, need);
    default:
      return record_error(who, l, "unexpected record kind " + std::to_string(rec.kind));
  }
}

io::Status fetch_record_sync(PageReader& reader, unsigned g, std::string_view who, Locator l, Node* out,
                             uint64_t* records) {
  std::vector<Locator> need{l};
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (io::Status st = reader.load(need); !st) return st;
    need.clear();
    bool complete = false;
    if (io::Status st = fetch_record(reader, g, who, l, out, &complete, &need); !st) return st;
    if (complete) {
      *records += 1 + out->pieces.size();
      return {};
    }
  }
  return record_error(who, l, "record parts did not load");
}

std::string hash_mismatch_what(bool root, bool group) {
  if (root) return "root hash does not match the manifest";
  return group ? "group hash does not match its parent's entry" : "stem hash does not match its parent's entry";
}

io::Status check_hash(const Hash32& got, const Hash32& expect, const std::string& where, bool root, bool group) {
  if (got == expect) return {};
  return {io::Errc::corrupt_page, where + ": " + hash_mismatch_what(root, group)};
}

}  // namespace st::persist::bintrie_read
