// Tests of engine/pipeline: parallel_sort equals std::sort for every thread count, and
// thread_slot() is unique among the threads of one parallel loop (per-thread scratch). The
// block pipeline's commit stage: it takes the pages the block's reader read (the same roots
// with and without, for every reader and K, both trees; the commit's device reads drop to
// zero with `bal`), times the hash apart from the page writes, and hashes the new nodes
// again through the batch kernels (the binary trie's levels checked against the tree's own
// hash functions). With RunOptions::snapshot the state reads go to the flat snapshot: the same
// roots and values read for every reader, no more device reads than the tree's, verify
// (tree and snapshot) passes after; a database without a snapshot is refused. With K > 1
// block k + 1's hash runs during block k's publish, on block k's packed pages (forced). The
// tokens' scratch (key index, answers, served values) stops growing once each token carried
// a block of the run's shape, and with `bal` the traverse stage then allocates nothing
// (heap_counter.h counts the allocations).
#include <doctest/doctest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <mutex>
#include <random>
#include <set>

#include "engine/persist/snapshot/verify.h"
#include "engine/persist/tree_db.h"
#include "engine/bintrie/keys.h"
#include "engine/pipeline/block_run.h"
#include "engine/pipeline/key_paths.h"
#include "engine/pipeline/parallel.h"
#include "engine/state/bal_builder.h"
#include "kernels/keccak256.h"
#include "tests/engine/heap_counter.h"
#include "workloads/synthetic_state.h"

using namespace st::pipeline;

TEST_CASE("parallel_sort sorts like std::sort at 1, 2 and 3 threads") {
  std::mt19937_64 rng(3);
  for (unsigned threads : {1u, 2u, 3u}) {
    ThreadScope scope(threads);
    for (size_t n : {size_t(0), size_t(10), size_t(5000), size_t(50000), size_t(123457)}) {
      std::vector<uint32_t> v(n);
      for (auto& x : v) x = uint32_t(rng() % 1000);  // duplicates on purpose
      std::vector<uint32_t> want = v;
      std::sort(want.begin(), want.end());
      parallel_sort(v.begin(), v.end(), std::less<uint32_t>());
      CHECK(v == want);
    }
  }
}

TEST_CASE("thread_slot is below concurrency and unique among concurrently running threads") {
  ThreadScope scope(2);
  const unsigned c = concurrency();
  CHECK(c == 2);
  std::vector<std::atomic<int>> busy(c);
  std::atomic<bool> clash{false}, out_of_range{false};
  parallel_for(64, 1, [&](size_t, size_t) {
    const unsigned s = thread_slot();
    if (s >= c) { out_of_range = true; return; }
    if (busy[s].fetch_add(1) != 0) clash = true;
    volatile uint64_t spin = 0;
    for (int i = 0; i < 20000; ++i) spin = spin + uint64_t(i);
    busy[s].fetch_sub(1);
  });
  CHECK(!out_of_range);
  CHECK(!clash);
}

// ---- the commit stage: pages reused from the block's reads, hash time apart, pure hash ----

namespace {

namespace fs = std::filesystem;
using st::io::Status;
namespace state = st::state;
namespace persist = st::persist;

state::SyntheticSpec reuse_spec() {
  state::SyntheticSpec s;
  s.accounts = 200;
  s.contracts = 2;
  s.slots_per_contract = 600;
  s.seed = 11;
  return s;
}

state::U256 u256(uint64_t x) {
  state::U256 r{};
  for (int i = 31; i >= 24; --i, x >>= 8) r[size_t(i)] = uint8_t(x);
  return r;
}

// Four blocks over contract 1: each writes 24 existing slots (new values), creates 6 slots,
// reads 12 others and moves one EOA's balance; block b's slots are drawn from its own range,
// block b + 1 also rewrites 4 of block b's slots (so an overlapped reader is one block behind).
std::vector<state::Block> reuse_blocks(const state::SyntheticState& src) {
  std::vector<state::Block> blocks(4);
  const state::Address c = src.address(1);
  std::map<uint64_t, uint64_t> value;  // slot index -> value written so far
  for (uint64_t b = 0; b < blocks.size(); ++b) {
    state::BalBuilder bb;
    bb.begin(1);
    auto pre = [&](uint64_t j) {
      auto it = value.find(j);
      return it != value.end() ? u256(it->second) : src.slot_value(1, j).value();
    };
    std::vector<uint64_t> writes;
    for (uint64_t j = 0; j < 24; ++j) writes.push_back(b * 120 + j * 5);
    if (b > 0)
      for (uint64_t j = 0; j < 4; ++j) writes.push_back((b - 1) * 120 + j * 5);
    for (uint64_t j : writes) {
      const state::Hash32 slot = src.slot_key(1, j)->slot.value();
      const uint64_t v = 1000 * (b + 1) + j;
      bb.write_slot(c, slot, pre(j), u256(v));
      value[j] = v;
    }
    for (uint64_t j = 0; j < 12; ++j) {
      const uint64_t k = b * 120 + 2 + j * 7;
      bb.read_slot(c, src.slot_key(1, k)->slot.value(), pre(k));
    }
    for (uint64_t j = 0; j < 6; ++j) {
      state::Hash32 fresh{};
      fresh[0] = 0xee, fresh[1] = uint8_t(b), fresh[2] = uint8_t(j);
      bb.write_slot(c, fresh, u256(0), u256(7 + j));
    }
    state::AccountRecord er;
    src.account(20 + b, &er);
    bb.set_balance(src.address(20 + b), er.balance, u256(99 + b));
    bb.end();
    blocks[b].bal = bb.finish();
    blocks[b].header.number = b;
    blocks[b].header.tx_count = 1;
  }
  return blocks;
}

persist::DbOptions reuse_db_options(const std::string& dir, bool bintrie) {
  persist::DbOptions o;
  o.dir = dir;
  o.store = persist::StoreKind::arena;
  o.params.tree_kind = bintrie ? st::io::TreeKind::bintrie : st::io::TreeKind::mpt;
  o.params.hash_kind = bintrie ? st::io::HashKind::sha256 : st::io::HashKind::keccak256;
  o.params.group_depth = bintrie ? 4 : 0;
  o.params.page_size = 4096;
  o.queue_depth = 8;
  return o;
}

std::string reuse_tmp(const std::string& name) {
  const std::string d = "/tmp/statetree_pipeline_" + std::to_string(getpid()) + "_" + name;
  fs::remove_all(d);
  return d;
}

// The database of `src` built into a fresh directory `name` (reuse_db_options).
std::string built_db(const std::string& name, const state::SyntheticState& src, bool bintrie) {
  const std::string d = reuse_tmp(name);
  persist::BuildReport rep;
  REQUIRE(persist::build_db(reuse_db_options(d, bintrie), src, &rep).ok());
  return d;
}

// A fresh copy of database `db0` in directory `name`, for one run.
std::string run_copy(const std::string& db0, const std::string& name) {
  const std::string d = reuse_tmp(name);
  fs::copy(db0, d, fs::copy_options::recursive);
  return d;
}

}  // namespace

