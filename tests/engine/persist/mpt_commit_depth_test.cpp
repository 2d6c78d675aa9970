// mpt_commit_depth_test: a block commit refuses, with one line naming the node, a RocksDB
// database whose nodes all hash to what their parents hold (up to a re-published manifest
// root) but whose trie goes past the end of a 64-nibble key:
//   - the target account's leaf replaced by an extension to nibble 63, a branch there and,
//     below it on the key's last nibble, a branch at nibble 64: "branch below a full key",
//     named by the deep branch's path key;
//   - the leaf replaced by an extension to nibble 64 (a branch there): "extension reaches
//     the end of the key", named by the extension's path key.
// Verify refuses the same nodes with the same words ("mpt verify: ..."); the commit
// publishes nothing. (In the arena such records would also need children of their own in
// re-sealed pages; the commit names arena nodes by locator through the same code.)
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "engine/mpt/account.h"
#include "engine/mpt/node_codec.h"
#include "engine/mpt/node_decode.h"
#include "engine/persist/mpt/node.h"
#include "engine/persist/tree_db.h"
#include "io/manifest.h"
#include "io/rocksdb_store.h"
#include "kernels/keccak256.h"
#include "tests/engine/persist/refusal_checks.h"
#include "tests/engine/persist_mpt_test_util.h"
#include "workloads/synthetic_state.h"

namespace {

using namespace st;
using persist::DbOptions;
using persist::StoreKind;
using Bytes = std::vector<uint8_t>;

state::SyntheticSpec small_spec() { return persist::test::small_refusal_spec(); }

state::Address target(const state::SyntheticState& src) { return src.address(src.spec().contracts + 3); }  // an EOA

// The account proof of `a`: its nodes' bodies, root first, the leaf last.
std::vector<Bytes> account_path(const DbOptions& o, const state::Address& a) {
  std::unique_ptr<persist::TreeDb> db;
  REQUIRE(persist::open_db(o, &db).message() == "");
  persist::StateProof p;
  REQUIRE(db->prove({a, std::nullopt}, &p).message() == "");
  std::vector<Bytes> out;
  for (const auto& n : std::get<mpt::AccountProof>(p).account_proof) out.emplace_back(n.begin(), n.end());
  REQUIRE(out.size() >= 2);
  REQUIRE(out.back().size() >= 32);  // the leaf is hashed: a node of its own
  return out;
}

Hash32 keccak(const Bytes& b) {
  Hash32 h;
  kernels::keccak256(b.data(), b.size(), h.data());
  return h;
}

mpt::NodeRef hash_ref(const Bytes& enc) {
  mpt::NodeRef r = mpt::make_ref(enc.data(), enc.size());
  REQUIRE(r.is_hash());
  return r;
}

// A branch with hashed children at nibbles a and b, no value.
Bytes branch(unsigned a, const mpt::NodeRef& child_a, unsigned b, const mpt::NodeRef& child_b) {
  mpt::NodeRef refs[16] = {};
  refs[a] = child_a;
  refs[b] = child_b;
  Bytes out(mpt::branch_size(refs, nullptr, 0));
  REQUIRE(mpt::put_branch(out.data(), refs, nullptr, 0) == out.data() + out.size());
  return out;
}

// An extension over nibbles [from, to) of key, to child.
Bytes extension(const Hash32& key, size_t from, size_t to, const mpt::NodeRef& child) {
  Bytes out(mpt::extension_size(to - from, child));
  REQUIRE(mpt::put_extension_key(out.data(), key.data(), from, to, child) == out.data() + out.size());
  return out;
}

// A leaf at the end of a key (no path left) holding an empty account: a node verify accepts.
Bytes end_leaf() {
  const Bytes value = mpt::account_rlp(mpt::AccountFields{});
  Bytes out(mpt::leaf_size(0, value.data(), value.size()));
  REQUIRE(mpt::put_leaf_nibbles(out.data(), nullptr, 0, value.data(), value.size()) == out.data() + out.size());
  return out;
}

unsigned nibble(const Hash32& key, size_t i) { return i % 2 ? key[i / 2] & 15u : key[i / 2] >> 4; }

// Writes `nodes` (path key, body) and rewrites the path above the target's leaf (path:
// root first) so that each parent holds its new child's hash (the old one replaced in
// place), then re-publishes the manifest with the new root's hash.
void rewrite(const DbOptions& o, const std::vector<Bytes>& path, const std::vector<std::pair<std::string, Bytes>>& nodes,
             const Bytes& new_leaf_node) {
  io::RocksOptions ro;
  ro.dir = o.dir + "/rocksdb";
  ro.create = false;
  std::unique_ptr<io::RocksKvStore> kv;
  REQUIRE(io::RocksKvStore::open(ro, &kv).ok());
  std::vector<std::string> keys(path.size());  // each path node's key, found by its value
  REQUIRE(kv->for_each([&](std::string_view k, std::string_view v) {
                for (size_t i = 0; i < path.size(); ++i)
                  if (v == std::string_view(reinterpret_cast<const char*>(path[i].data()), path[i].size())) keys[i] = k;
              }).ok());
  std::vector<std::pair<std::string, Bytes>> puts = nodes;
  Bytes child = new_leaf_node;
  puts.emplace_back(keys.back(), child);
  for (size_t i = path.size() - 1; i-- > 0;) {
    REQUIRE(!keys[i].empty());
    Bytes parent = path[i];
    const Hash32 old_hash = keccak(path[i + 1]), new_hash = keccak(child);
    auto at = std::search(parent.begin(), parent.end(), old_hash.begin(), old_hash.end());
    REQUIRE(at != parent.end());
    std::copy(new_hash.begin(), new_hash.end(), at);
    puts.emplace_back(keys[i], parent);
    child = parent;
  }
  std::vector<io::KvWrite> ws;
  for (const auto& [k, v] : puts) ws.push_back({k, {reinterpret_cast<const char*>(v.data()), v.size()}});
  REQUIRE(kv->write_batch(ws).ok());
  REQUIRE(kv->flush().ok());
  kv.reset();
  io::FileManifestSlot slot(o.dir);
  io::Manifest m;
  REQUIRE(slot.load(&m).ok());
  const Hash32 root = keccak(child);
  std::copy(root.begin(), root.end(), m.root_hash.begin());
  REQUIRE(slot.publish(m).ok());
}

void check_refused(const DbOptions& o, const state::Address& a, const std::string& key, const std::string& what) {
  const std::string tail = ": node at path key " + persist::path_key_hex(key) + ": " + what;
  persist::test::check_verify_and_commit_refuse(o, a, pmpt_test::kTestSpec, "mpt verify" + tail, "mpt commit" + tail);
}

// A RocksDB database of src in dir, the proof path of account a (root first, the leaf
// last) and the nibble depth of a's leaf.
struct Built {
  DbOptions o;
  std::vector<Bytes> path;
  size_t leaf_depth = 0;
};
Built build_with_path(const std::string& dir, const state::SyntheticState& src, const state::Address& a) {
  Built b;
  b.o = pmpt_test::mpt_options(dir, StoreKind::rocksdb);
  REQUIRE(persist::build_db(b.o, src, nullptr).message() == "");
  b.path = account_path(b.o, a);
  mpt::DecodedNode leaf;
  REQUIRE(mpt::decode_node(b.path.back(), &leaf) == "");
  b.leaf_depth = 64 - leaf.path_len;
  return b;
}

}  // namespace

