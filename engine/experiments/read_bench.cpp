// read_bench: the read-bench protocol (see the header): sampling, the checked batched
// lookups, one key at a time, and the raw page-read references.
#include "engine/experiments/read_bench.h"

#include <algorithm>
#include <memory>
#include <span>
#include <unordered_map>
#include <unordered_set>

#include "engine/persist/snapshot/db.h"
#include "engine/stats/summary.h"
#include "kernels/keccak256.h"
#include "kernels/support/splitmix64.h"
#include "kernels/support/clock.h"

namespace st::experiments {
namespace {

template <class Bytes>
std::string hex0x(const Bytes& b) {
  static const char* digits = "0123456789abcdef";
  std::string s = "0x";
  for (uint8_t c : b) s += digits[c >> 4], s += digits[c & 15];
  return s;
}

// An account's fields as the source states them (what a lookup must return; the MPT's
// storage root is not checked: it would need the whole storage).
struct WantAccount {
  uint64_t nonce = 0;
  state::U256 balance{};
  state::Hash32 code_hash{};
  uint64_t code_size = 0;
};
WantAccount want_account(const state::StateSource& src, uint64_t i) {
  thread_local state::AccountRecord rec;
  src.account_fields(i, &rec);
  WantAccount w{rec.nonce, rec.balance, {}, rec.code.size()};
  kernels::keccak256(rec.code.data(), rec.code.size(), w.code_hash.data());
  return w;
}
// "" when got matches want; else which field differs.
std::string account_mismatch(const persist::AccountInfo& got, const WantAccount& want, bool with_code_size) {
  if (got.nonce != want.nonce) return "nonce " + std::to_string(got.nonce) + ", the source says " + std::to_string(want.nonce);
  if (got.balance != want.balance) return "balance " + hex0x(got.balance) + ", the source says " + hex0x(want.balance);
  if (got.code_hash != want.code_hash) return "code hash " + hex0x(got.code_hash) + ", the source says " + hex0x(want.code_hash);
  if (with_code_size && got.code_size != want.code_size)
    return "code size " + std::to_string(got.code_size) + ", the source says " + std::to_string(want.code_size);
  return "";
}

// Checks a batch's answers against the source; the accounts' fields are computed once, at
// construction (outside the timing).
class AnswerCheck {
 public:
  AnswerCheck(const state::StateSource& src, const KeySample& sample, bool slot_keys_carry_account, bool bintrie)
      : src_(src), sample_(sample), carry_(slot_keys_carry_account), bintrie_(bintrie) {
    for (const auto& [i, j] : sample.where)
      if (j == kAccountKey || carry_) want_.try_emplace(i, want_account(src, i));
  }
  // "" = all as the source says; else the first wrong or missing answer.
  std::string operator()(const std::vector<persist::LookupAnswer>& answers, uint64_t n) const {
    if (answers.size() != n) return "lookup returned " + std::to_string(answers.size()) + " answers for " + std::to_string(n) + " keys";
    for (uint64_t q = 0; q < n; ++q) {
      const auto [i, j] = sample_.where[q];
      const bool account_key = j == kAccountKey;
      const state::StateKey& key = sample_.keys[q];
      if (account_key || carry_) {
        const std::string what = "account " + hex0x(key.address) + (account_key ? "" : " of a slot key");
        if (!answers[q].account.exists) return what + ": not found";
        if (std::string e = account_mismatch(answers[q].account, want_.at(i), bintrie_); !e.empty()) return what + ": " + e;
      }
      if (account_key) continue;
      const auto want = src_.slot_value(i, j);
      if (!answers[q].slot_value) return "key " + hex0x(key.address) + " slot " + hex0x(*key.slot) + ": not found";
      if (!want || *answers[q].slot_value != *want)
        return "key " + hex0x(key.address) + " slot " + hex0x(*key.slot) + ": value " + hex0x(*answers[q].slot_value) +
               " differs from the source's";
    }
    return "";
  }

 private:
  const state::StateSource& src_;
  const KeySample& sample_;
  bool carry_, bintrie_;
  std::unordered_map<uint64_t, WantAccount> want_;
};

// One run of the protocol: the options, the open database, the sample, and what is measured.
class ReadBench {
 public:
  ReadBench(const ReadBenchOptions& o, const persist::TreeDb& db, const KeySample& sample, const AnswerCheck& check,
            ReadBenchResult* out)
      : o_(o), db_(db), sample_(sample), check_(check), out_(out), k_(sample.keys.size()) {}

  ReadBenchStatus run() {
    const uint64_t steps = o_.reps * (o_.queue_depths.size() + 1);
    uint64_t step = 0;
    for (uint64_t rep = 0; rep < o_.reps; ++rep) {
      // One key at a time first (its mean per lookup is the speedup's numerator).
      if (ReadBenchStatus s = single_keys(rep); !s.ok()) return s;
      if (o_.progress) o_.progress(++step, steps);
      for (size_t qi = 0; qi < o_.queue_depths.size(); ++qi) {
        if (ReadBenchStatus s = at_queue_depth(rep, qi); !s.ok()) return s;
        if (o_.progress) o_.progress(++step, steps);
      }
    }
    return {};
  }

