// statetree: the command-line entry point. Dispatches to the subcommands in commands.h.
#include <cstdio>
#include <cstring>
#include <string>

#include "workloads/commands.h"

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
    {"workload", st::cli::cmd_workload, "write the study's workloads as EIP-7928 block access lists (gas by rule); --show FILE"},
    {"apply", st::cli::cmd_apply, "apply block access lists to an MPT or binary-trie arena database without execution"},
};

void print_usage(FILE* out) {
  std::fprintf(out, "usage: statetree COMMAND [options]   (statetree COMMAND --help for details)\n\ncommands:\n");
  for (const Command& c : kCommands) std::fprintf(out, "  %-14s %s\n", c.name, c.summary);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) { print_usage(stderr); return 2; }
  const std::string name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") { print_usage(stdout); return 0; }
  for (const Command& c : kCommands)
    if (name == c.name) return c.run(argc - 2, argv + 2);
  std::fprintf(stderr, "statetree: unknown command '%s'\n", name.c_str());
  print_usage(stderr);
  return 2;
}
