// proof: key and stem proofs, verification and sizes (see proof.h).
#include "engine/bintrie/proof.h"

#include <bit>
#include <cstring>

#include "engine/bintrie/stem_bits.h"
#include "kernels/support/check.h"

namespace st::bintrie {
namespace {

// Folds `cur` (the node at depth siblings.size()) up to the root along stem31's bits.
Hash32 climb(const Hasher& h, const uint8_t* stem31, const std::vector<Hash32>& siblings, Hash32 cur) {
  for (size_t d = siblings.size(); d-- > 0;) {
    Hash32 up;
    if (stem_bit(stem31, unsigned(d))) hash_pair(h, siblings[d].data(), cur.data(), up.data());
    else hash_pair(h, cur.data(), siblings[d].data(), up.data());
    cur = up;
  }
  return cur;
}

}  // namespace

KeyProof prove_key(const MutableTree& tree, const Hash32& key) {
  KeyProof p;
  NodeRef ref = tree.root_ref();
  unsigned depth = 0;
  while (ref_is_internal(ref)) {
    const InternalNode& n = tree.internal(ref_index(ref));
    const unsigned b = stem_bit(key.data(), depth);
    p.siblings.push_back(tree.ref_hash(n.child[b ^ 1]));
    ref = n.child[b];
    ++depth;
  }
  if (ref == kEmptyRef) { p.end = ProofEnd::empty; return p; }
  ST_CHECK(ref_is_stem(ref), "binary trie: a proof reached an unread subtree");
  const uint32_t si = ref_index(ref);
  p.stem = tree.stem(si).stem;
  Hash32 leaves[256];
  tree.stem_leaf_hashes(si, leaves);
  DenseStemTree dt;
  dense_stem_tree(tree.hasher(), leaves, &dt);
  if (std::memcmp(p.stem.data(), key.data(), 31) != 0) {
    p.end = ProofEnd::other_stem;
    p.other_subtree_root = dt.root();
    return p;
  }
  p.end = ProofEnd::key_stem;
  dt.siblings(key[31], p.stem_siblings);
  p.value = tree.get(key);
  return p;
}

std::optional<StemProof> prove_stem(const MutableTree& tree, const uint8_t* stem31) {
  const auto si = tree.find_stem(stem31);
  if (!si) return std::nullopt;
  StemProof p;
  NodeRef ref = tree.root_ref();
  unsigned depth = 0;
  while (ref_is_internal(ref)) {
    const InternalNode& n = tree.internal(ref_index(ref));
    const unsigned b = stem_bit(stem31, depth);
    p.siblings.push_back(tree.ref_hash(n.child[b ^ 1]));
    ref = n.child[b];
    ++depth;
  }
  p.stem = tree.stem(*si).stem;
  for (const StemSlot& s : tree.slots(*si)) {
    p.bitmap[s.sub / 8] |= uint8_t(0x80 >> (s.sub % 8));
    p.values.push_back(s.value);
  }
  return p;
}

std::variant<std::optional<Hash32>, std::string> verify_key_proof(const Hasher& h, const Hash32& root,
                                                                   const Hash32& key, const KeyProof& p) {
  if (p.siblings.size() > kStemBits) return std::string("proof deeper than 248 levels");
  Hash32 bottom{};
  std::optional<Hash32> result;
  switch (p.end) {
    case ProofEnd::empty:
      break;
    case ProofEnd::key_stem: {
      if (std::memcmp(p.stem.data(), key.data(), 31) != 0) return std::string("proof is for another stem");
      Hash32 cur{};
      if (p.value) h.hash(p.value->data(), 32, cur.data());
      const unsigned sub = key[31];
      for (unsigned l = 0; l < 8; ++l) {
        Hash32 up;
        if ((sub >> l) & 1) hash_pair(h, p.stem_siblings[l].data(), cur.data(), up.data());
        else hash_pair(h, cur.data(), p.stem_siblings[l].data(), up.data());
        cur = up;
      }
      hash_stem_node(h, p.stem.data(), cur.data(), bottom.data());
      result = p.value;
      break;
    }
    case ProofEnd::other_stem: {
      if (std::memcmp(p.stem.data(), key.data(), 31) == 0) return std::string("absence proof names the key's own stem");
      if (stem_lcp(p.stem.data(), key.data()) < p.siblings.size())
        return std::string("absence proof: the other stem is not on the key's path");
      hash_stem_node(h, p.stem.data(), p.other_subtree_root.data(), bottom.data());
      break;
    }
    default:
      return std::string("bad proof end marker");
  }
  if (climb(h, key.data(), p.siblings, bottom) != root) return std::string("root mismatch");
  return result;
}

std::string verify_stem_proof(const Hasher& h, const Hash32& root, const StemProof& p) {
  size_t k = 0;
  for (uint8_t x : p.bitmap) k += size_t(std::popcount(x));
  if (k != p.values.size() || k == 0) return "bitmap does not match the values";
  if (p.siblings.size() > kStemBits) return "proof deeper than 248 levels";
  StemBlob sb;
  sb.stem = p.stem;
  sb.bitmap = p.bitmap;
  sb.values = p.values;
  const Hash32 stem_hash = stem_blob_hash(h, sb);
  if (climb(h, p.stem.data(), p.siblings, stem_hash) != root) return "root mismatch";
  return "";
}

std::vector<uint8_t> serialize_key_proof(const KeyProof& p) {
  std::vector<uint8_t> out;
  out.push_back(uint8_t(p.siblings.size()));
  for (const auto& s : p.siblings) out.insert(out.end(), s.begin(), s.end());
  out.push_back(uint8_t(p.end));
  if (p.end == ProofEnd::empty) return out;
  out.insert(out.end(), p.stem.begin(), p.stem.end());
  if (p.end == ProofEnd::key_stem) {
    for (const auto& s : p.stem_siblings) out.insert(out.end(), s.begin(), s.end());
    out.push_back(p.value ? 1 : 0);
    if (p.value) out.insert(out.end(), p.value->begin(), p.value->end());
  } else {
    out.insert(out.end(), p.other_subtree_root.begin(), p.other_subtree_root.end());
  }
  return out;
}

size_t proof_size_bytes(const KeyProof& p) {
  size_t n = 1 + 32 * p.siblings.size() + 1;
  if (p.end == ProofEnd::key_stem) n += 31 + 8 * 32 + 1 + (p.value ? 32 : 0);
  else if (p.end == ProofEnd::other_stem) n += 31 + 32;
  return n;
}

size_t proof_size_bytes(const StemProof& p) { return 1 + 32 * p.siblings.size() + 31 + 32 + 32 * p.values.size(); }

}  // namespace st::bintrie
