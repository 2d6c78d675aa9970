// group_blob: encoders, strict decoders, reconstruction and the tree walk (see group_blob.h).
#include "engine/bintrie/group_blob.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "engine/bintrie/stem_bits.h"
#include "kernels/support/check.h"

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

namespace {

// Positions [lo, hi) of a big-endian bitmap word set: mask over bits 63 - q.
uint64_t span_mask(unsigned lo, unsigned hi) {  // 0 <= lo < hi <= 64
  const uint64_t from_lo = ~uint64_t(0) >> lo;
  return hi >= 64 ? from_lo : from_lo & ~(~uint64_t(0) >> hi);
}

bool any_in_range(const uint64_t* words, uint32_t lo, uint32_t hi) {
  while (lo < hi) {
    const uint32_t w = lo / 64, a = lo % 64;
    const uint32_t b = std::min<uint32_t>(64, a + (hi - lo));
    if (words[w] & span_mask(a, b)) return true;
    lo += b - a;
  }
  return false;
}

// Index of the lowest set position of a non-zero big-endian word.
unsigned first_pos(uint64_t w) { return unsigned(std::countl_zero(w)); }

}  // namespace

bool GroupBlobView::find(uint32_t pos, uint32_t* index, unsigned* depth_out) const {
  int w = int(pos / 64);
  const unsigned q = pos % 64;
  uint32_t p;
  uint64_t m = words[w] >> (63 - q);  // positions <= q of this word, q at bit 0
  if (m) {
    p = pos - unsigned(std::countr_zero(m));
  } else {
    for (;;) {
      if (--w < 0) return false;
      if (words[w]) break;
    }
    p = uint32_t(w) * 64 + 63 - unsigned(std::countr_zero(words[w]));
  }
  const uint32_t pw = p / 64, pq = p % 64;
  uint32_t idx = 0;
  for (uint32_t i = 0; i < pw; ++i) idx += bit_count64(words[i]);
  if (pq) idx += bit_count64(words[pw] >> (64 - pq));
  const unsigned r = depth(idx);
  if (pos >= p + (1u << (g - r))) return false;
  *index = idx;
  *depth_out = r;
  return true;
}

std::string check_group_blob(std::span<const uint8_t> in, unsigned expected_g, GroupBlobView* v) {
  if (in.size() < 2) return "group blob truncated: " + std::to_string(in.size()) + " bytes";
  if (in[0] != kGroupBlobVersion) return "group blob: bad version byte " + std::to_string(in[0]);
  const unsigned g = in[1];
  if (g < 1 || g > 8) return "group blob: group depth " + std::to_string(g) + " out of range 1..8";
  if (g != expected_g) return "group blob: group depth " + std::to_string(g) + ", expected " + std::to_string(expected_g);
  const size_t width = size_t(1) << g;
  const size_t bm = group_blob_bitmap_bytes(g);
  if (in.size() < 2 + bm) return "group blob truncated in the bitmap";
  const uint8_t* bitmap = in.data() + 2;
  if (bm * 8 > width) {  // g < 3: one byte, positions >= 2^g must be clear
    const unsigned extra = bitmap[0] & ((1u << (8 - width)) - 1);
    if (extra) return "group blob: bitmap bit " + std::to_string(7 - (31 - std::countl_zero(uint32_t(extra)))) + " beyond 2^g";
  }
  uint8_t padded[32] = {};
  std::memcpy(padded, bitmap, bm);
  uint32_t k = 0;
  for (int w = 0; w < 4; ++w) {
    v->words[w] = load_be64(padded + 8 * w);
    k += bit_count64(v->words[w]);
  }
  if (k == 0) return "group blob: no entries";
  if (in.size() != group_blob_size(g, k))
    return "group blob: " + std::to_string(in.size()) + " bytes, expected " + std::to_string(group_blob_size(g, k)) +
           " for " + std::to_string(k) + " entries";
  v->g = uint8_t(g);
  v->k = k;
  v->depths = bitmap + bm;
  const size_t depth_bytes = (3 * size_t(k) + 7) / 8;
  v->hashes = v->depths + depth_bytes;
  const unsigned pad = unsigned(depth_bytes * 8 - 3 * size_t(k));
  if (pad && (v->depths[depth_bytes - 1] & ((1u << pad) - 1))) return "group blob: non-zero padding bits";
  // Entries in position order: depth in range, aligned, not overlapping the previous one;
  // and the canonical shape: an entry ending early (r < g) is a stem, and a stem always
  // has a non-empty sibling subtree (reported after the other checks, as the decoder
  // always did).
  uint32_t i = 0, prev_end = 0;
  bool lone_stem = false;
  for (uint32_t w = 0; w < 4; ++w) {
    for (uint64_t bits = v->words[w]; bits; bits &= ~(uint64_t(1) << 63 >> first_pos(bits))) {
      const uint32_t pos = 64 * w + first_pos(bits);
      const unsigned r = v->depth(i);
      if (r > g) return "group blob: depth offset " + std::to_string(r) + " > g";
      const unsigned span_bits = g - r;
      if (pos & ((1u << span_bits) - 1)) return std::string("group blob: misaligned entry");
      if (i > 0 && prev_end > pos) return std::string("group blob: overlapping entries");
      prev_end = pos + (1u << span_bits);
      if (r < g && !lone_stem) {
        const uint32_t span = 1u << span_bits;
        const uint32_t sib_lo = pos ^ span;
        lone_stem = !any_in_range(v->words, sib_lo, sib_lo + span);
      }
      ++i;
    }
  }
  if (lone_stem) return std::string("group blob: early entry without a sibling (non-canonical)");
  return {};
}

