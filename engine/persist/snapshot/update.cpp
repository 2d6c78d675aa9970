// snapshot/update: a block's changes merged into the snapshot's reached data pages, copy-on-
// write, in the commit in progress (snapshot/update.h).
#include "engine/persist/snapshot/update.h"

#include <algorithm>
#include <memory>
#include <string>

#include "engine/persist/db_files.h"
#include "engine/persist/snapshot/reader.h"
#include "engine/persist/snapshot/writer.h"

namespace st::persist {

void SnapshotDelta::put(std::span<const uint8_t> key, std::span<const uint8_t> value) {
  puts_[Key(key.begin(), key.end())] = Key(value.begin(), value.end());
}
void SnapshotDelta::erase(std::span<const uint8_t> key) { erases_.emplace_back(key.begin(), key.end()); }
void SnapshotDelta::erase_prefix(std::span<const uint8_t> prefix) { prefixes_.emplace_back(prefix.begin(), prefix.end()); }

void SnapshotDelta::seal() {
  std::sort(erases_.begin(), erases_.end(), KeyLess{});
  erases_.erase(std::unique(erases_.begin(), erases_.end()), erases_.end());
}

bool SnapshotDelta::change_of(std::span<const uint8_t> key, std::optional<std::span<const uint8_t>>* out) const {
  if (auto it = puts_.find(Key(key.begin(), key.end())); it != puts_.end()) {
    *out = std::span<const uint8_t>(it->second);
    return true;
  }
  const bool erased = std::binary_search(erases_.begin(), erases_.end(), Key(key.begin(), key.end()), KeyLess{}) ||
                      std::any_of(prefixes_.begin(), prefixes_.end(), [&](const Key& p) {
                        return p.size() <= key.size() && std::equal(p.begin(), p.end(), key.begin());
                      });
  if (erased) *out = std::nullopt;
  return erased;
}

namespace {
constexpr size_t kLoadWindow = 256;
using Entry = std::pair<SnapshotDelta::Key, SnapshotDelta::Key>;

// The data pages (by index) the delta's puts, erases and erased prefixes reach.
std::vector<uint8_t> reached_pages(const SnapshotReader& old, const SnapshotDelta& delta) {
  const size_t n = old.data_page_count();
  std::vector<uint8_t> reached(n, 0);
  if (n == 0) return reached;
  auto mark = [&](std::span<const uint8_t> key) { reached[size_t(std::max<int64_t>(old.route(key), 0))] = 1; };
  for (const auto& [k, v] : delta.puts()) mark(k);
  for (const auto& k : delta.erases()) mark(k);
  for (const auto& p : delta.prefixes()) {
    std::vector<uint8_t> hi(p);
    hi.resize(kSnapMaxKey, 0xff);
    const int64_t lo_page = std::max<int64_t>(old.route(p), 0), hi_page = old.route(hi);
    for (int64_t i = lo_page; i <= hi_page; ++i) reached[size_t(i)] = 1;
  }
  return reached;
}

// Loaded data page i's entries with the delta applied (kept, changed or erased), plus the
// puts of its key range that it did not hold, in key order. *held: the entries it held.
io::Status merge_page(const SnapshotReader& old, size_t i, const SnapshotDelta& delta, std::vector<Entry>* merged,
                      uint64_t* held) {
  merged->clear();
  *held = 0;
  if (io::Status s = old.entries_of(i, [&](std::span<const uint8_t> k, std::span<const uint8_t> v) {
        ++*held;
        std::optional<std::span<const uint8_t>> c;
        if (!delta.change_of(k, &c)) merged->emplace_back(SnapshotDelta::Key(k.begin(), k.end()), SnapshotDelta::Key(v.begin(), v.end()));
        else if (c) merged->emplace_back(SnapshotDelta::Key(k.begin(), k.end()), SnapshotDelta::Key(c->begin(), c->end()));
        return true;
      });
      !s.ok())
    return s;
  const size_t n = old.data_page_count();
  auto lo = i == 0 ? delta.puts().begin() : delta.puts().lower_bound(SnapshotDelta::Key(old.first_key(i).begin(), old.first_key(i).end()));
  auto hi = i + 1 == n ? delta.puts().end()
                       : delta.puts().lower_bound(SnapshotDelta::Key(old.first_key(i + 1).begin(), old.first_key(i + 1).end()));
  const size_t kept = merged->size();
  for (auto it = lo; it != hi; ++it) {
    auto pos = std::lower_bound(merged->begin(), merged->begin() + ptrdiff_t(kept), it->first,
                                [](const Entry& e, const SnapshotDelta::Key& k) { return compare_snapshot_keys(e.first, k) < 0; });
    if (pos == merged->begin() + ptrdiff_t(kept) || compare_snapshot_keys(pos->first, it->first) != 0)
      merged->emplace_back(it->first, it->second);
  }
  std::sort(merged->begin(), merged->end(), [](const Entry& a, const Entry& b) { return compare_snapshot_keys(a.first, b.first) < 0; });
  return {};
}

// Every data page in key order through sw: an unreached one kept by id, a reached one
// merged with its changes, rewritten and released (read a window of reached pages at a
// time, with no write in flight). *entries_delta: entries added minus removed.
io::Status write_data_pages(SnapshotReader& old, const SnapshotDelta& delta, const std::vector<uint8_t>& reached,
                            PageWriter& w, SnapshotWriter& sw, io::CowSpace& space, SnapshotUpdateStats* st,
                            int64_t* entries_delta) {
  const size_t n = old.data_page_count();
  *entries_delta = 0;
  if (n == 0) {
    for (const auto& [k, v] : delta.puts())
      if (io::Status s = sw.add(k, v); !s.ok()) return s;
    *entries_delta = int64_t(delta.puts().size());
  }
  std::vector<Entry> merged;
  std::vector<size_t> window;
  size_t window_end = 0;  // pages [.., window_end) of the reached ones are loaded
  for (size_t i = 0; i < n; ++i) {
    if (!reached[i]) {
      if (io::Status s = sw.end_run(); !s.ok()) return s;
      if (io::Status s = sw.add_existing_page(old.data_page_id(i), old.first_key(i)); !s.ok()) return s;
      continue;
    }
    if (i >= window_end) {
      window.clear();
      for (size_t j = i; j < n && window.size() < kLoadWindow; ++j, window_end = j)
        if (reached[j]) window.push_back(j);
      if (io::Status s = w.finish(); !s.ok()) return s;  // no write in flight during the reads
      if (io::Status s = old.load_data_pages(window); !s.ok()) return s;
      st->pages_read += window.size();
    }
    uint64_t held = 0;
    if (io::Status s = merge_page(old, i, delta, &merged, &held); !s.ok()) return s;
    for (const auto& [k, v] : merged)
      if (io::Status s = sw.add(k, v); !s.ok()) return s;
    *entries_delta += int64_t(merged.size()) - int64_t(held);
    space.release(old.data_page_id(i));
    ++st->pages_released;
  }
  return sw.end_run();
}

}  // namespace

io::Status update_snapshot(DbFiles& files, PageWriter& w, SnapshotDelta& delta, SnapshotRef* out,
                           SnapshotUpdateStats* stats) {
  if (!files.arena || !files.commit.snapshot) return {io::Errc::bad_argument, "snapshot update: no snapshot"};
  io::CowSpace& space = files.arena->space();
  // The store serves one op stream: every read below waits until the writes are reaped.
  if (io::Status s = w.finish(); !s.ok()) return s;
  std::unique_ptr<SnapshotReader> old;
  if (io::Status s = SnapshotReader::open(files.arena->pages(), *files.commit.snapshot, &old); !s.ok()) return s;
  delta.seal();

  // 1. The data pages the changes reach; 2. pages in order: kept by id, or merged with
  // their changes and rewritten.
  const std::vector<uint8_t> reached = reached_pages(*old, delta);
  SnapshotWriter sw(w);
  SnapshotUpdateStats st;
  int64_t delta_entries = 0;
  if (io::Status s = write_data_pages(*old, delta, reached, w, sw, space, &st, &delta_entries); !s.ok()) return s;

  // 3. The old index and directory pages go; new ones name the new page list.
  for (uint64_t p : old->index_page_ids()) space.release(p);
  for (uint64_t p : files.commit.snapshot->directory_pages) space.release(p);
  st.pages_released += old->index_page_ids().size() + files.commit.snapshot->directory_pages.size();
  SnapshotRef ref;
  if (io::Status s = sw.finish(&ref); !s.ok()) return s;
  ref.entries = uint64_t(int64_t(files.commit.snapshot->entries) + delta_entries);
  st.pages_written = sw.pages_written();
  st.entries_delta = delta_entries;
  if (stats) *stats = st;
  *out = std::move(ref);
  return {};
}

}  // namespace st::persist
