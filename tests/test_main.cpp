// doctest entry point shared by every test executable. The threading library's worker
// threads are joined before the process exits (engine/pipeline/parallel.h), as in statetree.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "engine/pipeline/parallel.h"

int main(int argc, char** argv) {
  st::pipeline::WorkerThreadsJoin join_workers_at_exit;
  return doctest::Context(argc, argv).run();
}
