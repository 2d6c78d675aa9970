// mpt/build: build_mpt, the write side of the persistent MPT (see mpt/db.h).
//
//   1. every account's address -> keccak256 (batch kernel, chunks of 4096), sorted: the
//      account list (40 bytes per account) is the only state-sized structure in memory
//   2. the account trie is written by mpt::write_trie over that list; its leaf hook
//      generates account i, hashes + sorts its storage slots (one keccak batch), writes its
//      storage trie (mpt::write_trie again, chunked and batched like mpt::build_root; so
//      memory peaks at the largest contract), then returns the account RLP
//   3. arena: nodes go through the SubtreePacker into fresh COW pages, then commit_arena;
//      RocksDB: nodes go into WriteBatches of kRocksBatchNodes under their path keys, then
//      commit_rocks
#include <algorithm>
#include <cstring>
#include <optional>
#include <string>

#include "engine/mpt/account.h"
#include "engine/persist/mpt/db.h"
#include "kernels/support/clock.h"
#include "engine/persist/mpt/node.h"
#include "engine/mpt/builder.h"
#include "engine/persist/snapshot/rocks.h"
#include "engine/persist/snapshot/writer.h"
#include "engine/persist/subtree_packer.h"
#include "kernels/keccak256.h"

namespace st::persist {

namespace {

constexpr size_t kHashChunk = 4096;
constexpr size_t kRocksBatchNodes = 10000;
constexpr uint64_t kProgressMaxEvery = 1u << 16;  // keys (accounts + slots) between progress calls, at most

struct AccountKey {
  uint8_t hash[32];
  uint64_t index;
};
static_assert(offsetof(AccountKey, hash) == 0);

struct SlotEntry {
  uint8_t hash[32];
  uint8_t value[33];
  uint8_t value_len;
};
static_assert(offsetof(SlotEntry, hash) == 0);

// A sink knows which trie it receives: the account trie, or (between set_storage_owner
// calls) the storage trie of one account.
class DbSink : public mpt::NodeSink {
 public:
  void set_storage_owner(const uint8_t* account_hash) { owner_ = account_hash; }

 protected:
  MptRecordKind record_kind(mpt::NodeKind k) const {
    if (k == mpt::NodeKind::branch) return MptRecordKind::branch;
    if (k == mpt::NodeKind::extension) return MptRecordKind::extension;
    return owner_ ? MptRecordKind::leaf : MptRecordKind::account_leaf;
  }
  const uint8_t* owner_ = nullptr;
};

class PackerSink final : public DbSink {
 public:
  explicit PackerSink(SubtreePacker& p) : packer_(p) {}
  io::Status node(mpt::NodeKind kind, std::span<const uint8_t> rlp, uint32_t children, const uint8_t*,
                  uint32_t) override {
    return packer_.push(uint8_t(record_kind(kind)), rlp, children);
  }

 private:
  SubtreePacker& packer_;
};

class RocksSink final : public DbSink {
 public:
  explicit RocksSink(io::RocksKvStore& db) : db_(db) {}
  io::Status node(mpt::NodeKind, std::span<const uint8_t> rlp, uint32_t, const uint8_t* key32,
                  uint32_t depth) override {
    keys_.push_back(owner_ ? storage_node_key(owner_, key32, depth) : account_node_key(key32, depth));
    values_.emplace_back(reinterpret_cast<const char*>(rlp.data()), rlp.size());
    if (keys_.size() >= kRocksBatchNodes) return flush();
    return {};
  }
  io::Status flush() {
    if (keys_.empty()) return {};
    writes_.clear();
    for (size_t i = 0; i < keys_.size(); ++i) writes_.push_back({keys_[i], values_[i], false});
    io::Status s = db_.write_batch(writes_);
    keys_.clear();
    values_.clear();
    return s;
  }

