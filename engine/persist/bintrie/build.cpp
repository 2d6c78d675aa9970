// bintrie/build: the writer of the binary trie on disk (bintrie/db.h, layout bintrie/disk.h).
//
//   1. leaves: every account of the source -> its leaves (parallel over windows of account
//      chunks, appended in account order; one 64-byte Entry per leaf);
//   2. sort_entries (index form: 16 bytes per leaf, the entries are not copied), stem
//      hashes (hash_stems, parallel over ranges of stems), lcp[i] = common prefix bits of
//      stems i and i+1;
//   3. emit depth-first: node(stems [a, b), depth d) is a stem if b - a == 1, else a group:
//      its entries come from splitting the range level by level (the split of [a, b) at
//      depth t is the first i with lcp[i] == t), its children are emitted first (post-order,
//      bitmap order), then its blob (hashes of the entries, root = reconstruct_group).
//      Sinks: the subtree packer (arena) or WriteBatches of path-keyed blobs (RocksDB).
//
// Memory: entries (64 B/leaf) + sort index (16 B/leaf) + one hash per stem (32 B) + lcp
// (1 B/stem): about 1.3 GB for 10M slots + 1M accounts.
#include <algorithm>
#include <bit>
#include <cstring>

#include "engine/bintrie/account_leaves.h"
#include "engine/bintrie/stem_bits.h"
#include "engine/persist/bintrie/db.h"
#include "kernels/support/clock.h"
#include "engine/persist/bintrie/disk.h"
#include "engine/persist/snapshot/rocks.h"
#include "engine/persist/snapshot/writer.h"
#include "engine/persist/subtree_packer.h"
#include "engine/pipeline/parallel.h"
#include "kernels/keccak256.h"

