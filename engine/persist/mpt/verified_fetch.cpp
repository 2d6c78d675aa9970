// mpt/verified_fetch: the MPT's verified node fetch (see mpt/verified_fetch.h).
#include "engine/persist/mpt/verified_fetch.h"

namespace st::persist::mpt_read {

std::string loc_name(Locator l) {
  return "record " + std::to_string(locator_index(l)) + " of page " + std::to_string(locator_page(l));
}

io::Status node_error(std::string_view who, const Origin& o, const std::string& what) {
  return {io::Errc::corrupt_page, std::string(who) + ": " + o.name() + ": " + what};
}

io::Status hash_mismatch(std::string_view who, const Origin& o) {
  return node_error(who, o, "hash does not match its parent's reference");
}

io::Status decode_fetched(std::string_view who, const Origin& o, std::span<const uint8_t> body, mpt::DecodedNode* out) {
  if (std::string err = mpt::decode_node(body, out); !err.empty()) return node_error(who, o, err);
  return {};
}

io::Status check_record(std::string_view who, const Origin& o, const RecordView& rv, const mpt::DecodedNode& n,
                        bool storage_trie, bool account_has_storage) {
  if (std::string err = check_mpt_record(rv.kind, rv.child_count, n, storage_trie, account_has_storage); !err.empty())
    return node_error(who, o, err);
  return {};
}

io::Status fetch_records(PageReader& reader, std::span<const Locator> locs, std::vector<RecordView>* out) {
  if (io::Status s = reader.load(locs); !s.ok()) return s;
  out->resize(locs.size());
  for (size_t i = 0; i < locs.size(); ++i)
    if (io::Status s = reader.record(locs[i], &(*out)[i]); !s.ok()) return s;
  return {};
}

}  // namespace st::persist::mpt_read
