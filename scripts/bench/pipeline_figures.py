#!/usr/bin/env python3
"""pipeline_figures.py: the figures of bench.sh's block-pipeline studies (cold-tail,
mpt-vs-bintrie) out of their STUDY.jsonl rows, shared by tables.py, plots.py and report.py.

A `run` row is one object per command (bench.sh's merge_run_json): the run's summary, its
blocks in "blocks_detail" and the configuration in "bench_group":
  cold-tail       TREE/READER/otherN/txsT   (N other slots per later transaction, T per block)
  mpt-vs-bintrie  TREE/WORKLOAD/READER (beside them one read-bench row per tree: the raw loop)
Invariants: pure functions of the rows; a figure a row lacks is None, never a guess. Python
3 standard library only.
"""
from values import median, samples  # noqa: F401  (the shared readers; also used through this module)

TREES = ("mpt", "bintrie")
TREE_LABEL = {"mpt": "MPT", "bintrie": "binary trie"}
READERS = ("serial", "geth", "bal")
WORKLOADS = ("erc20_balanceof", "erc20_approve", "mixed_sload_sstore")


def runs(rows):
    return [r for r in rows if r.get("command") == "run" and isinstance(r.get("bench_group"), str)]


def cold_tail(rows):
    """{(tree, reader, other): {txs: figures}}; figures: the summary's cold-tail row for the
    run's one transaction count (sums over the run's blocks: ms per miss, per distinct slot
    read, per device read) plus misses, device reads and slots per block."""
    out = {}
    for r in runs(rows):
        parts = r["bench_group"].split("/")
        if len(parts) != 4 or not parts[2].startswith("other") or not parts[3].startswith("txs"):
            continue
        tree, reader = parts[0], parts[1]
        try:
            other, txs = int(parts[2][5:]), int(parts[3][3:])
        except ValueError:
            continue
        row = next((c for c in (r.get("cold_tail") or {}).get("by_tx_count", []) if c.get("txs") == txs), None)
        if row is None:
            continue
        blocks = row.get("blocks") or 1
        fig = {k: row.get(k) for k in ("ms_per_miss", "ms_per_slot", "ms_per_device_read", "state_read_ms")}
        for k in ("misses", "slots_read", "device_reads"):
            fig[k + "_per_block"] = None if row.get(k) is None else row[k] / blocks
        fig["misses_per_slot"] = (row["misses"] / row["slots_read"]) if row.get("slots_read") else None
        fig["device_reads_per_slot"] = (row["device_reads"] / row["slots_read"]) if row.get("slots_read") else None
        bl = r.get("blocks_detail", [])
        waits = [get_lock_wait(b) for b in bl]
        fig["lock_wait_ms_per_block"] = median([w for w in waits if w is not None])
        # go-ethereum's counting: a slot a prefetcher read first is a cache hit for the main
        # executor, so its misses are ours less the workers' warm hits (geth only).
        warm = sum((b.get("geth") or {}).get("warm_hits", 0) for b in bl)
        fig["warm_hits_per_block"] = warm / len(bl) if bl else None
        main = (row.get("misses") or 0) - warm
        fig["ms_per_main_miss"] = (row["state_read_ms"] / main) if reader == "geth" and bl and main > 0 and \
            row.get("state_read_ms") is not None else None
        fig["blocks"] = blocks
        out.setdefault((tree, reader, other), {})[txs] = fig
    return out


def get_lock_wait(block):
    g = block.get("geth")
    return g.get("reader_lock_wait_ms") if isinstance(g, dict) else None


METRICS = ("ms_per_slot_read", "ms_per_slot_total", "ms_per_miss", "state_read_ms", "state_hash_ms", "total_ms")


def mpt_vs_bintrie(rows):
    """{(tree, workload, reader): {metric: [one sample per block]}} plus "slots_read",
    "slots_written" (per block, medians)."""
    out = {}
    for r in runs(rows):
        parts = r["bench_group"].split("/")
        if len(parts) != 3:
            continue
        tree, workload, reader = parts
        blocks = r.get("blocks_detail", [])
        d = {m: [b.get(m) for b in blocks if isinstance(b.get(m), (int, float))] for m in METRICS}
        d["slots_read"] = median([b.get("slots_read") for b in blocks])
        d["slots_written"] = median([b.get("slots_written") for b in blocks])
        d["device_reads_per_slot"] = median([b.get("device_reads_per_slot") for b in blocks])
        out[(tree, workload, reader)] = d
    return out


def raw_us_per_read(rows):
    """{tree: the raw loop's us per page read at QD 32} from the study's read-bench rows (the
    store-less loop over the base's arena file, as many random page reads as the lookups made)."""
    out = {}
    for r in rows:
        if r.get("command") != "read-bench" or r.get("tree") not in TREES:
            continue
        q = next((b for b in r.get("batched", []) if b.get("qd") == 32), None)
        v = ((q or {}).get("raw") or {}).get("us_per_read")
        v = v.get("median") if isinstance(v, dict) else v
        if isinstance(v, (int, float)):
            out[r["tree"]] = v
    return out


def over_device(d, raw_us):
    """A configuration's ms per slot read over (its device reads per slot x the raw loop's
    us per read): 1.0 is the device's amortized cost and nothing else; None if a figure lacks."""
    per_read, ms = d.get("device_reads_per_slot"), median(d.get("ms_per_slot_read", []))
    if not raw_us or not per_read or ms is None:
        return None
    return ms / (per_read * raw_us / 1000.0)
