// scratch_pool: scratch objects lent to whichever thread runs a batch, kept warm between
// batches. A pipeline stage runs on whichever thread of its task arena is free (K + 3 of
// them with K blocks in flight), so scratch kept per thread grew, and was faulted in, once
// for every thread that ever ran the stage; a block's batch reaches tens of MB at 10M
// slots. A lease takes the most recently returned object (the warmest) or makes one, so
// there are never more objects than batches that ran at the same time.
//
// Invariants: an object is held by at most one lease at a time; a returned object keeps
// its contents and capacity (the borrower clears what it needs cleared); objects live
// until the process ends.
#pragma once

#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace st::memory {

template <class T>
class ScratchPool {
 public:
  class Lease {
   public:
    Lease(Lease&& o) noexcept : obj_(std::move(o.obj_)) {}
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    Lease& operator=(Lease&&) = delete;
    ~Lease() {
      if (obj_) ScratchPool::give(std::move(obj_));
    }
    T& operator*() const { return *obj_; }
    T* operator->() const { return obj_.get(); }
    T* get() const { return obj_.get(); }

   private:
    friend class ScratchPool;
    explicit Lease(std::unique_ptr<T> obj) : obj_(std::move(obj)) {}
    std::unique_ptr<T> obj_;
  };

  static Lease take() {
    Shared& s = shared();
    std::lock_guard<std::mutex> g(s.m);
    if (s.free.empty()) {
      ++s.made;
      return Lease(std::make_unique<T>());
    }
    std::unique_ptr<T> obj = std::move(s.free.back());
    s.free.pop_back();
    return Lease(std::move(obj));
  }

  // Objects made so far (leased or free): at most the most leases ever held at once.
  static size_t made() {
    Shared& s = shared();
    std::lock_guard<std::mutex> g(s.m);
    return s.made;
  }

 private:
  struct Shared {
    std::mutex m;
    std::vector<std::unique_ptr<T>> free;  // the last returned at the back
    size_t made = 0;
  };
  static Shared& shared() {
    static Shared s;  // a lease must not outlive it: none is held by a static object
    return s;
  }
  static void give(std::unique_ptr<T> obj) {
    Shared& s = shared();
    std::lock_guard<std::mutex> g(s.m);
    s.free.push_back(std::move(obj));
  }
};

}  // namespace st::memory
