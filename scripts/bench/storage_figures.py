#!/usr/bin/env python3
"""storage_figures.py: the figures, table, plots and report section of bench.sh's storage
studies `snapshot` (cold lookups through the tree and through the flat snapshot, both trees)
and `database` (the arena store against RocksDB, both trees: build, cold lookups, a `run`
of erc20_approve blocks, block commits), out of their STUDY.jsonl rows; used by tables.py,
plots.py and report.py.

Invariants: pure functions of the rows; a figure a row lacks is None (shown as '-'), never
a guess; the targets (<= 1.2 device reads per lookup with the snapshot, binary trie / MPT
<= 1.1x) are compared, never assumed. Python 3 standard library only.
"""
from values import get, med, median, samples  # noqa: F401  (the shared readers; also used through this module)

TREES = ("mpt", "bintrie")
TREE_LABEL = {"mpt": "MPT", "bintrie": "binary trie"}
STORES = ("arena", "rocksdb")
STORE_LABEL = {"arena": "arena", "rocksdb": "RocksDB"}
SOURCES = ("tree", "snapshot")
QDS = (1, 32)
READS_TARGET, RATIO_TARGET = 1.2, 1.1  # docs/benchmarks.md, "What it must reach"


def ratio(a, b):
    return None if a is None or not b else a / b


def scaled(summary, factor):
    """A {samples, median, ...} summary with every value times factor (us -> ms)."""
    if not isinstance(summary, dict):
        return None if med(summary) is None else summary * factor
    out = {k: summary[k] * factor for k in ("median", "min", "max") if med(summary.get(k)) is not None}
    if isinstance(summary.get("samples"), list):
        out["samples"] = [x * factor for x in summary["samples"]]
    return out


def qd_row(rb, qd):
    return next((q for q in (rb or {}).get("batched", []) if q.get("qd") == qd), None)


def lookup_figures(rb):
    """{"qd1" | "qd32" | "single": {ms (summary), reads, bytes}} of one read-bench row."""
    out = {}
    for qd in QDS:
        b = get(qd_row(rb, qd), "batched")
        if b:
            out[f"qd{qd}"] = {"ms": scaled(b.get("us_per_lookup"), 1e-3), "reads": med(b.get("page_reads_per_lookup")),
                              "bytes": med(b.get("bytes_per_lookup"))}
    s = (rb or {}).get("single")
    if s:
        out["single"] = {"ms": scaled(s.get("us_per_lookup_mean"), 1e-3), "reads": med(s.get("page_reads_per_lookup")),
                         "bytes": None}
    return out


MODES = (("qd1", "QD 1"), ("qd32", "QD 32"), ("single", "one at a time"))


# ---- snapshot -----------------------------------------------------------------------------

def snapshot(rows):
    """{(tree, "tree" | "snapshot"): lookup_figures}."""
    out = {}
    for r in rows:
        if r.get("command") == "read-bench":
            out[(r.get("tree"), r.get("read_from", "tree"))] = lookup_figures(r)
    return out


def snapshot_verdicts(sn):
    """The target checks as sentences: reads per lookup with the snapshot, BT / MPT per lookup."""
    out = []
    for tree in TREES:
        f = sn.get((tree, "snapshot"), {})
        worst = max((v["reads"] for v in f.values() if v.get("reads") is not None), default=None)
        if worst is not None:
            out.append(f"{TREE_LABEL[tree]} with the snapshot: at most {worst:.2f} device reads per lookup "
                       f"({'meets' if worst <= READS_TARGET else 'misses'} the <= {READS_TARGET} target)")
    for src in SOURCES:
        cells = []
        for mode, label in MODES:
            r = ratio(med(get(sn.get(("bintrie", src)), mode, "ms")), med(get(sn.get(("mpt", src)), mode, "ms")))
            if r is not None:
                cells.append(f"{label} {r:.2f}x")
        if cells:
            out.append(f"binary trie / MPT per lookup, {src}: {', '.join(cells)}"
                       + (f" (target <= {RATIO_TARGET}x)" if src == "snapshot" else ""))
    return out


def f(v, fmt=".2f", width=8):
    v = med(v)
    return f"{'-':>{width}}" if v is None else f"{v:{width}{fmt}}"


def table_snapshot(rows, failures):
    sn = snapshot(rows)
    print("cold lookups through the tree and through the flat snapshot (medians)")
    print(f"{'tree':12} {'from':8} {'mode':13} {'ms/lookup':>9} {'reads/lk':>8} {'B/lookup':>8}")
    for tree in TREES:
        for src in SOURCES:
            for mode, label in MODES:
                v = get(sn.get((tree, src)), mode)
                if v:
                    print(f"{TREE_LABEL[tree]:12} {src:8} {label:13} {f(v['ms'], '.4f', 9)} {f(v['reads'])} "
                          f"{f(v['bytes'], '.0f')}")
    for line in snapshot_verdicts(sn):
        print(line)
    print("one at a time: the first keys of the sample, QD 1, mean ms; B/lookup of the batches")
    for x in failures:
        print(f"FAILED: {x.get('command')} (exit {x.get('exit_code')})")


