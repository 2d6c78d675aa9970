// bintrie/commit: BintrieCommitter (see bintrie/commit.h for the phases). The dirty paths
// are held as `Node`s (records read from disk, decoded); the new tree is first planned as
// `Plan`s (placed = an unchanged subtree on disk, by locator; stem / group = a new record;
// a new group's unchanged entries are kept by locator in its child list, with no Plan each)
// and then hashed in memory level by level (hash_plan: all new stems, then the new groups by
// height, one batch kernel call per level, bintrie/level_hash.h; a group's entries filled
// from its new children's digests), then written post-order. Loaded nodes whose plan is not `placed` are superseded.
// Both stores run the same prepare / resolve / plan; only the node source and sink differ
// (CommitFrame::keyed()): arena records by locator (PageReader; SubtreePacker), or RocksDB
// blobs by path key blob_key(path, depth) (one MultiGet per level; the commit's WriteBatch).
// In RocksDB a node's key is its position, so a kept stem that a split moves deeper is
// rewritten under its new key and its old key deleted (the arena keeps it by locator).
// The resolve reads its nodes level by level through the verified fetch
// (bintrie/verified_fetch.h: the record or blob decoded strictly and checked against its
// record), then checks the level's hashes against their parents' entries in one batch
// (blob_checks.h) before any node of it is linked into the dirty paths or planned from.
#include "engine/persist/bintrie/commit.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <optional>

#include "engine/bintrie/account_leaves.h"
#include "engine/bintrie/keys.h"
#include "engine/persist/bintrie/blob_checks.h"
#include "engine/persist/bintrie/disk.h"
#include "engine/persist/bintrie/level_hash.h"
#include "engine/persist/bintrie/verified_fetch.h"
#include "engine/persist/bintrie/pure_hash.h"
#include "kernels/keccak256.h"

namespace st::persist {
namespace {

using bintrie::Hash32;
namespace bd = bintrie_disk;
using Key32 = std::array<uint8_t, 32>;  // a stem + one zero byte (key_bits reads up to bit 255)

// Writes to one stem. sub -> value; the header patch (subs 0 and 1) needs the old leaves.
struct StemWrites {
  Key32 stem{};
  std::map<uint8_t, Hash32> values;
  std::optional<bintrie::HeaderPatch> patch;  // an account of this header stem changed (account_leaves.h)
};

struct Node {
  Locator loc = kNoLocator;         // RocksDB: kKeyed (named by path / depth)
  Key32 path{};                     // a key under the node (its first `depth` bits are its path)
  unsigned depth = 0;
  bool group = false;
  bintrie::GroupBlob blob;          // group
  std::vector<Locator> children;    // group: one per entry
  bintrie::StemBlob stem;           // stem
  Hash32 hash{};
  std::vector<Locator> records;     // this record + stem pieces
  uint64_t body_bytes = 0;          // blob bytes of its records
  std::vector<int> child_node;      // group: loaded child per entry, -1 if not loaded
  bool reused = false;
};

constexpr Locator kKeyed = 0;  // a RocksDB node's locator: it is named by its path key

struct Plan {
  enum Kind { placed, stem, group } kind = placed;
  Locator loc = kNoLocator;                 // placed
  int node = -1;                            // placed: the loaded node it keeps (-1: never read)
  Hash32 hash{};                            // placed; new: set by hash_plan for the root only
  uint32_t listed = 0;                      // stem / group: its index in its list (BintrieHashScratch)
  uint32_t src_seg = 0;                     // new group: its entries' first slot in the entry sources
  uint32_t height = 0;                      // new group: 1 + its highest new child's (stems: 0)
  bintrie::StemBlob stem_blob;              // stem
  bintrie::GroupBlob group_blob;            // group
  // A group's child: its plan, or (plan null) an unchanged entry's subtree kept by its locator
  // with no Plan of its own (most entries of a touched group: no allocation per entry).
  struct Kid {
    std::unique_ptr<Plan> plan;
    Locator loc = kNoLocator;  // plan null: the kept subtree
  };
  std::vector<Kid> kids;           // group: one per entry
  std::vector<uint32_t> new_kids;  // group: the entries whose kid is not placed, ascending
};

}  // namespace

// A new stem or group as listed by the plan, with what the hash phase reads and writes of it
// (dense, in listing order, so that the cold Plan objects are not touched for them).
struct Listed {
  Plan* plan = nullptr;
  DigestRef ref;                 // its digest in the level hash (hash_plan)
  uint32_t src_at = UINT32_MAX;  // under a new group: its slot in the entry sources
  Hash32* up = nullptr;          // under a new group: the parent entry's hash; null: the root
};

// The hash phase's arrays, kept across commits: the levels' messages (hash_plan); the new
// stems, the new groups per height and every new group's entry sources (filled by the plan,
// note_group).
struct BintrieHashScratch {
  BintrieLevelHash levels;
  std::vector<Listed> stems;                  // new stems as planned
  std::vector<std::vector<Listed>> by_height;  // new groups by height above the stems (0: height 1)
  std::vector<DigestRef> entry_src;  // per new group, one per entry (a new child's digest, else zero)
};

namespace {

void code_hash_keccak256(const uint8_t* code, size_t len, uint8_t* out32) { kernels::keccak256(code, len, out32); }

io::Status err(Locator l, const std::string& m) {
  return {io::Errc::corrupt_page, "binary trie commit: " + bd::locator_name(l) + ": " + m};
}

std::string blob_key_string(const uint8_t* path, unsigned depth) {
  const std::vector<uint8_t> k = bintrie::blob_key(path, depth);
  return std::string(reinterpret_cast<const char*>(k.data()), k.size());
}
std::string key_name(std::string_view key) {
  return "node at path key " + bd::hex({reinterpret_cast<const uint8_t*>(key.data()), key.size()});
}
// Bits [d, d + n) of `path` := v (n bits, MSB first).
void set_bits(Key32& path, unsigned d, uint32_t v, unsigned n) {
  for (unsigned i = 0; i < n; ++i) {
    const unsigned b = d + i;
    const uint8_t m = uint8_t(0x80 >> (b % 8));
    if ((v >> (n - 1 - i)) & 1) path[b / 8] |= m;
    else path[b / 8] &= uint8_t(~m);
  }
}

class Committer {
 public:
  Committer(DbFiles& f, CommitFrame& frame, const bintrie::Hasher& h, unsigned g)
      : files_(f), frame_(frame), h_(h), g_(g) {}

