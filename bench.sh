#!/usr/bin/env bash
# bench.sh: the experiment runner. Builds Release, runs the studies, writes one JSON line per
# run to results/<study>.jsonl and prints a summary table. Studies are measured, never
# asserted: compare the figures with docs/benchmarks.md.
#
#   ./bench.sh                 all studies with their default sizes
#   ./bench.sh merkle          one study (merkle | kernels | mpt | bintrie | io | persist)
#   SLOTS=10000000 ./bench.sh persist   the persistent-state study at 10M slots (default 1M)
#   REPS=11 ./bench.sh merkle  more repetitions
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh build >/dev/null
BIN=./build/statetree
REPS=${REPS:-11}
mkdir -p results
studies=("$@")
[[ ${#studies[@]} -eq 0 ]] && studies=(kernels merkle mpt bintrie io)

run() {  # run STUDY ARGS... : one JSON line appended to results/STUDY.jsonl
  local study=$1; shift
  echo "+ statetree $*" >&2
  $BIN "$@" --json | tee -a "results/$study.jsonl" >/dev/null
}

for study in "${studies[@]}"; do
  case $study in
    merkle)
      : > results/merkle.jsonl
      run merkle merkle --leaves 1000000 --reps "$REPS" --threads 1 --pin 1 --baseline
      run merkle merkle --leaves 1000000 --reps "$REPS" --threads 2 --pin 0,1
      for k in shani avx2 portable; do
        run merkle merkle --leaves 1000000 --reps 3 --threads 1 --pin 1 --kernel "$k" || true
      done
      python3 - <<'PY'
import json
rows=[json.loads(l) for l in open('results/merkle.jsonl')]
print(f"{'kernel':8} {'thr':>3} {'add':>8} {'compute':>8} {'total':>8} {'min':>8} {'max':>8} {'limit':>7} {'eff':>5}")
for r in rows:
    t=r['total_ns_per_leaf']
    print(f"{r['kernel']:8} {r['threads']:>3} {r['add_ns_per_leaf']['median']:8.2f} {r['compute_ns_per_leaf']['median']:8.2f} "
          f"{t['median']:8.2f} {t['min']:8.2f} {t['max']:8.2f} {r['limit_ns_per_leaf']:7.2f} {100*r['efficiency']:4.0f}%")
    for name,b in r.get('baselines',{}).items():
        print(f"   baseline {name}: {b['total_ns_per_leaf']['median']:.2f} ns/leaf, engine/baseline {b['engine_over_baseline']:.3f}")
if len(rows)>=2:
    print(f"2 threads vs 1: {rows[0]['total_ns_per_leaf']['median']/rows[1]['total_ns_per_leaf']['median']:.2f}x")
PY
      ;;
    kernels) : > results/kernels.jsonl; run kernels hash-bench --reps "$REPS" ;;
    mpt) : > results/mpt.jsonl; run mpt mpt-bench --reps 5 ;;
    bintrie) : > results/bintrie.jsonl; run bintrie bintrie-bench --reps 5 ;;
    io)
      : > results/io.jsonl
      rm -f results/io-bench.arena
      run io io-bench --file results/io-bench.arena --size-mib 256 --qd 1,8,32 --reps 5 --rocksdb
      ;;
    persist)
      # Build the same synthetic state into both trees and both stores, verify each, then
      # cold batched / one-at-a-time lookups (read-bench) beside the raw page-read floor;
      # each arena database then takes 20 block commits and is verified again.
      : > results/persist.jsonl
      SLOTS=${SLOTS:-1000000}
      CONTRACTS=${CONTRACTS:-1000}
      ACCOUNTS=${ACCOUNTS:-$((SLOTS / 10))}
      SPC=$((SLOTS / CONTRACTS))
      for tree in mpt bintrie; do
        for store in arena rocksdb; do
          db=results/db-$tree-$store
          rm -rf "$db"
          run persist build --tree "$tree" --accounts "$ACCOUNTS" --contracts "$CONTRACTS" \
            --slots-per-contract "$SPC" --db "$db" --store "$store"
          run persist verify --db "$db"
          run persist read-bench --db "$db" --keys 4096 --qd 1,8,32 --cold --reps 3
          if [ "$store" = arena ]; then
            # Block commits (copy-on-write, one per block), then the database must still verify.
            run persist commit --db "$db" --blocks 20 --writes 4096
            run persist verify --db "$db"
          fi
        done
      done
      ;;
    *) echo "bench.sh: unknown study '$study'" >&2; exit 2 ;;
  esac
done
