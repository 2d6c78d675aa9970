#!/usr/bin/env python3
"""hash_traversal.py: the figures, table, plot and report section of bench.sh's
`hash-vs-traversal` study: per block of the three ERC20 workloads, both trees, run cold
through `statetree run --reader bal --reps R` (a fresh copy of the state per repetition),
the traversal (state_read_ms), the hash stage (commit.hash_ms), its pure hash
(pure_hash_ms: the same nodes hashed again alone, in batches), state_hash_ms (the commit's
resolve + apply + write), and the ratios hash stage / pure and state hash / pure, the
published go-ethereum ratios beside; used by tables.py, plots.py and report.py.

A `run` row is one object per command (bench.sh's merge_run_json) with "bench_group"
TREE/WORKLOAD and every repetition's blocks in "blocks_detail". Invariants: pure
functions of the rows; a figure is the median over every block of every repetition, with
its min and max (the spread); a ratio is taken per block, then its median (a block whose
pure hash is 0 or absent has no ratio); a figure a row lacks is None, never a guess.
Python 3 standard library only.
"""
from values import get, median, number, quotient, samples as spread  # noqa: F401

TREES = ("mpt", "bintrie")
TREE_LABEL = {"mpt": "MPT", "bintrie": "binary trie"}
WORKLOADS = ("erc20_balanceof", "erc20_approve", "mixed_sload_sstore")
SHORT = {"erc20_balanceof": "balanceOf", "erc20_approve": "approve", "mixed_sload_sstore": "mixed"}
# (figure name, reader of one block object); ratios are recomputed from the block's own
# figures so that a block without a pure hash has none.
METRICS = (("state_read_ms", lambda b: b.get("state_read_ms")),
           ("hash_ms", lambda b: get(b, "commit", "hash_ms")),
           ("pure_hash_ms", lambda b: b.get("pure_hash_ms")),
           ("state_hash_ms", lambda b: b.get("state_hash_ms")),
           ("slots_written", lambda b: b.get("slots_written")),
           ("pure_hash_nodes", lambda b: get(b, "commit", "pure_hash_nodes")))


def figures(rows):
    """{(tree, workload): {figure: spread over the blocks, "reps": R, "blocks": N}}."""
    out = {}
    for r in rows:
        parts = (r.get("bench_group") or "").split("/") if r.get("command") == "run" else []
        if len(parts) != 2:
            continue
        bl = r.get("blocks_detail", [])
        d = {name: spread([read(b) for b in bl]) for name, read in METRICS}
        d["hash_over_pure"] = spread([quotient(get(b, "commit", "hash_ms"), b.get("pure_hash_ms")) for b in bl])
        d["state_hash_over_pure"] = spread([quotient(b.get("state_hash_ms"), b.get("pure_hash_ms")) for b in bl])
        d["reps"] = get(r, "reps", "count") or 1
        d["blocks"] = len(bl)
        out[(parts[0], parts[1])] = d
    return out


def med_of(d, name):
    return (d.get(name) or {}).get("median") if d else None


def num(v, digits=2):
    return "-" if v is None else f"{v:,.{digits}f}"


def ranged(s, digits=2, unit=""):
    """'12.3x [10.1-14.0]': the median and the spread (min-max) of a figure."""
    if not s:
        return "-"
    if s["count"] == 1:
        return f"{s['median']:,.{digits}f}{unit}"
    return f"{s['median']:,.{digits}f}{unit} [{s['min']:,.{digits}f}-{s['max']:,.{digits}f}]"


def table_hash_vs_traversal(rows, failures):
    fig = figures(rows)
    keys = [(t, w) for t in TREES for w in WORKLOADS if (t, w) in fig]
    print("per block, cold, reader bal: medians over every block of every repetition")
    print(f"{'tree':11} {'workload':9} {'blocks':>6} {'sl.wr':>6} {'trav ms':>9} {'hash ms':>9} {'pure ms':>9} "
          f"{'st.hash ms':>10}")
    for t, w in keys:
        d = fig[(t, w)]
        print(f"{TREE_LABEL[t]:11} {SHORT[w]:9} {d['blocks']:>6} {num(med_of(d, 'slots_written'), 0):>6} "
              f"{num(med_of(d, 'state_read_ms')):>9} {num(med_of(d, 'hash_ms'), 3):>9} "
              f"{num(med_of(d, 'pure_hash_ms'), 3):>9} {num(med_of(d, 'state_hash_ms')):>10}")
    print(f"{'tree':11} {'workload':9} {'hash / pure [min-max]':>24} {'st.hash / pure [min-max]':>28}")
    for t, w in keys:
        d = fig[(t, w)]
        print(f"{TREE_LABEL[t]:11} {SHORT[w]:9} {ranged(d['hash_over_pure'], 1, 'x'):>24} "
              f"{ranged(d['state_hash_over_pure'], 1, 'x'):>28}")
    print("trav: state_read_ms (prefetch + traverse); hash: commit.hash_ms (encode + hash in")
    print("memory); pure: the same nodes hashed alone in batches; st.hash: state_hash_ms")
    print("(resolve + apply + write); balanceOf writes no slot: its few hashed nodes are the")
    print("accounts the block changes")
    for x in failures:
        print(f"FAILED: {x.get('command')} (exit {x.get('exit_code')})")


