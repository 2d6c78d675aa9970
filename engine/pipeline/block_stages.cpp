// block_stages: the checks, prefetch and traverse of the block pipeline (block_stages.h).
#include "engine/pipeline/block_stages.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "engine/persist/page_reader.h"
#include "engine/persist/snapshot_db.h"
#include "engine/pipeline/parallel.h"

namespace st::pipeline::detail {
namespace {

io::Status bad(std::string m) { return io::Status(io::Errc::bad_argument, std::move(m)); }

std::string hex0x(const uint8_t* p, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s = "0x";
  for (size_t i = 0; i < n; ++i) s += d[p[i] >> 4], s += d[p[i] & 15];
  return s;
}
template <class B>
std::string hex0x(const B& b) { return hex0x(b.data(), b.size()); }

// FNV-1a, 64 bits.
struct Digest {
  uint64_t h = 0xcbf29ce484222325ull;
  void add(const void* p, size_t n) {
    const uint8_t* b = static_cast<const uint8_t*>(p);
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ull;
  }
};

// What a traversal holds for a key it has served: the account's fields the pipeline
// follows (exists, nonce, balance) or the slot's value (absent = zero).
struct Served {
  bool exists = false;
  uint64_t nonce = 0;
  state::U256 balance{};
  state::Bytes32 slot{};
};

bool creates(const state::AccountChanges& a) {
  return !a.nonce_changes.empty() || !a.balance_changes.empty() || !a.code_changes.empty();
}

}  // namespace

uint64_t now_ns() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch()).count());
}

std::string key_bytes(const state::Address& a, const state::Bytes32* slot) {
  std::string k(reinterpret_cast<const char*>(a.data()), a.size());
  if (slot) k.append(reinterpret_cast<const char*>(slot->data()), slot->size());
  return k;
}

void BlockToken::reset(size_t i, const state::Block* b) {
  index = i;
  block = b;
  reader.reset();
  keys.clear();
  answers.clear();
  answer_of.clear();
  diff = {};
  pages.clear();
  result = {};
  read_latency_ns.clear();
  commit_read_latency_ns.clear();
  error = {};
}

io::Status check_blocks(const persist::DbFiles& files, std::span<const state::Block> blocks, uint32_t queue_depth,
                        bool snapshot) {
  if (blocks.empty()) return bad("no blocks to run");
  if (snapshot && (files.rocks || !files.commit.snapshot))
    return bad("--snapshot: " + files.dir + " has no flat snapshot (build it with `statetree build --snapshot`, arena store)");
  const io::TreeKind kind = files.manifest.params.tree_kind;
  const state::BalTree tree = kind == io::TreeKind::bintrie ? state::BalTree::bintrie : state::BalTree::mpt;
  for (const state::Block& b : blocks)
    if (b.header.tree != state::BalTree::any && b.header.tree != tree)
      return bad("block " + std::to_string(b.header.number) + " was written for the " + state::bal_tree_name(b.header.tree) +
                 " (its gas and root), not the " + state::bal_tree_name(tree));
  if (blocks[0].header.pre_state_root && *blocks[0].header.pre_state_root != files.manifest.root_hash)
    return bad("block " + std::to_string(blocks[0].header.number) + ": pre-state root " +
               hex0x(*blocks[0].header.pre_state_root) + " is not the state's root " + hex0x(files.manifest.root_hash) +
               " (nothing applied)");
  // Storage written to accounts no block creates must go to accounts that exist.
  std::set<state::Address> created;
  std::map<state::Address, uint64_t> need;  // -> the first block writing to it
  for (const state::Block& b : blocks)
    for (const state::AccountChanges& a : b.bal.accounts) {
      if (creates(a)) created.insert(a.address);
      else if (!a.storage_changes.empty() && !created.count(a.address) && !need.count(a.address))
        need[a.address] = b.header.number;
    }
  if (need.empty()) return {};
  std::unique_ptr<persist::TreeDb> db;
  if (io::Status s = persist::open_any_db(files.dir, queue_depth, &db, false); !s.ok()) return s;
  std::vector<state::StateKey> keys;
  for (const auto& [a, n] : need) keys.push_back({a, std::nullopt});
  std::vector<persist::LookupAnswer> answers;
  persist::LookupStats st;
  if (io::Status s = db->lookup(keys, &answers, &st, false); !s.ok()) return s;
  size_t i = 0;
  for (const auto& [a, n] : need) {
    if (!answers[i].account.exists)
      return bad("block " + std::to_string(n) + ": account " + hex0x(a) +
                 ": storage written to an account that does not exist (no block of the file creates it)");
    ++i;
  }
  return {};
}

