// cli_get: `statetree get --db DIR --address A [--slot S] [--proof]`: one account (nonce,
// balance, code hash, and the storage root (MPT) or code size (binary trie)) and one slot
// value, read through the batched lookup path; with --proof, the proof in the tree's own
// shape (MPT: the eth_getProof RLP node lists; binary trie: the serialized key proofs of
// the basic-data, code-hash and slot leaves), verified against the manifest's root and
// checked to prove exactly what the lookup returned.
// Exit: 0 ok (also when the key is absent: absence is an answer), 1 a proof that does not
// verify or disagrees with the lookup, or a read error; 2 bad input.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/bintrie/hasher.h"
#include "engine/database/store_types.h"
#include "engine/persist/snapshot/db.h"
#include "workloads/cli_args.h"
#include "workloads/cli_options.h"
#include "workloads/commands.h"
#include "workloads/persist_cli.h"
#include "workloads/report.h"
#include "workloads/u256.h"

namespace st::cli {
namespace {
constexpr const char* kCmd = "get";
int fail(const std::string& m, int code = 2) { return cli_error(std::string("statetree ") + kCmd, m, code); }

nlohmann::json hex_list(const std::vector<std::vector<uint8_t>>& v) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& b : v) a.push_back(hex0x(b.data(), b.size()));
  return a;
}

uint64_t be_uint(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int k = 0; k < n; ++k) v = v << 8 | p[k];
  return v;
}

// Checks an MPT proof against the root and the lookup's answer; "" = fine.
std::string check_mpt(const database::Manifest& m, const mpt::AccountProof& p, const persist::LookupAnswer& a,
                      bool with_slot, nlohmann::json* out) {
  (*out)["account_proof"] = hex_list(p.account_proof);
  if (with_slot) {
    if (p.storage_proofs.size() != 1) return "the proof holds " + std::to_string(p.storage_proofs.size()) + " storage proofs, expected 1";
    (*out)["storage_proof"] = hex_list(p.storage_proofs[0].proof);
  }
  if (std::string e = mpt::verify_account_proof(m.root_hash, p); !e.empty()) return "proof does not verify: " + e;
  if (p.exists != a.account.exists) return "proof and lookup disagree on the account's existence";
  if (p.exists && (p.nonce != a.account.nonce || p.balance != a.account.balance ||
                   p.code_hash != a.account.code_hash || p.storage_root != a.account.storage_root))
    return "proof and lookup disagree on the account fields";
  if (with_slot) {
    const state::Hash32 want = a.slot_value ? *a.slot_value : state::Hash32{};
    if (p.storage_proofs[0].value != want) return "proof and lookup disagree on the slot value";
  }
  return "";
}

std::string check_bintrie(const database::Manifest& m, const persist::BintrieStateProof& p,
                          const persist::LookupAnswer& a, bool with_slot, nlohmann::json* out) {
  const bintrie::Hasher h =
      bintrie::make_hasher(m.params.hash_kind == database::HashKind::blake3 ? bintrie::HashKind::blake3 : bintrie::HashKind::sha256);
  auto verify = [&](const char* name, const state::Hash32& key, const bintrie::KeyProof& kp,
                    std::optional<state::Hash32>* value) -> std::string {
    const auto bytes = bintrie::serialize_key_proof(kp);
    (*out)[name] = {{"key", hex0x(key)}, {"proof", hex0x(bytes.data(), bytes.size())}, {"proof_bytes", bytes.size()}};
    auto r = bintrie::verify_key_proof(h, m.root_hash, key, kp);
    if (auto* e = std::get_if<std::string>(&r)) return std::string(name) + " proof does not verify: " + *e;
    *value = std::get<std::optional<state::Hash32>>(r);
    return "";
  };
  std::optional<state::Hash32> basic, code_hash, slot;
  if (auto e = verify("basic_data", p.basic_data_key, p.basic_data, &basic); !e.empty()) return e;
  if (auto e = verify("code_hash", p.code_hash_key, p.code_hash, &code_hash); !e.empty()) return e;
  if (with_slot) {
    if (!p.slot) return "the proof holds no slot proof";
    if (auto e = verify("slot", p.slot_key, *p.slot, &slot); !e.empty()) return e;
  }
  if (basic.has_value() != a.account.exists) return "proof and lookup disagree on the account's existence";
  if (basic) {
    state::U256 bal{};
    std::memcpy(bal.data() + 16, basic->data() + 16, 16);
    if (be_uint(basic->data() + 8, 8) != a.account.nonce || be_uint(basic->data() + 5, 3) != a.account.code_size ||
        bal != a.account.balance)
      return "proof and lookup disagree on the basic data (nonce, balance, code size)";
    if (code_hash.value_or(state::Hash32{}) != a.account.code_hash)
      return "proof and lookup disagree on the code hash";
  }
  if (with_slot && slot != a.slot_value) return "proof and lookup disagree on the slot value";
  return "";
}

