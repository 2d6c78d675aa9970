// commit_tail: CommitFrame (see commit_tail.h), the part of a block commit that the MPT and
// binary-trie committers share: phase clock, writer / packer, superseded records, release,
// publish, stats.
#include "engine/persist/commit_tail.h"

#include "io/monotonic_clock.h"

namespace st::persist {

CommitFrame::CommitFrame(DbFiles& files, DeadPageLedger& dead, const char* who)
    : files_(files), dead_(dead), who_(who), reader_(files.arena->pages()), t0_(io::monotonic_ns()) {}

io::Status CommitFrame::check_target(const DbFiles& files, io::TreeKind kind, const char* who, const char* what) {
  if (files.store != StoreKind::arena || !files.arena)
    return {io::Errc::bad_argument, std::string(who) + ": only arena databases take commits"};
  if (files.manifest.params.tree_kind != kind)
    return {io::Errc::bad_argument, std::string(who) + ": not " + what + " database"};
  return {};
}

void CommitFrame::resolved() { t_resolved_ = io::monotonic_ns(); }

void CommitFrame::begin_writes() {
  t_applied_ = io::monotonic_ns();
  writer_.emplace(files_.arena->pages(), files_.arena->space());
  packer_.emplace(*writer_);
}

void CommitFrame::encoded() { t_encoded_ = io::monotonic_ns(); }

io::Status CommitFrame::fail(io::Status s) {
  (void)writer_->finish();
  files_.arena->space().abort();
  return s;
}

void CommitFrame::supersede(std::span<const Locator> records, uint64_t body_bytes) {
  for (Locator l : records) dead_.supersede(locator_page(l));
  superseded_ += records.size();
  superseded_bytes_ += body_bytes;
}

io::Status CommitFrame::publish(const Outcome& o, const std::string& spec_json, CommitStats* stats) {
  uint64_t pages_released = 0;
  if (io::Status s = dead_.release_dead(reader_, files_.arena->space(), files_.manifest.root_page, who_, &pages_released);
      !s.ok())
    return fail(s);

  DbFiles::Fields f;
  f.root_hash = o.root_hash;
  f.node_count = files_.manifest.node_count + o.records_written - superseded_;
  f.key_count = uint64_t(int64_t(files_.manifest.key_count) + o.keys_delta);
  f.payload_bytes = files_.manifest.payload_bytes + o.bytes_written - superseded_bytes_;
  const uint64_t pages_written = packer_->stats().pages;
  const uint64_t tp = io::monotonic_ns();
  if (io::Status s = files_.commit_arena(*writer_, o.root, f, spec_json); !s.ok()) return s;  // aborts itself
  const uint64_t publish_ns = io::monotonic_ns() - tp;
  // Durable: the dead-record counts of partly dead pages carry over to later commits.
  dead_.commit_durable();

  if (stats) {
    CommitStats& out = *stats;
    out = {};
    out.root = o.root_hash;
    out.accounts_written = o.accounts_written;
    out.slot_writes = o.slot_writes;
    out.records_read = o.records_read;
    out.pages_read = reader_.counters().page_reads;
    out.read_rounds = reader_.counters().rounds;
    out.apply_passes = o.apply_passes;
    out.records_written = o.records_written;
    out.pages_written = pages_written;
    out.records_superseded = superseded_;
    out.pages_released = pages_released;
    out.keys_delta = o.keys_delta;
    out.commit_ns = io::monotonic_ns() - t0_;
    out.read_ns = reader_.counters().read_wall_ns;
    out.resolve_ns = t_resolved_ - t0_;
    out.apply_ns = t_applied_ - t_resolved_;
    out.write_ns = t_encoded_ - t_applied_;
    out.publish_ns = publish_ns;
    out.disk_bytes = files_.disk_bytes();
  }
  return {};
}

}  // namespace st::persist
