#!/usr/bin/env bash
# setup.sh: install the Debian packages statetree needs (when root and missing) and build
# the Release tree into build/. Idempotent; prints what it does (the build's progress
# included). Used by demo.sh, test.sh and bench.sh.
#
#   scripts/setup.sh [--target T] [BUILD_DIR [CMAKE_ARGS...]]
#
# --target T builds only T (demo.sh and bench.sh build only the `statetree` binary).
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(build-essential cmake ninja-build pkg-config libtbb-dev liburing-dev libmimalloc-dev
          libssl-dev doctest-dev libfmt-dev nlohmann-json3-dev librocksdb-dev gnuplot-nox
          python3 python3-pycryptodome python3-rlp)
# More for one purpose (scripts/fuzz.sh adds clang), space-separated.
read -r -a extra <<<"${STATETREE_EXTRA_PACKAGES:-}"
PACKAGES+=("${extra[@]}")

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -eq 0 ]]; then
    echo "setup: installing ${missing[*]} (apt-get, about a minute)" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    echo "setup: packages installed" >&2
  else
    echo "setup: missing Debian packages: ${missing[*]}" >&2
    echo "setup: run as root, or: sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
fi

target=()
if [[ ${1:-} == --target ]]; then
  target=(--target "$2")
  shift 2
fi
build_dir=${1:-build}
shift || true
jobs=$(nproc)
echo "setup: configuring $build_dir/${*:+ ($*)}" >&2
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
echo "setup: building ${target[1]:-everything} in $build_dir/ with $jobs jobs" >&2
cmake --build "$build_dir" -j "$jobs" "${target[@]}" >&2
