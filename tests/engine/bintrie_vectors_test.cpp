// bintrie_vectors_test: every tree case, account case, embedding key and chunking case of
// tests/vectors/bintrie/bintrie_vectors.json, for every hash the case lists, through
// the batch root builder (serial and 2 threads) and the slow reference oracle.
#include <doctest/doctest.h>

#include "engine/bintrie/account_leaves.h"
#include "engine/bintrie/batch_root.h"
#include "engine/bintrie/keys.h"
#include "kernels/blake3.h"
#include "tests/engine/bintrie_test_util.h"
#include "tests/reference/bintrie_reference.h"

using namespace st::bintrie;
using namespace bintrie_test;

namespace {

std::vector<Entry> case_entries(const nlohmann::json& c) {
  const std::string name = c["name"];
  if (c.contains("entries")) {
    std::vector<Entry> out;
    for (const auto& e : c["entries"]) out.push_back({b32(e["key"]), b32(e["value"])});
    return out;
  }
  if (name == "random_1000") return random_entries(0, 1000);
  if (name == "random_100000") return random_entries(0, 100000);
  if (name == "clustered_1000_in_16_stems") {
    std::vector<Entry> out;
    for (uint64_t i = 0; i < 1000; ++i) {
      uint8_t be[8];
      const uint64_t j = i % 16;
      for (int b = 0; b < 8; ++b) be[b] = uint8_t(j >> (56 - 8 * b));
      Entry e;
      SHA256(be, 8, e.key.data());
      e.key[31] = uint8_t(i / 16);
      SHA256(e.key.data(), 32, e.value.data());
      out.push_back(e);
    }
    return out;
  }
  FAIL("unknown generated case " << name);
  return {};
}

st::reference::RefHashFn ref_hash(HashKind k) {
  return k == HashKind::sha256 ? st::reference::ref_sha256_openssl : st::kernels::blake3;
}

Address addr_from(const std::string& h) {
  auto v = unhex(h);
  Address a{};
  std::copy(v.begin(), v.end(), a.begin() + (20 - v.size()));
  return a;
}

}  // namespace

TEST_CASE("bintrie tree cases: batch root == vector root == reference, both hashes") {
  size_t checked = 0;
  for (const auto& c : vectors()["tree_cases"]) {
    const std::string name = c["name"];
    CAPTURE(name);
    const std::vector<Entry> entries = case_entries(c);
    if (c.contains("first_entries")) {
      for (const auto& fe : c["first_entries"]) {
        const size_t i = fe["i"];
        CHECK(hex(entries[i].key) == fe["key"].get<std::string>());
        CHECK(hex(entries[i].value) == fe["value"].get<std::string>());
      }
    }
    for (const auto& [hname, root] : c["root"].items()) {
      CAPTURE(hname);
      const HashKind kind = *hash_kind_from_name(hname);
      const Hasher h = make_hasher(kind);
      BatchRootStats st;
      const Hash32 serial = batch_root(h, entries, {}, &st);
      CHECK(hex(serial) == root.get<std::string>());
      CHECK(st.stems == c["n_distinct_stems"].get<size_t>());
      BatchRootOptions par;
      par.threads = 2;
      par.bucket_bits = 3;
      CHECK(hex(batch_root(h, entries, par)) == root.get<std::string>());
      if (entries.size() <= 1000) {
        std::vector<std::pair<st::reference::RefBytes32, st::reference::RefBytes32>> w;
        for (const auto& e : entries) w.push_back({e.key, e.value});
        CHECK(hex(st::reference::bintrie_reference_root(w, ref_hash(kind))) == root.get<std::string>());
      }
      ++checked;
    }
  }
  CHECK(checked >= 60);
}

TEST_CASE("bintrie debug intermediates: single zero key") {
  const auto& d = vectors()["debug_intermediates"]["single_zero_key_sha256"];
  Hash32 v;
  v.fill(1);
  Hash32 leaf;
  const Hasher h = make_hasher(HashKind::sha256);
  h.hash(v.data(), 32, leaf.data());
  CHECK(hex(leaf) == d["leaf_hash=sha256(value)"].get<std::string>());
}

