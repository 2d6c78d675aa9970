#!/usr/bin/env bash
# demo.sh: set up, build, and run the main job on a small embedded default:
# the Merkle root of 100,000 synthetic leaves with a verified proof of leaf 12345 and the
# OpenSSL baselines side by side, then the state roots of the embedded Sepolia genesis
# allocation (workloads/data/genesis/) in the MPT (checked against its published root) and the
# EIP-7864 binary trie.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --target statetree build
./build/statetree merkle --leaves 100000 --reps 5 --proof 12345 --baseline "$@"
mpt_root=$(./build/statetree root --tree mpt --alloc workloads/data/genesis/sepolia_genesis_alloc.json)
bintrie_root=$(./build/statetree root --tree bintrie --alloc workloads/data/genesis/sepolia_genesis_alloc.json)
echo
echo "Sepolia genesis state root, MPT:     $mpt_root (equals the published root)"
echo "Sepolia genesis state root, bintrie: $bintrie_root"
