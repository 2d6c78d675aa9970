// mpt/block_tries_write: a block commit's new tree out of memory (block_tries.h): its new
// records hashed again alone, level by level (pure_hash), then the pack list into the
// frame's packer (arena, a kept subtree by its locator) or WriteBatch (RocksDB, under path
// keys), and every stored node the new tree no longer holds superseded (write).
#include "engine/persist/mpt/block_tries.h"
#include "kernels/support/check.h"

namespace st::persist::mpt_commit_detail {

io::Status BlockTries::pure_hash(PureHashCount* out) {
  // Before the clock: the new records counted and listed by level (1 = no hashed child),
  // each with the digest the trie gave it, their bytes copied out level by level.
  b_.pure_counts.assign(1, 0);
  size_t n = 0;
  for (const PackOp& op : b_.pack_ops) {
    if (op.placed != kNoLocator) continue;
    if (op.level >= b_.pure_counts.size()) b_.pure_counts.resize(op.level + 1, 0);
    ++b_.pure_counts[op.level], ++n;
  }
  b_.pure.prepare(b_.pure_counts, n);
  for (size_t l = 1; l < b_.pure_counts.size(); ++l) b_.pure_counts[l] = b_.pure.level_end[l - 1];  // next slot per level
  size_t r = 0;  // the new records' order
  for (const PackOp& op : b_.pack_ops) {
    if (op.placed != kNoLocator) continue;
    const uint32_t i = b_.pure_counts[op.level]++;
    b_.pure.msgs[i] = b_.pack_bytes.data() + op.body_off;
    b_.pure.lens[i] = op.body_len;
    b_.pure.expect[i] = b_.pack_hashes[r++].data();
  }
  b_.pure.gather_bytes();
  return mpt_pure_hash(b_.pure, out);
}

io::Status BlockTries::write(Locator* root_loc) {
  *root_loc = kNoLocator;
  const bool keyed = frame_.keyed();
  size_t r = 0;  // the new records' order
  for (const PackOp& op : b_.pack_ops) {
    if (op.placed != kNoLocator) {
      if (keyed) continue;
      if (io::Status s = frame_.place_kept(op.placed); !s.ok()) return s;
      continue;
    }
    const uint8_t* body = b_.pack_bytes.data() + op.body_off;
    if (keyed) {
      frame_.rocks().put(std::move(b_.pack_keys[r++]), std::string(reinterpret_cast<const char*>(body), op.body_len));
    } else if (io::Status s = frame_.packer().push(op.kind, {body, op.body_len}, op.kids); !s.ok()) {
      return s;
    }
  }
  // The stored nodes the new tree no longer holds: the tries' reports, and every node read
  // of a destroyed account's old storage.
  auto supersede = [&](const Stored& s) {
    ST_CHECK(s.read, "mpt commit: a node reported dead that was never read");
    if (keyed) frame_.supersede_key(key_of(s), s.body_len);
    else frame_.supersede({&s.loc, 1}, s.body_len);
  };
  for (uint32_t d : b_.dead) supersede(b_.stored[d]);
  for (const Stored& s : b_.stored)
    if (s.doomed && s.read) supersede(s);
  if (keyed || b_.pack_ops.empty()) return {};
  std::vector<Locator> roots;
  if (io::Status s = frame_.packer().finish(&roots); !s.ok()) return s;
  if (roots.size() != 1) return {io::Errc::corrupt_page, "mpt commit: internal: " + std::to_string(roots.size()) + " roots"};
  *root_loc = roots[0];
  return {};
}

}  // namespace st::persist::mpt_commit_detail
