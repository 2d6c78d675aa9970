// memory_store: durable image + dirty map + fault injection (model in memory_store.h).
#include "io/memory_store.h"
#include "kernels/support/check.h"
#include "kernels/support/splitmix64.h"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace st::io {

MemoryStore::MemoryStore(uint32_t page_size, uint64_t capacity_pages)
    : page_size_(page_size), capacity_(capacity_pages), durable_(page_size * capacity_pages, 0) {
  assert(valid_page_size(page_size));
}

Status MemoryStore::grow(uint64_t capacity_pages) {
  if (crashed_) return Status(Errc::crashed, "memory store crashed: grow refused");
  if (capacity_pages > capacity_) {
    durable_.resize(size_t(capacity_pages) * page_size_, 0);
    capacity_ = capacity_pages;
  }
  return {};
}

void MemoryStore::set_fault_plan(const FaultPlan& plan) {
  plan_ = plan;
  writes_since_plan_ = 0;
}

void MemoryStore::crash() {
  if (plan_.crash_keeps_unsynced_seed) {
    for (auto& [id, page] : dirty_) {
      uint64_t h = (*plan_.crash_keeps_unsynced_seed ^ (id * kSplitmix64Gamma)) * 0xbf58476d1ce4e5b9ull;
      h ^= h >> 31;
      unsigned char* dst = durable_.data() + size_t(id) * page_size_;
      switch (h % 3) {
        case 0: break;  // lost
        case 1: std::memcpy(dst, page.data(), page_size_); ++crash_kept_whole_; break;
        case 2: {
          const uint32_t cut = uint32_t((h >> 8) % (page_size_ / 512)) * 512;
          std::memcpy(dst, page.data(), cut);
          ++crash_kept_torn_;
          break;
        }
      }
    }
  }
  dirty_.clear();
  crashed_ = true;
}

void MemoryStore::restart() {
  dirty_.clear();
  done_.clear();
  crashed_ = false;
  plan_ = FaultPlan{};
  writes_since_plan_ = 0;
}

unsigned char* MemoryStore::raw_page(uint64_t page_id) {
  ST_CHECK(page_id < capacity_, "memory store: a page beyond capacity");
  auto it = dirty_.find(page_id);
  return it != dirty_.end() ? it->second.data() : durable_.data() + size_t(page_id) * page_size_;
}

void MemoryStore::complete(const PageOp& op, Errc code, PageCheck check) {
  PageCompletion c;
  c.tag = op.tag;
  c.page_id = op.page_id;
  c.kind = op.kind;
  c.code = code;
  c.check = check;
  if (code == Errc::ok) {
    if (op.kind == PageOpKind::read) { ++counters_.reads; counters_.bytes_read += page_size_; }
    else { ++counters_.writes; ++counters_.write_ops; counters_.bytes_written += page_size_; }
  } else {
    ++counters_.errors;
    if (code == Errc::corrupt_page) ++counters_.corrupt_pages;
  }
  done_.push_back(c);
}

void MemoryStore::submit(std::span<const PageOp> ops) {
  ++counters_.submit_calls;
  const uint32_t payload = page_payload_bytes(page_size_);
  for (const PageOp& op : ops) {
    assert(op.buffer != nullptr);
    ST_CHECK(op.pages == 1, "memory store: one page per op (max_write_pages() is 1)");
    if (op.kind == PageOpKind::write && !crashed_) {
      ++writes_since_plan_;
      if (plan_.crash_at_write && writes_since_plan_ == *plan_.crash_at_write) crash();
    }
    if (crashed_) { complete(op, Errc::crashed); continue; }
    if (op.page_id >= capacity_) { complete(op, Errc::out_of_range); continue; }
    if (op.kind == PageOpKind::read) {
      const unsigned char* page = raw_page(op.page_id);
      const PageCheck check = check_page(page, page_size_, op.page_id);
      if (check != PageCheck::ok) { complete(op, Errc::corrupt_page, check); continue; }
      std::memcpy(op.buffer, page, payload);
      complete(op, Errc::ok);
      continue;
    }
    if (plan_.fail_write_at && writes_since_plan_ == *plan_.fail_write_at) {
      complete(op, Errc::injected_fault);
      continue;
    }
    std::vector<unsigned char> sealed(page_size_);
    std::memcpy(sealed.data(), op.buffer, payload);
    seal_page(sealed.data(), page_size_, op.page_id);
    if (plan_.tear_write_at && writes_since_plan_ == *plan_.tear_write_at) {
      const unsigned char* old = raw_page(op.page_id);
      const uint32_t keep_new = std::min(plan_.tear_bytes, page_size_);
      std::memcpy(sealed.data() + keep_new, old + keep_new, page_size_ - keep_new);
    }
    dirty_[op.page_id] = std::move(sealed);
    complete(op, Errc::ok);
  }
}

size_t MemoryStore::reap(std::span<PageCompletion> out, size_t) {
  size_t n = 0;
  if (shuffle_) {
    while (n < out.size() && !done_.empty()) {
      uint64_t& x = *shuffle_;
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      const size_t pick = size_t((x >> 33) % done_.size());
      out[n++] = done_[pick];
      done_.erase(done_.begin() + std::ptrdiff_t(pick));
    }
    return n;
  }
  while (n < out.size() && !done_.empty()) {
    out[n++] = done_.front();
    done_.pop_front();
  }
  return n;
}

Status MemoryStore::sync() {
  ++counters_.syncs;
  if (crashed_) return Status(Errc::crashed, "memory store crashed: sync failed");
  for (auto& [id, page] : dirty_)
    std::memcpy(durable_.data() + size_t(id) * page_size_, page.data(), page_size_);
  dirty_.clear();
  return {};
}

}  // namespace st::io
