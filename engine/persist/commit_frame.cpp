// commit_frame: CommitFrame (see commit_frame.h), the part of a block commit that the MPT and
// binary-trie committers share: phase clock, writer / packer, superseded records, release,
// publish, stats; and RocksCommitBatch, the RocksDB reads and WriteBatch of a commit.
#include "engine/persist/commit_frame.h"

#include <algorithm>
#include <unordered_set>

#include "engine/persist/snapshot/rocks.h"
#include "kernels/support/clock.h"

namespace st::persist {

io::Status RocksCommitBatch::read(std::span<const std::string> keys, std::vector<std::string>* values, const char* who,
                                  std::string (*name)(std::string_view key)) {
  if (keys.empty()) {
    values->clear();
    return {};
  }
  views_.assign(keys.begin(), keys.end());
  const uint64_t t0 = st::monotonic_ns();
  io::Status s = db_.multi_get(views_, values, &found_);
  read_ns += st::monotonic_ns() - t0;
  if (!s.ok()) return s;
  ++rounds;
  keys_read += keys.size();
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!found_[i])
      return {io::Errc::corrupt_page, std::string(who) + ": " + name(keys[i]) + " is missing (its parent references it)"};
    bytes_read += (*values)[i].size();
  }
  return {};
}

void RocksCommitBatch::put(std::string key, std::string value) {
  put_keys_.push_back(std::move(key));
  put_values_.push_back(std::move(value));
}

void RocksCommitBatch::erase(std::string key) { erase_keys_.push_back(std::move(key)); }

std::vector<io::KvWrite> RocksCommitBatch::writes() const {
  const std::unordered_set<std::string_view> puts(put_keys_.begin(), put_keys_.end());
  std::vector<io::KvWrite> w;
  w.reserve(erase_keys_.size() + put_keys_.size() + 1);
  for (const std::string& k : erase_keys_)
    if (puts.count(k) == 0) w.push_back({k, {}, true});
  for (size_t i = 0; i < put_keys_.size(); ++i) w.push_back({put_keys_[i], put_values_[i], false});
  return w;
}

uint64_t RocksCommitBatch::net_deletes() const {
  std::unordered_set<std::string_view> puts(put_keys_.begin(), put_keys_.end());
  uint64_t n = 0;
  for (const std::string& k : erase_keys_) n += puts.count(k) == 0;
  return n;
}

namespace {
CommitBase base_of(const DbFiles& files) {
  CommitBase b;
  b.root = files.commit.root;
  b.root_hash = files.manifest.root_hash;
  b.params = files.manifest.params;
  b.snapshot = files.commit.snapshot.has_value();  // arena pages or RocksDB column family
  return b;
}
}  // namespace

io::Status CommitterBase::write(const std::string& spec_json, CommitStats* stats) {
  if (io::Status s = write_pages(); !s.ok()) return s;
  return publish(spec_json, stats);
}

io::Status CommitterBase::commit(const state::StateDiff& diff, const std::string& spec_json, CommitStats* stats) {
  if (io::Status s = hash(diff); !s.ok()) return s;
  return write(spec_json, stats);
}

CommitBase CommitterBase::base_for_hash() {
  const std::lock_guard<std::mutex> lock(base_mu_);
  return next_base_ ? *next_base_ : base_of(files_);
}

void CommitterBase::set_next_base(const CommitBase& b) {
  const std::lock_guard<std::mutex> lock(base_mu_);
  next_base_ = b;
}

void CommitterBase::clear_next_base() {
  const std::lock_guard<std::mutex> lock(base_mu_);
  next_base_.reset();
}

io::Status CommitterBase::open_read_store(std::unique_ptr<io::ArenaFileStore>* out) {
  out->reset();
  if (!reuse_.own_read_store || files_.store != StoreKind::arena || !files_.arena) return {};
  io::ArenaOptions o;
  o.path = files_.arena->arena_path();
  o.page_size = files_.arena->pages().page_size();
  o.queue_depth = files_.arena->pages().queue_depth();
  o.read_only = true;
  return io::ArenaFileStore::open(o, out);
}

CommitFrame::CommitFrame(DbFiles& files, DeadPageLedger& dead, const char* who, PageReuse* reuse,
                         stats::LogHistogram* read_latency)
    : CommitFrame(files, dead, who, base_of(files), nullptr, reuse, read_latency) {}

CommitFrame::CommitFrame(DbFiles& files, DeadPageLedger& dead, const char* who, const CommitBase& base,
                         io::NodeStore* read_store, PageReuse* reuse, stats::LogHistogram* read_latency)
    : files_(files), dead_(dead), who_(who), base_(base), reuse_(reuse), t0_(st::monotonic_ns()) {
  if (files.store == StoreKind::rocksdb) {
    rocks_.emplace(*files.rocks);
  } else {
    store_ = read_store ? read_store : &files.arena->pages();
    reader_.emplace(*store_);
    if (reuse) reader_->borrow(reuse->pages, reuse->keep_written ? &reuse->written_pages() : nullptr);
    reader_->set_latency_sink(read_latency);
  }
  if (base.snapshot) snapshot_.emplace();
}

