// cli_root: `statetree root --tree mpt|bintrie ...` forwards to the tree's own handler
// (cli_root_mpt.cpp, cli_root_bintrie.cpp), which parses the rest of the options.
#include <cstdio>
#include <cstring>
#include <string>

#include "workloads/commands.h"

namespace st::cli {

int root_mpt(int argc, char** argv);      // cli_root_mpt.cpp
int root_bintrie(int argc, char** argv);  // cli_root_bintrie.cpp
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
  const bool help = argc == 0 || (argc >= 1 && (std::strcmp(argv[0], "--help") == 0 || std::strcmp(argv[0], "-h") == 0));
  std::FILE* out = help && tree.empty() ? stdout : stderr;
  if (!help || !tree.empty()) std::fprintf(stderr, "statetree root: --tree must be mpt or bintrie%s\n", tree.empty() ? "" : (" (got '" + tree + "')").c_str());
  std::fprintf(out, "usage: statetree root --tree mpt|bintrie [options]   (statetree root --tree T --help for the tree's options)\n");
  return help && tree.empty() ? 0 : 2;
}

}  // namespace st::cli
