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
#include "workloads/cli_options.h"
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

int fail(const std::string& msg) { return cli_error("statetree mpt-bench", msg, 2); }

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

struct MptBenchOptions {
  uint64_t entries = 0, slots = 0, writes = 0, reps = 0, threads = 0, seed = 0, chunk_keys = 0;
  bool scratch = true, incremental = true, warm = false, json = false;
};

// Counts the timed reps on the progress line (drawn only with the table output).
struct RepTicker {
  report::Progress& progress;
  bool show;
  uint64_t done = 0;
  void tick() {
    ++done;
    if (show) progress.update(done);
  }
};

// The from-scratch input: n secure-trie entries sorted by key, keys and values laid out in
// that order (as a sorted source delivers them); pairs point into keys / values.
struct ScratchInput {
  std::vector<uint8_t> keys, values;
  std::vector<mpt::KeyValue> pairs;
};

void make_scratch_input(size_t n, ScratchInput* in) {
  std::vector<uint8_t> keys(32 * n);
  in->values.resize(32 * n);
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
  std::vector<mpt::KeyValue>& pairs = in->pairs;
  pairs.resize(n);
  for (size_t i = 0; i < n; ++i) pairs[i] = {keys.data() + 32 * i, 32, in->values.data() + 32 * i, 32};
  std::sort(pairs.begin(), pairs.end(), [](const mpt::KeyValue& a, const mpt::KeyValue& b) { return std::memcmp(a.key, b.key, 32) < 0; });
  // Lay the keys out in sorted order, as a sorted source (a snapshot, a sorted file)
  // delivers them: the builder streams through keys and values sequentially.
  in->keys.resize(32 * n);
  for (size_t i = 0; i < n; ++i) std::memcpy(in->keys.data() + 32 * i, pairs[i].key, 32);
  for (size_t i = 0; i < n; ++i) pairs[i].key = in->keys.data() + 32 * i;
  std::vector<const uint8_t*> msgs(n);
  std::vector<size_t> lens(n, 32);
  for (size_t i = 0; i < n; ++i) msgs[i] = pairs[i].key;
  st::kernels::keccak256_batch(msgs.data(), lens.data(), in->values.data(), n);
  for (size_t i = 0; i < n; ++i) pairs[i].value = in->values.data() + 32 * i;
}

// The from-scratch figures: per rep, the 1-thread build, the bare keccak of its nodes, the
// T-thread build (ns; ratios per rep); the build's node counts and peak memory.
struct ScratchResult {
  size_t entries = 0;
  mpt::Hash32 root{};
  mpt::BuildStats stats;
  std::vector<double> t1, tk, tp, ratio, speedup, c1, ck, cratio, pcpu, threads_used;
  uint64_t rss_input = 0, rss_build = 0;
  bool hwm_reset = false;
};

// One rep of the timed from-scratch runs; false when a root differs from r->root.
bool time_scratch_rep(const ScratchInput& in, const mpt::BuildOptions& serial, const mpt::BuildOptions& par,
                      BareKeccak& bare, ScratchResult* r) {
  uint64_t a = report::now_ns();
  const uint64_t ca = thread_cpu_ns();
  const mpt::Hash32 r1 = mpt::build_root(in.pairs, serial);
  const double cpu1 = double(thread_cpu_ns() - ca);
  const double ns1 = double(report::now_ns() - a);
  const auto [nsk_wall, nsk_cpu] = bare.run();
  const double nsk = double(nsk_wall);
  r->c1.push_back(cpu1); r->ck.push_back(double(nsk_cpu)); r->cratio.push_back(cpu1 / double(nsk_cpu));
  a = report::now_ns();
  const uint64_t pa = process_cpu_ns();
  mpt::BuildStats pst;
  const mpt::Hash32 rp = mpt::build_root(in.pairs, par, &pst);
  r->threads_used.push_back(double(pst.threads_used));
  const double nsp = double(report::now_ns() - a);
  r->pcpu.push_back(double(process_cpu_ns() - pa));
  if (r1 != r->root || rp != r->root) return false;
  r->t1.push_back(ns1); r->tk.push_back(nsk); r->tp.push_back(nsp);
  r->ratio.push_back(ns1 / nsk);
  r->speedup.push_back(ns1 / nsp);
  return true;
}

