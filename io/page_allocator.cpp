// page_allocator: first-fit extent allocator with commit-deferred frees (see the header).
#include "io/page_allocator.h"
#include "kernels/support/check.h"

#include <algorithm>
#include <cassert>
#include <string>

namespace st::io {

namespace {
uint64_t extent_pages(const std::map<uint64_t, uint64_t>& set) {
  uint64_t n = 0;
  for (const auto& [start, len] : set) n += len;
  return n;
}
}  // namespace

uint64_t PageAllocator::free_pages() const { return extent_pages(free_); }
uint64_t PageAllocator::deferred_pages() const {
  uint64_t n = 0;
  for (const DeferredGroup& g : deferred_) n += extent_pages(g.runs);
  return n;
}

bool PageAllocator::in_deferred(uint64_t page) const {
  for (const DeferredGroup& g : deferred_)
    if (in_extents(g.runs, page)) return true;
  return false;
}

std::vector<uint64_t> PageAllocator::deferred_tags() const {
  std::vector<uint64_t> tags;
  for (const DeferredGroup& g : deferred_) tags.push_back(g.tag);
  return tags;
}

PageAllocator::Extents& PageAllocator::deferred_group(uint64_t tag) {
  if (!deferred_.empty() && deferred_.back().tag >= tag) return deferred_.back().runs;
  if (deferred_.size() >= kMaxDeferredGroups) {  // the two oldest joined, held until the later tag
    for (const auto& [start, len] : deferred_[0].runs) insert_run(deferred_[1].runs, start, len);
    deferred_.erase(deferred_.begin());
  }
  deferred_.push_back({tag, {}});
  return deferred_.back().runs;
}

bool PageAllocator::in_extents(const Extents& set, uint64_t page) {
  auto it = set.upper_bound(page);
  if (it == set.begin()) return false;
  --it;
  return page < it->first + it->second;
}

bool PageAllocator::is_free(uint64_t page) const {
  if (page >= high_water_) return true;
  return in_extents(free_, page) || in_deferred(page);
}

void PageAllocator::insert_run(Extents& set, uint64_t start, uint64_t len) {
  assert(len > 0);
  auto next = set.lower_bound(start);
  ST_CHECK(next == set.end() || next->first >= start + len, "page allocator: a run freed twice");
  if (next != set.end() && next->first == start + len) {
    len += next->second;
    next = set.erase(next);
  }
  if (next != set.begin()) {
    auto prev = std::prev(next);
    ST_CHECK(prev->first + prev->second <= start, "page allocator: a run freed twice");
    if (prev->first + prev->second == start) {
      prev->second += len;
      return;
    }
  }
  set.emplace(start, len);
}

void PageAllocator::free_run(uint64_t start, uint64_t len) {
  ST_CHECK(len > 0 && start + len <= high_water_, "page allocator: a freed run beyond the high water mark");
  assert(!in_deferred(start));
  insert_run(free_, start, len);
}

void PageAllocator::defer_all_free(uint64_t seq) {
  if (free_.empty()) return;
  Extents& group = deferred_group(seq);
  for (const auto& [start, len] : free_) insert_run(group, start, len);
  free_.clear();
}

void PageAllocator::reclaim_deferred_through(uint64_t seq) {
  size_t n = 0;
  for (; n < deferred_.size() && deferred_[n].tag <= seq; ++n)
    for (const auto& [start, len] : deferred_[n].runs) insert_run(free_, start, len);
  deferred_.erase(deferred_.begin(), deferred_.begin() + std::ptrdiff_t(n));
}

Status PageAllocator::allocate(uint64_t n, std::vector<uint64_t>* out) {
  uint64_t available = free_pages() + (capacity_ - high_water_);
  if (n > available)
    return Status(Errc::full, "allocator: " + std::to_string(n) + " pages requested, " +
                                  std::to_string(available) + " free of " + std::to_string(capacity_));
  while (n > 0 && !free_.empty()) {
    auto it = free_.begin();
    const uint64_t start = it->first, len = it->second;
    const uint64_t take = len < n ? len : n;
    free_.erase(it);
    if (take < len) free_.emplace(start + take, len - take);
    for (uint64_t p = start; p < start + take; ++p) {
      out->push_back(p);
      allocated_in_commit_.insert(p);
    }
    n -= take;
  }
  for (; n > 0; --n) {
    out->push_back(high_water_);
    allocated_in_commit_.insert(high_water_++);
  }
  return {};
}

Status PageAllocator::allocate_run(uint64_t n, uint64_t* first) {
  assert(n > 0);
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < n) continue;
    const uint64_t start = it->first, len = it->second;
    free_.erase(it);
    if (n < len) free_.emplace(start + n, len - n);
    for (uint64_t p = start; p < start + n; ++p) allocated_in_commit_.insert(p);
    *first = start;
    return {};
  }
  if (capacity_ - high_water_ < n)
    return Status(Errc::full, "allocator: no run of " + std::to_string(n) + " free pages below capacity " +
                                  std::to_string(capacity_));
  *first = high_water_;
  for (uint64_t p = 0; p < n; ++p) allocated_in_commit_.insert(high_water_++);
  return {};
}

void PageAllocator::release(uint64_t page) {
  ST_CHECK(page < high_water_, "page allocator: a released page beyond the high water mark");
  assert(!is_free(page));
  if (allocated_in_commit_.erase(page)) {
    free_run(page, 1);
    return;
  }
  pending_free_.push_back(page);
}

void PageAllocator::commit_durable(uint64_t seq) {
  if (defer_frees_ && !pending_free_.empty()) {
    Extents& group = deferred_group(seq);
    for (uint64_t p : pending_free_) insert_run(group, p, 1);
  } else {
    for (uint64_t p : pending_free_) free_run(p, 1);
  }
  pending_free_.clear();
  allocated_in_commit_.clear();
  high_water_at_commit_ = high_water_;
}