def plots_snapshot(rows, bars):
    sn = snapshot(rows)
    cats = [f"{TREE_LABEL[t]} {label}" for t in TREES for _, label in MODES]
    out = []
    for name, key, title, ylabel in (
            ("snapshot_lookups", "ms", "Cold lookups: tree walk vs flat snapshot", "ms per lookup (median)"),
            ("snapshot_reads", "reads", "Device reads per lookup: tree walk vs flat snapshot (target <= 1.2)",
             "device reads per lookup")):
        series = [(f"through the {src}", [med(get(sn.get((t, src)), mode, key)) for t in TREES for mode, _ in MODES])
                  for src in SOURCES]
        if any(v is not None for _, vals in series for v in vals):
            out.append(bars(name, "snapshot", title, ylabel, cats, series))
    return out


def report_snapshot(rows, cell, table, pub_ratio):
    """REPORT.md lines: the lookups table, BT / MPT with CIs, the targets, the published gap."""
    sn = snapshot(rows)
    if not sn:
        return ["(no results)", ""]
    t = []
    for tree in TREES:
        for src in SOURCES:
            for mode, label in MODES:
                v = get(sn.get((tree, src)), mode)
                if v:
                    t.append([TREE_LABEL[tree], src, label, fmt(med(v["ms"]), 4), fmt(v["reads"]), fmt(v["bytes"], 0)])
    out = ["`statetree build --snapshot` (arena) of the same state for both trees, then the same cold lookups "
           "(`read-bench`, same keys) through the tree and through the flat snapshot (`--snapshot`): batched at QD 1 "
           "and 32, and one key at a time (mean). Lookups only: the block pipeline's reads through the snapshot "
           "(`statetree run --snapshot`) are not part of this study (docs/benchmarks.md, \"run --snapshot\").", "",
           table(["tree", "read from", "mode", "ms / lookup", "device reads / lookup", "bytes / lookup"], t), ""]
    rt = []
    for mode, label in MODES:
        row = [label]
        for src in SOURCES:
            a, b = get(sn.get(("mpt", src)), mode, "ms"), get(sn.get(("bintrie", src)), mode, "ms")
            row.append(cell(a, b) if a is not None and b is not None else "-")
        rt.append(row)
    out += ["Binary trie / MPT per lookup (target with the snapshot: <= 1.1x; published, go-ethereum "
            f"erc20_balanceof per slot: {pub_ratio}):", "",
            table(["mode", "through the tree", "through the snapshot"], rt), ""]
    out += [f"- {line}." for line in snapshot_verdicts(sn)] + [""]
    return out


def fmt(v, digits=2):
    if v is None:
        return "-"
    return f"{v:,.{digits}f}" if isinstance(v, float) else str(v)


# ---- database -----------------------------------------------------------------------------

def store_of(r):
    return r.get("store") or get(r, "regime", "store") or \
        (r.get("bench_group") or "").rpartition("-")[2] or None


def database(rows):
    """{(tree, store): {"build", "lookups" (lookup_figures), "run": {total_ms, state_read_ms, commit
    ..., samples}, "commit"}}; the run's figures are per block (samples over its blocks)."""
    out = {}
    for r in rows:
        tree, store, cmd = r.get("tree"), store_of(r), r.get("command")
        if cmd == "run":
            tree = (r.get("bench_group") or "").partition("-")[0]
        d = out.setdefault((tree, store), {})
        if cmd == "build":
            d["build"] = r
        elif cmd == "read-bench":
            d["lookups"] = lookup_figures(r)
        elif cmd == "commit":
            d["commit"] = r
        elif cmd == "run":
            bl = r.get("blocks_detail", [])
            d["run"] = {m: samples([b.get(m) for b in bl]) for m in
                        ("total_ms", "state_read_ms", "state_hash_ms", "commit_ms", "ms_per_slot_read", "device_reads_per_slot")}
    return out


def table_database(rows, failures):
    db = database(rows)
    print("arena store vs RocksDB (medians): cold lookups (ms), erc20_approve run and")
    print("synthetic commits (ms per block)")
    print(f"{'tree':8} {'store':7} {'build s':>7} {'B/slot':>6} {'lk q1':>6} {'lk q32':>6} {'rd/lk':>5} "
          f"{'run tot':>7} {'run rd':>7} {'commit':>7}")
    for tree in TREES:
        for store in STORES:
            d = db.get((tree, store))
            if not d:
                continue
            lk = d.get("lookups", {})
            print(f"{tree:8} {store:7} {f(get(d.get('build'), 'wall_seconds'), '.2f', 7)} "
                  f"{f(get(d.get('build'), 'disk_bytes_per_slot'), '.0f', 6)} "
                  f"{f(get(lk, 'qd1', 'ms'), '.3f', 6)} {f(get(lk, 'qd32', 'ms'), '.3f', 6)} "
                  f"{f(get(lk, 'qd32', 'reads'), '.2f', 5)} {f(get(d, 'run', 'total_ms'), '.2f', 7)} "
                  f"{f(get(d, 'run', 'state_read_ms'), '.2f', 7)} {f(get(d.get('commit'), 'commit_ms'), '.2f', 7)}")
    for line in database_ratios(db):
        print(line)
    print("rd/lk: arena page reads, RocksDB keys fetched by MultiGet per lookup")
    for x in failures:
        print(f"FAILED: {x.get('command')} (exit {x.get('exit_code')})")


