// bintrie/verify.cpp: BintrieTreeDb::verify, every node re-read and re-hashed.
//
// Verify: depth-first over the nodes, in chunks of up to kVerifyChunk taken from a stack
// (one load / MultiGet per chunk); in the arena a node's children whose pages are already
// cached are checked in the same chunk (a page holds a group and part of its subtree: it is
// read once, although the cache is dropped whenever it holds more than
// DbOptions::verify_cache_pages). Each node carries the hash its parent committed to: a
// stem's hash is recomputed from its values, a group's from its entries, and compared; a
// stem's bits must continue the path of its position. Nodes are read and decoded through
// the verified fetch (bintrie/verified_fetch.h: fetch_record_sync / decode_keyed) and
// hash-checked in batches of up to kVerifyBatch (BlobHashChecks, bintrie/blob_checks.h:
// the hasher's multi-lane kernels over every node of the batch at once; a group's check
// reads the blob through the view its strict decode made).
//
// Invariants: no node queues its children or hands out its leaves before its hash matched;
// a failure is one line naming the node (the verified fetch's words), the first in the
// order the batch's nodes were taken, each node's own checks in the order place, hash,
// entries; the counts do not depend on the batching.
#include <algorithm>
#include <cstring>

#include "engine/persist/bintrie/tree_db.h"

