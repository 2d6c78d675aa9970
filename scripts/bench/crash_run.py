#!/usr/bin/env python3
"""crash_run.py: bench.sh's `crash` study for one tree in one store: `statetree run --inflight
2` SIGKILLed at K seeded random moments, each on a fresh copy of the same state, every kill
checked as the in-suite crash test (tests/workloads/cli_run_crash_test.cpp) checks it.

    crash_run.py --bin STATETREE --tree mpt|bintrie [--store arena|rocksdb] --data DIR --kills K [--seed S]
                 [--accounts A] [--contracts C] [--slots-per-contract N]
                 [--blocks B] [--loads L] [--stores S] [--pin SPEC] [--json]

Setup: `statetree build` of a small state in DIR/base (the arena store or RocksDB), a block
file of B blocks of mixed_sload_sstore (`statetree workload`, one transaction of L loads + S
stores per block),
the reference roots (the initial root from `verify`, one per block from `apply` on a copy),
two uninterrupted runs (their shorter wall time T spreads the kills), then the checker's
self-check (checker_self_check.py: the checker must fail on databases built to be wrong, the
store's own among them).
Kill i (0 <= i < K): a fresh copy of the state, `statetree run --inflight 2 --reader bal
--json [--pin SPEC]` on it, SIGKILL after a delay drawn (seeded) in the i-th of K equal slices
of T. After each kill (check_kill): `verify` passes; the writer lock (DIR/LOCK; on RocksDB also
RocksDB's own DIR/rocksdb/LOCK) is free; the
root is the initial root or apply's root after some block p (the published blocks); no
block the killed run reported on stdout is lost (p >= reported) and stdout lags the
published state by at most the line being printed; a resumed `run --inflight 2` of blocks
p.. (the file's items sliced) ends at apply's final root, each block at apply's root.

Prints one JSON object (--json; else a short text line): the counts (kills, finished first,
reopen failures, lost blocks, wrong roots, failed resumes, ...), where the kills landed
(before the first commit, between commits, after the last), every point, the regime.
Exit status: 0 when every check held and the self-check caught every broken database, 1
otherwise (the JSON says which), 2 on bad usage. Python 3 standard library only.
"""
import argparse
import json
import os
import random
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import crash_check as cc  # noqa: E402
import checker_self_check  # noqa: E402