// "" or the internal error.
std::string run_scratch(const MptBenchOptions& o, RepTicker& ticker, ScratchResult* r) {
  ScratchInput in;
  make_scratch_input(o.entries, &in);
  r->entries = o.entries;
  r->rss_input = rss_bytes();
  r->hwm_reset = reset_peak_rss();
  mpt::BuildOptions serial;
  serial.chunk_keys = o.chunk_keys;
  r->root = mpt::build_root(in.pairs, serial, &r->stats);
  r->rss_build = r->hwm_reset ? std::max(peak_rss_now(), r->rss_input) : r->rss_input;
  mpt::NodeCapture cap;
  {
    mpt::BuildOptions c;
    c.capture = &cap;
    c.chunk_keys = o.chunk_keys;
    if (mpt::build_root(in.pairs, c) != r->root) return "internal: capture build disagrees";
  }
  BareKeccak bare(cap);
  mpt::BuildOptions par;
  par.threads = unsigned(o.threads);
  par.chunk_keys = o.chunk_keys;
  for (uint64_t rep = 0; rep < o.reps; ++rep) {
    if (!time_scratch_rep(in, serial, par, bare, r)) return "internal: roots differ between runs";
    ticker.tick();
  }
  return "";
}

nlohmann::json scratch_json(const MptBenchOptions& o, const ScratchResult& r) {
  const size_t n = r.entries;
  nlohmann::json s;
  s["entries"] = n;
  s["chunk_keys"] = o.chunk_keys;
  s["root"] = "0x" + report::hex(r.root);
  s["leaves"] = r.stats.leaves;
  s["branches"] = r.stats.branches;
  s["extensions"] = r.stats.extensions;
  s["keccak_calls"] = r.stats.keccak_calls;
  s["keccak_bytes"] = r.stats.keccak_bytes;
  s["build_1t_ms"] = ms_summary(r.t1, "from_scratch build_1t_ms");
  s["bare_keccak_ms"] = ms_summary(r.tk, "from_scratch bare_keccak_ms");
  s["build_over_keccak"] = report::summary_json(stats::summarize(r.ratio));
  s["build_1t_cpu_ms"] = ms_summary(r.c1, "from_scratch build_1t_cpu_ms");
  s["bare_keccak_cpu_ms"] = ms_summary(r.ck, "from_scratch bare_keccak_cpu_ms");
  s["build_over_keccak_cpu"] = report::summary_json(stats::summarize(r.cratio));
  s["threads"] = o.threads;
  s["build_nt_ms"] = ms_summary(r.tp, "from_scratch build_nt_ms");
  s["build_nt_process_cpu_ms"] = ms_summary(r.pcpu, "from_scratch build_nt_process_cpu_ms");
  s["build_nt_threads_used"] = report::summary_json(stats::summarize(r.threads_used));
  s["speedup_nt_over_1t"] = report::summary_json(stats::summarize(r.speedup));
  s["input_bytes"] = 88 * n;  // key 32 + value 32 + KeyValue 24
  s["peak_rss_during_build_bytes"] = r.rss_build;
  s["peak_rss_measured"] = r.hwm_reset;
  s["build_peak_extra_bytes_per_million"] = double(r.rss_build - r.rss_input) * 1e6 / double(n);
  return s;
}

