// snapshot/verify: the tree's leaves against the snapshot's entries (snapshot/verify.h).
#include "engine/persist/snapshot/verify.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "engine/persist/bintrie/disk.h"
#include "engine/persist/snapshot/reader.h"

namespace st::persist {

namespace {
struct Leaf {
  std::vector<uint8_t> bytes;  // key then value
  uint8_t key_len = 0;
  std::span<const uint8_t> key() const { return {bytes.data(), key_len}; }
  std::span<const uint8_t> value() const { return {bytes.data() + key_len, bytes.size() - key_len}; }
};
std::string hex(std::span<const uint8_t> b) { return "0x" + bintrie_disk::hex(b); }
}  // namespace

io::Status verify_with_snapshot(TreeDb& db, VerifyReport* tree, SnapshotVerifyReport* snap, const ProgressFn& progress) {
  *snap = SnapshotVerifyReport{};
  std::unique_ptr<SnapshotTable> reader;
  io::Status open = db.open_snapshot_table(&reader);
  if (!open.ok() && open.code() != io::Errc::not_found) return open;
  snap->present = open.ok();
  if (!snap->present) return db.verify(tree, progress);

  std::vector<Leaf> leaves;
  db.set_verify_leaf_sink([&](std::span<const uint8_t> k, std::span<const uint8_t> v) {
    Leaf l;
    l.key_len = uint8_t(k.size());
    l.bytes.assign(k.begin(), k.end());
    l.bytes.insert(l.bytes.end(), v.begin(), v.end());
    leaves.push_back(std::move(l));
  });
  io::Status s = db.verify(tree, progress);
  db.set_verify_leaf_sink({});
  if (!s.ok()) return s;
  if (tree && !tree->ok) return s;
  std::sort(leaves.begin(), leaves.end(),
            [](const Leaf& a, const Leaf& b) { return compare_snapshot_keys(a.key(), b.key()) < 0; });

  snap->data_pages = reader->data_pages();
  snap->index_pages = reader->index_pages();
  size_t at = 0;
  std::string diff;
  s = reader->scan([&](std::span<const uint8_t> k, std::span<const uint8_t> v) {
    const int c = at < leaves.size() ? compare_snapshot_keys(leaves[at].key(), k) : 1;
    if (c < 0) {
      diff = "snapshot: the tree's leaf " + hex(leaves[at].key()) + " is missing from the snapshot";
      return false;
    }
    if (c > 0) {
      diff = "snapshot: entry " + hex(k) + " is not in the tree";
      return false;
    }
    const auto tv = leaves[at].value();
    if (tv.size() != v.size() || !std::equal(tv.begin(), tv.end(), v.begin())) {
      diff = "snapshot: entry " + hex(k) + " holds " + hex(v) + ", the tree " + hex(tv);
      return false;
    }
    ++at;
    ++snap->entries;
    return true;
  });
  if (!s.ok()) {
    snap->error = s.message();
    return s;
  }
  if (diff.empty() && at < leaves.size())
    diff = "snapshot: the tree's leaf " + hex(leaves[at].key()) + " is missing from the snapshot";
  if (!diff.empty()) {
    snap->error = diff;
    return {io::Errc::corrupt_page, diff};
  }
  snap->ok = true;
  return {};
}

}  // namespace st::persist
