// commit_blocks: the block commit loop (protocol in commit_blocks.h).
#include "engine/experiments/commit_blocks.h"

#include <memory>

#include "engine/persist/bintrie/commit.h"
#include "engine/persist/mpt/commit.h"

namespace st::experiments {
namespace {

// Either tree's committer behind one commit(): both report persist::CommitStats.
class AnyCommitter {
 public:
  AnyCommitter(persist::DbFiles& files, const CommitBlocksOptions& o) {
    if (o.bintrie) bintrie_ = std::make_unique<persist::BintrieCommitter>(files);
    else mpt_ = std::make_unique<persist::MptCommitter>(files);
    persist::PageReuse& reuse = bintrie_ ? bintrie_->reuse() : mpt_->reuse();
    reuse.compact_pages = o.compact_pages;
    reuse.compact_chains = o.compact_chains;
  }
  io::Status commit(const state::StateDiff& diff, const std::string& spec_json, persist::CommitStats* stats) {
    if (mpt_) return mpt_->commit(diff, spec_json, stats);
    persist::BintrieCommitStats b;
    io::Status s = bintrie_->commit(diff, spec_json, &b);
    *stats = b;  // the shared fields
    return s;
  }

 private:
  std::unique_ptr<persist::MptCommitter> mpt_;
  std::unique_ptr<persist::BintrieCommitter> bintrie_;
};

}  // namespace

CommitBlocksResult commit_blocks(persist::DbFiles& files, const CommitBlocksOptions& options, const BlockSource& source,
                                 const OnCommittedBlock& on_block) {
  CommitBlocksResult r;
  AnyCommitter committer(files, options);
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
    r.status = committer.commit(diff, source.spec_json(), &b.stats);
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