namespace st::persist::bintrie_read {
namespace {

constexpr size_t kVerifyChunk = 4096;
constexpr size_t kVerifyBatch = 1024;  // nodes hashed together: enough for every lane, little memory
static_assert(sizeof(Hash32) == 32, "a stem's values are contiguous 32-byte hashes");

}  // namespace

// "<who>page P record R" (arena) or "<who>node at path key K" (RocksDB) for batch[i].
std::string BintrieTreeDb::verify_name(const VerifyWalk& w, size_t i) const {
  return w.arena ? record_name(kReader, w.batch[i].loc) : key_name(kReader, w.keys[w.batch_key[i]]);
}

// The checks of batch[i] that need no hash: a stem continues its path; a group is not
// where its parent's entry ends in a stem, nor at depth 248 or below.
io::Status BintrieTreeDb::verify_place(const VerifyWalk& w, size_t i) const {
  const VerifyItem& it = w.batch[i];
  const Node& n = w.nodes[i];
  if (!n.is_group) {
    if (bd::same_prefix(n.stem.stem.data(), it.path.data(), it.depth)) return {};
    return {io::Errc::corrupt_page, verify_name(w, i) + ": stem " + bd::hex(n.stem.stem) + " does not continue its path"};
  }
  if (it.stem_only)
    return {io::Errc::corrupt_page, verify_name(w, i) + ": a group where its parent's entry ends in a stem"};
  if (it.depth >= kMaxDepth)
    return {io::Errc::corrupt_page, verify_name(w, i) + ": group at depth " + std::to_string(it.depth)};
  return {};
}

// Queues batch[i]'s hash check (tag i): a stem through a view of its decoded values, a
// group through the view its strict decode made (Node::group_view: into the loaded page or
// the chunk's RocksDB value, both kept until the checks run).
void BintrieTreeDb::queue_hash_check(VerifyWalk& w, size_t i) {
  const Node& n = w.nodes[i];
  const uint8_t* expect = w.batch[i].expect.data();
  if (n.is_group) {
    w.checks.add_group(n.group_view, expect, i);
    return;
  }
  w.checks.add_stem(bintrie::stem_blob_view(n.stem), expect, i);
}

// A checked stem (batch[i]): counts its leaves and (an account's header stem) its account
// fields; hands its leaves to the leaf sink.
void BintrieTreeDb::verify_stem(VerifyWalk& w, size_t i) {
  const bintrie::StemBlob& stem = w.nodes[i].stem;
  w.rep.leaves += bd::stem_value_count(stem);
  if (leaf_sink_) {
    uint8_t key[32];
    std::memcpy(key, stem.stem.data(), 31);
    for (unsigned s = 0, j = 0; s < 256; ++s) {
      if (!((stem.bitmap[s / 8] >> (7 - s % 8)) & 1)) continue;
      key[31] = uint8_t(s);
      leaf_sink_({key, 32}, stem.values[j++]);
    }
  }
  if (const auto chunks = bd::account_code_chunks(stem)) {
    ++w.rep.accounts;
    w.account_leaves += 2 + *chunks;  // basic data, code hash, every code chunk
  }
}

// A checked group (batch[i]): queues its children, in the arena those whose page is cached
// to w.cached, the others to w.todo.
io::Status BintrieTreeDb::verify_group(VerifyWalk& w, size_t i) {
  const VerifyItem& it = w.batch[i];
  const Node& n = w.nodes[i];
  // Pushed in reverse, so the stacks pop the entries in order.
  for (size_t e = n.group.entries.size(); e-- > 0;) {
    const auto& ent = n.group.entries[e];
    if (it.depth + ent.depth > kMaxDepth)
      return {io::Errc::corrupt_page, verify_name(w, i) + ": entry below depth " + std::to_string(kMaxDepth)};
    VerifyItem ch;
    ch.loc = w.arena ? n.children[e] : kNoLocator;
    ch.expect = ent.hash;
    ch.path = it.path;
    ch.depth = uint8_t(it.depth + ent.depth);
    ch.stem_only = ent.depth < g_;
    for (unsigned b = 0; b < ent.depth; ++b) {
      const unsigned d = it.depth + b;
      const uint8_t mask = uint8_t(0x80 >> (d % 8));
      if ((ent.pos >> (g_ - 1 - b)) & 1) ch.path[d / 8] |= mask;
      else ch.path[d / 8] &= uint8_t(~mask);
    }
    (w.arena && reader_->loaded(locator_page(ch.loc)) ? w.cached : w.todo).push_back(ch);
  }
  return {};
}

// Checks batch[0..n) (decoded into nodes[0..n)): their places, then every hash in one run
// of the batch kernels, then, node by node in batch order, the hash's verdict and the
// node's use (leaves counted, children queued). after: the failure of the node that would
// have come next (its read or decode), returned once the batch before it passed.
io::Status BintrieTreeDb::verify_batch(VerifyWalk& w, size_t n, io::Status after) {
  size_t queued = 0;
  for (; queued < n; ++queued) {
    if (io::Status st = verify_place(w, queued); !st) {
      after = st;
      break;
    }
    queue_hash_check(w, queued);
  }
  const long bad = w.checks.run();
  const size_t bad_node = bad < 0 ? n : size_t(w.checks.tag(size_t(bad)));
  w.done_nodes += queued;
  for (size_t i = 0; i < queued; ++i) {
    if (i == bad_node)
      return {io::Errc::corrupt_page,
              verify_name(w, i) + ": " + hash_mismatch_what(w.batch[i].depth == 0, w.nodes[i].is_group)};
    if (!w.nodes[i].is_group) verify_stem(w, i);
    else if (io::Status st = verify_group(w, i); !st) return st;
  }
  return after;
}

// Arena: the cached nodes, kVerifyBatch at a time from the top of the stack, read and
// decoded from their cached pages, then checked together; their children whose pages are
// cached join the stack.
io::Status BintrieTreeDb::verify_cached_arena(VerifyWalk& w) {
  while (!w.cached.empty()) {
    const size_t n = std::min(w.cached.size(), kVerifyBatch);
    w.batch.assign(w.cached.rbegin(), w.cached.rbegin() + ptrdiff_t(n));  // the top first
    w.cached.resize(w.cached.size() - n);
    if (w.nodes.size() < n) w.nodes.resize(n);
    io::Status after;
    size_t read = 0;
    for (; read < n; ++read) {
      after = fetch_record_sync(*reader_, g_, kReader, w.batch[read].loc, &w.nodes[read], &w.records);
      if (!after) break;
    }
    if (io::Status st = verify_batch(w, read, after); !st) return st;
  }
  return {};
}

// Arena: loads the chunk's pages in one submission, then checks its nodes and, in the same
// chunk, their descendants whose pages are cached by then. The cache is dropped whenever it
// holds more than verify_cache_pages.
io::Status BintrieTreeDb::verify_chunk_arena(VerifyWalk& w) {
  if (reader_->cached_pages() > verify_cache_pages_) reader_->clear();
  w.locs.clear();
  for (const VerifyItem& it : w.chunk) w.locs.push_back(it.loc);
  if (io::Status st = reader_->load(w.locs); !st) return st;
  w.cached.assign(w.chunk.rbegin(), w.chunk.rend());  // chunk[0] on top
  return verify_cached_arena(w);
}

// RocksDB: one MultiGet of the chunk's blob keys, then its blobs decoded and checked
// kVerifyBatch at a time.
io::Status BintrieTreeDb::verify_chunk_rocks(VerifyWalk& w) {
  w.keys.clear();
  for (const VerifyItem& it : w.chunk) {
    const std::vector<uint8_t> k = bintrie::blob_key(it.path.data(), it.depth);
    w.keys.emplace_back(reinterpret_cast<const char*>(k.data()), k.size());
  }
  w.views.assign(w.keys.begin(), w.keys.end());
  if (io::Status st = files_.rocks->multi_get(w.views, &w.values, &w.found); !st) return st;
  for (size_t at = 0; at < w.chunk.size();) {
    w.batch.clear();
    w.batch_key.clear();
    io::Status after;
    for (; at < w.chunk.size() && w.batch.size() < kVerifyBatch; ++at) {
      const std::string where = key_name(kReader, w.keys[at]);
      if (!w.found[at]) {
        if (w.chunk[at].depth == 0 && empty_tree()) continue;
        after = {io::Errc::corrupt_page, where + ": missing"};
        break;
      }
      w.rocks_bytes += w.values[at].size();
      ++w.records;
      if (w.nodes.size() <= w.batch.size()) w.nodes.resize(w.batch.size() + 1);
      const std::span<const uint8_t> blob{reinterpret_cast<const uint8_t*>(w.values[at].data()), w.values[at].size()};
      after = decode_keyed(blob, g_, where, &w.nodes[w.batch.size()]);
      if (!after) break;
      w.batch.push_back(w.chunk[at]);
      w.batch_key.push_back(uint32_t(at));
    }
    if (io::Status st = verify_batch(w, w.batch.size(), after); !st) return st;
  }
  return {};
}

// The report's totals once every node is checked: pages and bytes read, the slots (the
// leaves less the accounts' own), which cannot be fewer than none.
io::Status BintrieTreeDb::finish_verify(VerifyWalk& w, const ReadCounters& before) {
  // A lone stem at the root: its hash is the root (checked as the root item's expect).
  if (w.arena) {
    const ReadCounters& after = reader_->counters();
    w.rep.pages = after.page_reads - before.page_reads;
    w.rep.bytes = after.bytes_read - before.bytes_read;
    reader_->clear();
  } else {
    w.rep.bytes = w.rocks_bytes;
  }
  if (w.account_leaves > w.rep.leaves)
    return {io::Errc::corrupt_page, "binary trie: the account headers' fields and code chunks (" +
                                        std::to_string(w.account_leaves) + ") outnumber the tree's leaves (" +
                                        std::to_string(w.rep.leaves) + ")"};
  w.rep.slots = w.rep.leaves - w.account_leaves;
  w.rep.nodes = w.records;
  w.rep.root = files_.manifest.root_hash;
  w.rep.ok = true;
  return {};
}

io::Status BintrieTreeDb::verify(VerifyReport* report, const ProgressFn& progress) {
  VerifyWalk w(h_, g_);
  auto fail = [&](const io::Status& st) {
    w.rep.ok = false;
    w.rep.error = st.message();
    if (report) *report = w.rep;
    return st;
  };
  w.arena = files_.store == StoreKind::arena;
  if (w.arena && root_loc() == kNoLocator) {
    if (!empty_tree()) return fail({io::Errc::corrupt_page, "binary trie: no root record but the manifest names a non-empty root"});
    w.rep.ok = true;
    if (report) *report = w.rep;
    return {};
  }
  w.todo.push_back({root_loc(), files_.manifest.root_hash, {}, 0, 0});
  const ReadCounters before = w.arena ? reader_->counters() : ReadCounters{};
  const uint64_t total = files_.manifest.node_count;
  while (!w.todo.empty()) {
    const size_t n = std::min(w.todo.size(), kVerifyChunk);
    w.chunk.assign(w.todo.end() - ptrdiff_t(n), w.todo.end());
    w.todo.resize(w.todo.size() - n);
    if (io::Status st = w.arena ? verify_chunk_arena(w) : verify_chunk_rocks(w); !st) return fail(st);
    if (progress) progress(w.done_nodes, std::max(total, w.done_nodes));
  }
  if (io::Status st = finish_verify(w, before); !st) return fail(st);
  if (report) *report = w.rep;
  return {};
}

}  // namespace st::persist::bintrie_read
