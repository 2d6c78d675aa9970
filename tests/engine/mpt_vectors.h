// mpt_vectors: loads the TrieTests-format vector files of tests/vectors/mpt into plain
// structs (shared by the MPT engine tests). "0x.." strings are hex, other strings raw bytes,
// null (or an empty value) = delete; *_secureTrie files hash keys with keccak256.
#pragma once

#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/reference/mpt_reference.h"
#include "test_paths.h"

namespace st::test {

struct TrieCase {
  std::string file, name;
  bool secure = false;
  std::vector<std::pair<st::ref::Bytes, std::optional<st::ref::Bytes>>> ops;  // nullopt = delete
  st::ref::Bytes root;
};

inline st::ref::Bytes vec_bytes(const std::string& s) {
  if (s.rfind("0x", 0) == 0) return st::ref::from_hex(s);
  return st::ref::Bytes(s.begin(), s.end());
}

inline std::vector<TrieCase> load_trie_cases(const std::string& path, const std::string& file) {
  std::ifstream in(path);
  nlohmann::json j = nlohmann::json::parse(in);
  std::vector<TrieCase> out;
  for (auto& [name, c] : j.items()) {
    if (!c.contains("root")) continue;  // iterator tests
    TrieCase tc;
    tc.file = file;
    tc.name = name;
    tc.secure = file.find("secure") != std::string::npos;
    tc.root = st::ref::from_hex(c["root"].get<std::string>());
    auto add = [&](const nlohmann::json& k, const nlohmann::json& v) {
      std::optional<st::ref::Bytes> val;
      if (!v.is_null()) {
        st::ref::Bytes b = vec_bytes(v.get<std::string>());
        if (!b.empty()) val = b;
      }
      tc.ops.emplace_back(vec_bytes(k.get<std::string>()), val);
    };
    if (c["in"].is_array())
      for (auto& kv : c["in"]) add(kv[0], kv[1]);
    else
      for (auto& [k, v] : c["in"].items()) add(nlohmann::json(k), v);
    out.push_back(std::move(tc));
  }
  return out;
}

inline std::vector<TrieCase> load_all_trie_cases() {
  const std::string dir = std::string(STATETREE_VECTORS_DIR) + "/mpt/";
  std::vector<TrieCase> all;
  for (const char* f : {"trietest.json", "trietest_secureTrie.json", "trieanyorder.json", "trieanyorder_secureTrie.json",
                        "hex_encoded_securetrie_test.json", "generated/gen_trietest.json",
                        "generated/gen_trietest_secureTrie.json"}) {
    auto v = load_trie_cases(dir + f, f);
    all.insert(all.end(), v.begin(), v.end());
  }
  return all;
}

}  // namespace st::test
