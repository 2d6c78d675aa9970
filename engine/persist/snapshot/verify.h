// snapshot/verify: verify of a database with a flat snapshot. The tree's verify runs as
// always (every node re-hashed up to the root) and hands over every leaf it finds (the
// tree's key and value bytes); the leaves are sorted and compared in one merge with the
// snapshot's ordered scan:
//   a snapshot entry whose value differs from the tree's leaf    -> error naming the key
//   a snapshot entry the tree does not hold                      -> error naming the key
//   a tree leaf the snapshot lacks                               -> error naming the key
// so the snapshot equals the tree's leaf set exactly. Memory: the tree's leaves (key and
// value bytes) while they are compared.
#pragma once

#include <cstdint>
#include <string>

#include "engine/persist/tree_db.h"

namespace st::persist {

struct SnapshotVerifyReport {
  bool present = false;   // the database has a snapshot
  bool ok = false;        // present and equal to the tree
  std::string error;      // the first difference (one line) when !ok
  uint64_t entries = 0;   // entries compared
  uint64_t data_pages = 0, index_pages = 0;
};

// Runs db.verify (into *tree) and, when the database has a snapshot, the comparison. The
// status is the first failure: the tree's, else the snapshot's (Errc::corrupt_page).
io::Status verify_with_snapshot(TreeDb& db, VerifyReport* tree, SnapshotVerifyReport* snap,
                                const ProgressFn& progress = {});

}  // namespace st::persist
