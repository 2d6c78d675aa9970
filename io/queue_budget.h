// queue_budget: one device queue depth shared by several stores. Each ArenaFileStore that
// holds a budget (ArenaFileStore::share_queue) takes one unit before an op enters the kernel
// and gives it back when the op leaves it, so the stores together never have more than
// `limit` ops in the kernel, whatever their own queue depths. The block pipeline gives the
// readers of blocks whose prefetches overlap one budget of `--qd`: the device sees the same
// queue depth as with one prefetch, and the next block's reads fill the slots the previous
// block's walks leave empty (as they drain, or while its thread walks between reaps).
//
// Priority: each store holds a claim (the pipeline: its block's index). The lead claim (the
// oldest block still prefetching) may take every free unit; the others only while more than
// `reserve` units are free, so the lead always finds that many free beyond what it holds and
// is slowed little by the others.
//
// Invariants: 0 <= available() <= limit; take() and give() are lock-free and may be called
// from any thread; the lead never moves back. A budget must outlive every store holding it.
#pragma once

#include <atomic>
#include <cstdint>

namespace st::io {

class QueueBudget {
 public:
  // limit: the units (ops in the kernel) in all; reserve: the units only the lead may take.
  QueueBudget(uint32_t limit, uint32_t reserve)
      : limit_(limit), reserve_(reserve < limit ? reserve : limit - 1), available_(int32_t(limit)) {}
  QueueBudget(const QueueBudget&) = delete;
  QueueBudget& operator=(const QueueBudget&) = delete;

  // One unit for the holder of `claim`, or false: the lead (claim == lead()) takes any free
  // unit, another claim only while more than `reserve` are free.
  bool take(uint64_t claim);
  void give();
  // Blocks until a unit is free for `claim` (it may be taken by another thread before the
  // caller tries again).
  void wait_available(uint64_t claim) const;
  // The lead passes to `claim` unless it is past it already (the lead only moves forward).
  void pass_lead(uint64_t claim);
  uint64_t lead() const { return lead_.load(std::memory_order_acquire); }
  uint32_t limit() const { return limit_; }
  uint32_t reserve() const { return reserve_; }
  uint32_t available() const { return uint32_t(available_.load(std::memory_order_relaxed)); }

 private:
  int32_t needed(uint64_t claim) const { return claim == lead() ? 1 : int32_t(reserve_) + 1; }

  const uint32_t limit_, reserve_;
  std::atomic<int32_t> available_;
  std::atomic<uint64_t> lead_{0};
};

}  // namespace st::io