std::variant<GroupBlob, std::string> decode_group_blob(std::span<const uint8_t> in, unsigned expected_g) {
  GroupBlobView v;
  if (std::string err = check_group_blob(in, expected_g, &v); !err.empty()) return err;
  return group_blob_from_view(v);
}

GroupBlob group_blob_from_view(const GroupBlobView& v) {
  GroupBlob b;
  b.g = v.g;
  b.entries.resize(v.k);
  uint32_t i = 0;
  for (uint32_t w = 0; w < 4; ++w) {
    for (uint64_t bits = v.words[w]; bits; bits &= ~(uint64_t(1) << 63 >> first_pos(bits))) {
      GroupEntry& e = b.entries[i];
      e.pos = uint16_t(64 * w + first_pos(bits));
      e.depth = uint8_t(v.depth(i));
      std::memcpy(e.hash.data(), v.hash(i), 32);
      ++i;
    }
  }
  return b;
}

const uint8_t* StemBlobView::value(uint8_t sub) const {
  if (!((bitmap[sub / 8] >> (7 - sub % 8)) & 1)) return nullptr;
  uint32_t idx = 0;
  const unsigned w = sub / 64, q = sub % 64;
  for (unsigned i = 0; i < w; ++i) idx += bit_count64(load_be64(bitmap + 8 * i));
  if (q) idx += bit_count64(load_be64(bitmap + 8 * w) >> (64 - q));
  return values + 32 * size_t(idx);
}

std::string check_stem_blob(std::span<const uint8_t> in, StemBlobView* v) {
  if (in.size() < 64) return "stem blob truncated: " + std::to_string(in.size()) + " bytes";
  if (in[0] != kStemBlobVersion) return "stem blob: bad version byte " + std::to_string(in[0]);
  uint32_t k = 0;
  for (int w = 0; w < 4; ++w) k += bit_count64(load_be64(in.data() + 32 + 8 * w));
  if (k == 0) return std::string("stem blob: no values");
  if (in.size() != 64 + 32 * size_t(k))
    return "stem blob: " + std::to_string(in.size()) + " bytes, expected " + std::to_string(64 + 32 * size_t(k));
  v->stem = in.data() + 1;
  v->bitmap = in.data() + 32;
  v->values = in.data() + 64;
  v->count = k;
  return {};
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
  StemBlobView v;
  if (std::string err = check_stem_blob(in, &v); !err.empty()) return err;
  StemBlob b;
  std::memcpy(b.stem.data(), v.stem, 31);
  std::memcpy(b.bitmap.data(), v.bitmap, 32);
  b.values.resize(v.count);
  for (size_t i = 0; i < v.count; ++i) std::memcpy(b.values[i].data(), v.values + 32 * i, 32);
  return b;
}

size_t group_heap(const Hasher& h, const GroupBlob& b, std::vector<Hash32>* node, std::vector<int32_t>* entry_at) {
  const unsigned g = b.g;
  const size_t total = (size_t(2) << g) - 1;  // heap over relative depths 0..g
  node->assign(total, Hash32{});
  entry_at->assign(total, -1);
  for (size_t k = 0; k < b.entries.size(); ++k) {
    const GroupEntry& e = b.entries[k];
    const size_t idx = ((size_t(1) << e.depth) - 1) + (e.pos >> (g - e.depth));
    (*node)[idx] = e.hash;
    (*entry_at)[idx] = int32_t(k);
  }
  // Level by level from the bottom, each level's messages in one batch call: a node that is
  // not an entry and whose children are not both zero (the zero rule: else it stays zero).
  // A level above the bottom holds at most 2^(g-1) <= 128 nodes.
  ST_CHECK(g >= 1 && g <= 8, "binary trie: a group depth outside 1..8");
  size_t computed = 0;
  Hash32 msg[2 * 128], out[128];
  uint32_t at[128];
  for (unsigned d = g; d-- > 0;) {
    const size_t first = (size_t(1) << d) - 1, last = (size_t(2) << d) - 1;
    size_t n = 0;
    for (size_t i = first; i < last; ++i) {
      if ((*entry_at)[i] >= 0) continue;
      const Hash32 &l = (*node)[2 * i + 1], &r = (*node)[2 * i + 2];
      if (is_zero32(l.data()) && is_zero32(r.data())) continue;
      msg[2 * n] = l, msg[2 * n + 1] = r, at[n++] = uint32_t(i);
    }
    if (n == 0) continue;
    h.hash64_batch(msg[0].data(), out[0].data(), n);
    for (size_t k = 0; k < n; ++k) (*node)[at[k]] = out[k];
    computed += n;
  }
  return computed;
}

std::vector<Hash32> reconstruct_group(const Hasher& h, const GroupBlob& b, size_t* hashes_computed) {
  std::vector<Hash32> node;
  std::vector<int32_t> entry_at;
  const size_t computed = group_heap(h, b, &node, &entry_at);
  if (hashes_computed) *hashes_computed = computed;
  node.resize((size_t(1) << b.g) - 1);
  return node;
}

Hash32 stem_blob_hash(const Hasher& h, const StemBlob& b) {
  Hash32 leaves[256];
  size_t j = 0;
  for (int i = 0; i < 256; ++i) {
    leaves[i] = Hash32{};
    if ((b.bitmap[i / 8] >> (7 - i % 8)) & 1) h.hash(b.values[j++].data(), 32, leaves[i].data());
  }
  DenseStemTree t;
  dense_stem_tree(h, leaves, &t);
  Hash32 out;
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
    ST_CHECK(!ref_is_stub(ref) || r == g, "binary trie: a blob walk reached an unread subtree");
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
    ST_CHECK(!ref_is_stub(ref), "binary trie: a blob walk reached an unread subtree");
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
