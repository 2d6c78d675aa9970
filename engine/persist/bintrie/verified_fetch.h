// bintrie/verified_fetch: the one verified node fetch of the binary trie on disk, for every
// reader of a stored blob: the batched lookup (lookup.cpp), verify (verify.cpp), proofs
// (prove.cpp) and the block commit's resolve of its dirty paths (block_tree_read.cpp).
//
//   fetch   arena: a record by locator from a loaded page, a chunked stem reassembled from
//           its pieces (fetch_record; fetch_record_sync loads what it needs); a streamed
//           lookup's pages come through the page reader as lookup_walk.h schedules them.
//           RocksDB: a blob by path key (the reader's MultiGet), decode_keyed
//   check   the blob hashes to what its parent's entry records (the root: the manifest's
//           root hash): queued and hashed in batches through the hasher's batch kernels
//           (blob_checks.h: lookups and verify, a level at a time; the commit's resolve hashes
//           in the tree it resolves into, MutableTree's resolve), or
//           one path node at a time on hashes the caller computed (check_hash: proofs); the
//           mismatch named alike (hash_mismatch_what)
//   decode  strictly (group_blob.h's decoders, or their in-place views for lookups; a
//           decoded group keeps the view its check made, Node::group_view); a record's kind
//           and child count must match its blob (the *_record_error checks)
//
// Every failure is one line naming the node: "<who>page P record R: what" in the arena,
// "<who>node at path key K: what" in RocksDB, who = kReader ("binary trie ": lookups,
// verify, proofs) or kCommit ("binary trie commit: ").
//
// Invariant: no decoded node is used for an answer, a commit or a proof before its hash
// matched what its parent holds, or the walk fails naming the node. verify, proofs and the
// commit check each node before they use it; a streamed lookup may steer by a node whose
// check is still queued (to more reads at worst, bounded by depth 248) but returns no answer
// before every queued check passed.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "engine/bintrie/group_blob.h"
#include "engine/persist/bintrie/disk.h"
#include "engine/persist/page_reader.h"
#include "engine/persist/record_page.h"
#include "io/status.h"

namespace st::persist::bintrie_read {

using bintrie::Hash32;
namespace bd = bintrie_disk;

inline constexpr std::string_view kReader = "binary trie ";         // lookups, verify, proofs
inline constexpr std::string_view kCommit = "binary trie commit: ";  // the block commit

// "<who>page P record R" and "<who>node at path key K", for errors.
std::string record_name(std::string_view who, Locator l);
std::string key_name(std::string_view who, std::string_view key);
// "<who>page P record R: what" (Errc::corrupt_page).
io::Status record_error(std::string_view who, Locator l, const std::string& what);

// A decoded node: a group (with its children's locators in the arena) or a stem.
struct Node {
  bool is_group = false;
  bintrie::GroupBlob group;
  // group: the strict check's view of the blob's bytes, valid only while those bytes are (the
  // reader's loaded page, the caller's RocksDB value): verify and the RocksDB lookups queue
  // their hash check from it (BlobHashChecks::add_group), and the commit's resolve hands it
  // to MutableTree's resolve, instead of parsing the blob again.
  bintrie::GroupBlobView group_view;
  bintrie::StemBlob stem;
  std::vector<Locator> children;  // arena group: one per entry
  std::vector<Locator> pieces;    // arena chunked stem: its pieces' records
  uint64_t body_bytes = 0;        // the blob's bytes
};

// want: 0 = either (by the version byte), 1 = a stem blob, 2 = a group blob.
// Errors name the node through where() (built only on failure).
template <class Where>
io::Status decode_blob(std::span<const uint8_t> blob, unsigned g, const Where& where, Node* out, int want = 0) {
  out->body_bytes = blob.size();
  if (blob.empty()) return {io::Errc::corrupt_page, where() + ": empty blob"};
  if (want == 2 || (want == 0 && blob[0] == bintrie::kGroupBlobVersion)) {
    // decode_group_blob's two steps, the view kept (one parse of the bytes)
    if (std::string e = bintrie::check_group_blob(blob, g, &out->group_view); !e.empty())
      return {io::Errc::corrupt_page, where() + ": " + e};
    out->is_group = true;
    out->group = bintrie::group_blob_from_view(out->group_view);
    return {};
  }
  auto r = bintrie::decode_stem_blob(blob);
  if (auto* e = std::get_if<std::string>(&r)) return {io::Errc::corrupt_page, where() + ": " + *e};
  out->is_group = false;
  out->stem = std::move(std::get<bintrie::StemBlob>(r));
  return {};
}

// RocksDB: the blob stored at a path key (where: its name), a group or a stem by its version
// byte (any other: an error).
io::Status decode_keyed(std::span<const uint8_t> blob, unsigned g, const std::string& where, Node* out);

// What is wrong with a record for its blob ("" when nothing): a stem record has no
// children, a group record one per entry, a chunked stem pieces and no body, a piece
// (the p-th, at l) no children.
std::string stem_record_error(const RecordView& rec);
std::string group_record_error(const RecordView& rec, size_t entries);
std::string chunked_record_error(const RecordView& rec);
std::string piece_record_error(const RecordView& piece, uint32_t p, Locator l);

// Arena: the node at l (its page loaded), decoded strictly and checked against its record.
// *complete = false: a chunked stem whose pieces are not all loaded (they go to *need).
io::Status fetch_record(const PageReader& reader, unsigned g, std::string_view who, Locator l, Node* out,
                        bool* complete, std::vector<Locator>* need);
// fetch_record, loading whatever it needs; *records counts the records read (the node's and
// its pieces).
io::Status fetch_record_sync(PageReader& reader, unsigned g, std::string_view who, Locator l, Node* out,
                             uint64_t* records);

// The hash check's words: "root hash does not match the manifest" (root), "group hash ..."
// / "stem hash does not match its parent's entry".
std::string hash_mismatch_what(bool root, bool group);
// got == expect, else "<where>: <hash_mismatch_what>" (Errc::corrupt_page).
io::Status check_hash(const Hash32& got, const Hash32& expect, const std::string& where, bool root, bool group);

}  // namespace st::persist::bintrie_read
