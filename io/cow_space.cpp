// cow_space: allocator persistence and the atomic commit sequence (see the header).
#include "io/cow_space.h"

#include "io/byte_order.h"

#include <algorithm>
#include <cstring>

namespace st::io {

Status CowSpace::open() {
  Manifest m;
  Status s = slot_.load(&m);
  if (s.code() == Errc::not_found) {
    needs_reopen_ = false;
    gate_asked_ = false;
    alloc_ = PageAllocator(store_.capacity_pages());
    alloc_.set_defer_frees(bool(readers_absent_));
    committed_ = Manifest{};
    committed_.params = params_;
    return {};
  }
  if (!s.ok()) return s;
  return open(m);
}

Status CowSpace::open(const Manifest& m) {
  needs_reopen_ = false;
  gate_asked_ = false;
  alloc_ = PageAllocator(store_.capacity_pages());
  alloc_.set_defer_frees(bool(readers_absent_));
  committed_ = Manifest{};
  committed_.params = params_;
  if (Status p = check_params(m.params, params_); !p.ok()) return p;
  if (m.page_high_water > store_.capacity_pages())
    return Status(Errc::corrupt_page, "manifest names " + std::to_string(m.page_high_water) +
                                          " pages, the store has " + std::to_string(store_.capacity_pages()));
  if (m.free_list_page == kNoPage && m.page_high_water > 0)  // pages in use but no record of which
    return Status(Errc::corrupt_page, "manifest has " + std::to_string(m.page_high_water) +
                                          " pages in use but no free list");
  if (m.free_list_page != kNoPage) {
    const uint32_t payload = store_.payload_bytes();
    std::vector<unsigned char> blob(size_t(m.free_list_pages) * payload);
    std::vector<PageOp> ops;
    for (uint64_t i = 0; i < m.free_list_pages; ++i)
      ops.push_back({PageOpKind::read, m.free_list_page + i, blob.data() + i * payload, i});
    if (Status r = run_batch(store_, ops); !r.ok()) return r;
    if (blob.size() < 8) return Status(Errc::corrupt_page, "free list: no pages");
    const uint64_t len = get_u64(blob.data());
    if (len > blob.size() - 8) return Status(Errc::corrupt_page, "free list: length beyond its pages");
    if (Status d = PageAllocator::deserialize(std::span<const uint8_t>(blob.data() + 8, len),
                                              store_.capacity_pages(), &alloc_); !d.ok())
      return d;
    if (alloc_.high_water() != m.page_high_water)
      return Status(Errc::corrupt_page, "free list high water does not match the manifest");
    alloc_.set_defer_frees(bool(readers_absent_));
    // Readers of roots older than m may still exist: nothing listed is reusable yet.
    if (readers_absent_) alloc_.defer_all_free();
  }
  committed_ = m;
  return {};
}

bool CowSpace::reclaim_deferred() {
  if (!readers_absent_ || alloc_.deferred_pages() == 0 || !readers_absent_()) return false;
  alloc_.reclaim_deferred();
  return true;
}

void CowSpace::ask_gate_once() {
  if (gate_asked_) return;
  gate_asked_ = true;
  reclaim_deferred();
}

Status CowSpace::grow_for(uint64_t n) {
  const uint64_t cap = store_.capacity_pages();
  const uint64_t want = std::max<uint64_t>({cap * 2, alloc_.high_water() + n + 64, 64});
  if (Status g = store_.grow(want); !g.ok()) return g;
  alloc_.set_capacity(store_.capacity_pages());
  return {};
}

Status CowSpace::allocate(uint64_t n, std::vector<uint64_t>* pages) {
  if (read_only_) return Status(Errc::bad_argument, "the database is open read-only");
  ask_gate_once();
  Status s = alloc_.allocate(n, pages);
  if (s.code() != Errc::full) return s;
  if (reclaim_deferred()) {  // the readers left since the commit began: no need to grow
    s = alloc_.allocate(n, pages);
    if (s.code() != Errc::full) return s;
  }
  if (Status g = grow_for(n); !g.ok()) return g;
  return alloc_.allocate(n, pages);
}

Status CowSpace::commit(Manifest next) {
  if (read_only_) return Status(Errc::bad_argument, "the database is open read-only");
  if (needs_reopen_)
    return Status(Errc::sys, "an earlier commit's outcome is unknown (manifest directory fsync failed); reopen the database");
  ask_gate_once();
  const uint32_t payload = store_.payload_bytes();
  for (uint64_t i = 0; committed_.free_list_page != kNoPage && i < committed_.free_list_pages; ++i)
    alloc_.release(committed_.free_list_page + i);

  // The free list describes the state after this commit, including its own pages: size the
  // run with slack for the extents its allocation may split, and retry if it was short.
  uint64_t first = 0, pages = 0;
  std::vector<uint8_t> bytes;
  for (int attempt = 0;; ++attempt) {
    PageAllocator after = alloc_;
    after.commit_durable();
    const uint64_t estimate = 8 + after.serialize().size() + 64 + uint64_t(attempt) * payload;
    pages = (estimate + payload - 1) / payload;
    Status s = alloc_.allocate_run(pages, &first);
    if (s.code() == Errc::full && reclaim_deferred()) s = alloc_.allocate_run(pages, &first);
    if (s.code() == Errc::full) {
      if (Status g = grow_for(pages); !g.ok()) { abort(); return g; }
      s = alloc_.allocate_run(pages, &first);
    }
    if (!s.ok()) { abort(); return s; }
    after = alloc_;
    after.commit_durable();
    bytes = after.serialize();
    if (8 + bytes.size() <= pages * payload) break;
    for (uint64_t i = 0; i < pages; ++i) alloc_.release(first + i);  // allocated this commit: freed now
    if (attempt > 8) { abort(); return Status(Errc::full, "free list does not fit its pages"); }
  }

  std::vector<unsigned char> blob(size_t(pages) * payload, 0);
  put_u64(blob.data(), bytes.size());
  std::memcpy(blob.data() + 8, bytes.data(), bytes.size());
  std::vector<PageOp> ops;
  for (uint64_t i = 0; i < pages; ++i) ops.push_back({PageOpKind::write, first + i, blob.data() + i * payload, i});
  if (Status w = run_batch(store_, ops); !w.ok()) { abort(); return w; }
  if (Status y = store_.sync(); !y.ok()) { abort(); return y; }

  next.params = params_;
  next.commit_seq = committed_.commit_seq + 1;
  next.page_high_water = alloc_.high_water();
  next.free_list_page = first;
  next.free_list_pages = pages;
  if (Status p = slot_.publish(next); !p.ok()) {
    if (slot_.last_publish_outcome_unknown()) {
      needs_reopen_ = true;  // keep every page allocated: the new root may be the live one
      return Status(p.code(), "commit outcome unknown: " + p.message() + "; reopen the database", p.sys_errno());
    }
    abort();
    return p;
  }
  alloc_.commit_durable();
  committed_ = next;
  gate_asked_ = false;
  return {};
}

}  // namespace st::io
