// cli_bintrie_bench: `statetree bintrie-bench` — the binary trie's figures,
// each measured side by side with the bare hashing of exactly the same messages:
//   from-scratch root of N random keys (key_i = SHA256(uint64_be(i)), value_i =
//   SHA256(key_i): the vectors' random_N family) on 1 thread vs the bare hash32/hash64
//   batches of the same message counts at the active kernel, and on T threads;
//   incremental: W random writes into the N-key mutable tree (overwrites of existing keys,
//   and new keys that split stems) vs the bare hashing of what was rehashed;
//   group blobs per GD (count, bytes, mean blob bytes) and key proof sizes of the N tree.
// Timings are medians with min/max over --reps; bare runs alternate with the engine runs.
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "engine/bintrie/batch_root.h"
#include "engine/bintrie/group_blob.h"
#include "engine/bintrie/mutable_tree.h"
#include "engine/bintrie/proof.h"
#include "engine/stats/summary.h"
#include "kernels/sha256.h"
#include "workloads/cli_args.h"
#include "workloads/cli_options.h"
#include "workloads/commands.h"
#include "workloads/report.h"

namespace st::cli {
namespace {

using st::bintrie::Hash32;
using st::bintrie::Entry;

// --clock cpu: single-thread timings in this thread's CPU time (robust on a shared,
// oversubscribed machine); wall otherwise. The thread comparison is always wall time.
bool g_cpu_clock = false;
uint64_t clock_ns() {
  if (!g_cpu_clock) return report::now_ns();
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

int fail(const std::string& msg, int code = 2) { return cli_error("statetree bintrie-bench", msg, code); }

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
  const uint64_t t0 = clock_ns();
  for (size_t done = 0; done < n32; done += chunk) h.hash32_batch(in.data(), out.data(), std::min(chunk, n32 - done));
  for (size_t done = 0; done < n64; done += chunk) h.hash64_batch(in.data(), out.data(), std::min(chunk, n64 - done));
  return double(clock_ns() - t0);
}

// Timing samples in ns as a summary in ms, noted under `label` for the noise warning.
nlohmann::json ms_json(const std::vector<double>& ns, const std::string& label) {
  std::vector<double> ms;
  for (double x : ns) ms.push_back(x / 1e6);
  return report::timing_json(label, ms);
}

std::string ms_str(const std::vector<double>& ns) {
  const auto s = stats::summarize(ns);
  return fmt::format("{:.1f} ms +-{:.1f} [{:.1f}..{:.1f}]", s.median / 1e6, s.stddev / 1e6, s.min / 1e6, s.max / 1e6);
}

std::string ratio_str(const std::vector<double>& r) {
  const auto s = stats::summarize(r);
  return fmt::format("{:.2f}x [{:.2f}..{:.2f}]", s.median, s.min, s.max);
}

struct BintrieBenchOptions {
  uint64_t keys = 0, writes = 0, reps = 0, threads = 0, dense_stems = 0;
  std::vector<uint64_t> gds;
  st::bintrie::HashKind kind = st::bintrie::HashKind::sha256;
  std::string clock;
  bool json = false;
};

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

// Counts the timed reps on the progress line (drawn only with the table output).
struct RepTicker {
  report::Progress& progress;
  bool show;
  uint64_t done = 0;
  void start_rep() {
    if (show) progress.update(done++);
  }
};

// 1. The from-scratch root: per rep, 1 thread (--clock) and its wall time, the bare hashing
// of its messages, T threads (wall); per-phase wall times of both runs.
struct ScratchFigures {
  st::bintrie::BatchRootStats rs;
  Hash32 root{};
  std::vector<double> root1_ns, root1_wall_ns, bare_ns, rootT_ns, ratio_bare, speedup;
  std::vector<double> p1_part, p1_buckets, p1_top, pT_part, pT_buckets, pT_top, cpu_per_wall;
};

uint64_t process_cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

// One rep; false when the T-thread root differs from the 1-thread one.
bool time_scratch_rep(const st::bintrie::Hasher& h, const std::vector<Entry>& entries, uint64_t threads,
                      st::bintrie::BatchRootScratch& scratch, ScratchFigures* f) {
  f->rs = {};
  const uint64_t w0 = report::now_ns();
  uint64_t t0 = clock_ns();
  f->root = st::bintrie::batch_root(h, entries, {}, &f->rs, scratch);
  const double t1 = double(clock_ns() - t0);
  const double t1_wall = double(report::now_ns() - w0);
  const double tb = bare_hash_ns(h, f->rs.hash32_messages, f->rs.hash64_messages);
  st::bintrie::BatchRootOptions po;
  po.threads = unsigned(threads);
  st::bintrie::BatchRootStats ts;
  const uint64_t c0 = process_cpu_ns();
  t0 = report::now_ns();
  const Hash32 root_t = st::bintrie::batch_root(h, entries, po, &ts, scratch);
  const double tt = double(report::now_ns() - t0);
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

// 2. Incremental batches into the mutable tree: overwrites of existing keys, then new keys.
struct IncrementalFigures {
  std::vector<double> upd_ns, upd_bare_ns, upd_ratio, ins_ns, ins_bare_ns, ins_ratio;
  st::bintrie::CommitStats ucs, ics;
};

void time_incremental_rep(const st::bintrie::Hasher& h, const st::bintrie::Hasher& sha, const std::vector<Entry>& entries,
                          uint64_t w, Xorshift& rng, uint64_t* next_new_key, st::bintrie::MutableTree& tree,
                          IncrementalFigures* f) {
  std::vector<Entry> upd(w);
  for (auto& e : upd) {
    e.key = entries[rng.next() % entries.size()].key;
    for (int b = 0; b < 32; b += 8) { const uint64_t x = rng.next(); std::memcpy(e.value.data() + b, &x, 8); }
  }
  uint64_t t0 = clock_ns();
  tree.apply(upd);
  tree.commit(&f->ucs);
  const double tu = double(clock_ns() - t0);
  const double tub = bare_hash_ns(h, f->ucs.leaf_hashes, f->ucs.hash64());
  f->upd_ns.push_back(tu);
  f->upd_bare_ns.push_back(tub);
  f->upd_ratio.push_back(tu / tub);
  const std::vector<Entry> ins = random_entries(sha, *next_new_key, *next_new_key + w);
  *next_new_key += w;
  t0 = clock_ns();
  tree.apply(ins);
  tree.commit(&f->ics);
  const double ti = double(clock_ns() - t0);
  const double tib = bare_hash_ns(h, f->ics.leaf_hashes, f->ics.hash64());
  f->ins_ns.push_back(ti);
  f->ins_bare_ns.push_back(tib);
  f->ins_ratio.push_back(ti / tib);
}

// 2b. Dense stems: the stem-subtree keep decision. A tree of --dense-stems full stems
// (256 values each) takes W random writes. Measured: our apply+commit (dense stems keep
// their subtree: written leaves + their ancestors). Counted and bare-hashed for
// comparison: keeping leaf hashes only (the whole 255-node subtree per dirty stem) and
// go-ethereum (also every present value's leaf hash again). Counts and bare times: last rep.
struct DenseFigures {
  std::vector<double> ns, bare_ns;
  size_t ours_leaf = 0, ours_node = 0, geth_leaf = 0, geth_node = 0, full_node = 0;
  double geth_bare_ms = 0, full_bare_ms = 0;
};

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
                    uint64_t rep, Xorshift& rng, st::bintrie::MutableTree& dt, DenseFigures* f) {
  std::vector<Entry> wr(w);
  std::vector<std::vector<uint8_t>> touched(dense_stems);
  for (auto& e : wr) {
    const uint64_t s = rng.next() % dense_stems, sub = rng.next() % 256;
    e = full[s * 256 + sub];
    e.value[1] ^= uint8_t(1 + rep);
    touched[s].push_back(uint8_t(sub));
  }
  st::bintrie::CommitStats dcs;
  const uint64_t t0 = clock_ns();
  dt.apply(wr);
  dt.commit(&dcs);
  f->ns.push_back(double(clock_ns() - t0));
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
               Xorshift& rng, RepTicker& ticker, DenseFigures* f) {
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
    ticker.start_rep();
    if (!time_dense_rep(h, full, o.dense_stems, o.writes, r, rng, dt, f)) return false;
  }
  return true;
}

// 3. Group blobs per GD and key proof sizes, on the N-key tree (before the incremental batches).
struct TreeFigures {
  double build_ns = 0;
  size_t blob_stems = 0, memory_bytes = 0;
  std::vector<std::pair<uint64_t, st::bintrie::BlobCounts>> blobs;  // per GD
  stats::Summary proof_bytes, proof_depth;
};

void measure_blobs_and_proofs(const st::bintrie::MutableTree& tree, const std::vector<Entry>& entries,
                              const std::vector<uint64_t>& gds, Xorshift& rng, TreeFigures* f) {
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

struct BintrieBenchResult {
  ScratchFigures scratch;
  TreeFigures tree;
  IncrementalFigures incremental;
  DenseFigures dense;
};

// Every phase in order; "" or the internal error.
std::string run_bintrie_bench(const BintrieBenchOptions& o, RepTicker& ticker, BintrieBenchResult* r) {
  const st::bintrie::Hasher h = st::bintrie::make_hasher(o.kind);
  const st::bintrie::Hasher sha = st::bintrie::make_hasher(st::bintrie::HashKind::sha256);
  const std::vector<Entry> entries = random_entries(sha, 0, o.keys);
  // One scratch for all reps and both thread counts: its memory is faulted in once (the
  // first rep), as a long-running builder would keep it; every call still starts from the
  // unsorted input and does all of its work.
  st::bintrie::BatchRootScratch scratch;
  for (uint64_t rep = 0; rep < o.reps; ++rep) {
    ticker.start_rep();
    if (!time_scratch_rep(h, entries, o.threads, scratch, &r->scratch))
      return "internal error: parallel root differs from serial root";
  }
  st::bintrie::MutableTree tree(h);
  const uint64_t t0 = clock_ns();
  tree.apply(entries);
  const Hash32 mroot = tree.commit();
  r->tree.build_ns = double(clock_ns() - t0);
  if (mroot != r->scratch.root) return "internal error: mutable-tree root differs from batch root";
  Xorshift rng;
  measure_blobs_and_proofs(tree, entries, o.gds, rng, &r->tree);
  uint64_t next_new_key = o.keys;
  for (uint64_t rep = 0; rep < o.reps; ++rep) {
    ticker.start_rep();
    time_incremental_rep(h, sha, entries, o.writes, rng, &next_new_key, tree, &r->incremental);
  }
  r->tree.memory_bytes = tree.memory_bytes();
  if (o.dense_stems > 0 && !run_dense(o, h, entries, rng, ticker, &r->dense))
    return "internal error: dense-stem rehash is not the ancestor set";
  return "";
}

nlohmann::json scratch_json(const ScratchFigures& f) {
  return {{"stems", f.rs.stems}, {"hash32_messages", f.rs.hash32_messages}, {"hash64_messages", f.rs.hash64_messages},
          {"root_1t_ms", ms_json(f.root1_ns, "root_1t_ms")}, {"bare_hash_ms", ms_json(f.bare_ns, "bare_hash_ms")},
          {"ratio_to_bare", report::summary_json(stats::summarize(f.ratio_bare))},
          {"root_1t_wall_ms", ms_json(f.root1_wall_ns, "root_1t_wall_ms")},
          {"root_threads_ms", ms_json(f.rootT_ns, "root_threads_ms")},
          {"speedup_threads", report::summary_json(stats::summarize(f.speedup))},
          {"phases_1t_wall_ms", {{"partition", ms_json(f.p1_part, "phases_1t partition")},
                                 {"buckets", ms_json(f.p1_buckets, "phases_1t buckets")},
                                 {"top", ms_json(f.p1_top, "phases_1t top")}}},
          {"phases_threads_wall_ms", {{"partition", ms_json(f.pT_part, "phases_threads partition")},
                                      {"buckets", ms_json(f.pT_buckets, "phases_threads buckets")},
                                      {"top", ms_json(f.pT_top, "phases_threads top")}}},
          {"threads_process_cpu_per_wall", report::summary_json(stats::summarize(f.cpu_per_wall))}};
}

// The JSON of one incremental kind ("incremental_update" / "incremental_insert").
nlohmann::json incremental_json(const std::string& label, const st::bintrie::CommitStats& cs, const std::vector<double>& ns,
                                const std::vector<double>& bare_ns, const std::vector<double>& ratio) {
  return {{"leaf_hashes", cs.leaf_hashes}, {"hash64_messages", cs.hash64()}, {"internal_hashes", cs.internal_hashes},
          {"ms", ms_json(ns, label + " ms")}, {"bare_hash_ms", ms_json(bare_ns, label + " bare_hash_ms")},
          {"ratio_to_bare", report::summary_json(stats::summarize(ratio))}};
}

nlohmann::json dense_json(uint64_t dense_stems, const DenseFigures& f) {
  return {{"stems", dense_stems}, {"ms", ms_json(f.ns, "dense_stem_writes ms")},
          {"bare_hash_ms", ms_json(f.bare_ns, "dense_stem_writes bare_hash_ms")},
          {"ours", {{"leaf_hashes", f.ours_leaf}, {"hash64_messages", f.ours_node}}},
          {"geth_recompute", {{"leaf_hashes", f.geth_leaf}, {"hash64_messages", f.geth_node}, {"bare_hash_ms", f.geth_bare_ms}}},
          {"leaf_hashes_only", {{"leaf_hashes", f.ours_leaf}, {"hash64_messages", f.full_node}, {"bare_hash_ms", f.full_bare_ms}}}};
}

nlohmann::json blobs_json(const TreeFigures& f) {
  nlohmann::json blobs = nlohmann::json::array();
  for (const auto& [g, c] : f.blobs) {
    const double mean_group = c.group_blobs ? double(c.group_bytes) / double(c.group_blobs) : 0;
    blobs.push_back({{"gd", g}, {"group_blobs", c.group_blobs}, {"group_bytes", c.group_bytes},
                     {"group_blob_bytes_mean", mean_group}, {"group_blobs_full", c.group_full},
                     {"full_blob_bytes", st::bintrie::group_blob_size(unsigned(g), size_t(1) << g)},
                     {"stem_blobs", c.stem_blobs}, {"stem_bytes", c.stem_bytes}});
  }
  return blobs;
}

nlohmann::json bintrie_bench_json(const BintrieBenchOptions& o, const Args& args, const BintrieBenchResult& r) {
  const IncrementalFigures& inc = r.incremental;
  nlohmann::json j = {
      {"command", "bintrie-bench"}, {"hash", st::bintrie::hash_kind_name(o.kind)},
      {"sha256_kernel", st::kernels::sha256_active().name}, {"keys", o.keys}, {"writes", o.writes}, {"reps", o.reps},
      {"threads", o.threads}, {"clock", o.clock}, {"root", report::hex0x(r.scratch.root)}, {"tree", "bintrie"},
      {"pinned_cpus", args.pin_cpus()}, {"from_scratch", scratch_json(r.scratch)},
      {"mutable_build_ms", r.tree.build_ns / 1e6}, {"mutable_memory_bytes", r.tree.memory_bytes},
      {"incremental_update", incremental_json("incremental_update", inc.ucs, inc.upd_ns, inc.upd_bare_ns, inc.upd_ratio)},
      {"incremental_insert", incremental_json("incremental_insert", inc.ics, inc.ins_ns, inc.ins_bare_ns, inc.ins_ratio)},
      {"dense_stem_writes", dense_json(o.dense_stems, r.dense)},
      {"blobs", blobs_json(r.tree)},
      {"key_proof_bytes", report::summary_json(r.tree.proof_bytes)},
      {"key_proof_depth", report::summary_json(r.tree.proof_depth)}};
  report::stamp(j);
  return j;
}

void print_scratch(const BintrieBenchOptions& o, const std::string& kernel, const ScratchFigures& f) {
  std::printf("bintrie-bench: %llu random keys, hash %s, SHA-256 kernel %s, %llu reps (median [min..max]), %s clock\n",
              (unsigned long long)o.keys, st::bintrie::hash_kind_name(o.kind), kernel.c_str(), (unsigned long long)o.reps,
              g_cpu_clock ? "thread-CPU" : "wall");
  std::printf("root %s\n\n", report::hex0x(f.root).c_str());
  std::printf("from scratch: %zu stems, %zu hash32 + %zu hash64 messages\n", f.rs.stems, f.rs.hash32_messages,
              f.rs.hash64_messages);
  std::printf("  root, 1 thread        %s\n", ms_str(f.root1_ns).c_str());
  std::printf("  bare hashing, same    %s\n", ms_str(f.bare_ns).c_str());
  std::printf("  ratio root/bare       %s\n", ratio_str(f.ratio_bare).c_str());
  std::printf("  root, 1 thread (wall)  %s\n", ms_str(f.root1_wall_ns).c_str());
  std::printf("  root, %llu threads      %s  speedup (wall) %s\n", (unsigned long long)o.threads, ms_str(f.rootT_ns).c_str(),
              ratio_str(f.speedup).c_str());
  std::printf("  phases (wall), 1 thread:   partition %s, buckets %s, top %s\n", ms_str(f.p1_part).c_str(),
              ms_str(f.p1_buckets).c_str(), ms_str(f.p1_top).c_str());
  std::printf("  phases (wall), %llu threads: partition %s, buckets %s, top %s; process CPU / wall %s\n",
              (unsigned long long)o.threads, ms_str(f.pT_part).c_str(), ms_str(f.pT_buckets).c_str(),
              ms_str(f.pT_top).c_str(), ratio_str(f.cpu_per_wall).c_str());
}

void print_incremental(const BintrieBenchOptions& o, const TreeFigures& t, const IncrementalFigures& f) {
  std::printf("\nmutable tree: build %.1f ms, %.1f MiB\n", t.build_ns / 1e6, double(t.memory_bytes) / 1048576.0);
  std::printf("incremental, %llu overwrites of existing keys: %zu leaf + %zu node hashes (%zu internal)\n",
              (unsigned long long)o.writes, f.ucs.leaf_hashes, f.ucs.hash64(), f.ucs.internal_hashes);
  std::printf("  apply+commit          %s\n  bare hashing, same    %s\n  ratio                 %s\n",
              ms_str(f.upd_ns).c_str(), ms_str(f.upd_bare_ns).c_str(), ratio_str(f.upd_ratio).c_str());
  std::printf("incremental, %llu new keys (stem splits): %zu leaf + %zu node hashes (%zu internal)\n",
              (unsigned long long)o.writes, f.ics.leaf_hashes, f.ics.hash64(), f.ics.internal_hashes);
  std::printf("  apply+commit          %s\n  bare hashing, same    %s\n  ratio                 %s\n",
              ms_str(f.ins_ns).c_str(), ms_str(f.ins_bare_ns).c_str(), ratio_str(f.ins_ratio).c_str());
}

void print_dense_blobs_proofs(const BintrieBenchOptions& o, const BintrieBenchResult& r) {
  const DenseFigures& d = r.dense;
  if (o.dense_stems > 0) {
    std::printf("dense stems: %llu writes into %llu full stems (stem-subtree keep decision)\n", (unsigned long long)o.writes,
                (unsigned long long)o.dense_stems);
    std::printf("  ours (subtree cache):    %zu leaf + %zu node hashes, apply+commit %s, bare %s\n", d.ours_leaf, d.ours_node,
                ms_str(d.ns).c_str(), ms_str(d.bare_ns).c_str());
    std::printf("  go-ethereum recompute:   %zu leaf + %zu node hashes, bare %.1f ms (last rep)\n", d.geth_leaf, d.geth_node,
                d.geth_bare_ms);
    std::printf("  leaf hashes only:       %zu leaf + %zu node hashes, bare %.1f ms (last rep)\n", d.ours_leaf, d.full_node,
                d.full_bare_ms);
  }
  std::printf("\ngroup blobs of the %llu-key tree (%zu stems):\n", (unsigned long long)o.keys, r.tree.blob_stems);
  for (const auto& [g, c] : r.tree.blobs) {
    const double mean_group = c.group_blobs ? double(c.group_bytes) / double(c.group_blobs) : 0;
    std::printf("%s\n", fmt::format("  GD-{}: {:>8} group blobs, {:>11} B (mean {:>6.1f} B, full {} B, {} full) + {} stem blobs, {} B",
                                    g, c.group_blobs, c.group_bytes, mean_group,
                                    st::bintrie::group_blob_size(unsigned(g), size_t(1) << g), c.group_full,
                                    c.stem_blobs, c.stem_bytes).c_str());
  }
  const stats::Summary &pb = r.tree.proof_bytes, &pd = r.tree.proof_depth;
  std::printf("\nkey proofs (1000 present keys): depth median %.0f [%.0f..%.0f], size median %.0f B [%.0f..%.0f]\n",
              pd.median, pd.min, pd.max, pb.median, pb.min, pb.max);
}

void print_bintrie_bench(const BintrieBenchOptions& o, const BintrieBenchResult& r) {
  report::timing("root_1t_ms", r.scratch.root1_ns);
  report::timing("root_threads_ms", r.scratch.rootT_ns);
  report::timing("incremental_update ms", r.incremental.upd_ns);
  report::timing("incremental_insert ms", r.incremental.ins_ns);
  print_scratch(o, st::kernels::sha256_active().name, r.scratch);
  print_incremental(o, r.tree, r.incremental);
  print_dense_blobs_proofs(o, r);
  std::printf("%s\n", report::stamp_line().c_str());
}

void declare_options(Args& args) {
  args.option_u64("keys", "N", "random keys in the tree (the vectors' random_N family)", 2, 100000000, 1000000);
  args.option_u64("writes", "W", "random writes per incremental batch", 1, 100000000, 4096);
  add_reps(args, "timed repetitions", 5);
  args.option_u64("threads", "T", "threads for the parallel from-scratch root", 1, 256, 2);
  args.pin_option("threads");
  args.option_one_of("hash", "H", "tree hash", {"sha256", "blake3"}, "sha256");
  args.option("kernel", "NAME", "SHA-256 kernel: auto, portable, shani, avx2, avx512", "auto");
  args.option_u64_list("gd", "G[,G...]", "group depths for the blob statistics", 1, 8, "1,2,3,4,5,6,7,8");
  args.option_u64("dense-stems", "D", "full stems (256 values) for the stem-subtree keep comparison (0 = skip)", 0, 1000000, 4096);
  args.option_one_of("clock", "wall|cpu", "clock for the single-thread timings (cpu: this thread's CPU time)", {"wall", "cpu"}, "wall");
  add_json(args, "one JSON object on stdout");
}

}  // namespace

int cmd_bintrie_bench(int argc, char** argv) {
  Args args("statetree bintrie-bench", "EIP-7864 binary trie figures: batch root, incremental updates, threads, group blobs.");
  declare_options(args);
  if (auto rc = args.parse_or_exit(argc, argv)) return *rc;
  BintrieBenchOptions o;
  o.keys = args.get_u64("keys");
  o.writes = args.get_u64("writes");
  o.reps = args.get_u64("reps");
  o.threads = args.get_u64("threads");
  o.dense_stems = args.get_u64("dense-stems");
  o.gds = args.get_u64_list("gd");
  o.kind = *st::bintrie::hash_kind_from_name(args.str("hash"));  // checked by parse()
  o.clock = args.str("clock");
  o.json = args.given("json");
  if (auto e = st::kernels::sha256_select(args.str("kernel"))) return fail(*e);
  g_cpu_clock = o.clock == "cpu";
  report::Progress progress("bintrie-bench", o.reps * (2 + (o.dense_stems > 0 ? 1 : 0)));
  RepTicker ticker{progress, !o.json};
  BintrieBenchResult r;
  if (std::string e = run_bintrie_bench(o, ticker, &r); !e.empty()) return fail(e, 70);
  progress.finish();
  if (o.json) std::puts(bintrie_bench_json(o, args, r).dump().c_str());
  else print_bintrie_bench(o, r);
  return 0;
}

}  // namespace st::cli