io::Status CommitFrame::check_target(const DbFiles& files, io::TreeKind kind, const char* who, const char* what) {
  return check_target(files, files.manifest.params, kind, who, what);
}

io::Status CommitFrame::check_target(const DbFiles& files, const io::StoreParams& params, io::TreeKind kind,
                                     const char* who, const char* what) {
  const bool open = files.store == StoreKind::arena ? files.arena != nullptr : files.rocks != nullptr;
  if (!open) return {io::Errc::bad_argument, std::string(who) + ": the database is not open for commits"};
  if (params.tree_kind != kind) return {io::Errc::bad_argument, std::string(who) + ": not " + what + " database"};
  return {};
}

void CommitFrame::resolved() { t_resolved_ = st::monotonic_ns(); }
void CommitFrame::applied() { t_applied_ = st::monotonic_ns(); }
void CommitFrame::hashed() { t_hashed_ = st::monotonic_ns(); }
void CommitFrame::hash_stage_done() { t_hash_stage_ = st::monotonic_ns(); }

// The commit's own time: from the frame's start, less the wait between hash() and write().
uint64_t CommitFrame::own_ns() const {
  const uint64_t now = st::monotonic_ns();
  return t_hash_stage_ ? (t_hash_stage_ - t0_) + (now - t_writes_) : now - t0_;
}

io::Status CommitFrame::begin_writes() {
  t_writes_ = st::monotonic_ns();
  if (!t_applied_) t_applied_ = t_writes_;
  if (!t_hashed_) t_hashed_ = t_writes_;
  if (keyed()) return {};
  const uint32_t window = 64, max_run_pages = reuse_ && !reuse_->write_runs ? 1 : 0;
  writer_.emplace(files_.arena->pages(), files_.arena->space(), window, max_run_pages);
  if (reuse_ && reuse_->keep_written) {
    // The set not borrowed by this commit's reader (nor, the previous publish being over, by
    // any other) takes a copy of each page as it is written; hand_over_written() names it.
    SharedPages& set = reuse_->written_sets[reuse_->newest_written ^ 1];
    set.clear();
    writer_->keep_copies(&set);
  }
  packer_.emplace(*writer_);
  io::Status s = choose_compaction_targets();
  if (s.ok() && !compact_.empty() && dead_.parents().built()) packer_->set_edge_sink(&dead_.parents());
  return s;
}

// Targets: the pages this commit read (its dirty paths run through them, so most lose
// records now), at most compact_pages of them, those with the fewest records known dead
// first. A record of a target page is moved only when its parent is rewritten anyway (a
// kept child, place_kept) or moved with it, so no other parent needs its locator updated.
// A page written whole by a recent commit holds one packed cluster (or siblings of one
// parent), so a path through it makes all its records movable and it is released; a page
// that many commits left partly dead may hold records under parents that no path rewrote,
// which would stay: under a cap the former come first.
//
// Then, with budget left, the chains (add_chain_targets): partly dead pages the block did not
// read, emptiest first, and the pages of their records' ancestors, found through the
// ledger's cross-page parents, so that the records they keep move too.
io::Status CommitFrame::choose_compaction_targets() {
  compact_.clear();
  if (!reuse_ || reuse_->compact_pages == 0) return {};
  std::vector<uint64_t> pages;
  reader_->used_pages(&pages);
  auto dead_share = [&](uint64_t p) {
    const uint32_t n = reader_->records_in(p);
    return n ? double(dead_.known_dead(p)) / double(n) : 0.0;
  };
  const size_t cap = reuse_->compact_pages;
  if (pages.size() <= cap) {
    compact_.insert(pages.begin(), pages.end());
  } else {
    std::vector<std::pair<double, uint64_t>> ranked;
    ranked.reserve(pages.size());
    for (uint64_t p : pages) ranked.push_back({dead_share(p), p});
    std::partial_sort(ranked.begin(), ranked.begin() + cap, ranked.end());
    for (size_t i = 0; i < cap; ++i) compact_.insert(ranked[i].second);
  }
  if (compact_.size() >= cap || !reuse_->compact_chains) return {};
  if (!dead_.parents().built()) {
    // Only from the durable state (not a root packed but not yet published).
    if (base_.root != files_.commit.root) return {};
    if (io::Status s = rebuild_compaction_index(); !s.ok()) return s;
  }
  return add_chain_targets(cap - compact_.size());
}