namespace {
// Forces block i's commit to wait (up to 20 s) until block i + 1 is traversed, so block
// i + 1's reader pins the state before block i and its commit walks pages block i wrote.
// Must outlive the run it is installed in.
struct ForcedOverlap {
  std::mutex mu;
  std::condition_variable cv;
  std::set<size_t> traversed;
  void install(RunOptions& o, size_t blocks) {
    o.after_traverse = [this](size_t i) {
      std::lock_guard<std::mutex> g(mu);
      traversed.insert(i);
      cv.notify_all();
    };
    o.before_commit = [this, blocks](size_t i) {
      if (i + 1 >= blocks) return;
      std::unique_lock<std::mutex> g(mu);
      cv.wait_for(g, std::chrono::seconds(20), [&] { return traversed.count(i + 1) > 0; });
    };
  }
};

// The blocks run on database `db` with `o` (its dir set here); at K = 2 with ForcedOverlap,
// so that block k + 1's reader pins the state before block k's commit. The run must
// succeed and report every block.
RunResult run_forced(const std::string& db, RunOptions o, const std::vector<state::Block>& blocks) {
  o.dir = db;
  ForcedOverlap overlap;
  if (o.inflight == 2) overlap.install(o, blocks.size());
  RunResult res;
  const Status st = run_blocks(o, blocks, &res);
  REQUIRE_MESSAGE(st.ok(), st.message());
  REQUIRE(res.blocks.size() == blocks.size());
  return res;
}

// Every configuration of a test must give the first one's per-block roots (and, where a
// test asks, the values its traversal read: read_digest).
struct SameAsFirstRun {
  std::vector<std::array<uint8_t, 32>> roots;
  std::vector<uint64_t> digests;
  void check(size_t i, const BlockResult& b, bool digest = true) {
    if (roots.size() <= i) {
      roots.push_back(b.commit_stats.root);
      digests.push_back(b.read_digest);
      return;
    }
    CHECK(b.commit_stats.root == roots[i]);
    if (digest) CHECK(b.read_digest == digests[i]);
  }
};
}  // namespace

TEST_CASE("block pipeline: the commit takes the block's read pages; the same roots with and without, any reader and K") {
  // Forced overlap at K = 2 (below) makes block i + 1's reader one state behind the commit
  // that uses its pages: what block i rewrote must come from block i's written pages.
  const state::SyntheticState src(reuse_spec());
  const std::vector<state::Block> blocks = reuse_blocks(src);
  for (bool bintrie : {false, true}) {
    CAPTURE(bintrie);
    const std::string db0 = built_db(bintrie ? "reuse_bt" : "reuse_mpt", src, bintrie);
    // The reference: no reuse, serial reads, one block at a time.
    SameAsFirstRun first;
    for (ReaderModel reader : {ReaderModel::serial, ReaderModel::bal, ReaderModel::geth})
      for (uint32_t k : {1u, 2u})
        for (bool reuse : {false, true}) {
          CAPTURE(reader_model_name(reader));
          CAPTURE(k);
          CAPTURE(reuse);
          const std::string db = run_copy(db0, "reuse_run");
          RunOptions o;
          o.reader = reader;
          o.inflight = k;
          o.geth_workers = 2;
          o.reuse_read_pages = reuse;
          o.pure_hash = true;
          // K = 2: block i commits only once block i + 1 is traversed, so block i + 1's
          // reader pins the state before block i and its commit walks pages block i wrote.
          const RunResult res = run_forced(db, o, blocks);
          for (size_t i = 0; i < blocks.size(); ++i) {
            const BlockResult& b = res.blocks[i];
            CAPTURE(i);
            first.check(i, b, false);
            if (!reuse) {
              CHECK(b.commit_stats.pages_reused == 0);
              CHECK(b.read_pages_offered == 0);
              CHECK(b.commit_stats.pages_read > 0);
            } else {
              // Every page the commit walks from the committing root was read by the block's
              // own reader (it looked up every key the block writes, no delete collapses a
              // node here) or written by the previous commit (K = 2: the reader is a block
              // behind): the commit reads nothing.
              CHECK(b.commit_stats.pages_reused > 0);
              CHECK(b.commit_stats.pages_read == 0);
            }
            // The pure hash ran and matched (a mismatch fails the block): MPT, one digest per
            // record written; binary trie, one per new stem or group.
            CHECK(b.commit_stats.pure_hash_nodes > 0);
            CHECK(b.commit_stats.pure_hash_calls > 0);
            if (!bintrie) CHECK(b.commit_stats.pure_hash_nodes == b.commit_stats.records_written);
            CHECK(b.commit_stats.write_ns == b.commit_stats.hash_ns + b.commit_stats.page_write_ns);
          }
          fs::remove_all(db);
        }
    fs::remove_all(db0);
  }
}

