// mpt_bench: the MPT figures' protocol (see mpt_bench.h).
#include "engine/experiments/mpt_bench.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <random>

#include "engine/mpt/state.h"
#include "kernels/keccak256.h"
#include "kernels/support/clock.h"

namespace st::experiments {

namespace {

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
    const uint64_t t0 = monotonic_ns(), c0 = thread_cpu_ns();
    for (size_t i = 0; i < msgs.size(); i += 4096) {
      const size_t n = std::min<size_t>(4096, msgs.size() - i);
      st::kernels::keccak256_batch(msgs.data() + i, lens.data() + i, out.data(), n);
    }
    return {monotonic_ns() - t0, thread_cpu_ns() - c0};
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

// One rep of the timed from-scratch runs; false when a root differs from r->root.
bool time_scratch_rep(const ScratchInput& in, const mpt::BuildOptions& serial, const mpt::BuildOptions& par,
                      BareKeccak& bare, MptScratchResult* r) {
  uint64_t a = monotonic_ns();
  const uint64_t ca = thread_cpu_ns();
  const mpt::Hash32 r1 = mpt::build_root(in.pairs, serial);
  const double cpu1 = double(thread_cpu_ns() - ca);
  const double ns1 = double(monotonic_ns() - a);
  const auto [nsk_wall, nsk_cpu] = bare.run();
  const double nsk = double(nsk_wall);
  r->c1.push_back(cpu1); r->ck.push_back(double(nsk_cpu)); r->cratio.push_back(cpu1 / double(nsk_cpu));
  a = monotonic_ns();
  const uint64_t pa = process_cpu_ns();
  mpt::BuildStats pst;
  const mpt::Hash32 rp = mpt::build_root(in.pairs, par, &pst);
  r->threads_used.push_back(double(pst.threads_used));
  const double nsp = double(monotonic_ns() - a);
  r->pcpu.push_back(double(process_cpu_ns() - pa));
  if (r1 != r->root || rp != r->root) return false;
  r->t1.push_back(ns1); r->tk.push_back(nsk); r->tp.push_back(nsp);
  r->ratio.push_back(ns1 / nsk);
  r->speedup.push_back(ns1 / nsp);
  return true;
}

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
                          mpt::MptState& state, MptIncrementalResult* r) {
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
  const uint64_t a = monotonic_ns(), ca = thread_cpu_ns();
  state.apply(timed);
  const uint64_t b = monotonic_ns();
  r->capply.push_back(double(thread_cpu_ns() - ca));
  (void)state.root();
  const double ns = double(monotonic_ns() - a), cpu = double(thread_cpu_ns() - ca);
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

}  // namespace

// "" or the internal error.
std::string run_mpt_scratch(const MptBenchOptions& o, MptScratchResult* r) {
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
    if (o.on_rep) o.on_rep();
  }
  return "";
}

void run_mpt_incremental(const MptBenchOptions& o, MptIncrementalResult* r) {
  st::state::Address contract{};
  contract[0] = 0xc0;
  mpt::MptState state;
  r->rss0 = rss_bytes();
  fill_state(contract, o.slots, &state);
  r->rss_state = rss_bytes();
  std::mt19937_64 rng(o.seed);
  for (uint64_t rep = 0; rep < o.reps; ++rep) {
    time_incremental_rep(o, contract, rng, state, r);
    if (o.on_rep) o.on_rep();
  }
}


}  // namespace st::experiments