// One walk of the committed tree through a reader of its own: the ledger's exact counts and
// cross-page parents (at a committer's first compacting commit; its pages are not counted
// as the block's reads).
io::Status CommitFrame::rebuild_compaction_index() {
  PageReader walker(*store_);
  std::unordered_map<uint64_t, uint32_t> live, records;
  constexpr uint32_t kRoundPages = 4096, kCachePages = 16384;
  if (io::Status s = dead_.parents().rebuild(walker, base_.root, kRoundPages, kCachePages, &live, &records); !s.ok()) {
    dead_.parents().invalidate();
    return s;
  }
  dead_.reset_counts(live, records);
  return {};
}

// Partly dead pages not read (at most a quarter of the budget, emptiest first), then the
// pages of their cross-page parents, and theirs, breadth first, until the budget is spent;
// all loaded in one round and made targets. A chain cut short by the budget only costs reads.
io::Status CommitFrame::add_chain_targets(size_t budget) {
  std::vector<std::pair<double, uint64_t>> ranked;
  for (const auto& [page, counts] : dead_.partial())
    if (!compact_.count(page)) ranked.push_back({-double(counts.first) / double(counts.second), page});
  const size_t seeds = std::min(ranked.size(), std::max<size_t>(budget / 4, 1));
  std::partial_sort(ranked.begin(), ranked.begin() + seeds, ranked.end());
  std::vector<uint64_t> extra, frontier, next;
  std::unordered_set<uint64_t> seen;
  for (size_t i = 0; i < seeds; ++i) {
    extra.push_back(ranked[i].second);
    seen.insert(ranked[i].second);
  }
  frontier = extra;
  while (!frontier.empty() && extra.size() < budget) {
    next.clear();
    for (uint64_t p : frontier) dead_.parents().parent_pages(p, &next);
    frontier.clear();
    for (uint64_t q : next) {
      if (extra.size() >= budget) break;
      if (!seen.insert(q).second) continue;
      frontier.push_back(q);  // a page read by the block too: its parents are still followed
      if (!compact_.count(q)) extra.push_back(q);
    }
  }
  if (extra.empty()) return {};
  if (io::Status s = reader_->load_pages(extra); !s.ok()) return s;
  compact_.insert(extra.begin(), extra.end());
  chain_pages_ = extra.size();
  return {};
}

io::Status CommitFrame::place_kept(Locator l) {
  if (!compact_.count(locator_page(l))) {
    packer_->push_placed(l);
    return {};
  }
  return relocate(l);
}

// Post-order: the record's children on target pages first (copied), the others placed.
io::Status CommitFrame::relocate(Locator l) {
  RecordView r;
  if (io::Status s = reader_->record(l, &r); !s.ok()) return s;
  for (uint32_t i = 0; i < r.child_count; ++i) {
    const Locator c = r.child(i);
    if (c == kNoLocator) return {io::Errc::corrupt_page, std::string(who_) + ": a record without a child locator"};
    if (compact_.count(locator_page(c))) {
      if (io::Status s = relocate(c); !s.ok()) return s;
    } else {
      packer_->push_placed(c);
    }
  }
  if (io::Status s = packer_->push(r.kind, r.body, r.child_count); !s.ok()) return s;
  dead_.supersede(locator_page(l));
  ++relocated_;
  return {};
}

void CommitFrame::encoded() { t_encoded_ = st::monotonic_ns(); }

void CommitFrame::hand_over_written() {
  if (keyed() || !reuse_) return;
  writer_->keep_copies(nullptr);  // the tree's pages only (not the snapshot's nor the commit record)
  reuse_->written = writer_->written_ids();
  if (!reuse_->keep_written) return;
  reuse_->newest_written ^= 1;  // the set begin_writes() filled
}

io::Status CommitFrame::fail(io::Status s) {
  if (keyed()) return s;  // nothing was written: the batch goes at publish()
  dead_.parents().invalidate();  // it may have noted records of pages that stay free
  (void)writer_->finish();
  files_.arena->space().abort();
  return s;
}

void CommitFrame::supersede(std::span<const Locator> records, uint64_t body_bytes) {
  for (Locator l : records) dead_.supersede(locator_page(l));
  superseded_ += records.size();
  superseded_bytes_ += body_bytes;
}

void CommitFrame::supersede_key(std::string key, uint64_t body_bytes) {
  rocks_->erase(std::move(key));
  ++superseded_;
  superseded_bytes_ += body_bytes;
}

