#!/usr/bin/env python3
"""plots.py: gnuplot SVG plots of a bench.sh run, each checked after rendering.

    plots.py RUN_DIR                 every plot the run's studies allow -> RUN_DIR/plots/
    plots.py --check SVG N           exit 0 if SVG holds N series, each with drawn data

For each plot: NAME.dat (one block per series, or one column per series for bars), NAME.gp
(the gnuplot script) and NAME.svg, and an entry in plots/plots.json: study, title, file,
series (label, points), ok, and why not. A plot is ok only if every series has at least one
point in the data file, gnuplot exits 0, and the SVG holds a plot group per series with
drawn marks besides its key sample (a path segment, a bar polygon or a point): an SVG that
gnuplot wrote with no data is a failure. Exit status: 0 if every plot is ok (or the run
has nothing to plot), 1 if one is not, 2 on bad usage. Python 3 standard library and the
gnuplot binary only.
"""
import csv
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PUBLISHED = os.path.join(HERE, "published")
sys.path.insert(0, HERE)
import pipeline_figures as pf  # noqa: E402
from values import get, med  # noqa: E402  (report.py reads them through this module)
import crash_figures  # noqa: E402
import hash_traversal  # noqa: E402
import page_size_qd  # noqa: E402
import slot_budget  # noqa: E402
import inflight  # noqa: E402
import storage_figures  # noqa: E402


# ---- reading a run -----------------------------------------------------------------------

def load_rows(run_dir, study):
    rows = []
    try:
        with open(os.path.join(run_dir, study + ".jsonl")) as f:
            for line in f:
                try:
                    rows.append(json.loads(line))
                except ValueError:
                    pass
    except OSError:
        pass
    return rows


def rb_at(rb, qd):
    return next((q for q in (rb or {}).get("batched", []) if q.get("qd") == qd), None)


# ---- plot specifications -----------------------------------------------------------------
# A plot: dict(name, study, title, xlabel, ylabel, kind "lines" | "bars", logx, series)
#   lines: series = [(label, [(x, y), ...])]
#   bars:  categories = [label, ...], series = [(label, [value or None per category])]

def lines(name, study, title, xlabel, ylabel, series, logx=False, logy=False):
    series = [(label, [(x, y) for x, y in pts if x is not None and y is not None]) for label, pts in series]
    return {"name": name, "study": study, "title": title, "xlabel": xlabel, "ylabel": ylabel,
            "kind": "lines", "logx": logx, "logy": logy, "series": [s for s in series if s[1]]}


def bars(name, study, title, ylabel, categories, series):
    series = [(label, vals) for label, vals in series if any(v is not None for v in vals)]
    return {"name": name, "study": study, "title": title, "xlabel": "", "ylabel": ylabel, "kind": "bars",
            "categories": categories, "series": series}


BASELINE_LABELS = {"openssl_sha256_init_update_final": "OpenSSL I/U/F",
                   "openssl_sha256_oneshot": "OpenSSL one-shot"}


def plots_merkle(rows):
    if not rows:
        return []
    n = rows[0].get("leaves")
    main = [r for r in rows if r.get("leaves") == n]
    sweep = [r for r in rows if r.get("leaves") != n]
    cats, vals = [], []
    for r in main:
        cats.append(f"{r.get('kernel', '?')} {r.get('threads', '?')}t")
        vals.append(med(r.get("total_ns_per_leaf")))
        for name, b in (r.get("baselines") or {}).items():
            cats.append(BASELINE_LABELS.get(name, name))
            vals.append(med(b.get("total_ns_per_leaf")))
    lim = []  # the kernel limit belongs to the engine's rows only, not to the baselines
    for r in main:
        lim.append(med(r.get("limit_ns_per_leaf")))
        lim += [None] * len(r.get("baselines") or {})
    out = [bars("merkle_kernels", "merkle", f"SHA-256 Merkle root of {n} leaves: kernels, threads, OpenSSL",
                "ns per leaf (median)", cats, [("measured", vals), ("kernel limit on this core", lim)])]
    one = [r for r in main if r.get("baselines")]  # the 1-thread auto-kernel run at the main size
    pts = sorted((r.get("leaves"), med(r.get("total_ns_per_leaf"))) for r in sweep + one[:1])
    lim_pts = sorted((r.get("leaves"), med(r.get("limit_ns_per_leaf"))) for r in sweep + one[:1])
    if len(pts) > 1:
        out.append(lines("merkle_sizes", "merkle", "Merkle root per size, one pinned thread", "leaves",
                         "ns per leaf (median)", [("measured", pts), ("kernel limit", lim_pts)], logx=True))
    return out