 private:
  // The database reopened at queue depth qd over db_'s state; with options.snapshot its
  // lookups go to the flat snapshot (snapshot/db.h).
  io::Status open_at(uint32_t qd, std::unique_ptr<persist::TreeDb>* d) {
    if (io::Status s = persist::open_any_db(o_.dir, qd, d, o_.slot_accounts, &db_); !s.ok()) return s;
    if (o_.snapshot) return persist::open_snapshot_view(std::move(*d), o_.slot_accounts, d);
    return {};
  }

  // [cold: evict] -> warm up the I/O path.
  io::Status prepare(persist::TreeDb& d, uint64_t warm_seed) {
    if (o_.cold)
      if (io::Status s = persist::make_db_cold(d, true, &out_->cold); !s.ok()) return s;
    return persist::warm_up_db(d, o_.warmup_reads, warm_seed, &out_->warm_last);
  }

  ReadBenchStatus single_keys(uint64_t rep) {
    const uint64_t seed = o_.seed, n = out_->single_keys;
    std::unique_ptr<persist::TreeDb> d;
    if (io::Status s = open_at(1, &d); !s.ok()) return {s};
    if (io::Status s = prepare(*d, seed * 31 + rep); !s.ok()) return {s};
    std::vector<double> lat_us;
    uint64_t reads = 0;
    std::vector<persist::LookupAnswer> ans;
    for (uint64_t q = 0; q < n; ++q) {
      persist::LookupStats st;
      const uint64_t t0 = monotonic_ns();
      io::Status s = d->lookup(std::span<const state::StateKey>(&sample_.keys[q], 1), &ans, &st, true);
      lat_us.push_back(double(monotonic_ns() - t0) / 1e3);
      if (!s.ok()) return {s, true};
      reads += st.page_reads;
    }
    SingleRuns& r = out_->single;
    double sum = 0;
    for (double l : lat_us) sum += l;
    r.mean_us.push_back(sum / double(n));
    r.median_us.push_back(stats::summarize(lat_us).median);
    const stats::Latency sl = stats::latency(lat_us);
    r.p90_us.push_back(sl.p90);
    r.p99_us.push_back(sl.p99);
    r.p999_us.push_back(sl.p999);
    r.reads_per_lookup.push_back(double(reads) / double(n));
    if (out_->arena && reads) {
      if (io::Status s = prepare(*d, seed * 37 + rep); !s.ok()) return {s};
      persist::RawReadFigures raw;
      if (io::Status s = persist::raw_page_reads(*d, reads, 1, seed * 41 + rep, &raw); !s.ok()) return {s};
      r.raw_qd1_p50_us.push_back(raw.latency_us_percentile(0.5));
      r.latency_over_raw_qd1.push_back(r.median_us.back() / (r.raw_qd1_p50_us.back() * r.reads_per_lookup.back()));
    }
    return {};
  }

  io::Status batched(persist::TreeDb& d, uint64_t rep, size_t qi, BatchedRun* b) {
    if (io::Status s = prepare(d, o_.seed * 43 + rep * 101 + qi); !s.ok()) return s;
    std::vector<persist::LookupAnswer> ans;
    const uint64_t t0 = monotonic_ns();
    io::Status s = d.lookup(sample_.keys, &ans, &b->stats, true);
    b->wall_us = double(monotonic_ns() - t0) / 1e3;
    if (!s.ok()) return s;
    if (std::string e = check_(ans, k_); !e.empty()) return io::Status(io::Errc::mismatch, "wrong answer: " + e + o_.wrong_answer_note);
    return {};
  }

  io::Status raw(persist::TreeDb& d, uint64_t rep, size_t qi, uint64_t page_reads, RawRun* rr) {
    if (io::Status s = prepare(d, o_.seed * 47 + rep * 101 + qi); !s.ok()) return s;
    persist::RawReadFigures r;
    const uint32_t qd = o_.queue_depths[qi];
    if (io::Status s = persist::raw_page_reads(d, page_reads, qd, o_.seed * 53 + rep * 101 + qi, &r); !s.ok()) return s;
    const stats::Latency l = stats::latency(r.latency_ns);
    const uint32_t page_size = db_.manifest().params.page_size;
    *rr = {r.us_per_read(), l.p50 / 1e3, l.p90 / 1e3, l.p99 / 1e3, l.p999 / 1e3,
           r.wall_ns ? double(r.reads) * page_size / (double(r.wall_ns) * 1e-9) / 1e6 : 0.0, r.reads};
    return {};
  }

