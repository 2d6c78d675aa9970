// block_run: the block pipeline's flow graph (block_run.h):
//
//   input_node (the next block, on a free token)
//     -> limiter_node(K) -> sequencer -> prefetch (serial; overlapping: up to K, one queue
//        budget, readers opened in block order) -> sequencer -> traverse (serial)
//     -> sequencer -> limiter_node(1) -> hash (serial) -> commit (serial, two outputs):
//          packed (after write_pages, or after publish without the overlap) -> limiter(1)'s decrementer
//          done (after publish)                                              -> limiter(K)'s decrementer
//
// Each serial stage takes the blocks in block order (a sequencer_node before it, keyed by
// the block's index): readers must open in block order (the diff layer drops what the
// oldest reader still to come cannot need) and traversals must add their diffs in order.
//
// K + 1 preallocated tokens circulate: K between the limiter and the end of a commit, one
// held by the input node while the limiter is full. A failure is recorded on its token and
// passed along (no body throws); the commit stage records the first one and commits nothing
// after it; the input node stops admitting blocks. With RunOptions::stage_cpus a stage's
// body confines its thread to the stage's CPUs for the body (ScopedCpus, parallel.h).
#include "engine/pipeline/block_run.h"

#include <tbb/flow_graph.h>
#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <tuple>

#include "engine/persist/bintrie/commit.h"
#include "engine/persist/db_files.h"
#include "engine/persist/mpt/commit.h"
#include "engine/pipeline/block_stages.h"
#include "engine/pipeline/parallel.h"
#include "kernels/support/check.h"
#include "kernels/support/clock.h"

namespace st::pipeline {

const char* reader_model_name(ReaderModel m) {
  switch (m) {
    case ReaderModel::serial: return "serial";
    case ReaderModel::bal: return "bal";
    case ReaderModel::geth: return "geth";
  }
  return "?";
}

uint32_t prefetch_threads_used(const RunOptions& o, persist::StoreKind store) {
  if (o.reader != ReaderModel::bal || store != persist::StoreKind::arena || o.snapshot) return 1;
  return std::max<uint32_t>(1, std::min(o.prefetch_threads, o.queue_depth));
}

bool prefetch_overlap_used(const RunOptions& o, persist::StoreKind store) {
  return o.overlap_prefetch && o.inflight > 1 && o.reader == ReaderModel::bal && store == persist::StoreKind::arena &&
         !o.snapshot && prefetch_threads_used(o, store) == 1;
}

namespace {
using namespace detail;

io::Status bad(std::string m) { return io::Status(io::Errc::bad_argument, std::move(m)); }

// The options alone (before any file is opened).
io::Status check_options(const RunOptions& options) {
  if (options.inflight < 1 || options.inflight > 16) return bad("--inflight must be in 1..16");
  if (options.queue_depth < 1) return bad("--qd must be at least 1");
  if (options.prefetch_threads < 1 || options.prefetch_threads > 16) return bad("--prefetch-threads must be in 1..16");
  if (options.geth_workers > 256) return bad("--workers must be in 1..256");
  for (const std::vector<int>* cpus :
       {&options.stage_cpus.prefetch, &options.stage_cpus.traverse, &options.stage_cpus.hash, &options.stage_cpus.commit})
    for (int c : *cpus)
      if (!cpu_allowed(c)) return bad("--pin: CPU " + std::to_string(c) + " is not one this process may run on");
  return {};
}

// The database opened for the run's commits (the writer lock first: a second writer is
// refused before anything is read), and the checks before the first commit.
io::Status open_writer(const RunOptions& options, std::span<const state::Block> blocks, persist::DbOptions* o,
                       persist::DbFiles* files) {
  if (io::Status s = persist::DbFiles::probe(options.dir, o); !s.ok()) return s;
  if (o->params.tree_kind != io::TreeKind::mpt && o->params.tree_kind != io::TreeKind::bintrie)
    return bad(std::string("the block pipeline needs an MPT or binary-trie database, not ") +
               io::tree_kind_name(o->params.tree_kind));
  o->queue_depth = options.queue_depth;
  if (io::Status s = persist::DbFiles::for_commit(*o, files); !s.ok()) return s;
  return check_blocks(*files, blocks, options.queue_depth, options.snapshot);
}

// The hash and commit stages: both serial, in block order; the first failure stops every
// later commit. hash(): the committer's resolve, apply, encode + hash in memory (the new
// root); commit(): its write_pages() (pack, page writes) and publish() (release, fsync,
// MANIFEST). Between the two the commit stage signals `packed`: the next block's hash may
// start, on the root and pages write_pages() handed over, while this publish runs (arena,
// RunOptions::overlap_hash, page reuse on); otherwise `packed` goes after the publish.
class CommitStage {
 public:
  CommitStage(const RunOptions& options, persist::DbFiles& files, RunContext& ctx, RunResult* result,
              const std::function<void(const BlockResult&)>& on_block)
      : options_(options), files_(files), ctx_(ctx), result_(result), on_block_(on_block) {
    if (files.manifest.params.tree_kind == io::TreeKind::bintrie) committer_ = std::make_unique<persist::BintrieCommitter>(files);
    else committer_ = std::make_unique<persist::MptCommitter>(files);
    committer_->reuse().pure_hash = options.pure_hash;
    committer_->reuse().keep_written = options.reuse_read_pages;
    committer_->reuse().write_runs = options.write_runs;
    overlap_ = options.overlap_hash && options.reuse_read_pages && !files.rocks && options.inflight > 1;
    committer_->reuse().own_read_store = overlap_;
  }

