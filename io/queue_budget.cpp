// queue_budget: the shared queue depth (queue_budget.h): a counter of free units with
// C++20 atomic wait / notify for a store that has nothing in flight and no unit to start one.
#include "io/queue_budget.h"

namespace st::io {

bool QueueBudget::take(uint64_t claim) {
  const int32_t need = needed(claim);
  int32_t a = available_.load(std::memory_order_relaxed);
  while (a >= need)
    if (available_.compare_exchange_weak(a, a - 1, std::memory_order_acq_rel, std::memory_order_relaxed)) return true;
  return false;
}

void QueueBudget::give() {
  available_.fetch_add(1, std::memory_order_acq_rel);
  available_.notify_all();  // no system call when nobody waits
}

void QueueBudget::wait_available(uint64_t claim) const {
  for (int32_t a = available_.load(std::memory_order_acquire); a < needed(claim);
       a = available_.load(std::memory_order_acquire))
    available_.wait(a, std::memory_order_acquire);
}

void QueueBudget::pass_lead(uint64_t claim) {
  uint64_t l = lead_.load(std::memory_order_relaxed);
  while (l < claim && !lead_.compare_exchange_weak(l, claim, std::memory_order_acq_rel)) {
  }
  available_.notify_all();  // a waiter may be the new lead
}

}  // namespace st::io