  io::Status prepare(const state::StateDiff& diff) {
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

  // Level by level from the root: loads, checks and links every record on a dirty path.
  io::Status resolve() {
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

  // The plan of the new tree; then the writes.
  io::Status plan(BintrieHashScratch& x, std::unique_ptr<Plan>* out) {
    scratch_ = &x;
    x.stems.clear();
    for (std::vector<Listed>& v : x.by_height) v.clear();
    x.entry_src.clear();
    std::vector<Item> items;
    if (root_ < 0) {
      for (uint32_t w = 0; w < writes_.size(); ++w) add_new_stem(w, &items);
      if (items.empty()) { *out = nullptr; return {}; }
      return place(items, 0, out);
    }
    Node& n = nodes_[root_];
    std::vector<uint32_t> all(writes_.size());
    for (uint32_t w = 0; w < writes_.size(); ++w) all[w] = w;
    if (!n.group) {
      // A lone stem as the root: it and the new stems are placed from depth 0.
      collect_stem(root_, all, &items);
      return place(items, 0, out);
    }
    return plan_group(root_, 0, all, out);
  }

  // A new stem at `depth`: its leaves into the flat snapshot (if any); its blob as one record,
  // or as pieces and a chunked record when it exceeds a page's payload (RocksDB: one blob).
  io::Status emit_stem(const Plan& p, unsigned depth) {
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
  io::Status emit(const Plan& p, const Key32& path, unsigned depth) {
    const bool keyed = frame_.keyed();
    if (p.kind == Plan::placed) {
      if (!keyed) return frame_.place_kept(p.loc);
      if (p.node < 0 || nodes_[p.node].depth == depth) return {};  // its key holds it
      // A kept stem that moved deeper (a new stem split its position): same blob, new key.
      const Node& n = nodes_[p.node];
      if (n.group) return {io::Errc::corrupt_page, "binary trie commit: internal: a kept group moved"};
      frame_.supersede_key(blob_key_string(n.path.data(), n.depth), n.body_bytes);
      buf_.clear();
      bintrie::encode_stem_blob(n.stem, &buf_);
      bytes_written += buf_.size();
      ++records_written;
      frame_.rocks().put(blob_key_string(n.stem.stem.data(), depth), std::string(buf_.begin(), buf_.end()));
      return {};
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

  // A group's entries on their way into the cache (the next group's, while one is laid out).
  static void prefetch_entries(const bintrie::GroupBlob& b) {
    const char* at = reinterpret_cast<const char*>(b.entries.data());
    const size_t bytes = b.entries.size() * sizeof(bintrie::GroupEntry);
    for (size_t off = 0; off < bytes; off += 64) __builtin_prefetch(at + off);
  }

  // The new stems and groups of the plan hashed level by level (BintrieLevelHash): every new
  // stem, then the new groups by height (1: only placed or stem children), a new child's
  // digest filling its parent's entry. Then every group entry of a new child is set from the
  // digests, and the root's hash (the other new Plans keep a zero hash: pure_hash and the
  // writes read the listed digests and the entries).
  void hash_plan(BintrieHashScratch& x) {
    BintrieLevelHash& lh = x.levels;
    lh.reset(g_);
    for (size_t k = 0; k < x.stems.size(); ++k) {
      if (k + 2 < x.stems.size()) __builtin_prefetch(&x.stems[k + 2].plan->stem_blob);
      if (k + 1 < x.stems.size()) __builtin_prefetch(x.stems[k + 1].plan->stem_blob.values.data());
      Listed& l = x.stems[k];
      l.ref = lh.add_stem(l.plan->stem_blob);
      if (l.src_at != UINT32_MAX) x.entry_src[l.src_at] = l.ref;
    }
    for (std::vector<Listed>& level : x.by_height) {
      if (level.empty()) break;
      lh.next_height();
      for (size_t k = 0; k < level.size(); ++k) {
        if (k + 2 < level.size()) __builtin_prefetch(&level[k + 2].plan->group_blob);
        if (k + 1 < level.size()) prefetch_entries(level[k + 1].plan->group_blob);
        Listed& l = level[k];
        const bintrie::GroupBlob& b = l.plan->group_blob;
        l.ref = lh.add_group(b, std::span(x.entry_src).subspan(l.plan->src_seg, b.entries.size()));
        if (l.src_at != UINT32_MAX) x.entry_src[l.src_at] = l.ref;
      }
    }
    lh.run(h_);
    auto take = [&](const Listed& l) {
      Hash32* to = l.up ? l.up : &l.plan->hash;  // the parent's entry, or the root's hash
      if (const uint8_t* d = lh.digest(l.ref)) std::memcpy(to->data(), d, 32);
      else *to = Hash32{};
    };
    for (const Listed& l : x.stems) take(l);
    for (const std::vector<Listed>& level : x.by_height)  // children before parents
      for (const Listed& l : level) take(l);
  }

  // A listed node's hash after hash_plan.
  Hash32 listed_hash(const Listed& l) const {
    Hash32 out{};
    if (const uint8_t* d = scratch_->levels.digest(l.ref)) std::memcpy(out.data(), d, 32);
    return out;
  }

  // A new group planned: its entry sources get their slots (zero), each new child's listing
  // the slot its digest fills and the entry its hash goes to (while the children are still in
  // cache, so hash_plan finds neither through the parent's kids); listed by height.
  void note_group(Plan* p) {
    BintrieHashScratch& x = *scratch_;
    p->src_seg = uint32_t(x.entry_src.size());
    x.entry_src.resize(x.entry_src.size() + p->group_blob.entries.size(), DigestRef{});
    uint32_t below = 0;
    for (uint32_t i : p->new_kids) {
      const Plan& kid = *p->kids[i].plan;
      Listed& l = kid.kind == Plan::stem ? x.stems[kid.listed] : x.by_height[kid.height - 1][kid.listed];
      l.src_at = p->src_seg + i;
      l.up = &p->group_blob.entries[i].hash;
      below = std::max(below, kid.height);
    }
    p->height = below + 1;
    if (x.by_height.size() <= below) x.by_height.resize(below + 1);
    p->listed = uint32_t(x.by_height[below].size());
    x.by_height[below].emplace_back().plan = p;
  }
  // The group noted last is kept by locator after all: unlisted.
  void unnote_group(const Plan& p) {
    BintrieHashScratch& x = *scratch_;
    x.by_height[p.height - 1].pop_back();
    x.entry_src.resize(p.src_seg);
  }

  io::Status pure_hash(PureHashCount* c) const {
    std::vector<const bintrie::StemBlob*> stems;
    std::vector<Hash32> stem_hashes;
    std::vector<const bintrie::GroupBlob*> groups;
    std::vector<Hash32> group_hashes;
    for (const Listed& l : scratch_->stems) stems.push_back(&l.plan->stem_blob), stem_hashes.push_back(listed_hash(l));
    for (const std::vector<Listed>& level : scratch_->by_height)  // children before parents
      for (const Listed& l : level) groups.push_back(&l.plan->group_blob), group_hashes.push_back(listed_hash(l));
    return bintrie_pure_hash(h_, stems, stem_hashes, groups, group_hashes, c);
  }

  std::vector<Node> nodes_;
  std::vector<StemWrites> writes_;
  BintrieHashScratch* scratch_ = nullptr;  // plan(): the new stems, groups by height, their entry sources
  uint64_t accounts = 0, records_read = 0, records_written = 0, bytes_written = 0;
  int64_t new_leaves = 0;
  uint32_t packer_payload_ = 0;

 private:
  // A node on a dirty path to read: where it is, the hash its parent's entry holds for it
  // (the root: the manifest's), its depth, the dirty stems below it, its parent's node and
  // entry.
  struct ResolveItem {
    Locator loc;
    Hash32 hash;
    unsigned depth;
    std::vector<uint32_t> dirty;  // indices into writes_
    int parent;
    uint32_t entry;
  };
  // The key under an item (RocksDB: its first `depth` bits name the node).
  Key32 path_of(const ResolveItem& it) const { return it.dirty.empty() ? Key32{} : writes_[it.dirty[0]].stem; }

  // One level's reads: RocksDB, one read of its path keys; arena, one load of its records'
  // pages, then one of the stem pieces they name.
  io::Status read_level(const std::vector<ResolveItem>& level, std::vector<std::string>* keys,
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
  io::Status take_level(const std::vector<ResolveItem>& level, const std::vector<std::string>& keys,
                        const std::vector<std::string>& values) {
    const bool keyed = frame_.keyed();
    const size_t first = nodes_.size();
    nodes_.reserve(first + level.size());  // the stem views queued below stay valid
    checks_.clear();
    for (size_t li = 0; li < level.size(); ++li) {
      const ResolveItem& it = level[li];
      Node& n = nodes_.emplace_back();
      io::Status ds = keyed ? decode_value(values[li], keys[li], &n) : decode(it.loc, &n);
      if (!ds.ok()) return ds;
      n.path = path_of(it);
      n.depth = it.depth;
      records_read += n.records.size();
      if (io::Status s = queue_check(n, it, keyed ? &values[li] : nullptr); !s.ok()) return s;
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

  // Queues node n's hash check (it must hash to it.hash): a group from its stored bytes (the
  // RocksDB value, or the record's body in the page cache), a stem from its decoded blob.
  io::Status queue_check(const Node& n, const ResolveItem& it, const std::string* value) {
    if (!n.group) {
      bintrie::StemBlobView v;
      v.stem = n.stem.stem.data();
      v.bitmap = n.stem.bitmap.data();
      v.values = n.stem.values.empty() ? nullptr : n.stem.values[0].data();
      v.count = uint32_t(n.stem.values.size());
      checks_.add_stem(v, it.hash.data(), 0);
      return {};
    }
    std::span<const uint8_t> bytes;
    RecordView rv;
    if (value) {
      bytes = {reinterpret_cast<const uint8_t*>(value->data()), value->size()};
    } else {
      if (io::Status s = frame_.reader().record(it.loc, &rv); !s.ok()) return s;
      bytes = rv.body;
    }
    bintrie::GroupBlobView v;
    if (std::string e = bintrie::check_group_blob(bytes, g_, &v); !e.empty()) return err(it.loc, e);
    checks_.add_group(v, it.hash.data(), 0);
    return {};
  }

  // A node of the level (checked) linked under its parent; a group's entries on the item's
  // dirty paths become the next level's items.
  io::Status descend(const ResolveItem& it, int id, std::vector<ResolveItem>* next) {
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

  // One thing a group's entries are derived from.
  struct Item {
    enum Kind { keep, sub, stem } kind = keep;
    uint16_t pos = 0;      // keep: entry position; sub: position (depth g)
    uint8_t depth = 0;     // keep: entry depth
    Hash32 hash{};        // keep
    Locator loc = kNoLocator;
    int node = -1;         // sub: the loaded child group; stem: the loaded stem (or -1: new)
    std::vector<uint32_t> dirty;  // sub
    bintrie::StemBlob blob;       // stem: after the writes
    bool changed = false;         // stem
  };

  // A node read through the verified fetch into n: its blob, children, records and bytes
  // (its hash is set once take_level checked it against its parent's entry).
  void take_fetched(bintrie_read::Node&& f, Locator loc, Node* n) {
    n->loc = loc;
    n->records.push_back(loc);
    n->records.insert(n->records.end(), f.pieces.begin(), f.pieces.end());
    n->body_bytes = f.body_bytes;
    n->group = f.is_group;
    if (f.is_group) {
      n->blob = std::move(f.group);
      n->children = std::move(f.children);
    } else {
      n->stem = std::move(f.stem);
    }
  }

  // RocksDB: the blob at `key` (group or stem by its version byte).
  io::Status decode_value(const std::string& value, const std::string& key, Node* n) {
    const std::span<const uint8_t> blob{reinterpret_cast<const uint8_t*>(value.data()), value.size()};
    bintrie_read::Node f;
    if (io::Status s = bintrie_read::decode_keyed(blob, g_, bintrie_read::key_name(bintrie_read::kCommit, key), &f); !s.ok())
      return s;
    if (f.is_group) f.children.assign(f.group.entries.size(), kKeyed);
    take_fetched(std::move(f), kKeyed, n);
    return {};
  }

  // Arena: the record at loc (its page and a chunked stem's pieces loaded by resolve()).
  io::Status decode(Locator loc, Node* n) {
    bintrie_read::Node f;
    bool complete = false;
    std::vector<Locator> need;
    if (io::Status s = bintrie_read::fetch_record(frame_.reader(), g_, bintrie_read::kCommit, loc, &f, &complete, &need);
        !s.ok())
      return s;
    if (!complete) return err(loc, "stem pieces not loaded");
    take_fetched(std::move(f), loc, n);
    return {};
  }

  // Applies writes_[w] to `blob` (values ascending by slot); true if anything changed.
  bool apply(uint32_t w, bintrie::StemBlob* blob) {
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

  void add_new_stem(uint32_t w, std::vector<Item>* items) {
    Item it;
    it.kind = Item::stem;
    std::memcpy(it.blob.stem.data(), writes_[w].stem.data(), 31);
    it.changed = apply(w, &it.blob);
    if (it.blob.values.empty()) return;  // nothing written (cannot happen: every write is a leaf)
    items->push_back(std::move(it));
  }

  // A loaded stem and the writes that reach its region: the stem (changed or not) and new stems.
  void collect_stem(int id, const std::vector<uint32_t>& dirty, std::vector<Item>* items) {
    Node& n = nodes_[id];
    Item it;
    it.kind = Item::stem;
    it.node = id;
    it.loc = n.loc;
    it.blob = n.stem;
    for (uint32_t w : dirty) {
      if (std::memcmp(writes_[w].stem.data(), n.stem.stem.data(), 31) == 0) it.changed |= apply(w, &it.blob);
      else add_new_stem(w, items);
    }
    items->push_back(std::move(it));
  }

  io::Status plan_group(int id, unsigned d, const std::vector<uint32_t>& dirty, std::unique_ptr<Plan>* out) {
    Node& n = nodes_[id];
    std::vector<std::vector<uint32_t>> per_entry(n.blob.entries.size());
    std::vector<Item> items;
    for (uint32_t w : dirty) {
      const auto e = bd::find_entry(n.blob, bd::key_bits(writes_[w].stem.data(), d, g_));
      if (e) per_entry[*e].push_back(w);
      else add_new_stem(w, &items);
    }
    for (uint32_t e = 0; e < n.blob.entries.size(); ++e) {
      const bintrie::GroupEntry& ge = n.blob.entries[e];
      if (per_entry[e].empty()) {
        Item it;
        it.kind = Item::keep;
        it.pos = ge.pos;
        it.depth = ge.depth;
        it.hash = ge.hash;
        it.loc = n.children[e];
        items.push_back(std::move(it));
        continue;
      }
      const int c = n.child_node[e];
      if (c < 0) return err(n.loc, "internal: a dirty child was not loaded");
      if (nodes_[c].group) {
        if (ge.depth != g_) return err(n.children[e], "a group where the parent's entry ends early");
        Item it;
        it.kind = Item::sub;
        it.pos = ge.pos;
        it.depth = ge.depth;
        it.node = c;
        it.dirty = per_entry[e];
        items.push_back(std::move(it));
      } else {
        collect_stem(c, per_entry[e], &items);
      }
    }
    std::unique_ptr<Plan> p;
    if (io::Status s = place(items, d, &p); !s.ok()) return s;
    // Unchanged group: the same entries and every child kept.
    bool same = p->kind == Plan::group && p->group_blob.entries.size() == n.blob.entries.size();
    for (size_t e = 0; same && e < n.blob.entries.size(); ++e) {
      const bintrie::GroupEntry& a = p->group_blob.entries[e];
      const bintrie::GroupEntry& b = n.blob.entries[e];
      same = a.pos == b.pos && a.depth == b.depth && a.hash == b.hash && kept_as(p->kids[e], n.children[e]);
    }
    if (same) {
      unnote_group(*p);
      n.reused = true;
      p = std::make_unique<Plan>();
      p->kind = Plan::placed;
      p->node = id;
      p->loc = n.loc;
      p->hash = n.hash;
    }
    *out = std::move(p);
    return {};
  }

  uint32_t rel_pos(const Item& it, unsigned d) const {
    return it.kind == Item::stem ? bd::key_bits(key_of(it).data(), d, g_) : it.pos;
  }
  static Key32 key_of(const Item& it) {
    Key32 k{};
    std::memcpy(k.data(), it.blob.stem.data(), 31);
    return k;
  }

  io::Status stem_plan(Item& it, std::unique_ptr<Plan>* out) {
    auto p = std::make_unique<Plan>();
    if (!it.changed && it.node >= 0) {
      nodes_[it.node].reused = true;
      p->kind = Plan::placed;
      p->node = it.node;
      p->loc = it.loc;
      p->hash = nodes_[it.node].hash;
    } else {
      p->kind = Plan::stem;
      p->stem_blob = std::move(it.blob);  // hashed by hash_plan
      p->listed = uint32_t(scratch_->stems.size());
      scratch_->stems.emplace_back().plan = p.get();
    }
    *out = std::move(p);
    return {};
  }

  // A group at depth d over `items` (or, for one stem item at the top, that stem).
  io::Status place(std::vector<Item>& items, unsigned d, std::unique_ptr<Plan>* out) {
    if (d > 248) return {io::Errc::corrupt_page, "binary trie commit: two stems share 248 bits"};
    if (d == 0 && items.size() == 1 && items[0].kind == Item::stem) return stem_plan(items[0], out);
    std::sort(items.begin(), items.end(), [&](const Item& a, const Item& b) {
      const uint32_t pa = rel_pos(a, d), pb = rel_pos(b, d);
      if (pa != pb) return pa < pb;
      if (a.kind == Item::stem && b.kind == Item::stem) return key_of(a) < key_of(b);
      return a.kind < b.kind;
    });
    auto p = std::make_unique<Plan>();
    p->kind = Plan::group;
    p->group_blob.g = uint8_t(g_);
    if (io::Status s = walk(items, 0, items.size(), d, 0, 0, p.get()); !s.ok()) return s;
    note_group(p.get());
    *out = std::move(p);  // hashed by hash_plan
    return {};
  }

  static void add_kid(Plan* p, const bintrie::GroupEntry& ge, std::unique_ptr<Plan> kid) {
    if (kid->kind != Plan::placed) p->new_kids.push_back(uint32_t(p->kids.size()));
    p->group_blob.entries.push_back(ge);
    p->kids.push_back({std::move(kid), kNoLocator});
  }
  // Whether a group's child is the subtree at `loc`, unchanged.
  static bool kept_as(const Plan::Kid& k, Locator loc) {
    return k.plan ? k.plan->kind == Plan::placed && k.plan->loc == loc : k.loc == loc;
  }

  io::Status walk(std::vector<Item>& items, size_t a, size_t b, unsigned d, unsigned r, uint32_t q, Plan* p) {
    if (b - a == 1) {
      Item& it = items[a];
      std::unique_ptr<Plan> kid;
      bintrie::GroupEntry ge;
      if (it.kind == Item::keep) {
        // A kept stem is alone from its own depth on; a kept group (depth g) descends to g.
        if (it.depth < r || uint32_t(it.pos >> (g_ - r)) != q)
          return {io::Errc::corrupt_page, "binary trie commit: an entry's depth does not fit its region"};
        ge.pos = it.pos;
        ge.depth = it.depth;
        ge.hash = it.hash;
        p->group_blob.entries.push_back(ge);
        p->kids.push_back({nullptr, it.loc});  // no Plan: kept by locator
        return {};
      } else if (it.kind == Item::sub) {
        if (uint32_t(it.pos >> (g_ - r)) != q) return {io::Errc::corrupt_page, "binary trie commit: a group entry outside its region"};
        if (io::Status s = plan_group(it.node, d + g_, it.dirty, &kid); !s.ok()) return s;
        ge.pos = it.pos;
        ge.depth = uint8_t(g_);
      } else {
        if (io::Status s = stem_plan(it, &kid); !s.ok()) return s;
        ge.pos = uint16_t(q << (g_ - r));
        ge.depth = uint8_t(r);
      }
      ge.hash = kid->hash;
      add_kid(p, ge, std::move(kid));
      return {};
    }
    if (r == g_) {
      std::vector<Item> stems;
      for (size_t i = a; i < b; ++i) {
        if (items[i].kind != Item::stem)
          return {io::Errc::corrupt_page, "binary trie commit: stems inside a kept entry's region"};
        stems.push_back(std::move(items[i]));
      }
      std::unique_ptr<Plan> kid;
      if (io::Status s = place(stems, d + g_, &kid); !s.ok()) return s;
      bintrie::GroupEntry ge;
      ge.pos = uint16_t(q);
      ge.depth = uint8_t(g_);
      ge.hash = kid->hash;
      add_kid(p, ge, std::move(kid));
      return {};
    }
    const unsigned shift = g_ - 1 - r;
    size_t m = a;
    while (m < b && ((rel_pos(items[m], d) >> shift) & 1) == 0) ++m;
    if (m > a)
      if (io::Status s = walk(items, a, m, d, r + 1, q << 1, p); !s.ok()) return s;
    if (m < b)
      if (io::Status s = walk(items, m, b, d, r + 1, q << 1 | 1, p); !s.ok()) return s;
    return {};
  }

  DbFiles& files_;
  CommitFrame& frame_;
  const bintrie::Hasher& h_;
  unsigned g_;
  BlobHashChecks checks_{h_, g_};  // resolve: a level's nodes against their parents' entries
  int root_ = -1;
  std::vector<uint8_t> buf_;
};

}  // namespace

// The commit between its two calls: the hasher, the read store, the frame (phase clock,
// reader, later the writer), the resolved nodes and the hashed plan; the outcome.
struct BintrieCommitter::Pending {
  Pending(DbFiles& files, DeadPageLedger& dead, const CommitBase& base, std::unique_ptr<io::ArenaFileStore> store,
          PageReuse* reuse, stats::LogHistogram* latency, const bintrie::Hasher& hasher)
      : h(hasher),
        read_store(std::move(store)),
        frame(files, dead, kWho, base, read_store.get(), reuse, latency),
        c(files, frame, h, base.params.group_depth) {}
  static constexpr const char* kWho = "binary trie commit";
  bintrie::Hasher h;
  std::unique_ptr<io::ArenaFileStore> read_store;
  CommitFrame frame;
  Committer c;
  std::unique_ptr<Plan> plan;
  CommitFrame::Outcome out;
};

BintrieCommitter::BintrieCommitter(DbFiles& files)
    : CommitterBase(files), hash_scratch_(std::make_unique<BintrieHashScratch>()) {}
BintrieCommitter::~BintrieCommitter() = default;

io::Status BintrieCommitter::hash(const state::StateDiff& diff, std::array<uint8_t, 32>* root_hash) {
  constexpr const char* kWho = Pending::kWho;
  pending_.reset();
  const CommitBase base = base_for_hash();
  if (io::Status s = CommitFrame::check_target(files_, base.params, io::TreeKind::bintrie, kWho, "a binary trie"); !s.ok())
    return s;
  bintrie::Hasher h;
  if (io::Status s = bd::hasher_for(base.params, &h); !s.ok()) return s;
  if (base.params.group_depth < 1 || base.params.group_depth > 8)
    return {io::Errc::bad_argument, "binary trie commit: bad group depth"};
  std::unique_ptr<io::ArenaFileStore> store;
  if (io::Status s = open_read_store(&store); !s.ok()) return s;
  auto p = std::make_unique<Pending>(files_, dead_, base, std::move(store), &reuse_, read_latency_, h);
  CommitFrame& frame = p->frame;
  Committer& c = p->c;
  if (io::Status s = c.prepare(diff); !s.ok()) return s;
  if (io::Status s = c.resolve(); !s.ok()) return s;
  frame.resolved();
  if (io::Status s = c.plan(*hash_scratch_, &p->plan); !s.ok()) return s;
  frame.applied();
  if (p->plan) c.hash_plan(*hash_scratch_);
  frame.hashed();
  if (frame.pure_hash()) {
    PureHashCount pc;
    if (io::Status s = c.pure_hash(&pc); !s.ok()) return s;
    frame.pure_hashed(pc.ns, pc.nodes, pc.calls);
  }
  frame.hash_stage_done();
  if (root_hash) *root_hash = p->plan ? p->plan->hash : base.root_hash;
  pending_ = std::move(p);
  return {};
}

io::Status BintrieCommitter::write_pages() {
  if (!pending_) return {io::Errc::bad_argument, "binary trie commit: write_pages() without a hashed commit"};
  packed_ = std::move(pending_);  // the next hash() may start once this returns
  Pending& p = *packed_;
  CommitFrame& frame = p.frame;
  Committer& c = p.c;
  CommitFrame::Outcome& o = p.out;
  if (io::Status s = frame.begin_writes(); !s.ok()) {
    const std::unique_ptr<Pending> dropped = std::move(packed_);
    return frame.fail(s);
  }
  if (!frame.keyed()) c.packer_payload_ = frame.writer().payload_bytes();
  if (p.plan) {
    o.root_hash = p.plan->hash;
    io::Status st = c.emit(*p.plan, Key32{}, 0);
    if (!frame.keyed()) {
      std::vector<Locator> roots;
      if (st.ok()) st = frame.packer().finish(&roots);
      if (st.ok() && roots.size() != 1) st = {io::Errc::bad_argument, "binary trie commit: not one root record"};
      if (st.ok()) o.root = roots[0];
    }
    if (!st.ok()) {
      const std::unique_ptr<Pending> dropped = std::move(packed_);
      return frame.fail(st);
    }
  }
  frame.encoded();
  for (const Node& n : c.nodes_) {
    if (n.reused) continue;
    if (frame.keyed()) frame.supersede_key(blob_key_string(n.path.data(), n.depth), n.body_bytes);
    else frame.supersede(n.records, n.body_bytes);
  }
  o.records_written = c.records_written;
  o.bytes_written = c.bytes_written;
  o.keys_delta = c.new_leaves;
  o.accounts_written = c.accounts;
  for (const StemWrites& sw : c.writes_) o.slot_writes += sw.values.size() + (sw.patch ? 1 : 0);
  o.records_read = c.records_read;
  if (!frame.keyed()) {
    frame.hand_over_written();
    set_next_base({o.root, o.root_hash, frame.base().params, frame.base().snapshot});
  }
  return {};
}

io::Status BintrieCommitter::publish(const std::string& spec_json, BintrieCommitStats* stats) {
  if (!packed_) return {io::Errc::bad_argument, "binary trie commit: publish() without written pages"};
  const std::unique_ptr<Pending> p = std::move(packed_);
  io::Status s = p->frame.publish(p->out, spec_json, stats);
  clear_next_base();
  if (!s.ok()) return s;
  return {};
}

}  // namespace st::persist