  bool failed() const { return failed_.load(); }
  const io::Status& first_error() const { return first_error_; }
  uint64_t layer_max() const { return layer_max_; }

  // The graph's hash body: hashes the token's block unless the run failed or the block did.
  BlockToken* hash(BlockToken* t) {
    const ScopedCpus pin(options_.stage_cpus.hash);
    if (!pin.error().empty() && t->error.ok()) t->error = io::Status(io::Errc::sys, "hash: " + pin.error());
    if (options_.before_hash) options_.before_hash(t->index);
    const state::Block& b = *t->block;
    if (!failed_.load() && t->error.ok()) {
      const std::array<uint8_t, 32> pre_root = committer_->base_for_hash().root_hash;
      if (t->index > 0 && b.header.pre_state_root && *b.header.pre_state_root != pre_root)
        t->error = bad("block " + std::to_string(b.header.number) + ": its pre-state root is not the state's root");
      else hash_block(*t);
    }
    if (options_.after_hash) options_.after_hash(t->index);
    return t;
  }

  // The graph's commit body: commits the hashed block unless the run failed, then frees its
  // token; `packed` and `done` are each signalled once. The token is free before `done`: the
  // source makes its next block (one beyond the one admitted) as soon as one is admitted,
  // and that block takes this token.
  template <typename Ports>
  void commit(BlockToken* t, Ports& ports) {
    bool packed_sent = false;
    auto packed = [&] {
      if (!packed_sent) std::get<0>(ports).try_put(tbb::flow::continue_msg());
      packed_sent = true;
    };
    {
      const ScopedCpus pin(options_.stage_cpus.commit);
      if (!pin.error().empty() && t->error.ok()) t->error = io::Status(io::Errc::sys, "commit: " + pin.error());
      if (failed_.load()) {
      } else if (!t->error.ok()) {
        stop(t->error);
      } else {
        commit_block(*t, packed);
      }
    }
    packed();
    t->pages.clear();
    t->in_use.store(false);
    std::get<1>(ports).try_put(tbb::flow::continue_msg());
  }

 private:
  void stop(const io::Status& s) {
    if (failed_.exchange(true)) return;
    const size_t done = result_->blocks.size();
    first_error_ = io::Status(s.code(), s.message() + (done ? " (" + std::to_string(done) + " earlier blocks of the run are committed)"
                                                            : std::string(" (nothing applied)")));
  }

