// mpt_builder_test: the batch builder against every vector case (final key/value set of the
// case's put/delete sequence), the spec's large-family roots, the reference oracle on random
// plain and prefix-heavy sets, and chunking/thread invariance.
#include <doctest/doctest.h>

#include <map>
#include <random>

#include "engine/mpt/builder.h"
#include "kernels/keccak256.h"
#include "tests/engine/mpt_test_util.h"
#include "tests/engine/mpt_vectors.h"

using namespace st;
using st::ref::Bytes;

namespace {

std::vector<mpt::KeyValue> as_pairs(const std::map<Bytes, Bytes>& m) {
  std::vector<mpt::KeyValue> v;
  for (const auto& [k, val] : m) v.push_back({k.data(), uint32_t(k.size()), val.data(), uint32_t(val.size())});
  return v;
}

std::string hex(const mpt::Hash32& h) { return ref::to_hex(h); }

std::map<Bytes, Bytes> final_set(const test::TrieCase& c) {
  std::map<Bytes, Bytes> m;
  for (const auto& [k, v] : c.ops) {
    Bytes key = c.secure ? ref::keccak(k) : k;
    if (v) m[key] = *v; else m.erase(key);
  }
  return m;
}

// key_i = keccak256(u64_be(i)), value_i = keccak256(key_i), sorted.
std::map<Bytes, Bytes> spec_family(size_t n) {
  std::map<Bytes, Bytes> m;
  for (uint64_t i = 0; i < n; ++i) {
    Bytes be(8);
    for (int b = 0; b < 8; ++b) be[b] = uint8_t(i >> (56 - 8 * b));
    Bytes k = ref::keccak(be);
    m[k] = ref::keccak(k);
  }
  return m;
}

}  // namespace

TEST_CASE("mpt builder: every vector case (final set) matches its root and the reference") {
  auto cases = test::load_all_trie_cases();
  CHECK(cases.size() == 505);
  for (const auto& c : cases) {
    CAPTURE(c.file);
    CAPTURE(c.name);
    auto m = final_set(c);
    auto pairs = as_pairs(m);
    for (size_t chunk : {size_t(1), size_t(2), size_t(4096)}) {
      mpt::BuildOptions o;
      o.chunk_keys = chunk;
      CHECK(hex(mpt::build_root(pairs, o)) == ref::to_hex(c.root));
    }
    CHECK(ref::to_hex(ref::mpt_root(m)) == ref::to_hex(c.root));
  }
}

TEST_CASE("mpt builder: spec family roots, chunking and threads agree") {
  const std::pair<size_t, const char*> known[] = {
      {1, "b270654d8b6f9e951c9db4b09c49f940ae0b2c290bb8806f7ae18c56193182ca"},
      {16, "b97a477880c8e7df56c58bad768a4d6bdcc1ba4ae8a635c0f5ac7f28b7bd945c"},
      {1000, "d142b1186b151f2e42b63819581b8cad5d3d91c6668ad19e4ac2f4a961da4eaa"},
  };
  for (auto [n, root] : known) {
    auto m = spec_family(n);
    auto pairs = as_pairs(m);
    for (size_t chunk : {size_t(1), size_t(3), size_t(64), size_t(4096)})
      for (unsigned threads : {1u, 2u}) {
        mpt::BuildOptions o;
        o.chunk_keys = chunk;
        o.threads = threads;
        CAPTURE(n); CAPTURE(chunk); CAPTURE(threads);
        CHECK(hex(mpt::build_root(pairs, o)) == root);
      }
  }
}

TEST_CASE("mpt builder: N=100000 spec root, capture covers every hashed node") {
  auto m = spec_family(100000);
  auto pairs = as_pairs(m);
  mpt::BuildStats st1, st2;
  mpt::BuildOptions o;
  o.threads = 2;
  CHECK(hex(mpt::build_root(pairs, o, &st1)) == "d216a36e8047cc69dd48eb3581918bca9d8db1a5741f4d727fc61be2aa8471e4");
  mpt::NodeCapture cap;
  o.capture = &cap;
  CHECK(hex(mpt::build_root(pairs, o, &st2)) == "d216a36e8047cc69dd48eb3581918bca9d8db1a5741f4d727fc61be2aa8471e4");
  CHECK(st1.leaves == 100000);
  CHECK(st1.branches == st2.branches);
  CHECK(st1.keccak_calls == st2.keccak_calls);
  CHECK(cap.count() == st2.keccak_calls);
  CHECK(cap.bytes.size() == st2.keccak_bytes);
  // One chunk of all 100,000 keys: the chunk's encoding buffer grows many times while leaf
  // messages are queued (their pointers are rebased), and the heights are tall.
  mpt::BuildOptions one;
  one.chunk_keys = 1 << 20;
  mpt::BuildStats st3;
  CHECK(hex(mpt::build_root(pairs, one, &st3)) == "d216a36e8047cc69dd48eb3581918bca9d8db1a5741f4d727fc61be2aa8471e4");
  CHECK(st3.keccak_calls == st2.keccak_calls);
  CHECK(st3.keccak_bytes == st2.keccak_bytes);
}

TEST_CASE("mpt builder: random plain sets with prefix keys match the reference") {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 60; ++round) {
    const std::map<Bytes, Bytes> m = mpt_test::random_plain_set(rng, round);
    auto pairs = as_pairs(m);
    const std::string want = ref::to_hex(ref::mpt_root(m));
    for (size_t chunk : {size_t(1), size_t(5), size_t(4096)}) {
      mpt::BuildOptions o;
      o.chunk_keys = chunk;
      o.threads = chunk == 5 ? 2 : 1;
      CAPTURE(round); CAPTURE(chunk);
      CHECK(hex(mpt::build_root(pairs, o)) == want);
    }
  }
}

TEST_CASE("mpt builder: secure root hashes keys") {
  std::map<Bytes, Bytes> m;
  for (int i = 0; i < 300; ++i) m[Bytes{uint8_t(i), uint8_t(i * 7)}] = Bytes{uint8_t(i + 1)};
  std::vector<mpt::KeyValue> pairs = as_pairs(m);
  std::reverse(pairs.begin(), pairs.end());  // secure input need not be sorted
  CHECK(hex(mpt::build_secure_root(pairs)) == ref::to_hex(ref::mpt_secure_root(m)));
  CHECK(hex(mpt::build_root({})) == "56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421");
}