TEST_CASE("mpt commit, RocksDB: a trie past the end of the key is refused naming the node") {
  if (!io::rocksdb_available()) return;  // a build without RocksDB has no such store to check
  const state::SyntheticState src(small_spec());
  const state::Address a = target(src);
  Hash32 key;
  kernels::keccak256(a.data(), a.size(), key.data());
  SUBCASE("a branch at nibble 64") {
    pmpt_test::TempDir dir("deep_branch");
    const auto [o, path, depth] = build_with_path(dir.path, src, a);
    REQUIRE(depth <= 62);  // room for an extension of at least one nibble above nibble 63
    // Nibble 63: the deep branch on the key's path (its children never read), beside it a
    // leaf that verify accepts, so that whichever verify reads first, it fails at the branch.
    const unsigned last = nibble(key, 63), other = (last + 1) % 16;
    const Bytes deep = branch(0, hash_ref(Bytes(33, 1)), 1, hash_ref(Bytes(33, 2)));
    const Bytes sibling = end_leaf();
    const Bytes at63 = branch(last, hash_ref(deep), other, hash_ref(sibling));
    const Bytes ext = extension(key, depth, 63, hash_ref(at63));
    Hash32 sibling_key = key;
    sibling_key[31] = uint8_t((sibling_key[31] & 0xf0) | other);
    const std::string deep_key = persist::account_node_key(key.data(), 64);
    rewrite(o, path,
            {{persist::account_node_key(key.data(), 63), at63},
             {deep_key, deep},
             {persist::account_node_key(sibling_key.data(), 64), sibling}},
            ext);
    check_refused(o, a, deep_key, "branch below a full key");
  }
  SUBCASE("an extension to nibble 64") {
    pmpt_test::TempDir dir("long_ext");
    const auto [o, path, depth] = build_with_path(dir.path, src, a);
    const Bytes at64 = branch(0, hash_ref(Bytes(33, 1)), 1, hash_ref(Bytes(33, 2)));
    const Bytes ext = extension(key, depth, 64, hash_ref(at64));
    rewrite(o, path, {{persist::account_node_key(key.data(), 64), at64}}, ext);
    check_refused(o, a, persist::account_node_key(key.data(), depth), "extension reaches the end of the key");
  }
}
