// commit_blocks: the block commit loop (protocol in commit_blocks.h).
#include "engine/experiments/commit_blocks.h"

#include <memory>

#include "engine/persist/bintrie/commit.h"
#include "engine/persist/mpt/commit.h"

namespace st::experiments {
namespace {

// The database's tree's committer, with the compaction settings.
std::unique_ptr<persist::CommitterBase> make_committer(persist::DbFiles& files, const CommitBlocksOptions& o) {
  std::unique_ptr<persist::CommitterBase> c;
  if (o.bintrie) c = std::make_unique<persist::BintrieCommitter>(files);
  else c = std::make_unique<persist::MptCommitter>(files);
  c->reuse().compact_pages = o.compact_pages;
  c->reuse().compact_chains = o.compact_chains;
  return c;
}

}  // namespace

CommitBlocksResult commit_blocks(persist::DbFiles& files, const CommitBlocksOptions& options, const BlockSource& source,
                                 const OnCommittedBlock& on_block) {
  CommitBlocksResult r;
  const std::unique_ptr<persist::CommitterBase> committer = make_committer(files, options);
  r.disk_bytes_before = files.disk_bytes();
  r.in_use_bytes_before = files.in_use_bytes();
  state::StateDiff diff;
  for (uint64_t k = 0; k < options.blocks; ++k) {
    CommittedBlock b;
    if (std::optional<std::string> e = source.next(&diff, &b.block)) {
      r.source_error = *e;
      r.failed_block = b.block;
      break;
    }
    r.status = committer->commit(diff, source.spec_json(), &b.stats);
    if (!r.status.ok()) {
      r.failed_block = b.block;
      break;
    }
    r.blocks.push_back(b);
    if (on_block) on_block(r.blocks.back(), k + 1);
  }
  r.disk_bytes_after = files.disk_bytes();
  r.in_use_bytes_after = files.in_use_bytes();
  return r;
}

}  // namespace st::experiments
