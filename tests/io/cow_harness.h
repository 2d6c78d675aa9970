// cow_harness: a toy copy-on-write database over a NodeStore + ManifestSlot + PageAllocator,
// following the commit protocol the persistent tries will use, so crash tests can kill it
// anywhere. K records of one page each; a directory page maps record -> (page, version);
// a free-list page holds the allocator's committed state.
//
//   commit: release superseded pages -> allocate new ones -> write records, directory,
//           free list -> sync -> publish manifest (root_page = directory) -> commit_durable
//
//   directory payload: [seq u64][K u64][(page u64, version u64) x K]
//   free-list payload: [length u64][PageAllocator::serialize() bytes]
// A record's content is fill_payload(record, version), so any reader can verify it.
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include "io/crc32c.h"
#include "io/manifest.h"
#include "io/node_store.h"
#include "io/page_allocator.h"
#include "tests/io/io_test_util.h"

namespace st::io::test {

class CowDb {
 public:
  CowDb(NodeStore& store, ManifestSlot& slot, uint64_t records)
      : store_(store), slot_(slot), k_(records), page_(records, kNoPage), version_(records, 0) {
    params_.tree_kind = TreeKind::bintrie;
    params_.hash_kind = HashKind::sha256;
    params_.group_depth = 8;
    params_.page_size = store.page_size();
  }

  uint64_t seq() const { return seq_; }

  // Loads the last published manifest (or starts empty) and verifies every record page.
  Status open() {
    Manifest m;
    Status s = slot_.load(&m);
    alloc_ = PageAllocator(store_.capacity_pages());
    if (s.code() == Errc::not_found) return {};
    if (!s.ok()) return s;
    if (Status p = check_params(m.params, params_); !p.ok()) return p;
    std::vector<unsigned char> dir(store_.payload_bytes()), fl(store_.payload_bytes());
    PageOp ops[2] = {{PageOpKind::read, m.root_page, dir.data(), 0},
                     {PageOpKind::read, m.free_list_page, fl.data(), 1}};
    if (Status r = run_batch(store_, ops); !r.ok()) return r;
    if (get(dir.data(), 0) != m.commit_seq || get(dir.data(), 8) != k_)
      return Status(Errc::corrupt_page, "directory does not match manifest");
    if (crc32c(dir.data(), store_.payload_bytes()) != uint32_t(m.root_hash[0] | m.root_hash[1] << 8 |
                                                              m.root_hash[2] << 16 | uint32_t(m.root_hash[3]) << 24))
      return Status(Errc::corrupt_page, "directory hash does not match manifest");
    for (uint64_t r = 0; r < k_; ++r) {
      page_[r] = get(dir.data(), 16 + 16 * r);
      version_[r] = get(dir.data(), 24 + 16 * r);
    }
    const uint64_t len = get(fl.data(), 0);
    if (len + 8 > fl.size()) return Status(Errc::corrupt_page, "free list too long");
    if (Status d = PageAllocator::deserialize(std::span<const uint8_t>(fl.data() + 8, len),
                                              store_.capacity_pages(), &alloc_); !d.ok())
      return d;
    seq_ = m.commit_seq;
    dir_page_ = m.root_page;
    free_page_ = m.free_list_page;
    return verify();
  }

  // Reads every record page and checks its bytes against (record, version).
  Status verify() {
    const uint32_t n = store_.payload_bytes();
    std::vector<std::vector<unsigned char>> bufs;
    std::vector<PageOp> ops;
    for (uint64_t r = 0; r < k_; ++r) {
      if (page_[r] == kNoPage) continue;
      bufs.emplace_back(n);
      ops.push_back({PageOpKind::read, page_[r], nullptr, r});
    }
    for (size_t i = 0; i < ops.size(); ++i) ops[i].buffer = bufs[i].data();
    if (Status s = run_batch(store_, ops); !s.ok()) return s;
    std::vector<unsigned char> want(n);
    for (size_t i = 0; i < ops.size(); ++i) {
      fill_payload(want.data(), n, ops[i].tag, version_[ops[i].tag]);
      if (bufs[i] != want)
        return Status(Errc::corrupt_page, "record " + std::to_string(ops[i].tag) + " has wrong content");
    }
    return {};
  }