TEST_CASE("bintrie embedding keys for every variant") {
  for (const auto& [variant, keys] : vectors()["embedding_keys"].items()) {
    CAPTURE(variant);
    KeyScheme ks;
    ks.hasher = make_hasher(variant == "geth_sha256_be" ? HashKind::sha256 : HashKind::blake3);
    ks.endian = variant == "jsign_blake3_le" ? TreeIndexEndian::little : TreeIndexEndian::big;
    for (const auto& [label, want] : keys.items()) {
      CAPTURE(label);
      const size_t open = label.find('('), comma = label.find(','), close = label.find(')');
      const std::string kind = label.substr(0, open);
      const std::string addr_s = label.substr(open + 1, (comma == std::string::npos ? close : comma) - open - 1);
      // "0x00..aa" -> 19 zero bytes + aa
      const Address addr = addr_from(addr_s.substr(addr_s.size() - 2));
      Hash32 key;
      if (kind == "basic_data") key = basic_data_key(ks, addr);
      else if (kind == "code_hash") key = code_hash_key(ks, addr);
      else if (kind == "storage") key = storage_slot_key(ks, addr, dec_to_be(label.substr(comma + 1, close - comma - 1)));
      else if (kind == "code_chunk") key = code_chunk_key(ks, addr, std::stoull(label.substr(comma + 1, close - comma - 1)));
      else FAIL("unknown key kind " << kind);
      CHECK(hex(key) == want.get<std::string>());
    }
  }
}

TEST_CASE("bintrie code chunking cases") {
  for (const auto& c : vectors()["chunkify_cases"]) {
    CAPTURE(c["name"].get<std::string>());
    const auto code = unhex(c["code"]);
    const auto chunks = chunkify_code(code);
    REQUIRE(chunks.size() == c["chunks"].size());
    for (size_t i = 0; i < chunks.size(); ++i) CHECK(hex(chunks[i]) == c["chunks"][i].get<std::string>());
  }
}

TEST_CASE("bintrie chunking: push data pending counts") {
  // PUSH32 at offset 0 covers 1..32: chunk 1 (offset 31) has 2 pending bytes.
  std::vector<uint8_t> code(40, 0);
  code[0] = 0x7f;
  auto ch = chunkify_code(code);
  REQUIRE(ch.size() == 2);
  CHECK(ch[0][0] == 0);
  CHECK(ch[1][0] == 2);
  // A PUSH1 as the last byte of a chunk: its data byte starts the next chunk.
  std::vector<uint8_t> c2(33, 0x5b);
  c2[30] = 0x60;
  ch = chunkify_code(c2);
  CHECK(ch[1][0] == 1);
}

st::state::Account account_from_json(const nlohmann::json& a) {
  st::state::Account acc;
  acc.nonce = a["nonce"];
  acc.balance = dec_to_be(a["balance"]);
  acc.code = unhex(a["code"]);
  for (const auto& [slot, value] : a["storage"].items()) acc.storage[dec_to_be(slot)] = left_pad(value);
  return acc;
}

TEST_CASE("bintrie account cases, all three variants") {
  for (const auto& c : vectors()["account_cases"]) {
    CAPTURE(c["name"].get<std::string>());
    for (const auto& [variant, root] : c["root"].items()) {
      CAPTURE(variant);
      KeyScheme ks;
      ks.hasher = make_hasher(variant == "geth_sha256_be" ? HashKind::sha256 : HashKind::blake3);
      ks.endian = variant == "jsign_blake3_le" ? TreeIndexEndian::little : TreeIndexEndian::big;
      std::vector<Entry> leaves;
      for (const auto& a : c["accounts"]) {
        const st::state::Account acc = account_from_json(a);
        CHECK(check_account(acc) == "");
        CHECK(acc.code.size() == a["code_size"].get<size_t>());
        append_account_leaves(ks, addr_from(a["address"]), acc, b32(a["code_hash_keccak256"]), &leaves);
      }
      CHECK(hex(batch_root(ks.hasher, leaves)) == root.get<std::string>());
      if (variant == "geth_sha256_be" && c.contains("leaves_geth_sha256_be")) {
        const SortedEntries mine = sort_entries(leaves);
        std::vector<Entry> want;
        for (const auto& l : c["leaves_geth_sha256_be"]) want.push_back({b32(l["key"]), b32(l["value"])});
        const SortedEntries theirs = sort_entries(want);
        REQUIRE(mine.entries.size() == theirs.entries.size());
        for (size_t i = 0; i < mine.entries.size(); ++i) {
          CHECK(hex(mine.entries[i].key) == hex(theirs.entries[i].key));
          CHECK(hex(mine.entries[i].value) == hex(theirs.entries[i].value));
        }
      }
    }
  }
}
