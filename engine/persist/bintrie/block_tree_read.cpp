// bintrie/block_tree_read: the commit's writes and its reads (bintrie/block_tree.h): prepare
// groups the diff's writes by stem with account_leaves.h's rule (the in-memory state's: code
// chunks and storage slots as leaves, a zero storage value a present zero value; the last
// write of a key wins; two header patches of one account merge); resolve starts the tree as
// the committed root's stub and reads, round by round, the stubs the writes' paths reach:
// arena, one PageReader::load of the round's records and one of the stem pieces they name;
// RocksDB, one MultiGet of their path keys; each record through the verified fetch
// (bintrie/verified_fetch.h), then resolved into the tree, which checks its hash.
// Invariant: a round's nodes enter the tree only through MutableTree's resolve, which
// changes nothing unless the blob hashes to its stub's hash; a failure names the record.
#include <cstring>

#include "engine/bintrie/keys.h"
#include "engine/persist/bintrie/block_tree.h"
#include "engine/persist/bintrie/verified_fetch.h"
#include "kernels/keccak256.h"

namespace st::persist::bintrie_commit {
namespace {

void code_hash_keccak256(const uint8_t* code, size_t len, uint8_t* out32) { kernels::keccak256(code, len, out32); }

std::string key_name(std::string_view key) {
  return "node at path key " + bd::hex({reinterpret_cast<const uint8_t*>(key.data()), key.size()});
}

// MutableTree's message without its own prefix (the commit's names the node).
std::string tree_message(const std::string& m) {
  constexpr std::string_view kPrefix = "binary trie: ";
  return m.compare(0, kPrefix.size(), kPrefix) == 0 ? m.substr(kPrefix.size()) : m;
}

// Rounds are bounded by the depth of the stems (248 bits), one group or stem per round.
constexpr unsigned kMaxRounds = 256;

}  // namespace

io::Status BlockTree::prepare(const state::StateDiff& diff) {
  const bintrie::KeyScheme ks{tree_.hasher(), bintrie::TreeIndexEndian::big};
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
  writes_.clear();
  for (auto& [s, w] : by_stem) writes_.push_back(std::move(w));
  return {};
}

// The committed root as a stub, then the stubs the writes reach (a header patch reads its
// stem's old leaves: its keys are among them), round by round until none is left.
io::Status BlockTree::resolve() {
  const CommitBase& base = frame_.base();
  tree_.reset_to_stub(base.root_hash, frame_.keyed() ? kKeyed : base.root);
  entries_.clear();
  for (const StemWrites& w : writes_) {
    bintrie::Entry e{};
    std::memcpy(e.key.data(), w.stem.data(), 31);
    entries_.push_back(e);  // the stem's path is what the listing follows
  }
  std::vector<bintrie::MutableTree::StubId> ids;
  std::vector<std::string> keys, values;
  for (unsigned round = 0;; ++round) {
    ids.clear();
    tree_.stubs_to_resolve(entries_, &ids);
    if (ids.empty()) return {};
    if (round == kMaxRounds) return {io::Errc::corrupt_page, "binary trie commit: paths deeper than the stems' 248 bits"};
    if (io::Status s = read_round(ids, &keys, &values); !s.ok()) return s;
    for (size_t i = 0; i < ids.size(); ++i)
      if (io::Status s = take(ids[i], i, keys, values); !s.ok()) return s;
  }
}

// One round's reads: RocksDB, one read of the stubs' path keys; arena, one load of their
// records' pages, then one of the stem pieces they name.
io::Status BlockTree::read_round(const std::vector<bintrie::MutableTree::StubId>& ids, std::vector<std::string>* keys,
                                 std::vector<std::string>* values) {
  if (frame_.keyed()) {
    keys->clear();
    uint8_t path[32];
    for (bintrie::MutableTree::StubId id : ids) {
      const unsigned depth = tree_.stub_path(id, path);
      keys->push_back(blob_key_string(path, depth));
    }
    return frame_.rocks().read(*keys, values, "binary trie commit", key_name);
  }
  std::vector<Locator> locs;
  for (bintrie::MutableTree::StubId id : ids) locs.push_back(tree_.stub(id).locator);
  if (io::Status s = frame_.reader().load(locs); !s.ok()) return s;
  std::vector<Locator> pieces;
  for (Locator l : locs) {
    RecordView rv;
    if (io::Status s = frame_.reader().record(l, &rv); !s.ok()) return s;
    if (rv.kind == bd::kStemChunked)
      for (uint32_t c = 0; c < rv.child_count; ++c) pieces.push_back(rv.child(c));
  }
  return pieces.empty() ? io::Status{} : frame_.reader().load(pieces);
}

// The round's i-th stub read through the verified fetch and resolved into the tree; what it
// was read from is remembered by the node that took its place.
io::Status BlockTree::take(bintrie::MutableTree::StubId id, size_t i, const std::vector<std::string>& keys,
                           const std::vector<std::string>& values) {
  const bool keyed = frame_.keyed();
  const bintrie::MutableTree::Stub stub = tree_.stub(id);
  ReadRecord rr;
  rr.hash = stub.hash;
  const bool root = tree_.root_ref() == (bintrie::kRefTagStub | id);
  if (keyed) rr.depth = tree_.stub_path(id, rr.path.data());  // (the arena names records by locator)
  bintrie_read::Node f;
  if (keyed) {
    const std::span<const uint8_t> blob{reinterpret_cast<const uint8_t*>(values[i].data()), values[i].size()};
    if (io::Status s = bintrie_read::decode_keyed(blob, g_, bintrie_read::key_name(bintrie_read::kCommit, keys[i]), &f);
        !s.ok())
      return s;
    if (f.is_group) f.children.assign(f.group.entries.size(), kKeyed);
    rr.records.push_back(kKeyed);
  } else {
    bool complete = false;
    std::vector<Locator> need;
    if (io::Status s = bintrie_read::fetch_record(frame_.reader(), g_, bintrie_read::kCommit, stub.locator, &f,
                                                  &complete, &need);
        !s.ok())
      return s;
    if (!complete) return err(stub.locator, "stem pieces not loaded");
    rr.records.push_back(stub.locator);
    rr.records.insert(rr.records.end(), f.pieces.begin(), f.pieces.end());
  }
  rr.body_bytes = f.body_bytes;
  rr.group = f.is_group;
  bintrie::NodeRef placed = bintrie::kEmptyRef;
  bool hash_mismatch = false;
  const std::string e =
      f.is_group ? tree_.resolve_group_stub(id, f.group_view, f.children, &placed, &hash_mismatch)
                 : tree_.resolve_stem_stub(id, bintrie::stem_blob_view(f.stem), &placed, &hash_mismatch);
  if (!e.empty()) {
    const std::string where = keyed ? bintrie_read::key_name(bintrie_read::kCommit, keys[i])
                                    : bintrie_read::record_name(bintrie_read::kCommit, stub.locator);
    const std::string what = hash_mismatch ? bintrie_read::hash_mismatch_what(root, f.is_group) : tree_message(e);
    return {io::Errc::corrupt_page, where + ": " + what};
  }
  records_read += rr.records.size();
  std::vector<int32_t>& by = bintrie::ref_is_stem(placed) ? read_of_stem_ : read_of_internal_;
  const uint32_t at = bintrie::ref_index(placed);
  if (by.size() <= at) by.resize(size_t(at) + 1, -1);
  by[at] = int32_t(read_.size());
  read_.push_back(std::move(rr));
  return {};
}

}  // namespace st::persist::bintrie_commit