io::Status CommitFrame::publish(const Outcome& o, const std::string& spec_json, CommitStats* stats) {
  if (keyed()) return publish_rocks(o, spec_json, stats);
  uint64_t pages_released = 0;
  if (io::Status s = dead_.release_dead(*reader_, files_.arena->space(), files_.manifest.root_page, who_, &pages_released);
      !s.ok())
    return fail(s);

  DbFiles::Fields f;
  f.root_hash = o.root_hash;
  f.node_count = files_.manifest.node_count + o.records_written - superseded_;
  f.key_count = uint64_t(int64_t(files_.manifest.key_count) + o.keys_delta);
  f.payload_bytes = files_.manifest.payload_bytes + o.bytes_written - superseded_bytes_;
  const uint64_t pages_written = packer_->stats().pages;
  const uint64_t tp = st::monotonic_ns();
  SnapshotRef snap;
  if (snapshot_)
    if (io::Status s = update_snapshot(files_, *writer_, *snapshot_, &snap); !s.ok()) return fail(s);
  if (io::Status s = files_.commit_arena(*writer_, o.root, f, spec_json, snapshot_ ? &snap : nullptr); !s.ok()) {
    dead_.parents().invalidate();
    return s;  // aborts itself
  }
  const uint64_t publish_ns = st::monotonic_ns() - tp;
  // Durable: the dead-record counts of partly dead pages carry over to later commits.
  dead_.commit_durable();
  // The ids written since hand_over_written() (snapshot pages, the commit record) too.
  if (reuse_) reuse_->written = writer_->written_ids();

  if (stats) fill_arena_stats(o, pages_written, pages_released, publish_ns, stats);
  return {};
}

// The fields both stores report; each store adds its reads, pages and bytes.
void CommitFrame::fill_common_stats(const Outcome& o, uint64_t publish_ns, CommitStats* stats) const {
  CommitStats& out = *stats;
  out = {};
  out.root = o.root_hash;
  out.accounts_written = o.accounts_written;
  out.slot_writes = o.slot_writes;
  out.records_read = o.records_read;
  out.sibling_reads = o.sibling_reads;
  out.records_written = o.records_written;
  out.records_superseded = superseded_;
  out.keys_delta = o.keys_delta;
  out.commit_ns = own_ns();
  out.resolve_ns = t_resolved_ - t0_;
  out.apply_ns = t_applied_ - t_resolved_;
  out.hash_ns = t_hashed_ - t_applied_;
  out.page_write_ns = t_encoded_ - t_writes_;
  out.write_ns = out.hash_ns + out.page_write_ns;
  out.pure_hash_ns = pure_ns_, out.pure_hash_nodes = pure_nodes_, out.pure_hash_calls = pure_calls_;
  out.publish_ns = publish_ns;
  out.disk_bytes = files_.disk_bytes();
  out.live_keys = files_.manifest.key_count;
}

void CommitFrame::fill_arena_stats(const Outcome& o, uint64_t pages_written, uint64_t pages_released, uint64_t publish_ns,
                                   CommitStats* stats) const {
  fill_common_stats(o, publish_ns, stats);
  CommitStats& out = *stats;
  out.pages_read = reader_->counters().page_reads;
  out.read_rounds = reader_->counters().rounds;
  out.pages_written = pages_written;
  out.page_write_ops = writer_->write_ops();
  out.pages_released = pages_released;
  out.read_ns = reader_->counters().read_wall_ns;
  out.pages_reused = reader_->counters().pages_reused;
  out.in_use_bytes = files_.in_use_bytes();
  out.pages_compacted = compact_.size();
  out.records_relocated = relocated_;
  out.chain_pages = chain_pages_;
}

io::Status CommitFrame::publish_rocks(const Outcome& o, const std::string& spec_json, CommitStats* stats) {
  RocksCommitBatch& b = *rocks_;
  DbFiles::Fields f;
  f.root_hash = o.root_hash;
  f.node_count = files_.manifest.node_count + o.records_written - superseded_;
  f.key_count = uint64_t(int64_t(files_.manifest.key_count) + o.keys_delta);
  f.payload_bytes = files_.manifest.payload_bytes + o.bytes_written - superseded_bytes_;
  std::vector<io::KvWrite> writes = b.writes();
  const uint64_t keys_deleted = b.net_deletes();
  // The flat snapshot's changes join the same batch (its column family), so the one
  // synced WriteBatch holds tree, snapshot and commit record.
  std::vector<std::string> range_ends;
  if (snapshot_) {
    uint32_t family = 0;
    if (io::Status s = rocks_snapshot_family(files_, &family); !s.ok()) return s;
    append_snapshot_writes(*snapshot_, family, &range_ends, &writes);
  }
  const uint64_t tp = st::monotonic_ns();
  if (io::Status s = files_.commit_rocks_batch(writes, f, spec_json); !s.ok()) return s;
  const uint64_t publish_ns = st::monotonic_ns() - tp;
  if (stats) {
    fill_common_stats(o, publish_ns, stats);
    stats->pages_read = b.keys_read;
    stats->read_rounds = b.rounds;
    stats->keys_deleted = keys_deleted;
    stats->read_ns = b.read_ns;
    stats->in_use_bytes = stats->disk_bytes;
  }
  return {};
}

}  // namespace st::persist
