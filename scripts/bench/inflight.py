#!/usr/bin/env python3
"""inflight.py: the figures, table, plot and report section of bench.sh's `inflight` study:
mixed_sload_sstore blocks through `statetree run --reader bal --qd 32 --raw-loop` with one
block in flight and with two, A B B A per tree over the rounds, each run on a fresh copy read
cold; blocks per second beside the run's own ceiling (the summary's `ceiling`: the most any
--inflight could reach, bound by the device's raw rate at the QD or by the CPU); used by
tables.py, plots.py and report.py.

A `run` row is one object per command (bench.sh's merge_run_json) with "bench_group"
TREE/kK/rR. Invariants: pure functions of the rows; a ratio is of medians over the rounds; a
figure a row lacks is None, never a guess. Python 3 standard library only.
"""
from values import median, quotient, samples

TREES = ("mpt", "bintrie")
TREE_LABEL = {"mpt": "MPT", "bintrie": "binary trie"}
TARGET = 1.3  # the pipeline's target: --inflight 2 >= 1.3x the blocks per second of --inflight 1


def runs(rows):
    """{(tree, k): [{"round", "bps", "steady", "ceiling", "reached", "bound", "root"}]} by round."""
    out = {}
    for r in rows:
        parts = (r.get("bench_group") or "").split("/") if r.get("command") == "run" else []
        if len(parts) != 3 or not parts[1].startswith("k") or not parts[2].startswith("r"):
            continue
        try:
            k, rnd = int(parts[1][1:]), int(parts[2][1:])
        except ValueError:
            continue
        c = r.get("ceiling") or {}
        out.setdefault((parts[0], k), []).append(
            {"round": rnd, "bps": r.get("blocks_per_sec"), "steady": r.get("steady_blocks_per_sec"),
             "ceiling": c.get("blocks_per_sec"), "reached": c.get("reached"), "bound": c.get("bound_by"),
             "root": r.get("root"), "cold": ((r.get("regime") or {}).get("page_cache") or {}).get("dropped")})
    for v in out.values():
        v.sort(key=lambda x: x["round"])
    return out


def figures(rows):
    """{tree: {"k1", "k2": medians of blocks/s, "k1_samples", "k2_samples", "ratio", "round_ratios",
    "steady_ratio", "headroom" (median over K = 1 runs of ceiling / blocks/s: the most overlap could
    gain), "k2_reached" (median share of its ceiling a K = 2 run reached), "bounds" (the set of
    bound_by), "roots_identical"}} for each tree with runs at both K."""
    rs = runs(rows)
    out = {}
    for tree in TREES:
        one, two = rs.get((tree, 1), []), rs.get((tree, 2), [])
        if not one or not two:
            continue
        k1s, k2s = [x["bps"] for x in one], [x["bps"] for x in two]
        by_round = {x["round"]: x["bps"] for x in two}
        k1, k2 = median(k1s), median(k2s)
        roots = {x["root"] for x in one + two}
        out[tree] = {
            "k1": k1, "k2": k2, "k1_samples": k1s, "k2_samples": k2s, "ratio": quotient(k2, k1),
            "round_ratios": [quotient(by_round[x["round"]], x["bps"]) for x in one if x["round"] in by_round],
            "steady_ratio": quotient(median([x["steady"] for x in two]), median([x["steady"] for x in one])),
            "headroom": median([quotient(x["ceiling"], x["bps"]) for x in one]),
            "k2_reached": median([x["reached"] for x in two]),
            "bounds": sorted({x["bound"] for x in one + two if x["bound"]}),
            "roots_identical": len(roots) == 1 and None not in roots,
            "cold": all(x["cold"] for x in one + two)}
    return out


def regime(fig):
    """"cold" when every run dropped the page cache first, else "host-warm"."""
    return "cold" if fig and all(d["cold"] for d in fig.values()) else "host-warm"


def num(v, digits=2):
    return "-" if v is None else f"{v:.{digits}f}"


def times(v):
    return "-" if v is None else f"{v:.2f}x"


def spread(vals):
    vals = [v for v in vals if v is not None]
    return "-" if not vals else f"{min(vals):.2f}-{max(vals):.2f}x"


