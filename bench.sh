#!/usr/bin/env bash
# bench.sh: the experiment runner. Builds the statetree binary, runs the chosen studies and
# keeps every run: each run gets its own directory (results/<UTC timestamp>/ or --out DIR)
# with meta.json (commit, machine, scale, load per study, failures), commands.txt (every
# command run), <study>.jsonl (one JSON line per command) and summary.txt (every study's
# table); results/latest points at the newest run. Databases and scratch files live under
# $STATETREE_DATA (default <run dir>/data) and are removed at the end unless --keep.
# Studies are measured, never asserted: compare the figures with docs/benchmarks.md.
#
# Invariants: --help, --list and bad usage build and write nothing; an earlier run is never
# emptied or overwritten; a failing command is recorded and its study goes on (the commands
# of the same configuration that depend on it are skipped); the exit status is 0 only if
# every command succeeded.
set -uo pipefail
ARGV="$*"

ALL_STUDIES=(merkle kernels mpt bintrie io persist)
DEFAULT_STUDIES=(kernels merkle mpt bintrie io)

usage() {
  cat <<'EOF'
usage: ./bench.sh [STUDY...] [--scale small|medium|large] [--out DIR] [--keep]
                  [--reps N]
       ./bench.sh --list | --help

Builds build/statetree (scripts/setup.sh --target statetree build), runs the
studies and writes a new run directory, results/<UTC timestamp>/ (results/latest
points at the newest):
  meta.json     git commit (and whether the tree is dirty), CPU, cores, kernel,
                scale, load before and after each study, start and end times,
                failures (command, exit code, last stderr line)
  commands.txt  every command run, in order
  STUDY.jsonl   the raw JSON line of every command of the study
  summary.txt   every study's table (also printed on stdout)
  stderr.log    the stderr of every command that printed any

STUDY: merkle kernels mpt bintrie io persist, or all (default: all but persist)

options:
  --scale S   small (100k: under a minute in all on 2 cores), medium (1M, the
              default), large (10M; persist ~14 min, 8.5 GB); see --list
  --out DIR   write the run into DIR (refused if it exists and is not empty)
  --keep      keep the databases and scratch files (default: removed at the end)
  --reps N    repetitions of every timed command (instead of the scale's)
  --list      the studies: what each runs, how long and how much disk
  --help      this text

environment (overrides):
  REPS=N              same as --reps
  SLOTS=N             persist: storage slots (100k / 1M / 10M by scale)
  CONTRACTS=C         persist: ERC20-like contracts holding the slots [1000]
  ACCOUNTS=A          persist: accounts in all [SLOTS/10]
  STATETREE_DATA=DIR  data under DIR/statetree-bench-<run>/ [<run dir>/data]

Progress (one line per command) goes to stderr, the tables to stdout. Exit
status: 0 if every command succeeded, 1 if any failed (the run is kept and
says which), 2 on bad usage.
EOF
}

list_studies() {
  cat <<'EOF'
studies: what each runs; time on 2 cores at small / medium / large
  merkle   statetree merkle: SHA-256 Merkle root of 100k / 1M / 10M leaves,
           1 thread beside the OpenSSL baselines, 2 threads, then the shani,
           avx2 and portable kernels (those the CPU has)
                                                  ~2 s / ~15 s / ~2 min
  kernels  statetree hash-bench: every SHA-256 kernel tier x entry point,
           ns per message and per compression (11 / 11 / 31 reps)
                                                  ~1 s / ~1 s / ~3 s
  mpt      statetree mpt-bench: MPT from-scratch root of 100k / 1M / 10M
           entries (1 and 2 threads), a 4,096-write block into as many
           slots, each vs bare Keccak of the same nodes (4 GB RAM at 10M)
                                                  ~2 s / ~5 s / ~1 min
  bintrie  statetree bintrie-bench: EIP-7864 binary trie root of 100k / 1M /
           10M keys vs bare hashing, incremental batches, threads, group
           blobs (3 GB RAM at 10M)                ~3 s / ~10 s / ~1.5 min
  io       statetree io-bench: random 4 KiB page reads of a 64 / 256 / 1024
           MiB arena file at QD 1, 8, 32 beside a raw io_uring loop and
           RocksDB (disk 0.13 / 0.5 / 2 GB)       ~5 s / ~10 s / ~40 s
  persist  statetree build, verify, read-bench (cold, QD 1, 8, 32): MPT and
           binary trie x arena and RocksDB stores, 100k / 1M / 10M slots;
           then 20 block commits + verify on each arena database
           (disk 0.3 / 1.3 / 8.5 GB)              ~20 s / ~1 min / ~14 min
default: all but persist; all: the six. Data goes at the end unless --keep.
EOF
}

die_usage() { echo "bench.sh: $*" >&2; exit 2; }

# ---- arguments (nothing is built or written before they are all valid) ------------------
studies=()
scale=medium
out=
keep=0
reps=${REPS:-}
while (($#)); do
  case $1 in
    --help|-h) usage; echo; list_studies; exit 0 ;;
    --list) list_studies; exit 0 ;;
    --scale) (($# >= 2)) || die_usage "--scale needs small, medium or large"; scale=$2; shift 2 ;;
    --scale=*) scale=${1#*=}; shift ;;
    --out) (($# >= 2)) || die_usage "--out needs a directory"; out=$2; shift 2 ;;
    --out=*) out=${1#*=}; shift ;;
    --reps) (($# >= 2)) || die_usage "--reps needs a count"; reps=$2; shift 2 ;;
    --reps=*) reps=${1#*=}; shift ;;
    --keep) keep=1; shift ;;
    -*) die_usage "unknown option '$1' (see ./bench.sh --help)" ;;
    all) studies+=("${ALL_STUDIES[@]}"); shift ;;
    *)
      [[ " ${ALL_STUDIES[*]} " == *" $1 "* ]] ||
        die_usage "unknown study '$1' (expected ${ALL_STUDIES[*]} or all)"
      studies+=("$1"); shift ;;
  esac
