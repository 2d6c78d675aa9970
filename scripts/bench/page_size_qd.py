#!/usr/bin/env python3
"""page_size_qd.py: the page-size study's one table at every queue depth, out of its
page-size.jsonl rows (read-bench of both trees at 4 and 16 KiB pages, io-bench's raw loop at
both page sizes): per QD and tree x page size, us per lookup, device reads per lookup and
bytes per lookup; the 16 KiB / 4 KiB lookup-time ratio per tree (with its bootstrap CI
where the rows hold repetitions); the raw device loop's us per read at each page size. Used
by tables.py (summary.txt), plots.py (page_size_qd.svg) and report.py (REPORT.md, and
page-size-qd.json / page-size-qd.csv in the run directory).

Invariants: pure functions of the rows (the ratio's CI comes from the caller's `ci`); a
figure a row lacks is None (shown as '-'), never a guess; a ratio is of the same tree and
QD at the two page sizes. Python 3 standard library only.
"""
import csv
import json
import os

from values import get, med

TREES = ("mpt", "bintrie")
TREE_LABEL = {"mpt": "MPT", "bintrie": "BT"}  # table headers
PLOT_LABEL = {"mpt": "MPT", "bintrie": "binary trie"}
PAGES = (4096, 16384)


def kib(page):
    return f"{page // 1024}K"


def read_benches(rows):
    """{(tree, page size): the read-bench row}."""
    return {(r.get("tree"), r.get("page_size")): r for r in rows if r.get("command") == "read-bench"}


def io_benches(rows):
    """{page size: the io-bench row}."""
    return {r.get("page_size"): r for r in rows if r.get("command") == "io-bench"}


def at_qd(entries, qd):
    return next((q for q in entries or [] if q.get("qd") == qd), None)


def queue_depths(rows):
    return sorted({q.get("qd") for r in rows if r.get("command") in ("read-bench", "io-bench")
                   for q in r.get("batched", r.get("results", [])) if q.get("qd") is not None})


def ratio(a, b):
    return None if a is None or not b else a / b


def record(rows, qd, ci):
    """One QD's flat record: {tree}_{page}_us_per_lookup (median), _reads_per_lookup,
    _bytes_per_lookup; {tree}_16k_over_4k (ratio of medians of us per lookup) with _ci_lo,
    _ci_hi, _p, _n (None where ci gives none); raw_{page}_us_per_read (io-bench's loop)."""
    rb, io = read_benches(rows), io_benches(rows)
    out = {"qd": qd}
    for tree in TREES:
        us = {}
        for page in PAGES:
            b = get(at_qd((rb.get((tree, page)) or {}).get("batched"), qd), "batched")
            us[page] = get(b, "us_per_lookup")
            key = f"{tree}_{page}"
            out[key + "_us_per_lookup"] = med(us[page])
            out[key + "_reads_per_lookup"] = med(get(b, "page_reads_per_lookup"))
            out[key + "_bytes_per_lookup"] = med(get(b, "bytes_per_lookup"))
        c = ci(us[4096], us[16384]) if us[4096] is not None and us[16384] is not None else None
        r = c[0] if c and c[0] is not None else ratio(med(us[16384]), med(us[4096]))
        out[f"{tree}_16k_over_4k"] = r
        lo, hi, p, na, nb = c[1:] if c else (None,) * 5
        out.update({f"{tree}_16k_over_4k_ci_lo": lo, f"{tree}_16k_over_4k_ci_hi": hi, f"{tree}_16k_over_4k_p": p,
                    f"{tree}_16k_over_4k_n": None if na is None else f"{na}/{nb}"})
    for page in PAGES:
        q = at_qd((io.get(page) or {}).get("results"), qd)
        out[f"raw_{page}_us_per_read"] = med(get(q, "raw", "us_per_read_amortized"))
    return out


def records(rows, ci=lambda a, b: None):
    """The table: one record per queue depth, lowest first."""
    return [record(rows, qd, ci) for qd in queue_depths(rows)]


def num(v, digits):
    return "-" if v is None else f"{v:.{digits}f}"


def ratio_cell(rec, tree):
    r = rec.get(f"{tree}_16k_over_4k")
    if r is None:
        return "-"
    lo, hi = rec.get(f"{tree}_16k_over_4k_ci_lo"), rec.get(f"{tree}_16k_over_4k_ci_hi")
    ci = f" [{lo:.2f}, {hi:.2f}]" if lo is not None and hi is not None else ""
    p, n = rec.get(f"{tree}_16k_over_4k_p"), rec.get(f"{tree}_16k_over_4k_n")
    return f"{r:.2f}x{ci}" + (f", p {p:.2g}" if p is not None else "") + (f" (n {n})" if n else "")


# ---- summary.txt (under 80 columns: one row per QD and tree) ------------------------------

