// snapshot/db: state keys -> snapshot keys, snapshot values -> lookup answers, and the
// TreeDb view that answers lookups from the snapshot (snapshot/db.h).
#include "engine/persist/snapshot/db.h"

#include <cstring>
#include <map>

#include "engine/bintrie/keys.h"
#include "engine/mpt/account.h"
#include "engine/persist/bintrie/disk.h"
#include "engine/persist/db_files.h"
#include "engine/persist/mpt/node.h"
#include "engine/persist/snapshot/rocks.h"
#include "kernels/keccak256.h"

namespace st::persist {

void SnapshotKeyer::keys(const state::StateKey& k, bool account_part, std::vector<SnapshotKey>* out) const {
  SnapshotKey s;
  if (params.tree_kind == io::TreeKind::mpt) {
    kernels::keccak256(k.address.data(), k.address.size(), s.bytes);
    s.len = 32;
    if (!account_part && k.slot) {
      kernels::keccak256(k.slot->data(), 32, s.bytes + 32);
      s.len = 64;
    }
    out->push_back(s);
    return;
  }
  bintrie::Hasher h;
  (void)bintrie_disk::hasher_for(params, &h);
  const bintrie::KeyScheme ks{h, bintrie::TreeIndexEndian::big};
  s.len = 32;
  if (!account_part && k.slot) {
    const state::Hash32 key = bintrie::storage_slot_key(ks, k.address, *k.slot);
    std::memcpy(s.bytes, key.data(), 32);
    out->push_back(s);
    return;
  }
  const state::Hash32 basic = bintrie::basic_data_key(ks, k.address);
  std::memcpy(s.bytes, basic.data(), 32);
  out->push_back(s);
  s.bytes[31] = uint8_t(bintrie::kCodeHashLeafKey);
  out->push_back(s);
}

std::string snapshot_account(const io::StoreParams& p, const std::optional<std::vector<uint8_t>>* v, AccountInfo* a) {
  *a = AccountInfo{};
  if (p.tree_kind == io::TreeKind::mpt) {
    if (!v[0]) return "";
    mpt::AccountFields f;
    if (std::string e = mpt::decode_account_rlp(*v[0], &f); !e.empty()) return "snapshot account entry: " + e;
    a->exists = true;
    a->nonce = f.nonce;
    a->balance = f.balance;
    a->code_hash = f.code_hash;
    a->storage_root = f.storage_root;
    return "";
  }
  if (!v[0]) return "";
  if (v[0]->size() != 32 || (v[1] && v[1]->size() != 32)) return "snapshot binary-trie entry is not 32 bytes";
  state::Hash32 basic;
  std::memcpy(basic.data(), v[0]->data(), 32);
  const bintrie::BasicData b = bintrie::parse_basic_data(basic);
  a->exists = true;
  a->nonce = b.nonce;
  a->balance = b.balance_be;
  a->code_size = b.code_size;
  if (v[1]) std::memcpy(a->code_hash.data(), v[1]->data(), 32);
  return "";
}

std::string snapshot_slot(const io::StoreParams& p, const std::optional<std::vector<uint8_t>>& v,
                          std::optional<state::Hash32>* slot) {
  slot->reset();
  if (!v) return "";
  state::Hash32 out{};
  if (p.tree_kind == io::TreeKind::mpt) {
    if (std::string e = decode_storage_value(*v, &out); !e.empty()) return "snapshot slot entry: " + e;
  } else {
    if (v->size() != 32) return "snapshot binary-trie entry is not 32 bytes";
    std::memcpy(out.data(), v->data(), 32);
  }
  *slot = out;
  return "";
}

namespace {

class SnapshotDb final : public TreeDb {
 public:
  SnapshotDb(std::unique_ptr<TreeDb> tree, std::unique_ptr<SnapshotTable> snap, bool slot_key_accounts)
      : tree_(std::move(tree)), snap_(std::move(snap)), slot_key_accounts_(slot_key_accounts) {
    keyer_.params = tree_->manifest().params;
  }
  const io::Manifest& manifest() const override { return tree_->manifest(); }
  const std::string& source_spec() const override { return tree_->source_spec(); }
  io::Status verify(VerifyReport* report, const ProgressFn& progress) override { return tree_->verify(report, progress); }
  io::Status prove(const state::StateKey& key, StateProof* out) override { return tree_->prove(key, out); }
  std::vector<std::string> data_files() const override { return tree_->data_files(); }
  io::NodeStore* page_store() override { return tree_->page_store(); }
  io::Status open_snapshot(std::unique_ptr<SnapshotReader>* out) override { return tree_->open_snapshot(out); }
  io::Status open_snapshot_table(std::unique_ptr<SnapshotTable>* out) override { return tree_->open_snapshot_table(out); }
  // The lookups' reads are the snapshot's; page_reader() stays null (no tree pages to hand on).
  void record_read_latency(stats::LogHistogram* sink) override { snap_->set_latency_sink(sink); }

