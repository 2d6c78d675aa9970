// mpt/lookup.cpp: MptTreeDb::lookup, batched.
//
// Lookup (batched). Each key has a cursor: the trie it is in (account, then the account's
// storage trie for a slot key), its nibble position, and the next node to fetch (arena: a
// record locator; RocksDB: a path key) with the hash its parent holds for it. The
// scheduling of both walks is lookup_walk.h's; this file is the MPT's step and checks:
//   arena:   streamed (ArenaWalk): each cursor advances through records while the next
//            record's page is cached (a parent shares its page with its children, so one
//            read covers levels), then waits on that page; it goes on as soon as the page
//            lands, while the other reads are in flight (no per-level barrier)
//   RocksDB: level by level (RocksWalk), one multi_get over the distinct path keys of the
//            unfinished cursors per round, each distinct node decoded and hash-checked
//            once before the cursors at it step
// Every node is taken through the verified fetch (mpt/verified_fetch.h): used only after
// keccak(body) == the hash its parent holds (the root: the manifest's root hash; arena:
// queued and run in batches before any answer; RocksDB: each round's before any cursor
// steps) and its RLP decoded strictly; embedded children are decoded inline from the
// parent's bytes. An arena record must also agree with its node: kind, and child count =
// the node's hashed references (account leaf: 1 iff its storage root is not the empty root).
#include <cstring>
#include <string>
#include <unordered_map>

#include "engine/memory/scratch_pool.h"
#include "engine/persist/lookup_walk.h"
#include "engine/persist/mpt/tree_db.h"
#include "kernels/hex_prefix.h"

