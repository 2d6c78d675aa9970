// group_blob: encoders, strict decoders, reconstruction and the tree walk (see group_blob.h).
#include "engine/bintrie/group_blob.h"

#include <bit>
#include <cstring>

#include "engine/bintrie/stem_bits.h"

namespace st::bintrie {

size_t group_blob_bitmap_bytes(unsigned g) { return std::max<size_t>(1, (size_t(1) << g) / 8); }

size_t group_blob_size(unsigned g, size_t k) { return 2 + group_blob_bitmap_bytes(g) + (3 * k + 7) / 8 + 32 * k; }

void encode_group_blob(const GroupBlob& b, std::vector<uint8_t>* out) {
  const unsigned g = b.g;
  const size_t k = b.entries.size();
  const size_t bm = group_blob_bitmap_bytes(g);
  const size_t start = out->size();
  out->resize(start + group_blob_size(g, k), 0);
  uint8_t* p = out->data() + start;
  p[0] = kGroupBlobVersion;
  p[1] = uint8_t(g);
  for (const auto& e : b.entries) p[2 + e.pos / 8] |= uint8_t(0x80 >> (e.pos % 8));
  uint8_t* depths = p + 2 + bm;
  for (size_t i = 0; i < k; ++i) {
    const unsigned v = unsigned(b.entries[i].depth - 1) & 7u;
    for (unsigned bit = 0; bit < 3; ++bit) {
      const size_t at = 3 * i + bit;
      if ((v >> (2 - bit)) & 1) depths[at / 8] |= uint8_t(0x80 >> (at % 8));
    }
  }
  uint8_t* hashes = depths + (3 * k + 7) / 8;
  for (size_t i = 0; i < k; ++i) std::memcpy(hashes + 32 * i, b.entries[i].hash.data(), 32);
}

std::variant<GroupBlob, std::string> decode_group_blob(std::span<const uint8_t> in, unsigned expected_g) {
  if (in.size() < 2) return std::string("group blob truncated: " + std::to_string(in.size()) + " bytes");
  if (in[0] != kGroupBlobVersion) return std::string("group blob: bad version byte " + std::to_string(in[0]));
  const unsigned g = in[1];
  if (g < 1 || g > 8) return std::string("group blob: group depth " + std::to_string(g) + " out of range 1..8");
  if (g != expected_g)
    return std::string("group blob: group depth " + std::to_string(g) + ", expected " + std::to_string(expected_g));
  const size_t width = size_t(1) << g;
  const size_t bm = group_blob_bitmap_bytes(g);
  if (in.size() < 2 + bm) return std::string("group blob truncated in the bitmap");
  const uint8_t* bitmap = in.data() + 2;
  GroupBlob b;
  b.g = uint8_t(g);
  for (size_t i = 0; i < bm * 8; ++i) {
    if (!((bitmap[i / 8] >> (7 - i % 8)) & 1)) continue;
    if (i >= width) return std::string("group blob: bitmap bit " + std::to_string(i) + " beyond 2^g");
    GroupEntry e;
    e.pos = uint16_t(i);
    b.entries.push_back(e);
  }
  const size_t k = b.entries.size();
  if (k == 0) return std::string("group blob: no entries");
  if (in.size() != group_blob_size(g, k))
    return std::string("group blob: " + std::to_string(in.size()) + " bytes, expected " +
                       std::to_string(group_blob_size(g, k)) + " for " + std::to_string(k) + " entries");
  const uint8_t* depths = bitmap + bm;
  const size_t depth_bytes = (3 * k + 7) / 8;
  for (size_t at = 3 * k; at < depth_bytes * 8; ++at)
    if ((depths[at / 8] >> (7 - at % 8)) & 1) return std::string("group blob: non-zero padding bits");
  for (size_t i = 0; i < k; ++i) {
    unsigned v = 0;
    for (unsigned bit = 0; bit < 3; ++bit) {
      const size_t at = 3 * i + bit;
      v = v << 1 | ((depths[at / 8] >> (7 - at % 8)) & 1u);
    }
    const unsigned r = v + 1;
    if (r > g) return std::string("group blob: depth offset " + std::to_string(r) + " > g");
    b.entries[i].depth = uint8_t(r);
    const unsigned span_bits = g - r;
    if (b.entries[i].pos & ((1u << span_bits) - 1)) return std::string("group blob: misaligned entry");
    if (i > 0) {
      const auto& prev = b.entries[i - 1];
      if (prev.pos + (1u << (g - prev.depth)) > b.entries[i].pos) return std::string("group blob: overlapping entries");
    }
    std::memcpy(b.entries[i].hash.data(), depths + depth_bytes + 32 * i, 32);
  }
  // Canonical shape: an entry ending early (r < g) is a stem, and a stem always has a
  // non-empty sibling subtree.
  for (const auto& e : b.entries) {
    if (e.depth >= g) continue;
    const unsigned span = 1u << (g - e.depth);
    const unsigned sib_lo = (e.pos ^ span), sib_hi = sib_lo + span;
    bool found = false;
    for (const auto& f : b.entries) found = found || (f.pos >= sib_lo && f.pos < sib_hi);
    if (!found) return std::string("group blob: early entry without a sibling (non-canonical)");
  }
  return b;
}

void encode_stem_blob(const StemBlob& b, std::vector<uint8_t>* out) {
  const size_t start = out->size();
  out->resize(start + 64 + 32 * b.values.size());
  uint8_t* p = out->data() + start;
  p[0] = kStemBlobVersion;
  std::memcpy(p + 1, b.stem.data(), 31);
  std::memcpy(p + 32, b.bitmap.data(), 32);
  for (size_t i = 0; i < b.values.size(); ++i) std::memcpy(p + 64 + 32 * i, b.values[i].data(), 32);
}

std::variant<StemBlob, std::string> decode_stem_blob(std::span<const uint8_t> in) {
  if (in.size() < 64) return std::string("stem blob truncated: " + std::to_string(in.size()) + " bytes");
  if (in[0] != kStemBlobVersion) return std::string("stem blob: bad version byte " + std::to_string(in[0]));
  StemBlob b;
  std::memcpy(b.stem.data(), in.data() + 1, 31);
  std::memcpy(b.bitmap.data(), in.data() + 32, 32);
  size_t k = 0;
  for (uint8_t x : b.bitmap) k += size_t(std::popcount(x));
  if (k == 0) return std::string("stem blob: no values");
  if (in.size() != 64 + 32 * k)
    return std::string("stem blob: " + std::to_string(in.size()) + " bytes, expected " + std::to_string(64 + 32 * k));
  b.values.resize(k);
  for (size_t i = 0; i < k; ++i) std::memcpy(b.values[i].data(), in.data() + 64 + 32 * i, 32);
  return b;
}

std::vector<Bytes32> reconstruct_group(const Hasher& h, const GroupBlob& b, size_t* hashes_computed) {
  const unsigned g = b.g;
  const size_t total = (size_t(2) << g) - 1;  // heap over relative depths 0..g
  std::vector<Bytes32> node(total, Bytes32{});
  std::vector<uint8_t> fixed(total, 0);
  for (const auto& e : b.entries) {
    const size_t idx = ((size_t(1) << e.depth) - 1) + (e.pos >> (g - e.depth));
    node[idx] = e.hash;
    fixed[idx] = 1;
  }
  size_t computed = 0;
  for (size_t i = (size_t(1) << g) - 1; i-- > 0;) {
    if (fixed[i]) continue;
    hash_pair(h, node[2 * i + 1].data(), node[2 * i + 2].data(), node[i].data());
    if (node[i] != Bytes32{}) ++computed;
  }
  if (hashes_computed) *hashes_computed = computed;
  node.resize((size_t(1) << g) - 1);
  return node;
}

Bytes32 stem_blob_hash(const Hasher& h, const StemBlob& b) {
  Bytes32 leaves[256];
  size_t j = 0;
  for (int i = 0; i < 256; ++i) {
    leaves[i] = Bytes32{};
    if ((b.bitmap[i / 8] >> (7 - i % 8)) & 1) h.hash(b.values[j++].data(), 32, leaves[i].data());
  }
  DenseStemTree t;
  dense_stem_tree(h, leaves, &t);
  Bytes32 out;
  hash_stem_node(h, b.stem.data(), t.root().data(), out.data());
  return out;
}

std::vector<uint8_t> blob_key(const uint8_t* path, unsigned bit_len) {
  std::vector<uint8_t> k((bit_len + 7) / 8 + 1, 0);
  for (unsigned i = 0; i < bit_len; ++i)
    if ((path[i / 8] >> (7 - i % 8)) & 1) k[i / 8] |= uint8_t(0x80 >> (i % 8));
  k.back() = uint8_t(bit_len);
  return k;
}

namespace {

struct Walker {
  const MutableTree& t;
  unsigned g;
  const std::function<void(std::span<const uint8_t>, std::span<const uint8_t>)>& emit;
  BlobCounts counts;
  std::vector<uint8_t> buf;
  uint8_t path[32] = {};