void prefetch(RunContext& ctx, BlockToken& t) {
  const RunOptions& o = *ctx.options;
  t.result.prefetch.start_ns = now_ns() - ctx.t0_ns;
  const uint64_t cpu0 = persist::thread_cpu_ns();
  if (o.during_prefetch) o.during_prefetch(t.index);
  // slot_key_accounts off: every account of the BAL is asked for as an account key anyway.
  io::Status s = persist::open_any_db(o.dir, o.queue_depth, &t.reader, false);
  if (s.ok() && o.snapshot) {
    persist::ReadCounters opened;
    s = persist::open_snapshot_view(std::move(t.reader), false, &t.reader, &opened);
    t.result.snapshot_index_page_reads = opened.page_reads;
    t.result.snapshot_index_bytes = opened.bytes_read;
  }
  if (s.ok()) {
    t.reader->record_read_latency(&t.read_latency_ns);
    t.result.reader_blocks_visible = t.reader->manifest().commit_seq - ctx.base_commit_seq;
    if (o.reader == ReaderModel::bal) {
      for (const state::AccountChanges& a : t.block->bal.accounts) {
        t.answer_of.emplace(key_bytes(a.address, nullptr), t.keys.size());
        t.keys.push_back({a.address, std::nullopt});
        auto add_slot = [&](const state::Bytes32& sl) {
          t.answer_of.emplace(key_bytes(a.address, &sl), t.keys.size());
          t.keys.push_back({a.address, sl});
        };
        for (const state::SlotChanges& c : a.storage_changes) add_slot(c.slot);
        for (const state::Bytes32& r : a.storage_reads) add_slot(r);
      }
      persist::LookupStats st;
      s = t.reader->lookup(t.keys, &t.answers, &st, true);
      t.result.prefetch_keys = t.keys.size();
      t.result.prefetch_page_reads = st.page_reads;
      t.result.prefetch_bytes = st.bytes_read;
      t.result.prefetch_io_wait_ns = st.io_wait_ns;
    }
  }
  if (!s.ok()) t.error = io::Status(s.code(), "block " + std::to_string(t.block->header.number) + ": prefetch: " + s.message());
  t.result.prefetch.busy_ns = persist::thread_cpu_ns() - cpu0;
  t.result.prefetch.end_ns = now_ns() - ctx.t0_ns;
}

