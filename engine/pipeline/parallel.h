// parallel: the engine's only door to TBB. Trees call these instead of including TBB, so
// the threading library stays behind engine/pipeline.
//
// ThreadScope limits the process to `threads` workers for its lifetime and, when CPUs are
// given, pins every thread that runs engine work (the caller and TBB workers) to one of
// them round-robin (sched_setaffinity). parallel_for splits [0, n) into chunks of at least
// `grain` items and runs body(begin, end) on them; it returns when all chunks are done.
#pragma once

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

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  unsigned threads_;
};

// Runs body over [0, n) in parallel chunks (serially when n <= grain).
void parallel_for(size_t n, size_t grain, const std::function<void(size_t begin, size_t end)>& body);

// Pins the calling thread to one CPU. Returns an error message, or empty on success.
std::string pin_current_thread(int cpu);

// Number of CPUs this process may run on.
unsigned available_cpus();

}  // namespace st::pipeline