  void hash_block(BlockToken& t) {
    BlockResult& r = t.result;
    r.hash.start_ns = monotonic_ns() - ctx_.t0_ns;
    const uint64_t cpu0 = persist::thread_cpu_ns();
    committer_->record_read_latency(&t.commit_read_latency_ns);
    offer_read_pages(t);
    const io::Status s = committer_->hash(t.diff);
    committer_->reuse().pages = nullptr;  // the frame keeps its pointer: t.pages lives until the publish
    r.hash.busy_ns = persist::thread_cpu_ns() - cpu0;
    r.hash.end_ns = monotonic_ns() - ctx_.t0_ns;
    if (!s.ok()) t.error = io::Status(s.code(), "block " + std::to_string(t.block->header.number) + ": commit: " + s.message());
  }

  template <typename Packed>
  void commit_block(BlockToken& t, Packed& packed) {
    const state::Block& b = *t.block;
    if (options_.before_commit) options_.before_commit(t.index);
    layer_max_ = std::max(layer_max_, ctx_.layer.entries());
    BlockResult& r = t.result;
    r.commit.start_ns = monotonic_ns() - ctx_.t0_ns;
    const uint64_t cpu0 = persist::thread_cpu_ns();
    // The spec into a string kept across blocks (the publish replaces files_.commit.spec).
    if (options_.commit_spec) spec_ = options_.commit_spec(files_.commit.spec, b);
    else spec_.assign(files_.commit.spec);
    const std::string& spec = spec_;
    io::Status s = committer_->write_pages();
    if (s.ok() && !files_.rocks) keep_written(t.index);
    if (overlap_) packed();
    if (s.ok() && options_.before_publish) options_.before_publish(t.index);
    if (s.ok()) s = committer_->publish(spec, &r.commit_stats);
    r.commit.busy_ns = persist::thread_cpu_ns() - cpu0;
    r.commit.end_ns = monotonic_ns() - ctx_.t0_ns;
    r.commit_read_latency_us = t.commit_read_latency_ns.latency(1000.0);
    if (!s.ok()) {
      stop(io::Status(s.code(), "block " + std::to_string(b.header.number) + ": commit: " + s.message()));
      return;
    }
    r.scratch_grown_bytes = t.scratch_capacity_bytes() - t.scratch_bytes_at_admit;
    result_->blocks.push_back(r);
    result_->root = r.commit_stats.root;
    result_->state_read_latency_ns.merge(t.read_latency_ns);
    result_->commit_read_latency_ns.merge(t.commit_read_latency_ns);
    if (on_block_) on_block_(result_->blocks.back());
  }

  // The pages the block's reader read go to the commit's resolve, less those a commit since
  // that reader's state rewrote.
  void offer_read_pages(BlockToken& t) {
    BlockResult& r = t.result;
    r.read_pages_offered = t.pages.size();
    for (const auto& [block, pages] : written_by_commit_)
      if (block >= r.reader_blocks_visible) r.read_pages_stale += t.pages.erase(pages);
    committer_->reuse().pages = t.pages.size() ? &t.pages : nullptr;
  }

  // The tree pages each recent commit wrote (taken when its pages are packed, before the
  // next block's hash may start), by block index: a block whose reader shows blocks [0, v)
  // drops from its read pages those that the commits of blocks v.. rewrote. A reader shows
  // at least every block but the K - 1 before its own, so K entries suffice: a ring of K,
  // the oldest entry's vector swapped with the committer's (its memory reused, not freed).
  void keep_written(size_t index) {
    if (written_by_commit_.size() < options_.inflight) written_by_commit_.emplace_back();
    auto& slot = written_by_commit_[written_next_];
    written_next_ = (written_next_ + 1) % options_.inflight;
    slot.first = index;
    std::swap(slot.second, committer_->reuse().written);
    committer_->reuse().written.clear();
  }

