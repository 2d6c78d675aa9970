// memory_store: an in-memory NodeStore with the arena store's contract and a model of a
// disk's durability, for tests and for the tries' crash tests. Pages are sealed and checked
// exactly as on disk (page_format.h), so corruption is detected the same way.
//
//   durable image (survives crash())     dirty map (written, not yet synced)
//   [page 0][page 1] ... [page N-1]  <--sync()--  {page id -> sealed page bytes}
//   reads see dirty first, then durable;  crash() drops the dirty map.
//
// Fault injection (FaultPlan; write indexes count every write submitted since the plan was
// set, 1-based):
//   fail_write_at  : that write completes with Errc::injected_fault and changes nothing.
//   tear_write_at  : that write reports success but only its first tear_bytes reach the
//                    page (the rest keeps the old bytes): a lying device, caught by the
//                    page checksum.
//   crash_at_write : the store crashes just before that write: every op and sync fails with
//                    Errc::crashed until restart().
//   crash_keeps_unsynced_seed : what a crash does to unsynced writes. Unset: all are lost.
//                    Set: each one is, by a hash of (seed, page id), lost, kept whole, or
//                    kept torn at a 512-byte boundary (a real disk writes back in any order
//                    and may be cut mid-page).
// Ops complete at submit time; reap() hands the completions over, in submission order or,
// after set_completion_shuffle(seed), in a seeded random order (as a real device would),
// so callers cannot come to rely on an order the arena store does not give.
#pragma once

#include <deque>
#include <optional>
#include <unordered_map>
#include <vector>

#include "io/node_store.h"

namespace st::io {

struct FaultPlan {
  std::optional<uint64_t> fail_write_at;
  std::optional<uint64_t> tear_write_at;
  uint32_t tear_bytes = 0;
  std::optional<uint64_t> crash_at_write;
  std::optional<uint64_t> crash_keeps_unsynced_seed;
};

class MemoryStore final : public NodeStore {
 public:
  MemoryStore(uint32_t page_size, uint64_t capacity_pages);

  uint32_t page_size() const override { return page_size_; }
  uint64_t capacity_pages() const override { return capacity_; }
  Status grow(uint64_t capacity_pages) override;
  void submit(std::span<const PageOp> ops) override;
  size_t reap(std::span<PageCompletion> out, size_t wait_for) override;
  size_t outstanding() const override { return done_.size(); }
  Status sync() override;
  const StoreCounters& counters() const override { return counters_; }

  void set_fault_plan(const FaultPlan& plan);  // resets the write index
  void set_completion_shuffle(std::optional<uint64_t> seed) { shuffle_ = seed; }
  uint64_t writes_since_plan() const { return writes_since_plan_; }
  bool crashed() const { return crashed_; }
  // Power loss: unsynced writes are dropped (or kept/torn per the plan); all ops fail
  // until restart().
  void crash();
  void restart();  // the "machine" is back: the durable image is what a reopen sees

  // Test access to raw (sealed) page bytes: flip bits to simulate bit rot.
  unsigned char* raw_page(uint64_t page_id);
  uint64_t crash_kept_whole() const { return crash_kept_whole_; }
  uint64_t crash_kept_torn() const { return crash_kept_torn_; }

 private:
  void complete(const PageOp& op, Errc code, PageCheck check = PageCheck::ok);

  uint32_t page_size_;
  uint64_t capacity_;
  std::vector<unsigned char> durable_;
  std::unordered_map<uint64_t, std::vector<unsigned char>> dirty_;
  std::deque<PageCompletion> done_;
  FaultPlan plan_;
  std::optional<uint64_t> shuffle_;
  uint64_t writes_since_plan_ = 0;
  bool crashed_ = false;
  uint64_t crash_kept_whole_ = 0, crash_kept_torn_ = 0;
  StoreCounters counters_;
};

}  // namespace st::io
