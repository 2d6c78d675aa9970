// dead_pages: see dead_pages.h.
#include "engine/persist/dead_pages.h"

#include <string>

namespace st::persist {

io::Status DeadPageLedger::release_dead(const PageReader& reader, io::CowSpace& space, uint64_t old_commit_page,
                                        const char* who, uint64_t* pages_released) {
  released_.clear();
  still_partial_.clear();
  for (const auto& [page, dead] : pending_) {
    auto it = partial_.find(page);
    const uint32_t total = it != partial_.end() ? it->second.second : reader.records_in(page);
    const uint32_t all_dead = dead + (it != partial_.end() ? it->second.first : 0);
    if (all_dead > total) {
      pending_.clear();
      return {io::Errc::corrupt_page,
              std::string(who) + ": page " + std::to_string(page) + ": more records superseded than it holds"};
    }
    if (all_dead == total) released_.push_back(page);
    else still_partial_.push_back({page, {all_dead, total}});
  }
  pending_.clear();
  for (uint64_t page : released_) space.release(page);
  if (old_commit_page != io::kNoPage) space.release(old_commit_page);
  *pages_released = released_.size() + (old_commit_page != io::kNoPage ? 1 : 0);
  return {};
}

void DeadPageLedger::reset_counts(const std::unordered_map<uint64_t, uint32_t>& live,
                                  const std::unordered_map<uint64_t, uint32_t>& records) {
  partial_.clear();
  for (const auto& [page, n] : records) {
    auto it = live.find(page);
    const uint32_t alive = it == live.end() ? 0 : it->second;
    if (alive < n) partial_[page] = {n - alive, n};
  }
}

void DeadPageLedger::commit_durable() {
  for (uint64_t page : released_) {
    partial_.erase(page);
    parents_.forget_page(page);
  }
  for (const auto& [page, counts] : still_partial_) partial_[page] = counts;
  released_.clear();
  still_partial_.clear();
}

}  // namespace st::persist
