// mpt_tree_db: the read side of the persistent MPT: open_mpt and the TreeDb over either
// store (see mpt_db.h for the on-disk form).
//
// Lookup (batched). Each key has a cursor: the trie it is in (account, then the account's
// storage trie for a slot key), its nibble position, and the next node to fetch (arena: a
// record locator; RocksDB: a path key) with the hash its parent holds for it.
//   arena:   streamed (page_reader.h): each cursor advances through records while the next
//            record's page is cached (a parent shares its page with its children, so one
//            read covers levels), then waits on that page; it goes on as soon as the page
//            lands, while the other reads are in flight (no per-level barrier)
//   RocksDB: level by level, one multi_get over the distinct path keys of the unfinished
//            cursors per round
// A fetched node is used only after keccak(body) == the hash its parent holds (the root:
// the manifest's root hash) and its RLP decoded strictly; embedded children are decoded
// inline from the parent's bytes. An arena record must also agree with its node: kind,
// and child count = the node's hashed references (account leaf: 1 iff its storage root is
// not the empty root).
//
// Verify walks every node depth-first in batches (a stack of pending nodes; each batch =
// one load / multi_get; the page cache is dropped when it grows past kVerifyCachePages):
// memory is bounded by depth x fan-out x batch, not by the state.
#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_map>

#include "engine/mpt/account.h"
#include "engine/persist/mpt/db.h"
#include "engine/persist/snapshot/reader.h"
#include "engine/persist/mpt/node.h"
#include "kernels/hex_prefix.h"
#include "kernels/keccak256.h"