namespace {
// `count` blocks of one shape (20 slots written, 10 read, one balance moved; each block its
// own slots of contract 1, at most 10 blocks within reuse_spec's 600 slots).
std::vector<state::Block> same_shape_blocks(const state::SyntheticState& src, size_t count) {
  std::vector<state::Block> blocks(count);
  for (uint64_t b = 0; b < blocks.size(); ++b) {
    state::BalBuilder bb;
    bb.begin(1);
    const state::Address c = src.address(1);
    for (uint64_t j = 0; j < 20; ++j)
      bb.write_slot(c, src.slot_key(1, b * 60 + j * 2)->slot.value(), src.slot_value(1, b * 60 + j * 2).value(), u256(b + j + 1));
    for (uint64_t j = 0; j < 10; ++j)
      bb.read_slot(c, src.slot_key(1, b * 60 + 40 + j)->slot.value(), src.slot_value(1, b * 60 + 40 + j).value());
    state::AccountRecord er;
    src.account(30 + b, &er);
    bb.set_balance(src.address(30 + b), er.balance, u256(5 + b));
    bb.end();
    blocks[b].bal = bb.finish();
    blocks[b].header.number = b;
    blocks[b].header.tx_count = 1;
  }
  return blocks;
}
}  // namespace

TEST_CASE("block pipeline: the tokens' scratch stops growing once each token carried a block; same roots for any K") {
  // Six blocks of one shape: the K + 1 tokens take them in turn, so from block K + 1 on
  // every token has carried a block as large and its key index, answers and served values
  // need no new memory.
  const state::SyntheticState src(reuse_spec());
  const std::vector<state::Block> blocks = same_shape_blocks(src, 6);
  const std::string db0 = built_db("scratch0", src, false);
  SameAsFirstRun first;
  for (ReaderModel reader : {ReaderModel::bal, ReaderModel::serial})
    for (uint32_t k : {1u, 2u, 3u}) {
      CAPTURE(reader_model_name(reader));
      CAPTURE(k);
      const std::string db = run_copy(db0, "scratch_run");
      RunOptions o;
      o.dir = db;
      o.reader = reader;
      o.inflight = k;
      RunResult res;
      const Status st = run_blocks(o, blocks, &res);
      REQUIRE_MESSAGE(st.ok(), st.message());
      REQUIRE(res.blocks.size() == blocks.size());
      CHECK(res.blocks[0].scratch_grown_bytes > 0);
      for (size_t i = 0; i < blocks.size(); ++i) {
        CAPTURE(i);
        if (i > k) CHECK(res.blocks[i].scratch_grown_bytes == 0);
        first.check(i, res.blocks[i], false);
      }
      fs::remove_all(db);
    }
  fs::remove_all(db0);
}

TEST_CASE("block pipeline: block k+1's hash runs while block k publishes; the roots of K = 1, verify passes") {
  // Block k's publish waits until block k + 1 is hashed: that hash resolves from block k's
  // packed pages and root (block k + 1 rewrites 4 of block k's slots), not the disk's
  // published state. Without the overlap (RunOptions::overlap_hash off) block k + 1's hash
  // starts only after block k's publish.
  const state::SyntheticState src(reuse_spec());
  const std::vector<state::Block> blocks = reuse_blocks(src);
  for (bool bintrie : {false, true}) {
    CAPTURE(bintrie);
    const std::string db0 = built_db(bintrie ? "ovl_bt" : "ovl_mpt", src, bintrie);
    std::vector<std::array<uint8_t, 32>> want;  // K = 1
    for (uint32_t k : {1u, 2u, 3u})
      for (bool overlap : {true, false}) {
        if (k == 1 && !overlap) continue;
        CAPTURE(k);
        CAPTURE(overlap);
        const std::string db = run_copy(db0, "ovl_run");
        RunOptions o;
        o.dir = db;
        o.reader = ReaderModel::bal;
        o.inflight = k;
        o.overlap_hash = overlap;
        std::mutex mu;
        std::condition_variable cv;
        std::set<size_t> hashed;
        o.after_hash = [&](size_t i) {
          std::lock_guard<std::mutex> g(mu);
          hashed.insert(i);
          cv.notify_all();
        };
        if (k > 1 && overlap)
          o.before_publish = [&](size_t i) {
            if (i + 1 >= blocks.size()) return;
            std::unique_lock<std::mutex> g(mu);
            cv.wait_for(g, std::chrono::seconds(10), [&] { return hashed.count(i + 1) > 0; });
          };
        RunResult res;
        const Status st = run_blocks(o, blocks, &res);
        REQUIRE_MESSAGE(st.ok(), st.message());
        REQUIRE(res.blocks.size() == blocks.size());
        for (size_t i = 0; i < blocks.size(); ++i) {
          CAPTURE(i);
          const BlockResult& b = res.blocks[i];
          if (k == 1) want.push_back(b.commit_stats.root);
          else CHECK(b.commit_stats.root == want[i]);
          CHECK(b.hash.end_ns <= b.commit.start_ns);
          if (k <= 2) CHECK(b.commit_stats.pages_read == 0);  // block k's pages came from memory
          if (i + 1 == blocks.size()) continue;
          const BlockResult& next = res.blocks[i + 1];
          if (k > 1 && overlap) CHECK(next.hash.end_ns < b.commit.end_ns);  // hashed during the publish
          else CHECK(next.hash.start_ns >= b.commit.end_ns);
        }
        std::unique_ptr<persist::TreeDb> after;
        REQUIRE(persist::open_any_db(db, 8, &after).ok());
        persist::VerifyReport vr;
        const Status vs = after->verify(&vr);
        CHECK_MESSAGE(vs.ok(), vs.message());
        CHECK(vr.root == res.root);
        CHECK(res.root == want.back());
        after.reset();
        fs::remove_all(db);
      }
    fs::remove_all(db0);
  }
}