  const RunOptions& options_;
  persist::DbFiles& files_;
  RunContext& ctx_;
  RunResult* result_;
  const std::function<void(const BlockResult&)>& on_block_;
  bool overlap_ = false;
  std::unique_ptr<persist::CommitterBase> committer_;
  std::vector<std::pair<size_t, std::vector<uint64_t>>> written_by_commit_;
  size_t written_next_ = 0;  // the ring's oldest entry, replaced next
  std::string spec_;
  std::atomic<bool> failed_{false};
  io::Status first_error_;
  uint64_t layer_max_ = 0;
};

// The prefetch and traverse stage bodies: on the stage's CPUs, the work skipped once the run
// failed or the block carries an error (traverse then still drops the block's reader).
BlockToken* prefetch_stage(RunContext& ctx, bool run_failed, BlockToken* t) {
  const RunOptions& options = *ctx.options;
  const ScopedCpus pin(options.stage_cpus.prefetch);
  if (!pin.error().empty() && t->error.ok()) t->error = io::Status(io::Errc::sys, "prefetch: " + pin.error());
  OpenTurn turn(ctx, t->index);
  if (!run_failed && t->error.ok()) prefetch(ctx, *t, turn);
  turn.release();
  if (ctx.read_budget) ctx.read_budget->pass_lead(t->index + 1);  // its reads are done
  if (options.after_prefetch) options.after_prefetch(t->index);
  return t;
}
BlockToken* traverse_stage(RunContext& ctx, bool run_failed, BlockToken* t) {
  const RunOptions& options = *ctx.options;
  const ScopedCpus pin(options.stage_cpus.traverse);
  if (!pin.error().empty() && t->error.ok()) t->error = io::Status(io::Errc::sys, "traverse: " + pin.error());
  if (options.before_traverse) options.before_traverse(t->index);
  if (!run_failed && t->error.ok()) traverse(ctx, *t);
  else t->reader.reset();
  if (options.after_traverse) options.after_traverse(t->index);
  return t;
}

// The flow graph (header comment) over `tokens`, run until every admitted block is through.
void build_and_run_graph(RunContext& ctx, std::span<const state::Block> blocks,
                         std::vector<std::unique_ptr<BlockToken>>& tokens, CommitStage& commit) {
  const RunOptions& options = *ctx.options;
  size_t next = 0;
  tbb::flow::graph g;
  tbb::flow::input_node<BlockToken*> source(g, [&](tbb::flow_control& fc) -> BlockToken* {
    if (next >= blocks.size() || commit.failed()) {
      fc.stop();
      return nullptr;
    }
    BlockToken* t = tokens[next % tokens.size()].get();
    // On in Release: a token reused while its block is in flight would hand one block's
    // scratch and read pages to another (the commit frees a token before admitting more).
    ST_CHECK(!t->in_use.exchange(true), "block pipeline: a token is reused while its block is in flight");
    t->reset(next, &blocks[next]);
    ++next;
    return t;
  });
  tbb::flow::limiter_node<BlockToken*> limit(g, options.inflight);
  // Overlapping prefetches: up to K at once (the limiter bounds them), readers opened in
  // block order (OpenTurn), their reads under one queue budget.
  const size_t prefetch_concurrency = ctx.read_budget ? tbb::flow::unlimited : tbb::flow::serial;
  tbb::flow::function_node<BlockToken*, BlockToken*> prefetch_node(
      g, prefetch_concurrency, [&](BlockToken* t) { return prefetch_stage(ctx, commit.failed(), t); });
  tbb::flow::function_node<BlockToken*, BlockToken*> traverse_node(
      g, tbb::flow::serial, [&](BlockToken* t) { return traverse_stage(ctx, commit.failed(), t); });
  auto by_index = [](BlockToken* t) { return t->index; };
  tbb::flow::sequencer_node<BlockToken*> order_prefetch(g, by_index), order_traverse(g, by_index), order(g, by_index);
  // One block between the start of its hash and its commit's `packed` signal.
  tbb::flow::limiter_node<BlockToken*> hash_gate(g, 1);
  tbb::flow::function_node<BlockToken*, BlockToken*> hash_node(g, tbb::flow::serial,
                                                               [&](BlockToken* t) { return commit.hash(t); });
  using CommitNode = tbb::flow::multifunction_node<BlockToken*, std::tuple<tbb::flow::continue_msg, tbb::flow::continue_msg>>;
  CommitNode commit_node(g, tbb::flow::serial,
                         [&](BlockToken* t, CommitNode::output_ports_type& ports) { commit.commit(t, ports); });
  tbb::flow::make_edge(source, limit);
  tbb::flow::make_edge(limit, order_prefetch);
  tbb::flow::make_edge(order_prefetch, prefetch_node);
  tbb::flow::make_edge(prefetch_node, order_traverse);
  tbb::flow::make_edge(order_traverse, traverse_node);
  tbb::flow::make_edge(traverse_node, order);
  tbb::flow::make_edge(order, hash_gate);
  tbb::flow::make_edge(hash_gate, hash_node);
  tbb::flow::make_edge(hash_node, commit_node);
  tbb::flow::make_edge(tbb::flow::output_port<0>(commit_node), hash_gate.decrementer());
  tbb::flow::make_edge(tbb::flow::output_port<1>(commit_node), limit.decrementer());
  source.activate();
  g.wait_for_all();
}

// The graph on the default threads; with overlapping prefetches on an arena of K + 3
// threads (the bodies block on I/O: K prefetches, the traverse, the hash and the commit
// must each have a thread, on two cores as well).
void run_graph(RunContext& ctx, std::span<const state::Block> blocks, std::vector<std::unique_ptr<BlockToken>>& tokens,
               CommitStage& commit) {
  if (!ctx.read_budget) return build_and_run_graph(ctx, blocks, tokens, commit);
  const int threads = int(ctx.options->inflight) + 3;
  tbb::global_control control(tbb::global_control::max_allowed_parallelism, size_t(threads));
  // A caller's lower limit (an enclosing ThreadScope) wins: then one prefetch at a time, as a
  // prefetch waiting for its turn must not hold the thread the earlier block's needs.
  if (tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism) < size_t(threads)) {
    ctx.read_budget.reset();
    return build_and_run_graph(ctx, blocks, tokens, commit);
  }
  tbb::task_arena arena(threads, 1);
  arena.execute([&] { build_and_run_graph(ctx, blocks, tokens, commit); });
}

}  // namespace