void PageAllocator::abort_commit() {
  pending_free_.clear();
  for (uint64_t p : allocated_in_commit_) free_run(p, 1);
  allocated_in_commit_.clear();
  // Trim the free tail above the committed high water mark back into "never allocated".
  while (!free_.empty()) {
    auto last = std::prev(free_.end());
    if (last->first + last->second != high_water_ || high_water_ <= high_water_at_commit_) break;
    const uint64_t cut_from = last->first > high_water_at_commit_ ? last->first : high_water_at_commit_;
    const uint64_t start = last->first;
    free_.erase(last);
    if (cut_from > start) free_.emplace(start, cut_from - start);
    high_water_ = cut_from;
  }
}

void PageAllocator::set_capacity(uint64_t capacity_pages) {
  if (capacity_pages > capacity_) capacity_ = capacity_pages;
}

std::vector<uint8_t> PageAllocator::serialize() const {
  assert(pending_free_.empty() && allocated_in_commit_.empty());
  return serialize_with({});
}

std::vector<uint8_t> PageAllocator::serialize_durable() const {
  std::vector<uint64_t> released = pending_free_;
  std::sort(released.begin(), released.end());
  return serialize_with(released);
}

// Sorted, pairwise disjoint sources (the free extents, each deferred group's extents, the
// single released pages) walked in order of start, the least start first (at most
// kMaxDeferredGroups + 2 sources); touching runs are coalesced as they are emitted, so the
// list is sorted, disjoint and not adjacent, as deserialize() demands.
std::vector<uint8_t> PageAllocator::serialize_with(std::span<const uint64_t> released) const {
  size_t extents = free_.size() + released.size();
  for (const DeferredGroup& g : deferred_) extents += g.runs.size();
  std::vector<uint8_t> b;
  b.reserve(16 + 16 * extents);
  auto put = [&](uint64_t v) { for (int i = 0; i < 8; ++i) b.push_back(uint8_t(v >> (8 * i))); };
  put(high_water_);
  put(0);  // the extent count, filled in below
  uint64_t count = 0, run_start = 0, run_len = 0;
  auto emit = [&](uint64_t start, uint64_t len) {
    ST_CHECK(!run_len || start >= run_start + run_len, "page allocator: a run freed twice");
    if (run_len && run_start + run_len == start) { run_len += len; return; }
    if (run_len) { put(run_start); put(run_len); ++count; }
    run_start = start, run_len = len;
  };
  using It = Extents::const_iterator;
  std::vector<std::pair<It, It>> sources{{free_.begin(), free_.end()}};
  for (const DeferredGroup& g : deferred_) sources.push_back({g.runs.begin(), g.runs.end()});
  size_t r = 0;
  constexpr uint64_t kEnd = ~uint64_t(0);
  while (true) {
    size_t least = sources.size();
    uint64_t least_start = r < released.size() ? released[r] : kEnd;
    for (size_t i = 0; i < sources.size(); ++i)
      if (sources[i].first != sources[i].second && sources[i].first->first < least_start)
        least = i, least_start = sources[i].first->first;
    if (least_start == kEnd) break;
    if (least < sources.size()) emit(least_start, (sources[least].first++)->second);
    else emit(least_start, 1), ++r;
  }
  if (run_len) { put(run_start); put(run_len); ++count; }
  for (int i = 0; i < 8; ++i) b[8 + size_t(i)] = uint8_t(count >> (8 * i));
  return b;
}

Status PageAllocator::deserialize(std::span<const uint8_t> b, uint64_t capacity_pages, PageAllocator* out) {
  size_t pos = 0;
  auto get = [&](uint64_t* v) {
    if (pos + 8 > b.size()) return false;
    *v = 0;
    for (int i = 7; i >= 0; --i) *v = (*v << 8) | b[pos + size_t(i)];
    pos += 8;
    return true;
  };
  uint64_t hw, n;
  if (!get(&hw) || !get(&n)) return Status(Errc::corrupt_page, "free list: truncated header");
  if (hw > capacity_pages)
    return Status(Errc::corrupt_page, "free list: high water " + std::to_string(hw) + " beyond capacity " +
                                          std::to_string(capacity_pages));
  // The count against the bytes (and the most extents hw pages can hold) before any loop
  // runs on its word: exactly n 16-byte extents follow the header.
  const uint64_t extent_bytes = b.size() - pos;
  if (n > extent_bytes / 16 || n * 16 != extent_bytes)
    return Status(Errc::corrupt_page, "free list: " + std::to_string(n) + " extents in " + std::to_string(extent_bytes) +
                                          " bytes (16 each)");
  if (n > (hw + 1) / 2)
    return Status(Errc::corrupt_page, "free list: " + std::to_string(n) + " extents below high water " +
                                          std::to_string(hw) + " (disjoint, not adjacent: at most " +
                                          std::to_string((hw + 1) / 2) + ")");
  PageAllocator a(capacity_pages);
  a.high_water_ = hw;
  a.high_water_at_commit_ = hw;
  uint64_t prev_end = 0;
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t start, len;
    if (!get(&start) || !get(&len)) return Status(Errc::corrupt_page, "free list: truncated extent");
    if (len == 0 || start < prev_end || (i > 0 && start == prev_end) || start + len > hw || start + len < start)
      return Status(Errc::corrupt_page, "free list: extent " + std::to_string(i) + " is invalid");
    a.free_.emplace(start, len);
    prev_end = start + len;
  }
  if (pos != b.size()) return Status(Errc::corrupt_page, "free list: trailing bytes");
  *out = std::move(a);
  return {};
}

}  // namespace st::io
