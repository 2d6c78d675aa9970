// subtree_packer: packs a tree into record pages bottom-up, so that a parent and its
// children share a page as often as possible (a lookup then crosses few pages: one I/O
// covers several levels).
//
// The tree writer pushes nodes in post-order: push(kind, body, k) makes a node whose
// children are the k most recently pushed nodes that no parent has taken yet (in push
// order = the child order stored in the record). Each pending subtree is a "cluster" of
// records not yet placed in a page. When a parent arrives:
//   - if parent + all its children's clusters fit one page, they merge into one cluster;
//   - otherwise the children's clusters are placed (largest first) until the rest fits:
//     a placed cluster goes into the open shared page if it fits there, else the open page
//     is sealed and a new one started, so small sibling subtrees share pages.
// finish() places what is left and returns the root locators of the pending subtrees.
//
// set_edge_sink(index) reports each cross-page child reference as it is placed (compaction's
// cross-page parents, cross_page_parents.h).
//
// push_placed(locator) adds a pending subtree that is already on disk (a record of the
// committed state that a copy-on-write commit keeps unchanged): a later push() may take it
// as a child like any other pending subtree; its record is referenced by its existing
// locator, never copied, and it takes no room in the parent's cluster.
//
// Invariants: a record's child locators always name records that are written in this
// commit or records pushed with push_placed; a cluster never exceeds one page payload; every page written is a valid record
// page (record_page.h). A node too large for an empty page is an error (bad_argument),
// reported by push(), never a truncated record.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/persist/cross_page_parents.h"
#include "engine/persist/page_writer.h"
#include "engine/persist/record_page.h"

namespace st::persist {

struct PackStats {
  uint64_t records = 0;
  uint64_t record_bytes = 0;   // bodies + record headers + locators + offsets
  uint64_t pages = 0;
  uint64_t payload_bytes = 0;  // pages x payload size
  double fill() const { return payload_bytes ? double(record_bytes) / double(payload_bytes) : 0; }
};

class SubtreePacker {
 public:
  explicit SubtreePacker(PageWriter& out);
  SubtreePacker(const SubtreePacker&) = delete;
  SubtreePacker& operator=(const SubtreePacker&) = delete;

  // child_count <= kMaxChildren and <= pending(); body non-empty or not, any bytes.
  io::Status push(uint8_t kind, std::span<const uint8_t> body, uint32_t child_count);
  // A pending subtree that is already placed at `placed` (not kNoLocator): written nowhere,
  // referenced by a later parent (or returned by finish()) as `placed`.
  void push_placed(Locator placed);
  size_t pending() const { return stack_.size(); }
  // From now on every placed record that names a child on another page is noted in `sink`
  // (child, the record's locator); nullptr: none.
  void set_edge_sink(CrossPageParents* sink) { edge_sink_ = sink; }
  // Places every pending subtree (in push order) and returns their roots' locators.
  io::Status finish(std::vector<Locator>* roots);
  const PackStats& stats() const { return stats_; }

 private:
  struct Rec {
    uint8_t kind;
    uint32_t body_begin, body_len;   // in body_bytes_
    uint32_t child_begin, child_n;   // in child_refs_
  };
  // A child reference before placement: a record of the same cluster (local index) or a
  // placed record (absolute locator).
  struct Ref {
    bool local;
    uint64_t value;
  };
  struct Cluster {
    std::vector<Rec> recs;  // post-order: the cluster root is last
    std::vector<Ref> refs;
    std::vector<uint8_t> bytes;
    uint32_t footprint = 0;  // page bytes when placed (records + offsets)
    Locator placed = kNoLocator;  // push_placed(): already on disk, no records of its own
  };

  io::Status place(Cluster& c, Locator* root);  // writes c into the open page (sealing it if needed)
  io::Status seal();                            // writes the open page
  void merge_into(Cluster& dst, Cluster& src);  // appends src's records (local refs rebased)

  PageWriter& out_;
  uint32_t payload_;
  std::vector<Cluster> stack_;
  std::vector<Cluster> spare_;  // recycled clusters (keep their capacity)
  RecordPageBuilder open_;
  uint64_t open_page_ = ~uint64_t(0);
  std::vector<uint8_t> page_buf_;
  std::vector<Locator> kid_buf_;
  PackStats stats_;
  CrossPageParents* edge_sink_ = nullptr;
};

}  // namespace st::persist
