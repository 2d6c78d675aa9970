// parallel: the engine's only door to TBB. Trees call these instead of including TBB, so
// the threading library stays behind engine/pipeline.
//
// ThreadScope runs the engine's parallel loops of the creating thread on exactly `threads`
// threads (the caller plus workers) for its lifetime and, when CPUs are given, pins thread
// k of the scope to cpus[k % size] (sched_setaffinity). Scopes nest per thread.
// parallel_for splits [0, n) into chunks of at least `grain` items and runs body(begin,
// end) on them; it returns when all chunks are done.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace st::pipeline {

class ThreadScope {
 public:
  // threads = 0 means "all hardware threads". cpus empty = no pinning.
  ThreadScope(unsigned threads, std::vector<int> cpus = {});
  ~ThreadScope();
  ThreadScope(const ThreadScope&) = delete;
  ThreadScope& operator=(const ThreadScope&) = delete;

  unsigned threads() const { return threads_; }

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
  unsigned threads_;
};

// Joins the threading library's worker threads when it goes out of scope: held for the
// whole of main(), its destructor waits until every worker thread has exited (when no
// parallel work is running any more), so the process never ends with a worker thread still
// tearing itself down (leak checkers then see every allocation of those threads freed).
class WorkerThreadsJoin {
 public:
  WorkerThreadsJoin();
  ~WorkerThreadsJoin();
  WorkerThreadsJoin(const WorkerThreadsJoin&) = delete;
  WorkerThreadsJoin& operator=(const WorkerThreadsJoin&) = delete;
  // Waits for the worker threads now. False when it could not (another reference to the
  // scheduler still alive, or called from parallel work); the process then ends as it would
  // have without this. Later calls do nothing and return true.
  bool join();

  struct Handle;

 private:
  std::unique_ptr<Handle> handle_;
};

// Runs body over [0, n) in parallel chunks (serially when n <= grain).
void parallel_for(size_t n, size_t grain, const std::function<void(size_t begin, size_t end)>& body);

// The calling thread's slot in the parallel work it runs in: unique among the threads
// running concurrently there, and < concurrency() of the thread that started the work.
// Lets a tree keep one scratch buffer per thread without including TBB.
unsigned thread_slot();
// How many threads the calling thread's parallel loops may use (its innermost scope's
// thread count, or the default arena's).
unsigned concurrency();

// std::sort of [first, last) split over concurrency() threads: the parts are sorted in
// parallel, then merged pairwise in parallel rounds. Same result as std::sort (which it is
// for small ranges or one thread).
template <class It, class Less>
void parallel_sort(It first, It last, Less less) {
  const size_t n = size_t(last - first);
  const size_t parts = std::min<size_t>(concurrency(), n / 4096);
  if (parts <= 1) {
    std::sort(first, last, less);
    return;
  }
  std::vector<size_t> b(parts + 1);
  for (size_t i = 0; i <= parts; ++i) b[i] = n * i / parts;
  parallel_for(parts, 1, [&](size_t lo, size_t hi) {
    for (size_t p = lo; p < hi; ++p) std::sort(first + b[p], first + b[p + 1], less);
  });
  for (size_t width = 1; width < parts; width *= 2) {
    const size_t merges = (parts + 2 * width - 1) / (2 * width);
    parallel_for(merges, 1, [&](size_t lo, size_t hi) {
      for (size_t m = lo; m < hi; ++m) {
        const size_t a = 2 * width * m, mid = std::min(a + width, parts), end = std::min(a + 2 * width, parts);
        if (mid < end) std::inplace_merge(first + b[a], first + b[mid], first + b[end], less);
      }
    });
  }
}

// Confines the calling thread to `cpus` for the object's lifetime (sched_setaffinity) and
// then gives it back the affinity it had; threads it starts meanwhile inherit the
// confinement (Linux). Empty `cpus`: nothing changes. error(): why the confinement failed
// ("" when it holds or was not asked for); the thread is then left as it was.
class ScopedCpus {
 public:
  explicit ScopedCpus(const std::vector<int>& cpus);
  ~ScopedCpus();
  ScopedCpus(const ScopedCpus&) = delete;
  ScopedCpus& operator=(const ScopedCpus&) = delete;
  const std::string& error() const { return error_; }

 private:
  std::vector<int> saved_;  // the CPUs of the affinity before (empty: nothing to restore)
  std::string error_;
};

// The CPUs the calling thread may run on now (sched_getaffinity), ascending.
std::vector<int> current_thread_cpus();

// Pins the calling thread to one CPU. Returns an error message, or empty on success.
std::string pin_current_thread(int cpu);

// True when this process may run on `cpu` (it is in the current affinity mask).
bool cpu_allowed(int cpu);

// Number of CPUs this process may run on.
unsigned available_cpus();

}  // namespace st::pipeline
