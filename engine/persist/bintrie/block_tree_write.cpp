// bintrie/block_tree_write: the commit's writes (bintrie/block_tree.h): the tree post-order
// from the root at the disk layout's positions, a group blob for every internal node at a
// depth = 0 mod g (its entries: the stems that end inside the group and the nodes at its
// bottom), a stem blob per stem. Arena: an unread stub, or a read stem or group whose hash is
// unchanged, by its locator (place_kept); a new stem as one record or as pieces and a chunked
// record, a new group after its children as one record (SubtreePacker); RocksDB: new blobs
// put under blob_key(path, depth) in the commit's batch, a kept stem a split moved deeper
// rewritten under its new key. New stems' leaves go into the flat snapshot when there is
// one. The same walk, listing instead of writing, gives the pure hash its blobs.
// Invariant: children are emitted before their group (the packer's post-order); a record
// read is superseded exactly when its node is written anew.
#include <algorithm>
#include <cstring>

#include "engine/persist/bintrie/block_tree.h"

namespace st::persist::bintrie_commit {
namespace {

using bintrie::NodeRef;

void set_bit(Key32& path, unsigned d, unsigned b) {
  const uint8_t m = uint8_t(0x80 >> (d % 8));
  if (b) path[d / 8] |= m;
  else path[d / 8] &= uint8_t(~m);
}

bintrie::StemBlob stem_blob_of(const bintrie::MutableTree& t, uint32_t si) {
  bintrie::StemBlob sb;
  sb.stem = t.stem(si).stem;
  for (const bintrie::StemSlot& s : t.slots(si)) {
    sb.bitmap[s.sub / 8] |= uint8_t(0x80 >> (s.sub % 8));
    sb.values.push_back(s.value);
  }
  return sb;
}

}  // namespace

const ReadRecord* BlockTree::read_of(NodeRef ref) const {
  const std::vector<int32_t>& by = bintrie::ref_is_stem(ref) ? read_of_stem_ : read_of_internal_;
  const uint32_t i = bintrie::ref_index(ref);
  return i < by.size() && by[i] >= 0 ? &read_[size_t(by[i])] : nullptr;
}

void BlockTree::supersede(const ReadRecord& r) {
  if (frame_.keyed()) frame_.supersede_key(blob_key_string(r.path.data(), r.depth), r.body_bytes);
  else frame_.supersede(r.records, r.body_bytes);
}

io::Status BlockTree::pure_hash(PureHashCount* c) {
  new_blobs_.clear();
  list_blobs_ = true;
  io::Status s = tree_.root_ref() == bintrie::kEmptyRef ? io::Status{} : emit(tree_.root_ref(), Key32{}, 0);
  list_blobs_ = false;
  if (!s.ok()) return s;
  std::vector<const bintrie::StemBlob*> stems;
  std::vector<const bintrie::GroupBlob*> groups;
  for (const bintrie::StemBlob& b : new_blobs_.stems) stems.push_back(&b);
  for (const bintrie::GroupBlob& b : new_blobs_.groups) groups.push_back(&b);
  return bintrie_pure_hash(tree_.hasher(), stems, new_blobs_.stem_hashes, groups, new_blobs_.group_hashes, c);
}

io::Status BlockTree::write(Locator* root) {
  *root = kNoLocator;
  if (tree_.root_ref() == bintrie::kEmptyRef) return {};
  const bool keyed = frame_.keyed();
  if (!keyed) packer_payload_ = frame_.writer().payload_bytes();
  if (io::Status s = emit(tree_.root_ref(), Key32{}, 0); !s.ok()) return s;
  if (keyed) return {};
  std::vector<Locator> roots;
  if (io::Status s = frame_.packer().finish(&roots); !s.ok()) return s;
  if (roots.size() != 1) return {io::Errc::bad_argument, "binary trie commit: not one root record"};
  *root = roots[0];
  return {};
}

// The node at `ref`, a blob's position at `depth` under `path` (its first `depth` bits).
io::Status BlockTree::emit(NodeRef ref, const Key32& path, unsigned depth) {
  if (bintrie::ref_is_stub(ref)) {  // unread: kept where it is (stubs never move)
    if (list_blobs_ || frame_.keyed()) return {};
    return frame_.place_kept(tree_.stub(bintrie::ref_index(ref)).locator);
  }
  const ReadRecord* was = read_of(ref);
  if (bintrie::ref_is_stem(ref)) return emit_stem(bintrie::ref_index(ref), depth, was);
  return emit_group(bintrie::ref_index(ref), path, depth, was);
}

// Stem si at `depth`: kept if it was read and its hash is unchanged (RocksDB: rewritten under
// its new key when a split moved it deeper), else a new stem blob: its leaves into the flat
// snapshot (if any), one record, or pieces and a chunked record when it exceeds a page's
// payload (RocksDB: one blob).
io::Status BlockTree::emit_stem(uint32_t si, unsigned depth, const ReadRecord* was) {
  const bool keyed = frame_.keyed();
  const Hash32& hash = tree_.ref_hash(bintrie::kRefTagStem | si);
  const bool kept = was && was->hash == hash;
  if (list_blobs_) {
    if (!kept) new_blobs_.stems.push_back(stem_blob_of(tree_, si)), new_blobs_.stem_hashes.push_back(hash);
    return {};
  }
  if (kept && !keyed) return frame_.place_kept(was->records[0]);
  if (kept && was->depth == depth) return {};  // its key holds it
  const bintrie::StemBlob blob = stem_blob_of(tree_, si);
  if (was) supersede(*was);  // (a moved stem: its old key)
  if (SnapshotDelta* snap = kept ? nullptr : frame_.snapshot()) {  // the flat snapshot: every leaf of the stem
    uint8_t key[32];
    std::memcpy(key, blob.stem.data(), 31);
    for (unsigned i = 0, j = 0; i < 256; ++i)
      if ((blob.bitmap[i / 8] >> (7 - i % 8)) & 1) {
        key[31] = uint8_t(i);
        snap->put({key, 32}, blob.values[j++]);
      }
  }
  buf_.clear();
  bintrie::encode_stem_blob(blob, &buf_);
  bytes_written += buf_.size();
  ++records_written;
  if (keyed) {
    frame_.rocks().put(blob_key_string(blob.stem.data(), depth), std::string(buf_.begin(), buf_.end()));
    return {};
  }
  SubtreePacker& packer = frame_.packer();
  const size_t piece_max = packer_payload_ - kPageHeaderBytes - record_footprint(0, 0);
  if (buf_.size() <= piece_max) return packer.push(bd::kStem, buf_, 0);
  uint32_t pieces = 0;
  for (size_t at = 0; at < buf_.size(); at += piece_max, ++pieces) {
    const size_t len = std::min(piece_max, buf_.size() - at);
    if (io::Status s = packer.push(bd::kPiece, std::span<const uint8_t>(buf_).subspan(at, len), 0); !s.ok()) return s;
    ++records_written;
  }
  return packer.push(bd::kStemChunked, {}, pieces);
}

// The group whose top is internal node ii at `depth` under `path`: kept whole if it was read
// and its hash is unchanged (everything below it too), else its entries' nodes first, then
// the new group blob.
io::Status BlockTree::emit_group(uint32_t ii, const Key32& path, unsigned depth, const ReadRecord* was) {
  const NodeRef ref = bintrie::kRefTagInternal | ii;
  const Hash32& hash = tree_.ref_hash(ref);
  if (was && was->hash == hash) {
    if (list_blobs_ || frame_.keyed()) return {};
    return frame_.place_kept(was->records[0]);
  }
  bintrie::GroupBlob blob;
  blob.g = uint8_t(g_);
  std::vector<std::pair<NodeRef, Key32>> kids;
  Key32 walk = path;
  collect(ref, walk, depth, 0, 0, blob, kids);
  for (size_t i = 0; i < kids.size(); ++i)
    if (io::Status s = emit(kids[i].first, kids[i].second, depth + blob.entries[i].depth); !s.ok()) return s;
  if (list_blobs_) {
    new_blobs_.group_hashes.push_back(hash);
    new_blobs_.groups.push_back(std::move(blob));
    return {};
  }
  if (was) supersede(*was);
  buf_.clear();
  bintrie::encode_group_blob(blob, &buf_);
  bytes_written += buf_.size();
  ++records_written;
  if (frame_.keyed()) {
    frame_.rocks().put(blob_key_string(path.data(), depth), std::string(buf_.begin(), buf_.end()));
    return {};
  }
  return frame_.packer().push(bd::kGroup, buf_, uint32_t(kids.size()));
}

// The group's entries below `ref` (relative depth r, relative position p, at `depth` under
// `path`): a node at the group's bottom or a stem (or an unread stub, which is either) is an
// entry; an internal node above the bottom is walked through.
void BlockTree::collect(NodeRef ref, Key32& path, unsigned depth, unsigned r, unsigned p, bintrie::GroupBlob& blob,
                        std::vector<std::pair<NodeRef, Key32>>& kids) const {
  if (ref == bintrie::kEmptyRef) return;
  if (r == g_ || !bintrie::ref_is_internal(ref)) {
    blob.entries.push_back({uint16_t(p << (g_ - r)), uint8_t(r), tree_.ref_hash(ref)});
    kids.emplace_back(ref, path);
    return;
  }
  const bintrie::InternalNode& n = tree_.internal(bintrie::ref_index(ref));
  for (unsigned side = 0; side < 2; ++side) {
    set_bit(path, depth, side);
    collect(n.child[side], path, depth + 1, r + 1, p << 1 | side, blob, kids);
  }
  set_bit(path, depth, 0);
}

}  // namespace st::persist::bintrie_commit