namespace st::persist {
namespace {

using bintrie::Hash32;
using bintrie::Entry;
namespace bd = bintrie_disk;

// The leaves of one account (as append_account_leaves writes a genesis account). Returns an
// error message or "".
std::string account_entries(const bintrie::KeyScheme& ks, const state::AccountRecord& a, std::vector<Entry>* out) {
  for (int i = 0; i < 16; ++i)
    if (a.balance[i] != 0) return "balance does not fit 128 bits (the basic-data leaf holds 16 bytes)";
  if (a.code.size() >= (size_t(1) << 24)) return "code longer than 2^24-1 bytes";
  const Hash32 header = bintrie::basic_data_key(ks, a.address);
  auto header_key = [&](unsigned sub) { Hash32 k = header; k[31] = uint8_t(sub); return k; };
  out->push_back({header, bintrie::basic_data_leaf(a.nonce, a.balance, uint32_t(a.code.size()))});
  Hash32 code_hash;
  kernels::keccak256(a.code.data(), a.code.size(), code_hash.data());
  out->push_back({header_key(bintrie::kCodeHashLeafKey), code_hash});
  const std::vector<Hash32> chunks = bintrie::chunkify_code(a.code);
  Hash32 last_ti{}, last_key{};
  bool have_last = false;
  for (size_t i = 0; i < chunks.size(); ++i) {
    Hash32 ti;
    uint8_t sub;
    bintrie::code_chunk_position(i, &ti, &sub);
    Hash32 key;
    if (ti == Hash32{}) {
      key = header_key(sub);
    } else {
      if (!have_last || ti != last_ti) { last_key = bintrie::get_tree_key(ks, a.address, ti, 0); last_ti = ti; have_last = true; }
      key = last_key;
      key[31] = sub;
    }
    out->push_back({key, chunks[i]});
  }
  for (const auto& [slot, value] : a.storage) {
    if (value == Hash32{}) continue;
    Hash32 ti;
    uint8_t sub;
    bintrie::storage_slot_position(slot, &ti, &sub);
    out->push_back({ti == Hash32{} ? header_key(sub) : bintrie::get_tree_key(ks, a.address, ti, sub), value});
  }
  return "";
}

// Progress in per-mille of the build: leaves 0..400, sort + hash 400..600, emit 600..1000.
constexpr uint64_t kProgressTotal = 1000;

struct Leaves {
  std::vector<Entry> entries;
  uint64_t slots = 0;
};

io::Status collect_leaves(const bintrie::KeyScheme& ks, const state::StateSource& src, const ProgressFn& progress,
                          Leaves* out) {
  const uint64_t n = src.account_count();
  // Chunks of about 64k leaves (storage_size is cheap; code is not known up front).
  std::vector<uint64_t> bounds{0};
  uint64_t weight = 0;
  for (uint64_t i = 0; i < n; ++i) {
    weight += src.storage_size(i) + 2;
    if (weight >= 65536 || i + 1 == n) { bounds.push_back(i + 1); weight = 0; }
  }
  out->entries.reserve(src.slot_count() + 2 * n + 16);
  const size_t chunks = bounds.size() - 1;
  constexpr size_t kWindow = 32;
  std::vector<std::vector<Entry>> part(kWindow);
  std::vector<std::string> err(kWindow);
  std::vector<uint64_t> err_at(kWindow), slots(kWindow);
  for (size_t w0 = 0; w0 < chunks; w0 += kWindow) {
    const size_t w1 = std::min(chunks, w0 + kWindow);
    pipeline::parallel_for(w1 - w0, 1, [&](size_t lo, size_t hi) {
      state::AccountRecord rec;
      for (size_t k = lo; k < hi; ++k) {
        const size_t c = w0 + k;
        part[k].clear();
        err[k].clear();
        slots[k] = 0;
        for (uint64_t i = bounds[c]; i < bounds[c + 1]; ++i) {
          src.account(i, &rec);
          std::string e = account_entries(ks, rec, &part[k]);
          if (!e.empty()) { err[k] = std::move(e); err_at[k] = i; break; }
          slots[k] += rec.storage.size();
        }
      }
    });
    for (size_t c = w0; c < w1; ++c) {
      const size_t k = c - w0;
      if (!err[k].empty())
        return {io::Errc::bad_argument, "account #" + std::to_string(err_at[k]) + ": " + err[k]};
      out->entries.insert(out->entries.end(), part[k].begin(), part[k].end());
      out->slots += slots[k];
      std::vector<Entry>().swap(part[k]);
    }
    if (progress) progress(n ? 400 * bounds[w1] / n : 400, kProgressTotal);
  }
  return {};
}

// Where the emitted blobs go.
class BlobSink {
 public:
  virtual ~BlobSink() = default;
  virtual io::Status stem(std::span<const uint8_t> blob, const uint8_t* stem31, unsigned depth) = 0;
  virtual io::Status group(std::span<const uint8_t> blob, uint32_t k, const uint8_t* stem31, unsigned depth) = 0;
};

class Emitter {
 public:
  Emitter(const bintrie::Hasher& h, unsigned g, const bintrie::SortedEntries& s, const std::vector<Hash32>& stem_hash,
          const std::vector<uint8_t>& lcp, BlobSink& sink, const ProgressFn& progress)
      : h_(h), g_(g), s_(s), sh_(stem_hash), lcp_(lcp), sink_(sink), progress_(progress) {}

  io::Status run(Hash32* root) {
    *root = Hash32{};
    if (s_.stems() == 0) return {};
    return node(0, uint32_t(s_.stems()), 0, root);
  }
  uint64_t stems = 0, groups = 0, blob_bytes = 0;

 private:
  struct Ent {
    uint16_t pos;
    uint8_t depth;
    uint32_t a, b;
  };

  void walk(uint32_t a, uint32_t b, unsigned d0, unsigned r, uint32_t q, std::vector<Ent>& out) const {
    if (b - a == 1 || r == g_) {
      out.push_back({uint16_t(q << (g_ - r)), uint8_t(r), a, b});
      return;
    }
    const unsigned d = d0 + r;
    const void* hit = std::memchr(lcp_.data() + a, int(d), b - 1 - a);
    if (!hit) {
      walk(a, b, d0, r + 1, q << 1 | bintrie::stem_bit(s_.stem(a), d), out);
      return;
    }
    const uint32_t m = uint32_t(static_cast<const uint8_t*>(hit) - lcp_.data()) + 1;
    walk(a, m, d0, r + 1, q << 1, out);
    walk(m, b, d0, r + 1, q << 1 | 1, out);
  }