namespace st::persist::mpt_read {
namespace {

using st::kernels::key_nibble;

constexpr std::string_view kWho = "mpt";  // the prefix of a lookup's (and a proof's) errors

// Whether the key (from nibble pos) continues through node n's path.
inline bool path_matches(const mpt::DecodedNode& n, const uint8_t* key, uint32_t pos) {
  if (n.path_len > 64 - pos) return false;
  for (uint32_t i = 0; i < n.path_len; ++i)
    if (n.path[i] != key_nibble(key, pos + i)) return false;
  return true;
}

// An account leaf on cursor c's path (match: it is the key's): its record checked, the
// account answered, and a slot key moved to the root of the account's storage trie.
inline io::Status step_account_leaf(Cursor& c, const mpt::DecodedNode& n, bool match, const RecordView* rv, const Origin& origin) {
  mpt::AccountFields f;
  if (std::string err = mpt::decode_account_rlp(n.value, &f); !err.empty()) {
    if (rv || match) return node_error(kWho, origin, err);
  }
  if (rv)
    if (io::Status s = check_record(kWho, origin, *rv, n, false, f.storage_root != mpt::kEmptyRoot); !s.ok()) return s;
  if (!match) { c.done = true; return {}; }
  AccountInfo& a = c.ans->account;
  a.exists = true;
  a.nonce = f.nonce;
  a.balance = f.balance;
  a.code_hash = f.code_hash;
  a.storage_root = f.storage_root;
  if (!c.want_slot || f.storage_root == mpt::kEmptyRoot) { c.done = true; return {}; }
  if (origin.rec && !rv)
    return node_error(kWho, origin, "embedded account leaf with storage");
  c.storage = true;
  c.pos = 0;
  c.expect = f.storage_root;
  c.loc = rv && rv->child_count ? rv->child(0) : kNoLocator;
  return {};
}

// A storage leaf on cursor c's path: its record checked, and its value answered when it
// is the key's (match). The cursor is done.
inline io::Status step_storage_leaf(Cursor& c, const mpt::DecodedNode& n, bool match, const RecordView* rv, const Origin& origin) {
  if (rv)
    if (io::Status s = check_record(kWho, origin, *rv, n, true, false); !s.ok()) return s;
  if (match) {
    state::Hash32 v;
    if (std::string err = decode_storage_value(n.value, &v); !err.empty()) return node_error(kWho, origin, err);
    c.ans->slot_value = v;
  }
  c.done = true;
  return {};
}

// A branch or extension on cursor c's path: the child reference the key takes (*ref, its
// index among the node's hashed references), the cursor's position moved past the node.
// The cursor is done when the key's path leaves the trie here.
inline io::Status inner_child_ref(Cursor& c, const mpt::DecodedNode& n, const Origin& origin, mpt::ChildRef* ref,
                                  uint32_t* child_index) {
  const uint8_t* key = c.key();
  if (n.kind == mpt::DecodedNode::extension) {
    if (!path_matches(n, key, c.pos)) { c.done = true; return {}; }
    c.pos += n.path_len;
    *ref = n.refs[0];
  } else {
    if (c.pos >= 64) return node_error(kWho, origin, "branch below a full key");
    const uint32_t nib = key_nibble(key, c.pos);
    ++c.pos;
    *ref = n.refs[nib];
    if (ref->kind == mpt::ChildRef::hash) *child_index = n.hashed_index(nib);
  }
  if (ref->kind == mpt::ChildRef::none) c.done = true;
  return {};
}

// Processes the fetched node `body` and the embedded nodes below it on the key's path;
// leaves the cursor done or waiting for its next hashed node. The caller has queued the
// body's hash check (arena) or run it (RocksDB).
// `decoded`: the fetched node already decoded (strictly) from `body`, or nullptr.
io::Status step(Cursor& c, std::span<const uint8_t> body, const Origin& origin, uint64_t* nodes_visited,
                const mpt::DecodedNode* decoded = nullptr) {
  if (c.storage ? c.storage_proof : c.account_proof) (c.storage ? c.storage_proof : c.account_proof)->emplace_back(body.begin(), body.end());
  const RecordView* rv = origin.rec;
  std::span<const uint8_t> cur = body;
  mpt::DecodedNode local;
  const mpt::DecodedNode* np = decoded;
  for (;;) {
    ++*nodes_visited;
    if (!np) {
      if (io::Status s = decode_fetched(kWho, origin, cur, &local); !s.ok()) return s;
      np = &local;
    }
    const mpt::DecodedNode& n = *np;
    np = nullptr;  // an embedded child is decoded from its parent's bytes
    if (n.kind == mpt::DecodedNode::leaf) {
      const bool match = path_matches(n, c.key(), c.pos) && c.pos + n.path_len == 64;
      return c.storage ? step_storage_leaf(c, n, match, rv, origin) : step_account_leaf(c, n, match, rv, origin);
    }
    if (rv)
      if (io::Status s = check_record(kWho, origin, *rv, n, c.storage, false); !s.ok()) return s;
    mpt::ChildRef ref;
    uint32_t child_index = 0;
    if (io::Status st = inner_child_ref(c, n, origin, &ref, &child_index); !st || c.done) return st;
    if (ref.kind == mpt::ChildRef::embedded) {
      cur = {ref.bytes, ref.len};
      rv = nullptr;  // an embedded node has no record; it cannot hold a hashed reference
      continue;
    }
    if (origin.rec && !rv) return node_error(kWho, origin, "embedded node with a hashed child");
    std::memcpy(c.expect.data(), ref.bytes, 32);
    c.loc = rv ? rv->child(child_index) : kNoLocator;
    return {};
  }
}

// ---------------------------------------------------------------------------------------
}  // namespace

io::Status MptTreeDb::lookup(std::span<const state::StateKey> keys, std::vector<LookupAnswer>* out, LookupStats* stats,
                             bool cold_pages) {
  out->assign(keys.size(), LookupAnswer{});
  std::vector<Cursor> cs(keys.size());
  hash_keys(keys, cs, *out);
  LookupStats st;
  st.keys = keys.size();
  io::Status s = walk(cs, cold_pages, &st);
  if (stats) *stats = st;
  if (!s.ok()) out->clear();  // nothing of a failed lookup is an answer
  return s;
}

void MptTreeDb::hash_keys(std::span<const state::StateKey> keys, std::vector<Cursor>& cs, std::vector<LookupAnswer>& ans) {
  std::vector<const uint8_t*> msgs;
  std::vector<size_t> lens;
  std::vector<uint8_t> h;
  msgs.reserve(2 * keys.size());
  for (const auto& k : keys) {
    msgs.push_back(k.address.data());
    lens.push_back(20);
    if (k.slot) {
      msgs.push_back(k.slot->data());
      lens.push_back(32);
    }
  }
  h.resize(32 * msgs.size());
  if (!msgs.empty()) st::kernels::keccak256_batch(msgs.data(), lens.data(), h.data(), msgs.size());
  size_t m = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    Cursor& c = cs[i];
    std::memcpy(c.acct.data(), h.data() + 32 * m++, 32);
    if (keys[i].slot) {
      c.want_slot = true;
      std::memcpy(c.slot.data(), h.data() + 32 * m++, 32);
    }
    c.ans = &ans[i];
    c.expect = files_.manifest.root_hash;
    c.loc = files_.commit.root;
    c.done = empty_tree();
  }
}