TEST_CASE("block pipeline: the commit's write runs give the roots and files of page-by-page writes, K = 1 and 2, in fewer device writes") {
  // Each commit's pages with consecutive ids go to the device as one write (up to 64 KiB):
  // the same roots as one write per page at any K (block k+1's hash at K = 2 reads block k's
  // pages from memory, later blocks read them from disk), verify passes after, and the writes
  // are fewer. Page by page, a commit makes one write per tree page plus its commit record.
  const state::SyntheticState src(reuse_spec());
  const std::vector<state::Block> blocks = reuse_blocks(src);
  for (bool bintrie : {false, true}) {
    CAPTURE(bintrie);
    const std::string db0 = built_db(bintrie ? "runs_bt" : "runs_mpt", src, bintrie);
    SameAsFirstRun first;
    for (uint32_t k : {1u, 2u})
      for (bool runs : {false, true}) {
        CAPTURE(k);
        CAPTURE(runs);
        const std::string db = run_copy(db0, "runs_run");
        RunOptions o;
        o.reader = ReaderModel::bal;
        o.inflight = k;
        o.write_runs = runs;
        const RunResult res = run_forced(db, o, blocks);
        uint64_t pages = 0, ops = 0;
        for (size_t i = 0; i < blocks.size(); ++i) {
          CAPTURE(i);
          const BlockResult& b = res.blocks[i];
          first.check(i, b);
          pages += b.commit_stats.pages_written;
          ops += b.commit_stats.page_write_ops;
          if (!runs) CHECK(b.commit_stats.page_write_ops == b.commit_stats.pages_written + 1);
          CHECK(b.commit_stats.page_write_ops >= 1);
        }
        if (runs) CHECK(ops * 2 < pages);
        std::unique_ptr<persist::TreeDb> after;
        REQUIRE(persist::open_any_db(db, 8, &after).ok());
        persist::VerifyReport vr;
        const Status vs = after->verify(&vr);
        CHECK_MESSAGE(vs.ok(), vs.message());
        CHECK(vr.root == res.root);
        after.reset();
        fs::remove_all(db);
      }
    fs::remove_all(db0);
  }
}

TEST_CASE("block pipeline: overlapping bal prefetches under one queue budget read the values and give the roots of one at a time") {
  // With the overlap, block i's prefetch holds its end (after_prefetch) until block i + 1's
  // prefetch has started: the two read at once, through readers sharing one queue budget.
  // Without it (the reference) one prefetch runs at a time. The values read (read_digest)
  // and the roots must be the same, K = 2 and 3, both trees; at K = 2 the commit still reads
  // nothing.
  const state::SyntheticState src(reuse_spec());
  const std::vector<state::Block> blocks = reuse_blocks(src);
  for (bool bintrie : {false, true}) {
    CAPTURE(bintrie);
    const std::string db0 = built_db("pfov0", src, bintrie);
    SameAsFirstRun first;
    for (uint32_t k : {1u, 2u, 3u})
      for (bool overlap : {false, true}) {
        if (k == 1 && overlap) continue;
        CAPTURE(k);
        CAPTURE(overlap);
        const std::string db = run_copy(db0, "pfov_run");
        RunOptions o;
        o.dir = db;
        o.reader = ReaderModel::bal;
        o.inflight = k;
        o.overlap_prefetch = overlap;
        CHECK(prefetch_overlap_used(o, persist::StoreKind::arena) == overlap);
        std::mutex mu;
        std::condition_variable cv;
        std::set<size_t> started;
        bool timed_out = false;
        o.during_prefetch = [&](size_t i) {
          std::lock_guard<std::mutex> g(mu);
          started.insert(i);
          cv.notify_all();
        };
        if (overlap)
          o.after_prefetch = [&](size_t i) {
            if (i + 1 >= blocks.size()) return;
            std::unique_lock<std::mutex> g(mu);
            if (!cv.wait_for(g, std::chrono::seconds(5), [&] { return started.count(i + 1) > 0; })) timed_out = true;
          };
        RunResult res;
        const Status st = run_blocks(o, blocks, &res);
        REQUIRE_MESSAGE(st.ok(), st.message());
        CHECK_FALSE(timed_out);  // serial prefetches would hold block i's until the wait gave up
        REQUIRE(res.blocks.size() == blocks.size());
        for (size_t i = 0; i < blocks.size(); ++i) {
          const BlockResult& b = res.blocks[i];
          CAPTURE(i);
          CHECK(b.prefetch_shared_queue == overlap);
          first.check(i, b);
          if (k <= 2) CHECK(b.commit_stats.pages_read == 0);  // K = 3: what block i - 2 rewrote is read
          CHECK(b.state_read_latency_us.count == b.prefetch_page_reads);
          if (i + 1 == blocks.size()) continue;
          // One at a time: block i + 1's prefetch starts after block i's ends (with the
          // overlap, !timed_out above says block i + 1's started while block i's was held).
          if (!overlap) CHECK(res.blocks[i + 1].prefetch.start_ns >= b.prefetch.end_ns);
        }
        fs::remove_all(db);
      }
    fs::remove_all(db0);
  }
}