def plots_kernels(rows):
    out = []
    for r in rows[:1]:
        res = r.get("results", [])
        kernels, entries = [], []
        for x in res:
            if x.get("kernel") not in kernels:
                kernels.append(x.get("kernel"))
            e = x.get("entry", "-")
            if " " not in e and len(e) <= 16 and e not in entries:
                entries.append(e)
        series = []
        for k in kernels:
            vals = []
            for e in entries:
                x = next((x for x in res if x.get("kernel") == k and x.get("entry") == e), None)
                vals.append(med(get(x, "ns_per_compression")))
            series.append((k, vals))
        out.append(bars("kernels", "kernels", "SHA-256 kernel tiers per entry point", "ns per compression (median)",
                        entries, series))
    return out


def plots_hash_vs_bare(mpt_rows, bt_rows):
    """In-memory engine time against the bare hashing of the same nodes, both trees."""
    cats = ["MPT from scratch", "MPT block", "binary trie from scratch", "binary trie block"]
    eng, bare = [None] * 4, [None] * 4
    def over(a, b):  # the ratio of the medians, as REPORT.md's table gives it
        a, b = med(a), med(b)
        return None if a is None or not b else a / b
    for r in mpt_rows[:1]:
        s, inc = r.get("from_scratch", {}), r.get("incremental", {})
        eng[0], bare[0] = over(s.get("build_1t_ms"), s.get("bare_keccak_ms")), 1.0
        eng[1], bare[1] = over(inc.get("block_ms"), inc.get("bare_keccak_ms")), 1.0
    for r in bt_rows[:1]:
        s, up = r.get("from_scratch", {}), r.get("incremental_update", {})
        eng[2], bare[2] = over(s.get("root_1t_ms"), s.get("bare_hash_ms")), 1.0
        eng[3], bare[3] = over(up.get("ms"), up.get("bare_hash_ms")), 1.0
    if all(v is None for v in eng):
        return []
    bare = [1.0 if e is not None else None for e in eng]
    return [bars("hash_vs_traversal", "mpt" if mpt_rows else "bintrie",
                 "Engine time over the bare hashing of the same nodes (in memory; medians)", "time / bare hashing",
                 cats, [("engine", eng), ("bare hashing", bare)])]


def plots_bintrie(rows):
    out = []
    for r in rows[:1]:
        blobs = r.get("blobs", [])
        if blobs:
            out.append(lines("bintrie_gd_blobs", "bintrie", f"Group blobs per group depth, {r.get('keys')} keys",
                             "group depth", "bytes",
                             [("mean group blob (B)", [(b.get("gd"), med(b.get("group_blob_bytes_mean"))) for b in blobs]),
                              ("all group blobs / 1000 (kB)",
                               [(b.get("gd"), (b.get("group_bytes") or 0) / 1000 or None) for b in blobs])]))
    return out


def plots_io(rows):
    out = []
    for r in rows[:1]:
        res = r.get("results", [])
        out.append(lines("io_qd", "io", f"Random 4 KiB page reads, {r.get('size_mib')} MiB file", "queue depth",
                         "us per read, amortized (median)",
                         [("arena store", [(q.get("qd"), med(q.get("us_per_read_amortized"))) for q in res]),
                          ("raw io_uring loop", [(q.get("qd"), med(get(q, "raw", "us_per_read_amortized"))) for q in res]),
                          ("RocksDB MultiGet", [(q.get("qd"), med(get(q, "rocksdb", "us_per_read_amortized"))) for q in res])],
                         logx=True, logy=True))
    return out


