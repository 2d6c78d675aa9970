// page_reader: the read side of the persistent tries, in two modes over one page cache.
//
// Level by level (verify, proofs): the caller collects the locators it needs next (all
// keys, one depth), load() reads every distinct page among them that is not cached in ONE
// submission and parses them; record() then serves any record of a loaded page without
// I/O, so a walk continues through the records that share a page until it needs the next.
//
// Streaming (batched lookups): walks ask for pages one at a time and are woken as each
// page lands, so no walk waits for a whole level and the device queue stays topped up
// across levels:
//
//   walk w needs page p:  request(p, w)  -> true: p is cached, go on
//                                        -> false: w waits on p (p queued for reading, or
//                                           already queued / in flight for another walk:
//                                           one read, a list of waiters)
//   driver loop:          poll(&woken, block)  submits the queued reads in one submit(),
//                         reaps what has completed (block: at least one completion; the
//                         store keeps QD reads in flight meanwhile), verifies and parses
//                         each page, caches it, and appends its waiters to `woken`
//                         (one entry per request() that returned false)
//                         idle(): nothing queued or in flight = every walk is done or
//                         failed
//
//   The driver should poll(block = false) every few walks it advances: a non-blocking poll
//   submits the reads the walks asked for so far and refills the device queue from the
//   reads that landed meanwhile (no system call when there is nothing to submit), so the
//   device works while the CPU walks.
//
// Counters: rounds (level by level: load() calls that read a page; streaming: polls that
// reaped pages, "waves"), page reads, bytes, cache hits (requests served without a new
// read: cached, or already in flight for another walk), read_wall_ns (time inside load() /
// blocked inside poll(): I/O the CPU did not overlap), reads_per_round (level by level
// only), and for streaming the blocking polls and the reads outstanding at each wave
// (their mean says how full the walks kept the queue).
//
// Latencies: with a sink set (set_latency_sink), every page read this reader reaps, by
// load() or by poll(), adds its device latency (PageCompletion::latency_ns: the op entering
// the device queue to its completion being seen) to the sink: one sample per read counted
// in page_reads, unless the read was dropped by an error. No allocation, no clock call.
//
// Page buffers: a cleared reader keeps up to 16,384 for its next batch and hands the rest,
// and all of them when destroyed, to a process-wide pool (bounded at 256 MiB, by payload
// size) from which readers take buffers 64 at a time: a batch reuses memory already
// mapped instead of faulting fresh pages in.
//
// Page lookups: the own page found last is remembered (a walk's next record is most often on
// the page of the one before), so loaded() followed by record() costs one map lookup. A
// reader is used by one thread at a time (its const calls update that memo too).
//
// Shared pages: take_pages() moves a reader's cached pages into a SharedPages set (whose
// buffers go back to the pool when it forgets them: clear, erase, destruction); another
// reader of the same page file may borrow() it as a first-level cache: a page the set holds
// is served from it instead of being read (counted in pages_reused, once per page); add()
// puts a copy of a page just written into a set (a writer keeping its last commit's pages). The set
// is only as current as its pages: the owner must erase() every page id rewritten since they
// were read (copy-on-write: a page id's content changes only when a commit rewrites it).
//
// Invariants: a record is returned only from a page whose checksum verified and whose
// layout decoded (record_page.h); a failed read (corrupt page, errno) is an error naming
// the page; nothing is cached from a failed load() round nor from a failed page of a
// stream. After a streaming error every outstanding read is reaped and dropped (abandon):
// the reader is idle, its buffers free, and the caller must discard its walks.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/persist/record_page.h"
#include "engine/stats/summary.h"
#include "io/node_store.h"
#include "kernels/support/clock.h"

namespace st::persist {

struct ReadCounters {
  uint64_t rounds = 0;
  uint64_t page_reads = 0;
  uint64_t bytes_read = 0;        // device bytes (whole pages)
  uint64_t cache_hits = 0;        // pages asked for that were already loaded
  uint64_t read_wall_ns = 0;      // inside load() / blocked in poll(): submission to completion
  std::vector<uint32_t> reads_per_round;  // load() only
  // Streaming: blocking polls, and the sum / max over waves of the reads outstanding.
  uint64_t stream_waits = 0;
  uint64_t stream_in_flight_sum = 0;
  uint64_t stream_in_flight_max = 0;
  uint64_t stream_polls = 0;      // every poll(), blocking or not

  uint64_t pages_reused = 0;      // distinct pages served from a borrowed SharedPages set
};

// Verified pages moved out of a PageReader (take_pages), by page id. Every page held has
// passed check_record_page: its records are read in place (checked_record), nothing parsed
// is kept beside the bytes.
struct CachedPage {
  std::unique_ptr<uint8_t[]> bytes;
  uint32_t record_count = 0;
};
class SharedPages {
 public:
  SharedPages() = default;
  ~SharedPages() { clear(); }
  SharedPages(const SharedPages&) = delete;
  SharedPages& operator=(const SharedPages&) = delete;
  size_t size() const { return pages_.size(); }
  bool contains(uint64_t page_id) const { return pages_.count(page_id) != 0; }
  const CachedPage* find(uint64_t page_id) const {
    auto it = pages_.find(page_id);
    return it == pages_.end() ? nullptr : &it->second;
  }
  // Forgets these pages (rewritten since they were read); returns how many it held.
  size_t erase(std::span<const uint64_t> page_ids);
  // Adds a copy of a page payload (a page just written); false (nothing added) when it does
  // not pass check_record_page.
  bool add(uint64_t page_id, std::span<const uint8_t> payload);
  // Forgets every page; their buffers go back to the readers' process-wide pool.
  void clear();