  void set_bit(unsigned d, unsigned b) {
    if (b) path[d / 8] |= uint8_t(0x80 >> (d % 8));
    else path[d / 8] &= uint8_t(~(0x80 >> (d % 8)));
  }

  void emit_stem(uint32_t si, unsigned depth) {
    StemBlob sb;
    sb.stem = t.stem(si).stem;
    for (const StemSlot& s : t.slots(si)) {
      sb.bitmap[s.sub / 8] |= uint8_t(0x80 >> (s.sub % 8));
      sb.values.push_back(s.value);
    }
    buf.clear();
    encode_stem_blob(sb, &buf);
    counts.stem_blobs++;
    counts.stem_bytes += buf.size();
    emit(blob_key(path, depth), buf);
  }

  // Collects the group's entries below `ref` (at relative depth r, relative path p) and
  // recurses into the groups and stems below.
  void collect(NodeRef ref, unsigned depth, unsigned r, unsigned p, GroupBlob& blob, std::vector<std::pair<NodeRef, unsigned>>& next) {
    if (ref == kEmptyRef) return;
    if (r == g || ref_is_stem(ref)) {
      blob.entries.push_back({uint16_t(p << (g - r)), uint8_t(r), t.ref_hash(ref)});
      next.push_back({ref, depth});
      return;
    }
    const InternalNode& n = t.internal(ref_index(ref));
    for (unsigned side = 0; side < 2; ++side) {
      set_bit(depth, side);
      collect(n.child[side], depth + 1, r + 1, p << 1 | side, blob, next);
    }
  }

