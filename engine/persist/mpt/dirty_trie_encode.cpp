// mpt/dirty_trie_encode: the encoding pass of a block commit (dirty_trie.h): the new nodes
// encoded in the packer's post-order, kept children placed, ready records hashed in keccak
// batches (hash_all, hash_ready), the pure-hash reference, and the records handed to the
// sink (write_all).
#include "engine/persist/mpt/dirty_trie.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <map>

#include "engine/mpt/account.h"
#include "engine/mpt/node_codec.h"
#include "engine/persist/mpt/db.h"
#include "engine/persist/mpt/dirty_trie_paths.h"
#include "engine/persist/mpt/node.h"
#include "kernels/keccak256.h"

namespace st::persist::mpt_commit_detail {

namespace {
constexpr size_t kPackAhead = 4096;  // encode_one's write prefetch distance in pack_bytes_
}  // namespace

// The packed path key of cursor()[0, depth) followed by nibs[0, n) (the rest zero).
std::array<uint8_t, 32> DirtyTrie::cursor_key(uint32_t depth, const uint8_t* nibs, uint32_t n) {
  std::array<uint8_t, 32> out{};
  const uint8_t* at = cursor();
  for (uint32_t i = 0; i < depth; ++i) set_nib(out.data(), i, at[i]);
  for (uint32_t i = 0; i < n; ++i) set_nib(out.data(), depth + i, nibs[i]);
  return out;
}

// RocksDB: a kept node is still at cursor()[0, depth) of the trie being encoded (its key
// already holds it).
io::Status DirtyTrie::check_unmoved(int32_t n, uint32_t depth) {
  const Node& node = nodes_[n];
  const bool same_trie = node.owner < 0 ? owner_ == nullptr
                                        : owner_ && std::memcmp(owners_[size_t(node.owner)].data(), owner_, 32) == 0;
  bool same = same_trie && node.depth == depth;
  const uint8_t* at = cursor();
  for (uint32_t i = 0; same && i < depth; ++i) same = nib(node.at.data(), i) == at[i];
  if (!same) return {io::Errc::corrupt_page, "mpt commit: internal: a kept " + key_name(key_of(node)) + " moved"};
  return {};
}

// A kept node (a stub, or read from its own record): RocksDB, checked not to have moved;
// arena, placed as it is (its locator in the packer's order).
io::Status DirtyTrie::place_kept(int32_t n, uint32_t depth) {
  const CommittedRef& r = refs_[size_t(n)];
  if (keyed_) {
    if (io::Status s = check_unmoved(n, depth); !s.ok()) return s;
  } else {
    PackOp op;
    op.placed = r.loc;
    pack_ops_.push_back(op);
  }
  if (!r.stub) mark_reused(n);
  return {};
}

// A new leaf's storage trie (an account leaf's), encoded below it under its account's key;
// the leaf's flat-snapshot write queued (snapshot on).
io::Status DirtyTrie::encode_storage(int32_t n, uint32_t depth, uint32_t* below, uint32_t* kids_pushed) {
  const Node& node = nodes_[n];
  if (frame_.snapshot()) {
    SnapPut& p = snap_puts_.emplace_back();
    const std::array<uint8_t, 32> k = cursor_key(depth, node.path.data(), node.path_len);
    if (owner_) std::memcpy(p.key.data(), owner_, 32);
    std::memcpy(p.key.data() + (owner_ ? 32 : 0), k.data(), 32);
    p.key_len = owner_ ? 64 : 32;
    p.node = n;
  }
  if (node.storage_trie || node.storage < 0) return {};
  if (depth + node.path_len != 64) return {io::Errc::corrupt_page, "mpt commit: internal: account leaf above depth 64"};
  const std::array<uint8_t, 32> acct = cursor_key(depth, node.path.data(), node.path_len);
  owner_ = acct.data();
  io::Status s = encode_tree(node.storage, true, 0, below, kids_pushed);
  owner_ = nullptr;
  return s;
}

// A new node's children encoded in order, their path nibbles in cursor() from depth on
// (*below: their highest level; *kids_pushed: the subtrees they pushed); a branch's slots
// are written into *branch as its children are visited.
io::Status DirtyTrie::encode_children(int32_t n, uint32_t depth, uint32_t* below, uint32_t* kids_pushed,
                                      BranchBody* branch) {
  const Node& node = nodes_[n];
  if (node.kind == Node::leaf) return encode_storage(n, depth, below, kids_pushed);
  if (node.kind == Node::ext) {
    if (depth + node.path_len > 64) return {io::Errc::corrupt_page, "mpt commit: internal: extension below depth 64"};
    std::memcpy(cursor() + depth, node.path.data(), node.path_len);
    return encode_tree(node.kids[0], false, depth + node.path_len, below, kids_pushed);
  }
  if (node.kind != Node::branch) return {io::Errc::corrupt_page, "mpt commit: internal: a stub to encode"};
  if (depth >= 64) return {io::Errc::corrupt_page, "mpt commit: internal: branch below depth 64"};
  return encode_branch_kids(n, depth, below, kids_pushed, branch);
}

// What the visits read of a branch's children fetched together (a kept child's
// CommittedRef, a new child's first bytes): the misses overlap instead of one per visit.
void DirtyTrie::prefetch_kids(const Node& node) const {
  for (const int32_t k : node.kids)
    if (k >= 0) {
      const char* p = size_t(k) < refs_.size() ? reinterpret_cast<const char*>(&refs_[size_t(k)])
                                               : reinterpret_cast<const char*>(&nodes_[size_t(k)]);
      __builtin_prefetch(p);
      __builtin_prefetch(p + sizeof(CommittedRef) - 1);
    }
}

// The apply pass created the new nodes in post-order, children before parents and slot
// 0's subtree before slot 1's, so this walk meets them in nearly increasing index: from
// new node n, node n + kAheadNode is fetched and the children of node n + kAheadKids
// (fetched two visits ago) too, so that their misses overlap the visits in between. Only
// hints: an order that differs costs the misses it saves, never a result.
void DirtyTrie::prefetch_ahead(int32_t n) const {
  constexpr size_t kAheadNode = 4, kAheadKids = 2;
  const size_t node = size_t(n) + kAheadNode, kids = size_t(n) + kAheadKids;
  if (node < nodes_.size()) {
    const char* p = reinterpret_cast<const char*>(&nodes_[node]);
    __builtin_prefetch(p);
    __builtin_prefetch(p + offsetof(Node, kids) + sizeof(Node::kids) - 1);
  }
  if (kids < nodes_.size()) prefetch_kids(nodes_[kids]);
}

// A new branch's children in slot order, each visited once: a kept child (most of them)
// placed and its slot (a0 || its hash) written from the one CommittedRef read; a new child
// encoded (recursively), then its slot: a0 || its digest, 32 zero bytes and a pending patch
// while the digest is still to come, or its embedded encoding.
io::Status DirtyTrie::encode_branch_kids(int32_t n, uint32_t depth, uint32_t* below, uint32_t* kids_pushed,
                                         BranchBody* b) {
  const Node& node = nodes_[n];
  prefetch_kids(node);
  uint8_t* const body = b->buf + 9;
  uint8_t* p = body;
  uint32_t l = 0, pushed = 0;
  for (int i = 0; i < 16; ++i) {
    const int32_t k = node.kids[i];
    if (k < 0) {
      *p++ = 0x80;
      continue;
    }
    cursor()[depth] = uint8_t(i);
    if (kept(k)) {  // most children: placed here, without a visit
      if (io::Status s = place_kept(k, depth + 1); !s.ok()) return s;
      ++*kids_pushed;
      *p = 0xa0;
      std::memcpy(p + 1, refs_[size_t(k)].hash.data(), 32);
      p += 33;
      continue;
    }
    if (io::Status s = encode_tree(k, false, depth + 1, &l, &pushed); !s.ok()) return s;
    *below = std::max(*below, l);
    *kids_pushed += pushed;
    const Enc& ce = enc_of(k);
    if (!ce.hashed) {
      std::memcpy(p, ce.ref.bytes, ce.ref.len);
      p += ce.ref.len;
      continue;
    }
    *p = 0xa0;
    if (ce.digested) {
      std::memcpy(p + 1, ce.ref.bytes, 32);
    } else {
      b->patch_kid[b->patches] = k;
      b->patch_at[b->patches++] = uint32_t(p + 1 - body);
      std::memset(p + 1, 0, 32);
    }
    p += 33;
  }
  b->end = p;
  return {};
}

// A new hashed node's record: listed for its level's batch and appended to the packer's
// order (RocksDB: under its path key).
void DirtyTrie::push_record(int32_t n, uint32_t depth, uint32_t kids_pushed) {
  const uint32_t ei = uint32_t(nodes_[n].enc);
  const Enc& e = enc_[ei];
  PackOp op;
  op.enc = ei;
  op.kids = kids_pushed;
  if (frame_.keyed()) {
    const std::array<uint8_t, 32> at = cursor_key(depth, nullptr, 0);
    pack_keys_.push_back(owner_ ? storage_node_key(owner_, at.data(), depth) : account_node_key(at.data(), depth));
  }
  pack_ops_.push_back(op);
  ++records_written;
  bytes_written += e.body_len;
  if (e.waiting == 0) ready_.push_back(ei);
  if (ready_.size() >= kReadyBatch) hash_ready(false);
}

io::Status DirtyTrie::encode_tree(int32_t n, bool top, uint32_t depth, uint32_t* level, uint32_t* pushed) {
  *level = 0;
  *pushed = 0;
  if (kept(n)) {
    *pushed = 1;
    return place_kept(n, depth);
  }
  if (size_t(n) >= refs_.size()) prefetch_ahead(n);
  uint32_t below = 0, kids_pushed = 0;
  BranchBody branch;  // a branch's slots, written during its children's visits
  if (io::Status s = encode_children(n, depth, &below, &kids_pushed, &branch); !s.ok()) return s;
  nodes_[n].enc = int32_t(enc_.size());
  Enc& e = enc_.emplace_back();
  e.level = below + 1;
  e.top = top;
  *level = e.level;
  if (io::Status s = encode_one(n, &branch); !s.ok()) return s;
  if (!enc_of(n).hashed) {
    if (kids_pushed) return {io::Errc::corrupt_page, "mpt commit: internal: embedded node with hashed children"};
    return {};
  }
  push_record(n, depth, kids_pushed);
  *pushed = 1;
  return {};
}

mpt::NodeRef DirtyTrie::child_ref(int32_t n) const {
  if (kept(n) || !enc_of(n).hashed || enc_of(n).digested) return ref_of(n);
  mpt::NodeRef r;
  r.len = 32;
  std::memset(r.bytes, 0, 32);
  return r;
}

bool DirtyTrie::awaits(int32_t n, int32_t k, uint32_t patch_off) {
  if (kept(k)) return false;
  Enc& c = enc_of(k);
  if (!c.hashed || c.digested) return false;
  c.patch_off = patch_off;
  c.parent = uint32_t(nodes_[n].enc);
  ++enc_of(n).waiting;
  return true;
}

mpt::NodeRef DirtyTrie::ref_of(int32_t n) const {
  if (!kept(n)) return enc_of(n).ref;
  mpt::NodeRef r;
  r.len = 32;
  std::memcpy(r.bytes, refs_[size_t(n)].hash.data(), 32);
  return r;
}

// A new leaf's encoding into buf (*end: past it); an account leaf's value is recomputed, its
// storage root a new hashed child (patched when its digest is still to come) or a kept one.
io::Status DirtyTrie::encode_leaf(int32_t n, uint8_t* buf, uint8_t** end) {
  const Node& node = nodes_[n];
  Enc& e = enc_of(n);
  const uint8_t* value = pool_.data() + node.val_off;
  size_t value_len = node.val_len;
  uint8_t acct_rlp[160];
  int32_t hashed_kid = -1;  // a new storage trie not hashed yet: its digest goes to the value's
                            // bytes [len-65, len-33)
  if (!node.storage_trie && node.acct >= 0) {
    const AccountOp& a = accts_[node.acct];
    mpt::AccountFields f;
    if (value_len)
      if (std::string err = mpt::decode_account_rlp({value, value_len}, &f); !err.empty())
        return {io::Errc::corrupt_page, "mpt commit: account leaf: " + err};
    if (a.nonce) f.nonce = *a.nonce;
    if (a.balance) f.balance = *a.balance;
    if (a.code_hash) f.code_hash = *a.code_hash;
    f.storage_root = mpt::kEmptyRoot;
    if (node.storage >= 0) std::memcpy(f.storage_root.data(), child_ref(node.storage).bytes, 32);
    if (mpt::account_rlp_size(f) > sizeof(acct_rlp))
      return {io::Errc::corrupt_page, "mpt commit: internal: account leaf value too long"};
    value = acct_rlp;
    value_len = size_t(mpt::put_account_rlp(acct_rlp, f) - acct_rlp);
    if (node.storage >= 0 && !kept(node.storage) && !enc_of(node.storage).digested)
      hashed_kid = node.storage;  // a top: hashed
  }
  if (frame_.snapshot()) {  // the flat snapshot takes the value once the digests are patched in
    e.leaf_val_off = uint32_t(leaf_vals_.size());
    e.leaf_val_len = uint32_t(value_len);
    leaf_vals_.insert(leaf_vals_.end(), value, value + value_len);
    if (hashed_kid >= 0) enc_of(hashed_kid).patch_val_off = uint32_t(leaf_vals_.size() - 65);
  }
  *end = mpt::put_leaf_nibbles(buf, node.path.data(), node.path_len, value, value_len);
  // The value is the encoding's last item: the storage root is its bytes [len-65, len-33).
  if (hashed_kid >= 0) awaits(n, hashed_kid, e.body_off + uint32_t(*end - buf) - 65);
  e.kind = uint8_t(node.storage_trie ? MptRecordKind::leaf : MptRecordKind::account_leaf);
  return {};
}

// A new branch's record from the slots its children's visits wrote (BranchBody): the
// value item and the list header right in front (*begin: the first byte); each pending
// patch settled: the digest copied in when a later sibling's batch hashed the child
// meanwhile, else the branch waits for it (awaits). The bytes of mpt::put_branch over the
// children's references.
uint8_t* DirtyTrie::encode_branch(int32_t n, BranchBody& b, uint8_t** begin) {
  uint8_t* const body = b.buf + 9;
  uint8_t* end = nullptr;
  *begin = mpt::finish_branch(body, b.end, nullptr, 0, &end);
  const uint32_t body_off = enc_of(n).body_off + uint32_t(body - *begin);
  for (int j = 0; j < b.patches; ++j) {
    const Enc& ce = enc_of(b.patch_kid[j]);
    if (ce.digested) std::memcpy(body + b.patch_at[j], ce.ref.bytes, 32);
    else awaits(n, b.patch_kid[j], body_off + b.patch_at[j]);
  }
  return end;
}

io::Status DirtyTrie::encode_one(int32_t n, BranchBody* branch) {
  const Node& node = nodes_[n];
  Enc& e = enc_of(n);
  e.body_off = uint32_t(pack_bytes_.size());
  uint8_t buf[1024];
  uint8_t* begin = buf;  // the encoding is [begin, end)
  uint8_t* end = buf;
  switch (node.kind) {
    case Node::leaf:
      if (io::Status s = encode_leaf(n, buf, &end); !s.ok()) return s;
      break;
    case Node::ext: {
      const int32_t k = node.kids[0];
      end = mpt::put_extension_nibbles(buf, node.path.data(), node.path_len, child_ref(k));
      awaits(n, k, e.body_off + uint32_t(end - buf) - 32);  // the child is the last item
      e.kind = uint8_t(MptRecordKind::extension);
      break;
    }
    case Node::branch:
      end = encode_branch(n, *branch, &begin);
      e.kind = uint8_t(MptRecordKind::branch);
      break;
    case Node::stub: return {io::Errc::corrupt_page, "mpt commit: internal: a stub to encode"};
  }
  const size_t len = size_t(end - begin);
  e.body_len = uint32_t(len);
  pack_bytes_.insert(pack_bytes_.end(), begin, end);
  // The next records' destination (last written a block ago, out of cache by now) fetched
  // for writing, as many bytes kPackAhead ahead as this one took: their copies then find
  // their lines. Within the capacity kept across commits only.
  if (pack_bytes_.size() + kPackAhead + len <= pack_bytes_.capacity()) {
    const uint8_t* ahead = pack_bytes_.data() + pack_bytes_.size() + kPackAhead;
    for (size_t off = 0; off < len; off += 64) __builtin_prefetch(ahead + off, 1);
  }
  e.hashed = len >= 32 || e.top;
  if (!e.hashed) {  // embedded: it holds no hashed child (a0 || digest is 33 bytes), so it is final
    e.ref.len = uint8_t(len);
    std::memcpy(e.ref.bytes, begin, len);
  }
  return {};
}

io::Status DirtyTrie::hash_all(Hash32* root_hash) {
  *root_hash = mpt::kEmptyRoot;
  pack_ops_.clear();
  pack_keys_.clear();
  pack_bytes_.clear();
  leaf_vals_.clear();
  snap_puts_.clear();
  if (new_root_ < 0) return {};
  // Only the nodes the new tree encodes get an Enc (a dense array, not one per node read);
  // a node is packed at most once, so pack_ops_ <= nodes_ (one allocation, with room to
  // spare: a block that reads a few more nodes than the last does not move it to fresh pages).
  enc_.clear();
  ready_.clear();
  if (pack_ops_.capacity() < nodes_.size()) pack_ops_.reserve(nodes_.size() + nodes_.size() / 4);
  keyed_ = frame_.keyed();
  owner_ = nullptr;
  uint32_t top_level = 0, pushed = 0;
  if (io::Status s = encode_tree(new_root_, true, 0, &top_level, &pushed); !s.ok()) return s;
  hash_ready(true);
  if (!enc_of(new_root_).digested) return {io::Errc::corrupt_page, "mpt commit: internal: the root was not hashed"};
  if (SnapshotDelta* snap = frame_.snapshot())  // every new leaf, its value final now
    for (const SnapPut& p : snap_puts_) {
      const Enc& le = enc_of(p.node);
      snap->put({p.key.data(), p.key_len}, {leaf_vals_.data() + le.leaf_val_off, le.leaf_val_len});
    }
  std::memcpy(root_hash->data(), ref_of(new_root_).bytes, 32);
  return {};
}

namespace {
// One keccak256_batch over n encoding bodies in `bytes` (enc_at(j): the j-th encoding, with
// body_off / body_len), their digests into out (32 bytes each): one batch of the hash
// phase's ready records; msgs, lens and out are the caller's, reused per batch.
template <class EncAt>
void hash_bodies(const uint8_t* bytes, size_t n, EncAt enc_at, std::vector<const uint8_t*>& msgs,
                 std::vector<size_t>& lens, std::vector<uint8_t>& out) {
  msgs.resize(n);
  lens.resize(n);
  out.resize(n * 32);
  for (size_t j = 0; j < n; ++j) {
    const auto& e = enc_at(j);
    msgs[j] = bytes + e.body_off;
    lens[j] = e.body_len;
  }
  kernels::keccak256_batch(msgs.data(), lens.data(), out.data(), n);
}
}  // namespace

// The ready records hashed, kReadyBatch at a time (all: until none is left), one
// keccak256_batch each; each digest goes into its parent's encoding (and an account's
// snapshot value) when the parent waits for it, and a parent whose last digest arrived is
// ready in turn.
void DirtyTrie::hash_ready(bool all) {
  while (!ready_.empty() && (all || ready_.size() >= kReadyBatch)) {
    batch_.swap(ready_);
    ready_.clear();
    hash_bodies(pack_bytes_.data(), batch_.size(), [&](size_t j) -> const Enc& { return enc_[batch_[j]]; }, msgs_,
                lens_, digests_);
    for (size_t j = 0; j < batch_.size(); ++j) {
      Enc& e = enc_[batch_[j]];
      const uint8_t* digest = digests_.data() + 32 * j;
      e.ref.len = 32;
      std::memcpy(e.ref.bytes, digest, 32);
      e.digested = true;
      if (e.parent == kNoParent) continue;  // its parent, encoded later, reads ref
      std::memcpy(pack_bytes_.data() + e.patch_off, digest, 32);
      if (e.patch_val_off != kNoPatch) std::memcpy(leaf_vals_.data() + e.patch_val_off, digest, 32);
      if (--enc_[e.parent].waiting == 0) ready_.push_back(e.parent);
    }
  }
}

io::Status DirtyTrie::pure_hash(PureHashCount* out) {
  // Before the clock: the records hash_all() hashed (every new pack op), counted and then
  // listed by level (1 = no hashed child), each with the digest it was given, their bytes
  // copied out level by level.
  pure_counts_.assign(1, 0);
  size_t n = 0;
  for (const PackOp& op : pack_ops_) {
    if (op.placed != kNoLocator) continue;
    const uint32_t l = enc_[op.enc].level;
    if (l >= pure_counts_.size()) pure_counts_.resize(l + 1, 0);
    ++pure_counts_[l], ++n;
  }
  if (pure_counts_[0] != 0) return {io::Errc::corrupt_page, "mpt commit: internal: a new record at level 0"};
  pure_.prepare(pure_counts_, n);
  for (size_t l = 1; l < pure_counts_.size(); ++l) pure_counts_[l] = pure_.level_end[l - 1];  // next slot per level
  for (const PackOp& op : pack_ops_) {
    if (op.placed != kNoLocator) continue;
    const Enc& e = enc_[op.enc];
    const uint32_t i = pure_counts_[e.level]++;
    pure_.msgs[i] = pack_bytes_.data() + e.body_off;
    pure_.lens[i] = e.body_len;
    pure_.expect[i] = e.ref.bytes;
  }
  pure_.gather_bytes();
  return mpt_pure_hash(pure_, out);
}

io::Status DirtyTrie::write_all(Locator* root_loc) {
  *root_loc = kNoLocator;
  if (new_root_ < 0) return {};
  const bool keyed = frame_.keyed();
  if (keyed && pack_keys_.size() != pack_ops_.size())
    return {io::Errc::corrupt_page, "mpt commit: internal: a RocksDB node without its key"};
  for (size_t i = 0; i < pack_ops_.size(); ++i) {
    const PackOp& op = pack_ops_[i];
    if (op.placed != kNoLocator) {
      if (keyed) continue;
      if (io::Status s = frame_.place_kept(op.placed); !s.ok()) return s;
      continue;
    }
    const Enc& e = enc_[op.enc];
    const uint8_t* body = pack_bytes_.data() + e.body_off;
    if (keyed) {
      frame_.rocks().put(std::move(pack_keys_[i]), std::string(reinterpret_cast<const char*>(body), e.body_len));
    } else if (io::Status s = frame_.packer().push(e.kind, {body, e.body_len}, op.kids); !s.ok()) {
      return s;
    }
  }
  if (keyed) return {};
  std::vector<Locator> roots;
  if (io::Status s = frame_.packer().finish(&roots); !s.ok()) return s;
  if (roots.size() != 1) return {io::Errc::corrupt_page, "mpt commit: internal: " + std::to_string(roots.size()) + " roots"};
  *root_loc = roots[0];
  return {};
}

}  // namespace st::persist::mpt_commit_detail
