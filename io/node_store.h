// node_store: the interface every page store implements (flat arena file, in-memory with
// fault injection). A caller hands over a batch of page reads/writes and later reaps their
// completions; it never blocks per page. Pages are addressed by 64-bit ids; a page is
// page_size() bytes on the device, of which payload_bytes() belong to the caller (the rest
// is the checksummed trailer, see page_format.h).
//
// Contract:
//  - submit() never blocks on the device: it queues the ops and starts as many as the queue
//    depth allows. Each op's buffer (payload_bytes() long) must stay valid and untouched
//    until its completion has been reaped.
//  - reap() returns finished completions (in completion order, not submission order) and
//    keeps the device queue topped up; it waits until it has min(wait_for, outstanding())
//    completions, so reap(out, 0) is a non-blocking poll.
//  - Every submitted op yields exactly one completion. A read completes ok only if the page
//    verified; otherwise its code is corrupt_page and the caller's buffer is unspecified.
//  - A write may cover a run of consecutive pages (PageOp::pages, at most max_write_pages()):
//    one device operation, one completion; each page is sealed on its own, so a run torn
//    by a crash leaves whole pages that verify and pages that do not, as separate writes would.
//  - sync() makes every write whose completion was reaped before the call durable.
//  - A store is used by one thread at a time (no internal locking); a pipeline gives each
//    stage or worker its own store/ring over the same file.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "io/page_format.h"
#include "io/status.h"

namespace st::io {

class QueueBudget;  // queue_budget.h

enum class PageOpKind : uint8_t { read, write };

struct PageOp {
  PageOpKind kind = PageOpKind::read;
  uint64_t page_id = 0;
  unsigned char* buffer = nullptr;  // read: destination; write: source (pages x payload_bytes(), back to back)
  uint64_t tag = 0;                 // the caller's cookie, echoed in the completion
  uint32_t pages = 1;               // write: pages page_id .. page_id + pages - 1 (reads: 1)
};

struct PageCompletion {
  uint64_t tag = 0;
  uint64_t page_id = 0;             // the op's (first) page
  uint32_t pages = 1;               // the op's pages (a write run: more than 1)
  uint64_t latency_ns = 0;  // from the op entering the device queue to its CQE being seen
  int32_t sys_errno = 0;    // for Errc::sys
  PageOpKind kind = PageOpKind::read;
  Errc code = Errc::ok;
  PageCheck check = PageCheck::ok;  // for Errc::corrupt_page: what failed
  uint8_t resubmits = 0;            // EAGAIN / EINTR / short-transfer resubmissions
  bool ok() const { return code == Errc::ok; }
};

// One line: "read page 17: corrupt page (checksum mismatch)".
std::string describe(const PageCompletion& c);

struct StoreCounters {
  uint64_t reads = 0, writes = 0;  // pages
  uint64_t write_ops = 0;          // device write operations (a run of pages is one)
  uint64_t bytes_read = 0, bytes_written = 0;  // device bytes (whole pages)
  uint64_t resubmits_eagain = 0, resubmits_eintr = 0, resubmits_short = 0;
  uint64_t errors = 0, corrupt_pages = 0;
  uint64_t submit_calls = 0;  // io_uring_submit (or equivalent) calls
  uint64_t syncs = 0;
};

class NodeStore {
 public:
  virtual ~NodeStore() = default;

  virtual uint32_t page_size() const = 0;
  uint32_t payload_bytes() const { return page_payload_bytes(page_size()); }
  virtual uint64_t capacity_pages() const = 0;
  // Grows the store to at least `capacity_pages` pages (never shrinks).
  virtual Status grow(uint64_t capacity_pages) = 0;

  // The most pages one write op may cover (PageOp::pages); 1: single-page writes only.
  virtual uint32_t max_write_pages() const { return 1; }
  virtual void submit(std::span<const PageOp> ops) = 0;
  virtual size_t reap(std::span<PageCompletion> out, size_t wait_for) = 0;
  // Ops submitted and not yet reaped (queued, in flight, or finished awaiting reap).
  virtual size_t outstanding() const = 0;

  virtual Status sync() = 0;
  virtual const StoreCounters& counters() const = 0;
  // Shares one queue depth with other stores (queue_budget.h), taking its units under
  // `claim` (the lead claim first); nullptr: this store's own depth only. Only while
  // nothing is outstanding. False: this store does not take part (the budget is ignored).
  virtual bool share_queue(QueueBudget* budget, uint64_t claim) {
    (void)budget, (void)claim;
    return false;
  }
};

// Submits `ops`, reaps all their completions (appended to *completions when given) and
// returns the first failure as a Status with describe()'s message, or ok. Requires that no
// other ops are outstanding on the store.
Status run_batch(NodeStore& store, std::span<const PageOp> ops,
                 std::vector<PageCompletion>* completions = nullptr);

}  // namespace st::io