  void node(NodeRef ref, unsigned depth) {
    if (ref == kEmptyRef) return;
    if (ref_is_stem(ref)) { emit_stem(ref_index(ref), depth); return; }
    GroupBlob blob;
    blob.g = uint8_t(g);
    std::vector<std::pair<NodeRef, unsigned>> next;
    uint8_t saved[32];
    std::memcpy(saved, path, 32);
    collect(ref, depth, 0, 0, blob, next);
    std::memcpy(path, saved, 32);
    buf.clear();
    encode_group_blob(blob, &buf);
    counts.group_blobs++;
    counts.group_bytes += buf.size();
    counts.group_entries += blob.entries.size();
    if (blob.entries.size() == (size_t(1) << g)) counts.group_full++;
    emit(blob_key(path, depth), buf);
    // Children: re-derive their paths from the entries.
    for (size_t i = 0; i < next.size(); ++i) {
      const auto& e = blob.entries[i];
      std::memcpy(path, saved, 32);
      for (unsigned b = 0; b < e.depth; ++b) set_bit(depth + b, (e.pos >> (g - 1 - b)) & 1);
      node(next[i].first, next[i].second);
    }
    std::memcpy(path, saved, 32);
  }
};

}  // namespace

BlobCounts encode_tree_blobs(const MutableTree& tree, unsigned g,
                             const std::function<void(std::span<const uint8_t>, std::span<const uint8_t>)>& emit) {
  Walker w{tree, g, emit, {}, {}, {}};
  w.node(tree.root_ref(), 0);
  return w.counts;
}

}  // namespace st::bintrie