 private:
  friend class PageReader;
  std::unordered_map<uint64_t, CachedPage> pages_;
  uint32_t payload_bytes_ = 0;  // the pages' buffer size (0: none held yet)
};

using st::thread_cpu_ns;  // CPU time of the calling thread (kernels/support/clock.h)

class PageReader {
 public:
  explicit PageReader(io::NodeStore& store);
  ~PageReader();
  PageReader(const PageReader&) = delete;
  PageReader& operator=(const PageReader&) = delete;

  // ---- level by level ----
  // Loads the pages of `locators` (kNoLocator entries are ignored) that are not cached.
  // Requires idle() (no stream in progress).
  io::Status load(std::span<const Locator> locators);
  io::Status load_pages(std::span<const uint64_t> page_ids);

  // ---- streaming ----
  // true: the page is cached (counted as a cache hit). false: `waiter` is registered on
  // it and will be returned by a later poll() once the page is cached (the read is queued
  // unless the page is already queued or in flight).
  bool request(uint64_t page_id, uint32_t waiter);
  // Submits the queued reads and reaps completions (block: waits for at least one when
  // any read is outstanding). Appends the waiters of the pages that became cached. On a
  // failed or corrupt page: abandon() and an error naming the page.
  io::Status poll(std::vector<uint32_t>* woken, bool block);
  bool idle() const { return in_flight_.empty(); }
  size_t outstanding() const { return in_flight_.size(); }  // pages queued or in flight
  // Reaps and drops every outstanding read, forgets every waiter (also done on error and
  // by the destructor, so no buffer is freed while the store may still write into it).
  void abandon();

  // ---- either ----
  bool loaded(uint64_t page_id) const { return find_page(page_id) != nullptr; }
  // A record of a loaded page; an error (naming the locator) for an index past the page's
  // records or a page that is not loaded.
  io::Status record(Locator l, RecordView* out) const;
  // Records in a loaded page (0 when it is not loaded).
  uint32_t records_in(uint64_t page_id) const;
  // The pages this reader read or took from a borrowed set (appended to *out, unsorted).
  void used_pages(std::vector<uint64_t>* out) const;
  // Drops every cached page (cold-per-batch experiments); counters are kept. Requires idle().
  void clear();
  size_t cached_pages() const { return pages_.size(); }

  // ---- shared pages ----
  // Moves every cached page into *out (replacing its content). Requires idle().
  void take_pages(SharedPages* out);
  // Moves every cached page into *out beside what it holds (a page both hold: *out's copy is
  // kept, this one's buffer pooled). *out must hold pages of this reader's page file, read
  // from the same state. Requires idle().
  void add_pages_to(SharedPages* out);
  // Serves pages from `pages`, then `more` (nullptr: none) before reading them; both must
  // outlive this reader's use of them and not change meanwhile.
  void borrow(const SharedPages* pages, const SharedPages* more = nullptr) {
    borrowed_ = pages, borrowed_more_ = more;
    forget_last();
  }

  const ReadCounters& counters() const { return counters_; }
  // Where each page read's device latency (ns) goes from now on; nullptr: not recorded.
  // The sink must outlive the reader or be unset first.
  void set_latency_sink(stats::LogHistogram* sink) { latency_sink_ = sink; }
  void reset_in_flight_max() { counters_.stream_in_flight_max = 0; }  // at the start of a stream

 private:
  using Page = CachedPage;
  const Page* find_page(uint64_t page_id) const;
  // A page the borrowed set holds: counted (once) as reused; true if it holds it.
  bool use_borrowed(uint64_t page_id);
  struct Pending {               // a streamed page queued or in flight
    std::unique_ptr<uint8_t[]> bytes;
    uint32_t first_waiter = 0;   // most pages have one waiter: no allocation for it
    bool has_waiter = false;
    std::vector<uint32_t> more_waiters;
    void add_waiter(uint32_t w) {
      if (!has_waiter) first_waiter = w, has_waiter = true;
      else more_waiters.push_back(w);
    }
  };
  void forget_last() const { last_id_ = ~uint64_t(0), last_page_ = nullptr; }
  io::Status finish_page(uint64_t page_id, Pending&& p, std::vector<uint32_t>* woken);
  // check_record_page on a page just read, and its record count kept.
  std::string check_page(uint64_t page_id, Page* pg) const;

  io::NodeStore& store_;
  std::unordered_map<uint64_t, Page> pages_;
  std::vector<uint64_t> want_;
  // Streaming state.
  std::unordered_map<uint64_t, Pending> in_flight_;  // queued or submitted, by page id
  std::vector<uint64_t> queued_;                    // requested, not yet submitted
  std::vector<io::PageOp> ops_;
  std::vector<io::PageCompletion> done_;
  std::vector<std::unique_ptr<uint8_t[]>> spare_;   // page buffers to reuse
  uint64_t submitted_ = 0;                           // ops submitted, not yet reaped
  ReadCounters counters_;
  const SharedPages* borrowed_ = nullptr;
  const SharedPages* borrowed_more_ = nullptr;
  std::unordered_set<uint64_t> borrowed_used_;
  stats::LogHistogram* latency_sink_ = nullptr;
  mutable uint64_t last_id_ = ~uint64_t(0);  // find_page's last hit (~0: none)
  mutable const Page* last_page_ = nullptr;
};

}  // namespace st::persist