  ReadBenchStatus at_queue_depth(uint64_t rep, size_t qi) {
    QueueDepthRuns& runs = out_->by_qd[qi];
    const bool arena = out_->arena;
    std::unique_ptr<persist::TreeDb> d;
    if (io::Status s = open_at(runs.qd, &d); !s.ok()) return {s};
    BatchedRun b;
    RawRun rr;
    // The raw run needs the batch's page-read count: on odd reps it runs first with the
    // count of the previous rep's batch at this QD (the same keys: the same count).
    const bool raw_first = arena && rep % 2 == 1 && !runs.batched.empty();
    if (raw_first) b.stats.page_reads = runs.batched.back().stats.page_reads;
    if (raw_first)
      if (io::Status s = raw(*d, rep, qi, b.stats.page_reads, &rr); !s.ok()) return {s};
    if (io::Status s = batched(*d, rep, qi, &b); !s.ok()) return {s, true};
    if (arena && !raw_first && b.stats.page_reads)
      if (io::Status s = raw(*d, rep, qi, b.stats.page_reads, &rr); !s.ok()) return {s};
    runs.batched.push_back(b);
    runs.single_over_batched.push_back(out_->single.mean_us.back() / (b.wall_us / double(k_)));
    if (arena && rr.reads) {
      runs.raw.push_back(rr);
      runs.engine_over_raw.push_back((b.wall_us / double(b.stats.page_reads)) / rr.us_per_read);
    }
    return {};
  }

  const ReadBenchOptions& o_;
  const persist::TreeDb& db_;
  const KeySample& sample_;
  const AnswerCheck& check_;
  ReadBenchResult* out_;
  const uint64_t k_;
};

}  // namespace

std::optional<std::string> sample_keys(const state::StateSource& src, uint64_t k, bool accounts_only, uint64_t seed,
                                       KeySample* out) {
  uint64_t rng = seed * 0x2545f4914f6cdd1dull + 17;
  std::unordered_set<uint64_t> seen;
  if (accounts_only) {
    const uint64_t n = src.account_count();
    if (k > n) return "--keys " + std::to_string(k) + " exceeds the " + std::to_string(n) + " accounts of the state";
    while (out->keys.size() < k) {
      const uint64_t i = st::uniform_below(rng, n);
      if (!seen.insert(i).second) continue;
      state::StateKey key{};
      if (auto sk = src.slot_key(i, 0)) {
        key.address = sk->address;
      } else {  // no storage (an EOA): its record is cheap to generate
        state::AccountRecord r;
        src.account(i, &r);
        key.address = r.address;
      }
      out->keys.push_back(key);
      out->where.push_back({i, kAccountKey});
    }
    return std::nullopt;
  }
  std::vector<std::pair<uint64_t, uint64_t>> cum;  // (slots before, account) for accounts with storage
  uint64_t total = 0;
  for (uint64_t i = 0; i < src.account_count(); ++i)
    if (const uint64_t s = src.storage_size(i)) cum.push_back({total, i}), total += s;
  if (k > total)
    return "--keys " + std::to_string(k) + " exceeds the " + std::to_string(total) +
           " storage slots of the state (use --accounts-only for account keys)";
  while (out->keys.size() < k) {
    const uint64_t s = st::uniform_below(rng, total);
    if (!seen.insert(s).second) continue;
    auto it = std::upper_bound(cum.begin(), cum.end(), std::pair<uint64_t, uint64_t>(s, ~uint64_t(0))) - 1;
    const uint64_t i = it->second, j = s - it->first;
    auto key = src.slot_key(i, j);
    if (!key) return "the source has no slot " + std::to_string(j) + " of account " + std::to_string(i);
    out->keys.push_back(*key);
    out->where.push_back({i, j});
  }
  return std::nullopt;
}

ReadBenchStatus run_read_bench(const ReadBenchOptions& options, persist::TreeDb& db,
                               const state::StateSource& src, const KeySample& sample, ReadBenchResult* out) {
  *out = ReadBenchResult{};
  const bool bintrie = db.manifest().params.tree_kind == io::TreeKind::bintrie;
  out->keys = sample.keys.size();
  out->single_keys = std::min(out->keys, options.single);
  out->arena = db.page_store() != nullptr;
  // A slot key's answer carries its account on the MPT (the walk passes through it) and on
  // the binary trie with slot_accounts.
  // From the snapshot, a slot key carries its account only with slot_accounts (both trees).
  out->slot_keys_carry_account = options.slot_accounts || (!bintrie && !options.snapshot);
  for (uint32_t qd : options.queue_depths) out->by_qd.push_back(QueueDepthRuns{qd, {}, {}, {}, {}});
  const AnswerCheck check(src, sample, out->slot_keys_carry_account, bintrie);
  return ReadBench(options, db, sample, check, out).run();
}

}  // namespace st::experiments
