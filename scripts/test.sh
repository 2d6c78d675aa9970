#!/usr/bin/env bash
# test.sh: set up, build Release and ASan+UBSan trees, run the whole doctest suite in both.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
ctest --test-dir build --output-on-failure -j "$(nproc)"
scripts/setup.sh build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTATETREE_SANITIZE=ON
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j "$(nproc)"