namespace st::persist {

namespace {

using st::kernels::key_nibble;
using Hash32 = mpt::Hash32;

constexpr size_t kVerifyBatch = 2048;
constexpr size_t kVerifyCachePages = 16384;  // 64 MiB of 4 KiB pages

std::string loc_name(Locator l) {
  return "record " + std::to_string(locator_index(l)) + " of page " + std::to_string(locator_page(l));
}

// The hash checks of a lookup, run as keccak256 batches (arena: of >= 32 nodes between
// waits for reads, and at the end; RocksDB: at the end of each round). The walk meanwhile
// trusts nothing but the strict decoder and the record checks, so a node that fails its
// hash can at worst steer a key astray (to more reads, bounded by the key's 64 nibbles)
// until the next batch of checks, which then fails the lookup naming that node; no answer
// of a failed lookup is returned.
struct HashChecks {
  std::vector<const uint8_t*> msgs;
  std::vector<size_t> lens;
  std::vector<Hash32> expect;
  std::vector<Locator> locs;        // arena
  std::vector<uint32_t> key_index;  // RocksDB: index into the round's keys
  std::vector<uint8_t> out;
  // Arena records already checked (or queued) in this walk with the hash they must have:
  // the paths of a batch share their upper nodes, each (record, hash) is hashed once.
  std::unordered_map<Locator, Hash32> seen;
  void add(std::span<const uint8_t> body, const Hash32& want, Locator loc, uint32_t key) {
    if (loc != kNoLocator) {
      auto [it, fresh] = seen.try_emplace(loc, want);
      if (!fresh && it->second == want) return;
      it->second = want;
    }
    msgs.push_back(body.data());
    lens.push_back(body.size());
    expect.push_back(want);
    locs.push_back(loc);
    key_index.push_back(key);
  }
  // Index of the first node whose hash differs, or -1.
  long run() {
    const size_t n = msgs.size();
    out.resize(32 * n);
    if (n) st::kernels::keccak256_batch(msgs.data(), lens.data(), out.data(), n);
    long bad = -1;
    for (size_t i = 0; i < n && bad < 0; ++i)
      if (std::memcmp(out.data() + 32 * i, expect[i].data(), 32) != 0) bad = long(i);
    return bad;
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
    key_index.clear();
  }
};

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


// ---------------------------------------------------------------------------------------
// One key's walk.

struct Cursor {
  Hash32 acct{};   // keccak(address)
  Hash32 slot{};   // keccak(slot)
  bool want_slot = false;
  bool storage = false;  // in the storage trie
  bool done = false;
  uint32_t pos = 0;      // nibble position in the current trie's key
  Locator loc = kNoLocator;
  Hash32 expect{};       // hash of the next node to fetch
  LookupAnswer* ans = nullptr;
  std::vector<mpt::Bytes>* account_proof = nullptr;  // prove(): hashed node bodies, root first
  std::vector<mpt::Bytes>* storage_proof = nullptr;
  const uint8_t* key() const { return storage ? slot.data() : acct.data(); }
  std::string path_key() const {
    return storage ? storage_node_key(acct.data(), slot.data(), pos) : account_node_key(acct.data(), pos);
  }
};

// Whether the key (from nibble pos) continues through node n's path.
inline bool path_matches(const DiskNode& n, const uint8_t* key, uint32_t pos) {
  if (n.path_len > 64 - pos) return false;
  for (uint32_t i = 0; i < n.path_len; ++i)
    if (n.path[i] != key_nibble(key, pos + i)) return false;
  return true;
}

// An account leaf on cursor c's path (match: it is the key's): its record checked, the
// account answered, and a slot key moved to the root of the account's storage trie.
inline io::Status step_account_leaf(Cursor& c, const DiskNode& n, bool match, const RecordView* rv, const Origin& origin) {
  mpt::AccountFields f;
  if (std::string err = mpt::decode_account_rlp(n.value, &f); !err.empty()) {
    if (rv || match) return {io::Errc::corrupt_page, "mpt: " + origin.name() + ": " + err};
  }
  if (rv) {
    if (std::string err = check_mpt_record(rv->kind, rv->child_count, n, false, f.storage_root != mpt::kEmptyRoot); !err.empty())
      return {io::Errc::corrupt_page, "mpt: " + origin.name() + ": " + err};
  }
  if (!match) { c.done = true; return {}; }
  AccountInfo& a = c.ans->account;
  a.exists = true;
  a.nonce = f.nonce;
  a.balance = f.balance;
  a.code_hash = f.code_hash;
  a.storage_root = f.storage_root;
  if (!c.want_slot || f.storage_root == mpt::kEmptyRoot) { c.done = true; return {}; }
  if (origin.rec && !rv)
    return {io::Errc::corrupt_page, "mpt: " + origin.name() + ": embedded account leaf with storage"};
  c.storage = true;
  c.pos = 0;
  c.expect = f.storage_root;
  c.loc = rv && rv->child_count ? rv->child(0) : kNoLocator;
  return {};
}

// A storage leaf on cursor c's path: its record checked, and its value answered when it
// is the key's (match). The cursor is done.
inline io::Status step_storage_leaf(Cursor& c, const DiskNode& n, bool match, const RecordView* rv, const Origin& origin) {
  if (rv) {
    if (std::string err = check_mpt_record(rv->kind, rv->child_count, n, true, false); !err.empty())
      return {io::Errc::corrupt_page, "mpt: " + origin.name() + ": " + err};
  }
  if (match) {
    state::Bytes32 v;
    if (std::string err = decode_storage_value(n.value, &v); !err.empty())
      return {io::Errc::corrupt_page, "mpt: " + origin.name() + ": " + err};
    c.ans->slot_value = v;
  }
  c.done = true;
  return {};
}

// A branch or extension on cursor c's path: the child reference the key takes (*ref, its
// index among the node's hashed references), the cursor's position moved past the node.
// The cursor is done when the key's path leaves the trie here.
inline io::Status inner_child_ref(Cursor& c, const DiskNode& n, const Origin& origin, MptChildRef* ref,
                                  uint32_t* child_index) {
  const uint8_t* key = c.key();
  if (n.kind == DiskNode::extension) {
    if (!path_matches(n, key, c.pos)) { c.done = true; return {}; }
    c.pos += n.path_len;
    *ref = n.refs[0];
  } else {
    if (c.pos >= 64) return {io::Errc::corrupt_page, "mpt: " + origin.name() + ": branch below a full key"};
    const uint32_t nib = key_nibble(key, c.pos);
    ++c.pos;
    *ref = n.refs[nib];
    if (ref->kind == MptChildRef::hash) *child_index = n.hashed_index(nib);
  }
  if (ref->kind == MptChildRef::none) c.done = true;
  return {};
}

// Processes the fetched node `body` and the embedded nodes below it on the key's path;
// leaves the cursor done or waiting for its next hashed node. The body's hash check is
// queued in `checks` (run at the end of the round).
// `decoded`: the fetched node already decoded (strictly) from `body`, or nullptr.
io::Status step(Cursor& c, std::span<const uint8_t> body, const Origin& origin, uint64_t* nodes_visited,
                HashChecks& checks, uint32_t key_index, const DiskNode* decoded = nullptr) {
  checks.add(body, c.expect, origin.loc, key_index);
  if (c.storage ? c.storage_proof : c.account_proof) (c.storage ? c.storage_proof : c.account_proof)->emplace_back(body.begin(), body.end());
  const RecordView* rv = origin.rec;
  std::span<const uint8_t> cur = body;
  DiskNode local;
  const DiskNode* np = decoded;
  for (;;) {
    ++*nodes_visited;
    if (!np) {
      if (std::string err = decode_disk_node(cur, &local); !err.empty())
        return {io::Errc::corrupt_page, "mpt: " + origin.name() + ": " + err};
      np = &local;
    }
    const DiskNode& n = *np;
    np = nullptr;  // an embedded child is decoded from its parent's bytes
    if (n.kind == DiskNode::leaf) {
      const bool match = path_matches(n, c.key(), c.pos) && c.pos + n.path_len == 64;
      return c.storage ? step_storage_leaf(c, n, match, rv, origin) : step_account_leaf(c, n, match, rv, origin);
    }
    if (rv) {
      if (std::string err = check_mpt_record(rv->kind, rv->child_count, n, c.storage, false); !err.empty())
        return {io::Errc::corrupt_page, "mpt: " + origin.name() + ": " + err};
    }
    MptChildRef ref;
    uint32_t child_index = 0;
    if (io::Status st = inner_child_ref(c, n, origin, &ref, &child_index); !st || c.done) return st;
    if (ref.kind == MptChildRef::embedded) {
      cur = {ref.bytes, ref.len};
      rv = nullptr;  // an embedded node has no record; it cannot hold a hashed reference
      continue;
    }
    if (origin.rec && !rv) return {io::Errc::corrupt_page, "mpt: " + origin.name() + ": embedded node with a hashed child"};
    std::memcpy(c.expect.data(), ref.bytes, 32);
    c.loc = rv ? rv->child(child_index) : kNoLocator;
    return {};
  }
}

// ---------------------------------------------------------------------------------------
// Verify: one pending node.

struct VerifyItem {
  Locator loc = kNoLocator;
  Hash32 expect{};
  bool storage = false;
  uint8_t pos = 0;
  std::array<uint8_t, 64> path{};   // nibbles [0, pos) of the node's key (RocksDB keys, account hash)
  Hash32 owner{};                   // storage trie: the account's hashed address
};

class MptTreeDb final : public TreeDb {
 public:
  explicit MptTreeDb(DbFiles&& f) : files_(std::move(f)) {
    if (files_.store == StoreKind::arena) reader_ = std::make_unique<PageReader>(files_.arena->pages());
  }
  const io::Manifest& manifest() const override { return files_.manifest; }
  const std::string& source_spec() const override { return files_.commit.spec; }
  std::vector<std::string> data_files() const override { return files_.data_files(); }
  io::NodeStore* page_store() override { return files_.arena ? &files_.arena->pages() : nullptr; }
  PageReader* page_reader() override { return reader_.get(); }
  void record_read_latency(stats::LogHistogram* sink) override {
    if (reader_) reader_->set_latency_sink(sink);
  }
  io::Status open_snapshot(std::unique_ptr<SnapshotReader>* out) override { return open_snapshot_of(files_, out); }
  io::Status open_snapshot_table(std::unique_ptr<SnapshotTable>* out) override { return open_snapshot_table_of(files_, out); }

