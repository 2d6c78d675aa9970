// cli_mpt_bench: `statetree mpt-bench` -- the MPT figures, each measured side by
// side with the bare Keccak-256 time of exactly the nodes the engine hashes:
//
//   from-scratch  root of N secure-trie entries (key_i = keccak256(u64_be(i)) sorted,
//                 value_i = keccak256(key_i), 32 bytes) with build_root on 1 thread, vs
//                 keccak256_batch over the same node encodings (captured once, batches of
//                 4,096 messages, the builder's batch shape); then T threads vs 1.
//   incremental   one contract with S storage slots in the state model; a block of W
//                 distinct random slot updates (StateDiff: slot keys hashed, storage trie
//                 dirty paths re-hashed, account leaf, account trie) vs keccak256_batch over
//                 the dirty nodes' encodings. The encodings are captured from an identical
//                 block (same slots, other values of the same length: same dirty nodes,
//                 same sizes) applied right after the timed one, untimed: the timed block's
//                 paths are as cold as a real block's (each rep writes other random slots).
//                 --warm times the second block instead (its paths just walked and hashed
//                 by the first: the figures measured before 2026-11-30 13:30 UTC).
//   memory        peak RSS growth of one build per million entries; resident bytes of the
//                 mutable trie per million slots.
//
// Every timing is repeated --reps times (reps interleaved: engine, bare keccak, engine ...)
// and reported as median/min/max; ratios are computed per rep, then summarized.
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/mpt/builder.h"
#include "engine/mpt/state.h"
#include "engine/stats/summary.h"
#include "kernels/keccak256.h"
#include "workloads/cli_args.h"
#include "workloads/commands.h"
#include "workloads/report.h"

