// cli_root_mpt: `statetree root --tree mpt` (placeholder until the mpt engine lands).
#include <cstdio>

namespace st::cli {

int root_mpt(int argc, char** argv) {
  std::fprintf(stderr, "statetree root: --tree mpt is not implemented yet\n");
  return 2;
}

}  // namespace st::cli
