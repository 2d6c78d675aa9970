#!/usr/bin/env bash
# check_layers.sh: fails (exit 1, one line per violation) when a layer reaches past its
# neighbours in the sources: TBB outside engine/pipeline/, liburing or RocksDB outside io/,
# SIMD intrinsics or ISA flags (build flags, target pragmas or attributes) outside kernels/,
# an io/ header included from the CLI (workloads/ reaches the disk through the engine).
# The build enforces the rest (see docs/architecture.md, Layers). Run by the test suite
# (ctest: layers).
set -uo pipefail
cd "$(dirname "$0")/.."
src=(kernels io engine workloads tests)
bad=0
violations() {  # violations PATTERN ALLOWED_PREFIX WHAT
  local hits
  hits=$(grep -rnE --include='*.cpp' --include='*.h' "$1" "${src[@]}" | grep -v "^$2" || true)
  if [[ -n $hits ]]; then
    while IFS= read -r line; do echo "layers: $3: $line"; done <<<"$hits"
    bad=1
  fi
}
violations '#include[[:space:]]*[<"](oneapi/)?tbb/' 'engine/pipeline/' 'TBB outside engine/pipeline/'
violations '#include[[:space:]]*[<"]liburing' 'io/' 'liburing outside io/'
violations '#include[[:space:]]*[<"]rocksdb/' 'io/' 'RocksDB outside io/'
# Intrinsics: any *intrin.h, the ARM and cpuid headers, the _mm*_ calls, the vector types and
# the compiler's ISA builtins; ISA flags in the sources: target pragmas and attributes.
violations '#include[[:space:]]*<([a-z0-9_]*intrin|arm_neon|arm_acle|arm_sve|cpuid)\.h>|\b_mm(256|512)?_[a-z0-9_]+\(|\b__m(64|128|256|512)[a-z]*\b|__builtin_ia32_' 'kernels/' 'intrinsics outside kernels/'
violations '#pragma[[:space:]]+(GCC|clang)[[:space:]]+(target|attribute)|__attribute__[[:space:]]*\(\([[:space:]]*target|\[\[gnu::target' 'kernels/' 'ISA flag outside kernels/'
cli_io=$(grep -rnE --include='*.cpp' --include='*.h' '#include[[:space:]]*[<"]io/' workloads || true)
if [[ -n $cli_io ]]; then
  while IFS= read -r line; do echo "layers: io/ header included from the CLI: $line"; done <<<"$cli_io"
  bad=1
fi
flags=$(grep -rnE --include=CMakeLists.txt --include='*.cmake' -e '-m(sha|avx|sse|bmi|arch)' . | grep -v '^\./kernels/' | grep -v '^\./build' || true)
if [[ -n $flags ]]; then
  while IFS= read -r line; do echo "layers: ISA flag outside kernels/: $line"; done <<<"$flags"
  bad=1
fi
exit $bad
