// mpt_commit: MptCommitter, a block's state diff as one copy-on-write commit of an arena
// MPT database (see mpt_commit.h for the four phases). The partial trie of the dirty paths
// (resolve, apply, encode) is mpt_dirty_trie.h; this file runs it, counts the superseded
// records, releases the pages proven dead and commits.
#include "engine/persist/mpt_commit.h"

#include <unordered_map>

#include "engine/persist/mpt_dirty_trie.h"
#include "engine/persist/subtree_packer.h"
#include "io/monotonic_clock.h"

namespace st::persist {

namespace {

using mpt_commit_detail::AccountOp;
using mpt_commit_detail::DirtyTrie;
using mpt_commit_detail::Hash32;
using mpt_commit_detail::Node;
using mpt_commit_detail::Op;

// Records in page `page` (a page of the committed state with at least record 0 loaded).

}  // namespace

MptCommitter::MptCommitter(DbFiles& files) : files_(files) {}

io::Status MptCommitter::commit(const state::StateDiff& diff, const std::string& spec_json, MptCommitStats* stats) {
  const uint64_t t0 = io::monotonic_ns();
  if (files_.store != StoreKind::arena || !files_.arena)
    return {io::Errc::bad_argument, "mpt commit: only arena databases take commits"};
  if (files_.manifest.params.tree_kind != io::TreeKind::mpt)
    return {io::Errc::bad_argument, "mpt commit: not an MPT database"};
  PageReader reader(files_.arena->pages());
  DirtyTrie c(files_, reader);
  if (io::Status s = c.prepare(diff); !s.ok()) return s;
  if (io::Status s = c.resolve(); !s.ok()) return s;
  const uint64_t t_resolved = io::monotonic_ns();
  if (io::Status s = c.apply_all(); !s.ok()) return s;
  const uint64_t t_applied = io::monotonic_ns();

  io::CowSpace& space = files_.arena->space();
  PageWriter w(files_.arena->pages(), space);
  SubtreePacker packer(w);
  Locator root_loc = kNoLocator;
  Hash32 root_hash{};
  if (io::Status s = c.encode_all(packer, &root_loc, &root_hash); !s.ok()) {
    (void)w.finish();
    space.abort();
    return s;
  }

  const uint64_t t_encoded = io::monotonic_ns();
  // Superseded records: read from the committed state, not reused by the new tree.
  uint64_t superseded = 0, superseded_bytes = 0;
  for (const Node& n : c.nodes_) {
    if (n.kind == Node::stub || n.fresh || n.loc == kNoLocator || n.reused) continue;
    dead_.supersede(locator_page(n.loc));
    ++superseded;
    superseded_bytes += n.body_len;
  }
  const uint64_t old_commit_page = files_.manifest.root_page;
  uint64_t pages_released = 0;
  if (io::Status s = dead_.release_dead(reader, space, old_commit_page, "mpt commit", &pages_released); !s.ok()) {
    (void)w.finish();
    space.abort();
    return s;
  }

  DbFiles::Fields f;
  f.root_hash = root_hash;
  f.node_count = files_.manifest.node_count + c.records_written - superseded;
  int64_t keys_delta = 0;
  for (const AccountOp& a : c.accts_) {
    keys_delta += int64_t(!a.removed) - int64_t(a.old_leaf >= 0);
    keys_delta -= int64_t(a.old_slots);
    for (const Op& o : a.slots) {
      if (o.existed && o.del) --keys_delta;
      if (!o.existed && !o.del) ++keys_delta;
    }
  }
  f.key_count = uint64_t(int64_t(files_.manifest.key_count) + keys_delta);
  f.payload_bytes = files_.manifest.payload_bytes + c.bytes_written - superseded_bytes;
  const uint64_t pages_written = packer.stats().pages;
  const uint64_t tp = io::monotonic_ns();
  if (io::Status s = files_.commit_arena(w, root_loc, f, spec_json); !s.ok()) return s;
  const uint64_t publish_ns = io::monotonic_ns() - tp;

  // Durable: the dead-record counts of partly dead pages carry over to later commits.
  dead_.commit_durable();

  if (stats) {
    MptCommitStats& out = *stats;
    out = {};
    out.root = root_hash;
    out.accounts_written = c.accts_.size();
    for (const AccountOp& a : c.accts_) out.slot_writes += a.slots.size();
    out.records_read = c.records_read;
    out.pages_read = reader.counters().page_reads;
    out.read_rounds = reader.counters().rounds;
    out.apply_passes = c.passes;
    out.records_written = c.records_written;
    out.pages_written = pages_written;
    out.records_superseded = superseded;
    out.pages_released = pages_released;
    out.keys_delta = keys_delta;
    out.commit_ns = io::monotonic_ns() - t0;
    out.read_ns = reader.counters().read_wall_ns;
    out.resolve_ns = t_resolved - t0;
    out.apply_ns = t_applied - t_resolved;
    out.write_ns = t_encoded - t_applied;
    out.publish_ns = publish_ns;
    out.disk_bytes = files_.disk_bytes();
  }
  return {};
}

}  // namespace st::persist
