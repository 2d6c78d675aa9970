// cross_page_parents: for each record page, the records on OTHER pages that name one of its
// records as a child (the cross-page edges into it), kept by a block committer across its
// commits so that compaction can find the parents of the live records left on a partly
// dead page, and their parents up to the root, and rewrite that chain (CommitFrame).
//
//   rebuild(reader, root, ...)   one walk of the committed tree from its root (at the first
//                                commit of a committer): every cross-page edge, and the live
//                                records per page (so the dead-record counts of partly dead
//                                pages are exact from the first commit of a run on)
//   note(child, parent)          the packer placed `parent` naming `child` (SubtreePacker's
//                                edge sink): the newest parent of a child wins
//   forget_page(page)            the page was released: its records are gone
//
// Invariants: an entry may be stale (its child superseded since, or its parent moved) but
// never wrong for a live record once its parent was placed after the rebuild: every
// placement of a record naming a child replaces the child's entry. Staleness costs reads
// only: compaction copies only records that its new tree reaches (CommitFrame::relocate),
// whatever the index says.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/persist/page_reader.h"
#include "engine/persist/record_page.h"
#include "io/status.h"

namespace st::persist {

class CrossPageParents {
 public:
  bool built() const { return built_; }
  // Drops everything (a failed commit: the placements it noted may name pages that are free).
  void invalidate() {
    by_page_.clear();
    built_ = false;
  }
  void note(Locator child, Locator parent) {
    const uint64_t page = locator_page(child);
    if (page == locator_page(parent)) return;
    auto& v = by_page_[page];
    const uint32_t index = locator_index(child);
    for (auto& [i, p] : v)
      if (i == index) {
        p = parent;
        return;
      }
    v.push_back({index, parent});
  }
  void forget_page(uint64_t page) { by_page_.erase(page); }
  // Appends the pages of the parents of records on `page` (unsorted, may repeat).
  void parent_pages(uint64_t page, std::vector<uint64_t>* out) const {
    auto it = by_page_.find(page);
    if (it == by_page_.end()) return;
    for (const auto& e : it->second) out->push_back(locator_page(e.second));
  }

  // Walks the tree from `root` through `reader` (pages loaded in rounds of at most
  // `round_pages`, the reader cleared when it caches more than `cache_pages`), replacing the
  // index; *live gets page -> live records and *records page -> records it holds, for every
  // page reached.
  io::Status rebuild(PageReader& reader, Locator root, uint32_t round_pages, uint32_t cache_pages,
                     std::unordered_map<uint64_t, uint32_t>* live, std::unordered_map<uint64_t, uint32_t>* records);

 private:
  std::unordered_map<uint64_t, std::vector<std::pair<uint32_t, Locator>>> by_page_;
  bool built_ = false;
};

}  // namespace st::persist