void print_scratch(const MptBenchOptions& o, const ScratchResult& r) {
  const auto S1 = stats::summarize(r.t1), SK = stats::summarize(r.tk), SP = stats::summarize(r.tp);
  const auto R = stats::summarize(r.ratio), SU = stats::summarize(r.speedup);
  std::printf("from-scratch root, %zu secure entries (keccak %s): root 0x%s\n", r.entries,
              st::kernels::keccak256_kernel_name(), report::hex(r.root).c_str());
  std::printf("  nodes: %llu leaves, %llu branches, %llu extensions; %llu keccak calls, %.1f MB hashed\n",
              (unsigned long long)r.stats.leaves, (unsigned long long)r.stats.branches, (unsigned long long)r.stats.extensions,
              (unsigned long long)r.stats.keccak_calls, double(r.stats.keccak_bytes) / 1e6);
  std::printf("  build, 1 thread     %8.1f ms  (min %.1f, max %.1f)\n", S1.median * 1e-6, S1.min * 1e-6, S1.max * 1e-6);
  std::printf("  bare keccak, same   %8.1f ms  (min %.1f, max %.1f)\n", SK.median * 1e-6, SK.min * 1e-6, SK.max * 1e-6);
  std::printf("  build / keccak      %8.3f x   (min %.3f, max %.3f)   wall clock\n", R.median, R.min, R.max);
  const auto CR = stats::summarize(r.cratio), C1 = stats::summarize(r.c1), CK = stats::summarize(r.ck);
  std::printf("  thread CPU time: build %.1f ms, bare keccak %.1f ms, build / keccak %.3f x (min %.3f, max %.3f)\n",
              C1.median * 1e-6, CK.median * 1e-6, CR.median, CR.min, CR.max);
  std::printf("  build, %llu threads   %8.1f ms  (min %.1f, max %.1f); speedup %.2f x (min %.2f, max %.2f)\n",
              (unsigned long long)o.threads, SP.median * 1e-6, SP.min * 1e-6, SP.max * 1e-6, SU.median, SU.min, SU.max);
  const auto PC = stats::summarize(r.pcpu);
  std::printf("  (%llu-thread run: %.1f ms process CPU for %.1f ms wall = %.2f cores busy on average; %.0f threads built chunks)\n",
              (unsigned long long)o.threads, PC.median * 1e-6, SP.median * 1e-6, PC.median / SP.median,
              stats::summarize(r.threads_used).median);
  std::printf("  memory: input %.1f MB per million entries (88 B each); the build adds %.1f MB per million at peak%s\n",
              88.0, double(r.rss_build - r.rss_input) / double(r.entries),
              r.hwm_reset ? "" : " (peak RSS reset unsupported: not measured)");
}

// The incremental figures: per rep, the timed block (apply + root), its apply, the bare
// keccak of its dirty nodes (and of those plus the slot keys), wall and thread CPU (ns).
struct IncrementalResult {
  std::vector<double> tb, tk, ratio, dirty_nodes, calls, tapply, cb, ck, cratio, cka, crat_all, capply;
  uint64_t logged_commits = 0;
  uint64_t rss0 = 0, rss_state = 0;
};

// The state: one contract (code 0x6000) with S slots, slot i = i + 1 with a 0x01 top byte.
void fill_state(const st::state::Address& contract, size_t S, mpt::MptState* state) {
  st::state::StateDiff d;
  d.accounts.emplace_back();
  d.accounts[0].address = contract;
  d.accounts[0].code = std::vector<uint8_t>{0x60, 0x00};
  d.accounts[0].storage_writes.resize(S);
  for (size_t i = 0; i < S; ++i) {
    st::state::Hash32 slot{}, v{};
    for (int b = 0; b < 8; ++b) { slot[31 - b] = uint8_t(uint64_t(i) >> (8 * b)); v[31 - b] = uint8_t(uint64_t(i + 1) >> (8 * b)); }
    v[0] = 0x01;
    d.accounts[0].storage_writes[i] = {slot, v};
  }
  state->apply(d);
  state->root();
}

