// statetree: the command-line entry point. Dispatches to the subcommands in commands.h;
// `statetree --version` / `statetree version` print the version, the git commit and the
// kernels chosen on this CPU. After a command that succeeded, one warning line on stderr
// when any of its timing summaries was noisy (report.h, the rule in engine/stats/summary.h).
// The threading library's worker threads are joined before the process exits.
// Linked with mimalloc, freed memory stays mapped (set_allocator_policy).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#if STATETREE_MIMALLOC
#include <mimalloc.h>
#endif

#include "engine/pipeline/parallel.h"
#include "workloads/build_info.h"
#include "workloads/commands.h"
#include "workloads/report.h"

namespace {

struct Command {
  const char* name;
  int (*run)(int, char**);
  const char* summary;
};

const Command kCommands[] = {
    {"merkle", st::cli::cmd_merkle, "Bitcoin-style SHA-256 Merkle root of a batch of leaves, with proofs and baselines"},
    {"hash-bench", st::cli::cmd_hash_bench, "SHA-256 kernel micro-benchmark: every tier and entry point, ns/message and ns/compression"},
    {"mpt-bench", st::cli::cmd_mpt_bench, "MPT from-scratch / incremental root timings vs bare Keccak of the same nodes"},
    {"root", st::cli::cmd_root, "state root of a genesis allocation or key/value file (--tree mpt|bintrie)"},
    {"io-bench", st::cli::cmd_io_bench, "raw random page reads through the arena store at each queue depth (device baseline)"},
    {"bintrie-bench", st::cli::cmd_bintrie_bench, "EIP-7864 binary trie figures: batch root vs bare hashing, incremental, threads, group blobs"},
    {"build", st::cli::cmd_build, "write a synthetic ERC20 state or a genesis allocation into a database (--tree mpt|bintrie)"},
    {"verify", st::cli::cmd_verify, "re-read, re-hash and checksum every node of a database; exit 0 only if consistent"},
    {"get", st::cli::cmd_get, "one account / storage slot of a database, with --proof its verified proof"},
    {"read-bench", st::cli::cmd_read_bench, "cold lookups of random existing keys: batched per queue depth, one at a time, raw reads"},
    {"commit", st::cli::cmd_commit, "apply synthetic blocks to an MPT or binary-trie arena database, one copy-on-write commit each"},
    {"compare", st::cli::cmd_compare, "two result files side by side: median ratio with bootstrap CI, Mann-Whitney U p"},
    {"workload", st::cli::cmd_workload, "write the study's workloads as EIP-7928 block access lists (gas by rule); --show FILE"},
    {"apply", st::cli::cmd_apply, "apply block access lists to an MPT or binary-trie arena database without execution"},
    {"run", st::cli::cmd_run, "the block pipeline: blocks through prefetch, traverse and commit, per-block and per-stage figures"},
};

void print_usage(FILE* out) {
  std::fprintf(out, "usage: statetree COMMAND [options]   (statetree COMMAND --help for details)\n\ncommands:\n");
  for (const Command& c : kCommands) std::fprintf(out, "  %-14s %s\n", c.name, c.summary);
  std::fprintf(out, "  %-14s %s\n", "version", "version, git commit, the kernels chosen on this CPU and the allocator (also --version)");
}

// The allocator's policy, for a batch process on a machine where a page fault is dear:
//  - mimalloc returns a freed segment's memory to the system half a second after the
//    segment empties (its allow_decommit option). A pipeline block takes 0.4-1 s and frees
//    its read pages, scratch and trees when it ends, so the next block faulted all of it in
//    again: at 10M slots, half of a binary-trie run's page faults (a fifth of an MPT run's),
//    and on a virtual machine where a fault costs ~12 us, a quarter of the binary trie's
//    CPU. Freed memory stays mapped.
//  - Its segments on 2 MiB pages (large_os_pages) stay off unless MIMALLOC_LARGE_OS_PAGES=1
//    asks for them: they cut a 10-block MPT pipeline run's page faults from 81k to ~9k and
//    raise whole-run blocks/s, but the MPT's steady-state blocks ran 5-10 % slower on them
//    (docs/benchmarks.md, "Allocator segments on 2 MiB pages"), which would tilt the
//    per-block figures the study compares. The commits' trees stay off huge pages either
//    way (large_alloc's huge_pages = false advises MADV_NOHUGEPAGE).
// MIMALLOC_ALLOW_DECOMMIT and MIMALLOC_LARGE_OS_PAGES in the environment decide when set.
// What the run had is recorded in every result (build_info::allocator_json).
void set_allocator_policy() {
#if STATETREE_MIMALLOC
  if (std::getenv("MIMALLOC_ALLOW_DECOMMIT") == nullptr) mi_option_disable(mi_option_allow_decommit);
  st::build_info::Allocator a;
  a.name = "mimalloc";
  const int v = mi_version();  // e.g. 209
  a.version = std::to_string(v / 100) + "." + std::to_string(v / 10 % 10) + "." + std::to_string(v % 10);
  a.keeps_freed_memory = !mi_option_is_enabled(mi_option_allow_decommit);
  a.large_os_pages = mi_option_is_enabled(mi_option_large_os_pages);
  st::build_info::set_allocator(a);
#endif
}

}  // namespace

int main(int argc, char** argv) {
  set_allocator_policy();
  // Declared first, so destroyed last: the worker threads are joined after the command.
  st::pipeline::WorkerThreadsJoin join_workers_at_exit;
  if (argc < 2) { print_usage(stderr); return 2; }
  const std::string name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") { print_usage(stdout); return 0; }
  if (name == "--version" || name == "version") {
    if (argc > 2 && (std::strcmp(argv[2], "--help") == 0 || std::strcmp(argv[2], "-h") == 0)) {
      std::printf("usage: statetree --version   (or: statetree version)\nPrints the version, the git commit it was built from, the kernels chosen on this CPU and the allocator policy.\n");
      return 0;
    }
    if (argc > 2) {
      std::fprintf(stderr, "statetree version: unexpected argument '%s'\n", argv[2]);
      return 2;
    }
    std::printf("%s\n%s\n%s\n", st::build_info::version_line().c_str(), st::build_info::kernels_line().c_str(),
                st::build_info::allocator_line().c_str());
    return 0;
  }
  for (const Command& c : kCommands)
    if (name == c.name) {
      const int rc = c.run(argc - 2, argv + 2);
      if (const std::string w = st::report::noise_warning(); rc == 0 && !w.empty()) {
        std::fflush(stdout);  // after the results, also when both go to one pipe
        std::fprintf(stderr, "statetree %s: %s\n", c.name, w.c_str());
      }
      return rc;
    }
  std::fprintf(stderr, "statetree: unknown command '%s'\n", name.c_str());
  print_usage(stderr);
  return 2;
}