done
case $scale in small|medium|large) ;; *) die_usage "unknown scale '$scale' (expected small, medium or large)" ;; esac
is_count() { [[ $1 =~ ^[1-9][0-9]*$ ]]; }
[[ -z $reps ]] || is_count "$reps" || die_usage "--reps/REPS must be a positive integer, not '$reps'"
for var in SLOTS CONTRACTS ACCOUNTS; do
  [[ -z ${!var:-} ]] || is_count "${!var}" || die_usage "$var must be a positive integer, not '${!var}'"
done
((${#studies[@]})) || studies=("${DEFAULT_STUDIES[@]}")
# Each study once, in the order given.
uniq_studies=()
for s in "${studies[@]}"; do [[ " ${uniq_studies[*]} " == *" $s "* ]] || uniq_studies+=("$s"); done
studies=("${uniq_studies[@]}")

abspath() { [[ $1 == /* ]] && echo "$1" || echo "$PWD/$1"; }
[[ -z $out ]] || out=$(abspath "$out")
data_root=${STATETREE_DATA:-}
[[ -z $data_root ]] || data_root=$(abspath "$data_root")
if [[ -n $out && -e $out ]]; then
  [[ -d $out ]] || die_usage "--out $out exists and is not a directory"
  [[ -z $(ls -A "$out") ]] || die_usage "--out $out exists and is not empty (each run needs a new directory)"
fi

cd "$(dirname "$0")" || exit 1
ROOT=$PWD
BIN=./build/statetree

# ---- sizes per scale (REPS / --reps, SLOTS, CONTRACTS, ACCOUNTS override) ---------------
case $scale in
  small)  leaves=100000;   merkle_reps=5;  sweep_reps=3; hb_reps=11
          mpt_n=100000;    mpt_reps=3;     bt_keys=100000;  bt_reps=3
          io_mib=64;       io_reps=3;      p_slots=100000;  rb_reps=3 ;;
  medium) leaves=1000000;  merkle_reps=11; sweep_reps=3; hb_reps=11
          mpt_n=1000000;   mpt_reps=5;     bt_keys=1000000; bt_reps=5
          io_mib=256;      io_reps=5;      p_slots=1000000; rb_reps=3 ;;
  large)  leaves=10000000; merkle_reps=11; sweep_reps=3; hb_reps=31
          mpt_n=10000000;  mpt_reps=5;     bt_keys=10000000; bt_reps=5
          io_mib=1024;     io_reps=5;      p_slots=10000000; rb_reps=3 ;;
esac
if [[ -n $reps ]]; then
  merkle_reps=$reps sweep_reps=$reps hb_reps=$reps mpt_reps=$reps bt_reps=$reps
  io_reps=$reps rb_reps=$reps
fi
p_slots=${SLOTS:-$p_slots}
p_contracts=${CONTRACTS:-1000}
p_accounts=${ACCOUNTS:-$((p_slots / 10))}
((p_slots >= p_contracts)) || die_usage "SLOTS ($p_slots) must be at least CONTRACTS ($p_contracts)"
p_spc=$((p_slots / p_contracts))

# ---- build ---------------------------------------------------------------------------------
BUILD_CMD="scripts/setup.sh --target statetree build"
echo "bench.sh: building: $BUILD_CMD" >&2
if ! $BUILD_CMD; then
  echo "bench.sh: the build failed (nothing was run)" >&2
  exit 1
fi

# ---- the run directory -----------------------------------------------------------------------
if [[ -n $out ]]; then
  RUN=$out
  mkdir -p "$RUN" || exit 1
  [[ -z $(ls -A "$RUN") ]] || { echo "bench.sh: --out $RUN is not empty" >&2; exit 2; }
else
  mkdir -p results || exit 1
  stamp=$(date -u +%Y%m%dT%H%M%SZ)
  RUN=$ROOT/results/$stamp
  n=1
  while ! mkdir "$RUN" 2>/dev/null; do n=$((n + 1)); RUN=$ROOT/results/$stamp-$n; done
fi
mkdir -p results
if [[ $RUN == "$ROOT/results/"* ]]; then ln -sfn "${RUN#"$ROOT/results/"}" results/latest
else ln -sfn "$RUN" results/latest; fi
data_root_made=0  # remove STATETREE_DATA itself only if this run made it
[[ -z $data_root || -e $data_root ]] || data_root_made=1
if [[ -n $data_root ]]; then DATA=$data_root/statetree-bench-$(basename "$RUN"); else DATA=$RUN/data; fi
mkdir -p "$DATA" || { echo "bench.sh: cannot create the data directory $DATA" >&2; exit 1; }

meta() { python3 scripts/bench/meta.py "$RUN" "$@"; }
TMP_OUT=$RUN/.stdout.tmp
TMP_ERR=$RUN/.stderr.tmp
{
  echo "# statetree bench run $(basename "$RUN"), scale $scale; run from $ROOT"
  echo "$BUILD_CMD"
} > "$RUN/commands.txt"
: > "$RUN/summary.txt"
: > "$RUN/stderr.log"
meta init --argv "./bench.sh $ARGV" --scale "$scale" --bin "$BIN" --data "$DATA" --keep "$keep" --studies "${studies[*]}" \
  --reps "${reps:-}" --slots "${SLOTS:-}" --contracts "${CONTRACTS:-}" --accounts "${ACCOUNTS:-}" \
  || { echo "bench.sh: cannot write $RUN/meta.json" >&2; exit 1; }
echo "bench.sh: run directory $RUN (data under $DATA)" >&2

status=ok
finished=0
cleanup() {  # on any exit: the data goes unless --keep, meta.json gets its end
  ((finished)) && return
  finished=1
  rm -f "$TMP_OUT" "$TMP_ERR"
  if ((keep)); then
    echo "bench.sh: data kept in $DATA ($(du -sh "$DATA" 2>/dev/null | cut -f1))" >&2
  else
    rm -rf "$DATA"
    ((data_root_made)) && rmdir "$data_root" 2>/dev/null
  fi
  meta finish --status "$status" || true
}
child= current_study= ncmd=0
interrupted() {  # INT / TERM: stop the running command, then clean up as on any exit
  status=interrupted
  echo "bench.sh: interrupted" >&2
  if [[ -n $child ]]; then kill -TERM "$child" 2>/dev/null; wait "$child" 2>/dev/null; fi
  if [[ -n $current_study ]]; then  # the partial study still gets its table
    meta study-end --study "$current_study" --commands "$ncmd" --data-dir "$DATA/$current_study" \
      --data-bytes "$(du -sb "$DATA/$current_study" 2>/dev/null | cut -f1)" --data-kept "$keep"
    { python3 scripts/bench/tables.py "$RUN" "$current_study"; echo "(interrupted)"; } >> "$RUN/summary.txt"
  fi
  exit 130
}
trap cleanup EXIT
trap interrupted INT TERM

# Warn (only) when the data's file system looks too small: MiB per study at this scale.
need_mb=0
for s in "${studies[@]}"; do
  case $s:$scale in
    io:small) need_mb=$((need_mb + 150)) ;; io:medium) need_mb=$((need_mb + 550)) ;; io:large) need_mb=$((need_mb + 2200)) ;;
    persist:*) need_mb=$((need_mb + 400 + p_slots / 1200)) ;;  # 0.3 / 1.3 / 8.5 GB measured
  esac
done
avail_mb=$(df -Pm "$DATA" 2>/dev/null | awk 'NR == 2 { print $4 }')
if [[ -n $avail_mb ]] && ((avail_mb < need_mb)); then
  echo "bench.sh: warning: the studies need about $need_mb MiB under $DATA, $avail_mb MiB are free" >&2
fi

# ---- the plan: every command of every study, known before the first one runs -------------
# P_STUDY[i], P_GROUP[i] (a configuration: a failing command skips the later ones of its
# group), P_ARGS[i] (the statetree arguments, shell-quoted).
P_STUDY=() P_GROUP=() P_ARGS=()
plan() {  # plan STUDY GROUP ARG...
  local study=$1 group=$2; shift 2
  local a quoted=
  for a in "$@"; do
    if [[ $a =~ ^[A-Za-z0-9_./,:=+@%-]+$ ]]; then quoted+="$a "; else quoted+="$(printf '%q' "$a") "; fi
  done
  P_STUDY+=("$study"); P_GROUP+=("$group"); P_ARGS+=("$quoted")
}
has_cpu_flag() { grep -qw "$1" /proc/cpuinfo 2>/dev/null; }
SKIPPED_KERNELS=()

plan_merkle() {
  plan merkle 1t merkle --leaves "$leaves" --reps "$merkle_reps" --threads 1 --pin 1 --baseline
  plan merkle 2t merkle --leaves "$leaves" --reps "$merkle_reps" --threads 2 --pin 0,1
  local k flag
  for k in shani avx2 portable; do
    case $k in shani) flag=sha_ni ;; avx2) flag=avx2 ;; *) flag= ;; esac
    if [[ -n $flag ]] && ! has_cpu_flag "$flag"; then SKIPPED_KERNELS+=("$k (CPU lacks $flag)"); continue; fi
    plan merkle "$k" merkle --leaves "$leaves" --reps "$sweep_reps" --threads 1 --pin 1 --kernel "$k"
  done
}
plan_kernels() { plan kernels all hash-bench --reps "$hb_reps"; }
plan_mpt() { plan mpt all mpt-bench --entries "$mpt_n" --slots "$mpt_n" --reps "$mpt_reps"; }
plan_bintrie() { plan bintrie all bintrie-bench --keys "$bt_keys" --reps "$bt_reps"; }
plan_io() {
  # --keep: the files stay until bench.sh measures and removes the data directory.
  plan io all io-bench --file "$DATA/io/io-bench.arena" --size-mib "$io_mib" --qd 1,8,32 \
    --reps "$io_reps" --rocksdb --keep
}
plan_persist() {
  # The same synthetic state into both trees and both stores, verified; cold batched and
  # one-at-a-time lookups beside the raw page-read floor; each arena database then takes
  # 20 block commits (copy-on-write, one per block) and must verify again.
  local tree store db
  for tree in mpt bintrie; do
    for store in arena rocksdb; do
      db=$DATA/persist/db-$tree-$store
      plan persist "$tree-$store" build --tree "$tree" --accounts "$p_accounts" --contracts "$p_contracts" \
        --slots-per-contract "$p_spc" --db "$db" --store "$store"
      plan persist "$tree-$store" verify --db "$db"
      plan persist "$tree-$store" read-bench --db "$db" --keys 4096 --qd 1,8,32 --cold --reps "$rb_reps"
      if [[ $store == arena ]]; then
        plan persist "$tree-$store" commit --db "$db" --blocks 20 --writes 4096
        plan persist "$tree-$store" verify --db "$db"
      fi
    done
  done
}
for s in "${studies[@]}"; do "plan_$s"; done
total=${#P_ARGS[@]}
((${#SKIPPED_KERNELS[@]})) && echo "bench.sh: merkle: not run: ${SKIPPED_KERNELS[*]}" >&2

# ---- run ---------------------------------------------------------------------------------------
failed_any=0
i=0
for s in "${studies[@]}"; do
  mkdir -p "$DATA/$s"
  meta study-begin --study "$s"
  current_study=$s
  if [[ $s == merkle ]]; then
    for k in "${SKIPPED_KERNELS[@]}"; do meta note --study merkle --text "kernel $k: not run"; done
  fi
  failed_group=
  ncmd=0
  for ((j = 0; j < total; j++)); do
    [[ ${P_STUDY[j]} == "$s" ]] || continue
    i=$((i + 1)); ncmd=$((ncmd + 1))
    cmd="$BIN ${P_ARGS[j]}--json"
    cmd=${cmd//"$ROOT/"/}  # paths inside the checkout relative to it (commands run from there)
    shown="statetree ${cmd#"$BIN "}"
    if [[ -n $failed_group && ${P_GROUP[j]} == "$failed_group" ]]; then
      echo "[$i/$total] $s: skipped (an earlier command of ${P_GROUP[j]} failed): $shown" >&2
      meta skip --study "$s" --command "$cmd"
      continue
    fi
    echo "[$i/$total] $s: $shown" >&2
    echo "$cmd" >> "$RUN/commands.txt"
    # In the background and waited for, so that INT / TERM reach the trap at once.
    eval "args=(${P_ARGS[j]})"
    "$BIN" "${args[@]}" --json > "$TMP_OUT" 2> "$TMP_ERR" &
    child=$!
    wait "$child"
    rc=$?
    child=
    if [[ -s $TMP_ERR ]] || ((rc != 0)); then
      { echo "### [$i/$total] $s: $cmd (exit $rc)"; cat "$TMP_ERR"; } >> "$RUN/stderr.log"
    fi
    # Any JSON object the command printed is kept, a failing one's too (verify prints ok=false).
    if [[ -s $TMP_OUT && $(head -c1 "$TMP_OUT") == "{" ]]; then cat "$TMP_OUT" >> "$RUN/$s.jsonl"; fi
    if ((rc != 0)); then
      failed_any=1
      failed_group=${P_GROUP[j]}
      last=$(grep -v '^[[:space:]]*$' "$TMP_ERR" | tail -n 1)
      echo "[$i/$total] $s: FAILED (exit $rc): ${last:-no stderr}" >&2
      meta failure --study "$s" --command "$cmd" --exit-code "$rc" --stderr "$TMP_ERR"
    fi
  done
  bytes=$(du -sb "$DATA/$s" 2>/dev/null | cut -f1)
  if ((keep)); then where="kept"; else rm -rf "${DATA:?}/$s"; where="removed"; fi
  if ((${bytes:-0} > 4096)); then
    echo "bench.sh: $s: data under $DATA/$s used $(numfmt --to=iec-i --suffix=B "$bytes") ($where)" >&2
  fi
  meta study-end --study "$s" --commands "$ncmd" --data-dir "$DATA/$s" --data-bytes "${bytes:-0}" --data-kept "$keep"
  current_study=
  python3 scripts/bench/tables.py "$RUN" "$s" | tee -a "$RUN/summary.txt"
  echo | tee -a "$RUN/summary.txt"
done

((failed_any)) && status=failed
cleanup
echo "bench.sh: results in $RUN (summary.txt, meta.json, commands.txt)" >&2
if ((failed_any)); then
  echo "bench.sh: some commands failed (see the tables and meta.json)" >&2
  exit 1
fi
exit 0
