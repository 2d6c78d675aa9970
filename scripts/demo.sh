#!/usr/bin/env bash
# demo.sh: set up, build, and run the main job on a small embedded default:
# the Merkle root of 100,000 synthetic leaves, verified proof of leaf 12345, and the
# roots of the embedded genesis allocation for the MPT and binary trie when present.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build >/dev/null
./build/statetree merkle --leaves 100000 --reps 5 --proof 12345 --baseline "$@"
