// bintrie_bench: the binary trie figures' protocol (see bintrie_bench.h).
#include "engine/experiments/bintrie_bench.h"

#include <algorithm>
#include <cstring>

#include "engine/bintrie/proof.h"
#include "kernels/support/clock.h"

namespace st::experiments {
namespace {

using st::bintrie::Entry;
using st::bintrie::Hash32;

// cpu_clock: single-thread timings in this thread's CPU time (robust on a shared,
// oversubscribed machine); wall otherwise. The thread comparison is always wall time.
bool g_cpu_clock = false;
uint64_t timer_ns() {
  if (!g_cpu_clock) return monotonic_ns();
  return thread_cpu_ns();
}

std::vector<Entry> random_entries(const st::bintrie::Hasher& sha, uint64_t begin, uint64_t end) {
  std::vector<Entry> out(end - begin);
  std::vector<uint8_t> idx(8 * (end - begin));
  for (uint64_t i = begin; i < end; ++i)
    for (int b = 0; b < 8; ++b) idx[8 * (i - begin) + b] = uint8_t(i >> (56 - 8 * b));
  for (uint64_t i = begin; i < end; ++i) {
    sha.hash(idx.data() + 8 * (i - begin), 8, out[i - begin].key.data());
    sha.hash32_batch(out[i - begin].key.data(), out[i - begin].value.data(), 1);
  }
  return out;
}

// Bare hashing of n32 32-byte and n64 64-byte messages through the batch entry points, in
// calls of `chunk` messages over a cache-resident buffer (the builder's own batch shape).
double bare_hash_ns(const st::bintrie::Hasher& h, size_t n32, size_t n64) {
  constexpr size_t chunk = 2048;
  static std::vector<uint8_t> in(64 * chunk), out(32 * chunk);
  for (size_t i = 0; i < in.size(); ++i) in[i] = uint8_t(i * 29 + 1);
  const uint64_t t0 = timer_ns();
  for (size_t done = 0; done < n32; done += chunk) h.hash32_batch(in.data(), out.data(), std::min(chunk, n32 - done));
  for (size_t done = 0; done < n64; done += chunk) h.hash64_batch(in.data(), out.data(), std::min(chunk, n64 - done));
  return double(timer_ns() - t0);
}

// The key / value draws of every phase after the first: one xorshift64 sequence, in phase order.
struct Xorshift {
  uint64_t state = 0x9e3779b97f4a7c15ull;
  uint64_t next() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  }
};

// One rep; false when the T-thread root differs from the 1-thread one.
bool time_scratch_rep(const st::bintrie::Hasher& h, const std::vector<Entry>& entries, uint64_t threads,
                      st::bintrie::BatchRootScratch& scratch, BintrieScratchFigures* f) {
  f->rs = {};
  const uint64_t w0 = monotonic_ns();
  uint64_t t0 = timer_ns();
  f->root = st::bintrie::batch_root(h, entries, {}, &f->rs, scratch);
  const double t1 = double(timer_ns() - t0);
  const double t1_wall = double(monotonic_ns() - w0);
  const double tb = bare_hash_ns(h, f->rs.hash32_messages, f->rs.hash64_messages);
  st::bintrie::BatchRootOptions po;
  po.threads = unsigned(threads);
  st::bintrie::BatchRootStats ts;
  const uint64_t c0 = process_cpu_ns();
  t0 = monotonic_ns();
  const Hash32 root_t = st::bintrie::batch_root(h, entries, po, &ts, scratch);
  const double tt = double(monotonic_ns() - t0);
  const double ct = double(process_cpu_ns() - c0);
  if (root_t != f->root) return false;
  f->root1_ns.push_back(t1);
  f->bare_ns.push_back(tb);
  f->rootT_ns.push_back(tt);
  f->ratio_bare.push_back(t1 / tb);
  f->speedup.push_back(t1_wall / tt);
  f->root1_wall_ns.push_back(t1_wall);
  f->p1_part.push_back(double(f->rs.partition_ns));
  f->p1_buckets.push_back(double(f->rs.buckets_ns));
  f->p1_top.push_back(double(f->rs.top_ns));
  f->pT_part.push_back(double(ts.partition_ns));
  f->pT_buckets.push_back(double(ts.buckets_ns));
  f->pT_top.push_back(double(ts.top_ns));
  f->cpu_per_wall.push_back(ct / tt);
  return true;
}


void time_incremental_rep(const st::bintrie::Hasher& h, const st::bintrie::Hasher& sha, const std::vector<Entry>& entries,
                          uint64_t w, Xorshift& rng, uint64_t* next_new_key, st::bintrie::MutableTree& tree,
                          BintrieIncrementalFigures* f) {
  std::vector<Entry> upd(w);
  for (auto& e : upd) {
    e.key = entries[rng.next() % entries.size()].key;
    for (int b = 0; b < 32; b += 8) { const uint64_t x = rng.next(); std::memcpy(e.value.data() + b, &x, 8); }
  }
  // One batch applied and committed, timed, beside the bare hashing of what it re-hashed.
  auto time_batch = [&](const std::vector<Entry>& batch, st::bintrie::CommitStats& cs, std::vector<double>& ns,
                        std::vector<double>& bare_ns, std::vector<double>& ratio) {
    const uint64_t t0 = timer_ns();
    tree.apply(batch);
    tree.commit(&cs);
    const double t = double(timer_ns() - t0);
    const double tb = bare_hash_ns(h, cs.leaf_hashes, cs.hash64());
    ns.push_back(t);
    bare_ns.push_back(tb);
    ratio.push_back(t / tb);
  };
  time_batch(upd, f->ucs, f->upd_ns, f->upd_bare_ns, f->upd_ratio);
  const std::vector<Entry> ins = random_entries(sha, *next_new_key, *next_new_key + w);
  *next_new_key += w;
  time_batch(ins, f->ics, f->ins_ns, f->ins_bare_ns, f->ins_ratio);
}


// The distinct ancestors (levels 1..8 of a stem's subtree) of the written sub-indices, and
// the count of stems written.
std::pair<size_t, size_t> ancestor_count(std::vector<std::vector<uint8_t>>& touched) {
  size_t dirty = 0, full_nodes = 0;
  for (auto& t : touched) {
    if (t.empty()) continue;
    ++dirty;
    std::sort(t.begin(), t.end());
    t.erase(std::unique(t.begin(), t.end()), t.end());
    for (int l = 1; l <= 8; ++l) {  // distinct ancestors per level
      size_t distinct = 0;
      int last = -1;
      for (uint8_t sub : t) if (int(sub >> l) != last) { last = sub >> l; ++distinct; }
      full_nodes += distinct;
    }
  }
  return {full_nodes, dirty};
}

// One rep; false when our subtree work is not exactly the ancestor set.
bool time_dense_rep(const st::bintrie::Hasher& h, const std::vector<Entry>& full, uint64_t dense_stems, uint64_t w,
                    uint64_t rep, Xorshift& rng, st::bintrie::MutableTree& dt, BintrieDenseFigures* f) {
  std::vector<Entry> wr(w);
  std::vector<std::vector<uint8_t>> touched(dense_stems);
  for (auto& e : wr) {
    const uint64_t s = rng.next() % dense_stems, sub = rng.next() % 256;
    e = full[s * 256 + sub];
    e.value[1] ^= uint8_t(1 + rep);
    touched[s].push_back(uint8_t(sub));
  }
  st::bintrie::CommitStats dcs;
  const uint64_t t0 = timer_ns();
  dt.apply(wr);
  dt.commit(&dcs);
  f->ns.push_back(double(timer_ns() - t0));
  f->bare_ns.push_back(bare_hash_ns(h, dcs.leaf_hashes, dcs.hash64()));
  f->ours_leaf = dcs.leaf_hashes;
  f->ours_node = dcs.hash64();
  const auto [full_nodes, dirty] = ancestor_count(touched);
  if (full_nodes != dcs.subtree_hashes) return false;
  // Without the subtree cache (leaf hashes only) and go-ethereum: a full stem's whole
  // subtree (255 nodes) per dirty stem; go-ethereum also every value's leaf hash.
  f->geth_leaf = 256 * dirty;
  f->full_node = dcs.hash64() - dcs.subtree_hashes + 255 * dirty;  // leaf hashes only
  f->geth_node = f->full_node;
  f->geth_bare_ms = bare_hash_ns(h, f->geth_leaf, f->geth_node) / 1e6;
  f->full_bare_ms = bare_hash_ns(h, dcs.leaf_hashes, f->full_node) / 1e6;
  return true;
}

// false on an internal error (see time_dense_rep).
bool run_dense(const BintrieBenchOptions& o, const st::bintrie::Hasher& h, const std::vector<Entry>& entries,
               Xorshift& rng, BintrieDenseFigures* f) {
  st::bintrie::MutableTree dt(h);
  std::vector<Entry> full;
  full.reserve(o.dense_stems * 256);
  for (uint64_t s = 0; s < o.dense_stems; ++s) {
    Entry e = entries[s % entries.size()];
    e.key[0] ^= uint8_t(s >> 24);  // distinct stems even when s >= N
    for (int sub = 0; sub < 256; ++sub) { e.key[31] = uint8_t(sub); e.value[0] = uint8_t(sub); full.push_back(e); }
  }
  dt.apply(full);
  dt.commit();
  for (uint64_t r = 0; r < o.reps; ++r) {
    if (o.on_rep) o.on_rep();
    if (!time_dense_rep(h, full, o.dense_stems, o.writes, r, rng, dt, f)) return false;
  }
  return true;
}


void measure_blobs_and_proofs(const st::bintrie::MutableTree& tree, const std::vector<Entry>& entries,
                              const std::vector<uint64_t>& gds, Xorshift& rng, BintrieTreeFigures* f) {
  f->blob_stems = tree.stem_count();
  for (uint64_t g : gds) f->blobs.push_back({g, st::bintrie::encode_tree_blobs(tree, unsigned(g), [](auto, auto) {})});
  std::vector<double> proof_bytes, proof_depth;
  for (int i = 0; i < 1000; ++i) {
    const auto p = st::bintrie::prove_key(tree, entries[rng.next() % entries.size()].key);
    proof_bytes.push_back(double(st::bintrie::proof_size_bytes(p)));
    proof_depth.push_back(double(p.siblings.size()));
  }
  f->proof_bytes = stats::summarize(proof_bytes);
  f->proof_depth = stats::summarize(proof_depth);
}


}  // namespace

