// snapshot/update: a block commit's changes to the flat snapshot, written copy-on-write in
// the same commit as the tree (CommitFrame, commit_frame.h):
//
//   committer (tree-specific hook)      SnapshotDelta: put(key, value) for every leaf it
//                                       writes, erase(key) / erase_prefix(key) for what it
//                                       deletes (an MPT slot; a destroyed account: its key
//                                       and every slot key under it)
//   CommitFrame::publish -> update_snapshot(files, writer, delta, &ref)
//       1. the old snapshot's index (SnapshotReader); each change is routed to the data
//          page that holds (or would hold) its key; an erased prefix reaches every page
//          its range spans
//       2. those pages are read (one load per window), merged with their changes (a put wins
//          over an erase of the same key, whatever the order they came in) and rewritten
//          into fresh pages, consecutive reached pages as one run; untouched data pages
//          are kept by id
//       3. the old reached pages and all old index and directory pages are released
//          (CowSpace::release: free once the commit is durable); new index and directory
//          pages name the new page list; ref (entry count by difference) goes into the
//          commit record, so the one MANIFEST publish covers tree and snapshot
//
// Invariants: the new table = the old table with the changes applied, keys ascending;
// nothing of the committed snapshot is overwritten (fresh pages only); on any error the
// caller aborts the commit (CommitFrame::fail) and the previous snapshot stays current.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "engine/persist/page_writer.h"
#include "engine/persist/snapshot/format.h"
#include "io/status.h"

namespace st::persist {

struct DbFiles;

class SnapshotDelta {
 public:
  void put(std::span<const uint8_t> key, std::span<const uint8_t> value);
  void erase(std::span<const uint8_t> key);
  // `prefix` itself and every key that starts with it.
  void erase_prefix(std::span<const uint8_t> prefix);
  bool empty() const { return puts_.empty() && erases_.empty() && prefixes_.empty(); }
  // Sorts the erased keys (before change_of; update_snapshot calls it).
  void seal();

  using Key = std::vector<uint8_t>;
  struct KeyLess {
    bool operator()(const Key& a, const Key& b) const { return compare_snapshot_keys(a, b) < 0; }
  };
  // What the key is after the commit: its new value, nullopt = erased, or no change
  // (returned false).
  bool change_of(std::span<const uint8_t> key, std::optional<std::span<const uint8_t>>* out) const;
  const std::map<Key, Key, KeyLess>& puts() const { return puts_; }
  const std::vector<Key>& erases() const { return erases_; }
  const std::vector<Key>& prefixes() const { return prefixes_; }

 private:
  std::map<Key, Key, KeyLess> puts_;
  std::vector<Key> erases_;    // sorted, unique when used (update_snapshot sorts)
  std::vector<Key> prefixes_;
};

struct SnapshotUpdateStats {
  uint64_t pages_read = 0, pages_written = 0, pages_released = 0;
  int64_t entries_delta = 0;
};

// Applies `delta` to the snapshot of the commit `files` holds (files.commit.snapshot),
// writing through `w` (the commit's writer) and releasing the replaced pages in the
// arena's CowSpace. *out: the new snapshot's ref.
io::Status update_snapshot(DbFiles& files, PageWriter& w, SnapshotDelta& delta, SnapshotRef* out,
                           SnapshotUpdateStats* stats = nullptr);

}  // namespace st::persist