  io::Status lookup(std::span<const state::StateKey> keys, std::vector<LookupAnswer>* out, LookupStats* stats,
                    bool cold_pages) override {
    out->assign(keys.size(), LookupAnswer{});
    std::vector<Cursor> cs(keys.size());
    hash_keys(keys, cs, *out);
    LookupStats st;
    st.keys = keys.size();
    io::Status s = files_.store == StoreKind::arena ? walk_arena(cs, cold_pages, &st) : walk_rocks(cs, &st);
    if (stats) *stats = st;
    if (!s.ok()) out->clear();  // nothing of a failed lookup is an answer
    return s;
  }

  io::Status prove(const state::StateKey& key, StateProof* out) override {
    mpt::AccountProof p;
    p.address = key.address;
    std::vector<Cursor> cs(1);
    std::vector<LookupAnswer> ans(1);
    hash_keys({&key, 1}, cs, ans);
    mpt::StorageProof sp;
    cs[0].account_proof = &p.account_proof;
    cs[0].storage_proof = &sp.proof;
    LookupStats st;
    io::Status s = files_.store == StoreKind::arena ? walk_arena(cs, false, &st) : walk_rocks(cs, &st);
    if (!s.ok()) return s;
    const AccountInfo& a = ans[0].account;
    p.exists = a.exists;
    if (a.exists) {
      p.nonce = a.nonce;
      p.balance = a.balance;
      p.storage_root = a.storage_root;
      p.code_hash = a.code_hash;
    }
    if (key.slot) {
      sp.slot = *key.slot;
      if (ans[0].slot_value) sp.value = *ans[0].slot_value;
      p.storage_proofs.push_back(std::move(sp));
    }
    *out = std::move(p);
    return {};
  }