def db_label(r):
    """mpt-arena, bintrie-gd5 ...: the database's directory name without db-."""
    return os.path.basename(r.get("db") or "?").removeprefix("db-")


STAGES = ["read_ms", "resolve_ms", "apply_ms", "write_ms", "publish_ms"]


def commit_stage_bars(name, study, title, commits):
    if not commits:
        return []
    cats = [db_label(c) for c in commits]
    series = [(st.removesuffix("_ms"), [med(c.get(st)) for c in commits]) for st in STAGES]
    p = bars(name, study, title, "ms per block (median)", cats, series)
    p["stacked"] = True
    return [p]


def plots_persist(rows):
    out = []
    rbs = [r for r in rows if r.get("command") == "read-bench"]
    if rbs:
        series = []
        for r in rbs:
            series.append((db_label(r), [(q.get("qd"), med(get(q, "batched", "us_per_lookup"))) for q in r.get("batched", [])]))
        raw = rbs[0]
        series.append(("raw page read", [(q.get("qd"), med(get(q, "raw", "us_per_read"))) for q in raw.get("batched", [])]))
        out.append(lines("persist_lookups", "persist", "Cold lookups per tree and store", "queue depth",
                         "us per lookup (median)", series, logx=True, logy=True))
    out += commit_stage_bars("persist_commit_stages", "persist", "Block commit stages (arena, copy-on-write)",
                             [r for r in rows if r.get("command") == "commit"])
    return out


def plots_queue_depth(rows):
    rb = {r.get("tree"): r for r in rows if r.get("command") == "read-bench"}
    io = next((r for r in rows if r.get("command") == "io-bench"), None)
    series = []
    for tree, label in [("mpt", "MPT lookups"), ("bintrie", "binary trie lookups")]:
        if tree in rb:
            series.append((f"{label}, per page read",
                           [(q.get("qd"), med(get(q, "batched", "us_per_page_read"))) for q in rb[tree].get("batched", [])]))
    for tree in ("mpt", "bintrie"):
        if tree in rb:
            series.append(("read-bench raw reads", [(q.get("qd"), med(get(q, "raw", "us_per_read")))
                                                     for q in rb[tree].get("batched", [])]))
            break
    if io:
        res = io.get("results", [])
        series.append(("io-bench raw device loop", [(q.get("qd"), med(get(q, "raw", "us_per_read_amortized"))) for q in res]))
        series.append(("io-bench arena store", [(q.get("qd"), med(q.get("us_per_read_amortized"))) for q in res]))
    out = []
    if series:
        out.append(lines("qd_curve", "queue-depth", "Cost per page read against queue depth, beside the raw device",
                         "queue depth", "us per page read (median)", series, logx=True, logy=True))
    lk = [(label, [(q.get("qd"), med(get(q, "batched", "us_per_lookup"))) for q in rb[t].get("batched", [])])
          for t, label in [("mpt", "MPT"), ("bintrie", "binary trie")] if t in rb]
    if lk:
        out.append(lines("qd_lookups", "queue-depth", "Cold batched lookups against queue depth", "queue depth",
                         "us per lookup (median)", lk, logx=True, logy=True))
    return out


def published_gd():
    """{benchmark: {gd: row}} of the published group-depth medians."""
    out = {}
    try:
        with open(os.path.join(PUBLISHED, "summary_group_depth_medians.csv")) as f:
            for r in csv.DictReader(f):
                out.setdefault(r["benchmark"], {})[int(r["group_depth"])] = r
    except OSError:
        pass
    return out


