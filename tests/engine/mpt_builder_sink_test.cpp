// mpt_builder_sink_test: mpt::write_trie (the builder with a node sink) against the reference
// roots, and the post-order contract of its sink: every sunk node references by hash exactly
// the hashed_children most recently sunk unclaimed nodes, in nibble order, and one node (the
// top, whose hash is the root) is left unclaimed. Chunked and hook-driven builds sink the
// same nodes in the same order.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>

#include "engine/mpt/builder.h"
#include "kernels/keccak256.h"
#include "tests/engine/mpt_test_util.h"
#include "tests/engine/mpt_vectors.h"

using namespace st;
using st::ref::Bytes;

namespace {

// Replays the post-order contract while it records the nodes.
struct CheckingSink final : mpt::NodeSink {
  std::vector<std::array<uint8_t, 32>> unclaimed;
  std::vector<std::pair<mpt::NodeKind, Bytes>> nodes;
  bool ok = true;
  io::Status node(mpt::NodeKind kind, std::span<const uint8_t> rlp, uint32_t hashed_children, const uint8_t*,
                  uint32_t) override {
    if (hashed_children > unclaimed.size()) ok = false;
    if (kind == mpt::NodeKind::leaf && hashed_children != 0) ok = false;
    const size_t first = unclaimed.size() - std::min<size_t>(hashed_children, unclaimed.size());
    auto at = rlp.begin();
    for (size_t j = first; j < unclaimed.size(); ++j) {  // each child's a0 || hash, in order
      uint8_t ref[33] = {0xa0};
      std::copy(unclaimed[j].begin(), unclaimed[j].end(), ref + 1);
      at = std::search(at, rlp.end(), ref, ref + 33);
      if (at == rlp.end()) ok = false;
      else at += 33;
    }
    unclaimed.resize(first);
    std::array<uint8_t, 32> h;
    st::kernels::keccak256(rlp.data(), rlp.size(), h.data());
    unclaimed.push_back(h);
    nodes.emplace_back(kind, Bytes(rlp.begin(), rlp.end()));
    return {};
  }
};

struct MapHook final : mpt::LeafHook {
  std::vector<mpt::KeyValue> pairs;
  io::Status leaf(size_t i, std::vector<uint8_t>* v, uint32_t* c) override {
    v->assign(pairs[i].value, pairs[i].value + pairs[i].value_len);
    *c = 0;
    return {};
  }
};

std::vector<mpt::KeyValue> as_pairs(const std::map<Bytes, Bytes>& m) {
  std::vector<mpt::KeyValue> v;
  for (const auto& [k, val] : m) v.push_back({k.data(), uint32_t(k.size()), val.data(), uint32_t(val.size())});
  return v;
}

void check_sink(const std::map<Bytes, Bytes>& m, size_t chunk, CheckingSink* out) {
  auto pairs = as_pairs(m);
  mpt::WriteOptions o;
  o.chunk_keys = chunk;
  mpt::Hash32 root;
  mpt::BuildStats st;
  REQUIRE(mpt::write_trie(pairs, *out, &root, o, &st).ok());
  CHECK(ref::to_hex(root) == ref::to_hex(ref::mpt_root(m)));
  CHECK(out->ok);
  REQUIRE(out->unclaimed.size() == 1);
  CHECK(std::equal(root.begin(), root.end(), out->unclaimed[0].begin()));
  CHECK(st.sunk == out->nodes.size());
}

}  // namespace

TEST_CASE("mpt write_trie: random plain sets with prefix keys, every chunking") {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 60; ++round) {
    const std::map<Bytes, Bytes> m = mpt_test::random_plain_set(rng, round);
    CAPTURE(round);
    CheckingSink whole;
    check_sink(m, 4096, &whole);
    for (size_t chunk : {size_t(1), size_t(5)}) {
      CAPTURE(chunk);
      CheckingSink s;
      check_sink(m, chunk, &s);
      CHECK(s.nodes == whole.nodes);
    }
  }
}

TEST_CASE("mpt write_trie: secure keys, hook-driven leaves sink what the chunks sink") {
  std::map<Bytes, Bytes> m;
  for (uint64_t i = 0; i < 3000; ++i) {
    Bytes be(8);
    for (int b = 0; b < 8; ++b) be[b] = uint8_t(i >> (56 - 8 * b));
    m[ref::keccak(be)] = Bytes(1 + i % 40, uint8_t(i));
  }
  CheckingSink chunked;
  check_sink(m, 256, &chunked);
  MapHook hook;
  hook.pairs = as_pairs(m);
  std::vector<mpt::KeyValue> keys = hook.pairs;
  for (auto& k : keys) k.value_len = 0;  // the values come from the hook
  mpt::WriteOptions o;
  o.hook = &hook;
  CheckingSink hooked;
  mpt::Hash32 root;
  REQUIRE(mpt::write_trie(keys, hooked, &root, o).ok());
  CHECK(ref::to_hex(root) == ref::to_hex(ref::mpt_root(m)));
  CHECK(hooked.ok);
  CHECK(hooked.nodes == chunked.nodes);
  // Keys of different lengths with a hook, empty values without: refused.
  keys[5].key_len = 31;
  CHECK(mpt::write_trie(keys, hooked, &root, o).code() == io::Errc::bad_argument);
  std::vector<mpt::KeyValue> empty_value = hook.pairs;
  empty_value[7].value_len = 0;
  CHECK(mpt::write_trie(empty_value, hooked, &root).code() == io::Errc::bad_argument);
}
