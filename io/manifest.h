// manifest: the small record that names a committed database state, and its atomic
// replacement. A commit is durable once its pages are synced and the manifest naming its
// root has been published; publishing is all-or-nothing (write temp, fsync, rename, fsync
// the directory), so after a crash a reader sees the previous manifest or the new one.
//
// Encoding (all little-endian, 144 bytes):
//
//   0       4       8    9    10      12      16      20      24              32
//   +-------+-------+----+----+-------+-------+-------+-------+---------------+
//   | magic | fmt v | tk | hk | rsvd  | GD    | page  | rsvd  | commit_seq    |
//   +-------+-------+----+----+-------+-------+-------+-------+---------------+
//   32                              64              72              80              88          96
//   +-------------------------------+---------------+---------------+---------------+-----------+
//   | root hash (32 bytes)          | root_page     | high_water    | free_list_pg  | free_lst_n|
//   +-------------------------------+---------------+---------------+---------------+-----------+
//   96            104           112           120           128                   140     144
//   +-------------+-------------+-------------+-------------+---------------------+-------+
//   | node_count  | pages_used  | key_count   | payload_byt | reserved (zero)     | crc32c|
//   +-------------+-------------+-------------+-------------+---------------------+-------+
//   magic = "STMF"; tk = TreeKind, hk = HashKind; crc32c covers bytes [0, 140).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "io/status.h"
#include "kernels/support/tree_kinds.h"

namespace st::io {

// The database format version: MANIFEST, commit record and page contents together. A
// database of another version is refused when opened (decode_manifest), never half-read.
//   1  record pages with an 8-bit child count (a full GD-8 binary-trie group split over two
//      records)
//   2  record pages with a 16-bit child count (engine/persist/record_page.h): a full GD-8
//      group is one record
inline constexpr uint32_t kManifestFormatVersion = 2;
inline constexpr uint64_t kNoPage = ~uint64_t(0);
inline constexpr size_t kManifestBytes = 144;

// The tree and hash kinds (tk, hk) are the spine's (kernels/support/tree_kinds.h).
using st::HashKind;
using st::TreeKind;
using st::hash_kind_name;
using st::tree_kind_name;

// The parameters a database is built with; opening with other ones is an error.
struct StoreParams {
  uint32_t format_version = kManifestFormatVersion;
  TreeKind tree_kind = TreeKind::mpt;
  HashKind hash_kind = HashKind::keccak256;
  uint32_t group_depth = 0;  // bintrie group depth (0 for trees without one)
  uint32_t page_size = 4096;
};

struct Manifest {
  StoreParams params;
  uint64_t commit_seq = 0;  // increases by one per commit
  std::array<uint8_t, 32> root_hash{};
  uint64_t root_page = kNoPage;        // where the root node lives (engine-defined)
  uint64_t page_high_water = 0;        // arena pages [0, high_water) have been allocated
  uint64_t free_list_page = kNoPage;   // first page of the serialized free list
  uint64_t free_list_pages = 0;
  uint64_t node_count = 0, pages_used = 0, key_count = 0, payload_bytes = 0;
};

std::array<uint8_t, kManifestBytes> encode_manifest(const Manifest& m);
// Errors: bad length/magic/checksum (corrupt_page with "manifest" in the message), another
// format version (mismatch, naming both versions; an older one adds how to rebuild).
Status decode_manifest(const uint8_t* bytes, size_t size, Manifest* out);

// ok if `on_disk` was built with `wanted`; otherwise a one-line mismatch error naming both
// values, e.g. "group depth mismatch: database built with 8, opened with 4".
Status check_params(const StoreParams& on_disk, const StoreParams& wanted);

// Where the current manifest lives. publish() is atomic; load() returns not_found when no
// manifest was ever published.
class ManifestSlot {
 public:
  virtual ~ManifestSlot() = default;
  virtual Status publish(const Manifest& m) = 0;
  virtual Status load(Manifest* out) = 0;
  // After a failed publish(): true if the new manifest may nevertheless be the current one
  // (the rename happened, its directory fsync failed). The caller must then neither reuse
  // the commit's pages nor assume the old root: it has to reopen.
  virtual bool last_publish_outcome_unknown() const { return false; }
};

// DIR/MANIFEST, replaced via DIR/MANIFEST.tmp: write, fsync, rename, fsync DIR.
class FileManifestSlot final : public ManifestSlot {
 public:
  explicit FileManifestSlot(std::string dir) : dir_(std::move(dir)) {}
  Status publish(const Manifest& m) override;
  Status load(Manifest* out) override;
  bool last_publish_outcome_unknown() const override { return outcome_unknown_; }
  std::string path() const { return dir_ + "/MANIFEST"; }
  // Test hook: stop publish() after this step (1 temp written, 2 temp fsynced, 3 renamed)
  // without finishing, as a crash there would.
  std::optional<int> stop_after_step;

 private:
  std::string dir_;
  bool outcome_unknown_ = false;
};

// In memory, with the same crash semantics: publish() is a single durable swap, and
// fail_next_publish simulates a crash before the rename.
class MemoryManifestSlot final : public ManifestSlot {
 public:
  Status publish(const Manifest& m) override;
  Status load(Manifest* out) override;
  bool fail_next_publish = false;

 private:
  std::optional<std::array<uint8_t, kManifestBytes>> durable_;
};

}  // namespace st::io