  io::Status verify(VerifyReport* report, const ProgressFn& progress) override {
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

 private:
  bool empty_state() const {
    return files_.store == StoreKind::arena ? files_.commit.root == kNoLocator
                                            : files_.manifest.root_hash == mpt::kEmptyRoot;
  }

  void hash_keys(std::span<const state::StateKey> keys, std::vector<Cursor>& cs, std::vector<LookupAnswer>& ans) {
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
      c.done = empty_state();
    }
  }

  io::Status run_checks(const std::vector<std::string>* keys) {
    const long bad = checks_.run();
    io::Status s;
    if (bad >= 0) {
      Origin o;
      o.loc = checks_.locs[size_t(bad)];
      if (keys) o.path_key = &(*keys)[checks_.key_index[size_t(bad)]];
      s = {io::Errc::corrupt_page, "mpt: " + o.name() + ": hash does not match its parent's reference"};
    }
    checks_.clear();
    return s;
  }

  // Advances cursor i through records whose pages are cached; when it needs a page that
  // is not, registers it as that page's waiter (the stream wakes it when the page lands).
  io::Status advance(Cursor& c, uint32_t i, LookupStats* st) {
    while (!c.done) {
      if (c.loc == kNoLocator) return {io::Errc::corrupt_page, "mpt: a hashed reference without a record child"};
      const uint64_t page = locator_page(c.loc);
      if (!reader_->loaded(page) && !reader_->request(page, i)) return {};
      RecordView rv;
      if (io::Status s = reader_->record(c.loc, &rv); !s.ok()) return s;
      Origin o;
      o.rec = &rv;
      o.loc = c.loc;
      // The top levels of the account trie are on many keys' paths (a batch of K random
      // keys shares its first log16(K) levels): their nodes are decoded once per batch.
      const DiskNode* decoded = nullptr;
      if (!c.storage && c.pos < memo_levels_) {
        auto [it, fresh] = memo_.try_emplace(c.loc, uint32_t(memo_nodes_.size()));
        if (fresh) {
          memo_nodes_.emplace_back();
          if (std::string err = decode_disk_node(rv.body, &memo_nodes_.back()); !err.empty()) {
            memo_nodes_.pop_back();
            memo_.erase(it);
            return {io::Errc::corrupt_page, "mpt: " + o.name() + ": " + err};
          }
        }
        decoded = &memo_nodes_[it->second];
      }
      if (io::Status s = step(c, rv.body, o, &st->nodes_visited, checks_, 0, decoded); !s.ok()) return s;
    }
    return {};
  }