// A block writing the slots `which` to random 32-byte values whose first byte is tag
// (nonzero, 32 bytes: same encoding sizes in every block).
st::state::StateDiff make_block(const st::state::Address& contract, const std::vector<uint64_t>& which, uint8_t tag,
                                std::mt19937_64& rng) {
  st::state::StateDiff d;
  d.accounts.emplace_back();
  d.accounts[0].address = contract;
  for (uint64_t i : which) {
    st::state::Hash32 slot{}, v{};
    for (int b = 0; b < 8; ++b) slot[31 - b] = uint8_t(i >> (8 * b));
    for (auto& x : v) x = uint8_t(rng());
    v[0] = tag;
    d.accounts[0].storage_writes.emplace_back(slot, v);
  }
  return d;
}

// W distinct random slots of S.
std::vector<uint64_t> pick_slots(size_t S, size_t W, std::mt19937_64& rng) {
  std::vector<uint64_t> which;
  std::vector<uint8_t> seen(S, 0);
  while (which.size() < W) {
    const uint64_t i = rng() % S;
    if (!seen[i]) { seen[i] = 1; which.push_back(i); }
  }
  return which;
}

// One rep: the timed block and the untimed capture block write the same slots (cold: timed
// first; --warm: capture first).
void time_incremental_rep(const MptBenchOptions& o, const st::state::Address& contract, std::mt19937_64& rng,
                          mpt::MptState& state, IncrementalResult* r) {
  const std::vector<uint64_t> which = pick_slots(o.slots, o.writes, rng);
  const auto d1 = make_block(contract, which, 0x02, rng), d2 = make_block(contract, which, 0x03, rng);
  const st::state::StateDiff& timed = o.warm ? d2 : d1;
  mpt::NodeCapture cap;
  mpt::CommitStats cs;
  auto capture_block = [&](const st::state::StateDiff& d) {
    state.apply(d);
    state.root(&cs, &cap);
  };
  if (o.warm) capture_block(d1);
  const uint64_t a = report::now_ns(), ca = thread_cpu_ns();
  state.apply(timed);
  const uint64_t b = report::now_ns();
  r->capply.push_back(double(thread_cpu_ns() - ca));
  (void)state.root();
  const double ns = double(report::now_ns() - a), cpu = double(thread_cpu_ns() - ca);
  if (!o.warm) capture_block(d2);
  BareKeccak bare(cap), bare_all(cap);
  std::vector<uint8_t> slot_bytes;
  for (const auto& w : timed.accounts[0].storage_writes) slot_bytes.insert(slot_bytes.end(), w.first.begin(), w.first.end());
  bare_all.add(slot_bytes.data(), timed.accounts[0].storage_writes.size(), 32);
  r->tapply.push_back(double(b - a));
  const auto [nsk_wall, nsk_cpu] = bare.run();
  const double nsk = double(nsk_wall);
  r->tb.push_back(ns); r->tk.push_back(nsk); r->ratio.push_back(ns / nsk);
  r->cb.push_back(cpu); r->ck.push_back(double(nsk_cpu)); r->cratio.push_back(cpu / double(nsk_cpu));
  const auto [nsa_wall, nsa_cpu] = bare_all.run();
  (void)nsa_wall;
  r->cka.push_back(double(nsa_cpu));
  r->crat_all.push_back(cpu / double(nsa_cpu));
  r->dirty_nodes.push_back(double(cs.nodes_rehashed));
  r->calls.push_back(double(cs.keccak_calls));
  r->logged_commits += cs.from_batch_log;
}

void run_incremental(const MptBenchOptions& o, RepTicker& ticker, IncrementalResult* r) {
  st::state::Address contract{};
  contract[0] = 0xc0;
  mpt::MptState state;
  r->rss0 = rss_bytes();
  fill_state(contract, o.slots, &state);
  r->rss_state = rss_bytes();
  std::mt19937_64 rng(o.seed);
  for (uint64_t rep = 0; rep < o.reps; ++rep) {
    time_incremental_rep(o, contract, rng, state, r);
    ticker.tick();
  }
}