def gd_figures(rows):
    """{gd: {bytes_per_slot, lookup_us_qd1, lookup_us_qd32, commit_ms}} of a group-depth run."""
    by_db = {}
    for r in rows:
        by_db.setdefault(r.get("db"), {})[r.get("command")] = r
    out = {}
    for db, d in by_db.items():
        gd = get(d.get("build"), "group_depth") or get(d.get("read-bench"), "group_depth")
        if not gd:
            continue
        out[gd] = {"bytes_per_slot": med(get(d.get("build"), "disk_bytes_per_slot")),
                   "lookup_us_qd1": med(get(rb_at(d.get("read-bench"), 1), "batched", "us_per_lookup")),
                   "lookup_us_qd32": med(get(rb_at(d.get("read-bench"), 32), "batched", "us_per_lookup")),
                   "commit_ms": med(get(d.get("commit"), "commit_ms"))}
    return out


def relative_to(points, ref_x):
    ref = dict(points).get(ref_x)
    if not ref:
        return []
    return [(x, y / ref) for x, y in points if y is not None]


def plots_group_depth(rows):
    figs = gd_figures(rows)
    if not figs:
        return []
    gds = sorted(figs)
    ours = [(label, relative_to([(g, figs[g][key]) for g in gds], 5)) for label, key in
            [("ours: cold lookup, QD 32", "lookup_us_qd32"), ("ours: cold lookup, QD 1", "lookup_us_qd1"),
             ("ours: block commit", "commit_ms"), ("ours: bytes on disk per slot", "bytes_per_slot")]]
    pub = published_gd()
    theirs = []
    for bench, col, label in [("erc20_balanceof", "state_read_ms", "published: balanceOf state read"),
                              ("erc20_approve", "total_ms", "published: approve total")]:
        rows_b = pub.get(bench, {})
        theirs.append((label, relative_to([(g, float(rows_b[g][col])) for g in sorted(rows_b)], 5)))
    return [lines("gd_curve", "group-depth", "Binary trie per group depth, relative to GD 5 (ours beside the published study)",
                  "group depth", "relative to group depth 5", ours + theirs)]


def plots_page_size(rows):
    by_db = {}
    for r in rows:
        if r.get("command") not in ("build", "read-bench", "commit"):
            continue  # io-bench: the raw loops of page_size_qd's plot
        by_db.setdefault(r.get("db"), {})[r.get("command")] = r
    cats, q1, q32, commit = [], [], [], []
    for db, d in by_db.items():
        any_row = d.get("build") or d.get("read-bench") or d.get("commit")
        cats.append(f"{any_row.get('tree')} {int(any_row.get('page_size', 0)) // 1024} KiB")
        q1.append(med(get(rb_at(d.get("read-bench"), 1), "batched", "us_per_lookup")))
        q32.append(med(get(rb_at(d.get("read-bench"), 32), "batched", "us_per_lookup")))
        commit.append(med(get(d.get("commit"), "commit_ms")))
    if not cats:
        return []
    return [bars("page_size", "page-size", "Arena page size: cold lookups and block commits", "us per lookup / ms per block",
                 cats, [("lookup QD 1 (us)", q1), ("lookup QD 32 (us)", q32), ("commit (ms per block)", commit)])]