  io::Status node(uint32_t a, uint32_t b, unsigned d, Hash32* hash) {
    if (b - a == 1) {
      stem_blob_.values.clear();
      stem_blob_.bitmap = {};
      std::memcpy(stem_blob_.stem.data(), s_.stem(a), 31);
      for (uint32_t i = s_.stem_begin[a]; i < s_.stem_begin[a + 1]; ++i) {
        const Entry& e = s_.entry(i);
        stem_blob_.bitmap[e.key[31] / 8] |= uint8_t(0x80 >> (e.key[31] % 8));
        stem_blob_.values.push_back(e.value);
      }
      buf_.clear();
      bintrie::encode_stem_blob(stem_blob_, &buf_);
      blob_bytes += buf_.size();
      *hash = sh_[a];
      if (++stems % 65536 == 0 && progress_) progress_(600 + 400 * stems / s_.stems(), kProgressTotal);
      return sink_.stem(buf_, s_.stem(a), d);
    }
    std::vector<Ent> ents;
    walk(a, b, d, 0, 0, ents);
    bintrie::GroupBlob blob;
    blob.g = uint8_t(g_);
    blob.entries.resize(ents.size());
    for (size_t i = 0; i < ents.size(); ++i) {
      blob.entries[i].pos = ents[i].pos;
      blob.entries[i].depth = ents[i].depth;
      if (io::Status st = node(ents[i].a, ents[i].b, d + ents[i].depth, &blob.entries[i].hash); !st) return st;
    }
    *hash = bintrie::reconstruct_group(h_, blob)[0];
    buf_.clear();
    bintrie::encode_group_blob(blob, &buf_);
    blob_bytes += buf_.size();
    ++groups;
    return sink_.group(buf_, uint32_t(ents.size()), s_.stem(a), d);
  }

  const bintrie::Hasher& h_;
  unsigned g_;
  const bintrie::SortedEntries& s_;
  const std::vector<Hash32>& sh_;
  const std::vector<uint8_t>& lcp_;
  BlobSink& sink_;
  const ProgressFn& progress_;
  bintrie::StemBlob stem_blob_;
  std::vector<uint8_t> buf_;
};

class ArenaSink final : public BlobSink {
 public:
  explicit ArenaSink(SubtreePacker& p, uint32_t payload) : p_(p) {
    piece_max_ = payload - kPageHeaderBytes - record_footprint(0, 0);
    stem_max_ = piece_max_;
  }
  io::Status stem(std::span<const uint8_t> blob, const uint8_t*, unsigned) override {
    ++records;
    if (blob.size() <= stem_max_) return p_.push(bd::kStem, blob, 0);
    uint32_t pieces = 0;
    for (size_t at = 0; at < blob.size(); at += piece_max_, ++pieces) {
      const size_t len = std::min<size_t>(piece_max_, blob.size() - at);
      if (io::Status st = p_.push(bd::kPiece, blob.subspan(at, len), 0); !st) return st;
      ++records;
    }
    return p_.push(bd::kStemChunked, {}, pieces);
  }
  io::Status group(std::span<const uint8_t> blob, uint32_t k, const uint8_t*, unsigned) override {
    ++records;
    return p_.push(bd::kGroup, blob, k);
  }
  uint64_t records = 0;

 private:
  SubtreePacker& p_;
  size_t piece_max_, stem_max_;
};

class RocksSink final : public BlobSink {
 public:
  explicit RocksSink(io::RocksKvStore& db) : db_(db) {}
  io::Status stem(std::span<const uint8_t> blob, const uint8_t* stem31, unsigned depth) override {
    return add(blob, stem31, depth);
  }
  io::Status group(std::span<const uint8_t> blob, uint32_t, const uint8_t* stem31, unsigned depth) override {
    return add(blob, stem31, depth);
  }
  io::Status flush() {
    if (keys_.empty()) return {};
    std::vector<io::KvWrite> w(keys_.size());
    for (size_t i = 0; i < keys_.size(); ++i) w[i] = {keys_[i], vals_[i], false};
    io::Status st = db_.write_batch(w);
    keys_.clear();
    vals_.clear();
    return st;
  }
  uint64_t records = 0;

