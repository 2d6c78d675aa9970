// bintrie/blob_checks: batched hash checks of group and stem blobs (see bintrie/blob_checks.h).
#include "engine/persist/bintrie/blob_checks.h"

#include <bit>
#include <cstring>

namespace st::persist {

using bintrie::Hash32;

void BlobHashChecks::add_group(const bintrie::GroupBlobView& v, const uint8_t* expect32, uint64_t tag) {
  Check c{true, uint32_t(groups_.size()), {}, tag};
  std::memcpy(c.expect.data(), expect32, 32);
  groups_.push_back(v);
  checks_.push_back(c);
}

void BlobHashChecks::add_stem(const bintrie::StemBlobView& v, const uint8_t* expect32, uint64_t tag) {
  Check c{false, uint32_t(stems_.size()), {}, tag};
  std::memcpy(c.expect.data(), expect32, 32);
  stems_.push_back(v);
  checks_.push_back(c);
}

void BlobHashChecks::clear() {
  checks_.clear();
  groups_.clear();
  stems_.clear();
}

// Every queued group's root: its entries enter the reduction at level g - r (level 0 =
// relative depth g, the bottom) at position pos >> (g - r); each level pairs the live
// items of every group (siblings 2k, 2k+1; a lone item with a zero sibling) into one
// hash64_batch, except pairs of two zeros, which give zero unhashed.
void BlobHashChecks::hash_groups(std::vector<Hash32>* roots) {
  const size_t n = groups_.size();
  const unsigned g = g_;
  ents_.clear();
  ent_off_.assign(n + 1, 0);
  for (size_t q = 0; q < n; ++q) {
    const bintrie::GroupBlobView& v = groups_[q];
    uint32_t i = 0;  // entries in bitmap order: position q of word w = bit 63 - q
    for (unsigned w = 0; w < 4; ++w) {
      uint64_t bits = v.words[w];
      while (bits) {
        const unsigned q64 = unsigned(std::countl_zero(bits));
        bits &= ~(uint64_t(1) << (63 - q64));
        ents_.push_back({uint16_t(64 * w + q64), uint8_t(v.depth(i)), v.hash(i)});
        ++i;
      }
    }
    ent_off_[q + 1] = uint32_t(ents_.size());
  }
  cur_.clear();
  cur_off_.assign(n + 1, 0);
  next_off_.assign(n + 1, 0);
  for (unsigned level = 0; level < g; ++level) {
    const unsigned enter_r = g - level;  // entries of this relative depth join here
    next_.clear();
    next_msg_.clear();
    msgs_.clear();
    for (size_t q = 0; q < n; ++q) {
      next_off_[q] = uint32_t(next_.size());
      // The live items of group q at this level, ascending: merge the reduced ones with
      // the entering entries (their positions never coincide: entries do not overlap).
      level_.clear();
      size_t a = cur_off_[q];
      const size_t b = cur_off_[q + 1];
      for (uint32_t e = ent_off_[q]; e < ent_off_[q + 1]; ++e) {
        const Ent& en = ents_[e];
        if (en.r != enter_r) continue;
        const uint16_t p = uint16_t(en.pos >> level);
        while (a < b && cur_[a].pos < p) level_.push_back(cur_[a++]);
        Item it;
        it.pos = p;
        std::memcpy(it.hash.data(), en.hash, 32);
        level_.push_back(it);
      }
      while (a < b) level_.push_back(cur_[a++]);
      for (size_t i = 0; i < level_.size();) {
        const uint16_t p = level_[i].pos;
        uint8_t msg[64];
        if ((p & 1) == 0 && i + 1 < level_.size() && level_[i + 1].pos == p + 1) {
          std::memcpy(msg, level_[i].hash.data(), 32);
          std::memcpy(msg + 32, level_[i + 1].hash.data(), 32);
          i += 2;
        } else {
          std::memset(msg, 0, 64);
          std::memcpy(msg + 32 * (p & 1), level_[i].hash.data(), 32);
          i += 1;
        }
        Item nx;
        nx.pos = uint16_t(p >> 1);
        next_.push_back(nx);
        if (bintrie::is_zero64(msg)) {
          next_msg_.push_back(-1);
        } else {
          next_msg_.push_back(int32_t(msgs_.size() / 2));
          msgs_.resize(msgs_.size() + 2);
          std::memcpy(msgs_[msgs_.size() - 2].data(), msg, 64);
        }
      }
    }
    next_off_[n] = uint32_t(next_.size());
    const size_t m = msgs_.size() / 2;
    out_.resize(m);
    if (m) h_.hash64_batch(msgs_[0].data(), out_[0].data(), m);
    hashes_ += m;
    for (size_t i = 0; i < next_.size(); ++i) next_[i].hash = next_msg_[i] < 0 ? Hash32{} : out_[size_t(next_msg_[i])];
    std::swap(cur_, next_);
    std::swap(cur_off_, next_off_);
  }
  roots->assign(n, Hash32{});
  for (size_t q = 0; q < n; ++q)
    if (cur_off_[q + 1] > cur_off_[q]) (*roots)[q] = cur_[cur_off_[q]].hash;  // one item at level g: the root
}

// Every queued stem's node hash: the leaves of all stems in one hash32_batch, their
// sparse subtrees together (stem_subtree_roots), the stem nodes in one hash64_batch.
void BlobHashChecks::hash_stems(std::vector<Hash32>* out) {
  const size_t n = stems_.size();
  bintrie::StemLevels& L = levels_;
  size_t total = 0;
  for (const auto& v : stems_) total += v.count;
  L.hash.resize(total);
  L.pos.resize(total);
  L.off.resize(n + 1);
  size_t at = 0;
  for (size_t s = 0; s < n; ++s) {
    const bintrie::StemBlobView& v = stems_[s];
    L.off[s] = uint32_t(at);
    std::memcpy(L.hash[at].data(), v.values, 32 * size_t(v.count));
    size_t j = at;
    for (unsigned byte = 0; byte < 32; ++byte)
      for (unsigned bit = 0; bit < 8; ++bit)
        if ((v.bitmap[byte] >> (7 - bit)) & 1) L.pos[j++] = uint8_t(8 * byte + bit);
    at += v.count;
  }
  L.off[n] = uint32_t(at);
  if (total) h_.hash32_batch(L.hash[0].data(), L.hash[0].data(), total);
  hashes_ += total;
  hashes_ += bintrie::stem_subtree_roots(h_, L);  // every stem has >= 1 value (check_stem_blob)
  msgs_.resize(2 * n);
  for (size_t s = 0; s < n; ++s) {
    uint8_t* msg = msgs_[2 * s].data();
    std::memcpy(msg, stems_[s].stem, 31);
    msg[31] = 0;
    std::memcpy(msg + 32, L.hash[s].data(), 32);
  }
  out->resize(n);
  if (n) h_.hash64_batch(msgs_[0].data(), (*out)[0].data(), n);
  hashes_ += n;
}

long BlobHashChecks::run() {
  std::vector<Hash32> group_roots, stem_hashes;
  if (!groups_.empty()) hash_groups(&group_roots);
  if (!stems_.empty()) hash_stems(&stem_hashes);
  long bad = -1;
  last_tags_.resize(checks_.size());
  last_is_group_.resize(checks_.size());
  for (size_t i = 0; i < checks_.size(); ++i) {
    const Check& c = checks_[i];
    last_tags_[i] = c.tag;
    last_is_group_[i] = c.group;
    const Hash32& got = c.group ? group_roots[c.index] : stem_hashes[c.index];
    if (bad < 0 && got != c.expect) bad = long(i);
  }
  clear();
  return bad;
}

}  // namespace st::persist
