// cli_read_bench: `statetree read-bench`: lookups of K random EXISTING keys of a database
// (sampled from the source the database names: slot_key(i, j) of the synthetic state or
// the allocation), and what they cost against the device:
//
//   for each repetition, for each queue depth Q (the database reopened at Q):
//     batched   [--cold: evict] -> warm up the I/O path -> ONE TreeDb::lookup of all K keys
//               (arena: streamed, each key's walk advancing as its pages land; RocksDB:
//               level by level, one MultiGet per depth)
//     raw       [--cold: evict] -> warm up -> the same number of page reads as the batch
//               made, uniformly random pages of the arena, raw io_uring at Q
//               (engine/persist/cold_reads.h); order batched/raw alternates by repetition
//   then one key at a time (min(K, --single) keys, each its own lookup, so QD1), and the
//   raw QD1 reference with the same number of page reads.
//
// Reported per lookup: latency (batched: wall / K; one at a time: median, p99), page reads,
// bytes, rounds and reads per round; and the ratios the docs give targets for:
//   engine/raw   (batched wall / its page reads) / (raw wall / raw reads) at the same QD
//   speedup      (one-at-a-time mean per lookup) / (batched per lookup)
//   single/raw   (one-at-a-time median latency) / (raw QD1 median latency x page reads per lookup)
// Figures are medians over reps with min/max. RocksDB databases: the same lookups, no raw
// reference (no page file). Every batched answer is checked against the source (values of
// all K slots; every account returned: nonce, balance, code hash, and the binary trie's code
// size): a wrong or missing value is exit 1.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/persist/cold_reads.h"
#include "engine/stats/summary.h"
#include "kernels/keccak256.h"
#include "workloads/cli_args.h"
#include "workloads/commands.h"
#include "workloads/persist_cli.h"
#include "workloads/report.h"

