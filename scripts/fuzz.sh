#!/usr/bin/env bash
# fuzz.sh: builds the libFuzzer targets of tests/fuzz with clang (AddressSanitizer +
# UndefinedBehaviorSanitizer, into build-fuzz/) and runs each for a set time from its corpus
# (build-fuzz/corpus/TARGET/, kept between runs), seeded from the test data and
# tests/fuzz/seeds/TARGET/. A target that finds a crash or a broken invariant leaves the
# input in build-fuzz/crashes/ and makes the script exit 1.
#
#   scripts/fuzz.sh [--seconds S] [--json] [TARGET...]   (default: 60 s each, every target)
#
# --json: one JSON object per target on stdout (target, seconds, runs, corpus, ok, crashes,
# crash_inputs) and nothing else there (bench.sh's fuzz study).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=60
targets=()
json=0
while (($#)); do
  case $1 in
    --seconds) (($# >= 2)) || { echo "fuzz.sh: --seconds needs a count" >&2; exit 2; }; secs=$2; shift 2 ;;
    --json) json=1; shift ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[[ $secs =~ ^[0-9]+$ && $secs -ge 1 ]] || { echo "fuzz.sh: --seconds must be a positive integer" >&2; exit 2; }
STATETREE_EXTRA_PACKAGES="clang libclang-rt-14-dev" CC=clang CXX=clang++ \
  scripts/setup.sh build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTATETREE_FUZZ=ON -DSTATETREE_TESTS=OFF >&2

# seed TARGET CORPUS: the test data's inputs for the target, then tests/fuzz/seeds/TARGET/
# (copied under their content's hash, so reruns add nothing twice).
seed() {
  local t=$1 corpus=$2 f
  add() { cp "$1" "$corpus/seed-$(sha1sum "$1" | cut -c1-16)"; }
  case $t in
    genesis_fuzz)  # the small allocations (mainnet's 650 kB would set libFuzzer's max_len)
      for f in workloads/data/genesis/{sepolia,holesky,hoodi}_genesis_alloc.json; do add "$f"; done ;;
    kv_fuzz)  # first byte: the --secure bit (0 and 1)
      for f in tests/data/mpt/*.kv; do
        { printf '\x00'; cat "$f"; } > "$corpus/.seed" && add "$corpus/.seed"
        { printf '\x01'; cat "$f"; } > "$corpus/.seed" && add "$corpus/.seed"
      done
      rm -f "$corpus/.seed" ;;
  esac
  if [[ -d tests/fuzz/seeds/$t ]]; then
    for f in tests/fuzz/seeds/"$t"/*; do [[ -f $f ]] && add "$f"; done
  fi
  return 0
}
if ((${#targets[@]} == 0)); then
  for f in build-fuzz/fuzz/*_fuzz; do targets+=("$(basename "$f")"); done
fi
mkdir -p build-fuzz/crashes
failed=0
for t in "${targets[@]}"; do
  bin=build-fuzz/fuzz/$t
  [[ -x $bin ]] || { echo "fuzz.sh: no target $t (have: $(ls build-fuzz/fuzz | tr '\n' ' '))" >&2; exit 2; }
  corpus=build-fuzz/corpus/$t
  mkdir -p "$corpus"
  seed "$t" "$corpus"
  echo "fuzz.sh: $t for ${secs}s (corpus $corpus: $(ls "$corpus" | wc -l) inputs)" >&2
  before=$(ls build-fuzz/crashes | grep -c "^$t-" || true)
  ok=1
  "$bin" "$corpus" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 \
    -artifact_prefix=build-fuzz/crashes/"$t"- -print_final_stats=1 2>build-fuzz/"$t".log || ok=0
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' build-fuzz/"$t".log | grep -o '[0-9]*$' || true)
  after=$(ls build-fuzz/crashes | grep -c "^$t-" || true)
  new_crashes=$(ls -t build-fuzz/crashes | grep "^$t-" | head -n $((after - before)) || true)
  ncorpus=$(ls "$corpus" | wc -l)
  if ((json)); then
    python3 -c 'import json, sys
t, secs, runs, corpus, ok, crashes = sys.argv[1:7]
print(json.dumps({"command": "fuzz", "target": t, "seconds": int(secs), "runs": int(runs) if runs else None,
                  "corpus": int(corpus), "ok": ok == "1", "crashes": len(crashes.split()),
                  "crash_inputs": ["build-fuzz/crashes/" + c for c in crashes.split()],
                  "log": "build-fuzz/" + t + ".log"}))' "$t" "$secs" "$runs" "$ncorpus" "$ok" "$new_crashes"
  fi
  if ((ok)); then
    ((json)) || echo "$t: ok, ${runs:-?} inputs in ${secs}s, corpus $ncorpus"
  else
    msg="$t: FAILED (log build-fuzz/$t.log, input in build-fuzz/crashes/)"
    if ((json)); then echo "$msg" >&2; else echo "$msg"; fi
    grep -m3 -E 'ERROR|invariant failed|SUMMARY' build-fuzz/"$t".log >&2 || true
    failed=1
  fi
done
exit $failed
