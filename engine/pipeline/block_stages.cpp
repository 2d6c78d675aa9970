// block_stages: the checks, prefetch and traverse of the block pipeline (block_stages.h). A
// block's traversal is one Traversal: its per-access path (serve_account / serve_slot -> disk)
// stays in this file, inline; geth's workers are its ahead_worker threads.
#include "engine/pipeline/block_stages.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <set>

#include "engine/persist/page_reader.h"
#include "engine/persist/snapshot/db.h"
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
struct Fnv1a64 {
  uint64_t h = 0xcbf29ce484222325ull;
  void add(const void* p, size_t n) {
    const uint8_t* b = static_cast<const uint8_t*>(p);
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ull;
  }
};

bool creates(const state::AccountChanges& a) {
  return !a.nonce_changes.empty() || !a.balance_changes.empty() || !a.code_changes.empty();
}

// Visits the keys access index `ia` reads, in the order a transaction reads them: accounts
// read, accounts written (their old values), slots read; fn(address, slot or nullptr)
// returns false to stop. False when fn stopped the visit.
template <class Fn>
bool for_each_read_key(const state::IndexAccess& ia, Fn&& fn) {
  for (const state::Address& a : ia.accounts_read)
    if (!fn(a, nullptr)) return false;
  for (const state::Address& a : ia.accounts_written)
    if (!fn(a, nullptr)) return false;
  for (const state::SlotRef& s : ia.slots_read)
    if (!fn(s.address, &s.slot)) return false;
  return true;
}

}  // namespace

void KeyIndex::build(const state::Block& b) {
  keys.clear();
  account_of.clear();
  changes_of.clear();
  sorted.clear();
  auto add = [&](const state::AccountChanges& a, const state::Hash32* slot, const state::SlotChanges* changes) {
    FlatKey k{a.address, slot ? *slot : state::Hash32{}, slot != nullptr};
    sorted.emplace_back(k, uint32_t(keys.size()));
    keys.push_back({a.address, slot ? std::optional<state::Hash32>(*slot) : std::nullopt});
    account_of.push_back(&a);
    changes_of.push_back(changes);
  };
  for (const state::AccountChanges& a : b.bal.accounts) {
    add(a, nullptr, nullptr);
    for (const state::SlotChanges& c : a.storage_changes) add(a, &c.slot, &c);
    for (const state::Hash32& r : a.storage_reads) add(a, &r, nullptr);
  }
  // By key, then position: a key named twice has its first position first (std::sort, not
  // stable_sort, which would take a temporary buffer per block).
  std::sort(sorted.begin(), sorted.end());
}

int64_t KeyIndex::find(const state::Address& a, const state::Hash32* slot) const {
  const FlatKey k{a, slot ? *slot : state::Hash32{}, slot != nullptr};
  auto it = std::lower_bound(sorted.begin(), sorted.end(), k, [](const auto& e, const FlatKey& x) { return e.first < x; });
  return it != sorted.end() && it->first == k ? int64_t(it->second) : -1;
}

uint64_t KeyIndex::capacity_bytes() const {
  return keys.capacity() * sizeof(keys[0]) + account_of.capacity() * sizeof(account_of[0]) +
         changes_of.capacity() * sizeof(changes_of[0]) + sorted.capacity() * sizeof(sorted[0]);
}

uint64_t BlockToken::scratch_capacity_bytes() const {
  return key_index.capacity_bytes() + answers.capacity() * sizeof(answers[0]) + served.capacity() * sizeof(served[0]) +
         known.capacity() * sizeof(known[0]);
}

void BlockToken::reset(size_t i, const state::Block* b) {
  index = i;
  block = b;
  reader.reset();
  // The key index, served values, accesses and diff are rebuilt by their stages.
  answers.clear();
  scratch_bytes_at_admit = scratch_capacity_bytes();
  pages.clear();
  std::vector<TxStats> txs = std::move(result.txs);  // its memory kept for this block's
  txs.clear();
  result = {};
  result.txs = std::move(txs);
  read_latency_ns.clear();
  commit_read_latency_ns.clear();
  error = {};
}

