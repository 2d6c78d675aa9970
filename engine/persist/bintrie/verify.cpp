// bintrie/verify.cpp: BintrieTreeDb::verify, every node re-read and re-hashed.
//
// Verify: depth-first over the nodes, in chunks of up to kVerifyChunk taken from a stack
// (one load / MultiGet per chunk); in the arena a node's children whose pages are already
// cached are checked at once, before the next chunk (a page holds a group and part of its
// subtree: it is read once, although the cache is dropped whenever it holds more than
// DbOptions::verify_cache_pages). Each node carries the hash its parent committed to: a
// stem's hash is recomputed from its values, a group's from its entries
// (reconstruct_group), and compared; a stem's bits must continue the path of its position.
// Nodes are read, decoded and hash-checked through the verified fetch
// (bintrie/verified_fetch.h: fetch_record_sync / decode_keyed, check_node_hash).
#include <algorithm>
#include <cstring>

#include "engine/persist/bintrie/tree_db.h"

namespace st::persist::bintrie_read {
namespace {

constexpr size_t kVerifyChunk = 4096;

}  // namespace

// Checks one stem against its item: its path, its hash; counts its leaves and (an account's
// header stem) its account fields; hands its leaves to the leaf sink.
io::Status BintrieTreeDb::verify_stem(VerifyWalk& w, const VerifyItem& it, const std::string& where) {
  if (!bd::same_prefix(w.node.stem.stem.data(), it.path.data(), it.depth))
    return {io::Errc::corrupt_page, where + ": stem " + bd::hex(w.node.stem.stem) + " does not continue its path"};
  if (io::Status st = check_node_hash(h_, w.node, it.expect, where, it.depth == 0); !st) return st;
  w.rep.leaves += bd::stem_value_count(w.node.stem);
  if (leaf_sink_) {
    uint8_t key[32];
    std::memcpy(key, w.node.stem.stem.data(), 31);
    for (unsigned i = 0, j = 0; i < 256; ++i) {
      if (!((w.node.stem.bitmap[i / 8] >> (7 - i % 8)) & 1)) continue;
      key[31] = uint8_t(i);
      leaf_sink_({key, 32}, w.node.stem.values[j++]);
    }
  }
  if (const auto chunks = bd::account_code_chunks(w.node.stem)) {
    ++w.rep.accounts;
    w.account_leaves += 2 + *chunks;  // basic data, code hash, every code chunk
  }
  return {};
}

// Checks one group against its item (its hash from its entries) and queues its children:
// in the arena those whose page is cached go to w.cached, the others to w.todo.
io::Status BintrieTreeDb::verify_group(VerifyWalk& w, const VerifyItem& it, const std::string& where) {
  if (it.stem_only) return {io::Errc::corrupt_page, where + ": a group where its parent's entry ends in a stem"};
  if (it.depth >= kMaxDepth) return {io::Errc::corrupt_page, where + ": group at depth " + std::to_string(it.depth)};
  if (io::Status st = check_node_hash(h_, w.node, it.expect, where, it.depth == 0); !st) return st;
  // Pushed in reverse, so the stacks pop the entries in order.
  for (size_t e = w.node.group.entries.size(); e-- > 0;) {
    const auto& ent = w.node.group.entries[e];
    if (it.depth + ent.depth > kMaxDepth)
      return {io::Errc::corrupt_page, where + ": entry below depth " + std::to_string(kMaxDepth)};
    VerifyItem ch;
    ch.loc = w.arena ? w.node.children[e] : kNoLocator;
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

// Checks one node (decoded into w.node) against its item; queues its children.
io::Status BintrieTreeDb::verify_node(VerifyWalk& w, const VerifyItem& it, const std::string& where) {
  ++w.done_nodes;
  return w.node.is_group ? verify_group(w, it, where) : verify_stem(w, it, where);
}

// Arena: loads the chunk's pages in one submission, then checks each item and, at once,
// its descendants whose pages are cached by then. The cache is dropped whenever it holds
// more than verify_cache_pages.
io::Status BintrieTreeDb::verify_chunk_arena(VerifyWalk& w) {
  if (reader_->cached_pages() > verify_cache_pages_) reader_->clear();
  w.locs.clear();
  for (const VerifyItem& it : w.chunk) w.locs.push_back(it.loc);
  if (io::Status st = reader_->load(w.locs); !st) return st;
  for (const VerifyItem& first : w.chunk) {
    w.cached.push_back(first);
    while (!w.cached.empty()) {
      const VerifyItem it = w.cached.back();
      w.cached.pop_back();
      if (io::Status st = fetch_record_sync(*reader_, g_, kReader, it.loc, &w.node, &w.records); !st) return st;
      if (io::Status st = verify_node(w, it, record_name(kReader, it.loc)); !st) return st;
    }
  }
  return {};
}

// RocksDB: one MultiGet of the chunk's blob keys, then each blob decoded and checked.
io::Status BintrieTreeDb::verify_chunk_rocks(VerifyWalk& w) {
  w.keys.clear();
  for (const VerifyItem& it : w.chunk) {
    const std::vector<uint8_t> k = bintrie::blob_key(it.path.data(), it.depth);
    w.keys.emplace_back(reinterpret_cast<const char*>(k.data()), k.size());
  }
  w.views.assign(w.keys.begin(), w.keys.end());
  if (io::Status st = files_.rocks->multi_get(w.views, &w.values, &w.found); !st) return st;
  for (size_t i = 0; i < w.chunk.size(); ++i) {
    const std::string where = key_name(kReader, w.keys[i]);
    if (!w.found[i]) {
      if (w.chunk[i].depth == 0 && empty_tree()) continue;
      return {io::Errc::corrupt_page, where + ": missing"};
    }
    w.rocks_bytes += w.values[i].size();
    ++w.records;
    if (io::Status st = decode_keyed({reinterpret_cast<const uint8_t*>(w.values[i].data()), w.values[i].size()}, g_,
                                     where, &w.node);
        !st)
      return st;
    if (io::Status st = verify_node(w, w.chunk[i], where); !st) return st;
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
  VerifyWalk w;
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