TEST_CASE("block pipeline: under a caller's one-thread limit the prefetches run one at a time, with the roots of K = 1") {
  const state::SyntheticState src(reuse_spec());
  const std::vector<state::Block> blocks = reuse_blocks(src);
  const std::string db0 = built_db("pfov_limit0", src, false);
  SameAsFirstRun first;
  for (uint32_t k : {1u, 2u}) {
    CAPTURE(k);
    const std::string db = run_copy(db0, "pfov_limit");
    RunOptions o;
    o.dir = db;
    o.reader = ReaderModel::bal;
    o.inflight = k;
    RunResult res;
    Status st;
    {
      ThreadScope one(1);  // the process-wide parallelism limit is 1 while it lives
      st = run_blocks(o, blocks, &res);
    }
    REQUIRE_MESSAGE(st.ok(), st.message());
    REQUIRE(res.blocks.size() == blocks.size());
    for (size_t i = 0; i < blocks.size(); ++i) {
      CAPTURE(i);
      CHECK_FALSE(res.blocks[i].prefetch_shared_queue);
      first.check(i, res.blocks[i]);
    }
    fs::remove_all(db);
  }
  fs::remove_all(db0);
}

TEST_CASE("block pipeline: prefetches overlap only for bal on the arena with one prefetch thread, no snapshot, K > 1") {
  RunOptions o;
  o.reader = ReaderModel::bal;
  o.inflight = 2;
  CHECK(prefetch_overlap_used(o, persist::StoreKind::arena));
  CHECK_FALSE(prefetch_overlap_used(o, persist::StoreKind::rocksdb));
  o.overlap_prefetch = false;
  CHECK_FALSE(prefetch_overlap_used(o, persist::StoreKind::arena));
  o.overlap_prefetch = true;
  o.inflight = 1;
  CHECK_FALSE(prefetch_overlap_used(o, persist::StoreKind::arena));
  o.inflight = 2;
  o.prefetch_threads = 2;
  CHECK_FALSE(prefetch_overlap_used(o, persist::StoreKind::arena));
  o.prefetch_threads = 1;
  o.snapshot = true;
  CHECK_FALSE(prefetch_overlap_used(o, persist::StoreKind::arena));
  o.snapshot = false;
  for (ReaderModel r : {ReaderModel::serial, ReaderModel::geth}) {
    o.reader = r;
    CHECK_FALSE(prefetch_overlap_used(o, persist::StoreKind::arena));
  }
}

TEST_CASE("key paths: the first byte of each key's path, MPT keccak256 of slot or address, binary trie the tree key") {
  std::mt19937_64 rng(9);
  std::vector<state::StateKey> keys;
  for (int i = 0; i < 37; ++i) {  // accounts and slots mixed; more slots than one 8-lane batch
    state::StateKey k;
    for (auto& b : k.address) b = uint8_t(rng());
    if (i % 5) {
      state::Hash32 slot{};
      for (auto& b : slot) b = uint8_t(rng());
      k.slot = slot;
    }
    keys.push_back(k);
  }
  KeyPaths paths;
  st::io::StoreParams mpt;
  mpt.tree_kind = st::io::TreeKind::mpt;
  paths.compute(mpt, keys);
  REQUIRE(paths.first_byte.size() == keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    CAPTURE(i);
    uint8_t d[32];
    if (keys[i].slot) st::kernels::keccak256(keys[i].slot->data(), 32, d);
    else st::kernels::keccak256(keys[i].address.data(), 20, d);
    CHECK(paths.first_byte[i] == d[0]);
  }
  for (st::io::HashKind kind : {st::io::HashKind::sha256, st::io::HashKind::blake3}) {
    st::io::StoreParams bt;
    bt.tree_kind = st::io::TreeKind::bintrie;
    bt.hash_kind = kind;
    paths.compute(bt, keys);
    const st::bintrie::KeyScheme ks{st::bintrie::make_hasher(kind), st::bintrie::TreeIndexEndian::big};
    for (size_t i = 0; i < keys.size(); ++i) {
      CAPTURE(i);
      const st::bintrie::Hash32 key = keys[i].slot ? st::bintrie::storage_slot_key(ks, keys[i].address, *keys[i].slot)
                                                  : st::bintrie::basic_data_key(ks, keys[i].address);
      CHECK(paths.first_byte[i] == key[0]);
    }
  }
}