def database_ratios(db):
    out = []
    for tree in TREES:
        a, r = db.get((tree, "arena"), {}), db.get((tree, "rocksdb"), {})
        cells = [f"lookup {label} {x:.2f}x" for mode, label in MODES if mode != "single"
                 for x in [ratio(med(get(a, "lookups", mode, "ms")), med(get(r, "lookups", mode, "ms")))] if x is not None]
        c = ratio(med(get(r.get("commit"), "commit_ms")), med(get(a.get("commit"), "commit_ms")))
        run = ratio(med(get(r, "run", "total_ms")), med(get(a, "run", "total_ms")))
        if cells:
            out.append(f"{TREE_LABEL[tree]}: arena / RocksDB {', '.join(cells)}")
        if c is not None or run is not None:
            out.append(f"{TREE_LABEL[tree]}: RocksDB / arena per block: commit "
                       f"{'-' if c is None else f'{c:.2f}x'} (target <= 3x), run "
                       f"{'-' if run is None else f'{run:.2f}x'}")
    return out


def plots_database(rows, bars):
    db = database(rows)
    out = []
    cats = [f"{TREE_LABEL[t]} QD {q}" for t in TREES for q in QDS]
    series = [(STORE_LABEL[s], [med(get(db.get((t, s)), "lookups", f"qd{q}", "ms")) for t in TREES for q in QDS])
              for s in STORES]
    if any(v is not None for _, vals in series for v in vals):
        out.append(bars("database_lookups", "database", "Cold lookups: arena store vs RocksDB", "ms per lookup (median)",
                        cats, series))
    cats = [f"{TREE_LABEL[t]} {what}" for t in TREES for what in ("run", "commit")]
    series = [(STORE_LABEL[s], [med(get(db.get((t, s)), "run", "total_ms")) if what == "run" else
                                med(get(db.get((t, s), {}).get("commit"), "commit_ms"))
                                for t in TREES for what in ("run", "commit")]) for s in STORES]
    if any(v is not None for _, vals in series for v in vals):
        out.append(bars("database_blocks", "database",
                        "Per block: erc20_approve run (total) and synthetic commits, arena vs RocksDB",
                        "ms per block (median)", cats, series))
    return out


def report_database(rows, cell, table):
    db = database(rows)
    if not db:
        return ["(no results)", ""]
    t = []
    for tree in TREES:
        for store in STORES:
            d = db.get((tree, store))
            if d:
                lk = d.get("lookups", {})
                t.append([TREE_LABEL[tree], STORE_LABEL[store], fmt(med(get(d.get("build"), "wall_seconds"))),
                          fmt(med(get(d.get("build"), "disk_bytes_per_slot")), 1),
                          fmt(med(get(lk, "qd1", "ms")), 4), fmt(med(get(lk, "qd32", "ms")), 4),
                          fmt(get(lk, "qd32", "reads")), fmt(get(lk, "qd32", "bytes"), 0),
                          fmt(med(get(d, "run", "total_ms"))), fmt(med(get(d, "run", "state_read_ms"))),
                          fmt(med(get(d.get("commit"), "commit_ms")))])
    out = ["The same state built into the arena store and into RocksDB (`build --store`), cold lookups "
           "(`read-bench`), one cold `statetree run` of erc20_approve blocks (reader bal, a fresh copy; RocksDB: one "
           "synced WriteBatch per block, a fresh read-only instance per block) and `commit` of synthetic blocks on "
           "the base. RocksDB's reads per lookup count the keys its MultiGet fetched, its bytes the values returned: "
           "not device pages.", "",
           table(["tree", "store", "build s", "bytes/slot", "lookup ms QD 1", "lookup ms QD 32", "reads/lookup QD 32",
                  "bytes/lookup QD 32", "run ms/block", "run read ms/block", "commit ms/block"], t), ""]
    rt = []
    for tree in TREES:
        a, r = db.get((tree, "arena"), {}), db.get((tree, "rocksdb"), {})
        def c(x, y):
            return cell(x, y) if x is not None and y is not None else "-"
        rt.append([TREE_LABEL[tree], c(get(r, "lookups", "qd1", "ms"), get(a, "lookups", "qd1", "ms")),
                   c(get(r, "lookups", "qd32", "ms"), get(a, "lookups", "qd32", "ms")),
                   c(get(a, "run", "total_ms"), get(r, "run", "total_ms")),
                   c(get(a.get("commit"), "commit_ms"), get(r.get("commit"), "commit_ms"))])
    out += ["Ratios with the bootstrap 95 % CI (the issue's target for commits: RocksDB within 3x of the arena):", "",
            table(["tree", "arena / RocksDB lookup QD 1", "arena / RocksDB lookup QD 32", "RocksDB / arena run",
                   "RocksDB / arena commit"], rt), ""]
    return out