namespace st::cli {

namespace {

// CPU time of the calling thread (ns): excludes the time the thread waits descheduled,
// which on a shared, oversubscribed machine dominates wall-clock noise.
uint64_t process_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

uint64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

int fail(const std::string& msg) {
  std::fprintf(stderr, "statetree mpt-bench: %s\n", msg.c_str());
  return 2;
}

// Resets the kernel's peak-RSS mark (VmHWM) to the current RSS; false where unsupported.
bool reset_peak_rss() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  out.flush();
  return bool(out);
}

// VmHWM (peak resident set since start or the last reset), bytes.
uint64_t peak_rss_now() {
  std::ifstream in("/proc/self/status");
  std::string key;
  while (in >> key) {
    if (key == "VmHWM:") {
      uint64_t kb = 0;
      in >> kb;
      return kb * 1024;
    }
    std::getline(in, key);
  }
  return 0;
}

uint64_t rss_bytes() {
  std::ifstream in("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  in >> size >> resident;
  return resident * 4096;
}

// keccak256_batch over captured encodings in batches of 4,096 messages; returns ns.
struct BareKeccak {
  std::vector<const uint8_t*> msgs;
  std::vector<size_t> lens;
  std::vector<uint8_t> out;
  explicit BareKeccak(const mpt::NodeCapture& cap) {
    for (size_t i = 0; i < cap.count(); ++i) {
      msgs.push_back(cap.bytes.data() + cap.offsets[i]);
      lens.push_back(cap.offsets[i + 1] - cap.offsets[i]);
    }
    out.resize(32 * 4096);
  }
  // Adds n more messages of len bytes each (e.g. the slot keys a block hashes).
  void add(const uint8_t* base, size_t n, size_t len) {
    for (size_t i = 0; i < n; ++i) { msgs.push_back(base + i * len); lens.push_back(len); }
  }
  // Returns {wall ns, thread CPU ns}.
  std::pair<uint64_t, uint64_t> run() {
    const uint64_t t0 = report::now_ns(), c0 = thread_cpu_ns();
    for (size_t i = 0; i < msgs.size(); i += 4096) {
      const size_t n = std::min<size_t>(4096, msgs.size() - i);
      st::kernels::keccak256_batch(msgs.data() + i, lens.data() + i, out.data(), n);
    }
    return {report::now_ns() - t0, thread_cpu_ns() - c0};
  }
};

// Timing samples in ns as a summary in ms, noted under `label` for the noise warning.
nlohmann::json ms_summary(const std::vector<double>& ns, const std::string& label) {
  std::vector<double> ms;
  for (double v : ns) ms.push_back(v * 1e-6);
  return report::timing_json(label, ms);
}

}  // namespace

int cmd_mpt_bench(int argc, char** argv) {
  Args args("statetree mpt-bench", "MPT from-scratch and incremental root timings vs bare Keccak of the same nodes.");
  args.option_u64("entries", "N", "from-scratch: secure-trie entries", 1, 100000000, 1000000);
  args.option_u64("slots", "S", "incremental: storage slots in the state", 1, 100000000, 1000000);
  args.option_u64("writes", "W", "incremental: slot updates per block (at most --slots)", 1, 100000000, 4096);
  args.option_u64("reps", "R", "repetitions of every timing", 1, 1000, 5);
  args.option_u64("threads", "T", "the parallel from-scratch run's thread count", 1, 1024, 2);
  args.pin_option("threads");
  args.option_u64("seed", "N", "random seed of the incremental blocks", 0, UINT64_MAX, 1);
  args.option_u64("chunk-keys", "K", "builder: ranges up to K keys are built by one serial stack pass", 1, 100000000, 4096);
  args.flag("skip-scratch", "skip the from-scratch figures");
  args.flag("skip-incremental", "skip the incremental figures");
  args.flag("warm", "incremental: time a block over the slots the untimed capture block just wrote (warm paths)");
  args.flag("json", "print one JSON object");
  if (auto rc = args.parse_or_exit(argc, argv)) return *rc;
  if (!args.positional().empty()) return fail("unexpected argument '" + args.positional()[0] + "'");
  const uint64_t entries = args.get_u64("entries");
  const uint64_t slots = args.get_u64("slots");
  const uint64_t writes = args.get_u64("writes");
  const uint64_t reps = args.get_u64("reps");
  const uint64_t threads = args.get_u64("threads");
  const uint64_t seed = args.get_u64("seed");
  const uint64_t chunk_keys = args.get_u64("chunk-keys");
  if (writes > slots) return fail("--writes (" + std::to_string(writes) + ") must not exceed --slots (" +
                                    std::to_string(slots) + ")");
  const bool json = args.given("json");
  const bool warm = args.given("warm");

  nlohmann::json j;
  j["command"] = "mpt-bench";
  j["tree"] = "mpt";
  j["keccak_kernel"] = st::kernels::keccak256_kernel_name();
  j["reps"] = reps;
  j["pinned_cpus"] = args.pin_cpus();
  report::stamp(j);
  const bool do_scratch = !args.given("skip-scratch"), do_incr = !args.given("skip-incremental");
  report::Progress progress("mpt-bench", reps * ((do_scratch ? 1 : 0) + (do_incr ? 1 : 0)));
  uint64_t progress_done = 0;

  if (!args.given("skip-scratch")) {
    const size_t n = entries;
    std::vector<uint8_t> keys(32 * n), values(32 * n);
    {
      std::vector<uint8_t> be(8 * n);
      std::vector<const uint8_t*> msgs(n);
      std::vector<size_t> lens(n, 8);
      for (size_t i = 0; i < n; ++i) {
        for (int b = 0; b < 8; ++b) be[8 * i + b] = uint8_t(uint64_t(i) >> (56 - 8 * b));
        msgs[i] = be.data() + 8 * i;
      }
      st::kernels::keccak256_batch(msgs.data(), lens.data(), keys.data(), n);
    }
    std::vector<mpt::KeyValue> pairs(n);
    for (size_t i = 0; i < n; ++i) pairs[i] = {keys.data() + 32 * i, 32, values.data() + 32 * i, 32};
    std::sort(pairs.begin(), pairs.end(), [](const mpt::KeyValue& a, const mpt::KeyValue& b) { return std::memcmp(a.key, b.key, 32) < 0; });
    {
      // Lay the keys out in sorted order, as a sorted source (a snapshot, a sorted file)
      // delivers them: the builder streams through keys and values sequentially.
      std::vector<uint8_t> sorted_keys(32 * n);
      for (size_t i = 0; i < n; ++i) std::memcpy(sorted_keys.data() + 32 * i, pairs[i].key, 32);
      keys.swap(sorted_keys);
      for (size_t i = 0; i < n; ++i) pairs[i].key = keys.data() + 32 * i;
    }
    {
      std::vector<const uint8_t*> msgs(n);
      std::vector<size_t> lens(n, 32);
      for (size_t i = 0; i < n; ++i) msgs[i] = pairs[i].key;
      st::kernels::keccak256_batch(msgs.data(), lens.data(), values.data(), n);
      for (size_t i = 0; i < n; ++i) pairs[i].value = values.data() + 32 * i;
    }
    const uint64_t rss_input = rss_bytes();
    const bool hwm_reset = reset_peak_rss();
    mpt::BuildOptions serial;
    serial.chunk_keys = chunk_keys;
    mpt::BuildStats stats;
    const mpt::Hash32 root = mpt::build_root(pairs, serial, &stats);
    const uint64_t rss_build = hwm_reset ? std::max(peak_rss_now(), rss_input) : rss_input;
    mpt::NodeCapture cap;
    {
      mpt::BuildOptions o;
      o.capture = &cap;
      o.chunk_keys = chunk_keys;
      if (mpt::build_root(pairs, o) != root) return fail("internal: capture build disagrees");
    }
    BareKeccak bare(cap);
    mpt::BuildOptions par;
    par.threads = unsigned(threads);
    par.chunk_keys = chunk_keys;
    std::vector<double> t1, tk, tp, ratio, speedup, c1, ck, cratio, pcpu, threads_used;
    for (uint64_t r = 0; r < reps; ++r) {
      uint64_t a = report::now_ns();
      const uint64_t ca = thread_cpu_ns();
      const mpt::Hash32 r1 = mpt::build_root(pairs, serial);
      const double cpu1 = double(thread_cpu_ns() - ca);
      const double ns1 = double(report::now_ns() - a);
      const auto [nsk_wall, nsk_cpu] = bare.run();
      const double nsk = double(nsk_wall);
      c1.push_back(cpu1); ck.push_back(double(nsk_cpu)); cratio.push_back(cpu1 / double(nsk_cpu));
      a = report::now_ns();
      const uint64_t pa = process_cpu_ns();
      mpt::BuildStats pst;
      const mpt::Hash32 rp = mpt::build_root(pairs, par, &pst);
      threads_used.push_back(double(pst.threads_used));
      const double nsp = double(report::now_ns() - a);
      pcpu.push_back(double(process_cpu_ns() - pa));
      if (r1 != root || rp != root) return fail("internal: roots differ between runs");
      t1.push_back(ns1); tk.push_back(nsk); tp.push_back(nsp);
      if (!json) progress.update(++progress_done);
      ratio.push_back(ns1 / nsk);
      speedup.push_back(ns1 / nsp);
    }
    nlohmann::json s;
    s["entries"] = n;
    s["chunk_keys"] = chunk_keys;
    s["root"] = "0x" + report::hex(root);
    s["leaves"] = stats.leaves;
    s["branches"] = stats.branches;
    s["extensions"] = stats.extensions;
    s["keccak_calls"] = stats.keccak_calls;
    s["keccak_bytes"] = stats.keccak_bytes;
    s["build_1t_ms"] = ms_summary(t1, "from_scratch build_1t_ms");
    s["bare_keccak_ms"] = ms_summary(tk, "from_scratch bare_keccak_ms");
    s["build_over_keccak"] = report::summary_json(stats::summarize(ratio));
    s["build_1t_cpu_ms"] = ms_summary(c1, "from_scratch build_1t_cpu_ms");
    s["bare_keccak_cpu_ms"] = ms_summary(ck, "from_scratch bare_keccak_cpu_ms");
    s["build_over_keccak_cpu"] = report::summary_json(stats::summarize(cratio));
    s["threads"] = threads;
    s["build_nt_ms"] = ms_summary(tp, "from_scratch build_nt_ms");
    s["build_nt_process_cpu_ms"] = ms_summary(pcpu, "from_scratch build_nt_process_cpu_ms");
    s["build_nt_threads_used"] = report::summary_json(stats::summarize(threads_used));
    s["speedup_nt_over_1t"] = report::summary_json(stats::summarize(speedup));
    s["input_bytes"] = 88 * n;  // key 32 + value 32 + KeyValue 24
    s["peak_rss_during_build_bytes"] = rss_build;
    s["peak_rss_measured"] = hwm_reset;
    s["build_peak_extra_bytes_per_million"] = double(rss_build - rss_input) * 1e6 / double(n);
    j["from_scratch"] = s;
    j["root"] = s["root"];  // the from-scratch trie's root
    progress.finish();
    if (!json) {
      const auto S1 = stats::summarize(t1), SK = stats::summarize(tk), SP = stats::summarize(tp);
      const auto R = stats::summarize(ratio), SU = stats::summarize(speedup);
      std::printf("from-scratch root, %zu secure entries (keccak %s): root 0x%s\n", n, st::kernels::keccak256_kernel_name(),
                  report::hex(root).c_str());
      std::printf("  nodes: %llu leaves, %llu branches, %llu extensions; %llu keccak calls, %.1f MB hashed\n",
                  (unsigned long long)stats.leaves, (unsigned long long)stats.branches, (unsigned long long)stats.extensions,
                  (unsigned long long)stats.keccak_calls, double(stats.keccak_bytes) / 1e6);
      std::printf("  build, 1 thread     %8.1f ms  (min %.1f, max %.1f)\n", S1.median * 1e-6, S1.min * 1e-6, S1.max * 1e-6);
      std::printf("  bare keccak, same   %8.1f ms  (min %.1f, max %.1f)\n", SK.median * 1e-6, SK.min * 1e-6, SK.max * 1e-6);
      std::printf("  build / keccak      %8.3f x   (min %.3f, max %.3f)   wall clock\n", R.median, R.min, R.max);
      const auto CR = stats::summarize(cratio), C1 = stats::summarize(c1), CK = stats::summarize(ck);
      std::printf("  thread CPU time: build %.1f ms, bare keccak %.1f ms, build / keccak %.3f x (min %.3f, max %.3f)\n",
                  C1.median * 1e-6, CK.median * 1e-6, CR.median, CR.min, CR.max);
      std::printf("  build, %llu threads   %8.1f ms  (min %.1f, max %.1f); speedup %.2f x (min %.2f, max %.2f)\n",
                  (unsigned long long)threads, SP.median * 1e-6, SP.min * 1e-6, SP.max * 1e-6, SU.median, SU.min, SU.max);
      const auto PC = stats::summarize(pcpu);
      std::printf("  (%llu-thread run: %.1f ms process CPU for %.1f ms wall = %.2f cores busy on average; %.0f threads built chunks)\n",
                  (unsigned long long)threads, PC.median * 1e-6, SP.median * 1e-6, PC.median / SP.median,
                  stats::summarize(threads_used).median);
      std::printf("  memory: input %.1f MB per million entries (88 B each); the build adds %.1f MB per million at peak%s\n",
                  88.0, double(rss_build - rss_input) / double(n), hwm_reset ? "" : " (peak RSS reset unsupported: not measured)");
    }
  }

  if (!args.given("skip-incremental")) {
    const size_t S = slots, W = writes;
    st::state::Address contract{};
    contract[0] = 0xc0;
    mpt::MptState state;
    const uint64_t rss0 = rss_bytes();
    {
      st::state::StateDiff d;
      d.accounts.emplace_back();
      d.accounts[0].address = contract;
      d.accounts[0].code = std::vector<uint8_t>{0x60, 0x00};
      d.accounts[0].storage_writes.resize(S);
      for (size_t i = 0; i < S; ++i) {
        st::state::Bytes32 slot{}, v{};
        for (int b = 0; b < 8; ++b) { slot[31 - b] = uint8_t(uint64_t(i) >> (8 * b)); v[31 - b] = uint8_t(uint64_t(i + 1) >> (8 * b)); }
        v[0] = 0x01;
        d.accounts[0].storage_writes[i] = {slot, v};
      }
      state.apply(d);
    }
    state.root();
    const uint64_t rss_state = rss_bytes();
    std::mt19937_64 rng(seed);
    uint64_t logged_commits = 0;
    std::vector<double> tb, tk, ratio, dirty_nodes, calls, tapply, cb, ck, cratio, cka, crat_all, capply;
    auto block = [&](const std::vector<uint64_t>& which, uint8_t tag) {
      st::state::StateDiff d;
      d.accounts.emplace_back();
      d.accounts[0].address = contract;
      for (uint64_t i : which) {
        st::state::Bytes32 slot{}, v{};
        for (int b = 0; b < 8; ++b) slot[31 - b] = uint8_t(i >> (8 * b));
        for (auto& x : v) x = uint8_t(rng());
        v[0] = tag;  // nonzero, 32 bytes: same encoding sizes in both blocks
        d.accounts[0].storage_writes.emplace_back(slot, v);
      }
      return d;
    };
    for (uint64_t r = 0; r < reps; ++r) {
      std::vector<uint64_t> which;
      {
        std::vector<uint8_t> seen(S, 0);
        while (which.size() < W) {
          const uint64_t i = rng() % S;
          if (!seen[i]) { seen[i] = 1; which.push_back(i); }
        }
      }
      // The timed block and the untimed capture block write the same slots (cold: timed
      // first; --warm: capture first).
      const auto d1 = block(which, 0x02), d2 = block(which, 0x03);
      const st::state::StateDiff& timed = warm ? d2 : d1;
      mpt::NodeCapture cap;
      mpt::CommitStats cs;
      auto capture_block = [&](const st::state::StateDiff& d) {
        state.apply(d);
        state.root(&cs, &cap);
      };
      if (warm) capture_block(d1);
      const uint64_t a = report::now_ns(), ca = thread_cpu_ns();
      state.apply(timed);
      const uint64_t b = report::now_ns();
      capply.push_back(double(thread_cpu_ns() - ca));
      const mpt::Hash32 root = state.root();
      const double ns = double(report::now_ns() - a), cpu = double(thread_cpu_ns() - ca);
      (void)root;
      if (!warm) capture_block(d2);
      BareKeccak bare(cap), bare_all(cap);
      std::vector<uint8_t> slot_bytes;
      for (const auto& w : timed.accounts[0].storage_writes) slot_bytes.insert(slot_bytes.end(), w.first.begin(), w.first.end());
      bare_all.add(slot_bytes.data(), timed.accounts[0].storage_writes.size(), 32);
      tapply.push_back(double(b - a));
      const auto [nsk_wall, nsk_cpu] = bare.run();
      const double nsk = double(nsk_wall);
      tb.push_back(ns); tk.push_back(nsk); ratio.push_back(ns / nsk);
      cb.push_back(cpu); ck.push_back(double(nsk_cpu)); cratio.push_back(cpu / double(nsk_cpu));
      const auto [nsa_wall, nsa_cpu] = bare_all.run();
      cka.push_back(double(nsa_cpu));
      crat_all.push_back(cpu / double(nsa_cpu));
      (void)nsa_wall;
      dirty_nodes.push_back(double(cs.nodes_rehashed));
      if (!json) progress.update(++progress_done);
      calls.push_back(double(cs.keccak_calls));
      logged_commits += cs.from_batch_log;
    }
    nlohmann::json s;
    s["slots"] = S;
    s["writes"] = W;
    s["timed_block_paths"] = warm ? "warm" : "cold";
    s["dirty_nodes"] = report::summary_json(stats::summarize(dirty_nodes));
    s["dirty_keccak_calls"] = report::summary_json(stats::summarize(calls));
    s["storage_commits_from_batch_log"] = logged_commits;  // of the untimed capture blocks (storage + account trie)
    s["block_ms"] = ms_summary(tb, "incremental block_ms");
    s["apply_ms"] = ms_summary(tapply, "incremental apply_ms");
    s["apply_cpu_ms"] = ms_summary(capply, "incremental apply_cpu_ms");
    s["bare_keccak_ms"] = ms_summary(tk, "incremental bare_keccak_ms");
    s["block_over_keccak"] = report::summary_json(stats::summarize(ratio));
    s["block_cpu_ms"] = ms_summary(cb, "incremental block_cpu_ms");
    s["bare_keccak_cpu_ms"] = ms_summary(ck, "incremental bare_keccak_cpu_ms");
    s["block_over_keccak_cpu"] = report::summary_json(stats::summarize(cratio));
    s["bare_keccak_with_slot_keys_cpu_ms"] = ms_summary(cka, "incremental bare_keccak_with_slot_keys_cpu_ms");
    s["block_over_keccak_with_slot_keys_cpu"] = report::summary_json(stats::summarize(crat_all));
    s["trie_resident_bytes_per_million_slots"] = double(rss_state - rss0) * 1e6 / double(S);
    j["incremental"] = s;
    progress.finish();
    if (!json) {
      const auto B = stats::summarize(tb), K = stats::summarize(tk), R = stats::summarize(ratio);
      std::printf("incremental: %zu slot updates into %zu slots (one contract, state model; %s paths)\n", W, S,
                  warm ? "warm" : "cold");
      std::printf("  dirty nodes %.0f, keccak calls %.0f (medians); %llu of %llu capture-block commits took the batch log\n",
                  stats::summarize(dirty_nodes).median, stats::summarize(calls).median, (unsigned long long)logged_commits,
                  (unsigned long long)(2 * reps));
      std::printf("  apply + root        %8.2f ms  (min %.2f, max %.2f)\n", B.median * 1e-6, B.min * 1e-6, B.max * 1e-6);
      const auto A = stats::summarize(tapply);
      std::printf("    of which apply    %8.2f ms  (min %.2f, max %.2f)\n", A.median * 1e-6, A.min * 1e-6, A.max * 1e-6);
      std::printf("  bare keccak, dirty  %8.2f ms  (min %.2f, max %.2f)\n", K.median * 1e-6, K.min * 1e-6, K.max * 1e-6);
      std::printf("  block / keccak      %8.3f x   (min %.3f, max %.3f)   wall clock\n", R.median, R.min, R.max);
      const auto CR = stats::summarize(cratio), CB = stats::summarize(cb), CK = stats::summarize(ck);
      std::printf("  thread CPU time: block %.2f ms (apply %.2f), bare keccak %.2f ms, block / keccak %.3f x (min %.3f, max %.3f)\n",
                  CB.median * 1e-6, stats::summarize(capply).median * 1e-6, CK.median * 1e-6, CR.median, CR.min, CR.max);
      const auto CA = stats::summarize(cka), RA = stats::summarize(crat_all);
      std::printf("  bare keccak of the dirty nodes + the %zu slot keys: %.2f ms CPU; block / that %.3f x (min %.3f, max %.3f)\n",
                  W, CA.median * 1e-6, RA.median, RA.min, RA.max);
      std::printf("  mutable trie: %.1f MB resident per million slots\n", double(rss_state - rss0) / double(S));
    }
  }
  if (!j.contains("root")) {
    j["root"] = nullptr;
    j["root_note"] = "--skip-scratch: the from-scratch root was not computed";
  }
  if (json) std::printf("%s\n", j.dump().c_str());
  else std::printf("%s\n", report::stamp_line().c_str());
  return 0;
}

}  // namespace st::cli
