// commands: the statetree subcommands. Each takes the arguments after its name and returns
// the process exit status (0 ok, 1 a failed check, 2 bad usage/input, 70 internal error).
#pragma once

namespace st::cli {

int cmd_merkle(int argc, char** argv);
int cmd_root(int argc, char** argv);
int cmd_hash_bench(int argc, char** argv);
int cmd_io_bench(int argc, char** argv);
int cmd_bintrie_bench(int argc, char** argv);
int cmd_mpt_bench(int argc, char** argv);
int cmd_build(int argc, char** argv);
int cmd_verify(int argc, char** argv);
int cmd_get(int argc, char** argv);
int cmd_read_bench(int argc, char** argv);
int cmd_commit(int argc, char** argv);
int cmd_compare(int argc, char** argv);
int cmd_workload(int argc, char** argv);
int cmd_apply(int argc, char** argv);
int cmd_run(int argc, char** argv);

}  // namespace st::cli