  io::Status lookup(std::span<const state::StateKey> keys, std::vector<LookupAnswer>* out, LookupStats* stats,
                    bool cold_pages) override {
    const uint64_t cpu0 = thread_cpu_ns();
    // Per answer: where its slot key and its account keys sit in the batch.
    std::vector<SnapshotKey> sk;
    std::vector<size_t> slot_at(keys.size(), SIZE_MAX), account_at(keys.size(), SIZE_MAX);
    std::map<state::Address, size_t> account_of;
    for (size_t i = 0; i < keys.size(); ++i) {
      if (keys[i].slot) {
        slot_at[i] = sk.size();
        keyer_.keys(keys[i], false, &sk);
        if (!slot_key_accounts_) continue;
      }
      auto [it, fresh] = account_of.emplace(keys[i].address, sk.size());
      if (fresh) keyer_.keys(keys[i], true, &sk);
      account_at[i] = it->second;
    }
    std::vector<std::optional<std::vector<uint8_t>>> values;
    SnapshotLookupStats ss;
    io::Status s = snap_->lookup(sk, &values, &ss, cold_pages);
    out->clear();
    if (s.ok()) {
      out->assign(keys.size(), LookupAnswer{});
      for (size_t i = 0; i < keys.size() && s.ok(); ++i) {
        std::string e;
        if (account_at[i] != SIZE_MAX) e = snapshot_account(keyer_.params, &values[account_at[i]], &(*out)[i].account);
        if (e.empty() && slot_at[i] != SIZE_MAX) e = snapshot_slot(keyer_.params, values[slot_at[i]], &(*out)[i].slot_value);
        if (!e.empty()) s = {io::Errc::corrupt_page, e};
      }
      if (!s.ok()) out->clear();
    }
    if (stats) {
      LookupStats st;
      st.keys = keys.size();
      st.rounds = ss.rounds;
      st.page_reads = ss.page_reads;
      if (ss.rounds && !tree_->page_store()) st.reads_per_round.push_back(uint32_t(ss.page_reads));  // RocksDB: one MultiGet
      st.bytes_read = ss.bytes_read;
      st.nodes_visited = sk.size();
      st.io_wait_ns = ss.io_wait_ns;
      st.io_waits = ss.io_waits;
      st.reads_in_flight_sum = ss.reads_in_flight_sum;
      st.reads_in_flight_max = ss.reads_in_flight_max;
      st.cpu_ns = thread_cpu_ns() - cpu0;
      *stats = st;
    }
    return s;
  }

 private:
  std::unique_ptr<TreeDb> tree_;
  std::unique_ptr<SnapshotTable> snap_;
  bool slot_key_accounts_;
  SnapshotKeyer keyer_;
};

}  // namespace

io::Status open_snapshot_table_of(DbFiles& files, std::unique_ptr<SnapshotTable>* out) {
  if (files.store == StoreKind::rocksdb) return open_rocks_snapshot(files, out);
  std::unique_ptr<SnapshotReader> r;
  if (io::Status s = open_snapshot_of(files, &r); !s.ok()) return s;
  *out = std::move(r);
  return {};
}

io::Status open_snapshot_view(std::unique_ptr<TreeDb> tree, bool slot_key_accounts, std::unique_ptr<TreeDb>* out,
                              ReadCounters* open_reads) {
  std::unique_ptr<SnapshotTable> snap;
  if (io::Status s = tree->open_snapshot_table(&snap); !s.ok()) return s;
  if (open_reads) *open_reads = snap->read_counters();
  *out = std::make_unique<SnapshotDb>(std::move(tree), std::move(snap), slot_key_accounts);
  return {};
}

}  // namespace st::persist