void traverse(RunContext& ctx, BlockToken& t) {
  const RunOptions& o = *ctx.options;
  BlockResult& r = t.result;
  r.traverse.start_ns = now_ns() - ctx.t0_ns;
  const uint64_t cpu0 = persist::thread_cpu_ns();
  const state::Block& b = *t.block;
  const state::BalSummary sum = state::summarize_bal(b.bal);
  r.index = t.index;
  r.number = b.header.number;
  r.tx_count = b.header.tx_count ? *b.header.tx_count : sum.max_index;
  r.gas_known = !b.header.txs.empty();
  for (const state::TxInfo& x : b.header.txs) r.gas_used += x.gas_used;
  r.accounts = b.bal.accounts.size();
  r.slots_written = sum.slots_written;
  r.slots_read = sum.slots_read + sum.slots_written;  // a write looks its original value up

  state::ReadAssignment rule;
  if (b.header.txs.size() == r.tx_count)
    for (const state::TxInfo& x : b.header.txs) rule.weights.push_back(std::max<uint64_t>(x.calls, 1));
  const std::vector<state::IndexAccess> by_index = state::access_by_index(b.bal, r.tx_count, rule);
  std::map<state::Address, const state::AccountChanges*> acct;
  std::map<std::pair<state::Address, state::Bytes32>, const state::SlotChanges*> slot_changes;
  for (const state::AccountChanges& a : b.bal.accounts) {
    acct[a.address] = &a;
    for (const state::SlotChanges& c : a.storage_changes) slot_changes[{a.address, c.slot}] = &c;
  }

  const uint64_t from = r.reader_blocks_visible, to = t.index;
  // The diff layer holds nothing below the oldest state a later block's reader can pin:
  // readers open in block order, so this block's is the oldest still to come.
  ctx.layer.drop_before(from);
  std::unordered_map<std::string, Served> local;
  local.reserve(t.keys.size() + 16);
  Digest dig;
  io::Status err;

  // geth: the one reader behind one mutex, and the answers read so far (by the workers
  // ahead or by the main traversal).
  std::mutex reader_mu, warm_mu;
  std::unordered_map<std::string, persist::LookupAnswer> warm;
  const bool geth = o.reader == ReaderModel::geth;

  // The database's answer for a key (bal: prefetched; serial: one blocking lookup; geth: a
  // worker's answer, else one lookup under the reader's mutex).
  auto disk = [&](const state::StateKey& key, const std::string& kb, TxStats& tx, persist::LookupAnswer* out) -> bool {
    if (o.reader == ReaderModel::bal) {
      auto it = t.answer_of.find(kb);
      if (it == t.answer_of.end()) {
        err = io::Status(io::Errc::bad_argument, "key not in the block's access list");
        return false;
      }
      *out = t.answers[it->second];
      return true;
    }
    if (geth) {
      std::lock_guard<std::mutex> g(warm_mu);
      if (auto it = warm.find(kb); it != warm.end()) {
        *out = it->second;
        r.warm_hits += 1;
        return true;
      }
    }
    std::vector<persist::LookupAnswer> ans;
    persist::LookupStats st;
    {
      const uint64_t t_wait = now_ns();
      std::unique_lock<std::mutex> g(reader_mu, std::defer_lock);
      if (geth) {
        g.lock();
        r.reader_lock_wait_ns += now_ns() - t_wait;
      }
      if (io::Status s = t.reader->lookup(std::span<const state::StateKey>(&key, 1), &ans, &st, false); !s.ok()) {
        err = s;
        return false;
      }
    }
    if (geth) {
      std::lock_guard<std::mutex> g(warm_mu);
      warm.emplace(kb, ans[0]);
    }
    r.traverse_lookups += 1;
    r.traverse_page_reads += st.page_reads, r.traverse_bytes += st.bytes_read, r.traverse_io_wait_ns += st.io_wait_ns;
    tx.page_reads += st.page_reads, tx.bytes_read += st.bytes_read;
    *out = ans[0];
    return true;
  };

  // geth: the workers, each taking the next transaction (index 0, 1, ...) and reading what
  // it accesses that nobody has read yet, until the main traversal is done.
  std::atomic<bool> main_done{false};
  std::atomic<size_t> next_ahead{0};
  std::mutex ahead_mu;  // the workers' counters
  io::Status ahead_err;
  std::vector<std::thread> workers;
  if (geth) {
    r.geth_workers = o.geth_workers ? o.geth_workers : std::max(1u, 4 * available_cpus() / 5);
    for (uint32_t w = 0; w < r.geth_workers; ++w)
      workers.emplace_back([&] {
        const uint64_t worker_cpu0 = persist::thread_cpu_ns();
        struct BusyAdd {  // the worker's CPU time, added whichever way it returns
          uint64_t cpu0;
          std::mutex& mu;
          uint64_t& sum;
          ~BusyAdd() {
            const uint64_t d = persist::thread_cpu_ns() - cpu0;
            std::lock_guard<std::mutex> g(mu);
            sum += d;
          }
        } busy{worker_cpu0, ahead_mu, r.geth_workers_busy_ns};
        for (size_t j; !main_done.load() && (j = next_ahead.fetch_add(1)) < by_index.size();) {
          const state::IndexAccess& ia = by_index[j];
          std::vector<state::StateKey> keys;
          for (const state::Address& a : ia.accounts_read) keys.push_back({a, std::nullopt});
          for (const state::Address& a : ia.accounts_written) keys.push_back({a, std::nullopt});
          for (const state::SlotRef& sr : ia.slots_read) keys.push_back({sr.address, sr.slot});
          for (const state::StateKey& k : keys) {
            if (main_done.load()) return;
            const std::string kb = key_bytes(k.address, k.slot ? &*k.slot : nullptr);
            {
              std::lock_guard<std::mutex> g(warm_mu);
              if (warm.count(kb)) continue;
            }
            std::vector<persist::LookupAnswer> ans;
            persist::LookupStats st;
            io::Status s;
            {
              std::lock_guard<std::mutex> g(reader_mu);
              s = t.reader->lookup(std::span<const state::StateKey>(&k, 1), &ans, &st, false);
            }
            std::lock_guard<std::mutex> g(ahead_mu);
            if (!s.ok()) {
              if (ahead_err.ok()) ahead_err = s;
              return;
            }
            r.ahead_lookups += 1, r.ahead_page_reads += st.page_reads, r.ahead_bytes += st.bytes_read;
            std::lock_guard<std::mutex> gw(warm_mu);
            warm.emplace(kb, ans[0]);
          }
        }
      });
  }

  auto serve_account = [&](const state::Address& a, TxStats& tx) -> bool {
    const std::string kb = key_bytes(a, nullptr);
    r.accesses += 1, tx.accesses += 1;
    Served v;
    if (auto it = local.find(kb); it != local.end()) {
      v = it->second;
      r.hits += 1;
    } else {
      persist::LookupAnswer ans;
      if (!disk({a, std::nullopt}, kb, tx, &ans)) return false;
      r.misses += 1, tx.misses += 1;
      v.exists = ans.account.exists, v.nonce = ans.account.nonce, v.balance = ans.account.balance;
      if (auto f = ctx.layer.account(a, from, to)) {
        r.layer_hits += 1;
        v.exists = true;
        if (f->nonce) v.nonce = *f->nonce;
        if (f->balance) v.balance = *f->balance;
      }
      local.emplace(kb, v);
    }
    dig.add(kb.data(), kb.size());
    const uint8_t e = v.exists;
    dig.add(&e, 1);
    dig.add(&v.nonce, sizeof v.nonce);
    dig.add(v.balance.data(), 32);
    return true;
  };
  auto serve_slot = [&](const state::Address& a, const state::Bytes32& sl, TxStats& tx) -> bool {
    const std::string kb = key_bytes(a, &sl);
    r.accesses += 1, tx.accesses += 1;
    Served v;
    if (auto it = local.find(kb); it != local.end()) {
      v = it->second;
      r.hits += 1;
    } else if (auto lv = ctx.layer.slot(a, sl, from, to)) {
      v.slot = *lv;
      r.hits += 1, r.layer_hits += 1;
      local.emplace(kb, v);
    } else {
      persist::LookupAnswer ans;
      if (!disk({a, sl}, kb, tx, &ans)) return false;
      r.misses += 1, tx.misses += 1;
      v.slot = ans.slot_value.value_or(state::Bytes32{});
      local.emplace(kb, v);
    }
    dig.add(kb.data(), kb.size());
    dig.add(v.slot.data(), 32);
    return true;
  };

  r.txs.resize(by_index.size());
  for (size_t i = 0; i < by_index.size() && err.ok(); ++i) {
    const state::IndexAccess& ia = by_index[i];
    TxStats& tx = r.txs[i];
    tx.index = uint32_t(i);
    const uint64_t t_tx = now_ns();
    bool ok = true;
    for (const state::Address& a : ia.accounts_read) ok = ok && serve_account(a, tx);
    for (const state::Address& a : ia.accounts_written) ok = ok && serve_account(a, tx);
    for (const state::SlotRef& s : ia.slots_read) ok = ok && serve_slot(s.address, s.slot, tx);
    // This index's writes, for the block's later indices.
    for (const state::SlotRef& s : ia.slots_written) {
      if (!ok) break;
      for (const state::StorageChange& c : slot_changes[{s.address, s.slot}]->changes)
        if (c.index == i) local[key_bytes(s.address, &s.slot)].slot = c.value;
    }
    for (const state::Address& a : ia.accounts_written) {
      if (!ok) break;
      Served& v = local[key_bytes(a, nullptr)];
      v.exists = true;
      const state::AccountChanges& ac = *acct[a];
      for (const state::BalanceChange& c : ac.balance_changes)
        if (c.index == i) v.balance = c.post_balance;
      for (const state::NonceChange& c : ac.nonce_changes)
        if (c.index == i) v.nonce = c.nonce;
    }
    tx.time_ns = now_ns() - t_tx;
  }
  main_done.store(true);
  for (std::thread& w : workers) w.join();
  if (err.ok() && !ahead_err.ok()) err = ahead_err;
  // The pages read go with the block to its commit (which drops those rewritten since).
  if (err.ok() && o.reuse_read_pages)
    if (persist::PageReader* pr = t.reader->page_reader()) pr->take_pages(&t.pages);
  t.reader.reset();  // the pin goes: pages this state alone holds may be reused
  r.state_read_latency_us = t.read_latency_ns.latency(1000.0);
  if (!err.ok()) {
    t.error = io::Status(err.code(), "block " + std::to_string(b.header.number) + ": traverse: " + err.message());
  } else {
    r.read_digest = dig.h;
    t.diff = state::post_state_diff(b.bal);
    ctx.layer.add(t.index, t.diff);
  }
  r.traverse.busy_ns = persist::thread_cpu_ns() - cpu0;
  r.traverse.end_ns = now_ns() - ctx.t0_ns;
}

}  // namespace st::pipeline::detail