def parse_args(argv):
    p = argparse.ArgumentParser(prog="crash_run.py", description="SIGKILL statetree run --inflight 2 at K points")
    p.add_argument("--bin", required=True, help="the statetree binary")
    p.add_argument("--tree", required=True, choices=("mpt", "bintrie"))
    p.add_argument("--store", default="arena", choices=cc.STORES, help="the node store [arena]")
    p.add_argument("--data", required=True, help="scratch directory (created; removed at the end)")
    p.add_argument("--kills", type=int, required=True, help="kill points K")
    p.add_argument("--seed", type=int, default=1, help="seed of the kill delays")
    p.add_argument("--accounts", type=int, default=2000)
    p.add_argument("--contracts", type=int, default=2)
    p.add_argument("--slots-per-contract", type=int, default=20000)
    p.add_argument("--blocks", type=int, default=30, help="blocks in the file")
    p.add_argument("--loads", type=int, default=200, help="balanceOf calls per block")
    p.add_argument("--stores", type=int, default=100, help="approve calls per block")
    p.add_argument("--pin", default="", help="statetree run --pin SPEC for the killed runs")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    a = p.parse_args(argv)
    for name in ("kills", "accounts", "contracts", "slots_per_contract", "blocks", "loads", "stores"):
        if getattr(a, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if not (os.path.isfile(a.bin) and os.access(a.bin, os.X_OK)):
        p.error(f"--bin {a.bin} is not an executable file")
    return a


def prepare(a, st, data):
    """The base state, the block file and the reference; raises cc.SetupError."""
    base, blocks = os.path.join(data, "base"), os.path.join(data, "blocks.bal")
    st.ok("build", "--tree", a.tree, "--store", a.store, "--accounts", str(a.accounts), "--contracts", str(a.contracts),
          "--slots-per-contract", str(a.slots_per_contract), "--seed", "3", "--db", base)
    st.ok("workload", "--kind", "mixed_sload_sstore", "--db", base, "--blocks", str(a.blocks), "--txs", "1",
          "--loads", str(a.loads), "--stores", str(a.stores), "--tx-gas", "100000000000",
          "--block-gas", "100000000000", "--seed", "4", "--out", blocks)
    ref = cc.reference(st, base, blocks, os.path.join(data, "apply"))
    return base, blocks, ref


def uninterrupted(st, a, base, blocks, ref, data):
    """Two full runs (each must end at apply's roots); their wall times in seconds."""
    walls = []
    for rep in range(2):
        db = cc.fresh_copy(base, os.path.join(data, "full"))
        out = os.path.join(data, "full.out")
        rc, wall = st.run_killed(run_args(a, db, blocks), out, None)
        if rc != 0:
            raise cc.SetupError(f"uninterrupted run {rep} exited {rc}: {cc.last_line(out + '.err')}")
        k = cc.check_kill(st, db, cc.read_text(out), ref)
        if k["errors"] or k["published"] != ref.blocks():
            raise cc.SetupError(f"uninterrupted run {rep}: {k['errors'] or 'ended at block %s' % k['published']}")
        walls.append(wall)
        shutil.rmtree(db)
    return walls


def run_args(a, db, blocks):
    args = ["run", "--db", db, "--blocks", blocks, "--inflight", "2", "--reader", "bal", "--json"]
    return args + (["--pin", a.pin] if a.pin else [])


def kill_points(a, st, base, blocks, ref, wall_s, data, result):
    rng = random.Random(a.seed * 1000003 + (1 if a.tree == "mpt" else 2) + (0 if a.store == "arena" else 2))
    slice_s = wall_s / a.kills
    out = os.path.join(data, "kill.out")
    for i in range(a.kills):
        delay = slice_s * i + rng.random() * slice_s
        db = cc.fresh_copy(base, os.path.join(data, "kill"))
        rc, _ = st.run_killed(run_args(a, db, blocks), out, delay)
        k = cc.check_kill(st, db, cc.read_text(out), ref)
        resumed = None
        if k["published"] is not None:
            resumed = cc.resume(st, db, blocks, k["published"], ref, os.path.join(data, "rest.bal"))
        cc.tally(result, i, delay, rc, k, resumed, ref.blocks(), cc.last_line(out + ".err"))
        shutil.rmtree(db)


def main(argv):
    a = parse_args(argv)
    data = os.path.abspath(a.data)
    if os.path.exists(data) and os.listdir(data):
        print(f"crash_run.py: --data {data} is not empty", file=sys.stderr)
        return 2
    os.makedirs(data, exist_ok=True)
    st = cc.Statetree(os.path.abspath(a.bin))
    t0 = time.monotonic()
    result = cc.new_result(a)
    result["load_average_before"] = list(os.getloadavg())
    try:
        base, blocks, ref = prepare(a, st, data)
        result["reference"] = {"initial_root": ref.roots[0], "final_root": ref.roots[-1], "blocks": ref.blocks()}
        walls = uninterrupted(st, a, base, blocks, ref, data)
        result["reference"]["run_wall_ms"] = [round(w * 1000, 1) for w in walls]
        result["self_check"] = checker_self_check.run(st, base, blocks, ref, os.path.join(data, "self"), a.store)
        kill_points(a, st, base, blocks, ref, min(walls), data, result)
    except cc.SetupError as e:
        result["setup_error"] = str(e)
    finally:
        shutil.rmtree(data, ignore_errors=True)
    result["load_average_after"] = list(os.getloadavg())
    result["wall_s"] = round(time.monotonic() - t0, 2)
    result["ok"] = cc.all_held(result)
    if a.json:
        print(json.dumps(result, separators=(",", ":")))
    else:
        print(cc.one_line(result))
    if not result["ok"]:
        print(f"crash_run.py: {a.tree} ({a.store}): {cc.why_not(result)}", file=sys.stderr)
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
