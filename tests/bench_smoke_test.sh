#!/usr/bin/env bash
# bench_smoke_test.sh SOURCE_DIR STATETREE: bench.sh runs every study but fuzz at the tiny
# scale with the given binary into a temporary directory (seconds; host-warm, no timing is
# asserted) and must: exit 0; record every study in meta.json with its commands and no
# failure; write every study's JSON lines, each a valid JSON object; render every plot with
# its data drawn (checked again here on the SVG, by the checker that an empty plot fails);
# write REPORT.md linking each plot, with the sections of the studies that compare (snapshot on
# / off, arena / RocksDB, the slot budget, hash vs traversal, blocks in flight beside their
# ceiling, crash safety, mpt-vs-bintrie's device floor from the raw loop); leave the checkout's
# results/ untouched. The crash study's checker must have caught every database of its
# self-check (built to be wrong), so that its zero counts can be results.
set -u
src=${1:?usage: bench_smoke_test.sh SOURCE_DIR STATETREE}
bin=${2:?usage: bench_smoke_test.sh SOURCE_DIR STATETREE}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=1; }
export PYTHONDONTWRITEBYTECODE=1
studies=(merkle kernels mpt bintrie io persist queue-depth group-depth page-size snapshot database cold-tail
         mpt-vs-bintrie slot-budget hash-vs-traversal inflight crash)
plots=(merkle_kernels merkle_sizes kernels hash_vs_traversal bintrie_gd_blobs io_qd persist_lookups
       persist_commit_stages qd_curve qd_lookups gd_curve gd_commit_stages page_size page_size_qd snapshot_lookups
       snapshot_reads database_lookups database_blocks cold_tail_serial cold_tail_geth cold_tail_bal
       mpt_vs_bintrie_slot mpt_vs_bintrie_ratio slot_budget hash_traversal_blocks inflight crash_points)

latest_before=$(readlink "$src/results/latest" 2>/dev/null || echo none)
bash "$src/bench.sh" all --scale tiny --bin "$bin" --out "$dir/run" > "$dir/stdout" 2> "$dir/stderr"
rc=$?
((rc == 0)) || { fail "bench.sh exit $rc"; tail -n 20 "$dir/stderr"; }
[[ $(readlink "$src/results/latest" 2>/dev/null || echo none) == "$latest_before" ]] ||
  fail "bench.sh --out moved the checkout's results/latest"
[[ ! -e $dir/run/data ]] || fail "the run's data directory was not removed"

python3 - "$dir/run" "${studies[*]}" "${plots[*]}" <<'PY' || fails=1
import json, os, sys
run, studies, plots = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
bad = []
meta = json.load(open(os.path.join(run, "meta.json")))
if meta.get("status") != "ok":
    bad.append(f"meta.json status {meta.get('status')}")
if meta.get("failures"):
    bad.append(f"failures: {meta['failures']}")
recorded = {s["name"]: s for s in meta.get("studies", [])}
for s in studies:
    st = recorded.get(s)
    if not st or not st.get("commands") or st.get("failed") or st.get("skipped"):
        bad.append(f"study {s} not run in full: {st}")
    path = os.path.join(run, s + ".jsonl")
    lines = open(path).read().splitlines() if os.path.exists(path) else []
    if len(lines) != (st or {}).get("commands"):
        bad.append(f"{s}.jsonl holds {len(lines)} lines for {(st or {}).get('commands')} commands")
    for i, line in enumerate(lines):
        try:
            if not isinstance(json.loads(line), dict):
                bad.append(f"{s}.jsonl line {i + 1} is not an object")
        except ValueError as e:
            bad.append(f"{s}.jsonl line {i + 1}: {e}")
entries = {p["name"]: p for p in json.load(open(os.path.join(run, "plots", "plots.json")))["plots"]}
report = open(os.path.join(run, "REPORT.md")).read()
for p in plots:
    e = entries.get(p)
    if not e or not e.get("ok") or not all(s["points"] > 0 for s in e["series"]):
        bad.append(f"plot {p}: {e}")
        continue
    if f"]({e['file']})" not in report:
        bad.append(f"REPORT.md does not link {e['file']}")
    print(f"{p} {len(e['series'])}")
if "not built yet" in report:
    bad.append("REPORT.md still names a study as not built yet")
