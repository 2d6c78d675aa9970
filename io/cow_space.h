// cow_space: copy-on-write page space over any NodeStore + ManifestSlot: the commit protocol
// of the persistent tries. It owns the PageAllocator, persists it in free-list pages named
// by the manifest, and publishes commits atomically:
//
//   engine: release(old pages) ... allocate(n) ... write node pages, reap them ok
//   commit(next): write the free list into fresh pages -> store.sync()
//                 -> slot.publish(manifest seq+1) -> allocator.commit_durable()
//   any failure: abort() (the commit's pages return to free space; nothing published),
//   except a publish whose outcome is unknown (rename done, directory fsync failed): then
//   the space refuses further commits until it is reopened (Errc::sys), because the new
//   manifest may be the current one and its pages must not be reused.
//
//   free-list blob, over free_list_pages contiguous pages from free_list_page:
//   [length u64 LE][PageAllocator::serialize() bytes][zero padding]
//
// Invariant: pages reachable from the published manifest (its nodes and its free list) are
// never in free space, so a crash at any point reopens at the last published root.
#pragma once

#include <cstdint>
#include <vector>

#include "io/manifest.h"
#include "io/node_store.h"
#include "io/page_allocator.h"

namespace st::io {

class CowSpace {
 public:
  CowSpace(NodeStore& store, ManifestSlot& slot, const StoreParams& params)
      : store_(store), slot_(slot), params_(params) {}

  // Loads the last published manifest and its free list, checking the parameters (a
  // mismatch is a one-line error naming both values) and every size the manifest gives
  // against the store before anything is allocated or read (corrupt_page, one line). No
  // manifest: an empty space.
  Status open();
  const Manifest& committed() const { return committed_; }
  bool has_commit() const { return committed_.commit_seq > 0; }

  // n fresh pages for the commit in progress; grows the store when the arena is full
  // (doubling, halving the step down to what is needed when the disk is short of room).
  Status allocate(uint64_t n, std::vector<uint64_t>* pages);
  // `page` (of the committed state) is superseded by the commit in progress.
  void release(uint64_t page) { alloc_.release(page); }

  // Makes the commit in progress durable. The caller's node pages must have been written
  // (completions reaped ok). `next` supplies the root fields and counts; commit() sets
  // params, commit_seq, page_high_water and the free-list fields. On error the commit is
  // aborted and the previous manifest stays current.
  Status commit(Manifest next);
  void abort() { alloc_.abort_commit(); }

  const PageAllocator& allocator() const { return alloc_; }
  bool needs_reopen() const { return needs_reopen_; }

 private:
  Status grow_for(uint64_t min_capacity);

  NodeStore& store_;
  ManifestSlot& slot_;
  StoreParams params_;
  PageAllocator alloc_;
  Manifest committed_;
  bool needs_reopen_ = false;
};

}  // namespace st::io
