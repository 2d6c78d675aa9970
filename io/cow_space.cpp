// cow_space: allocator persistence and the atomic commit sequence (see the header).
#include "io/cow_space.h"

#include "kernels/support/byte_order.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace st::io {

namespace {

Status forged(const std::string& what) { return Status(Errc::corrupt_page, "manifest: " + what); }

// The most pages commit() can give a free list over `high_water` pages: at most
// (high_water + 1) / 2 disjoint extents of 16 bytes, the 16-byte header and the 8-byte
// length, sized with commit()'s slack; doubled, so the bound never refuses a real one.
uint64_t max_free_list_pages(uint64_t high_water, uint32_t payload) {
  const uint64_t bytes = 8 + 16 + 16 * ((high_water + 1) / 2) + 64;
  return 2 * ((bytes + payload - 1) / payload) + 16;
}

// Every size the manifest gives, against the store it describes, before anything is
// allocated or read on its word: a manifest whose checksum is valid but whose fields are
// not (forged, or written by a buggy build) is a one-line error, never a huge allocation.
Status check_manifest_sizes(const Manifest& m, uint64_t capacity_pages, uint32_t page_size, uint32_t payload) {
  const uint64_t hw = m.page_high_water;
  if (hw > capacity_pages)
    return Status(Errc::corrupt_page, "manifest names " + std::to_string(hw) + " pages, the store has " +
                                          std::to_string(capacity_pages));
  if (m.free_list_page == kNoPage) {
    if (hw > 0)  // pages in use but no record of which
      return Status(Errc::corrupt_page, "manifest has " + std::to_string(hw) + " pages in use but no free list");
    if (m.free_list_pages != 0) return forged("free list of " + std::to_string(m.free_list_pages) + " pages at no page");
  } else {
    if (m.free_list_page >= hw || m.free_list_pages == 0 || m.free_list_pages > hw - m.free_list_page)
      return forged("free list at page " + std::to_string(m.free_list_page) + " (" + std::to_string(m.free_list_pages) +
                    " pages) is not inside the " + std::to_string(hw) + " pages in use");
    if (m.free_list_pages > max_free_list_pages(hw, payload))
      return forged("free list of " + std::to_string(m.free_list_pages) + " pages, more than " +
                    std::to_string(hw) + " pages in use can need");
  }
  if (m.root_page != kNoPage && m.root_page >= hw)
    return forged("root page " + std::to_string(m.root_page) + " is beyond the " + std::to_string(hw) + " pages in use");
  if (m.pages_used > hw)
    return forged(std::to_string(m.pages_used) + " pages used of " + std::to_string(hw) + " in use");
  // A node or a payload byte takes at least one byte of a page; a key is a value in a leaf
  // (an MPT leaf holds one, a binary-trie stem at most 256).
  const uint64_t arena_bytes = hw * uint64_t(page_size);  // hw <= capacity: no overflow
  if (m.payload_bytes > arena_bytes)
    return forged(std::to_string(m.payload_bytes) + " payload bytes in " + std::to_string(arena_bytes) + " bytes of pages");
  if (m.node_count > arena_bytes)
    return forged(std::to_string(m.node_count) + " nodes in " + std::to_string(arena_bytes) + " bytes of pages");
  if (m.key_count / 256 > m.node_count)
    return forged(std::to_string(m.key_count) + " keys in " + std::to_string(m.node_count) + " nodes");
  return {};
}

}  // namespace

Status CowSpace::open() {
  Manifest m;
  Status s = slot_.load(&m);
  if (s.code() == Errc::not_found) {
    reset_empty();
    return {};
  }
  if (!s.ok()) return s;
  return open(m);
}

void CowSpace::reset_empty() {
  needs_reopen_ = false;
  gate_asked_ = false;
  alloc_ = PageAllocator(store_.capacity_pages());
  alloc_.set_defer_frees(bool(no_reader_before_));
  committed_ = Manifest{};
  committed_.params = params_;
}

