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
#include "workloads/commands.h"
#include "workloads/report.h"

namespace st::cli {
namespace {

using st::bintrie::Bytes32;
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

int fail(const std::string& msg, int code = 2) {
  std::fprintf(stderr, "statetree bintrie-bench: %s\n", msg.c_str());
  return code;
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

}  // namespace

int cmd_bintrie_bench(int argc, char** argv) {
  Args args("statetree bintrie-bench", "EIP-7864 binary trie figures: batch root, incremental updates, threads, group blobs.");
  args.option_u64("keys", "N", "random keys in the tree (the vectors' random_N family)", 2, 100000000, 1000000);
  args.option_u64("writes", "W", "random writes per incremental batch", 1, 100000000, 4096);
  args.option_u64("reps", "R", "timed repetitions", 1, 1000, 5);
  args.option_u64("threads", "T", "threads for the parallel from-scratch root", 1, 256, 2);
  args.pin_option("threads");
  args.option("hash", "H", "tree hash: sha256 or blake3", "sha256");
  args.option("kernel", "NAME", "SHA-256 kernel: auto, portable, shani, avx2, avx512", "auto");
  args.option_u64_list("gd", "G[,G...]", "group depths for the blob statistics", 1, 8, "1,2,3,4,5,6,7,8");
  args.option_u64("dense-stems", "D", "full stems (256 values) for the stem-subtree keep comparison (0 = skip)", 0, 1000000, 4096);
  args.option("clock", "wall|cpu", "clock for the single-thread timings (cpu: this thread's CPU time)", "wall");
  args.flag("json", "one JSON object on stdout");
  if (auto rc = args.parse_or_exit(argc, argv)) return *rc;
  const uint64_t n = args.get_u64("keys");
  const uint64_t w = args.get_u64("writes");
  const uint64_t reps = args.get_u64("reps");
  const uint64_t threads = args.get_u64("threads");
  const std::vector<uint64_t> gds = args.get_u64_list("gd");
  const auto kind = st::bintrie::hash_kind_from_name(args.str("hash"));
  if (!kind) return fail("--hash must be sha256 or blake3 (got '" + args.str("hash") + "')");
  if (auto e = st::kernels::sha256_select(args.str("kernel"))) return fail(*e);
  if (args.str("clock") != "wall" && args.str("clock") != "cpu") return fail("--clock must be wall or cpu");
  g_cpu_clock = args.str("clock") == "cpu";
  const bool json = args.given("json");
  const st::bintrie::Hasher h = st::bintrie::make_hasher(*kind);
  const st::bintrie::Hasher sha = st::bintrie::make_hasher(st::bintrie::HashKind::sha256);

  const std::vector<Entry> entries = random_entries(sha, 0, n);
  report::Progress progress("bintrie-bench", reps * (2 + (args.get_u64("dense-stems") > 0 ? 1 : 0)));
  uint64_t progress_done = 0;

  // 1. From-scratch root: 1 thread vs bare, T threads. Per-phase wall times of both runs
  // (partition, buckets, top: BatchRootStats) and the T-thread run's process CPU / wall
  // show the serial part of the threaded root independently of a noisy wall clock.
  std::vector<double> root1_ns, root1_wall_ns, bare_ns, rootT_ns, ratio_bare, speedup;
  std::vector<double> p1_part, p1_buckets, p1_top, pT_part, pT_buckets, pT_top, cpu_per_wall;
  st::bintrie::BatchRootStats rs;
  Bytes32 root{};
  auto process_cpu_ns = [] {
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
  };
  // One scratch for all reps and both thread counts: its memory is faulted in once (the
  // first rep), as a long-running builder would keep it; every call still starts from the
  // unsorted input and does all of its work.
  st::bintrie::BatchRootScratch scratch;
  for (uint64_t r = 0; r < reps; ++r) {
    if (!json) progress.update(progress_done++);
    rs = {};
    const uint64_t w0 = report::now_ns();
    uint64_t t0 = clock_ns();
    root = st::bintrie::batch_root(h, entries, {}, &rs, scratch);
    const double t1 = double(clock_ns() - t0);
    const double t1_wall = double(report::now_ns() - w0);
    const double tb = bare_hash_ns(h, rs.hash32_messages, rs.hash64_messages);
    st::bintrie::BatchRootOptions po;
    po.threads = unsigned(threads);
    st::bintrie::BatchRootStats ts;
    const uint64_t c0 = process_cpu_ns();
    t0 = report::now_ns();
    const Bytes32 root_t = st::bintrie::batch_root(h, entries, po, &ts, scratch);
    const double tt = double(report::now_ns() - t0);
    const double ct = double(process_cpu_ns() - c0);
    if (root_t != root) return fail("internal error: parallel root differs from serial root", 70);
    root1_ns.push_back(t1);
    bare_ns.push_back(tb);
    rootT_ns.push_back(tt);
    ratio_bare.push_back(t1 / tb);
    speedup.push_back(t1_wall / tt);
    root1_wall_ns.push_back(t1_wall);
    p1_part.push_back(double(rs.partition_ns));
    p1_buckets.push_back(double(rs.buckets_ns));
    p1_top.push_back(double(rs.top_ns));
    pT_part.push_back(double(ts.partition_ns));
    pT_buckets.push_back(double(ts.buckets_ns));
    pT_top.push_back(double(ts.top_ns));
    cpu_per_wall.push_back(ct / tt);
  }

  // 2. Mutable tree of N keys, then incremental batches.
  st::bintrie::MutableTree tree(h);
  uint64_t t0 = clock_ns();
  tree.apply(entries);
  const Bytes32 mroot = tree.commit();
  const double build_ns = double(clock_ns() - t0);
  if (mroot != root) return fail("internal error: mutable-tree root differs from batch root", 70);
  std::vector<double> upd_ns, upd_bare_ns, upd_ratio, ins_ns, ins_bare_ns, ins_ratio;
  st::bintrie::CommitStats ucs, ics;
  uint64_t rng = 0x9e3779b97f4a7c15ull;
  auto next = [&] { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; };
  uint64_t next_new_key = n;
  // 3. Group blobs per GD and proof sizes, on the N-key tree (before the incremental batches).
  const size_t blob_stems = tree.stem_count();
  nlohmann::json blobs = nlohmann::json::array();
  std::vector<std::string> blob_lines;
  for (uint64_t g : gds) {
    const auto c = st::bintrie::encode_tree_blobs(tree, unsigned(g), [](auto, auto) {});
    const double mean_group = c.group_blobs ? double(c.group_bytes) / double(c.group_blobs) : 0;
    blobs.push_back({{"gd", g}, {"group_blobs", c.group_blobs}, {"group_bytes", c.group_bytes},
                     {"group_blob_bytes_mean", mean_group}, {"group_blobs_full", c.group_full},
                     {"full_blob_bytes", st::bintrie::group_blob_size(unsigned(g), size_t(1) << g)},
                     {"stem_blobs", c.stem_blobs}, {"stem_bytes", c.stem_bytes}});
    blob_lines.push_back(fmt::format("  GD-{}: {:>8} group blobs, {:>11} B (mean {:>6.1f} B, full {} B, {} full) + {} stem blobs, {} B",
                                     g, c.group_blobs, c.group_bytes, mean_group,
                                     st::bintrie::group_blob_size(unsigned(g), size_t(1) << g), c.group_full,
                                     c.stem_blobs, c.stem_bytes));
  }
  std::vector<double> proof_bytes, proof_depth;
  for (int i = 0; i < 1000; ++i) {
    const auto p = st::bintrie::prove_key(tree, entries[next() % entries.size()].key);
    proof_bytes.push_back(double(st::bintrie::proof_size_bytes(p)));
    proof_depth.push_back(double(p.siblings.size()));
  }
  const auto pb = stats::summarize(proof_bytes), pd = stats::summarize(proof_depth);

  for (uint64_t r = 0; r < reps; ++r) {
    if (!json) progress.update(progress_done++);
    std::vector<Entry> upd(w);
    for (auto& e : upd) {
      e.key = entries[next() % entries.size()].key;
      for (int b = 0; b < 32; b += 8) { const uint64_t x = next(); std::memcpy(e.value.data() + b, &x, 8); }
    }
    t0 = clock_ns();
    tree.apply(upd);
    tree.commit(&ucs);
    const double tu = double(clock_ns() - t0);
    const double tub = bare_hash_ns(h, ucs.leaf_hashes, ucs.hash64());
    upd_ns.push_back(tu);
    upd_bare_ns.push_back(tub);
    upd_ratio.push_back(tu / tub);
    const std::vector<Entry> ins = random_entries(sha, next_new_key, next_new_key + w);
    next_new_key += w;
    t0 = clock_ns();
    tree.apply(ins);
    tree.commit(&ics);
    const double ti = double(clock_ns() - t0);
    const double tib = bare_hash_ns(h, ics.leaf_hashes, ics.hash64());
    ins_ns.push_back(ti);
    ins_bare_ns.push_back(tib);
    ins_ratio.push_back(ti / tib);
  }

  // 2b. Dense stems: the stem-subtree keep decision. A tree of --dense-stems full stems
  // (256 values each) takes W random writes. Measured: our apply+commit (dense stems keep
  // their subtree: written leaves + their ancestors). Counted and bare-hashed for
  // comparison: keeping leaf hashes only (the whole 255-node subtree per dirty stem) and
  // go-ethereum (also every present value's leaf hash again).
  const uint64_t dense_stems = args.get_u64("dense-stems");
  std::vector<double> dense_ns, dense_bare_ns;
  size_t dense_ours_leaf = 0, dense_ours_node = 0, dense_geth_leaf = 0, dense_geth_node = 0, dense_full_node = 0;
  double dense_geth_bare_ms = 0, dense_full_bare_ms = 0;
  if (dense_stems > 0) {
    st::bintrie::MutableTree dt(h);
    std::vector<Entry> full;
    full.reserve(dense_stems * 256);
    for (uint64_t s = 0; s < dense_stems; ++s) {
      Entry e = entries[s % entries.size()];
      e.key[0] ^= uint8_t(s >> 24);  // distinct stems even when s >= N
      for (int sub = 0; sub < 256; ++sub) { e.key[31] = uint8_t(sub); e.value[0] = uint8_t(sub); full.push_back(e); }
    }
    dt.apply(full);
    dt.commit();
    for (uint64_t r = 0; r < reps; ++r) {
      if (!json) progress.update(progress_done++);
      std::vector<Entry> wr(w);
      std::vector<std::vector<uint8_t>> touched(dense_stems);
      for (auto& e : wr) {
        const uint64_t s = next() % dense_stems, sub = next() % 256;
        e = full[s * 256 + sub];
        e.value[1] ^= uint8_t(1 + r);
        touched[s].push_back(uint8_t(sub));
      }
      st::bintrie::CommitStats dcs;
      t0 = clock_ns();
      dt.apply(wr);
      dt.commit(&dcs);
      dense_ns.push_back(double(clock_ns() - t0));
      dense_bare_ns.push_back(bare_hash_ns(h, dcs.leaf_hashes, dcs.hash64()));
      dense_ours_leaf = dcs.leaf_hashes;
      dense_ours_node = dcs.hash64();
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
      // Our subtree work must be exactly the distinct ancestors of the written leaves.
      if (full_nodes != dcs.subtree_hashes) return fail("internal error: dense-stem rehash is not the ancestor set", 70);
      // Without the subtree cache (leaf hashes only) and go-ethereum: a full stem's whole
      // subtree (255 nodes) per dirty stem; go-ethereum also every value's leaf hash.
      dense_geth_leaf = 256 * dirty;
      dense_full_node = dcs.hash64() - dcs.subtree_hashes + 255 * dirty;  // leaf hashes only
      dense_geth_node = dense_full_node;
      dense_geth_bare_ms = bare_hash_ns(h, dense_geth_leaf, dense_geth_node) / 1e6;
      dense_full_bare_ms = bare_hash_ns(h, dcs.leaf_hashes, dense_full_node) / 1e6;
    }
  }

  progress.finish();
  const std::string kernel = st::kernels::sha256_active().name;
  if (json) {
    nlohmann::json j = {
        {"command", "bintrie-bench"}, {"hash", st::bintrie::hash_kind_name(*kind)}, {"sha256_kernel", kernel},
        {"keys", n}, {"writes", w}, {"reps", reps}, {"threads", threads}, {"clock", args.str("clock")}, {"root", report::hex0x(root)}, {"tree", "bintrie"}, {"pinned_cpus", args.pin_cpus()},
        {"from_scratch", {{"stems", rs.stems}, {"hash32_messages", rs.hash32_messages}, {"hash64_messages", rs.hash64_messages},
                          {"root_1t_ms", ms_json(root1_ns, "root_1t_ms")}, {"bare_hash_ms", ms_json(bare_ns, "bare_hash_ms")},
                          {"ratio_to_bare", report::summary_json(stats::summarize(ratio_bare))},
                          {"root_1t_wall_ms", ms_json(root1_wall_ns, "root_1t_wall_ms")}, {"root_threads_ms", ms_json(rootT_ns, "root_threads_ms")},
                          {"speedup_threads", report::summary_json(stats::summarize(speedup))},
                          {"phases_1t_wall_ms", {{"partition", ms_json(p1_part, "phases_1t partition")}, {"buckets", ms_json(p1_buckets, "phases_1t buckets")}, {"top", ms_json(p1_top, "phases_1t top")}}},
                          {"phases_threads_wall_ms", {{"partition", ms_json(pT_part, "phases_threads partition")}, {"buckets", ms_json(pT_buckets, "phases_threads buckets")}, {"top", ms_json(pT_top, "phases_threads top")}}},
                          {"threads_process_cpu_per_wall", report::summary_json(stats::summarize(cpu_per_wall))}}},
        {"mutable_build_ms", build_ns / 1e6}, {"mutable_memory_bytes", tree.memory_bytes()},
        {"incremental_update", {{"leaf_hashes", ucs.leaf_hashes}, {"hash64_messages", ucs.hash64()},
                                {"internal_hashes", ucs.internal_hashes}, {"ms", ms_json(upd_ns, "incremental_update ms")},
                                {"bare_hash_ms", ms_json(upd_bare_ns, "incremental_update bare_hash_ms")},
                                {"ratio_to_bare", report::summary_json(stats::summarize(upd_ratio))}}},
        {"incremental_insert", {{"leaf_hashes", ics.leaf_hashes}, {"hash64_messages", ics.hash64()},
                                {"internal_hashes", ics.internal_hashes}, {"ms", ms_json(ins_ns, "incremental_insert ms")},
                                {"bare_hash_ms", ms_json(ins_bare_ns, "incremental_insert bare_hash_ms")},
                                {"ratio_to_bare", report::summary_json(stats::summarize(ins_ratio))}}},
        {"dense_stem_writes", {{"stems", dense_stems}, {"ms", ms_json(dense_ns, "dense_stem_writes ms")}, {"bare_hash_ms", ms_json(dense_bare_ns, "dense_stem_writes bare_hash_ms")},
                               {"ours", {{"leaf_hashes", dense_ours_leaf}, {"hash64_messages", dense_ours_node}}},
                               {"geth_recompute", {{"leaf_hashes", dense_geth_leaf}, {"hash64_messages", dense_geth_node}, {"bare_hash_ms", dense_geth_bare_ms}}},
                               {"leaf_hashes_only", {{"leaf_hashes", dense_ours_leaf}, {"hash64_messages", dense_full_node}, {"bare_hash_ms", dense_full_bare_ms}}}}},
        {"blobs", blobs},
        {"key_proof_bytes", report::summary_json(pb)}, {"key_proof_depth", report::summary_json(pd)}};
    report::stamp(j);
    std::puts(j.dump().c_str());
    return 0;
  }
  report::timing("root_1t_ms", root1_ns);
  report::timing("root_threads_ms", rootT_ns);
  report::timing("incremental_update ms", upd_ns);
  report::timing("incremental_insert ms", ins_ns);
  std::printf("bintrie-bench: %llu random keys, hash %s, SHA-256 kernel %s, %llu reps (median [min..max]), %s clock\n",
              (unsigned long long)n, st::bintrie::hash_kind_name(*kind), kernel.c_str(), (unsigned long long)reps,
              g_cpu_clock ? "thread-CPU" : "wall");
  std::printf("root %s\n\n", report::hex0x(root).c_str());
  std::printf("from scratch: %zu stems, %zu hash32 + %zu hash64 messages\n", rs.stems, rs.hash32_messages, rs.hash64_messages);
  std::printf("  root, 1 thread        %s\n", ms_str(root1_ns).c_str());
  std::printf("  bare hashing, same    %s\n", ms_str(bare_ns).c_str());
  std::printf("  ratio root/bare       %s\n", ratio_str(ratio_bare).c_str());
  std::printf("  root, 1 thread (wall)  %s\n", ms_str(root1_wall_ns).c_str());
  std::printf("  root, %llu threads      %s  speedup (wall) %s\n", (unsigned long long)threads, ms_str(rootT_ns).c_str(), ratio_str(speedup).c_str());
  std::printf("  phases (wall), 1 thread:   partition %s, buckets %s, top %s\n", ms_str(p1_part).c_str(),
              ms_str(p1_buckets).c_str(), ms_str(p1_top).c_str());
  std::printf("  phases (wall), %llu threads: partition %s, buckets %s, top %s; process CPU / wall %s\n",
              (unsigned long long)threads, ms_str(pT_part).c_str(), ms_str(pT_buckets).c_str(), ms_str(pT_top).c_str(),
              ratio_str(cpu_per_wall).c_str());
  std::printf("\nmutable tree: build %.1f ms, %.1f MiB\n", build_ns / 1e6, double(tree.memory_bytes()) / 1048576.0);
  std::printf("incremental, %llu overwrites of existing keys: %zu leaf + %zu node hashes (%zu internal)\n",
              (unsigned long long)w, ucs.leaf_hashes, ucs.hash64(), ucs.internal_hashes);
  std::printf("  apply+commit          %s\n  bare hashing, same    %s\n  ratio                 %s\n",
              ms_str(upd_ns).c_str(), ms_str(upd_bare_ns).c_str(), ratio_str(upd_ratio).c_str());
  std::printf("incremental, %llu new keys (stem splits): %zu leaf + %zu node hashes (%zu internal)\n",
              (unsigned long long)w, ics.leaf_hashes, ics.hash64(), ics.internal_hashes);
  std::printf("  apply+commit          %s\n  bare hashing, same    %s\n  ratio                 %s\n",
              ms_str(ins_ns).c_str(), ms_str(ins_bare_ns).c_str(), ratio_str(ins_ratio).c_str());
  if (dense_stems > 0) {
    std::printf("dense stems: %llu writes into %llu full stems (stem-subtree keep decision)\n", (unsigned long long)w, (unsigned long long)dense_stems);
    std::printf("  ours (subtree cache):    %zu leaf + %zu node hashes, apply+commit %s, bare %s\n", dense_ours_leaf, dense_ours_node,
                ms_str(dense_ns).c_str(), ms_str(dense_bare_ns).c_str());
    std::printf("  go-ethereum recompute:   %zu leaf + %zu node hashes, bare %.1f ms (last rep)\n", dense_geth_leaf, dense_geth_node, dense_geth_bare_ms);
    std::printf("  leaf hashes only:       %zu leaf + %zu node hashes, bare %.1f ms (last rep)\n", dense_ours_leaf, dense_full_node, dense_full_bare_ms);
  }
  std::printf("\ngroup blobs of the %llu-key tree (%zu stems):\n", (unsigned long long)n, blob_stems);
  for (const auto& l : blob_lines) std::printf("%s\n", l.c_str());
  std::printf("\nkey proofs (1000 present keys): depth median %.0f [%.0f..%.0f], size median %.0f B [%.0f..%.0f]\n",
              pd.median, pd.min, pd.max, pb.median, pb.min, pb.max);
  std::printf("%s\n", report::stamp_line().c_str());
  return 0;
}

}  // namespace st::cli
