// parallel: TBB-backed implementation of ThreadScope and parallel_for.
#include "engine/pipeline/parallel.h"

#include <sched.h>

#include <atomic>
#include <cstring>
#include <thread>

#include <tbb/blocked_range.h>
#include <tbb/info.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/task_scheduler_observer.h>

namespace st::pipeline {

namespace {

class PinningObserver : public tbb::task_scheduler_observer {
 public:
  explicit PinningObserver(std::vector<int> cpus) : cpus_(std::move(cpus)) { observe(true); }
  ~PinningObserver() override { observe(false); }
  void on_scheduler_entry(bool is_worker) override {
    if (!is_worker) return;  // the caller is pinned by ThreadScope itself (to cpus_[0])
    const size_t i = next_.fetch_add(1, std::memory_order_relaxed);
    pin_current_thread(cpus_[(i + 1) % cpus_.size()]);
  }

 private:
  std::vector<int> cpus_;
  std::atomic<size_t> next_{0};
};

}  // namespace

struct ThreadScope::Impl {
  std::unique_ptr<tbb::global_control> control;
  std::unique_ptr<PinningObserver> observer;
};

ThreadScope::ThreadScope(unsigned threads, std::vector<int> cpus) : impl_(std::make_unique<Impl>()) {
  threads_ = threads == 0 ? available_cpus() : threads;
  impl_->control = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, threads_);
  if (!cpus.empty()) {
    // TBB sizes its default arena from the affinity mask it first sees: read it before
    // the caller is narrowed to one CPU, so pinning never silently drops workers.
    (void)tbb::info::default_concurrency();
    pin_current_thread(cpus[0]);
    impl_->observer = std::make_unique<PinningObserver>(std::move(cpus));
  }
}

ThreadScope::~ThreadScope() = default;

void parallel_for(size_t n, size_t grain, const std::function<void(size_t, size_t)>& body) {
  if (n == 0) return;
  if (grain == 0) grain = 1;
  if (n <= grain) { body(0, n); return; }
  tbb::parallel_for(tbb::blocked_range<size_t>(0, n, grain),
                    [&](const tbb::blocked_range<size_t>& r) { body(r.begin(), r.end()); });
}

std::string pin_current_thread(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) return std::string("cannot pin to CPU ") + std::to_string(cpu) + ": " + std::strerror(errno);
  return {};
}

unsigned available_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return unsigned(CPU_COUNT(&set));
  const unsigned hc = std::thread::hardware_concurrency();
  return hc ? hc : 1;
}

}  // namespace st::pipeline