io::Status run_blocks(const RunOptions& options, std::span<const state::Block> blocks, RunResult* result,
                      const std::function<void(const BlockResult&)>& on_block) {
  *result = {};
  if (io::Status s = check_options(options); !s.ok()) return s;
  persist::DbOptions o;
  persist::DbFiles files;
  if (io::Status s = open_writer(options, blocks, &o, &files); !s.ok()) return s;
  if (options.on_open) options.on_open(files);

  RunContext ctx;
  ctx.options = &options;
  ctx.base_commit_seq = files.manifest.commit_seq;
  ctx.writer = &files;
  ctx.base_manifest = files.manifest;
  if (prefetch_overlap_used(options, files.store)) ctx.read_budget = std::make_unique<io::QueueBudget>(options.queue_depth, options.queue_depth / 4);
  result->cpus = uint32_t(current_thread_cpus().size());
  const uint64_t cpu0_ns = process_cpu_ns();
  ctx.t0_ns = monotonic_ns();
  std::vector<std::unique_ptr<BlockToken>> tokens;
  for (uint32_t i = 0; i <= options.inflight; ++i) tokens.push_back(std::make_unique<BlockToken>());
  result->blocks.reserve(blocks.size());  // no reallocation per block
  CommitStage commit(options, files, ctx, result, on_block);
  run_graph(ctx, blocks, tokens, commit);
  result->wall_ns = monotonic_ns() - ctx.t0_ns;
  result->cpu_ns = process_cpu_ns() - cpu0_ns;
  result->diff_layer_entries_max = commit.layer_max();
  if (result->blocks.empty()) result->root = files.manifest.root_hash;
  return commit.first_error();
}

}  // namespace st::pipeline
