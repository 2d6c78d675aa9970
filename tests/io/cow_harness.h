// cow_harness: a toy copy-on-write database over io::CowSpace (NodeStore + ManifestSlot +
// PageAllocator), following the commit protocol the persistent tries will use, so crash
// tests can kill it anywhere. K records of one page each; a directory page (the "root")
// maps record -> (page, version).
//
//   commit: release superseded pages -> allocate new ones -> write records + directory
//           -> CowSpace::commit (free list, sync, publish manifest, commit_durable)
//
//   directory payload: [seq u64][K u64][(page u64, version u64) x K]
// A record's content is fill_payload(record, version), so any reader can verify it.
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include "io/crc32c.h"
#include "io/manifest.h"
#include "io/node_store.h"
#include "io/cow_space.h"
#include "tests/io/io_test_util.h"

namespace st::io::test {

class CowDb {
 public:
  CowDb(NodeStore& store, ManifestSlot& slot, uint64_t records)
      : store_(store), k_(records), space_(store, slot, params_for(store)),
        page_(records, kNoPage), version_(records, 0) {}

  static StoreParams params_for(const NodeStore& store) {
    StoreParams p;
    p.tree_kind = TreeKind::bintrie;
    p.hash_kind = HashKind::sha256;
    p.group_depth = 8;
    p.page_size = store.page_size();
    return p;
  }

  uint64_t seq() const { return seq_; }

  // Loads the last published manifest (or starts empty) and verifies every record page.
  Status open() {
    if (Status s = space_.open(); !s.ok()) return s;
    if (!space_.has_commit()) return {};
    const Manifest& m = space_.committed();
    std::vector<unsigned char> dir(store_.payload_bytes());
    PageOp op{PageOpKind::read, m.root_page, dir.data(), 0};
    if (Status r = run_batch(store_, std::span<const PageOp>(&op, 1)); !r.ok()) return r;
    if (get(dir.data(), 0) != m.commit_seq || get(dir.data(), 8) != k_)
      return Status(Errc::corrupt_page, "directory does not match manifest");
    if (crc32c(dir.data(), store_.payload_bytes()) != uint32_t(m.root_hash[0] | m.root_hash[1] << 8 |
                                                              m.root_hash[2] << 16 | uint32_t(m.root_hash[3]) << 24))
      return Status(Errc::corrupt_page, "directory hash does not match manifest");
    for (uint64_t r = 0; r < k_; ++r) {
      page_[r] = get(dir.data(), 16 + 16 * r);
      version_[r] = get(dir.data(), 24 + 16 * r);
    }
    seq_ = m.commit_seq;
    dir_page_ = m.root_page;
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
      if (page_[r] != kNoPage) space_.release(page_[r]);
    if (dir_page_ != kNoPage) space_.release(dir_page_);
    std::vector<uint64_t> fresh;
    if (Status s = space_.allocate(rewrite.size() + 1, &fresh); !s.ok())
      return abort(old_page, old_version, s);
    for (size_t i = 0; i < rewrite.size(); ++i) {
      page_[rewrite[i]] = fresh[i];
      ++version_[rewrite[i]];
    }
    const uint64_t new_dir = fresh[rewrite.size()];
    const uint64_t new_seq = seq_ + 1;

    std::vector<std::vector<unsigned char>> bufs(rewrite.size() + 1, std::vector<unsigned char>(n, 0));
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
    if (Status s = run_batch(store_, ops); !s.ok()) return abort(old_page, old_version, s);

    Manifest m;
    const uint32_t h = crc32c(dir, n);
    for (int i = 0; i < 4; ++i) m.root_hash[i] = uint8_t(h >> (8 * i));
    m.root_page = new_dir;
    m.key_count = k_;
    if (Status s = space_.commit(m); !s.ok()) {  // CowSpace aborted its side already
      page_ = old_page;
      version_ = old_version;
      return s;
    }
    seq_ = new_seq;
    dir_page_ = new_dir;
    return {};
  }

  const CowSpace& space() const { return space_; }

 private:
  static void put(unsigned char* p, size_t off, uint64_t v) { std::memcpy(p + off, &v, 8); }
  static uint64_t get(const unsigned char* p, size_t off) { uint64_t v; std::memcpy(&v, p + off, 8); return v; }

  Status abort(const std::vector<uint64_t>& pages, const std::vector<uint64_t>& versions, Status why) {
    space_.abort();
    page_ = pages;
    version_ = versions;
    return why;
  }

  NodeStore& store_;
  uint64_t k_;
  CowSpace space_;
  std::vector<uint64_t> page_, version_;
  uint64_t seq_ = 0, dir_page_ = kNoPage;
};

}  // namespace st::io::test
