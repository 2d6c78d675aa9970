// persist_cli: see persist_cli.h.
#include "workloads/persist_cli.h"

#include <openssl/evp.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>

#include <nlohmann/json.hpp>

#include "engine/persist/db_files.h"
#include "workloads/cli_args.h"
#include "workloads/genesis.h"
#include "workloads/synthetic_state.h"
#include "workloads/u256.h"

namespace st::cli {

int exit_code_for(const database::Status& s) {
  switch (s.code()) {
    case database::Errc::not_found:
    case database::Errc::mismatch:
    case database::Errc::bad_argument:
    case database::Errc::unsupported:
    case database::Errc::full:  // no space left on device: the database is unchanged
    case database::Errc::locked:
      return 2;
    default:
      return 1;
  }
}

std::optional<std::pair<std::string, int>> probe_commit_target(const std::string& dir, CommitTarget* out) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return std::make_pair("no database at " + dir + " (not a directory)", 2);
  if (database::Status s = persist::DbFiles::probe(dir, &out->options); !s.ok()) return std::make_pair(s.message(), exit_code_for(s));
  const database::TreeKind kind = out->options.params.tree_kind;
  out->bintrie = kind == database::TreeKind::bintrie;
  if (kind != database::TreeKind::mpt && !out->bintrie)
    return std::make_pair(std::string("not supported for ") + database::tree_kind_name(kind) + " databases yet", 2);
  return std::nullopt;
}

void store_regime(const persist::DbFiles& files, nlohmann::json& out) {
  out["store"] = persist::store_kind_name(files.store);
  if (files.store != persist::StoreKind::rocksdb || !files.rocks) return;
  const database::RocksOptions& r = files.rocks->options();
  out["rocksdb"] = {{"block_size_bytes", r.block_size_bytes},
                    {"bloom_bits_per_key", r.bloom_bits_per_key},
                    {"block_cache_bytes", r.block_cache_bytes},
                    {"direct_reads", r.direct_reads},
                    {"read_threads", r.read_threads},
                    {"sync_writes", r.sync_writes},
                    {"batch_per_block", true}};
}

namespace {
int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Right-aligned hex digits into out[0..n).
bool hex_into(std::string_view digits, uint8_t* out, size_t n) {
  if (digits.empty() || digits.size() > 2 * n) return false;
  std::fill(out, out + n, 0);
  size_t nib = 0;
  for (size_t k = digits.size(); k-- > 0; ++nib) {
    const int d = hex_digit(digits[k]);
    if (d < 0) return false;
    out[n - 1 - nib / 2] |= uint8_t(nib % 2 ? d << 4 : d);
  }
  return true;
}

std::string_view strip0x(const std::string& t) {
  std::string_view v(t);
  if (v.size() >= 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) v.remove_prefix(2);
  return v;
}
}  // namespace

std::optional<state::Address> parse_address(const std::string& text, std::string* err) {
  state::Address a{};
  const std::string_view d = strip0x(text);
  if (d.size() != 40 || !hex_into(d, a.data(), a.size())) {
    *err = "bad --address " + workloads::quote_for_error(text) + ": want 40 hex digits (0x optional)";
    return std::nullopt;
  }
  return a;
}

std::optional<state::Hash32> parse_slot(const std::string& text, std::string* err) {
  state::Hash32 s{};
  if (!hex_into(strip0x(text), s.data(), s.size())) {
    *err = "bad --slot " + workloads::quote_for_error(text) + ": want 1..64 hex digits (0x optional)";
    return std::nullopt;
  }
  return s;
}

std::optional<std::string> file_sha256(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  if (!ctx || EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) != 1) {
    EVP_MD_CTX_free(ctx);
    return std::nullopt;
  }
  std::vector<char> buf(1 << 16);
  bool ok = true;
  while (in) {
    in.read(buf.data(), std::streamsize(buf.size()));
    if (in.gcount() > 0 && EVP_DigestUpdate(ctx, buf.data(), size_t(in.gcount())) != 1) ok = false;
  }
  if (in.bad()) ok = false;
  unsigned char md[32];
  unsigned len = 0;
  if (EVP_DigestFinal_ex(ctx, md, &len) != 1 || len != 32) ok = false;
  EVP_MD_CTX_free(ctx);
  if (!ok) return std::nullopt;
  return hex0x(md, 32);
}

std::string alloc_spec_json(const std::string& path, uint64_t accounts, uint64_t slots) {
  std::error_code ec;
  std::string abs = std::filesystem::absolute(path, ec).lexically_normal().string();
  if (ec) abs = path;
  nlohmann::json j{{"kind", "alloc"}, {"path", abs}, {"accounts", accounts}, {"slots", slots}};
  if (auto h = file_sha256(path)) j["sha256"] = *h;
  return j.dump();
}