namespace st::cli {
namespace {
constexpr const char* kCmd = "read-bench";
int fail(const std::string& m, int code = 2) { return persist_fail(kCmd, m, code); }

uint64_t splitmix(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
uint64_t below(uint64_t& x, uint64_t n) { return uint64_t((unsigned __int128)splitmix(x) * n >> 64); }

nlohmann::json summary(const std::vector<double>& v) { return report::summary_json(stats::summarize(v)); }
double median(const std::vector<double>& v) { return stats::summarize(v).median; }

// An account's fields as the source states them (what a lookup must return; the MPT's
// storage root is not checked: it would need the whole storage).
struct WantAccount {
  uint64_t nonce = 0;
  state::U256 balance{};
  state::Bytes32 code_hash{};
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

struct Sample {
  std::vector<state::StateKey> keys;
  std::vector<std::pair<uint64_t, uint64_t>> where;  // (account i, slot j) or (i, ~0)
};

// K distinct existing keys: slots uniformly over all slots of the state, or accounts.
std::optional<std::string> sample_keys(const state::StateSource& src, uint64_t k, bool accounts_only, uint64_t seed,
                                       Sample* out) {
  uint64_t rng = seed * 0x2545f4914f6cdd1dull + 17;
  std::unordered_set<uint64_t> seen;
  if (accounts_only) {
    const uint64_t n = src.account_count();
    if (k > n) return "--keys " + std::to_string(k) + " exceeds the " + std::to_string(n) + " accounts of the state";
    while (out->keys.size() < k) {
      const uint64_t i = below(rng, n);
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
      out->where.push_back({i, ~0ull});
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
    const uint64_t s = below(rng, total);
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

struct BatchedRun {
  double wall_us = 0;
  persist::LookupStats stats;
};
struct RawRun {
  double us_per_read = 0, p50_us = 0, p90_us = 0, p99_us = 0, p999_us = 0, mb_per_s = 0;
  uint64_t reads = 0;
};

}  // namespace

int cmd_read_bench(int argc, char** argv) {
  Args args("statetree read-bench",
            "Lookups of K random existing keys of a database: batched (streamed) at each queue depth, one key at a\n"
            "time, and the raw page-read reference at the same queue depth (arena): latency, I/Os and bytes per lookup.");
  args.option("db", "DIR", "database directory (built by statetree build)");
  args.option_u64("keys", "K", "random existing keys per batch (storage slots unless --accounts-only)", 1, 10000000);
  args.option_u64_list("qd", "LIST", "queue depths, comma-separated (the database is reopened at each)", 1, 4096, "1,8,32");
  args.option_u64("reps", "R", "repetitions (median, min, max reported)", 1, 1000, 3);
  args.option_u64("seed", "X", "key sample seed", 0, UINT64_MAX, 1);
  args.option_u64("single", "N", "one-at-a-time lookups: the first min(K, N) keys of the sample", 1, 10000000, 256);
  args.option_u64("warmup", "W", "raw QD1 reads that wake the I/O path before each timed run", 0, 100000, 32);
  args.pin_option();
  args.flag("cold", "evict the database files before each timed run: drop_caches when permitted (root), else posix_fadvise");
  args.flag("accounts-only", "sample account keys instead of storage slots");
  args.flag("slot-accounts", "binary trie: each slot key also fetches its account, as `get` does (default: the slot alone)");
  args.flag("json", "print one JSON object on stdout");
  args.require("db");
  args.require("keys");
  if (auto rc = args.parse_or_exit(argc, argv)) return *rc;
  const std::string dir = args.str("db");
  const uint64_t keys_n = args.get_u64("keys");
  const std::vector<uint64_t> qds = args.get_u64_list("qd");
  const uint64_t reps = args.get_u64("reps");
  const uint64_t seed = args.get_u64("seed");
  const uint64_t single_n = args.get_u64("single");
  const uint64_t warmup = args.get_u64("warmup");
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return fail("no database at " + dir + " (not a directory)");
  const bool json = args.given("json"), cold = args.given("cold"), accounts_only = args.given("accounts-only");
  const bool slot_accounts = args.given("slot-accounts");

  std::unique_ptr<persist::TreeDb> db;
  if (io::Status s = persist::open_any_db(dir, uint32_t(qds.front()), &db); !s.ok())
    return fail(s.message(), exit_code_for(s));
  const io::Manifest manifest = db->manifest();
  const bool arena = db->page_store() != nullptr;
  LoadedSource src;
  if (auto e = load_source(db->source_spec(), &src)) return fail(*e);
  const bool unhashed_source = source_unhashed_alloc(db->source_spec());
  const std::string root_hex = hex0x(manifest.root_hash);
  // db stays open: every reopen below reads its state (the source's), even while a commit runs.

  Sample sample;
  if (auto e = sample_keys(*src.source, keys_n, accounts_only, seed, &sample)) return fail(*e);
  const uint64_t k = sample.keys.size();
  const uint64_t single_k = std::min(k, single_n);

  const bool bintrie = manifest.params.tree_kind == io::TreeKind::bintrie;
  // A slot key's answer carries its account on the MPT (the walk passes through it) and on
  // the binary trie with --slot-accounts.
  const bool slot_keys_carry_account = slot_accounts || !bintrie;
  // The source's fields of every account an answer carries (computed once, outside the timing).
  std::unordered_map<uint64_t, WantAccount> want_accounts;
  for (const auto& [i, j] : sample.where)
    if (j == ~0ull || slot_keys_carry_account) want_accounts.try_emplace(i, want_account(*src.source, i));

  // Checks the answers of a batch against the source; "" = all as the source says.
  auto check = [&](const std::vector<persist::LookupAnswer>& answers, uint64_t n) -> std::string {
    if (answers.size() != n) return "lookup returned " + std::to_string(answers.size()) + " answers for " + std::to_string(n) + " keys";
    for (uint64_t q = 0; q < n; ++q) {
      const auto [i, j] = sample.where[q];
      const bool account_key = j == ~0ull;
      if (account_key || slot_keys_carry_account) {
        const std::string what = "account " + hex0x(sample.keys[q].address) + (account_key ? "" : " of a slot key");
        if (!answers[q].account.exists) return what + ": not found";
        if (std::string e = account_mismatch(answers[q].account, want_accounts.at(i), bintrie); !e.empty())
          return what + ": " + e;
      }
      if (account_key) continue;
      const auto want = src.source->slot_value(i, j);
      if (!answers[q].slot_value) return "key " + hex0x(sample.keys[q].address) + " slot " + hex0x(*sample.keys[q].slot) + ": not found";
      if (!want || *answers[q].slot_value != *want)
        return "key " + hex0x(sample.keys[q].address) + " slot " + hex0x(*sample.keys[q].slot) + ": value " +
               hex0x(*answers[q].slot_value) + " differs from the source's";
    }
    return "";
  };

  persist::ColdInfo cold_info;
  persist::WarmUpInfo warm;
  auto prepare = [&](persist::TreeDb& d, uint64_t warm_seed) -> io::Status {
    if (cold)
      if (io::Status s = persist::make_db_cold(d, true, &cold_info); !s.ok()) return s;
    return persist::warm_up_db(d, uint32_t(warmup), warm_seed, &warm);
  };

  std::vector<std::vector<BatchedRun>> batched(qds.size());
  std::vector<std::vector<RawRun>> raw(qds.size());
  std::vector<double> single_median_us, single_p90_us, single_p99_us, single_p999_us, single_mean_us,
      single_reads_per_lookup, raw1_p50_us, single_over_raw;
  std::vector<std::vector<double>> speedup(qds.size()), engine_over_raw(qds.size());
  ProgressBar bar("read-bench", !json);
  auto progress = bar.fn();
  const uint64_t steps = reps * (qds.size() + 1);
  uint64_t step = 0;
  for (uint64_t rep = 0; rep < reps; ++rep) {
    // One key at a time first (its mean per lookup is the speedup's numerator).
    std::vector<double> lat_us;
    uint64_t single_reads = 0;
    {
      std::unique_ptr<persist::TreeDb> d;
      if (io::Status s = persist::open_any_db(dir, 1, &d, slot_accounts, db.get()); !s.ok()) return fail(s.message(), 1);
      if (io::Status s = prepare(*d, seed * 31 + rep); !s.ok()) return fail(s.message(), 1);
      std::vector<persist::LookupAnswer> ans;
      for (uint64_t q = 0; q < single_k; ++q) {
        persist::LookupStats st;
        const uint64_t t0 = report::now_ns();
        io::Status s = d->lookup(std::span<const state::StateKey>(&sample.keys[q], 1), &ans, &st, true);
        lat_us.push_back(double(report::now_ns() - t0) / 1e3);
        if (!s.ok()) return fail(s.message(), s.code() == io::Errc::corrupt_page ? 2 : 1);
        single_reads += st.page_reads;
      }
      double sum = 0;
      for (double l : lat_us) sum += l;
      single_mean_us.push_back(sum / double(single_k));
      single_median_us.push_back(median(lat_us));
      const stats::Latency sl = stats::latency(lat_us);
      single_p90_us.push_back(sl.p90);
      single_p99_us.push_back(sl.p99);
      single_p999_us.push_back(sl.p999);
      single_reads_per_lookup.push_back(double(single_reads) / double(single_k));
      if (arena && single_reads) {
        if (io::Status s = prepare(*d, seed * 37 + rep); !s.ok()) return fail(s.message(), 1);
        persist::RawReadFigures r;
        if (io::Status s = persist::raw_page_reads(*d, single_reads, 1, seed * 41 + rep, &r); !s.ok())
          return fail(s.message(), 1);
        raw1_p50_us.push_back(r.latency_us_percentile(0.5));
        single_over_raw.push_back(single_median_us.back() / (raw1_p50_us.back() * single_reads_per_lookup.back()));
      }
    }
    if (progress) progress(++step, steps);
    for (size_t qi = 0; qi < qds.size(); ++qi) {
      const uint32_t qd = uint32_t(qds[qi]);
      std::unique_ptr<persist::TreeDb> d;
      if (io::Status s = persist::open_any_db(dir, qd, &d, slot_accounts, db.get()); !s.ok()) return fail(s.message(), 1);
      BatchedRun b;
      auto run_batched = [&]() -> io::Status {
        if (io::Status s = prepare(*d, seed * 43 + rep * 101 + qi); !s.ok()) return s;
        std::vector<persist::LookupAnswer> ans;
        const uint64_t t0 = report::now_ns();
        io::Status s = d->lookup(sample.keys, &ans, &b.stats, true);
        b.wall_us = double(report::now_ns() - t0) / 1e3;
        if (!s.ok()) return s;
        if (std::string e = check(ans, k); !e.empty())
          return io::Status(io::Errc::mismatch,
                            "wrong answer: " + e +
                                (unhashed_source ? " (the database records no hash of its source file: if " +
                                                       src.description + " changed since the build, that is the cause)"
                                                 : ""));
        return {};
      };
      RawRun rr;
      auto run_raw = [&]() -> io::Status {
        if (io::Status s = prepare(*d, seed * 47 + rep * 101 + qi); !s.ok()) return s;
        persist::RawReadFigures r;
        if (io::Status s = persist::raw_page_reads(*d, b.stats.page_reads, qd, seed * 53 + rep * 101 + qi, &r); !s.ok())
          return s;
        const stats::Latency l = stats::latency(r.latency_ns);
        rr = {r.us_per_read(), l.p50 / 1e3, l.p90 / 1e3, l.p99 / 1e3, l.p999 / 1e3,
              r.wall_ns ? double(r.reads) * manifest.params.page_size / (double(r.wall_ns) * 1e-9) / 1e6 : 0.0, r.reads};
        return {};
      };
      // The raw run needs the batch's page-read count: on odd reps it runs first with the
      // count of the previous rep's batch at this QD (the same keys: the same count).
      const bool raw_first = arena && rep % 2 == 1 && !batched[qi].empty();
      if (raw_first) b.stats.page_reads = batched[qi].back().stats.page_reads;
      if (raw_first)
        if (io::Status s = run_raw(); !s.ok()) return fail(s.message(), 1);
      if (io::Status s = run_batched(); !s.ok()) return fail(s.message(), s.code() == io::Errc::corrupt_page ? 2 : 1);
      if (arena && !raw_first && b.stats.page_reads)
        if (io::Status s = run_raw(); !s.ok()) return fail(s.message(), 1);
      batched[qi].push_back(b);
      speedup[qi].push_back(single_mean_us.back() / (b.wall_us / double(k)));
      if (arena && rr.reads) {
        raw[qi].push_back(rr);
        engine_over_raw[qi].push_back((b.wall_us / double(b.stats.page_reads)) / rr.us_per_read);
      }
      if (progress) progress(++step, steps);
    }
  }
  bar.finish();

  nlohmann::json out;
  out["command"] = "read-bench";
  out["db"] = dir;
  out["tree"] = io::tree_kind_name(manifest.params.tree_kind);
  out["hash"] = io::hash_kind_name(manifest.params.hash_kind);
  out["group_depth"] = manifest.params.group_depth;
  out["store"] = arena ? "arena" : "rocksdb";
  out["page_size"] = manifest.params.page_size;
  out["source"] = src.description;
  out["root"] = root_hex;
  out["keys"] = k;
  out["key_kind"] = accounts_only ? "accounts" : "slots";
  out["slot_key_accounts"] = slot_keys_carry_account;
  out["lookups_verified"] = true;  // every node a lookup uses matched its parent's hash (the root: the manifest's)
  out["checked"] = accounts_only              ? "every account's fields equal the source's"
                   : slot_keys_carry_account ? "every slot value and its account's fields equal the source's"
                                             : "every slot value equals the source's";
  out["reps"] = reps;
  out["warmup_reads"] = warmup;
  out["warmup_last"] = {{"first_read_us", warm.first_read_us}, {"last_read_us", warm.last_read_us}};
  out["cold"] = cold ? nlohmann::json{{"protocol", cold_info.protocol}, {"detail", cold_info.detail}}
                     : nlohmann::json(nullptr);
  nlohmann::json results = nlohmann::json::array();
  for (size_t qi = 0; qi < qds.size(); ++qi) {
    std::vector<double> per_lookup, per_read, io_share, cpu_share, mbps, rawus, rawp50, rawp90, rawp99, rawp999, rawmbps;
    for (const auto& b : batched[qi]) {
      per_lookup.push_back(b.wall_us / double(k));
      mbps.push_back(b.wall_us > 0 ? double(b.stats.bytes_read) / b.wall_us : 0);  // bytes/us = MB/s
      per_read.push_back(b.stats.page_reads ? b.wall_us / double(b.stats.page_reads) : 0);
      io_share.push_back(b.wall_us > 0 ? double(b.stats.io_wait_ns) / 1e3 / b.wall_us : 0);
      cpu_share.push_back(b.wall_us > 0 ? double(b.stats.cpu_ns) / 1e3 / b.wall_us : 0);
    }
    for (const auto& r : raw[qi]) {
      rawus.push_back(r.us_per_read), rawp50.push_back(r.p50_us), rawp90.push_back(r.p90_us);
      rawp99.push_back(r.p99_us), rawp999.push_back(r.p999_us), rawmbps.push_back(r.mb_per_s);
    }
    const std::string qd_label = "qd" + std::to_string(qds[qi]);
    const persist::LookupStats& st = batched[qi].back().stats;
    nlohmann::json row = {
        {"qd", qds[qi]},
        {"batched",
         {{"us_per_lookup", report::timing_json("batched us_per_lookup " + qd_label, per_lookup)},
          {"mb_per_s", summary(mbps)},
          {"us_per_page_read", summary(per_read)},
          {"page_reads_per_lookup", double(st.page_reads) / double(k)},
          {"bytes_per_lookup", double(st.bytes_read) / double(k)},
          {"nodes_per_lookup", double(st.nodes_visited) / double(k)},
          {"page_reads", st.page_reads},
          {"rounds", st.rounds},
          {"reads_per_round", st.reads_per_round},
          // arena (streamed): blocking waits for reads; reads outstanding per wave (rounds)
          {"io_waits", st.io_waits},
          {"reads_in_flight_mean", st.rounds ? double(st.reads_in_flight_sum) / double(st.rounds) : 0.0},
          {"reads_in_flight_max", st.reads_in_flight_max},
          // arena: the share of the batch spent inside read rounds; the rest is CPU between them
          {"io_wait_share", arena ? summary(io_share) : nlohmann::json(nullptr)},
          // arena: the thread's CPU time (user + system) over the batch's wall time
          {"cpu_share", arena ? summary(cpu_share) : nlohmann::json(nullptr)}}},
        {"single_over_batched_per_lookup", summary(speedup[qi])},
    };
    if (!raw[qi].empty()) {
      row["raw"] = {{"reads", raw[qi].back().reads},
                    {"us_per_read", report::timing_json("raw us_per_read " + qd_label, rawus)},
                    {"latency_us_p50", summary(rawp50)},
                    {"latency_us_p90", summary(rawp90)},
                    {"latency_us_p99", summary(rawp99)},
                    {"latency_us_p99_9", summary(rawp999)},
                    {"mb_per_s", summary(rawmbps)}};
      row["engine_over_raw_per_read"] = summary(engine_over_raw[qi]);
    }
    results.push_back(row);
  }
  out["batched"] = results;
  out["single"] = {{"keys", single_k},
                   {"qd", 1},
                   {"latency_us_median", report::timing_json("single latency_us_median", single_median_us)},
                   {"latency_us_p90", summary(single_p90_us)},
                   {"latency_us_p99", summary(single_p99_us)},
                   {"latency_us_p99_9", summary(single_p999_us)},
                   {"us_per_lookup_mean", summary(single_mean_us)},
                   {"page_reads_per_lookup", summary(single_reads_per_lookup)}};
  if (!raw1_p50_us.empty()) {
    out["single"]["raw_qd1_latency_us_p50"] = summary(raw1_p50_us);
    out["single"]["latency_over_raw_qd1_x_reads"] = summary(single_over_raw);
  }
  report::stamp(out);
  if (json) {
    std::printf("%s\n", out.dump().c_str());
    return 0;
  }
  auto cell = [](const nlohmann::json& s, const char* fmt = "%.1f") {
    char a[32], b[32], c[32], o[112];
    std::snprintf(a, sizeof a, fmt, s["median"].get<double>());
    std::snprintf(b, sizeof b, fmt, s["min"].get<double>());
    std::snprintf(c, sizeof c, fmt, s["max"].get<double>());
    std::snprintf(o, sizeof o, "%s [%s..%s]", a, b, c);
    return std::string(o);
  };
  std::printf("read-bench: %s (%s, %s store, %u B pages), %llu random existing %s keys, %llu reps\n", dir.c_str(),
              out["tree"].get<std::string>().c_str(), arena ? "arena" : "rocksdb", manifest.params.page_size,
              (unsigned long long)k, accounts_only ? "account" : "slot", (unsigned long long)reps);
  std::printf("root %s; source: %s; checked: %s\n", root_hex.c_str(), src.description.c_str(),
              out["checked"].get<std::string>().c_str());
  if (!accounts_only && manifest.params.tree_kind == io::TreeKind::bintrie)
    std::printf("slot keys: %s\n", slot_accounts ? "each also fetches its account (--slot-accounts)"
                                                  : "the slot alone (--slot-accounts adds each address's account walk)");
  if (cold)
    std::printf("cold: %s%s%s\n", cold_info.protocol.c_str(), cold_info.detail.empty() ? "" : " (",
                cold_info.detail.empty() ? "" : (cold_info.detail + ")").c_str());
  else
    std::printf("cold: no (page cache as found%s)\n", arena ? "; the arena reads with O_DIRECT anyway" : "");
  std::printf("\nbatched, %s: medians over reps [min..max]%s\n", arena ? "streamed" : "level by level",
              arena ? "" : "\n(RocksDB: reads = keys fetched by MultiGet, KiB = value bytes returned, rounds = MultiGet calls)");
  std::printf("%5s %24s %8s %9s %7s %22s %22s %20s %20s\n", "QD", "us/lookup", "reads/lk", "KiB/lk", "rounds",
              "us/page read", "raw us/read", "engine/raw", "single/batched");
  for (const auto& r : results) {
    const auto& b = r["batched"];
    std::printf("%5llu %24s %8.2f %9.2f %7llu %22s %22s %20s %20s\n", (unsigned long long)r["qd"].get<uint64_t>(),
                cell(b["us_per_lookup"], "%.2f").c_str(), b["page_reads_per_lookup"].get<double>(),
                b["bytes_per_lookup"].get<double>() / 1024.0, (unsigned long long)b["rounds"].get<uint64_t>(),
                cell(b["us_per_page_read"], "%.2f").c_str(),
                r.contains("raw") ? cell(r["raw"]["us_per_read"], "%.2f").c_str() : "-",
                r.contains("engine_over_raw_per_read") ? cell(r["engine_over_raw_per_read"], "%.2f").c_str() : "-",
                cell(r["single_over_batched_per_lookup"], "%.1f").c_str());
    std::string rounds;
    for (const auto& x : b["reads_per_round"]) rounds += (rounds.empty() ? "" : " ") + std::to_string(x.get<uint64_t>());
    if (b["io_wait_share"].is_null())
      std::printf("      reads per round: %s\n", rounds.c_str());
    else if (!rounds.empty())
      std::printf("      reads per round: %s; time inside read rounds: %.0f %% (the rest: CPU between rounds)\n",
                  rounds.c_str(), 100.0 * b["io_wait_share"]["median"].get<double>());
    else
      std::printf("      streamed: %llu blocking waits; %.1f reads outstanding per wave of completions (mean, max %llu); "
                  "time blocked: %.0f %%, CPU (user + system): %.0f %% (the rest: runnable, not running)\n",
                  (unsigned long long)b["io_waits"].get<uint64_t>(), b["reads_in_flight_mean"].get<double>(),
                  (unsigned long long)b["reads_in_flight_max"].get<uint64_t>(),
                  100.0 * b["io_wait_share"]["median"].get<double>(), 100.0 * b["cpu_share"]["median"].get<double>());
  }
  const auto& s = out["single"];
  std::printf("\none key at a time (%llu keys, QD1): latency median %s us, p90 %s us, p99 %s us, p99.9 %s us, mean %s us, %s page reads/lookup\n",
              (unsigned long long)single_k, cell(s["latency_us_median"]).c_str(), cell(s["latency_us_p90"]).c_str(),
              cell(s["latency_us_p99"]).c_str(), cell(s["latency_us_p99_9"]).c_str(),
              cell(s["us_per_lookup_mean"]).c_str(), cell(s["page_reads_per_lookup"], "%.2f").c_str());
  if (s.contains("raw_qd1_latency_us_p50"))
    std::printf("raw QD1 read latency p50 %s us; one-at-a-time latency / (raw QD1 latency x reads): %s\n",
                cell(s["raw_qd1_latency_us_p50"]).c_str(), cell(s["latency_over_raw_qd1_x_reads"], "%.2f").c_str());
  std::printf("%s\n", report::stamp_line().c_str());
  return 0;
}

}  // namespace st::cli
