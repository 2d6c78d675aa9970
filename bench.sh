#!/usr/bin/env bash
# bench.sh: the experiment runner. Builds the statetree binary, runs the chosen studies and
# keeps every run: each run gets its own directory (results/<UTC timestamp>/ or --out DIR)
# with meta.json (commit, machine, scale, load per study, failures), commands.txt (every
# command run), <study>.jsonl (one JSON line per command) and summary.txt (every study's
# table), plots/*.svg (gnuplot, each checked for drawn data after rendering) and REPORT.md
# (the tables beside the published figures, ratios with bootstrap CIs, machine, regime,
# plots); results/latest points at the newest run under results/. Databases and scratch
# files live under $STATETREE_DATA (default <run dir>/data) and are removed at the end
# unless --keep. Studies are measured, never asserted: compare with docs/benchmarks.md.
#
# Invariants: --help, --list and bad usage build and write nothing; an earlier run is never
# emptied or overwritten; a failing command is recorded and its study goes on (the commands
# of the same configuration that depend on it are skipped); the exit status is 0 only if
# every command succeeded and every plot holds its data. The whole script is one brace group
# (closed on its last line), so bash parses it before running it: an edit of bench.sh while
# a run is going does not reach that run.
{
set -uo pipefail
export PYTHONDONTWRITEBYTECODE=1  # no __pycache__ in the checkout
ARGV="$*"

ALL_STUDIES=(merkle kernels mpt bintrie io persist queue-depth group-depth page-size snapshot database cold-tail
             mpt-vs-bintrie slot-budget hash-vs-traversal inflight crash fuzz)
DEFAULT_STUDIES=(kernels merkle mpt bintrie io)
# `all`: every study but fuzz (which builds its own clang tree: name it to run it).
ALL_BUT_FUZZ=(merkle kernels mpt bintrie io persist queue-depth group-depth page-size snapshot database cold-tail
              mpt-vs-bintrie slot-budget hash-vs-traversal inflight crash)

usage() {
  cat <<'EOF'
usage: ./bench.sh [STUDY...] [--scale tiny|small|medium|large] [--out DIR] [--keep]
                  [--reps N] [--bin PATH]
       ./bench.sh --list | --help

Builds build/statetree (scripts/setup.sh --target statetree build), runs the
studies and writes a new run directory, results/<UTC timestamp>/ (results/latest
points at the newest run there):
  meta.json     git commit (and whether the tree is dirty), CPU, cores, kernel,
                scale, load before and after each study, start and end times,
                failures (command, exit code, last stderr line)
  commands.txt  every command run, in order
  STUDY.jsonl   the raw JSON line of every command of the study
  summary.txt   every study's table (also printed on stdout)
  page-size-qd.json, page-size-qd.csv  the page-size study's table, one row per QD
  stderr.log    the stderr of every command that printed any
  plots/        gnuplot SVG plots (+ their .dat and .gp), plots/plots.json: each
                plot's series and whether its SVG holds drawn data
  REPORT.md     each table beside the published figures (scripts/bench/published/),
                ratios with bootstrap 95 % CIs (statetree compare), machine,
                regime, the plots linked

STUDY: merkle kernels mpt bintrie io persist queue-depth group-depth page-size
       snapshot database cold-tail mpt-vs-bintrie slot-budget
       hash-vs-traversal inflight crash fuzz, or all
       (every study but fuzz; default: kernels merkle mpt bintrie io)

options:
  --scale S   tiny (10k: seconds, the test suite's smoke run; host-warm, no
              drop_caches), small (100k: a few minutes in all on 2 cores),
              medium (1M, the default), large (10M; persist ~14 min, 8.5 GB)
  --out DIR   write the run into DIR (refused if it exists and is not empty)
  --keep      keep the databases and scratch files (default: removed at the end)
  --reps N    repetitions of every timed command (instead of the scale's)
  --bin PATH  run this statetree binary instead of building build/statetree
  --list      the studies: what each runs, how long and how much disk
  --help      this text

environment (overrides):
  REPS=N              same as --reps
  SLOTS=N             persist: storage slots (100k / 1M / 10M by scale)
  CONTRACTS=C         persist: ERC20-like contracts holding the slots [1000]
  ACCOUNTS=A          persist: accounts in all [SLOTS/10]
  STATETREE_DATA=DIR  data under DIR/statetree-bench-<run>/ [<run dir>/data]
  FUZZ_SECONDS=S      fuzz: seconds per target [10 / 30 / 60 / 300 by scale]

Progress (one line per command) goes to stderr, the tables to stdout. Exit
status: 0 if every command succeeded and every plot holds its data, 1 if not
(the run is kept and says which), 2 on bad usage.
EOF
}

list_studies() {
  cat <<'EOF'
studies: what each runs; time on 2 cores at small / medium / large
  merkle   statetree merkle: SHA-256 Merkle root of 100k / 1M / 10M leaves,
           1 thread beside the OpenSSL baselines, 2 threads, then the shani,
           avx2 and portable kernels (those the CPU has); a size sweep of 3 / 4
           / 5 sizes from 8,192 to 4M leaves (1 pinned thread)
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
  queue-depth  statetree build (MPT and binary trie, arena) of 100k / 1M / 10M
           slots, then read-bench (cold) at QD 1, 2, 4 ... 128 beside
           io-bench's raw io_uring loop and arena store at the same QDs
           (disk 0.2 / 0.5 / 6 GiB)     ~15 s / ~30 s / ~1.1 min
  group-depth  statetree build --gd 1..8 (binary trie, arena) of 100k / 1M /
           10M slots (GD 7, 8: 16 KiB pages, their full groups exceed 4 KiB),
           each: bytes on disk, cold read-bench at QD 1 and 32, 10 / 20 / 20
           block commits of 4,096 writes (one database on disk at a time, each
           removed before the next is built: at most ~8 GiB at 10M; with --keep
           all 8: 0.6 / 3.5 / 30 GiB, the arena files preallocated in doublings)
                                                  ~30 s / ~1.8 min / ~5.6 min
  page-size  statetree build with 4 KiB and 16 KiB pages (both trees, arena),
           cold read-bench at QD 1, 2, 4 ... 128 beside io-bench's raw io_uring
           loop at both page sizes and the same QDs (one table: us, device
           reads and bytes per lookup, 16 / 4 KiB per tree), block commits
           (disk 0.3 / 2.1 / 12 GiB)      ~40 s / ~1.7 min / ~3.2 min
  snapshot  statetree build --snapshot (MPT and binary trie, arena) of 100k /
           1M / 10M slots, then cold read-bench at QD 1 and 32 (and one key at
           a time) through the tree and through the flat snapshot: device reads,
           bytes and ms per lookup, binary trie / MPT with and without it
           (targets: <= 1.2 reads per slot, <= 1.1x). Lookups only: the block
           pipeline's reads through the snapshot (statetree run --snapshot) are
           not part of this study (docs/benchmarks.md, "run --snapshot")
           (disk 0.1 / 0.8 / 8 GiB)       ~7 s / ~16 s / ~1 min
  database  statetree build (MPT and binary trie) into the arena store and into
           RocksDB, 100k / 1M / 10M slots; cold read-bench at QD 1 and 32; a
           cold statetree run of erc20_approve (500 / 4,094 calls per block,
           reader bal, on a copy); 10 / 20 / 20 block commits of 4,096 writes:
           arena / RocksDB per lookup, per block and per commit
           (disk 0.3 / 2.3 / 18 GB)       ~20 s / ~1.7 min / ~3.6 min
  cold-tail  statetree build (MPT and binary trie, arena) of 10k / 100k / 1M /
           10M slots in 10 / 20 / 50 / 200 contracts; then statetree run --cold
           --workload erc20_balanceof (100 calls per transaction), 1..9
           transactions per block x readers serial, geth (4 workers), bal, with
           and without the published other work (--other-slots 740: each
           transaction after the first reads 740 distinct cold slots of other
           contracts), each on a fresh copy of the state (2 / 3 / 3 blocks
           per run at small / medium / large; tiny: 20 calls, 1 and 3
           transactions, 40 other slots, 1 block per run): cost per miss, per
           distinct slot and per device read vs the published 0.40 -> 2.99 ms
           (disk 0.1 / 1.1 GB)   ~35 s / ~2.5 min at small / medium (large:
           not timed as a study; its 10M runs with the other work alone
           took 11 min by hand, so about 25 min with both halves)
  mpt-vs-bintrie  statetree build (MPT and binary trie, arena, one contract) of
           10k / 100k / 1M / 10M slots; then statetree run --cold of
           erc20_balanceof, erc20_approve and mixed_sload_sstore (one
           transaction per block; 2,000 / 500 / 1,000 + 250 calls at small, the
           published 36,742 / 4,094 / 21,620 + 2,047 at medium and large) with
           readers bal and serial, each on a fresh copy, 2 / 5 / 10 / 10 blocks
           (the repetitions, each read cold): ms per slot, binary trie / MPT
           with bootstrap CIs beside the published table; per tree, read-bench's
           raw loop at QD 32 on the base (cold): ms per slot read / (device
           reads per slot x the raw loop's us per read)
           (disk 0.1 / 1.1 / 12 GB)   ~10 s / ~3 min / ~7.5 min at small / medium / large
  slot-budget  statetree build (MPT and binary trie, arena, one contract of 100k
           / 1M / 10M slots); then one full block (one transaction of the
           block's gas: 36M at small, 36M and 100M at medium and large) of
           erc20_balanceof, erc20_approve and mixed_sload_sstore, statetree run
           --cold with readers bal and serial, each on a fresh copy, 3 / 5 / 10
           blocks (the repetitions): total ms per block against the 12-second
           slot and the share left (tiny: 4M-gas blocks)
           (disk 0.13 / 1 / 12 GB)   ~10 s / ~2.5 min / ~10.5 min
  hash-vs-traversal  statetree build (MPT and binary trie, arena, one contract
           of 10k / 100k / 1M / 10M slots at tiny / small / medium / large); then statetree run --cold --reader
           bal --reps 2 / 3 / 5 / 5 --scratch DIR (each repetition on a fresh copy)
           of erc20_balanceof, erc20_approve and mixed_sload_sstore (one
           transaction, 1 / 2 / 2 / 2 blocks per repetition, the calls of
           mpt-vs-bintrie): per block the traversal (state_read_ms), the hash
           stage (commit.hash_ms), its pure hash (pure_hash_ms), state_hash_ms,
           hash / pure and state hash / pure beside the published 60x (MPT) and
           19x (binary trie) (disk 0.1 / 1.1 / 6 GB, 10 GB while a copy exists)
                                 ~8 s / ~1 min / ~7.5 min at small / medium / large
  inflight  statetree build (MPT and binary trie, arena, one contract of 10k /
           100k / 1M / 10M slots); then statetree run --reader bal --qd 32
           --raw-loop --cold of mixed_sload_sstore (one transaction, mpt-vs-
           bintrie's loads and stores) with --inflight 1 and 2, A B B A per
           tree over 1 / 2 / 4 / 4 rounds (--reps), each on a fresh copy, 2 / 5
           / 10 / 10 blocks per run: K2 / K1 blocks per second (bootstrap CI)
           beside the run's own ceiling (the device's raw rate at QD 32 or the
           CPU over its cores) and the 1.3x target (disk 0.1 / 1.1 / 12 GB)
                                 ~5 s / ~1.5 min / ~5 min at small / medium / large
  crash    scripts/bench/crash_run.py per tree (MPT and binary trie) and store
           (arena and RocksDB): statetree build (2,000 accounts, 2 x 20,000
           slots), workload (30 blocks of mixed_sload_sstore, 200 + 100 calls),
           apply (the reference roots), then 10 / 200 / 1,000 times (tiny: 3, a
           smaller state): a fresh copy, statetree run --inflight 2 --reader
           bal, SIGKILL at a seeded point of its wall time (0.2-0.3 s on the
           arena, 0.5-0.9 s on RocksDB, quiet host), then verify, the writer
           lock (and RocksDB's), the root against apply's, the blocks stdout
           reported, a resume of the rest; first, the checker must catch 8
           databases built to be wrong (11 cases on RocksDB): kills, reopen
           failures, lost blocks, wrong roots, failed resumes, where the kills
           landed (disk 0.1 GB)
           ~50 s / ~11.5 min / ~1 h 50 min (large: RocksDB's runs are 80
           min of it; measured niced beside other work)
  fuzz     scripts/fuzz.sh: builds the libFuzzer targets of tests/fuzz (clang,
           build-fuzz/, a few minutes the first time), runs each for 10 / 30 /
           60 / 300 s (tiny / small / medium / large; FUZZ_SECONDS): inputs
           run, crashes                           targets x seconds
  tiny: 10k leaves, keys and slots, 2 reps, no drop_caches (host-warm): every
  study in seconds, for checking that bench.sh, its plots and report work.
default: kernels merkle mpt bintrie io; all: every study but fuzz. Data goes
at the end unless --keep.
EOF
}

die_usage() { echo "bench.sh: $*" >&2; exit 2; }

# ---- arguments (nothing is built or written before they are all valid) ------------------
studies=()
scale=medium
out=
keep=0
bin_given=
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
    --bin) (($# >= 2)) || die_usage "--bin needs a statetree binary"; bin_given=$2; shift 2 ;;
    --bin=*) bin_given=${1#*=}; shift ;;
    -*) die_usage "unknown option '$1' (see ./bench.sh --help)" ;;
    all) studies+=("${ALL_BUT_FUZZ[@]}"); shift ;;
    *)
      [[ " ${ALL_STUDIES[*]} " == *" $1 "* ]] ||
        die_usage "unknown study '$1' (expected ${ALL_STUDIES[*]} or all)"
      studies+=("$1"); shift ;;
  esac
done
case $scale in tiny|small|medium|large) ;; *) die_usage "unknown scale '$scale' (expected tiny, small, medium or large)" ;; esac
if [[ -n $bin_given ]]; then
  [[ -f $bin_given && -x $bin_given ]] || die_usage "--bin $bin_given is not an executable file"
fi
[[ -z ${FUZZ_SECONDS:-} ]] || [[ $FUZZ_SECONDS =~ ^[1-9][0-9]*$ ]] ||
  die_usage "FUZZ_SECONDS must be a positive integer, not '$FUZZ_SECONDS'"
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
[[ -z $bin_given ]] || bin_given=$(abspath "$bin_given")
data_root=${STATETREE_DATA:-}
[[ -z $data_root ]] || data_root=$(abspath "$data_root")
if [[ -n $out && -e $out ]]; then
  [[ -d $out ]] || die_usage "--out $out exists and is not a directory"
  [[ -z $(ls -A "$out") ]] || die_usage "--out $out exists and is not empty (each run needs a new directory)"
fi

cd "$(dirname "$0")" || exit 1
ROOT=$PWD
BIN=${bin_given:-./build/statetree}

# ---- sizes per scale (REPS / --reps, SLOTS, CONTRACTS, ACCOUNTS override) ---------------
# m_sweep: the merkle size sweep (one pinned thread, the auto kernel), besides `leaves`;
# qd_list: the depths of queue-depth and page-size; gd_blocks / gd_writes: the block commits of the storage
# studies; cold: read-bench's cold protocol (tiny stays host-warm: no drop_caches in tests).
qd_list=1,2,4,8,16,32,64,128; gd_blocks=20; gd_writes=4096; rb_keys=4096; cold=--cold
p_contracts_default=1000; fuzz_secs=60; p_blocks=20
# cold-tail: ct_* (state, calls per transaction, transaction counts, other slots, blocks per
# run); mpt-vs-bintrie: mb_* (state slots, calls per block of each workload, blocks = reps).
ct_slots=1000000; ct_contracts=50; ct_calls=100; ct_txs="1 2 3 4 5 6 7 8 9"; ct_other=740; ct_blocks=3
mb_slots=1000000; mb_bal=36742; mb_app=4094; mb_loads=21620; mb_stores=2047; mb_reps=10
# hash-vs-traversal: hv_reps repetitions (--reps of `run`, a fresh copy each) of hv_blocks
# blocks; the state and the calls per block are mpt-vs-bintrie's.
hv_reps=5; hv_blocks=2
# inflight: if_rounds rounds (K = 1 and 2 per tree, A B B A) of if_blocks blocks on a state of
# if_slots slots (one contract); the calls per block are mpt-vs-bintrie's mixed ones.
if_slots=1000000; if_rounds=4; if_blocks=10
# database: db_calls approve calls per block of its `run`; slot-budget: sb_* (slots of the one
# token contract, gas per block, blocks per run = the repetitions, each read cold).
db_calls=4094; sb_slots=1000000; sb_gas="36000000 100000000"; sb_blocks=5
# crash: kill points per tree and the state and blocks of each killed run (one uninterrupted
# run takes about a second on 2 cores at every scale but tiny; the scale sets the points).
cr_kills=200; cr_accounts=2000; cr_contracts=2; cr_spc=20000; cr_blocks=30; cr_loads=200; cr_stores=100
case $scale in
  tiny)   leaves=10000;    merkle_reps=2;  sweep_reps=2; hb_reps=3
          mpt_n=10000;     mpt_reps=2;     bt_keys=10000;   bt_reps=2
          io_mib=4;        io_reps=2;      p_slots=10000;   rb_reps=2
          m_sweep="1024 4096"; qd_list=1,8,32; gd_blocks=3; p_blocks=3; gd_writes=256; rb_keys=256; cold=
          p_contracts_default=100; fuzz_secs=10
          ct_slots=10000; ct_contracts=10; ct_calls=20; ct_txs="1 3"; ct_other=40; ct_blocks=1
          mb_slots=10000; mb_bal=200; mb_app=100; mb_loads=100; mb_stores=50; mb_reps=2
          db_calls=100; sb_slots=10000; sb_gas=4000000; sb_blocks=2; hv_reps=2; hv_blocks=1
          if_slots=10000; if_rounds=1; if_blocks=2
          cr_kills=3; cr_accounts=300; cr_contracts=2; cr_spc=1600; cr_blocks=12; cr_loads=40; cr_stores=20 ;;
  small)  leaves=100000;   merkle_reps=5;  sweep_reps=3; hb_reps=11
          mpt_n=100000;    mpt_reps=3;     bt_keys=100000;  bt_reps=3
          io_mib=64;       io_reps=3;      p_slots=100000;  rb_reps=3
          m_sweep="8192 65536 262144"; gd_blocks=10; fuzz_secs=30
          ct_slots=100000; ct_contracts=20; ct_blocks=2
          mb_slots=100000; mb_bal=2000; mb_app=500; mb_loads=1000; mb_stores=250; mb_reps=5
          db_calls=500; sb_slots=100000; sb_gas=36000000; sb_blocks=3; hv_reps=3; cr_kills=10
          if_slots=100000; if_rounds=2; if_blocks=5 ;;
  medium) leaves=1000000;  merkle_reps=11; sweep_reps=3; hb_reps=11
          mpt_n=1000000;   mpt_reps=5;     bt_keys=1000000; bt_reps=5
          io_mib=256;      io_reps=5;      p_slots=1000000; rb_reps=3
          m_sweep="8192 65536 262144 4000000" ;;
  large)  leaves=10000000; merkle_reps=11; sweep_reps=3; hb_reps=31
          mpt_n=10000000;  mpt_reps=5;     bt_keys=10000000; bt_reps=5
          io_mib=1024;     io_reps=5;      p_slots=10000000; rb_reps=3
          m_sweep="8192 65536 262144 1000000 4000000"; fuzz_secs=300
          ct_slots=10000000; ct_contracts=200; sb_slots=10000000; sb_blocks=10; mb_slots=10000000
          if_slots=10000000
          cr_kills=1000 ;;
