// bintrie/commit_emit: the commit's writes (bintrie/commit_tree.h, Committer::emit): the
// plan post-order. Arena: a kept subtree by its locator (place_kept), a new stem as one
// record or as pieces and a chunked record, a new group after its children as one record
// (SubtreePacker); new stems' leaves into the flat snapshot when there is one. RocksDB: new
// blobs put under blob_key(path, depth) in the commit's batch; a kept stem a split moved
// deeper rewritten under its new key and its old key superseded.
// Invariant: children are emitted before their group (the packer's post-order).
#include <algorithm>
#include <cstring>

#include "engine/persist/bintrie/commit_tree.h"

namespace st::persist::bintrie_commit {
namespace {

// Bits [d, d + n) of `path` := v (n bits, MSB first).
void set_bits(Key32& path, unsigned d, uint32_t v, unsigned n) {
  for (unsigned i = 0; i < n; ++i) {
    const unsigned b = d + i;
    const uint8_t m = uint8_t(0x80 >> (b % 8));
    if ((v >> (n - 1 - i)) & 1) path[b / 8] |= m;
    else path[b / 8] &= uint8_t(~m);
  }
}

}  // namespace

// A new stem at `depth`: its leaves into the flat snapshot (if any); its blob as one record,
// or as pieces and a chunked record when it exceeds a page's payload (RocksDB: one blob).
io::Status Committer::emit_stem(const Plan& p, unsigned depth) {
  const bool keyed = frame_.keyed();
  if (SnapshotDelta* snap = frame_.snapshot()) {  // the flat snapshot: every leaf of the stem
    uint8_t key[32];
    std::memcpy(key, p.stem_blob.stem.data(), 31);
    for (unsigned i = 0, j = 0; i < 256; ++i)
      if ((p.stem_blob.bitmap[i / 8] >> (7 - i % 8)) & 1) {
        key[31] = uint8_t(i);
        snap->put({key, 32}, p.stem_blob.values[j++]);
      }
  }
  buf_.clear();
  bintrie::encode_stem_blob(p.stem_blob, &buf_);
  bytes_written += buf_.size();
  if (keyed) {
    ++records_written;
    frame_.rocks().put(blob_key_string(p.stem_blob.stem.data(), depth), std::string(buf_.begin(), buf_.end()));
    return {};
  }
  SubtreePacker& packer = frame_.packer();
  const size_t piece_max = packer_payload_ - kPageHeaderBytes - record_footprint(0, 0);
  ++records_written;
  if (buf_.size() <= piece_max) return packer.push(bd::kStem, buf_, 0);
  uint32_t pieces = 0;
  for (size_t at = 0; at < buf_.size(); at += piece_max, ++pieces) {
    const size_t len = std::min(piece_max, buf_.size() - at);
    if (io::Status s = packer.push(bd::kPiece, std::span<const uint8_t>(buf_).subspan(at, len), 0); !s.ok()) return s;
    ++records_written;
  }
  return packer.push(bd::kStemChunked, {}, pieces);
}

// p at `depth` under `path` (its first `depth` bits). Arena: records into the packer in
// post-order; RocksDB: blobs into the commit's batch under blob_key(path, depth).
io::Status Committer::emit(const Plan& p, const Key32& path, unsigned depth) {
  const bool keyed = frame_.keyed();
  if (p.kind == Plan::placed) {
    if (!keyed) return frame_.place_kept(p.loc);
    if (p.node < 0 || nodes_[p.node].depth == depth) return {};  // its key holds it
    return emit_moved_stem(nodes_[p.node], depth);
  }
  if (p.kind == Plan::stem) return emit_stem(p, depth);
  const uint32_t k = uint32_t(p.kids.size());
  for (uint32_t i = 0; i < k; ++i) {
    if (!p.kids[i].plan) {  // kept by locator (RocksDB: its key holds it)
      if (!keyed)
        if (io::Status s = frame_.place_kept(p.kids[i].loc); !s.ok()) return s;
      continue;
    }
    const bintrie::GroupEntry& ge = p.group_blob.entries[i];
    Key32 kid_path = path;
    set_bits(kid_path, depth, uint32_t(ge.pos) >> (g_ - ge.depth), ge.depth);
    if (io::Status s = emit(*p.kids[i].plan, kid_path, depth + ge.depth); !s.ok()) return s;
  }
  buf_.clear();
  bintrie::encode_group_blob(p.group_blob, &buf_);
  bytes_written += buf_.size();
  ++records_written;
  if (keyed) {
    frame_.rocks().put(blob_key_string(path.data(), depth), std::string(buf_.begin(), buf_.end()));
    return {};
  }
  return frame_.packer().push(bd::kGroup, buf_, k);
}

// RocksDB: a kept stem that moved deeper (a new stem split its position): same blob, new key
// (its old key superseded).
io::Status Committer::emit_moved_stem(const Node& n, unsigned depth) {
  if (n.group) return {io::Errc::corrupt_page, "binary trie commit: internal: a kept group moved"};
  frame_.supersede_key(blob_key_string(n.path.data(), n.depth), n.body_bytes);
  buf_.clear();
  bintrie::encode_stem_blob(n.stem, &buf_);
  bytes_written += buf_.size();
  ++records_written;
  frame_.rocks().put(blob_key_string(n.stem.stem.data(), depth), std::string(buf_.begin(), buf_.end()));
  return {};
}

}  // namespace st::persist::bintrie_commit