  // One commit rewriting a random subset of records (all of them the first time).
  Status commit(uint64_t& rng) {
    const uint32_t n = store_.payload_bytes();
    std::vector<uint64_t> rewrite;
    for (uint64_t r = 0; r < k_; ++r)
      if (page_[r] == kNoPage || splitmix64(rng) % 4 == 0) rewrite.push_back(r);
    // Release first, then allocate: the allocator must not hand the released pages (the
    // committed root's) back within this commit.
    const auto old_page = page_, old_version = version_;
    for (uint64_t r : rewrite)
      if (page_[r] != kNoPage) alloc_.release(page_[r]);
    if (dir_page_ != kNoPage) { alloc_.release(dir_page_); alloc_.release(free_page_); }
    std::vector<uint64_t> fresh;
    if (Status s = alloc_.allocate(rewrite.size() + 2, &fresh); !s.ok())
      return abort(old_page, old_version, s);
    for (size_t i = 0; i < rewrite.size(); ++i) {
      page_[rewrite[i]] = fresh[i];
      ++version_[rewrite[i]];
    }
    const uint64_t new_dir = fresh[rewrite.size()], new_free = fresh[rewrite.size() + 1];
    const uint64_t new_seq = seq_ + 1;

    std::vector<std::vector<unsigned char>> bufs(rewrite.size() + 2, std::vector<unsigned char>(n, 0));
    std::vector<PageOp> ops;
    for (size_t i = 0; i < rewrite.size(); ++i) {
      fill_payload(bufs[i].data(), n, rewrite[i], version_[rewrite[i]]);
      ops.push_back({PageOpKind::write, page_[rewrite[i]], bufs[i].data(), i});
    }
    unsigned char* dir = bufs[rewrite.size()].data();
    put(dir, 0, new_seq);
    put(dir, 8, k_);
    for (uint64_t r = 0; r < k_; ++r) { put(dir, 16 + 16 * r, page_[r]); put(dir, 24 + 16 * r, version_[r]); }
    ops.push_back({PageOpKind::write, new_dir, dir, rewrite.size()});
    PageAllocator after = alloc_;
    after.commit_durable();
    const std::vector<uint8_t> fl = after.serialize();
    unsigned char* flp = bufs[rewrite.size() + 1].data();
    if (fl.size() + 8 > n) return abort(old_page, old_version, Status(Errc::full, "free list too long"));
    put(flp, 0, fl.size());
    std::memcpy(flp + 8, fl.data(), fl.size());
    ops.push_back({PageOpKind::write, new_free, flp, rewrite.size() + 1});

    if (Status s = run_batch(store_, ops); !s.ok()) return abort(old_page, old_version, s);
    if (Status s = store_.sync(); !s.ok()) return abort(old_page, old_version, s);
    Manifest m;
    m.params = params_;
    m.commit_seq = new_seq;
    const uint32_t h = crc32c(dir, n);
    for (int i = 0; i < 4; ++i) m.root_hash[i] = uint8_t(h >> (8 * i));
    m.root_page = new_dir;
    m.free_list_page = new_free;
    m.free_list_pages = 1;
    m.page_high_water = alloc_.high_water();
    m.key_count = k_;
    if (Status s = slot_.publish(m); !s.ok()) return abort(old_page, old_version, s);
    alloc_.commit_durable();
    seq_ = new_seq;
    dir_page_ = new_dir;
    free_page_ = new_free;
    return {};
  }

 private:
  static void put(unsigned char* p, size_t off, uint64_t v) { std::memcpy(p + off, &v, 8); }
  static uint64_t get(const unsigned char* p, size_t off) { uint64_t v; std::memcpy(&v, p + off, 8); return v; }

  Status abort(const std::vector<uint64_t>& pages, const std::vector<uint64_t>& versions, Status why) {
    alloc_.abort_commit();
    page_ = pages;
    version_ = versions;
    return why;
  }

  NodeStore& store_;
  ManifestSlot& slot_;
  uint64_t k_;
  StoreParams params_;
  PageAllocator alloc_;
  std::vector<uint64_t> page_, version_;
  uint64_t seq_ = 0, dir_page_ = kNoPage, free_page_ = kNoPage;
};

}  // namespace st::io::test