void declare_options(Args& args) {
  add_db(args);
  args.option("address", "A", "account address, 40 hex digits (0x optional)");
  args.option("slot", "S", "storage slot, 1..64 hex digits (0x optional, left-padded)");
  args.flag("proof", "also produce the proof and verify it against the manifest's root");
  args.flag("snapshot", "read the account and slot from the flat snapshot (build --snapshot): one page read per key "
                        "(RocksDB: one MultiGet on its column family)");
  add_json(args);
  args.require("db");
  args.require("address");
}

// The key asked for (the account, and the slot with --slot); nullopt = go on, else the exit status.
std::optional<int> parse_key(const Args& args, state::StateKey* key) {
  std::string err;
  const auto address = parse_address(args.str("address"), &err);
  if (!address) return fail(err);
  *key = {*address, std::nullopt};
  if (args.given("slot")) {
    const auto slot = parse_slot(args.str("slot"), &err);
    if (!slot) return fail(err);
    key->slot = *slot;
  }
  return std::nullopt;
}

// The tree (or, with --snapshot, its flat snapshot) of the database at dir; nullopt = go on, else the exit status.
std::optional<int> open_db(const std::string& dir, bool from_snapshot, std::unique_ptr<persist::TreeDb>* db) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return fail("no database at " + dir + " (not a directory)");
  if (database::Status s = persist::open_any_db(dir, 1, db); !s.ok()) return fail(s.message(), exit_code_for(s));
  if (from_snapshot)
    if (database::Status s = persist::open_snapshot_view(std::move(*db), true, db); !s.ok())
      return fail(s.message(), s.code() == database::Errc::not_found ? 2 : exit_code_for(s));
  return std::nullopt;
}

// The account key, then the slot key: one batch. (A slot key's answer also holds the
// account fields in both trees; the account key keeps an absent slot's account reported
// the same way, and costs no extra walk: the binary trie reuses it for the slot key.)
// nullopt = go on, else the exit status.
std::optional<int> look_up(persist::TreeDb& db, const state::StateKey& key, persist::LookupAnswer* a,
                           persist::LookupStats* stats) {
  std::vector<state::StateKey> keys{{key.address, std::nullopt}};
  if (key.slot) keys.push_back(key);
  std::vector<persist::LookupAnswer> answers;
  if (database::Status s = db.lookup(keys, &answers, stats); !s.ok())
    return fail(s.message(), s.code() == database::Errc::corrupt_page ? 2 : 1);  // a node that fails its checks: bad input
  if (answers.size() != keys.size())
    return fail("lookup returned " + std::to_string(answers.size()) + " answers for " + std::to_string(keys.size()) +
                " keys", 1);
  *a = answers[0];
  if (key.slot) a->slot_value = answers[1].slot_value;
  return std::nullopt;
}

nlohmann::json answer_json(const std::string& dir, persist::TreeDb& db, bool from_snapshot, const state::StateKey& key,
                           const persist::LookupAnswer& a, const persist::LookupStats& stats) {
  const database::Manifest& m = db.manifest();
  nlohmann::json out = {{"command", "get"},
                        {"db", dir},
                        {"tree", database::tree_kind_name(m.params.tree_kind)},
                        {"store", db.page_store() ? "arena" : "rocksdb"},
                        {"page_size", m.params.page_size},
                        {"root", hex0x(m.root_hash)},
                        {"read_from", from_snapshot ? "snapshot" : "tree"},
                        {"address", hex0x(key.address)},
                        {"exists", a.account.exists}};
  if (a.account.exists) {
    out["nonce"] = a.account.nonce;
    out["balance"] = workloads::u256_to_decimal(a.account.balance);
    out["code_hash"] = hex0x(a.account.code_hash);
    if (m.params.tree_kind == database::TreeKind::bintrie) out["code_size"] = a.account.code_size;
    else out["storage_root"] = hex0x(a.account.storage_root);
  }
  if (key.slot) {
    out["slot"] = hex0x(*key.slot);
    out["value"] = a.slot_value ? nlohmann::json(hex0x(*a.slot_value)) : nlohmann::json(nullptr);
  }
  out["io"] = {{"rounds", stats.rounds}, {"page_reads", stats.page_reads}, {"bytes_read", stats.bytes_read},
               {"nodes_visited", stats.nodes_visited}};
  return out;
}