io::Status check_blocks(const persist::DbFiles& files, std::span<const state::Block> blocks, uint32_t queue_depth,
                        bool snapshot) {
  if (blocks.empty()) return bad("no blocks to run");
  if (snapshot && !files.commit.snapshot)
    return bad("--snapshot: " + files.dir + " has no flat snapshot (build it with `statetree build --snapshot`)");
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

namespace {
// The block's reader, pinned to the last published state: arena, a handle on the directory
// (its pages are kept while it lives); RocksDB, a snapshot of the writer's instance (the
// last whole commit batch). slot_key_accounts off: every account of the BAL is asked for as
// an account key anyway.
io::Status open_reader(const RunContext& ctx, uint32_t queue_depth, std::unique_ptr<persist::TreeDb>* out) {
  if (ctx.writer && ctx.writer->store == persist::StoreKind::rocksdb)
    return persist::open_rocks_reader(*ctx.writer, ctx.base_manifest, false, out);
  return persist::open_any_db(ctx.options->dir, queue_depth, out, false);
}

// How many threads the block's `bal` batch is split over (RunOptions::prefetch_threads).
uint32_t prefetch_split(const RunContext& ctx) {
  const bool rocks = ctx.writer && ctx.writer->store == persist::StoreKind::rocksdb;
  return prefetch_threads_used(*ctx.options, rocks ? persist::StoreKind::rocksdb : persist::StoreKind::arena);
}

// Part i's share of the queue depth: the parts' shares sum to queue_depth.
uint32_t part_queue_depth(uint32_t queue_depth, uint32_t parts, uint32_t i) {
  return queue_depth / parts + (i < queue_depth % parts ? 1 : 0);
}

// The block's `bal` batch split over t.parts (prefetch_split() > 1): the keys dealt out,
// the other parts' readers opened on part 0's state, every part looked up on its own
// thread, then the answers put back by key position, the counters summed and every
// reader's pages handed to the commit (the other parts' readers closed: part 0's reader
// keeps the state pinned until the traversal ends).
class SplitPrefetch {
 public:
  SplitPrefetch(RunContext& ctx, BlockToken& t, uint32_t n) : ctx_(ctx), t_(t), n_(n) {}

  io::Status run() {
    t_.parts.resize(n_);
    deal_keys();
    for (uint32_t i = 1; i < n_; ++i) {
      PrefetchPart& part = t_.parts[i];
      part.read_latency_ns.clear();
      const uint32_t qd = part_queue_depth(ctx_.options->queue_depth, n_, i);
      if (io::Status s = persist::open_any_db(ctx_.options->dir, qd, &part.reader, false, t_.reader.get()); !s.ok()) {
        close_parts();
        return s;
      }
      part.reader->record_read_latency(&part.read_latency_ns);
    }
    next_.store(1);
    ctx_.prefetch_pool.start(n_ - 1, [](void* self) { static_cast<SplitPrefetch*>(self)->helper(); }, this);
    look_up(t_.parts[0], *t_.reader);
    ctx_.prefetch_pool.wait();
    return gather();
  }

 private:
  // The keys dealt out by where their walks go: part i takes the paths whose first byte is
  // in the i-th of n equal ranges (each part walks its own subtrees below the top pages).
  void deal_keys() {
    for (PrefetchPart& part : t_.parts) part.keys.clear(), part.positions.clear();
    const std::vector<state::StateKey>& keys = t_.key_index.keys;
    t_.paths.compute(ctx_.base_manifest.params, keys);
    for (size_t p = 0; p < keys.size(); ++p) {
      PrefetchPart& part = t_.parts[size_t(t_.paths.first_byte[p]) * n_ >> 8];
      part.keys.push_back(keys[p]);
      part.positions.push_back(uint32_t(p));
    }
  }

  void helper() {
    for (uint32_t i; (i = next_.fetch_add(1)) < n_;) look_up(t_.parts[i], *t_.parts[i].reader);
  }

  static void look_up(PrefetchPart& part, persist::TreeDb& reader) {
    const uint64_t cpu0 = persist::thread_cpu_ns();
    part.stats = {};
    part.status = reader.lookup(part.keys, &part.answers, &part.stats, true);
    part.busy_ns = persist::thread_cpu_ns() - cpu0;
  }

  io::Status gather() {
    BlockResult& r = t_.result;
    t_.answers.resize(t_.key_index.keys.size());
    io::Status first;
    for (uint32_t i = 0; i < n_; ++i) {
      PrefetchPart& part = t_.parts[i];
      if (first.ok() && !part.status.ok()) first = part.status;
      if (part.status.ok())
        for (size_t j = 0; j < part.positions.size(); ++j) t_.answers[part.positions[j]] = part.answers[j];
      r.prefetch_page_reads += part.stats.page_reads;
      r.prefetch_bytes += part.stats.bytes_read;
      r.prefetch_io_wait_ns += part.stats.io_wait_ns;
      if (i > 0) {
        r.prefetch_helper_busy_ns += part.busy_ns;
        t_.read_latency_ns.merge(part.read_latency_ns);
      }
    }
    if (first.ok() && ctx_.options->reuse_read_pages)
      for (uint32_t i = 0; i < n_; ++i) {
        persist::TreeDb& reader = i ? *t_.parts[i].reader : *t_.reader;
        if (persist::PageReader* pr = reader.page_reader()) pr->add_pages_to(&t_.pages);
      }
    close_parts();
    return first;
  }

  void close_parts() {
    for (uint32_t i = 1; i < n_; ++i) t_.parts[i].reader.reset();
  }

  RunContext& ctx_;
  BlockToken& t_;
  const uint32_t n_;
  std::atomic<uint32_t> next_{1};
};
}  // namespace

OpenTurn::OpenTurn(RunContext& ctx, size_t index) : ctx_(ctx), index_(index) {
  for (size_t v = ctx_.next_open.load(); v != index_; v = ctx_.next_open.load()) ctx_.next_open.wait(v);
}

void OpenTurn::release() {
  if (!held_) return;
  held_ = false;
  ctx_.next_open.store(index_ + 1);
  ctx_.next_open.notify_all();
}

void prefetch(RunContext& ctx, BlockToken& t, OpenTurn& turn) {
  const RunOptions& o = *ctx.options;
  t.result.prefetch.start_ns = monotonic_ns() - ctx.t0_ns;
  const uint64_t cpu0 = persist::thread_cpu_ns();
  if (o.during_prefetch) o.during_prefetch(t.index);
  const uint32_t split = prefetch_split(ctx);
  t.result.prefetch_threads = split;
  io::Status s = open_reader(ctx, part_queue_depth(o.queue_depth, split, 0), &t.reader);
  if (s.ok() && o.snapshot) {
    persist::ReadCounters opened;
    s = persist::open_snapshot_view(std::move(t.reader), false, &t.reader, &opened);
    t.result.snapshot_index_page_reads = opened.page_reads;
    t.result.snapshot_index_bytes = opened.bytes_read;
  }
  if (s.ok()) {
    t.reader->record_read_latency(&t.read_latency_ns);
    t.result.reader_blocks_visible = t.reader->manifest().commit_seq - ctx.base_commit_seq;
    turn.release();
    if (io::NodeStore* store = ctx.read_budget ? t.reader->page_store() : nullptr)
      t.result.prefetch_shared_queue = store->share_queue(ctx.read_budget.get(), t.index);
    t.key_index.build(*t.block);
    t.result.prefetch_keys = o.reader == ReaderModel::bal ? t.key_index.keys.size() : 0;
    if (split > 1) {
      s = SplitPrefetch(ctx, t, split).run();
    } else if (o.reader == ReaderModel::bal) {
      persist::LookupStats st;
      s = t.reader->lookup(t.key_index.keys, &t.answers, &st, true);
      t.result.prefetch_page_reads = st.page_reads;
      t.result.prefetch_bytes = st.bytes_read;
      t.result.prefetch_io_wait_ns = st.io_wait_ns;
    }
  }
  if (!s.ok()) t.error = io::Status(s.code(), "block " + std::to_string(t.block->header.number) + ": prefetch: " + s.message());
  t.result.prefetch.busy_ns = persist::thread_cpu_ns() - cpu0;
  t.result.prefetch.end_ns = monotonic_ns() - ctx.t0_ns;
}

namespace {

// What the block is and touches (the figures traverse reports besides its accesses).
void describe_block(const state::Block& b, const state::BalSummary& sum, size_t index, BlockResult* r) {
  r->index = index;
  r->number = b.header.number;
  r->tx_count = b.header.tx_count ? *b.header.tx_count : sum.max_index;
  r->gas_known = !b.header.txs.empty();
  for (const state::TxInfo& x : b.header.txs) r->gas_used += x.gas_used;
  r->accounts = b.bal.accounts.size();
  r->slots_written = sum.slots_written;
  r->slots_read = sum.slots_read + sum.slots_written;  // a write looks its original value up
}

// The block's accesses by block access index into the token's (transactions weighted by
// their calls when the header gives them).
void build_accesses(const state::Block& b, uint32_t tx_count, BlockToken& t) {
  t.read_rule.weights.clear();
  if (b.header.txs.size() == tx_count)
    for (const state::TxInfo& x : b.header.txs) t.read_rule.weights.push_back(std::max<uint64_t>(x.calls, 1));
  state::access_by_index(b.bal, tx_count, t.read_rule, &t.accesses);
}

// One block's traversal (traverse()): its transactions in order, each access served from
// the block's own reads and writes, the diff layer or the database (the reader model), and
// for `geth` the workers reading ahead through the one mutex-serialised reader.
class Traversal {
 public:
  Traversal(RunContext& ctx, BlockToken& t) : ctx_(ctx), o_(*ctx.options), t_(t), r_(t.result) {}

  // Runs every access index; the status of the first failure.
  io::Status run(const std::vector<state::IndexAccess>& by_index) {
    by_index_ = &by_index;
    const size_t n = t_.key_index.keys.size();
    t_.served.assign(n, Served{});
    t_.known.assign(n, 0);
    from_ = r_.reader_blocks_visible, to_ = t_.index;
    // The diff layer holds nothing below the oldest state a later block's reader can pin:
    // readers open in block order, so this block's is the oldest still to come.
    ctx_.layer.drop_before(from_);
    if (geth_) start_workers(n);
    r_.txs.resize(by_index.size());
    for (size_t i = 0; i < by_index.size() && err_.ok(); ++i) run_index(i);
    main_done_.store(true);
    if (geth_) ctx_.ahead_pool.wait();
    if (err_.ok() && !ahead_err_.ok()) err_ = ahead_err_;
    return err_;
  }
  uint64_t digest() const { return dig_.h; }

 private:
  // Access index i: its reads in order, then its writes for the block's later indices.
  void run_index(size_t i) {
    const state::IndexAccess& ia = (*by_index_)[i];
    TxStats& tx = r_.txs[i];
    tx.index = uint32_t(i);
    const uint64_t t_tx = monotonic_ns();
    const bool ok = for_each_read_key(ia, [&](const state::Address& a, const state::Hash32* slot) {
      return slot ? serve_slot(a, *slot, tx) : serve_account(a, tx);
    });
    if (ok) apply_writes(i, ia);
    tx.time_ns = monotonic_ns() - t_tx;
  }

  // The block's own write of key position p: the value it holds from now on.
  Served& own(int64_t p) {
    t_.known[size_t(p)] = 1;
    return t_.served[size_t(p)];
  }

  void apply_writes(size_t i, const state::IndexAccess& ia) {
    const KeyIndex& ki = t_.key_index;
    for (const state::SlotRef& s : ia.slots_written) {
      const int64_t p = ki.find(s.address, &s.slot);
      for (const state::StorageChange& c : ki.changes_of[size_t(p)]->changes)
        if (c.index == i) own(p).slot = c.value;
    }
    for (const state::Address& a : ia.accounts_written) {
      const int64_t p = ki.find(a, nullptr);
      Served& v = own(p);
      v.exists = true;
      const state::AccountChanges& ac = *ki.account_of[size_t(p)];
      for (const state::BalanceChange& c : ac.balance_changes)
        if (c.index == i) v.balance = c.post_balance;
      for (const state::NonceChange& c : ac.nonce_changes)
        if (c.index == i) v.nonce = c.nonce;
    }
  }

  // The key's position in the block's key index (an access the BAL does not name fails).
  inline int64_t position(const state::Address& a, const state::Hash32* slot) {
    const int64_t p = t_.key_index.find(a, slot);
    if (p < 0) err_ = io::Status(io::Errc::bad_argument, "key not in the block's access list");
    return p;
  }

  inline bool serve_account(const state::Address& a, TxStats& tx) {
    const int64_t p = position(a, nullptr);
    if (p < 0) return false;
    r_.accesses += 1, tx.accesses += 1;
    Served v;
    if (t_.known[size_t(p)]) {
      v = t_.served[size_t(p)];
      r_.hits += 1;
    } else {
      persist::LookupAnswer ans;
      if (!disk({a, std::nullopt}, p, tx, &ans)) return false;
      r_.misses += 1, tx.misses += 1;
      v.exists = ans.account.exists, v.nonce = ans.account.nonce, v.balance = ans.account.balance;
      if (auto f = ctx_.layer.account(a, from_, to_)) {
        r_.layer_hits += 1;
        v.exists = true;
        if (f->nonce) v.nonce = *f->nonce;
        if (f->balance) v.balance = *f->balance;
      }
      own(p) = v;
    }
    dig_.add(a.data(), a.size());
    const uint8_t e = v.exists;
    dig_.add(&e, 1);
    dig_.add(&v.nonce, sizeof v.nonce);
    dig_.add(v.balance.data(), 32);
    return true;
  }

  inline bool serve_slot(const state::Address& a, const state::Hash32& sl, TxStats& tx) {
    const int64_t p = position(a, &sl);
    if (p < 0) return false;
    r_.accesses += 1, tx.accesses += 1;
    Served v;
    if (t_.known[size_t(p)]) {
      v = t_.served[size_t(p)];
      r_.hits += 1;
    } else if (auto lv = ctx_.layer.slot(a, sl, from_, to_)) {
      v.slot = *lv;
      r_.hits += 1, r_.layer_hits += 1;
      own(p) = v;
    } else {
      persist::LookupAnswer ans;
      if (!disk({a, sl}, p, tx, &ans)) return false;
      r_.misses += 1, tx.misses += 1;
      v.slot = ans.slot_value.value_or(state::Hash32{});
      own(p) = v;
    }
    dig_.add(a.data(), a.size());
    dig_.add(sl.data(), sl.size());
    dig_.add(v.slot.data(), 32);
    return true;
  }

  // The database's answer for a key (bal: prefetched; serial: one blocking lookup; geth: a
  // worker's answer, else one lookup under the reader's mutex).
  inline bool disk(const state::StateKey& key, int64_t p, TxStats& tx, persist::LookupAnswer* out) {
    if (o_.reader == ReaderModel::bal) {
      *out = t_.answers[size_t(p)];
      return true;
    }
    if (geth_ && warm_answer(size_t(p), out)) {
      r_.warm_hits += 1;
      return true;
    }
    return read_one(key, p, tx, out);
  }

  // geth: the answer a worker (or the main traversal) already read for key position p.
  bool warm_answer(size_t p, persist::LookupAnswer* out) {
    std::lock_guard<std::mutex> g(warm_mu_);
    if (!t_.warm[p]) return false;
    *out = t_.answers[p];
    return true;
  }
  void keep_warm(size_t p, const persist::LookupAnswer& a) {
    std::lock_guard<std::mutex> g(warm_mu_);
    if (t_.warm[p]) return;
    t_.answers[p] = a;
    t_.warm[p] = 1;
  }

  // serial, geth: one blocking lookup (geth: under the reader's mutex, its answer kept).
  bool read_one(const state::StateKey& key, int64_t p, TxStats& tx, persist::LookupAnswer* out) {
    std::vector<persist::LookupAnswer>& ans = t_.one_answer;
    persist::LookupStats st;
    {
      const uint64_t t_wait = monotonic_ns();
      std::unique_lock<std::mutex> g(reader_mu_, std::defer_lock);
      if (geth_) {
        g.lock();
        r_.reader_lock_wait_ns += monotonic_ns() - t_wait;
      }
      if (io::Status s = t_.reader->lookup(std::span<const state::StateKey>(&key, 1), &ans, &st, false); !s.ok()) {
        err_ = s;
        return false;
      }
    }
    if (geth_) keep_warm(size_t(p), ans[0]);
    r_.traverse_lookups += 1;
    r_.traverse_page_reads += st.page_reads, r_.traverse_bytes += st.bytes_read, r_.traverse_io_wait_ns += st.io_wait_ns;
    tx.page_reads += st.page_reads, tx.bytes_read += st.bytes_read;
    *out = ans[0];
    return true;
  }

  // geth: the workers (the run's pool), each taking the next transaction (index 0, 1, ...)
  // and reading what it accesses that nobody has read yet, until the main traversal is done.
  // Their answers go to the token's answers by key position (warm: read yet).
  void start_workers(size_t keys) {
    t_.answers.resize(keys);
    t_.warm.assign(keys, 0);
    r_.geth_workers = o_.geth_workers ? o_.geth_workers : std::max(1u, 4 * available_cpus() / 5);
    ctx_.ahead_pool.start(r_.geth_workers, [](void* self) { static_cast<Traversal*>(self)->ahead_worker(); }, this);
  }

  void ahead_worker() {
    struct BusyAdd {  // the worker's CPU time, added whichever way it returns
      uint64_t cpu0;
      std::mutex& mu;
      uint64_t& sum;
      ~BusyAdd() {
        const uint64_t d = persist::thread_cpu_ns() - cpu0;
        std::lock_guard<std::mutex> g(mu);
        sum += d;
      }
    } busy{persist::thread_cpu_ns(), ahead_mu_, r_.geth_workers_busy_ns};
    thread_local std::vector<persist::LookupAnswer> ans;  // the pool thread's, kept across blocks
    auto ahead = [&](const state::Address& a, const state::Hash32* slot) {  // false: stop
      return !main_done_.load() && read_ahead(a, slot, ans);
    };
    for (size_t j; !main_done_.load() && (j = next_ahead_.fetch_add(1)) < by_index_->size();)
      if (!for_each_read_key((*by_index_)[j], ahead)) return;  // its keys in the main traversal's order
  }

  // One key read ahead unless it was read already; false on a failed lookup (recorded).
  bool read_ahead(const state::Address& a, const state::Hash32* slot, std::vector<persist::LookupAnswer>& ans) {
    const int64_t p = t_.key_index.find(a, slot);
    if (p < 0) return true;  // not in the block's access list: the main traversal fails on it
    {
      std::lock_guard<std::mutex> g(warm_mu_);
      if (t_.warm[size_t(p)]) return true;
    }
    persist::LookupStats st;
    io::Status s;
    {
      std::lock_guard<std::mutex> g(reader_mu_);
      const state::StateKey k{a, slot ? std::optional<state::Hash32>(*slot) : std::nullopt};
      s = t_.reader->lookup(std::span<const state::StateKey>(&k, 1), &ans, &st, false);
    }
    std::lock_guard<std::mutex> g(ahead_mu_);
    if (!s.ok()) {
      if (ahead_err_.ok()) ahead_err_ = s;
      return false;
    }
    r_.ahead_lookups += 1, r_.ahead_page_reads += st.page_reads, r_.ahead_bytes += st.bytes_read;
    keep_warm(size_t(p), ans[0]);
    return true;
  }

  RunContext& ctx_;
  const RunOptions& o_;
  BlockToken& t_;
  BlockResult& r_;
  const std::vector<state::IndexAccess>* by_index_ = nullptr;
  uint64_t from_ = 0, to_ = 0;  // the diff layer's blocks this reader does not show
  Fnv1a64 dig_;
  io::Status err_;
  // geth: the one reader behind one mutex, the answers read so far (the token's answers
  // and warm flags, by the workers ahead or by the main traversal) and the workers'
  // counters' mutex.
  const bool geth_ = o_.reader == ReaderModel::geth;
  std::mutex reader_mu_, warm_mu_, ahead_mu_;
  std::atomic<bool> main_done_{false};
  std::atomic<size_t> next_ahead_{0};
  io::Status ahead_err_;
};

}  // namespace

void traverse(RunContext& ctx, BlockToken& t) {
  BlockResult& r = t.result;
  r.traverse.start_ns = monotonic_ns() - ctx.t0_ns;
  const uint64_t cpu0 = persist::thread_cpu_ns();
  const state::Block& b = *t.block;
  describe_block(b, state::summarize_bal(b.bal), t.index, &r);
  build_accesses(b, r.tx_count, t);
  Traversal tr(ctx, t);
  const io::Status err = tr.run(t.accesses.by_index);
  // The pages read go with the block to its commit (which drops those rewritten since).
  // (A split prefetch handed its readers' pages over already.)
  if (err.ok() && ctx.options->reuse_read_pages && r.prefetch_threads < 2)
    if (persist::PageReader* pr = t.reader->page_reader()) pr->take_pages(&t.pages);
  t.reader.reset();  // the pin goes: pages this state alone holds may be reused
  r.state_read_latency_us = t.read_latency_ns.latency(1000.0);
  if (!err.ok()) {
    t.error = io::Status(err.code(), "block " + std::to_string(b.header.number) + ": traverse: " + err.message());
  } else {
    r.read_digest = tr.digest();
    state::post_state_diff(b.bal, &t.diff);
    ctx.layer.add(t.index, t.diff);
  }
  r.traverse.busy_ns = persist::thread_cpu_ns() - cpu0;
  r.traverse.end_ns = monotonic_ns() - ctx.t0_ns;
}

}  // namespace st::pipeline::detail