io::Status MptTreeDb::run_checks(const std::vector<std::string>* keys) {
  const long bad = checks_->run();
  io::Status s;
  if (bad >= 0) {
    Origin o;
    o.loc = checks_->locs[size_t(bad)];
    if (keys) o.path_key = &(*keys)[checks_->tags[size_t(bad)]];
    s = hash_mismatch(kWho, o);
  }
  checks_->clear();
  return s;
}

// Moves cursor i through its next record (and the embedded nodes in it) when the record's
// page is cached; else registers it as that page's waiter (the stream wakes it when the
// page lands).
io::Status MptTreeDb::step_arena(Cursor& c, uint32_t i, LookupStats* st, WalkStep* out) {
  *out = WalkStep::done;
  if (c.done) return {};
  if (c.loc == kNoLocator) return {io::Errc::corrupt_page, "mpt: a hashed reference without a record child"};
  const uint64_t page = locator_page(c.loc);
  if (!reader_->loaded(page) && !reader_->request(page, i)) {
    *out = WalkStep::waits;
    return {};
  }
  RecordView rv;
  if (io::Status s = reader_->record(c.loc, &rv); !s.ok()) return s;
  Origin o;
  o.rec = &rv;
  o.loc = c.loc;
  // The top levels of the account trie are on many keys' paths (a batch of K random
  // keys shares its first log16(K) levels): their nodes are decoded once per batch.
  const mpt::DecodedNode* decoded = nullptr;
  if (!c.storage && c.pos < memo_levels_) {
    auto [it, fresh] = memo_.try_emplace(c.loc, uint32_t(memo_nodes_.size()));
    if (fresh) {
      memo_nodes_.emplace_back();
      if (io::Status s = decode_fetched(kWho, o, rv.body, &memo_nodes_.back()); !s.ok()) {
        memo_nodes_.pop_back();
        memo_.erase(it);
        return s;
      }
    }
    decoded = &memo_nodes_[it->second];
  }
  checks_->add(rv.body, c.expect, c.loc, 0);
  if (io::Status s = step(c, rv.body, o, &st->nodes_visited, decoded); !s.ok()) return s;
  *out = c.done ? WalkStep::done : WalkStep::moved;
  return {};
}

