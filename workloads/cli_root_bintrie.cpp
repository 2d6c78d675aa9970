// cli_root_bintrie: `statetree root --tree bintrie --alloc FILE [--hash sha256|blake3]
// [--threads T] [--json]` — the EIP-7864 binary-trie state root of a genesis allocation
// (go-ethereum's leaves: basic data, code hash, code chunks, non-zero storage), computed by
// the batch root builder. SHA-256 big-endian keys are go-ethereum's; BLAKE3 is the EIP's.
#include <cstdio>
#include <string>
#include <variant>

#include "engine/bintrie/account_leaves.h"
#include "engine/bintrie/batch_root.h"
#include "engine/bintrie/state_tree.h"
#include "kernels/sha256.h"
#include "workloads/cli_args.h"
#include "workloads/cli_options.h"
#include "workloads/genesis.h"
#include "workloads/report.h"

namespace st::cli {
namespace {
int fail(const std::string& msg, int code = 2) { return cli_error("statetree root", msg, code); }
}  // namespace

void root_bintrie_options(Args& args) {
  args.option("tree", "bintrie", "the tree (bintrie here)");
  args.option("alloc", "FILE", "genesis JSON: {\"alloc\": {...}} or the alloc object itself");
  args.option_one_of("hash", "H", "tree hash: go-ethereum's is sha256, the EIP reference's blake3", {"sha256", "blake3"}, "sha256");
  args.option_u64("threads", "T", "threads for the root builder", 1, 256, 1);
  args.pin_option("threads");
  args.option("kernel", "NAME", "SHA-256 kernel: auto, portable, shani, avx2, avx512", "auto");
  add_json(args, "one JSON object on stdout");
}

int root_bintrie(int argc, char** argv) {
  Args args("statetree root --tree bintrie", "EIP-7864 binary-trie state root of a genesis allocation (docs/specs/bintrie.md).");
  root_bintrie_options(args);
  args.require("alloc");
  if (auto rc = args.parse_or_exit(argc, argv)) return *rc;
  const auto kind = st::bintrie::hash_kind_from_name(args.str("hash"));  // checked by parse()
  const uint64_t threads = args.get_u64("threads");
  if (auto e = st::kernels::sha256_select(args.str("kernel"))) return fail(*e);

  auto loaded = st::workloads::load_genesis_alloc(args.str("alloc"));
  if (auto* e = std::get_if<std::string>(&loaded)) return fail(*e);
  const st::state::Allocation& alloc = std::get<st::state::Allocation>(loaded);
  for (const auto& [addr, acc] : alloc.accounts) {
    const std::string why = st::bintrie::check_account(acc);
    if (!why.empty()) return fail("account 0x" + report::hex(addr) + ": " + why);
  }
  st::bintrie::KeyScheme ks;
  ks.hasher = st::bintrie::make_hasher(*kind);
  const uint64_t t0 = report::now_ns();
  const std::vector<st::bintrie::Entry> leaves = st::bintrie::allocation_leaves(ks, alloc, st::bintrie::code_hash_keccak256);
  st::bintrie::BatchRootOptions opt;
  opt.threads = unsigned(threads);
  st::bintrie::BatchRootStats stats;
  const st::bintrie::Hash32 root = st::bintrie::batch_root(ks.hasher, leaves, opt, &stats);
  const double ms = double(report::now_ns() - t0) / 1e6;
  if (args.given("json")) {
    nlohmann::json j = {{"tree", "bintrie"}, {"hash", st::bintrie::hash_kind_name(*kind)},
                        {"sha256_kernel", st::kernels::sha256_active().name}, {"root", report::hex0x(root)},
                        {"accounts", alloc.accounts.size()}, {"leaves", stats.entries}, {"stems", stats.stems},
                        {"hash32_messages", stats.hash32_messages}, {"hash64_messages", stats.hash64_messages},
                        {"threads", threads}, {"pinned_cpus", args.pin_cpus()}, {"ms", ms}};
    report::stamp(j);
    std::puts(j.dump().c_str());
  } else {
    std::printf("%s\n", report::hex0x(root).c_str());
  }
  return 0;
}

}  // namespace st::cli
