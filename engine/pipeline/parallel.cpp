// parallel: TBB-backed implementation of ThreadScope and parallel_for.
//
// A ThreadScope owns a task_arena with exactly `threads` slots (global_control raises the
// worker limit when more threads than CPUs are asked for, for oversubscription studies);
// parallel_for runs inside the innermost live scope's arena. With CPUs given, a scheduler
// observer pins each thread on entry by its arena slot (slot k -> cpus[k % size]), so a
// worker keeps its CPU across repeated arena entries.
#include "engine/pipeline/parallel.h"

#include <sched.h>

#include <cstring>
#include <new>
#include <thread>

#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/info.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#include <tbb/task_scheduler_observer.h>

namespace st::pipeline {

namespace {

class PinningObserver : public tbb::task_scheduler_observer {
 public:
  PinningObserver(tbb::task_arena& arena, std::vector<int> cpus)
      : tbb::task_scheduler_observer(arena), cpus_(std::move(cpus)) {
    observe(true);
  }
  ~PinningObserver() override { observe(false); }
  void on_scheduler_entry(bool) override {
    const int slot = tbb::this_task_arena::current_thread_index();
    if (slot >= 0) pin_current_thread(cpus_[size_t(slot) % cpus_.size()]);
  }

 private:
  std::vector<int> cpus_;
};

}  // namespace

struct ThreadScope::Impl {
  std::unique_ptr<tbb::global_control> control;
  std::unique_ptr<tbb::task_arena> arena;
  std::unique_ptr<PinningObserver> observer;
  Impl* previous = nullptr;
};

namespace {
thread_local ThreadScope::Impl* t_current = nullptr;  // innermost scope of this thread
}  // namespace

ThreadScope::ThreadScope(unsigned threads, std::vector<int> cpus) : impl_(std::make_unique<Impl>()) {
  threads_ = threads == 0 ? available_cpus() : threads;
  impl_->control = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, threads_);
  impl_->arena = std::make_unique<tbb::task_arena>(int(threads_), 1);
  impl_->arena->initialize();
  if (!cpus.empty()) {
    pin_current_thread(cpus[0]);
    impl_->observer = std::make_unique<PinningObserver>(*impl_->arena, std::move(cpus));
  }
  impl_->previous = t_current;
  t_current = impl_.get();
}

ThreadScope::~ThreadScope() { t_current = impl_->previous; }

void parallel_for(size_t n, size_t grain, const std::function<void(size_t, size_t)>& body) {
  if (n == 0) return;
  if (grain == 0) grain = 1;
  if (n <= grain) { body(0, n); return; }
  auto run = [&] {
    tbb::parallel_for(tbb::blocked_range<size_t>(0, n, grain),
                      [&](const tbb::blocked_range<size_t>& r) { body(r.begin(), r.end()); });
  };
  if (t_current) t_current->arena->execute(run);
  else run();
}

struct WorkerThreadsJoin::Handle {
  tbb::task_scheduler_handle tbb_handle{tbb::attach{}};
};

WorkerThreadsJoin::WorkerThreadsJoin() : handle_(std::make_unique<Handle>()) {}

WorkerThreadsJoin::~WorkerThreadsJoin() { join(); }

bool WorkerThreadsJoin::join() {
  if (!handle_->tbb_handle) return true;
  return tbb::finalize(handle_->tbb_handle, std::nothrow);
}

unsigned thread_slot() {
  const int slot = tbb::this_task_arena::current_thread_index();
  return slot < 0 ? 0u : unsigned(slot);
}

unsigned concurrency() {
  const int c = t_current ? t_current->arena->max_concurrency() : tbb::this_task_arena::max_concurrency();
  return c < 1 ? 1u : unsigned(c);
}

namespace {
std::string set_current_thread_cpus(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) {
    if (c < 0 || c >= CPU_SETSIZE) return "no CPU " + std::to_string(c);
    CPU_SET(c, &set);
  }
  if (sched_setaffinity(0, sizeof set, &set) != 0) return std::string("cannot pin to the CPUs given: ") + std::strerror(errno);
  return {};
}
}  // namespace

std::vector<int> current_thread_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> out;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

ScopedCpus::ScopedCpus(const std::vector<int>& cpus) {
  if (cpus.empty()) return;
  std::vector<int> before = current_thread_cpus();
  if (before.empty()) {
    error_ = std::string("cannot read the thread's CPU affinity: ") + std::strerror(errno);
    return;
  }
  error_ = set_current_thread_cpus(cpus);
  if (error_.empty()) saved_ = std::move(before);
}

ScopedCpus::~ScopedCpus() {
  if (!saved_.empty()) set_current_thread_cpus(saved_);
}

std::string pin_current_thread(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) return std::string("cannot pin to CPU ") + std::to_string(cpu) + ": " + std::strerror(errno);
  return {};
}

bool cpu_allowed(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  return cpu >= 0 && cpu < CPU_SETSIZE && sched_getaffinity(0, sizeof set, &set) == 0 && CPU_ISSET(cpu, &set);
}

unsigned available_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return unsigned(CPU_COUNT(&set));
  const unsigned hc = std::thread::hardware_concurrency();
  return hc ? hc : 1;
}

}  // namespace st::pipeline
