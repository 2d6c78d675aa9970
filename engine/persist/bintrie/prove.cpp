// bintrie/prove.cpp: BintrieTreeDb::prove, key proofs rebuilt from the group blobs on disk:
// each node on the key's path read (arena: its record; RocksDB: its blob by path key) and
// checked against the hash its parent's entry records (the root: the manifest's), the
// siblings collected inside each group and the key's stem. Nodes are read through the
// verified fetch (bintrie/verified_fetch.h) and each checked (check_hash, on the hashes the
// proof computes anyway) before its siblings are taken.
#include <cstring>

#include "engine/bintrie/proof.h"
#include "engine/persist/bintrie/tree_db.h"

namespace st::persist::bintrie_read {
namespace {

// The hash of the node at relative depth r (1..g), relative path q, of a group whose inner
// hashes are `inner` (reconstruct_group).
Hash32 group_node_hash(const bintrie::GroupBlob& b, const std::vector<Hash32>& inner, unsigned r, uint32_t q) {
  if (r < b.g) return inner[(size_t(1) << r) - 1 + q];
  for (const auto& e : b.entries)
    if (e.depth == b.g && e.pos == q) return e.hash;
  return Hash32{};
}

}  // namespace


// The node at a proof's position: arena, its record; RocksDB, the blob at the key's path
// key of that depth (missing: an error). *where names it.
io::Status BintrieTreeDb::read_prove_node(const Hash32& key, const ProvePos& at, Node* node, std::string* where,
                                          uint64_t* records) {
  if (files_.store == StoreKind::arena) {
    *where = record_name(kReader, at.loc);
    return fetch_record_sync(*reader_, g_, kReader, at.loc, node, records);
  }
  const std::vector<uint8_t> k = bintrie::blob_key(key.data(), at.depth);
  *where = key_name(kReader, {reinterpret_cast<const char*>(k.data()), k.size()});
  bool found = false;
  if (io::Status st = rocks_get(key.data(), at.depth, node, &found); !st) return st;
  if (!found) return {io::Errc::corrupt_page, *where + ": missing"};
  return {};
}

// The proof's last node, a stem (its hash and path checked): the key's own stem ends the
// proof with the value and the siblings inside the stem; another stem ends it as
// other_stem with that stem's subtree root.
io::Status BintrieTreeDb::prove_at_stem(const bintrie::StemBlob& stem, const Hash32& key, const ProvePos& at,
                                        const std::string& where, bintrie::KeyProof* p) {
  Hash32 leaves[256];
  size_t j = 0;
  for (int i = 0; i < 256; ++i) {
    leaves[i] = Hash32{};
    if ((stem.bitmap[i / 8] >> (7 - i % 8)) & 1) h_.hash(stem.values[j++].data(), 32, leaves[i].data());
  }
  bintrie::DenseStemTree dt;
  bintrie::dense_stem_tree(h_, leaves, &dt);
  Hash32 stem_hash;
  bintrie::hash_stem_node(h_, stem.stem.data(), dt.root().data(), stem_hash.data());
  if (io::Status st = check_hash(stem_hash, at.expect, where, at.depth == 0, false); !st) return st;
  if (!bd::same_prefix(stem.stem.data(), key.data(), at.depth))
    return {io::Errc::corrupt_page, where + ": stem does not continue its path"};
  p->stem = stem.stem;
  if (std::memcmp(stem.stem.data(), key.data(), 31) != 0) {
    p->end = bintrie::ProofEnd::other_stem;
    p->other_subtree_root = dt.root();
    return {};
  }
  p->end = bintrie::ProofEnd::key_stem;
  dt.siblings(key[31], p->stem_siblings);
  p->value = bd::stem_value(stem, key[31]);
  return {};
}

// A group on the proof's path (its hash checked): appends the siblings inside it down to
// the key's entry, then moves `at` to that entry's node; with no entry on the key's path
// the proof ends (empty) at the first empty node and *done is set.
io::Status BintrieTreeDb::prove_in_group(const bintrie::GroupBlob& group, const std::vector<Locator>& children,
                                         const Hash32& key, ProvePos& at, const std::string& where,
                                         bintrie::KeyProof* p, bool* done) {
  if (at.stem_only) return {io::Errc::corrupt_page, where + ": a group where its parent's entry ends in a stem"};
  if (at.depth >= kMaxDepth) return {io::Errc::corrupt_page, where + ": group at depth " + std::to_string(at.depth)};
  const std::vector<Hash32> inner = bintrie::reconstruct_group(h_, group);
  if (io::Status st = check_hash(inner[0], at.expect, where, at.depth == 0, true); !st) return st;
  const uint32_t pos = bd::key_bits(key.data(), at.depth, g_);
  const auto e = bd::find_entry(group, pos);
  unsigned r_end;
  if (e) {
    r_end = group.entries[*e].depth;
  } else {
    // The first empty node on the key's path inside the group.
    r_end = 1;
    while (r_end < g_ && group_node_hash(group, inner, r_end, pos >> (g_ - r_end)) != Hash32{}) ++r_end;
  }
  for (unsigned t = 0; t < r_end; ++t) {
    const uint32_t q = (pos >> (g_ - t - 1)) ^ 1u;
    p->siblings.push_back(group_node_hash(group, inner, t + 1, q));
  }
  if (!e) {
    p->end = bintrie::ProofEnd::empty;
    *done = true;
    return {};
  }
  at.stem_only = r_end < g_;
  at.depth += r_end;
  at.expect = group.entries[*e].hash;
  if (files_.store == StoreKind::arena) at.loc = children[*e];
  return {};
}

io::Status BintrieTreeDb::prove_key(const Hash32& key, bintrie::KeyProof* p) {
  *p = {};
  if (empty_tree()) return {};
  // Each node's hash is checked, as a lookup's; the root's against the manifest.
  ProvePos at{root_loc(), 0, false, files_.manifest.root_hash};
  uint64_t records = 0;
  Node node;
  for (;;) {
    std::string where;
    if (io::Status st = read_prove_node(key, at, &node, &where, &records); !st) return st;
    if (!node.is_group) return prove_at_stem(node.stem, key, at, where, p);
    bool done = false;
    if (io::Status st = prove_in_group(node.group, node.children, key, at, where, p, &done); !st || done) return st;
  }
}

io::Status BintrieTreeDb::prove(const state::StateKey& key, StateProof* out) {
  BintrieStateProof p;
  if (reader_) reader_->clear();  // proofs start cold (and the cache stays bounded)
  p.basic_data_key = bintrie::basic_data_key(ks_, key.address);
  p.code_hash_key = bintrie::code_hash_key(ks_, key.address);
  if (io::Status st = prove_key(p.basic_data_key, &p.basic_data); !st) return st;
  if (io::Status st = prove_key(p.code_hash_key, &p.code_hash); !st) return st;
  if (key.slot) {
    p.slot_key = bintrie::storage_slot_key(ks_, key.address, *key.slot);
    bintrie::KeyProof sp;
    if (io::Status st = prove_key(p.slot_key, &sp); !st) return st;
    p.slot = std::move(sp);
  }
  *out = std::move(p);
  return {};
}

}  // namespace st::persist::bintrie_read
