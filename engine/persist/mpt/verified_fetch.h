// mpt/verified_fetch: the one verified node fetch of the MPT on disk, for every reader of a
// stored node: the batched lookup and its proofs (lookup.cpp, prove.cpp), verify
// (verify.cpp) and the block commit's resolve rounds (block_tries_read.cpp).
//
//   fetch   arena: a level-by-level reader's round of records in one submission
//           (fetch_records); a streamed lookup's pages come through the page reader as
//           lookup_walk.h schedules them. RocksDB: a round's path keys in one MultiGet (the
//           reader's store call: the lookup's rounds, verify's chunk, the commit's batch)
//   check   keccak256(body) == the hash the parent holds (the root: the manifest's), run as
//           keccak256_batch calls (first_mismatch) over every node queued (NodeHashChecks:
//           a lookup's) or of a round (check_round: verify's, the commit's resolve's)
//   decode  strictly (node.h: hardened RLP, canonical hex-prefix, paths <= 64 nibbles;
//           decode_fetched), and an arena record must agree with its node: kind, one child
//           per hashed reference, an account leaf's storage child (check_record)
//
// Every failure is one line naming the node (Origin::name): "<who>: record R of page P:
// what" in the arena, "<who>: node at path key K: what" in RocksDB, who = "mpt" (lookups,
// proofs), "mpt verify" or "mpt commit"; a hash that differs is always "...: hash does not
// match its parent's reference" (hash_mismatch).
//
// Invariant: no decoded node is used for an answer, a commit or a proof before its hash
// matched what its parent holds, or the walk fails naming the node. Level-by-level readers
// (verify, the commit's resolve) hash a whole round before they decode any of it
// (check_round). A streamed lookup queues each record's check as it reaches the record and
// runs the queue in batches (lookup_walk.h): until then the record can at worst steer a key
// astray (to more reads, bounded by its 64 nibbles), and no answer is returned before every
// queued check passed. Each (arena record, expected hash) pair is hashed at most once per
// walk.
#pragma once

#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/persist/mpt/node.h"
#include "engine/persist/page_reader.h"
#include "engine/persist/record_page.h"
#include "io/status.h"
#include "kernels/keccak256.h"
#include "kernels/support/hash32.h"

namespace st::persist::mpt_read {

// "record I of page P", for errors.
std::string loc_name(Locator l);

// Where a node came from, for error messages and record checks.
struct Origin {
  const RecordView* rec = nullptr;  // arena record (nullptr: RocksDB value or embedded node)
  Locator loc = kNoLocator;
  const std::string* path_key = nullptr;  // RocksDB
  std::string name() const {
    if (loc != kNoLocator) return loc_name(loc);
    if (path_key) return "node at path key " + path_key_hex(*path_key);
    return "node";
  }
};

// "<who>: <node>: <what>" (Errc::corrupt_page).
io::Status node_error(std::string_view who, const Origin& o, const std::string& what);
// The node's hash differs from its parent's reference.
io::Status hash_mismatch(std::string_view who, const Origin& o);

// Strict decode of a fetched node's bytes (a record body, a RocksDB value, or an embedded
// node inside one); an error names the node.
io::Status decode_fetched(std::string_view who, const Origin& o, std::span<const uint8_t> body, mpt::DecodedNode* out);
// The arena record agrees with its decoded node (node.h: check_mpt_record).
io::Status check_record(std::string_view who, const Origin& o, const RecordView& rv, const mpt::DecodedNode& n,
                        bool storage_trie, bool account_has_storage);

// Arena: the records at `locs` (one submission for the pages not cached), their views in
// *out (valid while the reader keeps its cache).
io::Status fetch_records(PageReader& reader, std::span<const Locator> locs, std::vector<RecordView>* out);

// The hash check every reader runs: keccak256_batch over the n messages (msgs, lens) into
// digests (32 x n), then the position of the first whose digest differs from expect(i), or -1.
template <class Expect>
long first_mismatch(const std::vector<const uint8_t*>& msgs, const std::vector<size_t>& lens,
                    std::vector<uint8_t>& digests, const Expect& expect) {
  const size_t n = msgs.size();
  digests.resize(32 * n);
  if (n) st::kernels::keccak256_batch(msgs.data(), lens.data(), digests.data(), n);
  for (size_t i = 0; i < n; ++i)
    if (std::memcmp(digests.data() + 32 * i, expect(i).data(), 32) != 0) return long(i);
  return -1;
}

// A level-by-level round: the n bodies body(i) must hash to expect(i); all are hashed (one
// keccak256 batch) before the caller decodes any. msgs, lens, digests: the caller's scratch,
// kept across rounds (a round allocates nothing once they are large enough). -1 when all
// match, else the first i that does not.
template <class Body, class Expect>
long check_round(size_t n, const Body& body, const Expect& expect, std::vector<const uint8_t*>& msgs,
                 std::vector<size_t>& lens, std::vector<uint8_t>& digests) {
  msgs.resize(n);
  lens.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const std::span<const uint8_t> b = body(i);
    msgs[i] = b.data();
    lens[i] = b.size();
  }
  return first_mismatch(msgs, lens, digests, expect);
}

// A lookup's queued hash checks of fetched nodes, run as keccak256 batches. A lookup leases
// a queue from one pool (memory/scratch_pool.h), reset at its start and cleared at its end:
// a block's reader is new each block, and a queue of its own (arrays and the seen-map's
// nodes, ~10 MB at 24k keys) was allocated and faulted in afresh every block, and a queue
// per thread once for every thread that ran a block's prefetch.
struct NodeHashChecks {
  std::vector<const uint8_t*> msgs;
  std::vector<size_t> lens;
  std::vector<Hash32> expect;
  std::vector<Locator> locs;   // arena records (kNoLocator: not deduplicated)
  std::vector<uint32_t> tags;  // the caller's index of the node (a round's position or key)
  std::vector<uint8_t> out;
  // Arena records already checked (or queued) in this walk with the hash they must have:
  // the paths of a batch share their upper nodes, each (record, hash) is hashed once.
  std::unordered_map<Locator, Hash32> seen;
  void add(std::span<const uint8_t> body, const Hash32& want, Locator loc, uint32_t tag) {
    if (loc != kNoLocator) {
      auto [it, fresh] = seen.try_emplace(loc, want);
      if (!fresh && it->second == want) return;
      it->second = want;
    }
    msgs.push_back(body.data());
    lens.push_back(body.size());
    expect.push_back(want);
    locs.push_back(loc);
    tags.push_back(tag);
  }
  size_t pending() const { return msgs.size(); }
  // Hashes every queued node: the position of the first whose hash differs (add order
  // since the last clear), or -1. The queue stays until clear() (the caller names the node).
  long run() {
    return first_mismatch(msgs, lens, out, [&](size_t i) -> const Hash32& { return expect[i]; });
  }
  void reset() {  // a new walk (the pages may be re-read)
    clear();
    seen.clear();
  }
  void clear() {
    msgs.clear();
    lens.clear();
    expect.clear();
    locs.clear();
    tags.clear();
  }
};

}  // namespace st::persist::mpt_read
