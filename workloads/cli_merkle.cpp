// cli_merkle: placeholder, replaced by the Merkle command.
#include <cstdio>
namespace st::cli {
int cmd_merkle(int, char**) { std::fprintf(stderr, "not yet\n"); return 2; }
}  // namespace st::cli