bool source_unhashed_alloc(const std::string& spec_json) {
  nlohmann::json j = nlohmann::json::parse(spec_json, nullptr, false);
  return j.is_object() && j.value("kind", "") == "alloc" && !j.contains("sha256");
}

std::optional<std::string> load_source(const std::string& spec_json, LoadedSource* out) {
  nlohmann::json j = nlohmann::json::parse(spec_json, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("kind") || !j["kind"].is_string())
    return "the database's source spec is not understood: " + workloads::quote_for_error(spec_json);
  const std::string kind = j["kind"].get<std::string>();
  if (kind == "synthetic") {
    auto spec = state::parse_synthetic_spec(spec_json);
    if (auto* e = std::get_if<std::string>(&spec)) return *e;
    const auto& s = std::get<state::SyntheticSpec>(spec);
    out->source = std::make_unique<state::SyntheticState>(s);
    out->description = "synthetic: " + std::to_string(s.accounts) + " accounts (" + std::to_string(s.contracts) +
                       " contracts x " + std::to_string(s.slots_per_contract) + " slots), seed " +
                       std::to_string(s.seed);
    return std::nullopt;
  }
  if (kind == "alloc") {
    if (!j.contains("path") || !j["path"].is_string() || !j.contains("accounts") || !j["accounts"].is_number_unsigned())
      return "the database's alloc spec lacks path/accounts: " + workloads::quote_for_error(spec_json);
    const std::string path = j["path"].get<std::string>();
    if (j.contains("sha256") && j["sha256"].is_string()) {
      const std::string built = j["sha256"].get<std::string>();
      const auto now = file_sha256(path);
      if (!now) return "the database was built from " + path + ", which cannot be read now";
      if (*now != built)
        return "the source differs from the one the database was built from: " + path + " has SHA-256 " + *now +
               ", the database records " + built + " (rebuild the database or restore the file)";
    }
    auto loaded = workloads::load_genesis_alloc(path);
    if (auto* e = std::get_if<std::string>(&loaded)) return "the database was built from " + path + ": " + *e;
    out->alloc = std::make_unique<state::Allocation>(std::move(std::get<state::Allocation>(loaded)));
    out->source = std::make_unique<state::AllocationSource>(*out->alloc, spec_json);
    if (out->source->account_count() != j["accounts"].get<uint64_t>())
      return "the source differs from the one the database was built from: " + path + " now holds " +
             std::to_string(out->source->account_count()) + " accounts, the database " +
             std::to_string(j["accounts"].get<uint64_t>());
    if (j.contains("slots") && j["slots"].is_number_unsigned() && out->source->slot_count() != j["slots"].get<uint64_t>())
      return "the source differs from the one the database was built from: " + path + " now holds " +
             std::to_string(out->source->slot_count()) + " storage slots, the database " +
             std::to_string(j["slots"].get<uint64_t>());
    out->description = "alloc: " + path + " (" + std::to_string(out->source->account_count()) + " accounts, " +
                       std::to_string(out->source->slot_count()) + " slots)";
    return std::nullopt;
  }
  return "the database's source kind '" + kind + "' is not understood";
}

persist::ProgressFn ProgressBar::fn() {
  if (!enabled_) return {};
  auto mu = std::make_shared<std::mutex>();
  return [this, mu](uint64_t done, uint64_t total) {
    std::lock_guard<std::mutex> lock(*mu);
    if (!bar_ || total != total_) {
      if (bar_) bar_->finish();
      bar_ = std::make_unique<report::Progress>(what_, total);
      total_ = total;
    }
    bar_->update(std::min(done, total));
  };
}

void ProgressBar::finish() {
  if (bar_) bar_->finish();
}

std::string hex0x(const uint8_t* p, size_t n) { return report::hex0x(p, n); }

// The commit record's spec after block commits (apply, run).
std::string bal_blocks_spec(const std::string& spec, uint64_t applied, const state::Hash32& last_hash) {
  nlohmann::json j = nlohmann::json::parse(spec, nullptr, false);
  nlohmann::json base = j;
  uint64_t before = 0;
  if (j.is_object() && j.value("kind", "") == "bal_blocks") {
    base = j["base"];
    before = j.value("blocks_applied", uint64_t(0));
  }
  if (base.is_discarded()) base = spec;
  return nlohmann::json{{"kind", "bal_blocks"}, {"base", base}, {"blocks_applied", before + applied},
                        {"last_bal_hash", hex0x(last_hash)}}
      .dump();
}

}  // namespace st::cli