def print_table(rows):
    recs = records(rows)
    if not recs:
        return
    print("cold batched lookups per QD, 4 vs 16 KiB pages (medians; raw: io-bench's loop, us/read)")
    print(f"{'qd':>4} {'tree':4} {'us 4K':>7} {'us 16K':>7} {'16/4':>5} {'rd 4K':>5} {'rd 16K':>6} "
          f"{'KiB 4K':>6} {'KiB 16K':>7} {'raw 4K':>6} {'raw 16K':>7}")
    for rec in recs:
        for tree in TREES:
            k4, k16 = f"{tree}_4096", f"{tree}_16384"
            b4, b16 = rec[k4 + "_bytes_per_lookup"], rec[k16 + "_bytes_per_lookup"]
            print(f"{rec['qd']:>4} {TREE_LABEL[tree]:4} {num(rec[k4 + '_us_per_lookup'], 1):>7} "
                  f"{num(rec[k16 + '_us_per_lookup'], 1):>7} {num(rec[tree + '_16k_over_4k'], 2):>5} "
                  f"{num(rec[k4 + '_reads_per_lookup'], 2):>5} {num(rec[k16 + '_reads_per_lookup'], 2):>6} "
                  f"{num(None if b4 is None else b4 / 1024, 1):>6} {num(None if b16 is None else b16 / 1024, 1):>7} "
                  f"{num(rec['raw_4096_us_per_read'], 1):>6} {num(rec['raw_16384_us_per_read'], 1):>7}")
    print("us: per lookup; rd: device reads per lookup; KiB: bytes read per lookup / 1024")


# ---- plot ---------------------------------------------------------------------------------

def plot_spec(rows, lines):
    """us per lookup against QD (log2 x): four tree x page curves, the two raw loops."""
    recs = records(rows)
    series = []
    for tree in TREES:
        for page in PAGES:
            pts = [(r["qd"], r[f"{tree}_{page}_us_per_lookup"]) for r in recs
                   if r[f"{tree}_{page}_us_per_lookup"] is not None]
            if pts:
                series.append((f"{PLOT_LABEL[tree]} lookups, {page // 1024} KiB pages", pts))
    for page in PAGES:
        pts = [(r["qd"], r[f"raw_{page}_us_per_read"]) for r in recs if r[f"raw_{page}_us_per_read"] is not None]
        if pts:
            series.append((f"raw io_uring loop, {page // 1024} KiB reads (us per read)", pts))
    if not series:
        return []
    return [lines("page_size_qd", "page-size", "Cold lookups at 4 and 16 KiB pages against queue depth",
                  "queue depth", "us per lookup / per raw read (median)", series, logx=True, logy=True)]


# ---- REPORT.md and the run's JSON / CSV ---------------------------------------------------

def report_lines(recs, table):
    """The markdown table (one row per QD) and its legend."""
    if not recs:
        return []
    head, t = ["QD"], []
    for tree in TREES:
        for page in PAGES:
            head += [f"{TREE_LABEL[tree]} {kib(page)} us/lookup", "reads", "KiB"]
        head.append(f"{TREE_LABEL[tree]} 16K / 4K")
    head += ["raw 4K us/read", "raw 16K us/read"]
    for rec in recs:
        row = [rec["qd"]]
        for tree in TREES:
            for page in PAGES:
                k, b = f"{tree}_{page}", rec[f"{tree}_{page}_bytes_per_lookup"]
                row += [num(rec[k + "_us_per_lookup"], 1), num(rec[k + "_reads_per_lookup"], 2),
                        num(None if b is None else b / 1024, 1)]
            row.append(ratio_cell(rec, tree))
        row += [num(rec["raw_4096_us_per_read"], 1), num(rec["raw_16384_us_per_read"], 1)]
        t.append(row)
    return ["Cold batched lookups at every queue depth, 4 vs 16 KiB pages (medians): us per lookup, device "
            "reads per lookup, KiB read per lookup; 16K / 4K is the lookup-time ratio of the same tree and QD "
            "(bootstrap 95 % CI where there are repetitions); raw: io-bench's store-less io_uring loop at that "
            "page size, us per read amortized (the device's own ceiling). Also in page-size-qd.json and "
            "page-size-qd.csv.", "", table(head, t), ""]


def write_files(run_dir, recs):
    """page-size-qd.json (a list of records) and page-size-qd.csv (one row per QD)."""
    if not recs:
        return
    with open(os.path.join(run_dir, "page-size-qd.json"), "w") as f:
        json.dump({"study": "page-size", "rows": recs}, f, indent=1)
        f.write("\n")
    with open(os.path.join(run_dir, "page-size-qd.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(recs[0]))
        w.writeheader()
        for rec in recs:
            w.writerow({k: "" if v is None else v for k, v in rec.items()})
