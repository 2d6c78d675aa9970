#!/usr/bin/env bash
# bench_cli_test.sh SOURCE_DIR: bench.sh's usage paths. --help and --list exit 0 and name
# every study; a bad option, study, scale or count, and an --out directory that is not empty,
# exit 2 with one line on stderr. None of them builds or writes anything: bench.sh runs from
# a copy alone in an empty directory (no scripts/setup.sh to build with), which must hold
# nothing else afterwards.
set -u
src=${1:?usage: bench_cli_test.sh SOURCE_DIR}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cp "$src/bench.sh" "$dir/"
mkdir "$dir/full" && touch "$dir/full/x"
fails=0
check() {  # check WANT_RC WANT_STDERR_LINES ARGS...
  local want=$1 lines=$2; shift 2
  bash "$dir/bench.sh" "$@" > "$dir/.out" 2> "$dir/.err"
  local rc=$? n
  n=$(wc -l < "$dir/.err")
  if [[ $rc != "$want" ]] || { [[ $lines != any ]] && ((n != lines)); }; then
    echo "FAIL: bench.sh $*: exit $rc (want $want), $n stderr lines (want $lines)"; cat "$dir/.err"; fails=1
  fi
}
check 0 0 --help
grep -q '^usage: ./bench.sh' "$dir/.out" || { echo "FAIL: --help prints no usage"; fails=1; }
check 0 0 --list
for s in merkle kernels mpt bintrie io persist queue-depth group-depth page-size snapshot database cold-tail \
    mpt-vs-bintrie slot-budget hash-vs-traversal crash fuzz; do
  grep -q "^  $s " "$dir/.out" || { echo "FAIL: --list does not name $s"; fails=1; }
done
! grep -qi 'not built yet' "$dir/.out" || { echo "FAIL: --list names a study as not built yet"; fails=1; }
! grep -qi 'does not read the snapshot' "$dir/.out" || { echo "FAIL: --list says run does not read the snapshot"; fails=1; }
check 2 1 --bogus
check 2 1 merkle nosuchstudy
check 2 1 --scale huge
check 2 1 --scale
check 2 1 --reps 0
check 2 1 --out "$dir/full"
REPS=x check 2 1 merkle
FUZZ_SECONDS=0 check 2 1 fuzz
check 2 1 merkle --bin "$dir/no-such-statetree"
check 2 1 merkle --bin
rm -f "$dir/.out" "$dir/.err"
left=$(cd "$dir" && ls -A | grep -vx -e bench.sh -e full)
[[ -z $left ]] || { echo "FAIL: bench.sh wrote $left"; fails=1; }
[[ $(ls -A "$dir/full") == x ]] || { echo "FAIL: bench.sh touched the --out directory"; fails=1; }
((fails == 0)) && echo "bench.sh usage: ok"
exit $fails
