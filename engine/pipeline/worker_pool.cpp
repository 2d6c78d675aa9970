// worker_pool: see worker_pool.h.
#include "engine/pipeline/worker_pool.h"

namespace st::pipeline {

WorkerPool::~WorkerPool() {
  {
    std::unique_lock<std::mutex> g(mu_);
    done_.wait(g, [&] { return running_ == 0; });
    stop_ = true;
  }
  go_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void WorkerPool::start(uint32_t n, void (*fn)(void*), void* arg) {
  {
    std::lock_guard<std::mutex> g(mu_);
    while (threads_.size() < n) {
      const uint32_t slot = uint32_t(threads_.size());
      threads_.emplace_back([this, slot] { loop(slot); });
    }
    fn_ = fn, arg_ = arg;
    active_ = running_ = n;
    ++round_;
  }
  go_.notify_all();
}

void WorkerPool::wait() {
  std::unique_lock<std::mutex> g(mu_);
  done_.wait(g, [&] { return running_ == 0; });
}

void WorkerPool::loop(uint32_t slot) {
  uint64_t seen = 0;
  std::unique_lock<std::mutex> g(mu_);
  for (;;) {
    go_.wait(g, [&] { return stop_ || (round_ != seen && slot < active_); });
    if (stop_) return;
    seen = round_;
    g.unlock();
    fn_(arg_);
    g.lock();
    if (--running_ == 0) done_.notify_all();
  }
}

}  // namespace st::pipeline
