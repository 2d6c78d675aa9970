// persist_cli: what `statetree build / verify / get / read-bench` share: the exit code
// convention for database errors (the one-line error itself is cli_error, cli_args.h), key
// parsing, the state source a database names in its commit record (its spec_json), and a
// progress adapter.
//
// Exit codes: 0 ok; 1 a failed check or an operating error on a database that exists
// (corrupt page, I/O error); 2 bad input (options, a missing database, a database built
// with other parameters than asked for, a build the store cannot do).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "engine/database/store_types.h"
#include "engine/persist/cold_reads.h"  // (includes tree_db.h after what it needs)
#include "engine/persist/tree_db.h"
#include "engine/state/state_source.h"
#include "workloads/report.h"

namespace st::persist {
struct DbFiles;
}

namespace st::cli {

// The exit code for an database::Status from open/build: 2 for bad input (not_found, mismatch,
// bad_argument, unsupported), 1 otherwise.
int exit_code_for(const database::Status& s);

// The database block commits go to (`commit`, `apply`): DIR's options probed from its files,
// an MPT or binary-trie database (arena or RocksDB). nullopt, or {one-line error, exit code}.
struct CommitTarget {
  persist::DbOptions options;
  bool bintrie = false;
};
std::optional<std::pair<std::string, int>> probe_commit_target(const std::string& dir, CommitTarget* out);
// The store of a run's regime: out["store"] ("arena" / "rocksdb") and, for RocksDB, the
// options it runs with (out["rocksdb"]: block size, bloom bits per key, block cache bytes,
// direct reads, synced writes).
void store_regime(const persist::DbFiles& files, nlohmann::json& out);

// The commit record's spec after `applied` more block commits on a state whose spec is
// `spec`: {"kind":"bal_blocks","base":<the built state's spec>,"blocks_applied":N,
// "last_bal_hash":"0x..."} (apply, run).
std::string bal_blocks_spec(const std::string& spec, uint64_t applied, const state::Hash32& last_hash);

// 40 hex digits, "0x" optional. nullopt + *err on anything else.
std::optional<state::Address> parse_address(const std::string& text, std::string* err);
// 1..64 hex digits, "0x" optional, left-padded to 32 bytes.
std::optional<state::Hash32> parse_slot(const std::string& text, std::string* err);

// The source a database was built from, recreated from its spec_json: the synthetic state,
// or the allocation file (the path recorded at build time; its account count must match).
struct LoadedSource {
  std::unique_ptr<state::Allocation> alloc;  // owns the allocation an AllocationSource reads
  std::unique_ptr<state::StateSource> source;
  std::string description;                   // one line for reports
};
// An error (one line) when the spec is unknown or the file is gone / changed. An alloc spec
// that records the file's SHA-256 (builds since it was added) is checked against the file
// first: a changed file is reported as "the source differs from the one the database was
// built from", before any answer is compared.
std::optional<std::string> load_source(const std::string& spec_json, LoadedSource* out);
// The spec_json written for an --alloc build (absolute path, counts, and the SHA-256 of the
// file's bytes when it can be read).
std::string alloc_spec_json(const std::string& path, uint64_t accounts, uint64_t slots);
// "0x" + SHA-256 of a file's bytes; nullopt when it cannot be read.
std::optional<std::string> file_sha256(const std::string& path);
// True when the spec names an allocation file but records no hash of it (databases built
// before the hash was recorded): a changed file then shows only as wrong answers.
bool source_unhashed_alloc(const std::string& spec_json);

// A ProgressFn drawing report::Progress (a new bar whenever the total changes).
class ProgressBar {
 public:
  explicit ProgressBar(std::string what, bool enabled = true) : what_(std::move(what)), enabled_(enabled) {}
  persist::ProgressFn fn();
  void finish();

 private:
  std::string what_;
  bool enabled_;
  uint64_t total_ = 0;
  std::unique_ptr<report::Progress> bar_;
};

std::string hex0x(const uint8_t* p, size_t n);
template <class Bytes>
std::string hex0x(const Bytes& b) { return hex0x(b.data(), b.size()); }

}  // namespace st::cli