 private:
  static constexpr size_t kBatch = 10000;
  io::Status add(std::span<const uint8_t> blob, const uint8_t* stem31, unsigned depth) {
    const std::vector<uint8_t> k = bintrie::blob_key(stem31, depth);
    keys_.emplace_back(reinterpret_cast<const char*>(k.data()), k.size());
    vals_.emplace_back(reinterpret_cast<const char*>(blob.data()), blob.size());
    ++records;
    if (keys_.size() >= kBatch) return flush();
    return {};
  }
  io::RocksKvStore& db_;
  std::vector<std::string> keys_, vals_;
};

// The sorted leaves with what the emitter needs of them: each stem's hash and the common
// prefix (bits) of each pair of neighbouring stems.
struct SortedStems {
  const bintrie::Hasher& h;
  unsigned g;
  const bintrie::SortedEntries& sorted;
  std::vector<Hash32> stem_hash;
  std::vector<uint8_t> lcp;
};

// The stems' hashes, in parallel blocks of kHashBlock stems.
std::vector<Hash32> hash_sorted_stems(const bintrie::Hasher& h, const bintrie::SortedEntries& sorted) {
  const size_t n = sorted.stems();
  std::vector<Hash32> stem_hash(n);
  constexpr size_t kHashBlock = 8192;
  pipeline::parallel_for((n + kHashBlock - 1) / kHashBlock, 1, [&](size_t lo, size_t hi) {
    for (size_t blk = lo; blk < hi; ++blk) {
      const size_t s0 = blk * kHashBlock, s1 = std::min(n, s0 + kHashBlock);
      bintrie::hash_stems(h, sorted, s0, s1, stem_hash.data() + s0, nullptr);
    }
  });
  return stem_hash;
}

// lcp[i]: the common prefix in bits of stems i and i + 1 (in parallel).
std::vector<uint8_t> neighbour_lcps(const bintrie::SortedEntries& sorted) {
  const size_t n = sorted.stems();
  std::vector<uint8_t> lcp(n ? n - 1 : 0);
  pipeline::parallel_for(lcp.size(), 65536, [&](size_t lo, size_t hi) {
    for (size_t i = lo; i < hi; ++i) {
      const uint64_t x = sorted.stem_prefix(i) ^ sorted.stem_prefix(i + 1);
      lcp[i] = uint8_t(x ? unsigned(std::countl_zero(x)) : bintrie::stem_lcp(sorted.stem(i), sorted.stem(i + 1)));
    }
  });
  return lcp;
}

// Arena: the tree packed into record pages (and with o.snapshot the flat snapshot of every
// leaf in key order) and committed in one copy-on-write commit; a failure before the
// commit aborts the space taken.
io::Status write_arena_tree(DbFiles& files, const DbOptions& o, const state::StateSource& src, const SortedStems& ss,
                            const ProgressFn& progress, DbFiles::Fields& fields, BuildReport& r, uint64_t* commit_ns) {
  PageWriter w(files.arena->pages(), files.arena->space());
  SubtreePacker packer(w);
  ArenaSink sink(packer, w.payload_bytes());
  Emitter em(ss.h, ss.g, ss.sorted, ss.stem_hash, ss.lcp, sink, progress);
  Hash32 root;
  std::vector<Locator> roots;
  io::Status st = em.run(&root);
  if (st) st = packer.finish(&roots);
  SnapshotRef snap_ref;
  uint64_t snap_pages = 0;
  if (st && o.snapshot) {
    // Every leaf in key order (the writer keeps an account's two header leaves on one page).
    SnapshotWriter sw(w);
    for (size_t i = 0; st && i < ss.sorted.size(); ++i) st = sw.add(ss.sorted.entry(i).key, ss.sorted.entry(i).value);
    if (st) st = sw.finish(&snap_ref);
    snap_pages = sw.pages_written();
  }
  if (st && roots.size() > 1) st = {io::Errc::bad_argument, "binary trie build: more than one root record"};
  if (!st) {
    (void)w.finish();
    files.arena->space().abort();
    return st;
  }
  fields.root_hash = root;
  fields.node_count = sink.records;
  fields.payload_bytes = em.blob_bytes;
  const uint64_t c0 = st::monotonic_ns();
  st = files.commit_arena(w, roots.empty() ? kNoLocator : roots[0], fields, src.spec_json(),
                          o.snapshot ? &snap_ref : nullptr);
  *commit_ns = st::monotonic_ns() - c0;
  if (!st) return st;
  r.root = root;
  r.nodes = sink.records;
  r.pages = packer.stats().pages;
  r.page_fill = packer.stats().fill();
  r.node_bytes = em.blob_bytes;
  r.snapshot_entries = snap_ref.entries;
  r.snapshot_pages = snap_pages;
  return {};
}

// RocksDB: every blob under its path key, in write batches, then the commit.
io::Status write_rocks_tree(DbFiles& files, const DbOptions& o, const state::StateSource& src, const SortedStems& ss,
                            const ProgressFn& progress, DbFiles::Fields& fields, BuildReport& r, uint64_t* commit_ns) {
  if (!files.rocks) return {io::Errc::bad_argument, "build_bintrie: RocksDB store not open"};
  RocksSink sink(*files.rocks);
  Emitter em(ss.h, ss.g, ss.sorted, ss.stem_hash, ss.lcp, sink, progress);
  Hash32 root;
  io::Status st = em.run(&root);
  if (st) st = sink.flush();
  if (st && o.snapshot) {  // every leaf in key order into the snapshot's column family
    uint32_t family = 0;
    st = create_rocks_snapshot(*files.rocks, &family);
    RocksSnapshotWriter sw(*files.rocks, family);
    for (size_t i = 0; st && i < ss.sorted.size(); ++i) st = sw.add(ss.sorted.entry(i).key, ss.sorted.entry(i).value);
    if (st) st = sw.finish();
    r.snapshot_entries = sw.entries();
  }
  if (!st) return st;
  fields.root_hash = root;
  fields.node_count = sink.records;
  fields.payload_bytes = em.blob_bytes;
  const uint64_t c0 = st::monotonic_ns();
  const SnapshotRef marker;  // RocksDB: counts 0 (snapshot/rocks.h)
  st = files.commit_rocks(fields, src.spec_json(), o.snapshot ? &marker : nullptr);
  *commit_ns = st::monotonic_ns() - c0;
  if (!st) return st;
  r.root = root;
  r.nodes = sink.records;
  r.node_bytes = em.blob_bytes;
  return {};
}

// The build's parameters: a binary trie, a known hash, a group depth in 1..8 whose
// groups fit an arena page.
io::Status check_build_params(const DbFiles& files, const io::StoreParams& p, bintrie::Hasher* h) {
  if (p.tree_kind != io::TreeKind::bintrie) return {io::Errc::bad_argument, "build_bintrie: not a binary trie database"};
  if (io::Status st = bd::hasher_for(p, h); !st) return st;
  if (files.store == StoreKind::arena)
    if (io::Status st = bd::check_group_fits(p); !st) return st;
  if (p.group_depth < 1 || p.group_depth > 8)
    return {io::Errc::bad_argument, "binary trie group depth " + std::to_string(p.group_depth) + " out of range 1..8"};
  return {};
}

}  // namespace

io::Status build_bintrie(DbFiles& files, const DbOptions& o, const state::StateSource& src, BuildReport* report,
                         const ProgressFn& progress) {
  const uint64_t t0 = st::monotonic_ns();
  const io::StoreParams& p = o.params;
  bintrie::Hasher h;
  if (io::Status st = check_build_params(files, p, &h); !st) return st;
  const unsigned g = p.group_depth;
  const bintrie::KeyScheme ks{h, bintrie::TreeIndexEndian::big};
  if (progress) progress(0, kProgressTotal);

  Leaves leaves;
  if (io::Status st = collect_leaves(ks, src, progress, &leaves); !st) return st;
  if (leaves.entries.size() >= (uint64_t(1) << 32))
    return {io::Errc::bad_argument, "binary trie build: more than 2^32 leaves"};
  const unsigned threads = std::max(1u, pipeline::concurrency());
  const bintrie::SortedEntries sorted = bintrie::sort_entries(leaves.entries, threads, /*materialize=*/false);
  const SortedStems ss{h, g, sorted, hash_sorted_stems(h, sorted), neighbour_lcps(sorted)};
  if (progress) progress(600, kProgressTotal);

  BuildReport r;
  r.accounts = src.account_count();
  r.slots = leaves.slots;
  DbFiles::Fields fields;
  fields.key_count = sorted.size();
  uint64_t commit_ns = 0;
  io::Status st = files.store == StoreKind::arena ? write_arena_tree(files, o, src, ss, progress, fields, r, &commit_ns)
                                                  : write_rocks_tree(files, o, src, ss, progress, fields, r, &commit_ns);
  if (!st) return st;
  if (progress) progress(kProgressTotal, kProgressTotal);
  r.disk_bytes = files.disk_bytes();
  r.build_ns = st::monotonic_ns() - t0;
  r.commit_ns = commit_ns;
  if (report) *report = r;
  return {};
}

}  // namespace st::persist
