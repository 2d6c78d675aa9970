// mpt/verify.cpp: MptTreeDb::verify.
//
// Verify walks every node depth-first in batches (a stack of pending nodes; each batch =
// one load / multi_get; the page cache is dropped when it grows past kVerifyCachePages):
// memory is bounded by depth x fan-out x batch, not by the state. Each batch is taken
// through the verified fetch (mpt/verified_fetch.h): fetched, all of it hashed against the
// parents' references in one keccak256 batch, and only then decoded strictly and checked.
#include <algorithm>
#include <cstring>
#include <string>

#include "engine/persist/mpt/tree_db.h"

namespace st::persist::mpt_read {
namespace {

constexpr size_t kVerifyBatch = 2048;
constexpr size_t kVerifyCachePages = 16384;  // 64 MiB of 4 KiB pages
constexpr std::string_view kWho = "mpt verify";  // the prefix of verify's errors

}  // namespace

io::Status MptTreeDb::verify(VerifyReport* report, const ProgressFn& progress) {
  VerifyReport r;
  io::Status s = verify_all(&r, progress);
  if (s.ok()) {
    r.leaves = r.accounts + r.slots;
    const uint64_t keys = r.leaves;
    if (keys != files_.manifest.key_count)
      s = {io::Errc::corrupt_page, "mpt verify: found " + std::to_string(keys) + " keys, the manifest says " +
                                       std::to_string(files_.manifest.key_count)};
    else if (r.nodes != files_.manifest.node_count)
      s = {io::Errc::corrupt_page, "mpt verify: found " + std::to_string(r.nodes) + " nodes, the manifest says " +
                                       std::to_string(files_.manifest.node_count)};
  }
  r.ok = s.ok();
  if (!s.ok()) r.error = s.message();
  if (report) *report = r;
  return s;
}

// The 32-byte key of a leaf: the item's nibbles, then the leaf's own path.
void MptTreeDb::leaf_key(const VerifyItem& it, const mpt::DecodedNode& n, uint8_t* out32) {
  std::memset(out32, 0, 32);
  for (uint32_t i = 0; i < it.pos; ++i) out32[i / 2] |= uint8_t(it.path[i] << (i & 1 ? 0 : 4));
  for (uint32_t i = 0; i < n.path_len && it.pos + i < 64; ++i) {
    const uint32_t q = it.pos + i;
    out32[q / 2] |= uint8_t(n.path[i] << (q & 1 ? 0 : 4));
  }
}

// A storage leaf (its hash checked): its record and value checked, counted, handed to
// the leaf sink with its 64-byte key (owner, slot hash).
io::Status MptTreeDb::visit_storage_leaf(const mpt::DecodedNode& n, const RecordView* rv, const VerifyItem& it, const Origin& o,
                                         VerifyReport* r) {
  if (rv)
    if (io::Status s = check_record(kWho, o, *rv, n, true, false); !s.ok()) return s;
  state::Hash32 v;
  if (std::string err = decode_storage_value(n.value, &v); !err.empty()) return node_error(kWho, o, err);
  ++r->slots;
  if (leaf_sink_) {
    uint8_t key[64];
    std::memcpy(key, it.owner.data(), 32);
    leaf_key(it, n, key + 32);
    leaf_sink_({key, 64}, n.value);
  }
  return {};
}

// An account leaf (its hash checked): its record and fields checked, counted, handed to
// the leaf sink; an account with storage queues its storage trie's root.
io::Status MptTreeDb::visit_account_leaf(const mpt::DecodedNode& n, const RecordView* rv, const VerifyItem& it, const Origin& o,
                                         VerifyReport* r, std::vector<VerifyItem>* stack) {
  mpt::AccountFields f;
  if (std::string err = mpt::decode_account_rlp(n.value, &f); !err.empty()) return node_error(kWho, o, err);
  const bool has_storage = f.storage_root != mpt::kEmptyRoot;
  if (rv) {
    if (io::Status s = check_record(kWho, o, *rv, n, false, has_storage); !s.ok()) return s;
  } else if (has_storage && files_.store == StoreKind::arena) {
    return node_error(kWho, o, "embedded account leaf with storage");
  }
  ++r->accounts;
  if (leaf_sink_) {
    uint8_t key[32];
    leaf_key(it, n, key);
    leaf_sink_({key, 32}, n.value);
  }
  if (!has_storage) return {};
  VerifyItem c;
  c.storage = true;
  c.expect = f.storage_root;
  c.loc = rv ? rv->child(0) : kNoLocator;
  for (uint32_t i = 0; i < it.pos; ++i) c.owner[i / 2] |= uint8_t(it.path[i] << (i & 1 ? 0 : 4));
  for (uint32_t i = 0; i < n.path_len; ++i) {
    const uint32_t q = it.pos + i;
    c.owner[q / 2] |= uint8_t(n.path[i] << (q & 1 ? 0 : 4));
  }
  stack->push_back(c);
  return {};
}

// A child of branch / extension `it` (its key `consumed` nibbles `nibs` further): an
// embedded one is visited at once from the parent's bytes, a hashed one queued.
io::Status MptTreeDb::visit_child(const mpt::ChildRef& ref, uint32_t consumed, uint32_t hashed_index, const uint8_t* nibs,
                                  const RecordView* rv, const VerifyItem& it, const Origin& o, VerifyReport* r,
                                  std::vector<VerifyItem>* stack) {
  VerifyItem c = it;
  for (uint32_t i = 0; i < consumed; ++i) c.path[it.pos + i] = nibs[i];
  c.pos = uint8_t(it.pos + consumed);
  if (ref.kind == mpt::ChildRef::embedded) {
    Origin eo = o;
    eo.rec = nullptr;
    return visit({ref.bytes, ref.len}, nullptr, c, eo, r, stack);
  }
  if (!rv && files_.store == StoreKind::arena)
    return node_error(kWho, o, "embedded node with a hashed child");
  std::memcpy(c.expect.data(), ref.bytes, 32);
  c.loc = rv ? rv->child(hashed_index) : kNoLocator;
  stack->push_back(c);
  return {};
}

// Visits one node (hash already checked): counts it, checks it, queues its hashed
// children; embedded children are visited recursively from the parent's bytes.
io::Status MptTreeDb::visit(std::span<const uint8_t> body, const RecordView* rv, const VerifyItem& it, const Origin& o,
                            VerifyReport* r, std::vector<VerifyItem>* stack) {
  mpt::DecodedNode n;
  if (io::Status s = decode_fetched(kWho, o, body, &n); !s.ok()) return s;
  auto fail = [&](const std::string& why) { return node_error(kWho, o, why); };
  if (n.kind == mpt::DecodedNode::leaf) {
    if (it.pos + n.path_len != 64) return fail("leaf at nibble " + std::to_string(it.pos + n.path_len) + ", not 64");
    return it.storage ? visit_storage_leaf(n, rv, it, o, r) : visit_account_leaf(n, rv, it, o, r, stack);
  }
  if (rv)
    if (io::Status s = check_record(kWho, o, *rv, n, it.storage, false); !s.ok()) return s;
  if (n.kind == mpt::DecodedNode::extension) {
    if (it.pos + n.path_len >= 64) return fail("extension reaches the end of the key");
    return visit_child(n.refs[0], n.path_len, 0, n.path.data(), rv, it, o, r, stack);
  }
  if (it.pos >= 64) return fail("branch below a full key");
  if (!n.value.empty()) return fail("branch with a value in a secure trie");
  // Children queued in nibble order (verify_all turns the queue over onto its stack, so
  // they are read in the order they were packed in, which keeps the page cache warm).
  for (uint32_t nib = 0; nib < 16; ++nib) {
    const mpt::ChildRef& ref = n.refs[nib];
    if (ref.kind == mpt::ChildRef::none) continue;
    const uint8_t nb = uint8_t(nib);
    if (io::Status s = visit_child(ref, 1, n.hashed_index(nib), &nb, rv, it, o, r, stack); !s.ok()) return s;
  }
  return {};
}

// verify_all's batch: the items taken from the stack, their bodies (msgs, lens: in the
// arena's cached records or the RocksDB values), and buffers reused across batches.
struct MptTreeDb::VerifyBatch {
  std::vector<VerifyItem> items, pushed;
  std::vector<Locator> locs;
  std::vector<std::string> keys;
  std::vector<std::string_view> views;
  std::vector<std::string> values;
  std::vector<uint8_t> found;
  std::vector<RecordView> rvs;
  std::vector<std::span<const uint8_t>> bodies;
  std::vector<const uint8_t*> msgs;  // check_round's scratch
  std::vector<size_t> lens;
  std::vector<uint8_t> hashes;
  std::vector<uint8_t> page_seen;  // arena: pages counted in the report
};

// Arena: the batch's records fetched in one submission (the page cache dropped past
// kVerifyCachePages), their bodies in b.bodies; each page counted once.
io::Status MptTreeDb::load_verify_batch_arena(VerifyBatch& b, VerifyReport* r) {
  const size_t m = b.items.size();
  if (reader_->cached_pages() > kVerifyCachePages) reader_->clear();
  b.locs.clear();
  for (const auto& it : b.items) {
    if (it.loc == kNoLocator) return {io::Errc::corrupt_page, "mpt verify: a hashed reference without a record child"};
    b.locs.push_back(it.loc);
  }
  if (io::Status s = fetch_records(*reader_, b.locs, &b.rvs); !s.ok()) return s;
  for (size_t i = 0; i < m; ++i) {
    b.bodies[i] = b.rvs[i].body;
    const uint64_t pg = locator_page(b.items[i].loc);
    if (pg >= b.page_seen.size()) b.page_seen.resize(std::max<size_t>(pg + 1, b.page_seen.size() * 2), 0);
    if (!b.page_seen[pg]) { b.page_seen[pg] = 1; ++r->pages; }
  }
  return {};
}

// RocksDB: one MultiGet of the batch's path keys, the values' bytes counted.
io::Status MptTreeDb::load_verify_batch_rocks(VerifyBatch& b, VerifyReport* r) {
  b.keys.clear();
  for (const auto& it : b.items) {
    b.keys.push_back(it.storage ? std::string(1, 'O') + std::string(reinterpret_cast<const char*>(it.owner.data()), 32)
                                : std::string(1, 'A'));
    for (uint32_t i = 0; i < it.pos; ++i) b.keys.back().push_back(char(it.path[i]));
  }
  b.views.assign(b.keys.begin(), b.keys.end());
  if (io::Status s = files_.rocks->multi_get(b.views, &b.values, &b.found); !s.ok()) return s;
  for (size_t i = 0; i < b.items.size(); ++i) {
    if (!b.found[i])
      return {io::Errc::not_found, "mpt verify: node at path key " + path_key_hex(b.keys[i]) + " is missing"};
    b.bodies[i] = {reinterpret_cast<const uint8_t*>(b.values[i].data()), b.values[i].size()};
    r->bytes += b.values[i].size();
  }
  return {};
}

// The batch's bodies hashed in one keccak256 batch against their parents' references
// (check_round), then each visited; the children go to b.pushed (item 0's first, in nibble
// order).
io::Status MptTreeDb::check_verify_batch(VerifyBatch& b, bool arena, VerifyReport* r) {
  const size_t m = b.items.size();
  auto origin = [&](size_t i) {
    Origin o;
    o.loc = arena ? b.items[i].loc : kNoLocator;
    o.path_key = arena ? nullptr : &b.keys[i];
    o.rec = arena ? &b.rvs[i] : nullptr;
    return o;
  };
  const long bad = check_round(
      m, [&](size_t i) { return b.bodies[i]; }, [&](size_t i) -> const Hash32& { return b.items[i].expect; }, b.msgs,
      b.lens, b.hashes);
  if (bad >= 0) return hash_mismatch(kWho, origin(size_t(bad)));
  b.pushed.clear();
  for (size_t i = 0; i < m; ++i) {
    const Origin o = origin(i);
    ++r->nodes;
    if (io::Status s = visit(b.bodies[i], o.rec, b.items[i], o, r, &b.pushed); !s.ok()) return s;
  }
  return {};
}

io::Status MptTreeDb::verify_all(VerifyReport* r, const ProgressFn& progress) {
  r->root = files_.manifest.root_hash;
  if (empty_tree()) {
    if (files_.manifest.root_hash != mpt::kEmptyRoot)
      return {io::Errc::corrupt_page, "mpt verify: no root node, but the manifest's root is not the empty root"};
    return {};
  }
  const bool arena = files_.store == StoreKind::arena;
  std::vector<VerifyItem> stack;
  VerifyItem root;
  root.expect = files_.manifest.root_hash;
  root.loc = files_.commit.root;
  stack.push_back(root);
  VerifyBatch b;
  uint64_t bytes0 = arena ? reader_->counters().bytes_read : 0;
  if (arena) reader_->clear();
  uint64_t last_progress = 0;
  while (!stack.empty()) {
    const size_t m = std::min(kVerifyBatch, stack.size());
    b.items.assign(stack.end() - long(m), stack.end());
    stack.resize(stack.size() - m);
    std::reverse(b.items.begin(), b.items.end());  // top of the stack first
    b.bodies.assign(m, {});
    if (io::Status s = arena ? load_verify_batch_arena(b, r) : load_verify_batch_rocks(b, r); !s.ok()) return s;
    if (io::Status s = check_verify_batch(b, arena, r); !s.ok()) return s;
    // Reversed onto the stack: item 0's first child ends on top.
    stack.insert(stack.end(), b.pushed.rbegin(), b.pushed.rend());
    if (progress && r->nodes - last_progress >= 65536) {
      last_progress = r->nodes;
      progress(r->nodes, files_.manifest.node_count);
    }
  }
  if (arena) r->bytes = reader_->counters().bytes_read - bytes0;
  if (progress) progress(r->nodes, files_.manifest.node_count);
  return {};
}

}  // namespace st::persist::mpt_read