// The MPT's side of the streamed walk (lookup_walk.h): cursor i moves through cached
// records one at a time (step_arena); the checks run in keccak256 batches of >= 32 nodes before a wait, and
// at the end.
struct MptTreeDb::ArenaWalk {
  static constexpr size_t kCheckBatchMin = 32;
  static constexpr bool kSubmitBeforeChecks = false;  // checks, then the blocking poll submits
  static constexpr uint32_t kMaxNodes = 2 * 65;  // account trie, then a storage trie: 64 nibbles + the leaf each
  MptTreeDb& db;
  std::vector<Cursor>& cs;
  LookupStats* st;
  bool done(uint32_t i) const { return cs[i].done; }
  bool wake(uint32_t) { return true; }  // a cursor waits on one page at a time
  io::Status step(uint32_t i, WalkStep* out) { return db.step_arena(cs[i], i, st, out); }
  size_t checks_pending() const { return db.checks_->pending(); }
  io::Status run_checks() { return db.run_checks(nullptr); }
  void drop_checks() { db.checks_->clear(); }
};

// The MPT's side of the RocksDB rounds (lookup_walk.h): each distinct node of a round is
// decoded once and its hash queued (take); the cursors at it step through the decoded node.
struct MptTreeDb::RocksWalk {
  static constexpr uint32_t kMaxNodes = ArenaWalk::kMaxNodes;
  MptTreeDb& db;
  std::vector<Cursor>& cs;
  LookupStats* st;
  std::vector<mpt::DecodedNode> nodes;  // the round's nodes, by key index
  bool done(uint32_t i) const { return cs[i].done; }
  void path_key(uint32_t i, std::string* out) const { *out = cs[i].path_key(); }
  const Hash32& expect(uint32_t i) const { return cs[i].expect; }
  static Origin origin(const RocksRound& r, uint32_t j) {
    Origin o;
    o.path_key = &r.keys[j];
    return o;
  }
  io::Status hash_conflict(const RocksRound& r, uint32_t j) const {
    return hash_mismatch(kWho, origin(r, j));
  }
  io::Status take(const RocksRound& r, uint32_t j) {
    if (nodes.size() < r.keys.size()) nodes.resize(r.keys.size());
    if (!r.found[j]) return {io::Errc::not_found, "mpt: " + origin(r, j).name() + " is missing (its parent references it)"};
    db.checks_->add(r.value(j), r.expect[j], kNoLocator, j);
    return decode_fetched(kWho, origin(r, j), r.value(j), &nodes[j]);
  }
  io::Status run_checks(const RocksRound& r) { return db.run_checks(&r.keys); }
  void drop_checks() { db.checks_->clear(); }
  io::Status step(uint32_t i, const RocksRound& r, uint32_t j) {
    return mpt_read::step(cs[i], r.value(j), origin(r, j), &st->nodes_visited, &nodes[j]);
  }
};

io::Status MptTreeDb::walk(std::vector<Cursor>& cs, bool cold_pages, LookupStats* st) {
  const auto checks = memory::ScratchPool<NodeHashChecks>::take();
  checks_ = checks.get();
  checks_->reset();
  io::Status s = files_.store == StoreKind::arena ? walk_arena(cs, cold_pages, st) : walk_rocks(cs, st);
  checks_->clear();  // a failed walk leaves its queue (the seen-map waits for the next reset)
  checks_ = nullptr;
  return s;
}

// Streamed walk (lookup_walk.h): the account trie's top levels are decoded once per batch
// (memo_); every (record, hash) is checked once per batch.
io::Status MptTreeDb::walk_arena(std::vector<Cursor>& cs, bool cold_pages, LookupStats* st) {
  checks_->seen.reserve(4 * cs.size());  // ~ the nodes on the batch's paths: no rehash mid-walk
  memo_.clear();
  memo_nodes_.clear();
  memo_levels_ = 0;
  for (size_t k = cs.size(); k >= 16; k /= 16) ++memo_levels_;
  memo_nodes_.reserve(size_t(1) << (4 * memo_levels_));
  ArenaWalk w{*this, cs, st};
  return stream_lookup(*reader_, w, cs.size(), cold_pages, st);
}

io::Status MptTreeDb::walk_rocks(std::vector<Cursor>& cs, LookupStats* st) {
  RocksWalk w{*this, cs, st, {}};
  return rounds_lookup(*files_.rocks, w, cs.size(), st);
}

}  // namespace st::persist::mpt_read
