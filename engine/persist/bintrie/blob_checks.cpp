// bintrie/blob_checks: batched hash checks of group and stem blobs (see bintrie/blob_checks.h).
#include "engine/persist/bintrie/blob_checks.h"

#include <bit>
#include <cstring>
#include <span>

#include "engine/memory/scratch_pool.h"

namespace st::persist {

using bintrie::Hash32;

// run()'s arrays, leased from one pool (see the header), and the group reduction's steps.
struct BlobCheckScratch {
  struct Item {
    uint16_t pos;
    Hash32 hash;
  };
  struct Ent {
    uint16_t pos;  // bitmap position (relative depth g)
    uint8_t r;     // relative depth 1..g
    const uint8_t* hash;
  };
  std::vector<Ent> ents;
  std::vector<uint32_t> ent_off;
  std::vector<Item> cur, next, level;
  std::vector<uint32_t> cur_off, next_off;
  std::vector<int32_t> next_msg;  // per next item: its message, or -1 (zero rule)
  std::vector<Hash32> msgs, out;
  bintrie::StemLevels levels;

  // Every group's entries, in bitmap order (position q of word w = bit 63 - q), and room
  // for the reduction: a level's items and messages never outnumber the entries.
  void gather(std::span<const bintrie::GroupBlobView> groups) {
    const size_t n = groups.size();
    ents.clear();
    ent_off.assign(n + 1, 0);
    for (size_t q = 0; q < n; ++q) {
      const bintrie::GroupBlobView& v = groups[q];
      uint32_t i = 0;
      for (unsigned w = 0; w < 4; ++w)
        for (uint64_t bits = v.words[w]; bits;) {
          const unsigned q64 = unsigned(std::countl_zero(bits));
          bits &= ~(uint64_t(1) << (63 - q64));
          ents.push_back({uint16_t(64 * w + q64), uint8_t(v.depth(i)), v.hash(i)});
          ++i;
        }
      ent_off[q + 1] = uint32_t(ents.size());
    }
    next.reserve(ents.size());
    cur.reserve(ents.size());
    next_msg.reserve(ents.size());
    msgs.reserve(2 * ents.size());
    cur.clear();
    cur_off.assign(n + 1, 0);
    next_off.assign(n + 1, 0);
  }

  // Group q's live items at `level`, ascending: the reduced ones merged with the entries of
  // relative depth enter_r (their positions never coincide: entries do not overlap).
  void merge_level(size_t q, unsigned level, unsigned enter_r) {
    this->level.clear();
    size_t a = cur_off[q];
    const size_t b = cur_off[q + 1];
    for (uint32_t e = ent_off[q]; e < ent_off[q + 1]; ++e) {
      const Ent& en = ents[e];
      if (en.r != enter_r) continue;
      const uint16_t p = uint16_t(en.pos >> level);
      while (a < b && cur[a].pos < p) this->level.push_back(cur[a++]);
      Item it;
      it.pos = p;
      std::memcpy(it.hash.data(), en.hash, 32);
      this->level.push_back(it);
    }
    while (a < b) this->level.push_back(cur[a++]);
  }

  // The merged items paired into their parents (next) and the parents' messages (msgs;
  // two zero children: a zero parent, no message).
  void pair_level() {
    for (size_t i = 0; i < level.size();) {
      const uint16_t p = level[i].pos;
      uint8_t msg[64];
      if ((p & 1) == 0 && i + 1 < level.size() && level[i + 1].pos == p + 1) {
        std::memcpy(msg, level[i].hash.data(), 32);
        std::memcpy(msg + 32, level[i + 1].hash.data(), 32);
        i += 2;
      } else {
        std::memset(msg, 0, 64);
        std::memcpy(msg + 32 * (p & 1), level[i].hash.data(), 32);
        i += 1;
      }
      Item nx;
      nx.pos = uint16_t(p >> 1);
      next.push_back(nx);
      if (bintrie::is_zero64(msg)) {
        next_msg.push_back(-1);
      } else {
        next_msg.push_back(int32_t(msgs.size() / 2));
        msgs.resize(msgs.size() + 2);
        std::memcpy(msgs[msgs.size() - 2].data(), msg, 64);
      }
    }
  }
};


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
void BlobHashChecks::hash_groups(BlobCheckScratch& x, std::vector<Hash32>* roots) {
  const size_t n = groups_.size();
  x.gather(groups_);
  for (unsigned level = 0; level < g_; ++level) {
    x.next.clear();
    x.next_msg.clear();
    x.msgs.clear();
    for (size_t q = 0; q < n; ++q) {
      x.next_off[q] = uint32_t(x.next.size());
      x.merge_level(q, level, g_ - level);  // entries of relative depth g - level join here
      x.pair_level();
    }
    x.next_off[n] = uint32_t(x.next.size());
    const size_t m = x.msgs.size() / 2;
    x.out.resize(m);
    if (m) h_.hash64_batch(x.msgs[0].data(), x.out[0].data(), m);
    hashes_ += m;
    for (size_t i = 0; i < x.next.size(); ++i) x.next[i].hash = x.next_msg[i] < 0 ? Hash32{} : x.out[size_t(x.next_msg[i])];
    std::swap(x.cur, x.next);
    std::swap(x.cur_off, x.next_off);
  }
  roots->assign(n, Hash32{});
  for (size_t q = 0; q < n; ++q)
    if (x.cur_off[q + 1] > x.cur_off[q]) (*roots)[q] = x.cur[x.cur_off[q]].hash;  // one item at level g: the root
}

// Every queued stem's node hash: the leaves of all stems in one hash32_batch, their
// sparse subtrees together (stem_subtree_roots), the stem nodes in one hash64_batch.
void BlobHashChecks::hash_stems(BlobCheckScratch& x, std::vector<Hash32>* out) {
  const size_t n = stems_.size();
  bintrie::StemLevels& L = x.levels;
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
  x.msgs.resize(2 * n);
  for (size_t s = 0; s < n; ++s) {
    uint8_t* msg = x.msgs[2 * s].data();
    std::memcpy(msg, stems_[s].stem, 31);
    msg[31] = 0;
    std::memcpy(msg + 32, L.hash[s].data(), 32);
  }
  out->resize(n);
  if (n) h_.hash64_batch(x.msgs[0].data(), (*out)[0].data(), n);
  hashes_ += n;
}

long BlobHashChecks::run() {
  std::vector<Hash32> group_roots, stem_hashes;
  {
    const auto x = memory::ScratchPool<BlobCheckScratch>::take();
    if (!groups_.empty()) hash_groups(*x, &group_roots);
    if (!stems_.empty()) hash_stems(*x, &stem_hashes);
  }
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