  // Streamed walk: every cursor advances as soon as the page it waits for lands; the
  // reads the walks ask for are submitted every kPollEvery advances (a non-blocking poll
  // that also refills the device queue), so the queue stays full across levels and the
  // CPU work overlaps the reads. Hash checks run in batches of >= kCheckBatch nodes and
  // at the end: no answer is returned before every node on its path matched its parent's
  // hash (on any error the lookup fails and its answers are dropped by the caller).
  io::Status walk_arena(std::vector<Cursor>& cs, bool cold_pages, LookupStats* st) {
    constexpr size_t kPollEvery = 8;
    constexpr size_t kCheckBatch = 32;
    const uint64_t cpu0 = thread_cpu_ns();
    if (cold_pages) reader_->clear();
    checks_.reset();
    reader_->reset_in_flight_max();
    memo_.clear();
    memo_nodes_.clear();
    memo_levels_ = 0;
    for (size_t k = cs.size(); k >= 16; k /= 16) ++memo_levels_;
    memo_nodes_.reserve(size_t(1) << (4 * memo_levels_));
    const ReadCounters before = reader_->counters();
    std::vector<uint32_t> ready;
    ready.reserve(cs.size());
    for (size_t i = cs.size(); i-- > 0;)
      if (!cs[i].done) ready.push_back(uint32_t(i));
    io::Status s;
    size_t since_poll = 0;
    while (s.ok()) {
      while (!ready.empty() && s.ok()) {
        const uint32_t i = ready.back();
        ready.pop_back();
        s = advance(cs[i], i, st);
        if (s.ok() && ++since_poll >= kPollEvery) {
          since_poll = 0;
          s = reader_->poll(&ready, false);
        }
      }
      if (s.ok() && checks_.msgs.size() >= kCheckBatch) s = run_checks(nullptr);
      if (!s.ok() || reader_->idle()) break;
      s = reader_->poll(&ready, true);
    }
    if (s.ok()) s = run_checks(nullptr);
    if (!s.ok()) {
      reader_->abandon();
      checks_.clear();
    }
    const ReadCounters& after = reader_->counters();
    st->rounds = after.rounds - before.rounds;
    st->io_wait_ns = after.read_wall_ns - before.read_wall_ns;
    st->page_reads = after.page_reads - before.page_reads;
    st->bytes_read = after.bytes_read - before.bytes_read;
    st->io_waits = after.stream_waits - before.stream_waits;
    st->reads_in_flight_sum = after.stream_in_flight_sum - before.stream_in_flight_sum;
    st->reads_in_flight_max = after.stream_in_flight_max;
    st->reads_per_round.clear();
    st->cpu_ns = thread_cpu_ns() - cpu0;
    return s;
  }

