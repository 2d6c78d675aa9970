// cli_root: `statetree root --tree mpt|bintrie ...` forwards to the tree's own handler
// (cli_root_mpt.cpp, cli_root_bintrie.cpp), which parses the rest of the options. Without
// a valid --tree, the arguments are still checked against the options of both handlers, so
// an unknown option is named as such; no arguments at all print the usage on stderr (exit 2).
#include <cstdio>
#include <cstring>
#include <string>

#include "workloads/cli_args.h"
#include "workloads/commands.h"

namespace st::cli {

int root_mpt(int argc, char** argv);      // cli_root_mpt.cpp
int root_bintrie(int argc, char** argv);  // cli_root_bintrie.cpp
void root_mpt_options(Args& args);
void root_bintrie_options(Args& args);
int root_blocks(int argc, char** argv);   // cli_apply.cpp: --alloc FILE --blocks FILE

int cmd_root(int argc, char** argv) {
  std::string tree;
  for (int i = 0; i < argc; ++i)
    if (std::strcmp(argv[i], "--blocks") == 0 || std::strncmp(argv[i], "--blocks=", 9) == 0) return root_blocks(argc, argv);
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--tree") == 0 && i + 1 < argc) tree = argv[i + 1];
    else if (std::strncmp(argv[i], "--tree=", 7) == 0) tree = argv[i] + 7;
  }
  if (tree == "mpt") return root_mpt(argc, argv);
  if (tree == "bintrie") return root_bintrie(argc, argv);

  const char* usage =
      "usage: statetree root --tree mpt|bintrie [options]   (statetree root --tree T --help for the tree's options)\n";
  Args all("statetree root", "");
  root_mpt_options(all);
  root_bintrie_options(all);
  if (!all.parse(argc, argv)) {  // an unknown option, a missing value: named
    if (argc == 0) std::fputs(usage, stderr);
    return all.fail(all.error());
  }
  if (all.help_requested() && tree.empty()) {
    std::fputs(usage, stdout);
    return 0;
  }
  if (argc == 0) std::fputs(usage, stderr);
  if (tree.empty()) return all.fail("--tree mpt|bintrie is required");
  return all.fail("--tree must be mpt or bintrie (got '" + tree + "')");
}

}  // namespace st::cli
