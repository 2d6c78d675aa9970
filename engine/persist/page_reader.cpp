// page_reader: level-by-level loads and streamed page reads over one cache (see header).
#include "engine/persist/page_reader.h"
#include "engine/persist/buffer_pool.h"
#include "kernels/support/check.h"
#include "kernels/support/clock.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <ctime>

namespace st::persist {

namespace {
constexpr size_t kReapMax = 256;  // completions taken per store reap() call
constexpr uint64_t kWaitMax = 8;    // completions a blocking poll waits for, at most
constexpr size_t kPoolTake = 64;     // buffers taken from the pool at a time
constexpr size_t kKeepSpare = 16384; // buffers a cleared reader keeps for its next batch

}  // namespace

PageReader::PageReader(io::NodeStore& store) : store_(store) {}

PageReader::~PageReader() {
  abandon();
  for (auto& [id, p] : pages_) spare_.push_back(std::move(p.bytes));
  pages_.clear();
  BufferPool::instance().give(store_.payload_bytes(), &spare_);
}

io::Status PageReader::load(std::span<const Locator> locators) {
  std::vector<uint64_t> ids;
  ids.reserve(locators.size());
  for (Locator l : locators)
    if (l != kNoLocator) ids.push_back(locator_page(l));
  return load_pages(ids);
}

io::Status PageReader::load_pages(std::span<const uint64_t> page_ids) {
  assert(idle() && "load() during a stream");
  want_.clear();
  for (uint64_t p : page_ids) {
    if (pages_.count(p) || use_borrowed(p)) {
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
  if (spare_.size() < want_.size()) BufferPool::instance().take(payload, want_.size() - spare_.size(), &spare_);
  for (size_t i = 0; i < want_.size(); ++i) {
    fresh[i].bytes = std::move(spare_.back());
    spare_.pop_back();
    ops[i] = {io::PageOpKind::read, want_[i], fresh[i].bytes.get(), uint64_t(i)};
  }
  const uint64_t t0 = st::monotonic_ns();
  std::vector<io::PageCompletion> done;
  io::Status s = io::run_batch(store_, ops, &done);
  counters_.read_wall_ns += st::monotonic_ns() - t0;
  if (latency_sink_)
    for (const io::PageCompletion& c : done) latency_sink_->add(c.latency_ns);
  ++counters_.rounds;
  counters_.page_reads += want_.size();
  counters_.bytes_read += uint64_t(want_.size()) * store_.page_size();
  counters_.reads_per_round.push_back(uint32_t(want_.size()));
  auto recycle = [&] {
    for (auto& f : fresh) spare_.push_back(std::move(f.bytes));
  };
  if (!s.ok()) {
    recycle();
    return s;
  }
  for (size_t i = 0; i < want_.size(); ++i) {
    std::string err = check_page(want_[i], &fresh[i]);
    if (!err.empty()) {
      recycle();
      return io::Status(io::Errc::corrupt_page, err);
    }
  }
  for (size_t i = 0; i < want_.size(); ++i) pages_.emplace(want_[i], std::move(fresh[i]));
  return {};
}

bool PageReader::request(uint64_t page_id, uint32_t waiter) {
  if (pages_.count(page_id) || use_borrowed(page_id)) {
    ++counters_.cache_hits;
    return true;
  }
  auto [it, fresh] = in_flight_.try_emplace(page_id);
  if (fresh) {
    if (spare_.empty()) BufferPool::instance().take(store_.payload_bytes(), kPoolTake, &spare_);
    it->second.bytes = std::move(spare_.back());
    spare_.pop_back();
    queued_.push_back(page_id);
  } else {
    ++counters_.cache_hits;  // one read serves several walks
  }
  it->second.add_waiter(waiter);
  return false;
}

std::string PageReader::check_page(uint64_t page_id, Page* pg) const {
  std::string err = check_record_page(page_id, std::span<const uint8_t>(pg->bytes.get(), store_.payload_bytes()));
  pg->record_count = err.empty() ? checked_record_count(pg->bytes.get()) : 0;
  return err;
}

io::Status PageReader::finish_page(uint64_t page_id, Pending&& p, std::vector<uint32_t>* woken) {
  Page pg;
  pg.bytes = std::move(p.bytes);
  std::string err = check_page(page_id, &pg);
  if (!err.empty()) {
    spare_.push_back(std::move(pg.bytes));
    return io::Status(io::Errc::corrupt_page, err);
  }
  pages_.emplace(page_id, std::move(pg));
  if (p.has_waiter) woken->push_back(p.first_waiter);
  woken->insert(woken->end(), p.more_waiters.begin(), p.more_waiters.end());
  return {};
}

io::Status PageReader::poll(std::vector<uint32_t>* woken, bool block) {
  ++counters_.stream_polls;
  if (!queued_.empty()) {
    ops_.clear();
    for (uint64_t id : queued_) ops_.push_back({io::PageOpKind::read, id, in_flight_.at(id).bytes.get(), id});
    store_.submit(ops_);
    submitted_ += ops_.size();
    counters_.page_reads += ops_.size();
    counters_.bytes_read += uint64_t(ops_.size()) * store_.page_size();
    queued_.clear();
  }
  if (submitted_ == 0) return {};
  done_.resize(std::min<uint64_t>(submitted_, kReapMax));
  const uint64_t outstanding = submitted_;
  size_t n;
  if (block) {
    ++counters_.stream_waits;
    const uint64_t t0 = st::monotonic_ns();
    // Wait for a few completions when many reads are outstanding: the store refills its
    // queue at each completion while it waits, and the walks resume with several pages
    // at once instead of returning here after every single completion.
    n = store_.reap(done_, std::max<uint64_t>(1, std::min<uint64_t>(submitted_ / 4, kWaitMax)));
    counters_.read_wall_ns += st::monotonic_ns() - t0;
  } else {
    n = store_.reap(done_, 0);
  }
  if (n) {  // a wave: reads landed; how many were outstanding when they were reaped
    ++counters_.rounds;
    counters_.stream_in_flight_sum += outstanding;
    counters_.stream_in_flight_max = std::max(counters_.stream_in_flight_max, outstanding);
  }
  submitted_ -= n;
  io::Status first_error;
  for (size_t i = 0; i < n; ++i) {
    const io::PageCompletion& c = done_[i];
    if (latency_sink_) latency_sink_->add(c.latency_ns);
    auto it = in_flight_.find(c.page_id);
    assert(it != in_flight_.end() && "a completion for a page this reader did not submit");
    if (it == in_flight_.end()) continue;
    Pending p = std::move(it->second);
    in_flight_.erase(it);
    if (!first_error.ok()) {
      spare_.push_back(std::move(p.bytes));
      continue;
    }
    if (!c.ok()) {
      first_error = io::Status(c.code == io::Errc::ok ? io::Errc::sys : c.code, io::describe(c));
      spare_.push_back(std::move(p.bytes));
      continue;
    }
    first_error = finish_page(c.page_id, std::move(p), woken);
  }
  if (!first_error.ok()) {
    abandon();
    return first_error;
  }
  return {};
}

void PageReader::abandon() {
  while (submitted_ > 0) {
    done_.resize(std::min<uint64_t>(submitted_, kReapMax));
    const size_t n = store_.reap(done_, done_.size());
    submitted_ -= n;
    if (n == 0 && store_.outstanding() == 0) break;  // the store lost them: nothing can land
  }
  submitted_ = 0;
  for (auto& [id, p] : in_flight_) spare_.push_back(std::move(p.bytes));
  in_flight_.clear();
  queued_.clear();
}

size_t SharedPages::erase(std::span<const uint64_t> page_ids) {
  std::vector<std::unique_ptr<uint8_t[]>> freed;
  for (uint64_t p : page_ids) {
    auto it = pages_.find(p);
    if (it == pages_.end()) continue;
    freed.push_back(std::move(it->second.bytes));
    pages_.erase(it);
  }
  const size_t n = freed.size();
  if (n) BufferPool::instance().give(payload_bytes_, &freed);
  return n;
}

void SharedPages::clear() {
  if (pages_.empty()) return;
  std::vector<std::unique_ptr<uint8_t[]>> freed;
  freed.reserve(pages_.size());
  for (auto& [id, p] : pages_) freed.push_back(std::move(p.bytes));
  pages_.clear();
  BufferPool::instance().give(payload_bytes_, &freed);
}

bool SharedPages::add(uint64_t page_id, std::span<const uint8_t> payload) {
  ST_CHECK(payload_bytes_ == 0 || payload.size() == payload_bytes_, "a shared page set holds pages of one size");
  if (!check_record_page(page_id, payload).empty()) return false;
  std::vector<std::unique_ptr<uint8_t[]>> buf;
  BufferPool::instance().take(uint32_t(payload.size()), 1, &buf);
  CachedPage pg;
  pg.bytes = std::move(buf.back());
  buf.pop_back();
  std::memcpy(pg.bytes.get(), payload.data(), payload.size());
  pg.record_count = checked_record_count(pg.bytes.get());
  payload_bytes_ = uint32_t(payload.size());
  auto [it, fresh] = pages_.try_emplace(page_id);
  if (!fresh) buf.push_back(std::move(it->second.bytes));  // the page's older copy
  it->second = std::move(pg);
  if (!buf.empty()) BufferPool::instance().give(payload_bytes_, &buf);
  return true;
}

void PageReader::take_pages(SharedPages* out) {
  assert(idle() && "take_pages() during a stream");
  forget_last();
  out->clear();
  out->pages_ = std::move(pages_);
  out->payload_bytes_ = store_.payload_bytes();
  pages_.clear();
}

void PageReader::add_pages_to(SharedPages* out) {
  assert(idle() && "add_pages_to() during a stream");
  if (out->pages_.empty()) return take_pages(out);
  forget_last();
  out->pages_.merge(pages_);  // moves the nodes: no copy of a page
  for (auto& [id, p] : pages_) spare_.push_back(std::move(p.bytes));  // held by *out already
  pages_.clear();
}

const PageReader::Page* PageReader::find_page(uint64_t page_id) const {
  if (page_id == last_id_) return last_page_;
  if (auto it = pages_.find(page_id); it != pages_.end()) {
    // Own pages only (a borrowed set is its owner's to change); map nodes do not move on
    // insertion, so the pointer holds until clear() or take_pages() drops the pages.
    last_id_ = page_id, last_page_ = &it->second;
    return last_page_;
  }
  const CachedPage* p = borrowed_ ? borrowed_->find(page_id) : nullptr;
  if (!p && borrowed_more_) p = borrowed_more_->find(page_id);
  return p;
}

bool PageReader::use_borrowed(uint64_t page_id) {
  if (!(borrowed_ && borrowed_->contains(page_id)) && !(borrowed_more_ && borrowed_more_->contains(page_id))) return false;
  if (borrowed_used_.insert(page_id).second) ++counters_.pages_reused;
  return true;
}

uint32_t PageReader::records_in(uint64_t page_id) const {
  const Page* pg = find_page(page_id);
  return pg ? pg->record_count : 0;
}

void PageReader::used_pages(std::vector<uint64_t>* out) const {
  for (const auto& [id, page] : pages_) out->push_back(id);
  for (uint64_t id : borrowed_used_) out->push_back(id);
}

io::Status PageReader::record(Locator l, RecordView* out) const {
  const Page* pg = find_page(locator_page(l));
  if (!pg)
    return io::Status(io::Errc::bad_argument, "record " + std::to_string(locator_page(l)) + ":" +
                                                  std::to_string(locator_index(l)) + ": page not loaded");
  const uint32_t i = locator_index(l);
  if (i >= pg->record_count)
    return io::Status(io::Errc::corrupt_page, "page " + std::to_string(locator_page(l)) + ": no record " +
                                                  std::to_string(i) + " (the page holds " +
                                                  std::to_string(pg->record_count) + ")");
  *out = checked_record(pg->bytes.get(), i);
  return {};
}

void PageReader::clear() {
  assert(idle() && "clear() during a stream");
  forget_last();
  for (auto& [id, p] : pages_) spare_.push_back(std::move(p.bytes));
  pages_.clear();
  if (spare_.size() > kKeepSpare) {  // the surplus goes back to the process-wide pool
    std::vector<std::unique_ptr<uint8_t[]>> surplus;
    surplus.reserve(spare_.size() - kKeepSpare);
    while (spare_.size() > kKeepSpare) {
      surplus.push_back(std::move(spare_.back()));
      spare_.pop_back();
    }
    BufferPool::instance().give(store_.payload_bytes(), &surplus);
  }
}

}  // namespace st::persist
