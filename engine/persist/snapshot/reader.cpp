// snapshot/reader: in-memory index, batched streamed lookups and the ordered scan of the
// flat snapshot (snapshot/reader.h).
#include "engine/persist/snapshot/reader.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "engine/persist/db_files.h"
#include "kernels/support/byte_order.h"
#include "kernels/support/clock.h"

namespace st::persist {

namespace {
constexpr size_t kLoadWindow = 256;  // pages per load() round (open, scan)

io::Status corrupt(uint64_t page, const std::string& why) {
  return {io::Errc::corrupt_page, "snapshot page " + std::to_string(page) + ": " + why};
}
}  // namespace

SnapshotKey SnapshotKey::of(std::span<const uint8_t> k) {
  SnapshotKey s;
  s.len = uint8_t(std::min(k.size(), kSnapMaxKey));
  std::memcpy(s.bytes, k.data(), s.len);
  return s;
}

SnapshotReader::SnapshotReader(io::NodeStore& store, SnapshotRef ref)
    : store_(store), ref_(std::move(ref)), reader_(store) {}

io::Status SnapshotReader::open(io::NodeStore& store, const SnapshotRef& ref, std::unique_ptr<SnapshotReader>* out) {
  std::unique_ptr<SnapshotReader> r(new SnapshotReader(store, ref));
  if (io::Status s = r->load_index(); !s.ok()) return s;
  *out = std::move(r);
  return {};
}

io::Status SnapshotReader::load_index() {
  // Directory pages -> index page ids.
  if (io::Status s = reader_.load_pages(ref_.directory_pages); !s.ok()) return s;
  for (uint64_t dp : ref_.directory_pages) {
    RecordView rv;
    if (reader_.records_in(dp) != 1) return corrupt(dp, "a directory page holds one record");
    if (io::Status s = reader_.record(make_locator(dp, 0), &rv); !s.ok()) return s;
    if (rv.kind != kSnapDirectory || rv.child_count != 0 || rv.body.size() % 8 != 0 || rv.body.empty())
      return corrupt(dp, "not a snapshot directory record");
    for (size_t j = 0; j < rv.body.size(); j += 8) index_page_ids_.push_back(st::get_u64(rv.body.data() + j));
  }
  reader_.clear();
  if (index_page_ids_.size() != ref_.index_pages)
    return {io::Errc::corrupt_page, "snapshot: the directory lists " + std::to_string(index_page_ids_.size()) +
                                        " index pages, the commit record says " + std::to_string(ref_.index_pages)};
  // Index pages -> (first key, data page) per data page.
  for (size_t at = 0; at < index_page_ids_.size(); at += kLoadWindow) {
    const size_t m = std::min(kLoadWindow, index_page_ids_.size() - at);
    std::span<const uint64_t> ids(index_page_ids_.data() + at, m);
    if (io::Status s = reader_.load_pages(ids); !s.ok()) return s;
    for (uint64_t ip : ids) {
      const uint32_t n = reader_.records_in(ip);
      if (n == 0) return corrupt(ip, "an empty index page");
      for (uint32_t i = 0; i < n; ++i) {
        RecordView rv;
        if (io::Status s = reader_.record(make_locator(ip, i), &rv); !s.ok()) return s;
        std::span<const uint8_t> fk;
        if (rv.kind != kSnapIndex || rv.child_count != 1) return corrupt(ip, "not a snapshot index record");
        if (std::string e = decode_snapshot_index(rv.body, &fk); !e.empty()) return corrupt(ip, e);
        if (!data_page_.empty() &&
            compare_snapshot_keys({first_keys_.data() + kSnapMaxKey * (data_page_.size() - 1), first_key_len_.back()}, fk) >= 0)
          return corrupt(ip, "index keys not ascending");
        const Locator l = rv.child(0);
        if (locator_index(l) != 0) return corrupt(ip, "index child is not a page's record 0");
        data_page_.push_back(locator_page(l));
        first_key_len_.push_back(uint8_t(fk.size()));
        first_keys_.resize(kSnapMaxKey * data_page_.size(), 0);
        std::memcpy(first_keys_.data() + kSnapMaxKey * (data_page_.size() - 1), fk.data(), fk.size());
      }
    }
    reader_.clear();
  }
  if (data_page_.size() != ref_.data_pages)
    return {io::Errc::corrupt_page, "snapshot: the index lists " + std::to_string(data_page_.size()) +
                                        " data pages, the commit record says " + std::to_string(ref_.data_pages)};
  return {};
}

int64_t SnapshotReader::route(std::span<const uint8_t> key) const {
  // The last data page whose first key is <= key.
  size_t lo = 0, hi = data_page_.size();
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    if (compare_snapshot_keys({first_keys_.data() + kSnapMaxKey * mid, first_key_len_[mid]}, key) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return int64_t(lo) - 1;
}

io::Status SnapshotReader::find_in_page(uint64_t page, std::span<const uint8_t> key,
                                        std::optional<std::vector<uint8_t>>* out) const {
  out->reset();
  uint32_t lo = 0, hi = reader_.records_in(page);
  while (lo < hi) {
    const uint32_t mid = (lo + hi) / 2;
    RecordView rv;
    if (io::Status s = reader_.record(make_locator(page, mid), &rv); !s.ok()) return s;
    std::span<const uint8_t> k, v;
    if (rv.kind != kSnapEntry || rv.child_count != 0) return corrupt(page, "not a snapshot entry record");
    if (std::string e = decode_snapshot_entry(rv.body, &k, &v); !e.empty()) return corrupt(page, e);
    const int c = compare_snapshot_keys(k, key);
    if (c == 0) {
      out->emplace(v.begin(), v.end());
      return {};
    }
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return {};
}

io::Status SnapshotReader::lookup(std::span<const SnapshotKey> keys,
                                  std::vector<std::optional<std::vector<uint8_t>>>* values, SnapshotLookupStats* stats,
                                  bool cold_pages) {
  values->assign(keys.size(), std::nullopt);
  if (cold_pages) reader_.clear();
  const ReadCounters before = reader_.counters();
  reader_.reset_in_flight_max();
  std::vector<int64_t> page_of(keys.size());
  auto fail = [&](io::Status s) {
    reader_.abandon();
    values->clear();
    return s;
  };
  for (size_t i = 0; i < keys.size(); ++i) {
    page_of[i] = route(keys[i].view());
    if (page_of[i] < 0) continue;  // before every page: absent
    if (reader_.request(data_page_[size_t(page_of[i])], uint32_t(i)))
      if (io::Status s = find_in_page(data_page_[size_t(page_of[i])], keys[i].view(), &(*values)[i]); !s.ok())
        return fail(s);
  }
  std::vector<uint32_t> woken;
  while (!reader_.idle()) {
    woken.clear();
    if (io::Status s = reader_.poll(&woken, true); !s.ok()) {
      values->clear();
      return s;
    }
    for (uint32_t i : woken)
      if (io::Status s = find_in_page(data_page_[size_t(page_of[i])], keys[i].view(), &(*values)[i]); !s.ok())
        return fail(s);
  }
  if (stats) {
    const ReadCounters& c = reader_.counters();
    SnapshotLookupStats st;
    st.keys = keys.size();
    st.page_reads = c.page_reads - before.page_reads;
    st.bytes_read = c.bytes_read - before.bytes_read;
    st.io_waits = c.stream_waits - before.stream_waits;
    st.io_wait_ns = c.read_wall_ns - before.read_wall_ns;
    st.reads_in_flight_sum = c.stream_in_flight_sum - before.stream_in_flight_sum;
    st.reads_in_flight_max = c.stream_in_flight_max;
    st.rounds = c.rounds - before.rounds;
    *stats = st;
  }
  return {};
}

io::Status SnapshotReader::scan(const EntryFn& fn) {
  reader_.clear();
  std::vector<uint8_t> prev;
  bool have_prev = false;
  uint64_t entries = 0;
  for (size_t at = 0; at < data_page_.size(); at += kLoadWindow) {
    const size_t m = std::min(kLoadWindow, data_page_.size() - at);
    std::span<const uint64_t> ids(data_page_.data() + at, m);
    if (io::Status s = reader_.load_pages(ids); !s.ok()) return s;
    for (size_t j = 0; j < m; ++j) {
      // entries_of checks the page itself; here: keys ascending across pages, and the count.
      bool descending = false, stopped = false;
      if (io::Status s = entries_of(at + j, [&](std::span<const uint8_t> k, std::span<const uint8_t> v) {
            if (have_prev && compare_snapshot_keys(prev, k) >= 0) return !(descending = true);
            prev.assign(k.begin(), k.end());
            have_prev = true;
            ++entries;
            return !(stopped = !fn(k, v));
          });
          !s.ok())
        return s;
      if (descending) return corrupt(ids[j], "keys not ascending");
      if (stopped) {
        reader_.clear();
        return {};
      }
    }
    reader_.clear();
  }
  if (entries != ref_.entries)
    return {io::Errc::corrupt_page, "snapshot: the data pages hold " + std::to_string(entries) +
                                        " entries, the commit record says " + std::to_string(ref_.entries)};
  return {};
}

io::Status SnapshotReader::load_data_pages(std::span<const size_t> indices) {
  reader_.clear();
  std::vector<uint64_t> ids;
  for (size_t i : indices) ids.push_back(data_page_[i]);
  return reader_.load_pages(ids);
}

io::Status SnapshotReader::entries_of(size_t index, const EntryFn& fn) const {
  const uint64_t page = data_page_[index];
  const uint32_t n = reader_.records_in(page);
  if (n == 0) return corrupt(page, "an empty or unloaded data page");
  std::vector<uint8_t> prev;
  for (uint32_t i = 0; i < n; ++i) {
    RecordView rv;
    if (io::Status s = reader_.record(make_locator(page, i), &rv); !s.ok()) return s;
    std::span<const uint8_t> k, v;
    if (rv.kind != kSnapEntry || rv.child_count != 0) return corrupt(page, "not a snapshot entry record");
    if (std::string e = decode_snapshot_entry(rv.body, &k, &v); !e.empty()) return corrupt(page, e);
    if (i == 0 && compare_snapshot_keys(k, first_key(index)) != 0) return corrupt(page, "first key differs from the index's");
    if (i > 0 && compare_snapshot_keys(prev, k) >= 0) return corrupt(page, "keys not ascending");
    prev.assign(k.begin(), k.end());
    if (!fn(k, v)) break;
  }
  return {};
}

std::vector<uint64_t> SnapshotReader::pages() const {
  std::vector<uint64_t> p(data_page_);
  p.insert(p.end(), index_page_ids_.begin(), index_page_ids_.end());
  p.insert(p.end(), ref_.directory_pages.begin(), ref_.directory_pages.end());
  return p;
}

uint64_t SnapshotReader::index_bytes() const {
  return data_page_.size() * (8 + 1 + kSnapMaxKey) + index_page_ids_.size() * 8;
}

io::Status open_snapshot_of(DbFiles& files, std::unique_ptr<SnapshotReader>* out) {
  if (files.store != StoreKind::arena || !files.arena || !files.commit.snapshot)
    return {io::Errc::not_found, files.dir + ": the database has no snapshot (build it with --snapshot)"};
  return SnapshotReader::open(files.arena->pages(), *files.commit.snapshot, out);
}

}  // namespace st::persist