  io::Status walk_rocks(std::vector<Cursor>& cs, LookupStats* st) {
    std::vector<std::string> keys;
    std::unordered_map<std::string, uint32_t> index;
    std::vector<uint32_t> which(cs.size());
    std::vector<std::string_view> views;
    std::vector<std::string> values;
    std::vector<uint8_t> found;
    checks_.clear();
    for (;;) {
      keys.clear();
      index.clear();
      for (size_t i = 0; i < cs.size(); ++i) {
        if (cs[i].done) continue;
        std::string k = cs[i].path_key();
        auto [it, fresh] = index.try_emplace(std::move(k), uint32_t(keys.size()));
        if (fresh) keys.push_back(it->first);
        which[i] = it->second;
      }
      if (keys.empty()) return {};
      views.assign(keys.begin(), keys.end());
      if (io::Status s = files_.rocks->multi_get(views, &values, &found); !s.ok()) return s;
      ++st->rounds;
      st->page_reads += keys.size();
      st->reads_per_round.push_back(uint32_t(keys.size()));
      for (const auto& v : values) st->bytes_read += v.size();
      for (size_t i = 0; i < cs.size(); ++i) {
        if (cs[i].done) continue;
        const uint32_t w = which[i];
        Origin o;
        o.path_key = &keys[w];
        if (!found[w]) return {io::Errc::not_found, "mpt: " + o.name() + " is missing (its parent references it)"};
        const std::string& v = values[w];
        if (io::Status s = step(cs[i], {reinterpret_cast<const uint8_t*>(v.data()), v.size()}, o, &st->nodes_visited,
                                checks_, w);
            !s.ok())
          return s;
      }
      if (io::Status s = run_checks(&keys); !s.ok()) return s;
    }
  }

  // ---- verify ---------------------------------------------------------------------------

  // The 32-byte key of a leaf: the item's nibbles, then the leaf's own path.
  static void leaf_key(const VerifyItem& it, const DiskNode& n, uint8_t* out32) {
    std::memset(out32, 0, 32);
    for (uint32_t i = 0; i < it.pos; ++i) out32[i / 2] |= uint8_t(it.path[i] << (i & 1 ? 0 : 4));
    for (uint32_t i = 0; i < n.path_len && it.pos + i < 64; ++i) {
      const uint32_t q = it.pos + i;
      out32[q / 2] |= uint8_t(n.path[i] << (q & 1 ? 0 : 4));
    }
  }

