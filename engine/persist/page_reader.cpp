// page_reader: one submission per round of distinct uncached pages (see header).
#include "engine/persist/page_reader.h"
#include "io/monotonic_clock.h"

#include <algorithm>

namespace st::persist {

PageReader::PageReader(io::NodeStore& store) : store_(store) {}

io::Status PageReader::load(std::span<const Locator> locators) {
  std::vector<uint64_t> ids;
  ids.reserve(locators.size());
  for (Locator l : locators)
    if (l != kNoLocator) ids.push_back(locator_page(l));
  return load_pages(ids);
}

io::Status PageReader::load_pages(std::span<const uint64_t> page_ids) {
  want_.clear();
  for (uint64_t p : page_ids) {
    if (pages_.count(p)) {
      ++counters_.cache_hits;
      continue;
    }
    want_.push_back(p);
  }
  std::sort(want_.begin(), want_.end());
  want_.erase(std::unique(want_.begin(), want_.end()), want_.end());
  if (want_.empty()) return {};

  const uint32_t payload = store_.payload_bytes();
  std::vector<Page> fresh(want_.size());
  std::vector<io::PageOp> ops(want_.size());
  for (size_t i = 0; i < want_.size(); ++i) {
    fresh[i].bytes.reset(new uint8_t[payload]);
    ops[i] = {io::PageOpKind::read, want_[i], fresh[i].bytes.get(), uint64_t(i)};
  }
  const uint64_t t0 = io::monotonic_ns();
  std::vector<io::PageCompletion> done;
  io::Status s = io::run_batch(store_, ops, &done);
  counters_.read_wall_ns += io::monotonic_ns() - t0;
  ++counters_.rounds;
  counters_.page_reads += want_.size();
  counters_.bytes_read += uint64_t(want_.size()) * store_.page_size();
  counters_.reads_per_round.push_back(uint32_t(want_.size()));
  if (!s.ok()) return s;
  for (size_t i = 0; i < want_.size(); ++i) {
    std::string err = decode_record_page(want_[i], std::span<const uint8_t>(fresh[i].bytes.get(), payload),
                                         &fresh[i].parsed);
    if (!err.empty()) return io::Status(io::Errc::corrupt_page, err);
  }
  for (size_t i = 0; i < want_.size(); ++i) pages_.emplace(want_[i], std::move(fresh[i]));
  return {};
}

io::Status PageReader::record(Locator l, RecordView* out) const {
  auto it = pages_.find(locator_page(l));
  if (it == pages_.end())
    return io::Status(io::Errc::bad_argument, "record " + std::to_string(locator_page(l)) + ":" +
                                                  std::to_string(locator_index(l)) + ": page not loaded");
  const uint32_t i = locator_index(l);
  if (i >= it->second.parsed.records.size())
    return io::Status(io::Errc::corrupt_page, "page " + std::to_string(locator_page(l)) + ": no record " +
                                                  std::to_string(i) + " (the page holds " +
                                                  std::to_string(it->second.parsed.records.size()) + ")");
  *out = it->second.parsed.records[i];
  return {};
}

void PageReader::clear() { pages_.clear(); }

}  // namespace st::persist
