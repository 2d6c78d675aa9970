#!/usr/bin/env bash
# fuzz.sh: builds the libFuzzer targets of tests/fuzz with clang (AddressSanitizer +
# UndefinedBehaviorSanitizer, into build-fuzz/) and runs each for a set time from its corpus
# (build-fuzz/corpus/TARGET/, kept between runs). A target that finds a crash or a broken
# invariant leaves the input in build-fuzz/crashes/ and makes the script exit 1.
#
#   scripts/fuzz.sh [--seconds S] [TARGET...]     (default: 60 s each, every target)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=60
targets=()
while (($#)); do
  case $1 in
    --seconds) secs=$2; shift 2 ;;
    -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[[ $secs =~ ^[0-9]+$ && $secs -ge 1 ]] || { echo "fuzz.sh: --seconds must be a positive integer" >&2; exit 2; }
STATETREE_EXTRA_PACKAGES="clang libclang-rt-14-dev" CC=clang CXX=clang++ \
  scripts/setup.sh build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTATETREE_FUZZ=ON -DSTATETREE_TESTS=OFF
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
  echo "fuzz.sh: $t for ${secs}s (corpus $corpus: $(ls "$corpus" | wc -l) inputs)" >&2
  if "$bin" "$corpus" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 \
       -artifact_prefix=build-fuzz/crashes/"$t"- -print_final_stats=1 2>build-fuzz/"$t".log; then
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' build-fuzz/"$t".log | grep -o '[0-9]*$' || echo '?')
    echo "$t: ok, $runs inputs in ${secs}s, corpus $(ls "$corpus" | wc -l)"
  else
    echo "$t: FAILED (log build-fuzz/$t.log, input in build-fuzz/crashes/)"
    grep -m3 -E 'ERROR|invariant failed|SUMMARY' build-fuzz/"$t".log || true
    failed=1
  fi
done
exit $failed
