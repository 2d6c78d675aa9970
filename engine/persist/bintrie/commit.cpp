// bintrie/commit: BintrieCommitter (phases in bintrie/commit.h), its calls over one commit's
// Committer (bintrie/commit_tree.h; its phases in bintrie/commit_{writes,resolve,plan,hash,
// emit}.cpp): hash() runs prepare, resolve, plan, hash_plan and the pure hash; write_pages()
// the writes and the supersession of every loaded node the plan does not keep; publish() the
// frame's publish. Both stores run the same phases; only the node source and sink differ
// (CommitFrame::keyed()): arena records by locator (PageReader; SubtreePacker), or RocksDB
// blobs by path key blob_key(path, depth) (one MultiGet per level; the commit's WriteBatch).
// Invariant: a commit is hashed before it is written and written before it is published; a
// failure at any step publishes nothing.
#include "engine/persist/bintrie/commit.h"

#include <memory>

#include "engine/persist/bintrie/commit_tree.h"

namespace st::persist {

using bintrie_commit::Committer;
using bintrie_commit::Key32;
using bintrie_commit::Node;
using bintrie_commit::Plan;
using bintrie_commit::StemWrites;
using bintrie_commit::blob_key_string;
namespace bd = bintrie_disk;

// The commit between its two calls: the hasher, the read store, the frame (phase clock,
// reader, later the writer), the resolved nodes and the hashed plan; the outcome.
struct BintrieCommitter::Pending {
  Pending(DbFiles& files, DeadPageLedger& dead, const CommitBase& base, std::unique_ptr<io::ArenaFileStore> store,
          PageReuse* reuse, stats::LogHistogram* latency, const bintrie::Hasher& hasher)
      : h(hasher),
        read_store(std::move(store)),
        frame(files, dead, kWho, base, read_store.get(), reuse, latency),
        c(frame, h, base.params.group_depth) {}
  static constexpr const char* kWho = "binary trie commit";
  bintrie::Hasher h;
  std::unique_ptr<io::ArenaFileStore> read_store;
  CommitFrame frame;
  Committer c;
  std::unique_ptr<Plan> plan;
  CommitFrame::Outcome out;
};

BintrieCommitter::BintrieCommitter(DbFiles& files)
    : CommitterBase(files), hash_scratch_(std::make_unique<BintrieHashScratch>()) {}
BintrieCommitter::~BintrieCommitter() = default;

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
  auto p = std::make_unique<Pending>(files_, dead_, base, std::move(store), &reuse_, read_latency_, h);
  CommitFrame& frame = p->frame;
  Committer& c = p->c;
  if (io::Status s = c.prepare(diff); !s.ok()) return s;
  if (io::Status s = c.resolve(); !s.ok()) return s;
  frame.resolved();
  if (io::Status s = c.plan(*hash_scratch_, &p->plan); !s.ok()) return s;
  frame.applied();
  if (p->plan) c.hash_plan(*hash_scratch_);
  frame.hashed();
  if (frame.pure_hash()) {
    PureHashCount pc;
    if (io::Status s = c.pure_hash(&pc); !s.ok()) return s;
    frame.pure_hashed(pc.ns, pc.nodes, pc.calls);
  }
  frame.hash_stage_done();
  if (root_hash) *root_hash = p->plan ? p->plan->hash : base.root_hash;
  pending_ = std::move(p);
  return {};
}

io::Status BintrieCommitter::write_pages() {
  if (!pending_) return {io::Errc::bad_argument, "binary trie commit: write_pages() without a hashed commit"};
  packed_ = std::move(pending_);  // the next hash() may start once this returns
  Pending& p = *packed_;
  CommitFrame& frame = p.frame;
  Committer& c = p.c;
  CommitFrame::Outcome& o = p.out;
  if (io::Status s = frame.begin_writes(); !s.ok()) {
    const std::unique_ptr<Pending> dropped = std::move(packed_);
    return frame.fail(s);
  }
  if (!frame.keyed()) c.packer_payload_ = frame.writer().payload_bytes();
  if (p.plan) {
    o.root_hash = p.plan->hash;
    io::Status st = c.emit(*p.plan, Key32{}, 0);
    if (!frame.keyed()) {
      std::vector<Locator> roots;
      if (st.ok()) st = frame.packer().finish(&roots);
      if (st.ok() && roots.size() != 1) st = {io::Errc::bad_argument, "binary trie commit: not one root record"};
      if (st.ok()) o.root = roots[0];
    }
    if (!st.ok()) {
      const std::unique_ptr<Pending> dropped = std::move(packed_);
      return frame.fail(st);
    }
  }
  frame.encoded();
  for (const Node& n : c.nodes_) {
    if (n.reused) continue;
    if (frame.keyed()) frame.supersede_key(blob_key_string(n.path.data(), n.depth), n.body_bytes);
    else frame.supersede(n.records, n.body_bytes);
  }
  o.records_written = c.records_written;
  o.bytes_written = c.bytes_written;
  o.keys_delta = c.new_leaves;
  o.accounts_written = c.accounts;
  for (const StemWrites& sw : c.writes_) o.slot_writes += sw.values.size() + (sw.patch ? 1 : 0);
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