std::string run_bintrie_bench(const BintrieBenchOptions& o, BintrieBenchResult* r) {
  g_cpu_clock = o.cpu_clock;
  const st::bintrie::Hasher h = st::bintrie::make_hasher(o.kind);
  const st::bintrie::Hasher sha = st::bintrie::make_hasher(st::bintrie::HashKind::sha256);
  const std::vector<Entry> entries = random_entries(sha, 0, o.keys);
  // One scratch for all reps and both thread counts: its memory is faulted in once (the
  // first rep), as a long-running builder would keep it; every call still starts from the
  // unsorted input and does all of its work.
  st::bintrie::BatchRootScratch scratch;
  for (uint64_t rep = 0; rep < o.reps; ++rep) {
    if (o.on_rep) o.on_rep();
    if (!time_scratch_rep(h, entries, o.threads, scratch, &r->scratch))
      return "internal error: parallel root differs from serial root";
  }
  st::bintrie::MutableTree tree(h);
  const uint64_t t0 = timer_ns();
  tree.apply(entries);
  const Hash32 mroot = tree.commit();
  r->tree.build_ns = double(timer_ns() - t0);
  if (mroot != r->scratch.root) return "internal error: mutable-tree root differs from batch root";
  Xorshift rng;
  measure_blobs_and_proofs(tree, entries, o.gds, rng, &r->tree);
  uint64_t next_new_key = o.keys;
  for (uint64_t rep = 0; rep < o.reps; ++rep) {
    if (o.on_rep) o.on_rep();
    time_incremental_rep(h, sha, entries, o.writes, rng, &next_new_key, tree, &r->incremental);
  }
  r->tree.memory_bytes = tree.memory_bytes();
  if (o.dense_stems > 0 && !run_dense(o, h, entries, rng, &r->dense))
    return "internal error: dense-stem rehash is not the ancestor set";
  return "";
}


}  // namespace st::experiments