# The block-pipeline studies: every configuration ran (one object per run, its blocks and
# its cold-tail row), and the report reads the cold tail's mechanism off the figures.
for s, want in (("cold-tail", 2 * 3 * 2 * 2), ("mpt-vs-bintrie", 2 * 3 * 2), ("slot-budget", 2 * 3 * 2),
                ("database", 2 * 2), ("hash-vs-traversal", 2 * 3), ("inflight", 2 * 2)):
    rows = [json.loads(l) for l in open(os.path.join(run, s + ".jsonl")) if l.strip()]
    runs = [r for r in rows if r.get("command") == "run"]
    if len(runs) != want:
        bad.append(f"{s}: {len(runs)} runs, {want} expected")
    for r in runs:
        if not r.get("bench_group") or not r.get("blocks_detail"):
            bad.append(f"{s}: a run without its group or blocks: {r.get('bench_group')}")
        if s == "cold-tail" and not (r.get("cold_tail") or {}).get("by_tx_count"):
            bad.append(f"cold-tail: {r.get('bench_group')} has no cold-tail row")
# mpt-vs-bintrie: per tree the raw loop at QD 32 on its base, and the report's device floor.
mb = [json.loads(l) for l in open(os.path.join(run, "mpt-vs-bintrie.jsonl")) if l.strip()]
got = sorted((r.get("tree"), [b.get("qd") for b in r.get("batched", [])][0]) for r in mb
             if r.get("command") == "read-bench" and isinstance(
                 ((r.get("batched") or [{}])[0].get("raw") or {}).get("us_per_read"), (dict, float)))
if got != [("bintrie", 32), ("mpt", 32)]:
    bad.append(f"mpt-vs-bintrie: read-bench rows with the raw loop {got}")
if "ms per slot read / device floor" not in report:
    bad.append("REPORT.md: mpt-vs-bintrie has no device floor")
# hash-vs-traversal: each run's repetitions (a fresh copy each) and, where the block writes,
# the pure hash beside the hash stage.
for r in [json.loads(l) for l in open(os.path.join(run, "hash-vs-traversal.jsonl")) if l.strip()]:
    if r.get("command") != "run":
        continue
    bl = r.get("blocks_detail") or []
    if (r.get("reps") or {}).get("count") != 2 or sorted({b.get("rep") for b in bl}) != [0, 1]:
        bad.append(f"hash-vs-traversal: {r.get('bench_group')}: not 2 repetitions")
    if not r["bench_group"].endswith("balanceof") and not all(
            isinstance(b.get("pure_hash_ms"), (int, float)) and b.get("pure_hash_ms") > 0 and
            isinstance((b.get("commit") or {}).get("hash_ms"), (int, float)) for b in bl):
        bad.append(f"hash-vs-traversal: {r.get('bench_group')}: a writing block without its pure hash")
# inflight: per tree K = 1 and 2, each with the raw loop and the ceiling it gives; one root per tree.
inf = [json.loads(l) for l in open(os.path.join(run, "inflight.jsonl")) if l.strip()]
inf = [r for r in inf if r.get("command") == "run"]
got = sorted(r.get("bench_group") for r in inf)
if got != ["bintrie/k1/r1", "bintrie/k2/r1", "mpt/k1/r1", "mpt/k2/r1"]:
    bad.append(f"inflight: runs {got}")
for r in inf:
    c = r.get("ceiling") or {}
    if not r.get("raw_loop") or not (c.get("blocks_per_sec") or 0) > 0 or c.get("device_ms_per_block") is None:
        bad.append(f"inflight: {r.get('bench_group')} without the raw loop or its ceiling: {c}")
for tree in ("mpt", "bintrie"):
    if len({r.get("root") for r in inf if r.get("bench_group", "").startswith(tree + "/")}) != 1:
        bad.append(f"inflight: {tree}'s runs at K = 1 and 2 differ in their roots")
# The storage studies: each tree's lookups through the tree and through the snapshot; each
# tree x store's build, lookups, run and commits.
snap = [json.loads(l) for l in open(os.path.join(run, "snapshot.jsonl")) if l.strip()]
got = sorted((r.get("tree"), r.get("read_from")) for r in snap if r.get("command") == "read-bench")
if got != [("bintrie", "snapshot"), ("bintrie", "tree"), ("mpt", "snapshot"), ("mpt", "tree")]:
    bad.append(f"snapshot: read-bench rows {got}")
dbrows = [json.loads(l) for l in open(os.path.join(run, "database.jsonl")) if l.strip()]
for cmd in ("build", "read-bench", "commit"):
    got = sorted((r.get("tree"), r.get("store")) for r in dbrows if r.get("command") == cmd)
    if got != [("bintrie", "arena"), ("bintrie", "rocksdb"), ("mpt", "arena"), ("mpt", "rocksdb")]:
        bad.append(f"database: {cmd} rows {got}")
# crash: one object per tree and store, every kill point checked with nothing failed, and the
# checker's self-check caught each database built to be wrong (RocksDB's own cases besides).
crash = {(r.get("tree"), r.get("store")): r
         for r in (json.loads(l) for l in open(os.path.join(run, "crash.jsonl")) if l.strip())}