TEST_CASE("block pipeline: a bal prefetch split over 1, 2 or 3 threads reads the same values, gives the same roots, hands every page to the commit") {
  // The split deals the keys out by path; each share reads through its own reader of the
  // same state. Whatever the split, the traversal must read the same (key, value) sequence
  // (read_digest), the commits give the same roots, and the commit reads nothing (every
  // page any share read went to it). K = 2 with a forced overlap: block i + 1's readers pin
  // the state before block i's commit.
  const state::SyntheticState src(reuse_spec());
  const std::vector<state::Block> blocks = reuse_blocks(src);
  for (bool bintrie : {false, true}) {
    CAPTURE(bintrie);
    const std::string db0 = built_db("split0", src, bintrie);
    SameAsFirstRun first;
    std::vector<uint64_t> single_reads;
    for (uint32_t k : {1u, 2u})
      for (uint32_t threads : {1u, 2u, 3u}) {
        CAPTURE(k);
        CAPTURE(threads);
        const std::string db = run_copy(db0, "split_run");
        RunOptions o;
        o.reader = ReaderModel::bal;
        o.inflight = k;
        o.prefetch_threads = threads;
        const RunResult res = run_forced(db, o, blocks);
        for (size_t i = 0; i < blocks.size(); ++i) {
          const BlockResult& b = res.blocks[i];
          CAPTURE(i);
          CHECK(b.prefetch_threads == threads);
          CHECK(b.prefetch_keys > 0);
          first.check(i, b);
          if (k == 1 && threads == 1) single_reads.push_back(b.prefetch_page_reads);
          // Each page is read by at most every share (the top pages), never less than once.
          if (k == 1) {
            CHECK(b.prefetch_page_reads >= single_reads[i]);
            CHECK(b.prefetch_page_reads <= threads * single_reads[i]);
          }
          if (threads == 1) CHECK(b.prefetch_helper_busy_ns == 0);
          CHECK(b.commit_stats.pages_read == 0);
          CHECK(b.commit_stats.pages_reused > 0);
          CHECK(b.state_read_latency_us.count == b.prefetch_page_reads);  // every share's reads timed
        }
        fs::remove_all(db);
      }
    fs::remove_all(db0);
  }
}

TEST_CASE("block pipeline: a split prefetch takes at most one thread per read in flight; serial and geth never split") {
  const state::SyntheticState src(reuse_spec());
  const std::vector<state::Block> blocks = reuse_blocks(src);
  const std::string db0 = built_db("split_qd0", src, false);
  struct Case {
    ReaderModel reader;
    uint32_t qd, threads, used;
  };
  for (const Case& c : {Case{ReaderModel::bal, 2, 3, 2}, Case{ReaderModel::bal, 1, 2, 1}, Case{ReaderModel::serial, 8, 2, 1},
                        Case{ReaderModel::geth, 8, 2, 1}}) {
    CAPTURE(reader_model_name(c.reader));
    CAPTURE(c.qd);
    CAPTURE(c.threads);
    RunOptions o;
    o.reader = c.reader;
    o.queue_depth = c.qd;
    o.prefetch_threads = c.threads;
    CHECK(prefetch_threads_used(o, persist::StoreKind::arena) == c.used);
    CHECK(prefetch_threads_used(o, persist::StoreKind::rocksdb) == 1);
    const std::string db = run_copy(db0, "split_qd");
    o.dir = db;
    o.geth_workers = 1;
    RunResult res;
    const Status st = run_blocks(o, blocks, &res);
    REQUIRE_MESSAGE(st.ok(), st.message());
    for (const BlockResult& b : res.blocks) CHECK(b.prefetch_threads == c.used);
    fs::remove_all(db);
  }
  fs::remove_all(db0);
}

TEST_CASE("block pipeline: without the reuse the commit reads the pages the block's reader had read") {
  // The device reads the reuse saves: bal, one block at a time.
  const state::SyntheticState src(reuse_spec());
  const std::vector<state::Block> blocks = reuse_blocks(src);
  for (bool bintrie : {false, true}) {
    CAPTURE(bintrie);
    const std::string db0 = built_db("saves0", src, bintrie);
    uint64_t reads[2] = {0, 0}, reused[2] = {0, 0};
    for (bool reuse : {false, true}) {
      const std::string db = run_copy(db0, "saves");
      RunOptions o;
      o.dir = db;
      o.reader = ReaderModel::bal;
      o.reuse_read_pages = reuse;
      RunResult res;
      REQUIRE(run_blocks(o, blocks, &res).ok());
      for (const BlockResult& b : res.blocks) reads[reuse] += b.commit_stats.pages_read, reused[reuse] += b.commit_stats.pages_reused;
      fs::remove_all(db);
    }
    CHECK(reads[0] > 0);
    CHECK(reused[0] == 0);
    CHECK(reads[1] == 0);
    CHECK(reused[1] == reads[0]);  // every page the commit read is one the block's reader had read
    fs::remove_all(db0);
  }
}

// ---- the state reads from the flat snapshot (RunOptions::snapshot) ----

