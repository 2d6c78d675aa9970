// bintrie/commit_resolve: the commit's resolve (bintrie/commit_tree.h, Committer::resolve):
// the records on the dirty paths read level by level from the root, one read per level
// (arena: one PageReader::load of the level's pages, then one of the stem pieces met on it;
// RocksDB: one MultiGet of the level's path keys), each decoded strictly through the
// verified fetch (bintrie/verified_fetch.h: the record or blob checked against its record),
// then the level's hashes checked against their parents' entries (the root: the manifest) in
// one batch (BlobHashChecks, the hasher's batch kernels). A group blob is parsed once: its
// check is queued from the view the fetch's strict decode made (Node::group_view).
// Invariant: no node of a level is linked into the dirty paths (child_node, root_) or
// descended into before the whole level's check passed; a failure names the node.
#include <map>

#include "engine/persist/bintrie/commit_tree.h"

namespace st::persist::bintrie_commit {
namespace {

std::string key_name(std::string_view key) {
  return "node at path key " + bd::hex({reinterpret_cast<const uint8_t*>(key.data()), key.size()});
}

}  // namespace

// Level by level from the root: loads, checks and links every record on a dirty path.
io::Status Committer::resolve() {
  const bool keyed = frame_.keyed();
  if (keyed ? frame_.base().root_hash == Hash32{} : frame_.base().root == kNoLocator) return {};
  std::vector<ResolveItem> level(1);
  level[0] = {keyed ? kKeyed : frame_.base().root, frame_.base().root_hash, 0, {}, -1, 0};
  for (uint32_t i = 0; i < writes_.size(); ++i) level[0].dirty.push_back(i);
  std::vector<std::string> keys, values;
  while (!level.empty()) {
    if (level[0].depth > 248) return err(level[0].loc, "path deeper than 248 bits");
    if (io::Status s = read_level(level, &keys, &values); !s.ok()) return s;
    const int first = int(nodes_.size());
    if (io::Status s = take_level(level, keys, values); !s.ok()) return s;
    std::vector<ResolveItem> next;
    for (size_t li = 0; li < level.size(); ++li)
      if (io::Status s = descend(level[li], first + int(li), &next); !s.ok()) return s;
    level = std::move(next);
  }
  return {};
}

// One level's reads: RocksDB, one read of its path keys; arena, one load of its records'
// pages, then one of the stem pieces they name.
io::Status Committer::read_level(const std::vector<ResolveItem>& level, std::vector<std::string>* keys,
                                 std::vector<std::string>* values) {
  if (frame_.keyed()) {
    keys->clear();
    for (const ResolveItem& it : level) keys->push_back(blob_key_string(path_of(it).data(), it.depth));
    return frame_.rocks().read(*keys, values, "binary trie commit", key_name);
  }
  std::vector<Locator> locs;
  for (const ResolveItem& it : level) locs.push_back(it.loc);
  if (io::Status s = frame_.reader().load(locs); !s.ok()) return s;
  std::vector<Locator> aux;  // stem pieces
  for (const ResolveItem& it : level) {
    RecordView rv;
    if (io::Status s = frame_.reader().record(it.loc, &rv); !s.ok()) return s;
    if (rv.kind == bd::kStemChunked)
      for (uint32_t c = 0; c < rv.child_count; ++c) aux.push_back(rv.child(c));
  }
  if (aux.empty()) return {};
  return frame_.reader().load(aux);
}

// The level's nodes decoded through the verified fetch into nodes_ (level order) and their
// hashes checked against their parents' entries, all in one batch (BlobHashChecks: the
// hasher's batch kernels), before any of them is linked or descended into.
io::Status Committer::take_level(const std::vector<ResolveItem>& level, const std::vector<std::string>& keys,
                                 const std::vector<std::string>& values) {
  const bool keyed = frame_.keyed();
  const size_t first = nodes_.size();
  nodes_.reserve(first + level.size());  // the stem views queued below stay valid
  checks_.clear();
  for (size_t li = 0; li < level.size(); ++li) {
    const ResolveItem& it = level[li];
    Node& n = nodes_.emplace_back();
    bintrie::GroupBlobView group_view;  // into the page or value read for this level
    io::Status ds = keyed ? decode_value(values[li], keys[li], &n, &group_view) : decode(it.loc, &n, &group_view);
    if (!ds.ok()) return ds;
    n.path = path_of(it);
    n.depth = it.depth;
    records_read += n.records.size();
    queue_check(n, it, group_view);
  }
  const long bad = checks_.run();
  if (bad >= 0) {
    const ResolveItem& it = level[size_t(bad)];
    const std::string where = keyed ? bintrie_read::key_name(bintrie_read::kCommit, keys[size_t(bad)])
                                    : bintrie_read::record_name(bintrie_read::kCommit, it.loc);
    return {io::Errc::corrupt_page, where + ": " + bintrie_read::hash_mismatch_what(it.depth == 0, checks_.is_group(size_t(bad)))};
  }
  for (size_t li = 0; li < level.size(); ++li) nodes_[first + li].hash = level[li].hash;  // checked
  return {};
}

// Queues node n's hash check (it must hash to it.hash): a group from the view of its stored
// bytes that the verified fetch's strict check made (the RocksDB value, or the record's body
// in the page cache: not parsed again), a stem from its decoded blob.
void Committer::queue_check(const Node& n, const ResolveItem& it, const bintrie::GroupBlobView& group_view) {
  if (!n.group) {
    checks_.add_stem(bintrie::stem_blob_view(n.stem), it.hash.data(), 0);
    return;
  }
  checks_.add_group(group_view, it.hash.data(), 0);
}

// A node of the level (checked) linked under its parent; a group's entries on the item's
// dirty paths become the next level's items.
io::Status Committer::descend(const ResolveItem& it, int id, std::vector<ResolveItem>* next) {
  Node& n = nodes_[size_t(id)];
  if (it.parent >= 0) nodes_[size_t(it.parent)].child_node[it.entry] = id;
  else root_ = id;
  if (!n.group) {
    if (!it.dirty.empty() && !bd::same_prefix(n.stem.stem.data(), writes_[it.dirty[0]].stem.data(), it.depth))
      return err(it.loc, "stem does not continue the path of its position");
    return {};
  }
  n.child_node.assign(n.blob.entries.size(), -1);
  std::map<uint32_t, size_t> child_item;  // entry -> index in next
  for (uint32_t w : it.dirty) {
    const auto e = bd::find_entry(n.blob, bd::key_bits(writes_[w].stem.data(), it.depth, g_));
    if (!e) continue;
    auto [pos, fresh] = child_item.emplace(*e, next->size());
    if (fresh)
      next->push_back({n.children[*e], n.blob.entries[*e].hash, it.depth + n.blob.entries[*e].depth, {}, id, *e});
    (*next)[pos->second].dirty.push_back(w);
  }
  return {};
}

// A node read through the verified fetch into n: its blob, children, records and bytes
// (its hash is set once take_level checked it against its parent's entry).
void Committer::take_fetched(bintrie_read::Node&& f, Locator loc, Node* n, bintrie::GroupBlobView* group_view) {
  n->loc = loc;
  n->records.push_back(loc);
  n->records.insert(n->records.end(), f.pieces.begin(), f.pieces.end());
  n->body_bytes = f.body_bytes;
  n->group = f.is_group;
  if (f.is_group) {
    n->blob = std::move(f.group);
    n->children = std::move(f.children);
    *group_view = f.group_view;
  } else {
    n->stem = std::move(f.stem);
  }
}

// RocksDB: the blob at `key` (group or stem by its version byte).
io::Status Committer::decode_value(const std::string& value, const std::string& key, Node* n,
                                   bintrie::GroupBlobView* group_view) {
  const std::span<const uint8_t> blob{reinterpret_cast<const uint8_t*>(value.data()), value.size()};
  bintrie_read::Node f;
  if (io::Status s = bintrie_read::decode_keyed(blob, g_, bintrie_read::key_name(bintrie_read::kCommit, key), &f); !s.ok())
    return s;
  if (f.is_group) f.children.assign(f.group.entries.size(), kKeyed);
  take_fetched(std::move(f), kKeyed, n, group_view);
  return {};
}

// Arena: the record at loc (its page and a chunked stem's pieces loaded by resolve()).
io::Status Committer::decode(Locator loc, Node* n, bintrie::GroupBlobView* group_view) {
  bintrie_read::Node f;
  bool complete = false;
  std::vector<Locator> need;
  if (io::Status s = bintrie_read::fetch_record(frame_.reader(), g_, bintrie_read::kCommit, loc, &f, &complete, &need);
      !s.ok())
    return s;
  if (!complete) return err(loc, "stem pieces not loaded");
  take_fetched(std::move(f), loc, n, group_view);
  return {};
}

}  // namespace st::persist::bintrie_commit