  // A storage leaf (its hash checked): its record and value checked, counted, handed to
  // the leaf sink with its 64-byte key (owner, slot hash).
  io::Status visit_storage_leaf(const DiskNode& n, const RecordView* rv, const VerifyItem& it, const Origin& o,
                                VerifyReport* r) {
    auto fail = [&](const std::string& why) { return io::Status{io::Errc::corrupt_page, "mpt verify: " + o.name() + ": " + why}; };
    if (rv)
      if (std::string err = check_mpt_record(rv->kind, rv->child_count, n, true, false); !err.empty()) return fail(err);
    state::Bytes32 v;
    if (std::string err = decode_storage_value(n.value, &v); !err.empty()) return fail(err);
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
  io::Status visit_account_leaf(const DiskNode& n, const RecordView* rv, const VerifyItem& it, const Origin& o,
                                VerifyReport* r, std::vector<VerifyItem>* stack) {
    auto fail = [&](const std::string& why) { return io::Status{io::Errc::corrupt_page, "mpt verify: " + o.name() + ": " + why}; };
    mpt::AccountFields f;
    if (std::string err = mpt::decode_account_rlp(n.value, &f); !err.empty()) return fail(err);
    const bool has_storage = f.storage_root != mpt::kEmptyRoot;
    if (rv) {
      if (std::string err = check_mpt_record(rv->kind, rv->child_count, n, false, has_storage); !err.empty()) return fail(err);
    } else if (has_storage && files_.store == StoreKind::arena) {
      return fail("embedded account leaf with storage");
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
  io::Status visit_child(const MptChildRef& ref, uint32_t consumed, uint32_t hashed_index, const uint8_t* nibs,
                         const RecordView* rv, const VerifyItem& it, const Origin& o, VerifyReport* r,
                         std::vector<VerifyItem>* stack) {
    VerifyItem c = it;
    for (uint32_t i = 0; i < consumed; ++i) c.path[it.pos + i] = nibs[i];
    c.pos = uint8_t(it.pos + consumed);
    if (ref.kind == MptChildRef::embedded) {
      Origin eo = o;
      eo.rec = nullptr;
      return visit({ref.bytes, ref.len}, nullptr, c, eo, r, stack);
    }
    if (!rv && files_.store == StoreKind::arena)
      return {io::Errc::corrupt_page, "mpt verify: " + o.name() + ": embedded node with a hashed child"};
    std::memcpy(c.expect.data(), ref.bytes, 32);
    c.loc = rv ? rv->child(hashed_index) : kNoLocator;
    stack->push_back(c);
    return {};
  }

  // Visits one node (hash already checked): counts it, checks it, queues its hashed
  // children; embedded children are visited recursively from the parent's bytes.
  io::Status visit(std::span<const uint8_t> body, const RecordView* rv, const VerifyItem& it, const Origin& o,
                   VerifyReport* r, std::vector<VerifyItem>* stack) {
    DiskNode n;
    if (std::string err = decode_disk_node(body, &n); !err.empty())
      return {io::Errc::corrupt_page, "mpt verify: " + o.name() + ": " + err};
    auto fail = [&](const std::string& why) { return io::Status{io::Errc::corrupt_page, "mpt verify: " + o.name() + ": " + why}; };
    if (n.kind == DiskNode::leaf) {
      if (it.pos + n.path_len != 64) return fail("leaf at nibble " + std::to_string(it.pos + n.path_len) + ", not 64");
      return it.storage ? visit_storage_leaf(n, rv, it, o, r) : visit_account_leaf(n, rv, it, o, r, stack);
    }
    if (rv)
      if (std::string err = check_mpt_record(rv->kind, rv->child_count, n, it.storage, false); !err.empty()) return fail(err);
    if (n.kind == DiskNode::extension) {
      if (it.pos + n.path_len >= 64) return fail("extension reaches the end of the key");
      return visit_child(n.refs[0], n.path_len, 0, n.path.data(), rv, it, o, r, stack);
    }
    if (it.pos >= 64) return fail("branch below a full key");
    if (!n.value.empty()) return fail("branch with a value in a secure trie");
    // Children queued in nibble order (verify_all turns the queue over onto its stack, so
    // they are read in the order they were packed in, which keeps the page cache warm).
    for (uint32_t nib = 0; nib < 16; ++nib) {
      const MptChildRef& ref = n.refs[nib];
      if (ref.kind == MptChildRef::none) continue;
      const uint8_t nb = uint8_t(nib);
      if (io::Status s = visit_child(ref, 1, n.hashed_index(nib), &nb, rv, it, o, r, stack); !s.ok()) return s;
    }
    return {};
  }

  // verify_all's batch: the items taken from the stack, their bodies (msgs, lens: in the
  // arena's cached records or the RocksDB values), and buffers reused across batches.
  struct VerifyBatch {
    std::vector<VerifyItem> items, pushed;
    std::vector<Locator> locs;
    std::vector<std::string> keys;
    std::vector<std::string_view> views;
    std::vector<std::string> values;
    std::vector<uint8_t> found;
    std::vector<RecordView> rvs;
    std::vector<const uint8_t*> msgs;
    std::vector<size_t> lens;
    std::vector<uint8_t> hashes;
    std::vector<uint8_t> page_seen;  // arena: pages counted in the report
  };

  // Arena: the batch's records loaded in one submission (the page cache dropped past
  // kVerifyCachePages), their bodies in b.msgs; each page counted once.
  io::Status load_verify_batch_arena(VerifyBatch& b, VerifyReport* r) {
    const size_t m = b.items.size();
    if (reader_->cached_pages() > kVerifyCachePages) reader_->clear();
    b.locs.clear();
    for (const auto& it : b.items) {
      if (it.loc == kNoLocator) return {io::Errc::corrupt_page, "mpt verify: a hashed reference without a record child"};
      b.locs.push_back(it.loc);
    }
    if (io::Status s = reader_->load(b.locs); !s.ok()) return s;
    b.rvs.resize(m);
    for (size_t i = 0; i < m; ++i) {
      if (io::Status s = reader_->record(b.items[i].loc, &b.rvs[i]); !s.ok()) return s;
      b.msgs[i] = b.rvs[i].body.data();
      b.lens[i] = b.rvs[i].body.size();
      const uint64_t pg = locator_page(b.items[i].loc);
      if (pg >= b.page_seen.size()) b.page_seen.resize(std::max<size_t>(pg + 1, b.page_seen.size() * 2), 0);
      if (!b.page_seen[pg]) { b.page_seen[pg] = 1; ++r->pages; }
    }
    return {};
  }

  // RocksDB: one MultiGet of the batch's path keys, the values' bytes counted.
  io::Status load_verify_batch_rocks(VerifyBatch& b, VerifyReport* r) {
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
      b.msgs[i] = reinterpret_cast<const uint8_t*>(b.values[i].data());
      b.lens[i] = b.values[i].size();
      r->bytes += b.values[i].size();
    }
    return {};
  }

  // The batch's bodies hashed in one keccak256 batch, each checked against its parent's
  // reference and visited; the children go to b.pushed (item 0's first, in nibble order).
  io::Status check_verify_batch(VerifyBatch& b, bool arena, VerifyReport* r) {
    const size_t m = b.items.size();
    b.hashes.resize(32 * m);
    st::kernels::keccak256_batch(b.msgs.data(), b.lens.data(), b.hashes.data(), m);
    b.pushed.clear();
    for (size_t i = 0; i < m; ++i) {
      Origin o;
      o.loc = arena ? b.items[i].loc : kNoLocator;
      o.path_key = arena ? nullptr : &b.keys[i];
      o.rec = arena ? &b.rvs[i] : nullptr;
      if (std::memcmp(b.hashes.data() + 32 * i, b.items[i].expect.data(), 32) != 0)
        return {io::Errc::corrupt_page, "mpt verify: " + o.name() + ": hash does not match its parent's reference"};
      ++r->nodes;
      if (io::Status s = visit({b.msgs[i], b.lens[i]}, o.rec, b.items[i], o, r, &b.pushed); !s.ok()) return s;
    }
    return {};
  }

  io::Status verify_all(VerifyReport* r, const ProgressFn& progress) {
    r->root = files_.manifest.root_hash;
    if (empty_state()) {
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
      b.msgs.assign(m, nullptr);
      b.lens.assign(m, 0);
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

  DbFiles files_;
  std::unique_ptr<PageReader> reader_;
  HashChecks checks_;
  // walk_arena: nodes of the account trie's top memo_levels_ levels, decoded once per batch.
  std::unordered_map<Locator, uint32_t> memo_;
  std::vector<DiskNode> memo_nodes_;
  uint32_t memo_levels_ = 0;
};

}  // namespace

io::Status open_mpt(DbFiles&& files, const DbOptions& o, std::unique_ptr<TreeDb>* out) {
  (void)o;
  if (files.store == StoreKind::arena && !files.arena) return {io::Errc::bad_argument, "mpt open: arena store not open"};
  if (files.store == StoreKind::rocksdb && !files.rocks) return {io::Errc::bad_argument, "mpt open: RocksDB store not open"};
  *out = std::make_unique<MptTreeDb>(std::move(files));
  return {};
}

}  // namespace st::persist