namespace {

// The state-read device reads of a run (prefetch, traverse, geth's workers) and its slots read.
std::pair<uint64_t, uint64_t> state_reads_of(const RunResult& res) {
  uint64_t reads = 0, slots = 0;
  for (const BlockResult& b : res.blocks)
    reads += b.prefetch_page_reads + b.traverse_page_reads + b.ahead_page_reads, slots += b.slots_read;
  return {reads, slots};
}

// Runs `blocks` on a fresh copy of db0 (in tmp dir `name`) with options `o` (its dir set
// here) into *res, then checks the database after the run: the tree re-hashes to the run's
// root and the snapshot equals the tree's leaves. The copy is removed.
void run_on_copy_and_verify(const std::string& db0, const std::string& name, RunOptions o,
                            const std::vector<state::Block>& blocks, RunResult* res) {
  const std::string db = run_copy(db0, name);
  o.dir = db;
  const Status st = run_blocks(o, blocks, res);
  REQUIRE_MESSAGE(st.ok(), st.message());
  REQUIRE(res->blocks.size() == blocks.size());
  std::unique_ptr<persist::TreeDb> after;
  REQUIRE(persist::open_any_db(db, 8, &after).ok());
  persist::VerifyReport vr;
  persist::SnapshotVerifyReport sr;
  const Status vs = persist::verify_with_snapshot(*after, &vr, &sr);
  CHECK_MESSAGE(vs.ok(), vs.message());
  CHECK(sr.present);
  CHECK(sr.ok);
  CHECK(vr.root == res->root);
  fs::remove_all(db);
}

// The blocks run twice from copies of db0 with `reader` and K = k: res[0] reading the tree,
// res[1] the flat snapshot.
void run_tree_and_snapshot(const std::string& db0, const std::string& name, ReaderModel reader, uint32_t k,
                           const std::vector<state::Block>& blocks, RunResult (&res)[2]) {
  for (bool snap : {false, true}) {
    CAPTURE(snap);
    RunOptions o;
    o.reader = reader;
    o.inflight = k;
    o.geth_workers = 2;
    o.snapshot = snap;
    run_on_copy_and_verify(db0, name, o, blocks, &res[snap]);
  }
}

}  // namespace

TEST_CASE("block pipeline --snapshot: the same roots and values read as from the tree, fewer reads per slot, verify passes") {
  const state::SyntheticState src(reuse_spec());
  const std::vector<state::Block> blocks = reuse_blocks(src);
  for (bool bintrie : {false, true}) {
    CAPTURE(bintrie);
    const std::string db0 = reuse_tmp(bintrie ? "snap_bt" : "snap_mpt");
    persist::DbOptions bo = reuse_db_options(db0, bintrie);
    bo.snapshot = true;
    persist::BuildReport rep;
    REQUIRE(persist::build_db(bo, src, &rep).ok());
    REQUIRE(rep.snapshot_entries > 0);
    for (ReaderModel reader : {ReaderModel::serial, ReaderModel::bal, ReaderModel::geth})
      for (uint32_t k : {1u, 2u}) {
        if (k == 2 && reader != ReaderModel::bal) continue;
        CAPTURE(reader_model_name(reader));
        CAPTURE(k);
        RunResult res[2];
        run_tree_and_snapshot(db0, "snap_run", reader, k, blocks, res);
        for (size_t i = 0; i < blocks.size(); ++i) {
          CAPTURE(i);
          const BlockResult &tree = res[0].blocks[i], &snap = res[1].blocks[i];
          CHECK(snap.commit_stats.root == tree.commit_stats.root);
          CHECK(snap.read_digest == tree.read_digest);  // the same (key, value) sequence read
          // At K = 2 a block's misses depend on where its prefetch fell against the previous
          // block's publish (what the diff layer served), which the scheduler decides.
          if (k == 1) CHECK(snap.misses == tree.misses);
          CHECK(tree.snapshot_index_page_reads == 0);
          CHECK(snap.snapshot_index_page_reads > 0);
          // The reader hands the commit no tree pages: it resolves its paths itself.
          CHECK(snap.read_pages_offered == 0);
          CHECK(snap.commit_stats.pages_read > 0);
        }
        const auto [tree_reads, tree_slots] = state_reads_of(res[0]);
        const auto [snap_reads, snap_slots] = state_reads_of(res[1]);
        CHECK(snap_slots == tree_slots);
        CHECK(snap_reads > 0);
        CHECK(snap_reads <= tree_reads);
        // One device read per key at most: every account and slot the blocks touch.
        uint64_t keys = 0;
        for (const state::Block& b : blocks) {
          keys += b.bal.accounts.size();
          for (const state::AccountChanges& a : b.bal.accounts) keys += a.storage_changes.size() + a.storage_reads.size();
        }
        CHECK(snap_reads <= keys);
      }
    fs::remove_all(db0);
  }
}

TEST_CASE("block pipeline --snapshot on RocksDB: the same roots and values read as from the tree, serial and bal, K = 1 and 2; verify passes") {
  const state::SyntheticState src(reuse_spec());
  const std::vector<state::Block> blocks = reuse_blocks(src);
  for (bool bintrie : {false, true}) {
    CAPTURE(bintrie);
    const std::string db0 = reuse_tmp(bintrie ? "rsnap_bt" : "rsnap_mpt");
    persist::DbOptions bo = reuse_db_options(db0, bintrie);
    bo.store = persist::StoreKind::rocksdb;
    bo.direct_io = false;
    bo.snapshot = true;
    persist::BuildReport rep;
    REQUIRE(persist::build_db(bo, src, &rep).ok());
    for (ReaderModel reader : {ReaderModel::serial, ReaderModel::bal})
      for (uint32_t k : {1u, 2u}) {
        if (k == 2 && reader != ReaderModel::bal) continue;
        CAPTURE(reader_model_name(reader));
        CAPTURE(k);
        RunResult res[2];
        run_tree_and_snapshot(db0, "rsnap_run", reader, k, blocks, res);
        for (size_t i = 0; i < blocks.size(); ++i) {
          CAPTURE(i);
          const BlockResult &tree = res[0].blocks[i], &snap = res[1].blocks[i];
          CHECK(snap.commit_stats.root == tree.commit_stats.root);
          CHECK(snap.read_digest == tree.read_digest);  // the same (key, value) sequence read
          // K = 2: the misses depend on how far each reader's state was (the diff layer
          // serves the rest); the same state, the same misses.
          if (snap.reader_blocks_visible == tree.reader_blocks_visible) CHECK(snap.misses == tree.misses);
          CHECK(snap.snapshot_index_page_reads == 0);  // RocksDB: no index pages to load
        }
        CHECK(state_reads_of(res[1]).second == state_reads_of(res[0]).second);
      }
    fs::remove_all(db0);
  }
}