cases = {"off_reference", "resume_off", "behind_reported", "bad_report", "ahead_of_stdout", "resume_skipping",
         "lock_held", "reopen_failure"}
rocksdb_cases = {"manifest_ahead", "rocks_lock_held", "manifest_behind"}
for tree in ("mpt", "bintrie"):
    for store in ("arena", "rocksdb"):
        r = crash.get((tree, store)) or {}
        pts = r.get("points") or []
        if not r.get("ok") or len(pts) != r.get("kill_points") or \
                r.get("kills", 0) + r.get("finished_first", 0) != len(pts):
            bad.append(f"crash {tree} {store}: {r.get('ok')}, {len(pts)} points, errors {r.get('errors')}")
        sc = r.get("self_check") or {}
        got = {c["name"] for c in sc.get("cases", []) if c.get("caught")}
        if not sc.get("ok") or got != (cases | rocksdb_cases if store == "rocksdb" else cases):
            bad.append(f"crash {tree} {store}: the checker's self-check caught {sorted(got)}: {sc}")
# page-size: each tree at both page sizes at every QD of the tiny run, the raw loop at both
# page sizes, and the one table (REPORT.md, page-size-qd.json / .csv) with every cell filled.
ps = [json.loads(l) for l in open(os.path.join(run, "page-size.jsonl")) if l.strip()]
got = sorted((r.get("tree"), r.get("page_size"), tuple(q.get("qd") for q in r.get("batched", [])))
             for r in ps if r.get("command") == "read-bench")
if got != [(t, p, (1, 8, 32)) for t in ("bintrie", "mpt") for p in (4096, 16384)]:
    bad.append(f"page-size: read-bench rows {got}")
got = sorted((r.get("page_size"), tuple(q.get("qd") for q in r.get("results", []))) for r in ps
             if r.get("command") == "io-bench")
if got != [(4096, (1, 8, 32)), (16384, (1, 8, 32))]:
    bad.append(f"page-size: io-bench rows {got}")
try:
    recs = json.load(open(os.path.join(run, "page-size-qd.json")))["rows"]
    csv_lines = open(os.path.join(run, "page-size-qd.csv")).read().splitlines()
except (OSError, ValueError, KeyError) as e:
    recs, csv_lines = [], []
    bad.append(f"page-size: no page-size-qd.json / .csv ({e})")
if [r.get("qd") for r in recs] != [1, 8, 32] or len(csv_lines) != 4:
    bad.append(f"page-size: table rows {[r.get('qd') for r in recs]}, CSV lines {len(csv_lines)}")
for r in recs:
    empty = [k for k, v in r.items() if v is None and not k.startswith(("mpt_16k_over_4k_", "bintrie_16k_over_4k_"))]
    if empty:
        bad.append(f"page-size: QD {r.get('qd')} lacks {empty}")
for needle in ("What rises from", "Published (go-ethereum, binary trie GD 5 vs MPT", "through the snapshot",
               "arena / RocksDB lookup QD 32", "MPT of slot", "published state hash / pure",
               "Hash versus traversal per block", "Blocks in flight", "ceiling / K = 1", "Crash safety", "checker self-check", "BT 16K / 4K"):
    if needle not in report:
        bad.append(f"REPORT.md lacks '{needle}'")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
# Each SVG again through the checker, then the checker on a plot gnuplot drew without data.
python3 - "$dir/run" "${plots[*]}" > "$dir/series" <<'PY'
import json, os, sys
entries = {p["name"]: p for p in json.load(open(os.path.join(sys.argv[1], "plots", "plots.json")))["plots"]}
for p in sys.argv[2].split():
    if p in entries:
        print(p, len(entries[p]["series"]))
PY
while read -r name n; do
  out=$(python3 "$src/scripts/bench/plots.py" --check "$dir/run/plots/$name.svg" "$n") || fail "$name.svg: $out"
done < "$dir/series"
(cd "$dir" && printf '1 2\n2 3\n\n\n' > e.dat &&
  gnuplot -e "set terminal svg; set output 'e.svg'; plot 'e.dat' index 0 with linespoints title 'a', '' index 1 with linespoints title 'b'" 2>/dev/null)
python3 "$src/scripts/bench/plots.py" --check "$dir/e.svg" 2 > /dev/null &&
  fail "the SVG check passed a plot whose second series has no data"
(cd "$dir" && gnuplot -e "set terminal svg; set output 'f.svg'; plot 'e.dat' index 0 with linespoints title 'a'")
python3 "$src/scripts/bench/plots.py" --check "$dir/f.svg" 1 > /dev/null ||
  fail "the SVG check failed a plot with one drawn series"
((fails == 0)) && echo "bench.sh tiny run: ok (${#studies[@]} studies, ${#plots[@]} plots)"
exit $fails