// The proof of key, checked against the root and the answer, as out["proof"]; sets
// *proof_error ("" = verified). nullopt = go on, else the exit status.
std::optional<int> prove(persist::TreeDb& db, const state::StateKey& key, const persist::LookupAnswer& a,
                         nlohmann::json* out, std::string* proof_error) {
  persist::StateProof proof;
  if (database::Status s = db.prove(key, &proof); !s.ok()) return fail(s.message(), 1);
  nlohmann::json pj;
  if (auto* mp = std::get_if<mpt::AccountProof>(&proof))
    *proof_error = check_mpt(db.manifest(), *mp, a, key.slot.has_value(), &pj);
  else
    *proof_error = check_bintrie(db.manifest(), std::get<persist::BintrieStateProof>(proof), a, key.slot.has_value(), &pj);
  pj["verified"] = proof_error->empty();
  if (!proof_error->empty()) pj["error"] = *proof_error;
  (*out)["proof"] = pj;
  return std::nullopt;
}

void print_proof(const nlohmann::json& pj, const std::string& proof_error) {
  for (const char* k : {"account_proof", "storage_proof"})
    if (pj.contains(k)) {
      std::printf("  %s (%zu nodes, RLP):\n", k, pj[k].size());
      for (const auto& n : pj[k]) std::printf("    %s\n", n.get<std::string>().c_str());
    }
  for (const char* k : {"basic_data", "code_hash", "slot"})
    if (pj.contains(k))
      std::printf("  %s proof (key %s, %llu B): %s\n", k, pj[k]["key"].get<std::string>().c_str(),
                  (unsigned long long)pj[k]["proof_bytes"].get<uint64_t>(), pj[k]["proof"].get<std::string>().c_str());
  std::printf("  proof     %s\n", proof_error.empty() ? "verified against the root" : proof_error.c_str());
}

void print_answer(const database::Manifest& m, bool from_snapshot, const state::StateKey& key, const persist::LookupAnswer& a,
                  const persist::LookupStats& stats) {
  std::printf("%s %s (root %s)\n", database::tree_kind_name(m.params.tree_kind), hex0x(key.address).c_str(),
              hex0x(m.root_hash).c_str());
  if (!a.account.exists) {
    std::printf("  account   absent\n");
  } else {
    std::printf("  nonce     %llu\n  balance   %s\n  code hash %s\n", (unsigned long long)a.account.nonce,
                workloads::u256_to_decimal(a.account.balance).c_str(), hex0x(a.account.code_hash).c_str());
    if (m.params.tree_kind == database::TreeKind::bintrie)
      std::printf("  code size %llu\n", (unsigned long long)a.account.code_size);
    else
      std::printf("  storage   %s\n", hex0x(a.account.storage_root).c_str());
  }
  if (key.slot)
    std::printf("  slot      %s = %s\n", hex0x(*key.slot).c_str(), a.slot_value ? hex0x(*a.slot_value).c_str() : "absent");
  std::printf("  reads     %llu pages in %llu rounds%s\n", (unsigned long long)stats.page_reads,
              (unsigned long long)stats.rounds, from_snapshot ? " (snapshot)" : "");
}

}  // namespace

int cmd_get(int argc, char** argv) {
  Args args("statetree get",
            "One account (and one storage slot) from a database, with --proof its proof verified against the root.");
  declare_options(args);
  if (auto rc = args.parse_or_exit(argc, argv)) return *rc;
  const std::string dir = args.str("db");
  state::StateKey key;
  if (auto rc = parse_key(args, &key)) return *rc;
  const bool from_snapshot = args.given("snapshot");
  std::unique_ptr<persist::TreeDb> db;
  if (auto rc = open_db(dir, from_snapshot, &db)) return *rc;
  persist::LookupAnswer a;
  persist::LookupStats stats;
  if (auto rc = look_up(*db, key, &a, &stats)) return *rc;
  nlohmann::json out = answer_json(dir, *db, from_snapshot, key, a, stats);
  std::string proof_error;
  if (args.given("proof"))
    if (auto rc = prove(*db, key, a, &out, &proof_error)) return *rc;
  if (args.given("json")) {
    report::stamp(out);
    std::printf("%s\n", out.dump().c_str());
  } else {
    print_answer(db->manifest(), from_snapshot, key, a, stats);
    if (args.given("proof")) print_proof(out["proof"], proof_error);
  }
  if (!proof_error.empty()) return fail(proof_error, 1);
  return 0;
}

}  // namespace st::cli