TEST_CASE("block pipeline --snapshot on a database without one: refused before anything is read or committed") {
  const state::SyntheticState src(reuse_spec());
  const std::vector<state::Block> blocks = reuse_blocks(src);
  const std::string db = reuse_tmp("snap_none");
  persist::BuildReport rep;
  REQUIRE(persist::build_db(reuse_db_options(db, false), src, &rep).ok());
  RunOptions o;
  o.dir = db;
  o.snapshot = true;
  RunResult res;
  const Status st = run_blocks(o, blocks, &res);
  CHECK(st.code() == st::io::Errc::bad_argument);
  CHECK(st.message().find("no flat snapshot") != std::string::npos);
  CHECK(res.blocks.empty());
  std::unique_ptr<persist::TreeDb> after;
  REQUIRE(persist::open_any_db(db, 8, &after).ok());
  CHECK(after->manifest().root_hash == rep.root);
  fs::remove_all(db);
}

namespace {
// Heap allocations per block and stage (each stage's body runs on one thread: counted there
// alone), from the stage hooks: prefetch (during_prefetch .. after_prefetch), traverse,
// hash, commit (before_commit .. on_block).
struct StageAllocs {
  enum Stage { prefetch, traverse, hash, commit, stages };
  std::vector<std::array<st::test::HeapCount, stages>> at_start, per_block;
  explicit StageAllocs(size_t blocks) : at_start(blocks), per_block(blocks) {}
  void start(size_t i, Stage s) { at_start[i][s] = st::test::heap_count_this_thread(); }
  void end(size_t i, Stage s) { per_block[i][s] = st::test::heap_count_this_thread() - at_start[i][s]; }
  void hook(RunOptions& o) {
    o.during_prefetch = [this](size_t i) { start(i, prefetch); };
    o.after_prefetch = [this](size_t i) { end(i, prefetch); };
    o.before_traverse = [this](size_t i) { start(i, traverse); };
    o.after_traverse = [this](size_t i) { end(i, traverse); };
    o.before_hash = [this](size_t i) { start(i, hash); };
    o.after_hash = [this](size_t i) { end(i, hash); };
    o.before_commit = [this](size_t i) { start(i, commit); };
  }
};
}  // namespace

TEST_CASE("block pipeline: with bal the traverse stage allocates nothing per block in steady state, K = 1 and 2; the MPT hash stage reuses its scratch") {
  const state::SyntheticState src(reuse_spec());
  const std::vector<state::Block> blocks = same_shape_blocks(src, 10);
  const std::string db0 = built_db("heap0", src, false);
  for (ReaderModel reader : {ReaderModel::bal, ReaderModel::serial})
    for (uint32_t k : {1u, 2u})
    for (uint32_t threads : {1u, 2u}) {  // bal's prefetch on one reader, or split over two
      CAPTURE(reader_model_name(reader));
      CAPTURE(k);
      CAPTURE(threads);
      const std::string db = run_copy(db0, "heap_run");
      RunOptions o;
      o.dir = db;
      o.reader = reader;
      o.inflight = k;
      o.prefetch_threads = threads;
      StageAllocs allocs(blocks.size());
      allocs.hook(o);
      RunResult res;
      const Status st = run_blocks(o, blocks, &res, [&](const BlockResult& b) { allocs.end(b.index, StageAllocs::commit); });
      REQUIRE_MESSAGE(st.ok(), st.message());
      // With `bal` the traverse stage touches no reader code that allocates (its lookups were
      // the prefetch's): its scratch (accesses, served values, diff, the diff layer's
      // vectors, per_tx) is reused once the tokens and the layer's K + 1 ring entries have
      // carried a block of the run's shape (block 6 at most here). With `serial` its lookups
      // (the reader's cursors and page map) still allocate, as do the reader's opening in
      // the prefetch and the committer's phases in hash and commit (docs/pipeline.md).
      for (size_t i = 6; i < blocks.size(); ++i) {
        CAPTURE(i);
        const auto& c = allocs.per_block[i];
        if (reader == ReaderModel::bal) CHECK(c[StageAllocs::traverse].calls == 0);
        if (reader == ReaderModel::bal) CHECK(c[StageAllocs::traverse].bytes == 0);
        CHECK(c[StageAllocs::prefetch].calls > 0);  // the reader's opening: counted, not zero
        // The MPT commit's hash(): its tries and its phases' scratch (the resolve rounds'
        // lists and records, the slot keys' keccak batch, the pack list, the pure hash's
        // levels) come with what a published commit hands over, so what it still allocates
        // per block is its frame, the account ops and the tries' growth (under 100 calls
        // here; ~190 with the round scratch made per round). At K = 2 a hash may start before the previous publish handed its
        // arrays over, and then makes them afresh.
        if (k == 1) CHECK(c[StageAllocs::hash].calls < 100);
      }
      fs::remove_all(db);
    }
  fs::remove_all(db0);
}