def table_inflight(rows, failures):
    fig = figures(rows)
    print(f"mixed_sload_sstore, reader bal, QD 32, {regime(fig)}: blocks/s with one block in flight and two "
          "(medians over the rounds)")
    print(f"{'tree':11} {'K=1':>6} {'K=2':>6} {'K2/K1':>6} {'rounds':>11} {'steady':>6} {'ceiling/K1':>10} "
          f"{'K2 of ceil':>10} {'bound':>11} {'roots':>9}")
    for tree, d in fig.items():
        print(f"{TREE_LABEL[tree]:11} {num(d['k1']):>6} {num(d['k2']):>6} {times(d['ratio']):>6} "
              f"{spread(d['round_ratios']):>11} {times(d['steady_ratio']):>6} {times(d['headroom']):>10} "
              f"{num(d['k2_reached']):>10} {','.join(d['bounds']) or '-':>11} "
              f"{'identical' if d['roots_identical'] else 'DIFFER':>9}")
    print(f"ceiling/K1: the K = 1 run's ceiling (device reads at the raw loop's cost, or CPU / cores) over its "
          f"blocks/s, the most overlap could gain; target K2/K1 >= {TARGET}x")
    for x in failures:
        print(f"FAILED: {x.get('command')} (exit {x.get('exit_code')})")


def plots_inflight(rows, bars):
    fig = figures(rows)
    if not fig:
        return []
    cats = [TREE_LABEL[t] for t in fig]
    ceiling = [None if d["headroom"] is None or d["k1"] is None else d["headroom"] * d["k1"] for d in fig.values()]
    series = [("--inflight 1", [d["k1"] for d in fig.values()]), ("--inflight 2", [d["k2"] for d in fig.values()]),
              ("ceiling (from the K = 1 runs)", ceiling)]
    return [bars("inflight", "inflight", f"Blocks in flight: mixed_sload_sstore, bal, QD 32, {regime(fig)}",
                 "blocks per second (median)", cats, series)]


def report_inflight(rows, cell, table):
    fig = figures(rows)
    if not fig:
        return ["(no results)", ""]
    t = []
    for tree, d in fig.items():
        a, b = samples(d["k1_samples"]), samples(d["k2_samples"])
        t.append([TREE_LABEL[tree], num(d["k1"]), num(d["k2"]), cell(a, b) if a and b else "-",
                  spread(d["round_ratios"]), times(d["steady_ratio"]), times(d["headroom"]), num(d["k2_reached"]),
                  ", ".join(d["bounds"]) or "-", "identical" if d["roots_identical"] else "DIFFER"])
    out = ["`statetree run --workload mixed_sload_sstore --reader bal --qd 32 --inflight K --raw-loop` (one "
           "transaction per block, the gas caps lifted), K = 1 and 2 A B B A per tree over the rounds, each run on a "
           f"fresh copy of the state, {regime(fig)} (commands.txt). The ceiling is the run's own (`ceiling`): the most blocks "
           "per second any `--inflight` could reach, from the blocks' device reads at the raw loop's cost at QD 32 "
           "(shared by the blocks in flight) and the process's CPU time over its cores; ceiling / K = 1 is the most "
           f"overlap could gain on this machine, beside the pipeline's target of {TARGET}x.", "",
           table(["tree", "K = 1 blocks/s", "K = 2 blocks/s", "K2 / K1", "per round", "steady state",
                  "ceiling / K = 1", "K = 2 of its ceiling", "bound by", "roots"], t), ""]
    for tree, d in fig.items():
        if d["ratio"] is not None and d["headroom"] is not None and d["ratio"] < TARGET <= d["headroom"]:
            out.append(f"- {TREE_LABEL[tree]}: below the {TARGET}x target with room under its ceiling "
                       f"({times(d['headroom'])}): neither the device's rate nor the CPU holds it back; what does "
                       "is outside the ceiling (the commits' writes and serial order, waits).")
        elif d["headroom"] is not None and d["headroom"] < TARGET:
            out.append(f"- {TREE_LABEL[tree]}: the ceiling itself is {times(d['headroom'])} of K = 1: on this "
                       f"machine no overlap can reach the {TARGET}x target at QD 32.")
    return out + [""]
