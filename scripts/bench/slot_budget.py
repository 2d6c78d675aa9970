#!/usr/bin/env python3
"""slot_budget.py: the figures, table, plot and report section of bench.sh's `slot-budget`
study: one full block (one transaction of the block's gas) of each ERC20 workload per gas
limit, run cold through `statetree run` with readers bal and serial on both trees, its
total_ms per block against the 12-second slot; used by tables.py, plots.py and report.py.

A `run` row is one object per command (bench.sh's merge_run_json) with "bench_group"
TREE/WORKLOAD/READER/gasG. Invariants: pure functions of the rows; shares are total_ms /
12,000 ms per block (median over the run's blocks, each read cold); a figure a row lacks is
None, never a guess. Python 3 standard library only.
"""
from values import median, samples  # noqa: F401  (the shared readers; also used through this module)

SLOT_MS = 12000.0
TREES = ("mpt", "bintrie")
TREE_LABEL = {"mpt": "MPT", "bintrie": "binary trie"}
WORKLOADS = ("erc20_balanceof", "erc20_approve", "mixed_sload_sstore")
SHORT = {"erc20_balanceof": "balanceOf", "erc20_approve": "approve", "mixed_sload_sstore": "mixed"}
READERS = ("bal", "serial")
METRICS = ("total_ms", "state_read_ms", "state_hash_ms", "commit_ms", "gas_used", "slots_read", "slots_written")


def figures(rows):
    """{(tree, workload, reader, gas): {metric: median per block, "total_samples": [...]}}."""
    out = {}
    for r in rows:
        parts = (r.get("bench_group") or "").split("/") if r.get("command") == "run" else []
        if len(parts) != 4 or not parts[3].startswith("gas"):
            continue
        try:
            gas = int(parts[3][3:])
        except ValueError:
            continue
        bl = r.get("blocks_detail", [])
        d = {m: median([b.get(m) for b in bl]) for m in METRICS}
        d["total_samples"] = [b["total_ms"] for b in bl if isinstance(b.get("total_ms"), (int, float))]
        d["share"] = None if d["total_ms"] is None else d["total_ms"] / SLOT_MS
        out[(parts[0], parts[1], parts[2], gas)] = d
    return out


def gas_limits(fig):
    return sorted({k[3] for k in fig})


def gas_label(gas):
    return f"{gas / 1e6:g}M"


def pct(v):
    return "-" if v is None else f"{100 * v:.1f} %"


def num(v, digits=1):
    return "-" if v is None else f"{v:,.{digits}f}"


def table_slot_budget(rows, failures):
    fig = figures(rows)
    print(f"one full block per workload against the {SLOT_MS / 1000:.0f}-second slot (medians per block)")
    print(f"{'gas':>5} {'workload':9} {'reader':6} {'tree':11} {'slots rd':>8} {'total ms':>9} {'of slot':>8} "
          f"{'left':>8}")
    for gas in gas_limits(fig):
        for w in WORKLOADS:
            for reader in READERS:
                for tree in TREES:
                    d = fig.get((tree, w, reader, gas))
                    if d is None:
                        continue
                    share = d["share"]
                    print(f"{gas_label(gas):>5} {SHORT[w]:9} {reader:6} {TREE_LABEL[tree]:11} "
                          f"{num(d['slots_read'], 0):>8} {num(d['total_ms']):>9} {pct(share):>8} "
                          f"{pct(None if share is None else 1 - share):>8}")
    print("total: state read + hash + commit of the block (no EVM execution); left: the share of")
    print("the slot for everything else")
    for x in failures:
        print(f"FAILED: {x.get('command')} (exit {x.get('exit_code')})")


def plots_slot_budget(rows, bars):
    fig = figures(rows)
    cats, keys = [], []
    for gas in gas_limits(fig):
        for w in WORKLOADS:
            for reader in READERS:
                if any((t, w, reader, gas) in fig for t in TREES):
                    cats.append(f"{SHORT[w]}\\n{reader} {gas_label(gas)}")  # two lines (gnuplot's \\n)
                    keys.append((w, reader, gas))
    if not cats:
        return []
    series = [(TREE_LABEL[t], [None if (fig.get((t,) + k) or {}).get("share") is None else 100 * fig[(t,) + k]["share"]
                               for k in keys]) for t in TREES]
    return [bars("slot_budget", "slot-budget", "One full block, cold: share of the 12-second slot",
                 "% of the slot (median block)", cats, series)]


def published_rows(pub_csv):
    """[(workload, tree label, gas, total_ms, share)] of the published 100M-gas blocks."""
    out = []
    for r in pub_csv:
        try:
            total = float(r["total_ms"])
            out.append((r["benchmark"], "MPT" if r["config"] == "mpt" else "binary trie (GD 5)",
                        float(r["gas_used"]), total, total / SLOT_MS))
        except (KeyError, ValueError):
            continue
    return out


def report_slot_budget(rows, cell, table, pub_csv, pub_share):
    fig = figures(rows)
    if not fig:
        return ["(no results)", ""]
    t = []
    for gas in gas_limits(fig):
        for w in WORKLOADS:
            for reader in READERS:
                a, b = fig.get(("mpt", w, reader, gas)), fig.get(("bintrie", w, reader, gas))
                if not a and not b:
                    continue
                a, b = a or {}, b or {}
                sa, sb = samples(a.get("total_samples")), samples(b.get("total_samples"))
                t.append([gas_label(gas), w, reader, num(a.get("gas_used"), 0), num(a.get("slots_read"), 0),
                          num(a.get("total_ms")), pct(a.get("share")), num(b.get("slots_read"), 0), num(b.get("total_ms")),
                          pct(b.get("share")), cell(sa, sb) if sa and sb else "-"])
    out = ["`statetree run --workload W --txs 1 --tx-gas G --block-gas G` (one transaction filling the block) on a "
           "fresh copy of the state per tree x workload x reader x gas, cold (commands.txt); the run's blocks are the "
           "repetitions. total_ms = state read + hash + commit of the block (no EVM execution); its share of the "
           "12-second slot and what is left for everything else (execution, networking, attestation).", "",
           table(["gas", "workload", "reader", "MPT gas used", "MPT slots read", "MPT total ms", "MPT of slot",
                  "BT slots read", "BT total ms", "BT of slot", "BT / MPT total"], t), ""]
    pub = published_rows(pub_csv)
    if pub:
        out += [f"Published (go-ethereum, ~400M entries, cold; total per block including execution; the study "
                f"states {pct(pub_share)} of the slot for the binary trie at mixed load):", "",
                table(["workload", "tree", "gas used", "total ms", "of slot"],
                      [[w, tree, num(g, 0), num(tot), pct(sh)] for w, tree, g, tot, sh in pub]), ""]
    return out

