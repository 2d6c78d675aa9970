// worker_pool: a fixed set of threads started once and given one job per round, for work
// that would otherwise start threads per block (the `geth` reader's workers).
//
//   WorkerPool pool;
//   pool.start(n, fn, arg)   each of n threads runs fn(arg) once (threads started on the
//                            first call that needs them, then kept; a thread started inside a
//                            pinned stage body inherits that body's CPUs)
//   pool.wait()              returns once all n have returned from fn
//
// Invariants: one round at a time (start, then wait, from one thread); the destructor ends
// the threads (after the round in progress, if any, is waited for). Starting a round
// allocates nothing once its threads exist.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace st::pipeline {

class WorkerPool {
 public:
  WorkerPool() = default;
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;
  ~WorkerPool();

  void start(uint32_t n, void (*fn)(void*), void* arg);
  void wait();

 private:
  void loop(uint32_t slot);

  std::mutex mu_;
  std::condition_variable go_, done_;
  std::vector<std::thread> threads_;
  uint64_t round_ = 0;     // bumped per start(): a thread runs each round once
  uint32_t active_ = 0;    // threads taking part in the current round
  uint32_t running_ = 0;   // of those, not yet returned from fn
  void (*fn_)(void*) = nullptr;
  void* arg_ = nullptr;
  bool stop_ = false;
};

}  // namespace st::pipeline