def published_figures():
    try:
        with open(os.path.join(PUBLISHED, "figures.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def published_mpt_vs_bt():
    """{(workload, "mpt" | "bintrie"): published CSV row}."""
    try:
        with open(os.path.join(PUBLISHED, "summary_mpt_vs_bt_medians.csv")) as f:
            return {(r["benchmark"], "mpt" if r["config"] == "mpt" else "bintrie"): r for r in csv.DictReader(f)}
    except (OSError, KeyError):
        return {}


def plots_cold_tail(rows):
    """Per reader: ms per miss vs transactions per block, both trees, with and without the
    other work, the published binary-trie curve (0.40 -> 2.99 ms) beside."""
    ct = pf.cold_tail(rows)
    pub = published_figures().get("cold_tail", {})
    pub_pts = [(1, pub.get("tx1_ms")), (9, pub.get("tx9_ms"))]
    out = []
    for reader in pf.READERS:
        series = []
        for other in (True, False):
            for tree in pf.TREES:
                d = next((v for k, v in ct.items() if k[0] == tree and k[1] == reader and (k[2] > 0) == other), None)
                if d is None:
                    continue
                label = f"{pf.TREE_LABEL[tree]}, {'with' if other else 'without'} the other work"
                series.append((label, [(t, v.get("ms_per_miss")) for t, v in d.items()]))
                if reader == "geth" and other:  # go-ethereum's counting: less the workers' warm hits
                    series.append((f"{pf.TREE_LABEL[tree]}, with the other work, misses as go-ethereum counts them",
                                   [(t, v.get("ms_per_main_miss")) for t, v in d.items()]))
        if not series:
            continue
        series.append(("published (go-ethereum, binary trie; 1 and 9 only)", pub_pts))
        out.append(lines(f"cold_tail_{reader}", "cold-tail",
                         f"Cold tail, reader {reader}: state read per miss vs transactions per block",
                         "transactions per block", "ms per miss (log)", series, logy=True))
    return out


def plots_mpt_vs_bintrie(rows):
    mb = pf.mpt_vs_bintrie(rows)
    pub = published_mpt_vs_bt()
    short = {"erc20_balanceof": "balanceOf", "erc20_approve": "approve", "mixed_sload_sstore": "mixed"}
    cats, vals = [], {t: [] for t in pf.TREES}
    for w in pf.WORKLOADS:
        for reader in ("bal", "serial"):
            if not any((t, w, reader) in mb for t in pf.TREES):
                continue
            cats.append(f"{short[w]} {reader}")
            for t in pf.TREES:
                vals[t].append(pf.median((mb.get((t, w, reader)) or {}).get("ms_per_slot_total", [])))
    if not cats:
        return []
    out = [bars("mpt_vs_bintrie_slot", "mpt-vs-bintrie", "Total time per slot read, cold, by workload and reader",
                "ms per slot (median over blocks)", cats, [(pf.TREE_LABEL[t], vals[t]) for t in pf.TREES])]
    rcats, rser = [], {"bal": [], "serial": [], "published": []}
    for w in pf.WORKLOADS:
        rcats.append(short[w])
        for reader in ("bal", "serial"):
            a = pf.median((mb.get(("mpt", w, reader)) or {}).get("ms_per_slot_total", []))
            b = pf.median((mb.get(("bintrie", w, reader)) or {}).get("ms_per_slot_total", []))
            rser[reader].append(None if not a or b is None else b / a)
        try:
            rser["published"].append(float(pub[(w, "bintrie")]["ms_per_slot_total"]) /
                                     float(pub[(w, "mpt")]["ms_per_slot_total"]))
        except (KeyError, ValueError, ZeroDivisionError):
            rser["published"].append(None)
    out.append(bars("mpt_vs_bintrie_ratio", "mpt-vs-bintrie", "Binary trie / MPT, total time per slot",
                    "ratio of medians", rcats, [("ours, reader bal", rser["bal"]), ("ours, reader serial", rser["serial"]),
                                                ("published (go-ethereum)", rser["published"])]))
    return out


def specs(run_dir, studies):
    rows = {s: load_rows(run_dir, s) for s in studies}
    out = []
    if "merkle" in rows:
        out += plots_merkle(rows["merkle"])
    if "kernels" in rows:
        out += plots_kernels(rows["kernels"])
    if "mpt" in rows or "bintrie" in rows:
        out += plots_hash_vs_bare(rows.get("mpt", []), rows.get("bintrie", []))
    if "bintrie" in rows:
        out += plots_bintrie(rows["bintrie"])
    if "io" in rows:
        out += plots_io(rows["io"])
    if "persist" in rows:
        out += plots_persist(rows["persist"])
    if "queue-depth" in rows:
        out += plots_queue_depth(rows["queue-depth"])
    if "group-depth" in rows:
        out += plots_group_depth(rows["group-depth"])
        out += commit_stage_bars("gd_commit_stages", "group-depth", "Block commit stages per group depth",
                                 [r for r in rows["group-depth"] if r.get("command") == "commit"])
    if "page-size" in rows:
        out += plots_page_size(rows["page-size"])
        out += page_size_qd.plot_spec(rows["page-size"], lines)
    if "cold-tail" in rows:
        out += plots_cold_tail(rows["cold-tail"])
    if "mpt-vs-bintrie" in rows:
        out += plots_mpt_vs_bintrie(rows["mpt-vs-bintrie"])
    if "snapshot" in rows:
        out += storage_figures.plots_snapshot(rows["snapshot"], bars)
    if "database" in rows:
        out += storage_figures.plots_database(rows["database"], bars)
    if "slot-budget" in rows:
        out += slot_budget.plots_slot_budget(rows["slot-budget"], bars)
    if "hash-vs-traversal" in rows:
        out += hash_traversal.plots_hash_vs_traversal(rows["hash-vs-traversal"], bars)
    if "inflight" in rows:
        out += inflight.plots_inflight(rows["inflight"], bars)
    if "crash" in rows:
        out += crash_figures.plots_crash(rows["crash"], lines)
    return out


# ---- rendering ---------------------------------------------------------------------------

def gp_quote(s):
    return "'" + str(s).replace("'", "''") + "'"


def write_plot(p, plot_dir):
    dat = os.path.join(plot_dir, p["name"] + ".dat")
    gp = os.path.join(plot_dir, p["name"] + ".gp")
    svg = p["name"] + ".svg"
    head = ["set terminal svg size 900,540 dynamic enhanced font 'sans,11' background rgb 'white'",
            f"set output {gp_quote(svg)}", f"set title {gp_quote(p['title'])} noenhanced",
            f"set xlabel {gp_quote(p['xlabel'])}", f"set ylabel {gp_quote(p['ylabel'])}",
            "set datafile missing '?'", "set grid ytics", "set key outside bottom center horizontal noenhanced"]
    with open(dat, "w") as f:
        if p["kind"] == "lines":
            for label, pts in p["series"]:
                f.write(f"# {label}\n")
                for x, y in sorted(pts):
                    f.write(f"{x:.10g} {y:.10g}\n")
                f.write("\n\n")
            if p.get("logx"):
                head.append("set logscale x 2")
            if p.get("logy"):
                head.append("set logscale y")
            cmds = [f"{gp_quote(os.path.basename(dat)) if i == 0 else chr(39) * 2} index {i} with linespoints "
                    f"lw 2 pt {i + 5} title {gp_quote(label)}" for i, (label, _) in enumerate(p["series"])]
        else:
            f.write("# category " + " ".join(gp_quote(label) for label, _ in p["series"]) + "\n")
            for ci, cat in enumerate(p["categories"]):
                cells = ["?" if vals[ci] is None else f"{vals[ci]:.10g}" for _, vals in p["series"]]
                f.write(f"\"{cat}\" " + " ".join(cells) + "\n")
            head += ["set style data histograms",
                     "set style histogram rowstacked" if p.get("stacked") else "set style histogram clustered gap 1",
                     "set style fill solid 0.8 border -1", "set yrange [0:*]",
                     "set xtics nomirror noenhanced font ',9'"]
            if any("\\n" in c for c in p["categories"]):  # two-line labels: room for them and the key
                head.append("set bmargin 6")
            cmds = []
            for i, (label, _) in enumerate(p["series"]):
                src = gp_quote(os.path.basename(dat)) if i == 0 else "''"
                cmds.append(f"{src} using {i + 2}{':xtic(1)' if i == 0 else ''} title {gp_quote(label)}")
        with open(gp, "w") as g:
            g.write("# " + p["title"] + " (bench.sh; rerun: cd into this directory, gnuplot " +
                    os.path.basename(gp) + ")\n")
            g.write("\n".join(head) + "\n")
            g.write("plot " + ", \\\n     ".join(cmds) + "\n")
    return gp, svg


def group_bodies(svg_text):
    """{series number: the SVG text of its <g id="gnuplot_plot_N"> group}."""
    out = {}
    for m in re.finditer(r'<g id="gnuplot_plot_(\d+)"[^>]*>', svg_text):
        depth, i = 1, m.end()
        for t in re.finditer(r"<g[\s>]|</g>", svg_text[i:]):
            depth += -1 if t.group(0) == "</g>" else 1
            if depth == 0:
                out[int(m.group(1))] = svg_text[i:i + t.start()]
                break
    return out


def drawn_marks(body):
    """Path segments (each M), bar polygons and points drawn in one series' group."""
    moves = sum(len(re.findall(r"M\s*-?[\d.]+", d)) for d in re.findall(r"<path[^>]*\sd='([^']*)'", body))
    return moves + len(re.findall(r"<polygon\b", body)) + len(re.findall(r"<use\b", body))


def check_svg(path, nseries):
    """'' if the SVG holds nseries series with data drawn, else why not."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        return f"no SVG ({e.strerror})"
    if "<svg" not in text or "</svg>" not in text:
        return "not a complete SVG"
    groups = group_bodies(text)
    if len(groups) != nseries:
        return f"{len(groups)} series drawn, {nseries} expected"
    for n, body in sorted(groups.items()):
        if drawn_marks(body) < 2:  # the key sample is one mark; data adds at least one
            return f"series {n} has no data drawn"
    return ""


def render(p, plot_dir):
    gp, svg = write_plot(p, plot_dir)
    npoints = [len(pts) if p["kind"] == "lines" else sum(v is not None for v in pts) for _, pts in p["series"]]
    entry = {"name": p["name"], "study": p["study"], "title": p["title"], "file": "plots/" + svg,
             "series": [{"label": label, "points": n} for (label, _), n in zip(p["series"], npoints)]}
    why = ""
    if not p["series"]:
        why = "no series with data"
    else:
        try:
            r = subprocess.run(["gnuplot", os.path.basename(gp)], cwd=plot_dir, capture_output=True, text=True,
                               timeout=60)
            if r.returncode != 0:
                why = f"gnuplot exit {r.returncode}: {(r.stderr.strip().splitlines() or ['?'])[-1]}"
        except (OSError, subprocess.SubprocessError) as e:
            why = f"gnuplot did not run: {e}"
        if not why:
            why = check_svg(os.path.join(plot_dir, svg), len(p["series"]))
    entry["ok"] = not why
    if why:
        entry["why"] = why
    return entry


def main(argv):
    if len(argv) == 4 and argv[1] == "--check":
        why = check_svg(argv[2], int(argv[3]))
        print(why or "ok")
        return 1 if why else 0
    if len(argv) != 2 or argv[1].startswith("-"):
        print("usage: plots.py RUN_DIR | plots.py --check SVG NSERIES", file=sys.stderr)
        return 2
    run_dir = argv[1]
    try:
        with open(os.path.join(run_dir, "meta.json")) as f:
            studies = [s["name"] for s in json.load(f).get("studies", [])]
    except (OSError, ValueError, KeyError):
        studies = [n[:-6] for n in os.listdir(run_dir) if n.endswith(".jsonl")]
    plot_dir = os.path.join(run_dir, "plots")
    os.makedirs(plot_dir, exist_ok=True)
    entries = [render(p, plot_dir) for p in specs(run_dir, studies)]
    with open(os.path.join(plot_dir, "plots.json"), "w") as f:
        json.dump({"plots": entries}, f, indent=2)
        f.write("\n")
    for e in entries:
        print(f"plot {e['file']}: {'ok' if e['ok'] else 'FAILED: ' + e['why']} "
              f"({', '.join(str(s['points']) for s in e['series'])} points)", file=sys.stderr)
    return 0 if all(e["ok"] for e in entries) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