 private:
  io::RocksKvStore& db_;
  std::vector<std::string> keys_, values_;
  std::vector<io::KvWrite> writes_;
};

// Account leaves: the account's storage trie first, then its RLP.
class AccountHook final : public mpt::LeafHook {
 public:
  AccountHook(const state::StateSource& src, const std::vector<AccountKey>& accs, DbSink& sink,
              const ProgressFn& progress, uint64_t total_keys)
      : src_(src), accs_(accs), sink_(sink), progress_(progress), total_keys_(total_keys),
        progress_every_(std::clamp<uint64_t>(total_keys / 64, 1, kProgressMaxEvery)) {}

  io::Status leaf(size_t i, std::vector<uint8_t>* value, uint32_t* children) override {
    src_.account(accs_[i].index, &rec_);
    slots_.clear();
    msgs_.clear();
    lens_.clear();
    for (const auto& [slot, v] : rec_.storage) {
      SlotEntry e;
      e.value_len = uint8_t(mpt::put_storage_value_rlp(e.value, v));
      if (e.value_len == 0) continue;  // zero = absent state
      slots_.push_back(e);
      msgs_.push_back(slot.data());
      lens_.push_back(32);
    }
    hashes_.resize(32 * slots_.size());
    if (!slots_.empty()) st::kernels::keccak256_batch(msgs_.data(), lens_.data(), hashes_.data(), slots_.size());
    for (size_t j = 0; j < slots_.size(); ++j) std::memcpy(slots_[j].hash, hashes_.data() + 32 * j, 32);
    std::sort(slots_.begin(), slots_.end(),
              [](const SlotEntry& a, const SlotEntry& b) { return std::memcmp(a.hash, b.hash, 32) < 0; });
    mpt::AccountFields f;
    f.nonce = rec_.nonce;
    f.balance = rec_.balance;
    if (!rec_.code.empty()) st::kernels::keccak256(rec_.code.data(), rec_.code.size(), f.code_hash.data());
    pairs_.resize(slots_.size());
    for (size_t j = 0; j < slots_.size(); ++j) pairs_[j] = {slots_[j].hash, 32, slots_[j].value, slots_[j].value_len};
    sink_.set_storage_owner(accs_[i].hash);
    mpt::BuildStats st;
    io::Status s = mpt::write_trie(pairs_, sink_, &f.storage_root, {}, &st);
    sink_.set_storage_owner(nullptr);
    storage_sunk += st.sunk;
    storage_bytes += st.sunk_bytes;
    if (!s.ok()) {
      if (s.code() == io::Errc::bad_argument)
        return {s.code(), s.message() + " in the storage of account #" + std::to_string(accs_[i].index)};
      return s;
    }
    *children = slots_.empty() ? 0 : 1;
    value->resize(mpt::account_rlp_size(f));
    mpt::put_account_rlp(value->data(), f);
    if (snapshot) {  // accounts come in key order, each followed by its slots in key order
      if (io::Status s = snapshot->add({accs_[i].hash, 32}, *value); !s.ok()) return s;
      uint8_t key[64];
      std::memcpy(key, accs_[i].hash, 32);
      for (const SlotEntry& e : slots_) {
        std::memcpy(key + 32, e.hash, 32);
        if (io::Status s = snapshot->add({key, 64}, {e.value, e.value_len}); !s.ok()) return s;
      }
    }
    slots_total += slots_.size();
    const uint64_t done = i + 1 + slots_total;
    if (progress_ && done - last_progress_ >= progress_every_) {
      last_progress_ = done;
      progress_(done, total_keys_);
    }
    return {};
  }

  uint64_t slots_total = 0;
  uint64_t storage_sunk = 0, storage_bytes = 0;  // storage-trie nodes sunk and their RLP bytes
  SnapshotSink* snapshot = nullptr;  // --snapshot: the flat table, written as the leaves come

