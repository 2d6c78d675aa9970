// bintrie/blob_checks: the batched hash checks of binary-trie lookups, verify() and the
// block commit. Every group blob and stem blob they use must hash to what its parent
// records for it (the root: the manifest's root hash); a page whose contents changed under
// a re-sealed checksum then fails the read instead of answering from it.
//
// Checks are queued (views into bytes that stay valid until run() or clear()) and hashed
// in batches through the hasher's batch kernels, all queued blobs together:
//   group: the blob's g-level subtree over its entries, reduced level by level (one
//          hash64_batch per level over every queued group; two zero children give zero,
//          unhashed, as reconstruct_group's zero rule) up to its root
//   stem:  the leaves H(value) (one hash32_batch over every queued stem's values), the
//          sparse 8-level stem subtrees (stem_subtree_roots), the stem nodes
//          H(stem || 0x00 || R) (one hash64_batch)
//
// The reductions' arrays are leased for each run from one pool (memory/scratch_pool.h),
// kept across runs, checkers and threads (a block's reader is a new checker, its batches
// reach tens of MB at 10M slots, and arrays grown afresh for every block, or for every
// thread that ran one, were copied as they grew and faulted in each time).
//
// Invariants: a group's result equals reconstruct_group(...)[0] and a stem's equals
// stem_blob_hash of the same blob, bit for bit; run() reports the first mismatch in the
// order the checks were added; views must be of blobs the strict checks accepted
// (check_group_blob / check_stem_blob at the checker's group depth, or stem_blob_view of a
// stem blob its strict decoder made).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/bintrie/group_blob.h"
#include "engine/bintrie/stem_subtree.h"

namespace st::persist {

struct BlobCheckScratch;  // run()'s arrays (blob_checks.cpp)

class BlobHashChecks {
 public:
  BlobHashChecks(const bintrie::Hasher& h, unsigned g) : h_(h), g_(g) {}

  // Queues a check: the blob must hash to expect (32 bytes, copied). tag: the caller's
  // name for the node (a locator, a key index), returned with a mismatch.
  void add_group(const bintrie::GroupBlobView& v, const uint8_t* expect32, uint64_t tag);
  void add_stem(const bintrie::StemBlobView& v, const uint8_t* expect32, uint64_t tag);

  size_t pending() const { return checks_.size(); }
  // Runs every queued check and clears the queue: -1 when all match, else the position
  // (in add order since the last run / clear) of the first mismatch; tag(i) names it.
  long run();
  uint64_t tag(size_t i) const { return last_tags_[i]; }
  bool is_group(size_t i) const { return last_is_group_[i]; }
  void clear();

  // Hashes computed by run() so far (64-byte messages and 32-byte leaves).
  uint64_t hashes() const { return hashes_; }

 private:
  struct Check {
    bool group;
    uint32_t index;  // into groups_ / stems_
    bintrie::Hash32 expect;
    uint64_t tag;
  };
  void hash_groups(BlobCheckScratch& x, std::vector<bintrie::Hash32>* roots);
  void hash_stems(BlobCheckScratch& x, std::vector<bintrie::Hash32>* out);

  bintrie::Hasher h_;
  unsigned g_;
  std::vector<Check> checks_;
  std::vector<bintrie::GroupBlobView> groups_;
  std::vector<bintrie::StemBlobView> stems_;
  std::vector<uint64_t> last_tags_;
  std::vector<uint8_t> last_is_group_;
  uint64_t hashes_ = 0;
};

}  // namespace st::persist
