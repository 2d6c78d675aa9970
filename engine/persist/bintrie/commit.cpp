// bintrie/commit: BintrieCommitter (phases in bintrie/commit.h), its calls over one commit's
// BlockTree (bintrie/block_tree.h: engine/bintrie's MutableTree over the database; its
// phases in bintrie/block_tree_{read,apply,write}.cpp): hash() runs prepare, resolve, apply,
// hash and the pure hash; write_pages() the writes and the supersession of every record read
// and not kept; publish() the frame's publish. Both stores run the same phases; only the node
// source and sink differ (CommitFrame::keyed()): arena records by locator (PageReader;
// SubtreePacker), or RocksDB blobs by path key blob_key(path, depth) (one MultiGet per round;
// the commit's WriteBatch). The tree's memory is kept for the next commit.
// Invariant: a commit is hashed before it is written and written before it is published; a
// failure at any step publishes nothing.
#include "engine/persist/bintrie/commit.h"

#include <memory>
#include <mutex>

#include "engine/persist/bintrie/block_tree.h"

namespace st::persist {

using bintrie_commit::BlockTree;
using bintrie_commit::StemWrites;
namespace bd = bintrie_disk;

// The commit between its calls: the read store, the frame (phase clock, reader, later the
// writer), the tree (until its writes are done) and the outcome.
struct BintrieCommitter::Pending {
  Pending(DbFiles& files, DeadPageLedger& dead, const CommitBase& base, std::unique_ptr<io::ArenaFileStore> store,
          PageReuse* reuse, stats::LogHistogram* latency, std::unique_ptr<bintrie::MutableTree> t)
      : read_store(std::move(store)),
        frame(files, dead, kWho, base, read_store.get(), reuse, latency),
        tree(std::move(t)),
        c(frame, *tree, base.params.group_depth) {}
  static constexpr const char* kWho = "binary trie commit";
  std::unique_ptr<io::ArenaFileStore> read_store;
  CommitFrame frame;
  std::unique_ptr<bintrie::MutableTree> tree;
  BlockTree c;
  CommitFrame::Outcome out;
};

// A tree the last commit's writes are done with (its memory kept), for the next hash().
struct BintrieCommitter::SpareTree {
  std::mutex mu;
  std::unique_ptr<bintrie::MutableTree> tree;
};

BintrieCommitter::BintrieCommitter(DbFiles& files) : CommitterBase(files), spare_(std::make_unique<SpareTree>()) {}
BintrieCommitter::~BintrieCommitter() = default;

std::unique_ptr<bintrie::MutableTree> BintrieCommitter::take_tree(const bintrie::Hasher& h) {
  std::unique_ptr<bintrie::MutableTree> t;
  {
    std::lock_guard<std::mutex> g(spare_->mu);
    t = std::move(spare_->tree);
  }
  // No huge-page advice: with it the MPT's commit over its tries ran 1.5-2x slower on an
  // AMD EPYC host, page writes included (docs/persist-commit.md), and so did this one.
  if (!t || t->hasher().kind != h.kind) return std::make_unique<bintrie::MutableTree>(h, false);
  return t;
}

void BintrieCommitter::give_back_tree(std::unique_ptr<bintrie::MutableTree> t) {
  if (!t) return;
  t->clear();
  std::lock_guard<std::mutex> g(spare_->mu);
  if (!spare_->tree) spare_->tree = std::move(t);
}

io::Status BintrieCommitter::hash(const state::StateDiff& diff, std::array<uint8_t, 32>* root_hash) {
  constexpr const char* kWho = Pending::kWho;
  pending_.reset();
  const CommitBase base = base_for_hash();
  if (io::Status s = CommitFrame::check_target(files_, base.params, io::TreeKind::bintrie, kWho, "a binary trie"); !s.ok())
    return s;
  bintrie::Hasher h;
  if (io::Status s = bd::hasher_for(base.params, &h); !s.ok()) return s;
  if (base.params.group_depth < 1 || base.params.group_depth > 8)
    return {io::Errc::bad_argument, "binary trie commit: bad group depth"};
  std::unique_ptr<io::ArenaFileStore> store;
  if (io::Status s = open_read_store(&store); !s.ok()) return s;
  auto p = std::make_unique<Pending>(files_, dead_, base, std::move(store), &reuse_, read_latency_, take_tree(h));
  CommitFrame& frame = p->frame;
  BlockTree& c = p->c;
  io::Status s = c.prepare(diff);
  if (s.ok()) s = c.resolve();
  if (!s.ok()) {
    give_back_tree(std::move(p->tree));
    return s;
  }
  frame.resolved();
  c.apply();
  frame.applied();
  p->out.root_hash = c.hash();
  frame.hashed();
  if (frame.pure_hash()) {
    PureHashCount pc;
    if (io::Status ps = c.pure_hash(&pc); !ps.ok()) {
      give_back_tree(std::move(p->tree));
      return ps;
    }
    frame.pure_hashed(pc.ns, pc.nodes, pc.calls);
  }
  frame.hash_stage_done();
  if (root_hash) *root_hash = p->out.root_hash;
  pending_ = std::move(p);
  return {};
}

io::Status BintrieCommitter::write_pages() {
  if (!pending_) return {io::Errc::bad_argument, "binary trie commit: write_pages() without a hashed commit"};
  packed_ = std::move(pending_);  // the next hash() may start once this returns
  Pending& p = *packed_;
  CommitFrame& frame = p.frame;
  BlockTree& c = p.c;
  CommitFrame::Outcome& o = p.out;
  io::Status st = frame.begin_writes();
  if (st.ok()) st = c.write(&o.root);
  give_back_tree(std::move(p.tree));
  if (!st.ok()) {
    const std::unique_ptr<Pending> dropped = std::move(packed_);
    return frame.fail(st);
  }
  frame.encoded();
  o.records_written = c.records_written;
  o.bytes_written = c.bytes_written;
  o.keys_delta = c.new_leaves;
  o.accounts_written = c.accounts;
  for (const StemWrites& sw : c.writes()) o.slot_writes += sw.values.size() + (sw.patch ? 1 : 0);
  o.records_read = c.records_read;
  if (!frame.keyed()) {
    frame.hand_over_written();
    set_next_base({o.root, o.root_hash, frame.base().params, frame.base().snapshot});
  }
  return {};
}

io::Status BintrieCommitter::publish(const std::string& spec_json, BintrieCommitStats* stats) {
  if (!packed_) return {io::Errc::bad_argument, "binary trie commit: publish() without written pages"};
  const std::unique_ptr<Pending> p = std::move(packed_);
  io::Status s = p->frame.publish(p->out, spec_json, stats);
  clear_next_base();
  if (!s.ok()) return s;
  return {};
}

}  // namespace st::persist
