// proof: prover over any NodeSource, and the hardened verifier (see proof.h).
#include "engine/mpt/proof.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "engine/mpt/account.h"
#include "kernels/hex_prefix.h"
#include "kernels/keccak256.h"
#include "kernels/rlp.h"

namespace st::mpt {

using namespace st::kernels;

namespace {

std::vector<uint8_t> nibbles_of(std::span<const uint8_t> key) {
  std::vector<uint8_t> n(key.size() * 2);
  for (size_t i = 0; i < key.size(); ++i) { n[2 * i] = key[i] >> 4; n[2 * i + 1] = key[i] & 15; }
  return n;
}

bool hash_matches(std::span<const uint8_t> enc, const uint8_t* want) {
  uint8_t h[32];
  keccak256(enc.data(), enc.size(), h);
  return std::memcmp(h, want, 32) == 0;
}

}  // namespace

std::vector<Bytes> prove(const NodeSource& trie, std::span<const uint8_t> path_key) {
  // Programmer error, always checked (cheap): a proof over stale refs would be silently wrong.
  if (!trie.committed()) {
    std::fprintf(stderr, "mpt::prove: the trie has uncommitted writes (compute its root first)\n");
    std::abort();
  }
  std::vector<Bytes> out;
  const std::vector<uint8_t> nib = nibbles_of(path_key);
  size_t pos = 0;
  bool first = true;
  for (NodeId id = trie.root_id(); id != kNoNode;) {
    if (first || trie.ref(id).is_hash()) {
      out.emplace_back();
      trie.encode(id, &out.back());
    }
    first = false;
    const NodeView v = trie.view(id);
    if (v.kind == NodeKind::leaf) break;
    if (v.kind == NodeKind::extension) {
      if (nib.size() - pos < v.path.size() || (!v.path.empty() && std::memcmp(v.path.data(), nib.data() + pos, v.path.size()) != 0)) break;
      pos += v.path.size();
      id = v.child;
    } else {
      if (pos == nib.size()) break;
      id = v.children[nib[pos++]];
    }
  }
  return out;
}

namespace {

// One node of a proof walk: decodes `node` strictly and follows the key's nibbles from
// *pos. Returns an error ("" when the node is well formed). Sets *done when the walk ends
// here (the value, if the key is present, in r->value); otherwise *next is the child to
// follow (a 32-byte hash, an embedded node, or empty for an absent key).
std::string walk_node(std::span<const uint8_t> node, const std::vector<uint8_t>& nib, size_t* pos,
                      std::vector<uint8_t>* path, ProofResult* r, bool* done, RlpItem* next) {
  RlpItem top, items[17];
  size_t n = 0;
  RlpError e = rlp_decode_exact(node.data(), node.size(), &top);
  if (e == RlpError::ok) e = rlp_list_items(top, items, 17, &n);
  if (e != RlpError::ok) return std::string("node rlp: ") + rlp_error_name(e);
  *done = false;
  if (n == 17) {
    if (*pos == nib.size()) {
      if (items[16].is_list) return "branch value is a list";
      if (items[16].payload_len) r->value = Bytes(items[16].payload, items[16].payload + items[16].payload_len);
      *done = true;
      return {};
    }
    *next = items[nib[(*pos)++]];
    return {};
  }
  if (n != 2) return "node is neither a 2-item nor a 17-item list";
  if (items[0].is_list) return "node path is a list";
  if (items[0].payload_len == 0) return "empty node path";
  path->resize(2 * items[0].payload_len);
  size_t plen = 0;
  bool leaf = false;
  if (const HexPrefixError e = hex_prefix_decode(items[0].payload, items[0].payload_len, path->data(), &plen, &leaf);
      e != HexPrefixError::ok)
    return hex_prefix_error_name(e);
  const bool match = nib.size() - *pos >= plen && (plen == 0 || std::memcmp(path->data(), nib.data() + *pos, plen) == 0);
  if (leaf) {
    if (items[1].is_list || items[1].payload_len == 0) return "bad leaf value";
    if (match && *pos + plen == nib.size()) r->value = Bytes(items[1].payload, items[1].payload + items[1].payload_len);
    *done = true;
    return {};
  }
  if (!match) {  // diverging extension: absent
    *done = true;
    return {};
  }
  *pos += plen;
  *next = items[1];
  return {};
}

}  // namespace

ProofResult verify_proof(const Hash32& root, std::span<const uint8_t> path_key, std::span<const Bytes> proof) {
  ProofResult r;
  auto fail = [&](const std::string& why) {
    r.error = why;
    r.value.reset();
    return r;
  };
  if (proof.empty()) {
    if (root == kEmptyRoot) return r;  // empty trie: absent
    return fail("empty proof for a non-empty root");
  }
  if (!hash_matches(proof[0], root.data())) return fail("proof element 0 does not hash to the root");
  const std::vector<uint8_t> nib = nibbles_of(path_key);
  size_t pos = 0, used = 1;
  std::span<const uint8_t> node = proof[0];
  std::vector<uint8_t> path(2 * node.size() + 2);
  for (;;) {
    bool done = false;
    RlpItem next;
    const std::string error = walk_node(node, nib, &pos, &path, &r, &done, &next);
    if (!error.empty()) return fail(error);
    if (done) break;
    if (next.is_list) {
      const uint8_t* start = next.payload - next.header_len;
      if (next.size() >= 32) return fail("embedded node of 32 bytes or more");
      node = std::span<const uint8_t>(start, next.size());
      continue;
    }
    if (next.payload_len == 0) break;  // empty slot: absent
    if (next.payload_len != 32) return fail("child reference is neither a hash nor an embedded node");
    if (used == proof.size()) return fail("proof ends before the path does");
    if (!hash_matches(proof[used], next.payload)) return fail("proof element " + std::to_string(used) + " does not match its parent's hash");
    node = proof[used++];
  }
  if (used != proof.size()) return fail("proof has unused elements");
  return r;
}

std::string verify_account_proof(const Hash32& state_root, const AccountProof& p) {
  uint8_t key[32];
  keccak256(p.address.data(), p.address.size(), key);
  const ProofResult ar = verify_proof(state_root, key, p.account_proof);
  if (!ar.ok()) return "account proof: " + ar.error;
  Hash32 storage_root = kEmptyRoot;
  if (ar.value) {
    if (!p.exists) return "account proof: account exists but the proof claims it does not";
    AccountFields f;
    const std::string err = decode_account_rlp(*ar.value, &f);
    if (!err.empty()) return "account proof: " + err;
    if (f.nonce != p.nonce || f.balance != p.balance || f.storage_root != p.storage_root || f.code_hash != p.code_hash)
      return "account proof: claimed fields differ from the proved account";
    storage_root = f.storage_root;
  } else if (p.exists) {
    return "account proof: account is absent but the proof claims it exists";
  }
  for (const StorageProof& sp : p.storage_proofs) {
    uint8_t sk[32];
    keccak256(sp.slot.data(), 32, sk);
    const ProofResult sr = verify_proof(storage_root, sk, sp.proof);
    if (!sr.ok()) return "storage proof: " + sr.error;
    const Bytes want = storage_value_rlp(sp.value);
    if (want.empty() ? sr.value.has_value() : (!sr.value || *sr.value != want))
      return "storage proof: claimed value differs from the proved value";
  }
  return "";
}

}  // namespace st::mpt