nlohmann::json incremental_json(const MptBenchOptions& o, const IncrementalResult& r) {
  nlohmann::json s;
  s["slots"] = o.slots;
  s["writes"] = o.writes;
  s["timed_block_paths"] = o.warm ? "warm" : "cold";
  s["dirty_nodes"] = report::summary_json(stats::summarize(r.dirty_nodes));
  s["dirty_keccak_calls"] = report::summary_json(stats::summarize(r.calls));
  s["storage_commits_from_batch_log"] = r.logged_commits;  // of the untimed capture blocks (storage + account trie)
  s["block_ms"] = ms_summary(r.tb, "incremental block_ms");
  s["apply_ms"] = ms_summary(r.tapply, "incremental apply_ms");
  s["apply_cpu_ms"] = ms_summary(r.capply, "incremental apply_cpu_ms");
  s["bare_keccak_ms"] = ms_summary(r.tk, "incremental bare_keccak_ms");
  s["block_over_keccak"] = report::summary_json(stats::summarize(r.ratio));
  s["block_cpu_ms"] = ms_summary(r.cb, "incremental block_cpu_ms");
  s["bare_keccak_cpu_ms"] = ms_summary(r.ck, "incremental bare_keccak_cpu_ms");
  s["block_over_keccak_cpu"] = report::summary_json(stats::summarize(r.cratio));
  s["bare_keccak_with_slot_keys_cpu_ms"] = ms_summary(r.cka, "incremental bare_keccak_with_slot_keys_cpu_ms");
  s["block_over_keccak_with_slot_keys_cpu"] = report::summary_json(stats::summarize(r.crat_all));
  s["trie_resident_bytes_per_million_slots"] = double(r.rss_state - r.rss0) * 1e6 / double(o.slots);
  return s;
}

void print_incremental(const MptBenchOptions& o, const IncrementalResult& r) {
  const auto B = stats::summarize(r.tb), K = stats::summarize(r.tk), R = stats::summarize(r.ratio);
  std::printf("incremental: %zu slot updates into %zu slots (one contract, state model; %s paths)\n", size_t(o.writes),
              size_t(o.slots), o.warm ? "warm" : "cold");
  std::printf("  dirty nodes %.0f, keccak calls %.0f (medians); %llu of %llu capture-block commits took the batch log\n",
              stats::summarize(r.dirty_nodes).median, stats::summarize(r.calls).median, (unsigned long long)r.logged_commits,
              (unsigned long long)(2 * o.reps));
  std::printf("  apply + root        %8.2f ms  (min %.2f, max %.2f)\n", B.median * 1e-6, B.min * 1e-6, B.max * 1e-6);
  const auto A = stats::summarize(r.tapply);
  std::printf("    of which apply    %8.2f ms  (min %.2f, max %.2f)\n", A.median * 1e-6, A.min * 1e-6, A.max * 1e-6);
  std::printf("  bare keccak, dirty  %8.2f ms  (min %.2f, max %.2f)\n", K.median * 1e-6, K.min * 1e-6, K.max * 1e-6);
  std::printf("  block / keccak      %8.3f x   (min %.3f, max %.3f)   wall clock\n", R.median, R.min, R.max);
  const auto CR = stats::summarize(r.cratio), CB = stats::summarize(r.cb), CK = stats::summarize(r.ck);
  std::printf("  thread CPU time: block %.2f ms (apply %.2f), bare keccak %.2f ms, block / keccak %.3f x (min %.3f, max %.3f)\n",
              CB.median * 1e-6, stats::summarize(r.capply).median * 1e-6, CK.median * 1e-6, CR.median, CR.min, CR.max);
  const auto CA = stats::summarize(r.cka), RA = stats::summarize(r.crat_all);
  std::printf("  bare keccak of the dirty nodes + the %zu slot keys: %.2f ms CPU; block / that %.3f x (min %.3f, max %.3f)\n",
              size_t(o.writes), CA.median * 1e-6, RA.median, RA.min, RA.max);
  std::printf("  mutable trie: %.1f MB resident per million slots\n", double(r.rss_state - r.rss0) / double(o.slots));
}

