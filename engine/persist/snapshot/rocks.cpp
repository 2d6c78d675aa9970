// snapshot/rocks: the flat snapshot as a RocksDB column family: build writer, a block's
// writes, and the table readers see (snapshot/rocks.h).
#include "engine/persist/snapshot/rocks.h"

#include <algorithm>

#include "engine/persist/db_files.h"

namespace st::persist {

namespace {
std::string_view as_chars(std::span<const uint8_t> b) { return {reinterpret_cast<const char*>(b.data()), b.size()}; }
std::span<const uint8_t> as_bytes(std::string_view s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }
}  // namespace

io::Status create_rocks_snapshot(io::RocksKvStore& db, uint32_t* family) {
  return db.create_family(std::string(kSnapshotFamily), family);
}

io::Status RocksSnapshotWriter::add(std::span<const uint8_t> key, std::span<const uint8_t> value) {
  if (std::string e = snapshot_entry_error(key, value); !e.empty()) return {io::Errc::bad_argument, e};
  if (entries_ > 0 && compare_snapshot_keys(as_bytes(last_key_), key) >= 0)
    return {io::Errc::bad_argument, "snapshot: keys not strictly ascending"};
  last_key_.assign(as_chars(key));
  keys_.emplace_back(as_chars(key));
  values_.emplace_back(as_chars(value));
  ++entries_;
  return keys_.size() >= kBatch ? finish() : io::Status();
}

io::Status RocksSnapshotWriter::finish() {
  if (keys_.empty()) return {};
  std::vector<io::KvWrite> w(keys_.size());
  for (size_t i = 0; i < keys_.size(); ++i) w[i] = {keys_[i], values_[i], false, family_};
  io::Status s = db_.write_batch(w);
  keys_.clear();
  values_.clear();
  return s;
}

void append_snapshot_writes(const SnapshotDelta& delta, uint32_t family, std::vector<std::string>* range_ends,
                            std::vector<io::KvWrite>* out) {
  // A prefix's range ends past every key of up to kSnapMaxKey bytes that starts with it.
  range_ends->clear();
  range_ends->reserve(delta.prefixes().size());
  for (const auto& p : delta.prefixes())
    range_ends->push_back(std::string(as_chars(p)) + std::string(kSnapMaxKey + 1 - std::min(p.size(), kSnapMaxKey), '\xff'));
  for (size_t i = 0; i < delta.prefixes().size(); ++i)
    out->push_back({as_chars(delta.prefixes()[i]), (*range_ends)[i], false, family, true});
  for (const auto& k : delta.erases()) out->push_back({as_chars(k), {}, true, family});
  for (const auto& [k, v] : delta.puts()) out->push_back({as_chars(k), as_chars(v), false, family});
}

namespace {

class RocksSnapshotTable final : public SnapshotTable {
 public:
  RocksSnapshotTable(io::RocksKvStore& db, uint32_t family) : db_(db), family_(family) {}

  io::Status lookup(std::span<const SnapshotKey> keys, std::vector<std::optional<std::vector<uint8_t>>>* values,
                    SnapshotLookupStats* stats, bool) override {
    views_.clear();
    for (const SnapshotKey& k : keys) views_.push_back(as_chars(k.view()));
    values->clear();
    if (io::Status s = db_.multi_get(views_, &got_, &found_, family_); !s.ok()) return s;
    values->resize(keys.size());
    SnapshotLookupStats st;
    st.keys = keys.size();
    st.rounds = keys.empty() ? 0 : 1;
    st.page_reads = keys.size();
    for (size_t i = 0; i < keys.size(); ++i) {
      if (!found_[i]) continue;
      const std::span<const uint8_t> v = as_bytes(got_[i]);
      if (v.size() > kSnapMaxValue) {
        values->clear();
        return {io::Errc::corrupt_page, "snapshot: the value of key #" + std::to_string(i) + " is longer than 255 bytes"};
      }
      (*values)[i].emplace(v.begin(), v.end());
      st.bytes_read += v.size();
    }
    if (stats) *stats = st;
    return {};
  }

  io::Status scan(const EntryFn& fn) override {
    std::string bad;
    io::Status s = db_.for_each_in(family_, [&](std::string_view k, std::string_view v) {
      if (std::string e = snapshot_entry_error(as_bytes(k), as_bytes(v)); !e.empty()) {
        bad = e;
        return false;
      }
      return fn(as_bytes(k), as_bytes(v));
    });
    if (!s.ok()) return s;
    if (!bad.empty()) return {io::Errc::corrupt_page, bad};
    return {};
  }

  uint64_t data_pages() const override { return 0; }
  uint64_t index_pages() const override { return 0; }
  const ReadCounters& read_counters() const override { return none_; }

 private:
  io::RocksKvStore& db_;
  uint32_t family_;
  std::vector<std::string_view> views_;
  std::vector<std::string> got_;
  std::vector<uint8_t> found_;
  ReadCounters none_;
};

}  // namespace

io::Status rocks_snapshot_family(const DbFiles& files, uint32_t* family) {
  if (files.store != StoreKind::rocksdb || !files.rocks)
    return {io::Errc::bad_argument, "snapshot: not a RocksDB database"};
  if (!files.commit.snapshot) return {io::Errc::not_found, "the database has no snapshot (build it with --snapshot)"};
  const int f = files.rocks->family(kSnapshotFamily);
  if (f < 0)
    return {io::Errc::corrupt_page, files.dir + ": the commit record names a snapshot, RocksDB holds no column family " +
                                        std::string(kSnapshotFamily)};
  *family = uint32_t(f);
  return {};
}

io::Status open_rocks_snapshot(DbFiles& files, std::unique_ptr<SnapshotTable>* out) {
  uint32_t family = 0;
  if (io::Status s = rocks_snapshot_family(files, &family); !s.ok()) return s;
  *out = std::make_unique<RocksSnapshotTable>(*files.rocks, family);
  return {};
}

}  // namespace st::persist