def plots_hash_vs_traversal(rows, bars):
    fig = figures(rows)
    keys = [(t, w) for t in TREES for w in WORKLOADS if (t, w) in fig]
    if not keys:
        return []
    cats = [f"{TREE_LABEL[t]}\\n{SHORT[w]}" for t, w in keys]  # two lines (gnuplot's \\n)
    series = [(label, [med_of(fig[k], name) for k in keys])
              for label, name in (("traversal (state read)", "state_read_ms"), ("hash stage", "hash_ms"),
                                  ("pure hash", "pure_hash_ms"))]
    return [bars("hash_traversal_blocks", "hash-vs-traversal",
                 "Per block, cold (reader bal): traversal, hash stage and its pure hash",
                 "ms per block (median)", cats, series)]


def report_hash_vs_traversal(rows, cell, table, pub):
    """REPORT.md lines; pub: published figures.json's hash_vs_traversal entry."""
    fig = figures(rows)
    if not fig:
        return ["(no results)", ""]
    t = []
    for tree in TREES:
        for w in WORKLOADS:
            d = fig.get((tree, w))
            if d is None:
                continue
            published = "-"
            if w == "erc20_approve" and get(pub, tree, "ratio") is not None:
                published = (f"{get(pub, tree, 'ratio')}x ({get(pub, tree, 'hash_ms')} / "
                             f"{get(pub, tree, 'pure_hash_ms')} ms)")
            t.append([TREE_LABEL[tree], w, f"{d['reps']} x {d['blocks'] // max(d['reps'], 1)}",
                      num(med_of(d, "slots_written"), 0), num(med_of(d, "pure_hash_nodes"), 0),
                      ranged(d["state_read_ms"]), ranged(d["hash_ms"], 3), ranged(d["pure_hash_ms"], 3),
                      ranged(d["state_hash_ms"]), ranged(d["hash_over_pure"], 1, "x"),
                      ranged(d["state_hash_over_pure"], 1, "x"), published])
    out = ["`statetree run --workload W --txs 1 --reader bal --reps R --scratch DIR` on the study's base state "
           "(one contract), each repetition on a fresh copy, cold (commands.txt). Per block: the traversal "
           "(state_read_ms: prefetch + traverse), the hash stage (commit.hash_ms: encode + hash in memory), its "
           "pure hash (pure_hash_ms: the same nodes hashed again alone, level by level, in batches, each digest "
           "checked), state_hash_ms (the commit's resolve + apply + write, the published 'hash time'), and the "
           "ratios per block. Median over every block of every repetition, [min-max].", "",
           table(["tree", "workload", "reps x blocks", "slots written", "nodes hashed", "traversal ms", "hash stage ms",
                  "pure hash ms", "state hash ms", "hash / pure", "state hash / pure", "published state hash / pure"],
                 t), ""]
    c = []
    for w in WORKLOADS:
        a, b = fig.get(("mpt", w)), fig.get(("bintrie", w))
        if a and b:
            c.append([w, cell(a.get("state_hash_ms"), b.get("state_hash_ms")) if a.get("state_hash_ms") and
                      b.get("state_hash_ms") else "-",
                      cell(a.get("pure_hash_ms"), b.get("pure_hash_ms")) if a.get("pure_hash_ms") and
                      b.get("pure_hash_ms") else "-"])
    if c:
        out += ["Binary trie / MPT per block (ratio of medians):", "",
                table(["workload", "BT / MPT state hash", "BT / MPT pure hash"], c), ""]
    if pub:
        out += [f"Published: {pub.get('what', '')}: MPT {get(pub, 'mpt', 'hash_ms')} ms against "
                f"{get(pub, 'mpt', 'pure_hash_ms')} ms ({get(pub, 'mpt', 'ratio')}x), binary trie "
                f"{get(pub, 'bintrie', 'hash_ms')} ms against {get(pub, 'bintrie', 'pure_hash_ms')} ms "
                f"({get(pub, 'bintrie', 'ratio')}x). Our state hash / pure is the same form; hash / pure isolates the "
                "in-memory encode + hash from the reads and writes around it.", ""]
    return out