Status CowSpace::open(const Manifest& m) {
  reset_empty();
  if (Status p = check_params(m.params, params_); !p.ok()) return p;
  const uint32_t payload = store_.payload_bytes();
  if (Status v = check_manifest_sizes(m, store_.capacity_pages(), store_.page_size(), payload); !v.ok()) return v;
  if (m.free_list_page != kNoPage) {
    std::vector<unsigned char> blob(size_t(m.free_list_pages) * payload);  // bounded by the check above
    std::vector<PageOp> ops;
    for (uint64_t i = 0; i < m.free_list_pages; ++i)
      ops.push_back({PageOpKind::read, m.free_list_page + i, blob.data() + i * payload, i});
    if (Status r = run_batch(store_, ops); !r.ok()) return r;
    const uint64_t len = get_u64(blob.data());  // blob holds >= 1 page (free_list_pages >= 1)
    if (len > blob.size() - 8)
      return Status(Errc::corrupt_page, "free list: length " + std::to_string(len) + " beyond its " +
                                            std::to_string(blob.size() - 8) + " bytes of pages");
    if (std::any_of(blob.begin() + 8 + std::ptrdiff_t(len), blob.end(), [](unsigned char c) { return c != 0; }))
      return Status(Errc::corrupt_page, "free list: bytes after its length are not zero");
    if (Status d = PageAllocator::deserialize(std::span<const uint8_t>(blob.data() + 8, len),
                                              store_.capacity_pages(), &alloc_); !d.ok())
      return d;
    if (alloc_.high_water() != m.page_high_water)
      return Status(Errc::corrupt_page, "free list high water does not match the manifest");
    // What the manifest names must be in use according to the free list it names.
    for (uint64_t i = 0; i < m.free_list_pages; ++i)
      if (alloc_.is_free(m.free_list_page + i))
        return Status(Errc::corrupt_page, "free list: its own page " + std::to_string(m.free_list_page + i) + " is listed free");
    if (m.root_page != kNoPage && (alloc_.is_free(m.root_page) ||
                                   (m.root_page >= m.free_list_page && m.root_page - m.free_list_page < m.free_list_pages)))
      return Status(Errc::corrupt_page, "manifest: root page " + std::to_string(m.root_page) +
                                            " is free or part of the free list");
    alloc_.set_defer_frees(bool(no_reader_before_));
    // Readers of roots older than m may still exist: nothing listed is reusable yet.
    if (no_reader_before_) alloc_.defer_all_free(m.commit_seq);
  }
  committed_ = m;
  return {};
}

bool CowSpace::reclaim_deferred() {
  if (!no_reader_before_) return false;
  bool any = false;
  for (uint64_t tag : alloc_.deferred_tags()) {
    if (!no_reader_before_(tag)) break;
    alloc_.reclaim_deferred_through(tag);
    any = true;
  }
  return any;
}

void CowSpace::ask_gate_once() {
  if (gate_asked_) return;
  gate_asked_ = true;
  reclaim_deferred();
}

// Grows the store to hold at least min_capacity pages: first by doubling (fewer, larger
// fallocates), then, when the filesystem has no room for that, by halving the step down to
// exactly min_capacity before giving up with the store's "no space left on device" error.
Status CowSpace::grow_for(uint64_t min_capacity) {
  const uint64_t cap = store_.capacity_pages();
  uint64_t want = std::max<uint64_t>({cap * 2, min_capacity + 64, 64});
  for (;;) {
    Status g = store_.grow(want);
    if (g.ok()) break;
    if (g.code() != Errc::full || want <= min_capacity || want <= cap) return g;
    want = std::max(min_capacity, cap + (want - cap) / 2);
  }
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
  // The pages allocate() can use: the free extents, then the room above high water.
  const uint64_t min_capacity = alloc_.high_water() + (n - std::min(n, alloc_.free_pages()));
  if (Status g = grow_for(min_capacity); !g.ok()) return g;
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
    const uint64_t estimate = 8 + alloc_.serialize_durable().size() + 64 + uint64_t(attempt) * payload;
    pages = (estimate + payload - 1) / payload;
    Status s = alloc_.allocate_run(pages, &first);
    if (s.code() == Errc::full && reclaim_deferred()) s = alloc_.allocate_run(pages, &first);
    if (s.code() == Errc::full) {
      if (Status g = grow_for(alloc_.high_water() + pages); !g.ok()) { abort(); return g; }
      s = alloc_.allocate_run(pages, &first);
    }
    if (!s.ok()) { abort(); return s; }
    bytes = alloc_.serialize_durable();
    if (8 + bytes.size() <= pages * payload) break;
    for (uint64_t i = 0; i < pages; ++i) alloc_.release(first + i);  // allocated this commit: freed now
    if (attempt > 8) { abort(); return Status(Errc::full, "free list does not fit its pages"); }
  }

  std::vector<unsigned char> blob(size_t(pages) * payload, 0);
  put_u64(blob.data(), bytes.size());
  std::memcpy(blob.data() + 8, bytes.data(), bytes.size());
  // The free list's pages are one run: written as runs of the store's longest write.
  std::vector<PageOp> ops;
  const uint64_t run = std::max<uint32_t>(1, store_.max_write_pages());
  for (uint64_t i = 0; i < pages; i += run) {
    const uint32_t n = uint32_t(std::min(run, pages - i));
    ops.push_back({PageOpKind::write, first + i, blob.data() + i * payload, i, n});
  }
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
  alloc_.commit_durable(next.commit_seq);
  committed_ = next;
  gate_asked_ = false;
  return {};
}

}  // namespace st::io
