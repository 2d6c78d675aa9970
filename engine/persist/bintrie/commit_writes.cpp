// bintrie/commit_writes: the block's writes per stem (bintrie/commit_tree.h, StemWrites):
// prepare groups the diff's writes by stem with account_leaves.h's rule (the in-memory
// state's: code chunks and storage slots as leaves, a zero storage value a present zero
// value; the last write of a key wins; two header patches of one account merge), and apply
// puts one stem's writes into a stem blob, the header patch resolved against the old leaves
// (resolve_header). Nothing is ever removed.
#include <cstring>

#include "engine/bintrie/keys.h"
#include "engine/persist/bintrie/commit_tree.h"
#include "kernels/keccak256.h"

namespace st::persist::bintrie_commit {
namespace {

void code_hash_keccak256(const uint8_t* code, size_t len, uint8_t* out32) { kernels::keccak256(code, len, out32); }

}  // namespace

io::Status Committer::prepare(const state::StateDiff& diff) {
  const bintrie::KeyScheme ks{h_, bintrie::TreeIndexEndian::big};
  std::map<Key32, StemWrites> by_stem;
  auto at = [&](const Hash32& key) -> StemWrites& {
    Key32 s{};
    std::memcpy(s.data(), key.data(), 31);
    StemWrites& w = by_stem[s];
    w.stem = s;
    return w;
  };
  bintrie::AccountWrites aw;
  for (const state::AccountDiff& a : diff.accounts) {
    if (std::string e = bintrie::check_account_diff(a); !e.empty())
      return {io::Errc::bad_argument, "binary trie commit: " + e};
    ++accounts;
    bintrie::account_diff_writes(ks, a, code_hash_keccak256, &aw);
    if (aw.patch.active()) {
      StemWrites& w = at(aw.header);
      if (w.patch) bintrie::merge_header_patch(&*w.patch, aw.patch);
      else w.patch = aw.patch;
    }
    for (const bintrie::Entry& e : aw.leaves) at(e.key).values[e.key[31]] = e.value;  // the last write of a key wins
  }
  for (auto& [s, w] : by_stem) writes_.push_back(std::move(w));
  return {};
}

// Applies writes_[w] to `blob` (values ascending by slot); true if anything changed.
bool Committer::apply(uint32_t w, bintrie::StemBlob* blob) {
  std::map<uint8_t, Hash32> vals;
  uint32_t vi = 0;
  for (unsigned s = 0; s < 256; ++s)
    if (blob->bitmap[s / 8] & (0x80 >> (s % 8))) vals[uint8_t(s)] = blob->values[vi++];
  const size_t before = vals.size();
  std::map<uint8_t, Hash32> next = vals;
  const StemWrites& sw = writes_[w];
  for (const auto& [sub, v] : sw.values) next[sub] = v;
  if (sw.patch) {
    auto old = [&](uint8_t sub) {
      const auto it = vals.find(sub);
      return it == vals.end() ? std::optional<Hash32>{} : std::optional<Hash32>{it->second};
    };
    const bintrie::HeaderLeaves h = bintrie::resolve_header(*sw.patch, old(bintrie::kBasicDataLeafKey),
                                                            old(bintrie::kCodeHashLeafKey), code_hash_keccak256);
    next[bintrie::kBasicDataLeafKey] = h.basic_data;
    if (h.code_hash) next[bintrie::kCodeHashLeafKey] = *h.code_hash;
  }
  new_leaves += int64_t(next.size()) - int64_t(before);
  if (next == vals) return false;
  blob->bitmap = {};
  blob->values.clear();
  for (const auto& [s, v] : next) {
    blob->bitmap[s / 8] |= uint8_t(0x80 >> (s % 8));
    blob->values.push_back(v);
  }
  return true;
}

}  // namespace st::persist::bintrie_commit
