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
//
// Readers of older roots (another process, or another handle, that loaded manifest j < k
// and still walks root j): with a reader gate set (set_reader_gate, a file-backed database:
// io/db_lock.h), the pages a durable commit k frees are DEFERRED, not free, tagged k
// (page_allocator.h): they are reachable only from manifests older than k. A group tagged t
// becomes free when the gate reports that no reader walks a root older than t and none is
// loading a manifest at that instant: every reader announces "loading" before it loads a
// manifest and holds its state's seq until it is done, so any later reader loads the current
// manifest or a newer one. The gate is asked at the first allocation of each commit (and
// again before the arena is grown), oldest group first; a group still held keeps every newer
// one deferred too, and the commit takes fresh pages at the arena's end instead.
//
// Invariant (readers): a page reachable from any manifest a live reader loaded is never
// free. Proof sketch: it is reachable from the current manifest (never free, above), or it
// was released by a commit k published after that reader loaded manifest j < k, so it is
// deferred with a tag >= k > j until an instant when no reader walks a root older than the
// tag, which cannot come while that reader holds j.
//
// Crash: the persisted free list holds free and deferred pages alike (both are unreachable
// from its own manifest m). A writer that opens it does not know which readers still hold
// older roots, so with a gate every listed page starts deferred, tagged m, until the gate
// reports no reader older than m. Nothing is leaked across a crash and nothing a reader may
// hold is reused.
#pragma once

#include <cstdint>
#include <functional>
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
  // The same from a manifest the caller loaded (a reader loads it once, before it opens the
  // store, so the store's size covers the manifest's high water).
  Status open(const Manifest& loaded);

  // Set before open(): no_reader_before(seq) answers "does no reader walk a root older than
  // manifest seq, and none load a manifest now?" (ReaderGate). Without a gate, pages freed
  // by a commit are reusable at once (no reader can exist).
  void set_reader_gate(std::function<bool(uint64_t)> no_reader_before) { no_reader_before_ = std::move(no_reader_before); }
  // Set before open(): allocate() and commit() refuse (a reader's handle).
  void set_read_only(bool on) { read_only_ = on; }
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
  void abort() {
    alloc_.abort_commit();
    gate_asked_ = false;
  }

  const PageAllocator& allocator() const { return alloc_; }
  bool needs_reopen() const { return needs_reopen_; }

 private:
  Status grow_for(uint64_t min_capacity);
  // The state of a space with nothing committed (before a manifest is loaded, or none exists).
  void reset_empty();
  // Deferred groups become free, oldest first, while the gate reports no reader older than
  // their tag; true if any did.
  bool reclaim_deferred();
  void ask_gate_once();  // at the commit's first allocation

  NodeStore& store_;
  ManifestSlot& slot_;
  StoreParams params_;
  PageAllocator alloc_;
  Manifest committed_;
  bool needs_reopen_ = false;
  bool read_only_ = false;
  bool gate_asked_ = false;  // in the commit in progress
  std::function<bool(uint64_t)> no_reader_before_;
};

}  // namespace st::io