esac
if [[ -n $reps ]]; then
  merkle_reps=$reps sweep_reps=$reps hb_reps=$reps mpt_reps=$reps bt_reps=$reps
  io_reps=$reps rb_reps=$reps mb_reps=$reps sb_blocks=$reps hv_reps=$reps if_rounds=$reps
fi
p_slots=${SLOTS:-$p_slots}
p_contracts=${CONTRACTS:-$p_contracts_default}
fuzz_secs=${FUZZ_SECONDS:-$fuzz_secs}
p_accounts=${ACCOUNTS:-$((p_slots / 10))}
((p_slots >= p_contracts)) || die_usage "SLOTS ($p_slots) must be at least CONTRACTS ($p_contracts)"
p_spc=$((p_slots / p_contracts))

# ---- build ---------------------------------------------------------------------------------
if [[ -n $bin_given ]]; then
  BUILD_CMD="# not built: --bin $BIN"
else
  BUILD_CMD="scripts/setup.sh --target statetree build"
  echo "bench.sh: building: $BUILD_CMD" >&2
  if ! $BUILD_CMD; then
    echo "bench.sh: the build failed (nothing was run)" >&2
    exit 1
  fi
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
# results/latest names the newest run under results/ (a run elsewhere, --out, leaves it).
if [[ $RUN == "$ROOT/results/"* ]]; then ln -sfn "${RUN#"$ROOT/results/"}" results/latest; fi
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
    queue-depth:*) need_mb=$((need_mb + io_mib + 100 + p_slots / 2000)) ;;  # 0.5 / 6 GiB at 1M / 10M
    group-depth:*) need_mb=$((need_mb + 200 + p_slots / (keep ? 290 : 1200))) ;;  # 576 MiB / 3.5 / 30 GiB at 100k / 1M / 10M with --keep; one database at a time without
    page-size:*) need_mb=$((need_mb + 2 * io_mib + 50 + p_slots / 900)) ;;  # 0.3 / 2.1 / 12 GiB at 100k / 1M / 10M
    cold-tail:*) need_mb=$((need_mb + 20 + ct_slots / 1000)) ;;   # two bases and one copy
    mpt-vs-bintrie:*|hash-vs-traversal:*) need_mb=$((need_mb + 20 + mb_slots / 1000)) ;;
    snapshot:*) need_mb=$((need_mb + 50 + p_slots / 1000)) ;;
    database:*) need_mb=$((need_mb + 100 + p_slots / 550)) ;;  # 303 MiB / 2.2 / 17 GiB at 100k / 1M / 10M
    inflight:*) need_mb=$((need_mb + 20 + if_slots / 1000)) ;;  # two bases and one copy
    slot-budget:*) need_mb=$((need_mb + 20 + sb_slots / 800)) ;;  # 129 MiB / 1 GiB / 12 GiB at 100k / 1M / 10M
    crash:*) need_mb=$((need_mb + 100)) ;;
  esac
