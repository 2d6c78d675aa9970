// cli_root_bintrie: `statetree root --tree bintrie` (placeholder until the bintrie engine lands).
#include <cstdio>

namespace st::cli {

int root_bintrie(int argc, char** argv) {
  std::fprintf(stderr, "statetree root: --tree bintrie is not implemented yet\n");
  return 2;
}

}  // namespace st::cli
