// snapshot/writer: packs sorted entries into data pages, then writes the index and
// directory pages (snapshot/writer.h).
#include "engine/persist/snapshot/writer.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "engine/persist/record_page.h"
#include "kernels/support/byte_order.h"

namespace st::persist {

SnapshotWriter::SnapshotWriter(PageWriter& w) : w_(w), payload_(w.payload_bytes()), pending_bytes_(kPageHeaderBytes) {
  page_.resize(payload_);
}

bool SnapshotWriter::glued(std::span<const uint8_t> prev, std::span<const uint8_t> key) {
  return key.size() == 32 && prev.size() == 32 && key[31] == 1 && prev[31] == 0 &&
         std::memcmp(prev.data(), key.data(), 31) == 0;
}

io::Status SnapshotWriter::add_existing_page(uint64_t page, std::span<const uint8_t> first_key) {
  if (!pending_.empty()) return {io::Errc::bad_argument, "snapshot: an existing page inside a run"};
  if (have_last_ && compare_snapshot_keys(last_key_, first_key) >= 0)
    return {io::Errc::bad_argument, "snapshot: keys not strictly ascending"};
  last_key_.assign(first_key.begin(), first_key.end());
  have_last_ = true;
  data_pages_.push_back(page);
  first_keys_.emplace_back(first_key.begin(), first_key.end());
  return {};
}

io::Status SnapshotWriter::add(std::span<const uint8_t> key, std::span<const uint8_t> value) {
  if (std::string e = snapshot_entry_error(key, value); !e.empty()) return {io::Errc::bad_argument, e};
  if (have_last_ && compare_snapshot_keys(last_key_, key) >= 0)
    return {io::Errc::bad_argument, "snapshot: keys not strictly ascending"};
  const bool glue_to_previous = have_last_ && !pending_.empty() && glued(last_key_, key);
  last_key_.assign(key.begin(), key.end());
  have_last_ = true;
  std::vector<uint8_t> body;
  encode_snapshot_entry(key, value, &body);
  const uint32_t fp = record_footprint(body.size(), 0);
  if (pending_bytes_ + fp > payload_) {
    // A glued entry takes the one before it along to the next page (when that one is not
    // alone on the page: a page never stays empty).
    const size_t keep = glue_to_previous && pending_.size() > 1 ? 1 : 0;
    if (io::Status s = flush_page(keep); !s.ok()) return s;
  }
  pending_bytes_ += fp;
  pending_.push_back(std::move(body));
  ++entries_;
  return {};
}

io::Status SnapshotWriter::flush_page(size_t keep_last) {
  const size_t n = pending_.size() - keep_last;
  if (n == 0) return {};
  RecordPageBuilder b(payload_);
  for (size_t i = 0; i < n; ++i) b.add(kSnapEntry, {}, pending_[i]);
  b.finish(page_.data());
  uint64_t page = 0;
  if (io::Status s = w_.new_page(&page); !s.ok()) return s;
  if (io::Status s = w_.write(page, page_.data()); !s.ok()) return s;
  data_pages_.push_back(page);
  ++data_written_;
  std::span<const uint8_t> k, v;
  (void)decode_snapshot_entry(pending_[0], &k, &v);
  first_keys_.emplace_back(k.begin(), k.end());
  pending_.erase(pending_.begin(), pending_.begin() + ptrdiff_t(n));
  pending_bytes_ = kPageHeaderBytes;
  for (const auto& e : pending_) pending_bytes_ += record_footprint(e.size(), 0);
  return {};
}

io::Status SnapshotWriter::finish(SnapshotRef* out) {
  if (io::Status s = flush_page(0); !s.ok()) return s;
  SnapshotRef ref;
  ref.entries = entries_;
  ref.data_pages = data_pages_.size();
  // Index pages: one record per data page, in order.
  std::vector<uint64_t> index_ids;
  RecordPageBuilder b(payload_);
  std::vector<uint8_t> body;
  auto write_page = [&](std::vector<uint64_t>* ids) -> io::Status {
    b.finish(page_.data());
    uint64_t page = 0;
    if (io::Status s = w_.new_page(&page); !s.ok()) return s;
    if (io::Status s = w_.write(page, page_.data()); !s.ok()) return s;
    ids->push_back(page);
    b.clear();
    return {};
  };
  for (size_t i = 0; i < data_pages_.size(); ++i) {
    body.assign(1, uint8_t(first_keys_[i].size()));
    body.insert(body.end(), first_keys_[i].begin(), first_keys_[i].end());
    if (!b.fits(body.size(), 1))
      if (io::Status s = write_page(&index_ids); !s.ok()) return s;
    const Locator child = make_locator(data_pages_[i], 0);
    b.add(kSnapIndex, {&child, 1}, body);
  }
  if (b.records() > 0)
    if (io::Status s = write_page(&index_ids); !s.ok()) return s;
  ref.index_pages = index_ids.size();
  // Directory pages: one record each, as many index page ids as fit.
  const size_t per_dir = (payload_ - kPageHeaderBytes - record_footprint(0, 0)) / 8;
  for (size_t at = 0; at < index_ids.size(); at += per_dir) {
    const size_t m = std::min(per_dir, index_ids.size() - at);
    body.assign(8 * m, 0);
    for (size_t j = 0; j < m; ++j) st::put_u64(body.data() + 8 * j, index_ids[at + j]);
    b.add(kSnapDirectory, {}, body);
    if (io::Status s = write_page(&ref.directory_pages); !s.ok()) return s;
  }
  index_pages_ = ref.index_pages;
  directory_pages_ = ref.directory_pages.size();
  *out = std::move(ref);
  return {};
}

}  // namespace st::persist
