// dead_pages: which pages a copy-on-write block commit may hand back to free space.
//
// Records have exactly one parent, so a record superseded by a commit (read from the
// committed state and not reused by the new tree) is unreachable from the new root. A page
// is released only when EVERY record on it is superseded, counted across the commits of
// one ledger: the counts of partly dead pages carry over to the next commit once a commit
// is durable (commit_durable). A new ledger knows nothing until reset_counts() gives it a
// walk's exact counts (CommitFrame does at a committer's first compacting commit, with the
// cross-page parents of every page, parents()). Compaction (CommitFrame::place_kept) copies
// the live records out of its target pages and supersedes them here, so those pages reach
// their full count in the same commit; partial() and known_dead() rank them.
//
//   per commit:  supersede(page) for each dead record ... release_dead(reader, space, ...)
//                -> publish the commit -> commit_durable()   (on failure: nothing to undo;
//                the CowSpace aborts the releases with the commit)
//
// Invariant: a page is released only if its superseded records == the records it holds;
// more superseded than held is a corrupt_page error and nothing is released.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/persist/cross_page_parents.h"
#include "engine/persist/page_reader.h"
#include "io/cow_space.h"
#include "io/status.h"

namespace st::persist {

class DeadPageLedger {
 public:
  // A record on `page` is superseded by the commit in progress.
  void supersede(uint64_t page) { ++pending_[page]; }
  // Records on `page` known dead from the durable commits of this ledger (0: none known).
  uint32_t known_dead(uint64_t page) const {
    auto it = partial_.find(page);
    return it == partial_.end() ? 0 : it->second.first;
  }

  // Committed partly dead pages: page -> (dead records, records in the page).
  const std::unordered_map<uint64_t, std::pair<uint32_t, uint32_t>>& partial() const { return partial_; }
  // Replaces the partly dead counts by a walk's (page -> live records, page -> records held).
  void reset_counts(const std::unordered_map<uint64_t, uint32_t>& live,
                    const std::unordered_map<uint64_t, uint32_t>& records);
  // The cross-page parents of the pages of the committed state (released pages forgotten
  // at commit_durable).
  CrossPageParents& parents() { return parents_; }

  // Releases into `space` every page whose records are now all superseded (the page must
  // be loaded in `reader`, which knows its record count) and the previous commit record
  // page (io::kNoPage: none). `who` prefixes the error. Returns the pages released.
  io::Status release_dead(const PageReader& reader, io::CowSpace& space, uint64_t old_commit_page, const char* who,
                          uint64_t* pages_released);

  // The commit that called release_dead is durable: its partial counts carry over.
  void commit_durable();

 private:
  std::unordered_map<uint64_t, uint32_t> pending_;  // this commit: page -> superseded records
  // Committed: partly dead page -> (dead records, records in the page).
  std::unordered_map<uint64_t, std::pair<uint32_t, uint32_t>> partial_;
  std::vector<uint64_t> released_;
  CrossPageParents parents_;
  std::vector<std::pair<uint64_t, std::pair<uint32_t, uint32_t>>> still_partial_;
};

}  // namespace st::persist