done
avail_mb=$(df -Pm "$DATA" 2>/dev/null | awk 'NR == 2 { print $4 }')
if [[ -n $avail_mb ]] && ((avail_mb < need_mb)); then
  echo "bench.sh: warning: the studies need about $need_mb MiB under $DATA, $avail_mb MiB are free" >&2
fi

# ---- the plan: every command of every study, known before the first one runs -------------
# P_STUDY[i], P_GROUP[i] (a configuration: a failing command skips the later ones of its
# group), P_ARGS[i] (the statetree arguments, shell-quoted).
# P_EXE[i]: the program (statetree; scripts/fuzz.sh for the fuzz study).
# P_PRE[i]: a shell command run before it (the fresh copy of a database a run commits to;
# set through PRE=... around plan), recorded in commands.txt; if it fails, so does the command.
P_STUDY=() P_GROUP=() P_ARGS=() P_EXE=() P_PRE=()
plan() {  # plan STUDY GROUP ARG...
  plan_exe "$BIN" "$@"
}
plan_exe() {  # plan_exe EXE STUDY GROUP ARG...
  local exe=$1 study=$2 group=$3; shift 3
  local a quoted=
  for a in "$@"; do
    if [[ $a =~ ^[A-Za-z0-9_./,:=+@%-]+$ ]]; then quoted+="$a "; else quoted+="$(printf '%q' "$a") "; fi
  done
  P_STUDY+=("$study"); P_GROUP+=("$group"); P_ARGS+=("$quoted"); P_EXE+=("$exe"); P_PRE+=("${PRE:-}")
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
  local n
  for n in $m_sweep; do  # the size sweep: one pinned thread, the auto kernel
    plan merkle "sweep-$n" merkle --leaves "$n" --reps "$merkle_reps" --threads 1 --pin 1
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
        plan persist "$tree-$store" commit --db "$db" --blocks "$p_blocks" --writes "$gd_writes"
        plan persist "$tree-$store" verify --db "$db"
      fi
    done
  done
}
# The storage studies pin the timed thread of read-bench, io-bench and commit to CPU 1 (as
# merkle does); builds are not timed figures here and run unpinned.
plan_queue_depth() {
  # Both trees on the arena store, the same state; cold batched lookups at every QD (the
  # read-bench raw floor beside each), then io-bench's store-less loop and arena store at
  # the same QDs on a file of the data's file system.
  local tree db
  for tree in mpt bintrie; do
    db=$DATA/queue-depth/db-$tree-arena
    plan queue-depth "$tree" build --tree "$tree" --accounts "$p_accounts" --contracts "$p_contracts" \
      --slots-per-contract "$p_spc" --db "$db"
    plan queue-depth "$tree" read-bench --db "$db" --keys "$rb_keys" --qd "$qd_list" $cold --reps "$rb_reps" --pin 1
  done
  plan queue-depth io io-bench --file "$DATA/queue-depth/io-bench.arena" --size-mib "$io_mib" --qd "$qd_list" \
    --reps "$io_reps" $cold --pin 1
}
plan_group_depth() {
  # The binary trie at group depth 1..8, the same state: bytes on disk, cold lookups at QD
  # 1 and 32, then block commits (copy-on-write, one per block). A full group at GD 7 (4.2
  # kB) or 8 (8.3 kB) does not fit a 4 KiB page: those two use 16 KiB pages.
  # Without --keep each GD's database is removed before the next one is built (one on disk
  # at a time: ~8 GiB at large instead of 30).
  local gd db page prev=
  for gd in 1 2 3 4 5 6 7 8; do
    page=4096; ((gd >= 7)) && page=16384
    db=$DATA/group-depth/db-bintrie-gd$gd
    if [[ -n $prev ]] && ((!keep)); then PRE="rm -rf $(printf '%q' "$prev")"; fi
    prev=$db
    plan group-depth "gd$gd" build --tree bintrie --gd "$gd" --page-size "$page" --accounts "$p_accounts" \
      --contracts "$p_contracts" --slots-per-contract "$p_spc" --db "$db"
    PRE=
    plan group-depth "gd$gd" read-bench --db "$db" --keys "$rb_keys" --qd 1,32 $cold --reps "$rb_reps" --pin 1
    plan group-depth "gd$gd" commit --db "$db" --blocks "$gd_blocks" --writes "$gd_writes" --pin 1
  done
}
plan_page_size() {
  # Both trees on the arena store at 4 and 16 KiB pages, the same state: cold batched lookups
  # at every QD of qd_list, block commits; then io-bench's raw io_uring loop (and arena store)
  # at the same QDs and both page sizes, the device's own ceiling beside each row (as many
  # reads per run as read-bench's lookups: io-bench's default 4,096 at small and above).
  local tree page db
  for tree in mpt bintrie; do
    for page in 4096 16384; do
      db=$DATA/page-size/db-$tree-p$page
      plan page-size "$tree-$page" build --tree "$tree" --page-size "$page" --accounts "$p_accounts" \
        --contracts "$p_contracts" --slots-per-contract "$p_spc" --db "$db"
      plan page-size "$tree-$page" read-bench --db "$db" --keys "$rb_keys" --qd "$qd_list" $cold --reps "$rb_reps" --pin 1
      plan page-size "$tree-$page" commit --db "$db" --blocks "$gd_blocks" --writes "$gd_writes" --pin 1
    done
  done
  for page in 4096 16384; do
    plan page-size "io-$page" io-bench --file "$DATA/page-size/io-bench-p$page.arena" --size-mib "$io_mib" \
      --page-size "$page" --qd "$qd_list" --reads "$rb_keys" --reps "$io_reps" $cold --pin 1
  done
}
plan_snapshot() {
  # Both trees on the arena store with the flat snapshot (build --snapshot), the same state;
  # the same cold lookups (read-bench, same keys and seed) through the tree and through the
  # snapshot at QD 1 and 32, one at a time besides (--single).
  local tree db
  for tree in mpt bintrie; do
    db=$DATA/snapshot/db-$tree-snapshot
    plan snapshot "$tree" build --tree "$tree" --snapshot --accounts "$p_accounts" --contracts "$p_contracts" \
      --slots-per-contract "$p_spc" --db "$db"
    plan snapshot "$tree" read-bench --db "$db" --keys "$rb_keys" --qd 1,32 $cold --reps "$rb_reps" --pin 1
    plan snapshot "$tree" read-bench --db "$db" --keys "$rb_keys" --qd 1,32 $cold --reps "$rb_reps" --pin 1 --snapshot
  done
}
plan_database() {
  # Both trees in the arena store and in RocksDB, the same state: build, cold lookups at QD 1
  # and 32, one cold `run` of erc20_approve blocks (reader bal, on a fresh copy), then block
  # commits of synthetic writes on the base (one copy-on-write commit or one synced
  # WriteBatch per block).
  local tree store db copy
  for tree in mpt bintrie; do
    for store in arena rocksdb; do
      db=$DATA/database/db-$tree-$store copy=$DATA/database/run-$tree-$store
      plan database "$tree-$store" build --tree "$tree" --store "$store" --accounts "$p_accounts" \
        --contracts "$p_contracts" --slots-per-contract "$p_spc" --db "$db"
      plan database "$tree-$store" read-bench --db "$db" --keys "$rb_keys" --qd 1,32 $cold --reps "$rb_reps" --pin 1
      PRE=$(fresh_copy "$db" "$copy")
      plan database "$tree-$store" run --db "$copy" --workload erc20_approve --block-count "$mb_reps" \
        --calls "$db_calls" --txs 1 --tx-gas 100000000000 --block-gas 100000000000 --seed 1 --reader bal --qd 32 \
        $cold "${run_pins[@]}"
      PRE=
      plan database "$tree-$store" commit --db "$db" --blocks "$gd_blocks" --writes "$gd_writes" --pin 1
    done
  done
}
# The block pipeline studies: each `run` commits its blocks, so every run gets a fresh copy
# of the study's base database (a reflink where the file system has them). The run's JSON
# lines (one per block, then the summary) are kept as one object (merge_run_json).
# merge_run_json GROUP FILE: `run --json`'s lines as one: the summary object with
# "bench_group" (the configuration, e.g. bintrie/geth/other740/txs9) and "blocks_detail"
# (the block objects in order). In bash: no process per command.
merge_run_json() {
  local blocks= summary= line
  while IFS= read -r line; do
    [[ $line == '{'* ]] || continue
    if [[ $line == *'"type":"block"'* ]]; then blocks+=${blocks:+,}$line; else summary=$line; fi
  done < "$2"
  [[ -n $summary ]] || return 1
  printf '{"bench_group":"%s","blocks_detail":[%s],%s\n' "$1" "$blocks" "${summary:1}"
}
fresh_copy() {  # fresh_copy BASE COPY: the shell command that makes COPY a copy of BASE
  printf 'rm -rf %q && cp -a --reflink=auto %q %q' "$2" "$1" "$2"
}
run_pins=(--pin prefetch=1,traverse=1,hash=1,commit=1)
plan_cold_tail() {
  # erc20_balanceof, ct_calls calls per transaction, 1..9 transactions per block, each
  # reader, with and without the other work of the published blocks (--other-slots).
  local tree base copy reader other t workers
  for tree in mpt bintrie; do
    base=$DATA/cold-tail/base-$tree copy=$DATA/cold-tail/run-$tree
    plan cold-tail "$tree-build" build --tree "$tree" --accounts "$((ct_slots / 10))" --contracts "$ct_contracts" \
      --slots-per-contract "$((ct_slots / ct_contracts))" --seed 1 --db "$base"
    for reader in serial geth bal; do
      workers=(); [[ $reader == geth ]] && workers=(--workers 4)
      for other in "$ct_other" 0; do
        for t in $ct_txs; do
          PRE=$(fresh_copy "$base" "$copy")
          plan cold-tail "$tree/$reader/other$other/txs$t" run --db "$copy" --workload erc20_balanceof \
            --block-count "$ct_blocks" --calls "$ct_calls" --txs "$t" --other-slots "$other" --seed 1 \
            --reader "$reader" "${workers[@]}" --qd 32 $cold "${run_pins[@]}"
          PRE=
        done
      done
    done
  done
}
# mb_generator_options W: sets gen to the call counts of workload W for the mpt-vs-bintrie
# and hash-vs-traversal studies (mb_*: one transaction per block).
mb_generator_options() {
  case $1 in
    erc20_balanceof) gen=(--calls "$mb_bal") ;;
    erc20_approve) gen=(--calls "$mb_app") ;;
    *) gen=(--loads "$mb_loads" --stores "$mb_stores") ;;
  esac
}
plan_mpt_vs_bintrie() {
  # The three ERC20 workloads, one transaction per block (explicit call counts, the gas caps
  # lifted: per-slot time is the metric), each tree x reader on a fresh copy; the run's
  # blocks are the repetitions (each block's reader starts cold).
  local tree base copy reader w gen
  for tree in mpt bintrie; do
    base=$DATA/mpt-vs-bintrie/base-$tree copy=$DATA/mpt-vs-bintrie/run-$tree
    plan mpt-vs-bintrie "$tree-build" build --tree "$tree" --accounts "$((mb_slots / 10))" --contracts 1 \
      --slots-per-contract "$mb_slots" --seed 1 --db "$base"
    # The device's amortized page read at the runs' QD 32 (read-bench's store-less raw loop over
    # the base's arena file, cold): the floor each run's ms per slot is set beside.
    plan mpt-vs-bintrie "$tree-build" read-bench --db "$base" --keys "$((mb_bal < 20000 ? mb_bal : 20000))" \
      --qd 32 --reps "$rb_reps" --single 1 $cold --pin 1
    for w in erc20_balanceof erc20_approve mixed_sload_sstore; do
      mb_generator_options "$w"
      for reader in bal serial; do
        PRE=$(fresh_copy "$base" "$copy")
        plan mpt-vs-bintrie "$tree/$w/$reader" run --db "$copy" --workload "$w" --block-count "$mb_reps" "${gen[@]}" \
          --txs 1 --tx-gas 100000000000 --block-gas 100000000000 --seed 1 --reader "$reader" --qd 32 $cold \
          "${run_pins[@]}"
        PRE=
      done
    done
  done
}
plan_slot_budget() {
  # One full block (one transaction of the block's gas) of each ERC20 workload at each gas
  # limit, cold, readers bal and serial, each tree on a fresh copy; the run's blocks are the
  # repetitions (each block's reader starts cold). Its total_ms against the 12-second slot.
  local tree base copy reader w gas
  for tree in mpt bintrie; do
    base=$DATA/slot-budget/base-$tree copy=$DATA/slot-budget/run-$tree
    plan slot-budget "$tree-build" build --tree "$tree" --accounts "$((sb_slots / 10))" --contracts 1 \
      --slots-per-contract "$sb_slots" --seed 1 --db "$base"
    for gas in $sb_gas; do
      for w in erc20_balanceof erc20_approve mixed_sload_sstore; do
        for reader in bal serial; do
          PRE=$(fresh_copy "$base" "$copy")
          plan slot-budget "$tree/$w/$reader/gas$gas" run --db "$copy" --workload "$w" --block-count "$sb_blocks" \
            --txs 1 --tx-gas "$gas" --block-gas "$gas" --seed 1 --reader "$reader" --qd 32 $cold "${run_pins[@]}"
          PRE=
        done
      done
    done
  done
}
plan_hash_vs_traversal() {
  # The three ERC20 workloads (one transaction per block, mpt-vs-bintrie's calls, the gas caps
  # lifted), reader bal, both trees: `run --reps` makes a fresh copy of the base per
  # repetition in its own scratch directory (the base is never written), each read cold.
  local tree base w gen
  for tree in mpt bintrie; do
    base=$DATA/hash-vs-traversal/base-$tree
    plan hash-vs-traversal "$tree-build" build --tree "$tree" --accounts "$((mb_slots / 10))" --contracts 1 \
      --slots-per-contract "$mb_slots" --seed 1 --db "$base"
    for w in erc20_balanceof erc20_approve mixed_sload_sstore; do
      mb_generator_options "$w"
      plan hash-vs-traversal "$tree/$w" run --db "$base" --workload "$w" --block-count "$hv_blocks" "${gen[@]}" \
        --txs 1 --tx-gas 100000000000 --block-gas 100000000000 --seed 1 --reader bal --qd 32 $cold \
        "${run_pins[@]}" --reps "$hv_reps" --scratch "$DATA/hash-vs-traversal/scratch-$tree-$w"
    done
  done
}
plan_inflight() {
  # mixed_sload_sstore, one transaction per block (the gas caps lifted), reader bal at QD 32
  # with the raw loop beside (the run's ceiling), --inflight 1 and 2 A B B A per tree over
  # the rounds, each run on a fresh copy; no pins (blocks in flight need both CPUs).
  local tree base copy r k order
  for tree in mpt bintrie; do
    base=$DATA/inflight/base-$tree
    plan inflight "$tree-build" build --tree "$tree" --accounts "$((if_slots / 10))" --contracts 1 \
      --slots-per-contract "$if_slots" --seed 1 --db "$base"
  done
  for ((r = 1; r <= if_rounds; r++)); do
    order="1 2"; ((r % 2)) || order="2 1"
    for tree in mpt bintrie; do
      base=$DATA/inflight/base-$tree copy=$DATA/inflight/run-$tree
      for k in $order; do
        PRE=$(fresh_copy "$base" "$copy")
        plan inflight "$tree/k$k/r$r" run --db "$copy" --workload mixed_sload_sstore --block-count "$if_blocks" \
          --loads "$mb_loads" --stores "$mb_stores" --txs 1 --tx-gas 100000000000 --block-gas 100000000000 \
          --seed 1 --reader bal --qd 32 --inflight "$k" $cold --raw-loop
        PRE=
      done
    done
  done
}
plan_crash() {
  # Per tree and store (arena, RocksDB): crash_run.py builds a small state and a block file,
  # takes apply's roots, then SIGKILLs `statetree run --inflight 2 --reader bal` (prefetch and
  # traverse on CPU 0, commit on CPU 1: the two blocks in flight really overlap) at cr_kills
  # seeded points, each on a fresh copy, and checks each (one JSON object per tree and store).
  local tree store
  for tree in mpt bintrie; do
    for store in arena rocksdb; do
      plan_exe scripts/bench/crash_run.py crash "$tree-$store" --bin "$BIN" --tree "$tree" --store "$store" \
        --data "$DATA/crash/$tree-$store" --kills "$cr_kills" --seed 1 --accounts "$cr_accounts" \
        --contracts "$cr_contracts" --slots-per-contract "$cr_spc" --blocks "$cr_blocks" --loads "$cr_loads" \
        --stores "$cr_stores" --pin prefetch=0,traverse=0,hash=1,commit=1
    done
  done
}
plan_fuzz() {
  # One scripts/fuzz.sh per target (the first builds build-fuzz/; later ones find it built).
  local src t
  for src in tests/fuzz/*_fuzz.cpp; do
    t=$(basename "$src" .cpp)
    plan_exe scripts/fuzz.sh fuzz "$t" --seconds "$fuzz_secs" "$t"
  done
}
for s in "${studies[@]}"; do "plan_${s//-/_}"; done
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
    exe=${P_EXE[j]}
    cmd="$exe ${P_ARGS[j]}--json"
    if [[ $exe == "$BIN" ]]; then shown="statetree ${P_ARGS[j]}--json"; else shown=$cmd; fi
    cmd=${cmd//"$ROOT/"/}  # paths inside the checkout relative to it (commands run from there)
    shown=${shown//"$ROOT/"/}
    if [[ -n $failed_group && ${P_GROUP[j]} == "$failed_group" ]]; then
      echo "[$i/$total] $s: skipped (an earlier command of ${P_GROUP[j]} failed): $shown" >&2
      meta skip --study "$s" --command "$cmd"
      continue
    fi
    echo "[$i/$total] $s: $shown" >&2
    if [[ -n ${P_PRE[j]} ]]; then
      pre=${P_PRE[j]//"$ROOT/"/}
      echo "$pre" >> "$RUN/commands.txt"
      if ! (cd "$ROOT" && eval "${P_PRE[j]}") 2> "$TMP_ERR"; then
        failed_any=1
        { echo "### [$i/$total] $s: $pre (failed)"; cat "$TMP_ERR"; } >> "$RUN/stderr.log"
        echo "[$i/$total] $s: FAILED: $pre" >&2
        meta failure --study "$s" --command "$pre" --exit-code 1 --stderr "$TMP_ERR"
        continue
      fi
    fi
    echo "$cmd" >> "$RUN/commands.txt"
    # In the background and waited for, so that INT / TERM reach the trap at once.
    eval "args=(${P_ARGS[j]})"
    "$exe" "${args[@]}" --json > "$TMP_OUT" 2> "$TMP_ERR" &
    child=$!
    wait "$child"
    rc=$?
    child=
    if [[ -s $TMP_ERR ]] || ((rc != 0)); then
      { echo "### [$i/$total] $s: $cmd (exit $rc)"; cat "$TMP_ERR"; } >> "$RUN/stderr.log"
    fi
    # Any JSON object the command printed is kept, a failing one's too (verify prints ok=false).
    if [[ -s $TMP_OUT && $(head -c1 "$TMP_OUT") == "{" ]]; then
      if [[ ${args[0]} == run ]]; then  # its block lines and summary as one object
        merge_run_json "${P_GROUP[j]}" "$TMP_OUT" >> "$RUN/$s.jsonl"
      else
        cat "$TMP_OUT" >> "$RUN/$s.jsonl"
      fi
    fi
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

# ---- plots and report ---------------------------------------------------------------------
# Every plot is rendered and checked (plots/plots.json); REPORT.md sets the tables beside the
# published figures, with ratios and bootstrap CIs from `statetree compare`.
plots_failed=0
if ! python3 scripts/bench/plots.py "$RUN"; then
  plots_failed=1
  echo "bench.sh: a plot holds no data (plots/plots.json says which)" >&2
fi
if ! python3 scripts/bench/report.py "$RUN" --bin "$BIN"; then
  plots_failed=1
  echo "bench.sh: REPORT.md could not be written" >&2
fi

((failed_any || plots_failed)) && status=failed
cleanup
echo "bench.sh: results in $RUN (REPORT.md, summary.txt, plots/, meta.json, commands.txt)" >&2
if ((failed_any || plots_failed)); then
  echo "bench.sh: some commands, plots or the report failed (see the tables, plots/plots.json and meta.json)" >&2
  exit 1
fi
exit 0
}