 private:
  const state::StateSource& src_;
  const std::vector<AccountKey>& accs_;
  DbSink& sink_;
  const ProgressFn& progress_;
  uint64_t total_keys_;
  uint64_t progress_every_;  // about 64 calls per build
  uint64_t last_progress_ = 0;
  state::AccountRecord rec_;
  std::vector<SlotEntry> slots_;
  std::vector<mpt::KeyValue> pairs_;  // into slots_
  std::vector<const uint8_t*> msgs_;
  std::vector<size_t> lens_;
  std::vector<uint8_t> hashes_;
};

// Hashes every address and sorts: the account trie's key order.
io::Status hashed_accounts(const state::StateSource& src, std::vector<AccountKey>* out) {
  const uint64_t n = src.account_count();
  out->resize(n);
  state::AccountRecord rec;
  std::vector<state::Address> addrs(kHashChunk);
  std::vector<const uint8_t*> msgs(kHashChunk);
  std::vector<size_t> lens(kHashChunk, 20);
  std::vector<uint8_t> h(32 * kHashChunk);
  for (uint64_t b = 0; b < n; b += kHashChunk) {
    const size_t m = size_t(std::min<uint64_t>(kHashChunk, n - b));
    for (size_t j = 0; j < m; ++j) {
      const uint64_t i = b + j;
      std::optional<state::StateKey> k;
      if (src.storage_size(i) > 0) k = src.slot_key(i, 0);  // the address without generating the storage
      if (k) addrs[j] = k->address;
      else {
        src.account(i, &rec);
        addrs[j] = rec.address;
      }
      msgs[j] = addrs[j].data();
    }
    st::kernels::keccak256_batch(msgs.data(), lens.data(), h.data(), m);
    for (size_t j = 0; j < m; ++j) {
      std::memcpy((*out)[b + j].hash, h.data() + 32 * j, 32);
      (*out)[b + j].index = b + j;
    }
  }
  std::sort(out->begin(), out->end(),
            [](const AccountKey& a, const AccountKey& b) { return std::memcmp(a.hash, b.hash, 32) < 0; });
  for (size_t i = 1; i < out->size(); ++i)
    if (std::memcmp((*out)[i - 1].hash, (*out)[i].hash, 32) == 0)
      return {io::Errc::bad_argument, "mpt build: duplicate address (accounts #" + std::to_string((*out)[i - 1].index) +
                                          " and #" + std::to_string((*out)[i].index) + ")"};
  return {};
}

// One build's inputs and what it learns: the hashed accounts, the written tree's root and
// counts (account trie, storage tries), the manifest's fields and the report.
struct MptBuild {
  MptBuild(const state::StateSource& s, const ProgressFn& p) : src(s), progress(p) {}
  const state::StateSource& src;
  const ProgressFn& progress;
  std::vector<AccountKey> accs;
  uint64_t total_keys = 0;
  mpt::Hash32 root{};
  mpt::BuildStats counts;  // the account trie's
  DbFiles::Fields fields;
  uint64_t slots_written = 0, storage_sunk = 0, storage_bytes = 0;
  BuildReport rep;
};

// Writes the account trie (and through the hook every storage trie, and with snapshot
// the leaves in key order) into the sink.
io::Status write_tree(MptBuild& b, DbSink& sink, SnapshotSink* snapshot) {
  AccountHook hook(b.src, b.accs, sink, b.progress, b.total_keys);
  hook.snapshot = snapshot;
  std::vector<mpt::KeyValue> keys(b.accs.size());
  for (size_t i = 0; i < keys.size(); ++i) keys[i] = {b.accs[i].hash, 32, nullptr, 0};
  mpt::WriteOptions wo;
  wo.hook = &hook;
  io::Status s = mpt::write_trie(keys, sink, &b.root, wo, &b.counts);
  b.slots_written = hook.slots_total;
  b.storage_sunk = hook.storage_sunk;
  b.storage_bytes = hook.storage_bytes;
  return s;
}

// What the manifest and the report say about the written tree (after write_tree).
void fill_fields(MptBuild& b) {
  b.rep.nodes = b.counts.sunk + b.storage_sunk;
  b.rep.node_bytes = b.counts.sunk_bytes + b.storage_bytes;
  b.fields.root_hash = b.root;
  b.fields.node_count = b.rep.nodes;
  b.fields.key_count = b.rep.accounts + b.slots_written;
  b.fields.payload_bytes = b.rep.node_bytes;
}

// Arena: the tree packed into record pages (with o.snapshot also the flat snapshot) and
// committed in one copy-on-write commit; a failure before the commit aborts the space taken.
io::Status build_arena(DbFiles& files, const DbOptions& o, MptBuild& b) {
  PageWriter w(files.arena->pages(), files.arena->space());
  SubtreePacker packer(w);
  PackerSink sink(packer);
  std::vector<Locator> roots;
  std::optional<SnapshotWriter> snap;
  if (o.snapshot) snap.emplace(w);
  SnapshotRef snap_ref;
  io::Status s = write_tree(b, sink, snap ? &*snap : nullptr);
  if (s.ok()) s = packer.finish(&roots);
  if (s.ok() && snap) s = snap->finish(&snap_ref);
  if (s.ok() && roots.size() > 1) s = {io::Errc::bad_argument, "mpt build: more than one root record"};
  if (!s.ok()) {
    (void)w.finish();
    files.arena->space().abort();
    return s;
  }
  fill_fields(b);
  const uint64_t tc = st::monotonic_ns();
  s = files.commit_arena(w, roots.empty() ? kNoLocator : roots[0], b.fields, b.src.spec_json(), snap ? &snap_ref : nullptr);
  if (!s.ok()) return s;
  b.rep.commit_ns = st::monotonic_ns() - tc;
  b.rep.pages = packer.stats().pages;
  if (snap) {
    b.rep.snapshot_entries = snap_ref.entries;
    b.rep.snapshot_pages = snap->pages_written();
  }
  b.rep.page_fill = packer.stats().fill();
  return {};
}

// RocksDB: every node under its path key, in write batches (with o.snapshot the flat
// snapshot's entries into its column family as the leaves come), then the commit.
io::Status build_rocks(DbFiles& files, const DbOptions& o, MptBuild& b) {
  if (!files.rocks) return {io::Errc::bad_argument, "mpt build: RocksDB store not open"};
  RocksSink sink(*files.rocks);
  std::optional<RocksSnapshotWriter> snap;
  if (o.snapshot) {
    uint32_t family = 0;
    if (io::Status s = create_rocks_snapshot(*files.rocks, &family); !s.ok()) return s;
    snap.emplace(*files.rocks, family);
  }
  io::Status s = write_tree(b, sink, snap ? &*snap : nullptr);
  if (s.ok()) s = sink.flush();
  if (s.ok() && snap) s = snap->finish();
  if (!s.ok()) return s;
  fill_fields(b);
  const uint64_t tc = st::monotonic_ns();
  const SnapshotRef marker;  // RocksDB: counts 0 (snapshot/rocks.h)
  s = files.commit_rocks(b.fields, b.src.spec_json(), snap ? &marker : nullptr);
  if (!s.ok()) return s;
  b.rep.commit_ns = st::monotonic_ns() - tc;
  if (snap) b.rep.snapshot_entries = snap->entries();
  return {};
}

}  // namespace

io::Status build_mpt(DbFiles& files, const DbOptions& o, const state::StateSource& src, BuildReport* report,
                     const ProgressFn& progress) {
  const uint64_t t0 = st::monotonic_ns();
  MptBuild b{src, progress};
  b.rep.accounts = src.account_count();
  b.rep.slots = src.slot_count();
  b.total_keys = b.rep.accounts + b.rep.slots;
  if (io::Status s = hashed_accounts(src, &b.accs); !s.ok()) return s;
  io::Status s = files.store == StoreKind::arena ? build_arena(files, o, b) : build_rocks(files, o, b);
  if (!s.ok()) return s;
  if (progress) progress(b.total_keys, b.total_keys);
  b.rep.root = b.root;
  b.rep.slots = b.slots_written;
  b.rep.disk_bytes = files.disk_bytes();
  b.rep.build_ns = st::monotonic_ns() - t0;
  if (report) *report = b.rep;
  return {};
}

}  // namespace st::persist