void declare_options(Args& args) {
  args.option_u64("entries", "N", "from-scratch: secure-trie entries", 1, 100000000, 1000000);
  args.option_u64("slots", "S", "incremental: storage slots in the state", 1, 100000000, 1000000);
  args.option_u64("writes", "W", "incremental: slot updates per block (at most --slots)", 1, 100000000, 4096);
  add_reps(args, "repetitions of every timing", 5);
  args.option_u64("threads", "T", "the parallel from-scratch run's thread count", 1, 1024, 2);
  args.pin_option("threads");
  add_seed(args, "random seed of the incremental blocks", 1, "N");
  args.option_u64("chunk-keys", "K", "builder: ranges up to K keys are built by one serial stack pass", 1, 100000000, 4096);
  args.flag("skip-scratch", "skip the from-scratch figures");
  args.flag("skip-incremental", "skip the incremental figures");
  args.flag("warm", "incremental: time a block over the slots the untimed capture block just wrote (warm paths)");
  add_json(args, "print one JSON object");
}

MptBenchOptions options_of(const Args& args) {
  MptBenchOptions o;
  o.entries = args.get_u64("entries");
  o.slots = args.get_u64("slots");
  o.writes = args.get_u64("writes");
  o.reps = args.get_u64("reps");
  o.threads = args.get_u64("threads");
  o.seed = args.get_u64("seed");
  o.chunk_keys = args.get_u64("chunk-keys");
  o.scratch = !args.given("skip-scratch");
  o.incremental = !args.given("skip-incremental");
  o.warm = args.given("warm");
  o.json = args.given("json");
  return o;
}

}  // namespace

int cmd_mpt_bench(int argc, char** argv) {
  Args args("statetree mpt-bench", "MPT from-scratch and incremental root timings vs bare Keccak of the same nodes.");
  declare_options(args);
  if (auto rc = args.parse_or_exit(argc, argv)) return *rc;
  if (!args.positional().empty()) return fail("unexpected argument '" + args.positional()[0] + "'");
  const MptBenchOptions o = options_of(args);
  if (o.writes > o.slots)
    return fail("--writes (" + std::to_string(o.writes) + ") must not exceed --slots (" + std::to_string(o.slots) + ")");
  nlohmann::json j;
  j["command"] = "mpt-bench";
  j["tree"] = "mpt";
  j["keccak_kernel"] = st::kernels::keccak256_kernel_name();
  j["reps"] = o.reps;
  j["pinned_cpus"] = args.pin_cpus();
  report::stamp(j);
  report::Progress progress("mpt-bench", o.reps * ((o.scratch ? 1 : 0) + (o.incremental ? 1 : 0)));
  RepTicker ticker{progress, !o.json};
  if (o.scratch) {
    ScratchResult r;
    if (std::string e = run_scratch(o, ticker, &r); !e.empty()) return fail(e);
    j["from_scratch"] = scratch_json(o, r);
    j["root"] = j["from_scratch"]["root"];  // the from-scratch trie's root
    progress.finish();
    if (!o.json) print_scratch(o, r);
  }
  if (o.incremental) {
    IncrementalResult r;
    run_incremental(o, ticker, &r);
    j["incremental"] = incremental_json(o, r);
    progress.finish();
    if (!o.json) print_incremental(o, r);
  }
  if (!j.contains("root")) {
    j["root"] = nullptr;
    j["root_note"] = "--skip-scratch: the from-scratch root was not computed";
  }
  if (o.json) std::printf("%s\n", j.dump().c_str());
  else std::printf("%s\n", report::stamp_line().c_str());
  return 0;
}

}  // namespace st::cli
