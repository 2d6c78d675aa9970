// page_allocator: free-space management for copy-on-write commits in an arena of pages.
// A commit writes its new pages into free space only, so the pages of the last committed
// root are never overwritten until a newer root is durable:
//
//   page states:   free --allocate()--> live (this commit) --release()--> free (same commit)
//                  live (committed)  --release()--> pending_free --commit_durable()--> free
//                  with defer_frees: pending_free --commit_durable(seq)--> deferred (tag seq)
//                                    deferred --reclaim_deferred_through(t)--> free (tags <= t)
//
//   commit k:  allocate new pages, release the pages they supersede (pending), write, sync,
//              publish manifest k, commit_durable(k)  (root k-1's pages become reusable, or,
//              with defer_frees, deferred with tag k: reachable only from manifests older
//              than k, so reusable once no reader walks one of those)
//   crash:     the reopened allocator is the one serialized with manifest k-1; pages written
//              by the unfinished commit k were free in it, so they are simply reused.
//
// Invariants: a page is in exactly one of {free extents, one deferred group, live,
// pending_free}; extents are disjoint, non-adjacent within their set (coalesced) and below
// high_water; deferred groups are in ascending tag order, at most kMaxDeferredGroups of them
// (beyond that the two oldest are joined under the later tag: pages are only ever held
// longer than needed, never released earlier); allocation is first-fit from the lowest FREE page (never a deferred one), then
// extends high_water, never beyond capacity. serialize() writes free and deferred pages
// alike as free: the persisted list is "not live in this root" (cow_space.h).
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <unordered_set>
#include <vector>

#include "io/status.h"

namespace st::io {

class PageAllocator {
 public:
  explicit PageAllocator(uint64_t capacity_pages = 0) : capacity_(capacity_pages) {}

  // n pages for the commit in progress (possibly in several runs), appended to *out.
  // Errc::full (and nothing allocated) if they do not fit below capacity.
  Status allocate(uint64_t n, std::vector<uint64_t>* out);
  // One contiguous run of n pages; returns its first page, Errc::full if none fits.
  Status allocate_run(uint64_t n, uint64_t* first);
  // `page` is superseded by the commit in progress. A page allocated in this same commit is
  // freed at once; a committed page stays intact until commit_durable().
  void release(uint64_t page);
  // The commit in progress is durable: its released pages become free (deferred when
  // defer_frees is on, tagged with `seq`, the commit_seq of the manifest it published: they
  // are reachable only from manifests older than seq).
  void commit_durable(uint64_t seq = 0);
  // The commit in progress was abandoned: its allocations return to free space and its
  // releases are forgotten (those pages still belong to the committed root).
  void abort_commit();

  // Deferred frees: off (the default) = commit_durable() frees at once.
  void set_defer_frees(bool on) { defer_frees_ = on; }
  bool defer_frees() const { return defer_frees_; }
  // Every free page becomes deferred, tagged `seq` (the free list of manifest seq, loaded
  // while readers may hold older roots).
  void defer_all_free(uint64_t seq = 0);
  // The deferred groups' tags, ascending.
  std::vector<uint64_t> deferred_tags() const;
  // The deferred groups tagged <= seq become free (no reader walks a root older than seq).
  void reclaim_deferred_through(uint64_t seq);
  // Every deferred page becomes free (no reader of an older root exists).
  void reclaim_deferred() { reclaim_deferred_through(~uint64_t(0)); }
  static constexpr size_t kMaxDeferredGroups = 8;

  void set_capacity(uint64_t capacity_pages);  // grow only
  uint64_t capacity() const { return capacity_; }
  uint64_t high_water() const { return high_water_; }
  uint64_t free_pages() const;        // in free extents below high water (allocatable)
  uint64_t deferred_pages() const;    // freed, not yet reusable
  uint64_t pending_free_pages() const { return pending_free_.size(); }
  // Not live: free, deferred, or at/above high water.
  bool is_free(uint64_t page) const;

  // Committed state only (call after commit_durable(); asserts nothing is in progress):
  // high water + free extents (deferred ones merged in), little-endian u64s:
  // [high_water][n][start,len]*n.
  std::vector<uint8_t> serialize() const;
  // What serialize() would return after commit_durable(), with the commit still in
  // progress (its released pages listed free, its allocations live): one linear merge of
  // the free and deferred extents and the released pages, nothing copied or changed.
  std::vector<uint8_t> serialize_durable() const;
  // Strict: the extent count must match the bytes exactly, extents must be sorted, disjoint,
  // not adjacent and below high water <= capacity_pages; errors are corrupt_page, one line.
  static Status deserialize(std::span<const uint8_t> bytes, uint64_t capacity_pages, PageAllocator* out);

 private:
  void free_run(uint64_t start, uint64_t len);  // coalescing insert into free_
  using Extents = std::map<uint64_t, uint64_t>;  // start -> length
  struct DeferredGroup {
    uint64_t tag = 0;  // reachable only from manifests with commit_seq < tag
    Extents runs;
  };
  static void insert_run(Extents& set, uint64_t start, uint64_t len);
  static bool in_extents(const Extents& set, uint64_t page);
  bool in_deferred(uint64_t page) const;
  Extents& deferred_group(uint64_t tag);  // the group pages freed at `tag` join
  // serialize()'s bytes for free + deferred + `released` (sorted pages), merged in order.
  std::vector<uint8_t> serialize_with(std::span<const uint64_t> released) const;

  uint64_t capacity_ = 0;
  uint64_t high_water_ = 0;
  Extents free_;
  std::vector<DeferredGroup> deferred_;
  bool defer_frees_ = false;
  std::unordered_set<uint64_t> allocated_in_commit_;
  std::vector<uint64_t> pending_free_;
  uint64_t high_water_at_commit_ = 0;
};

}  // namespace st::io
