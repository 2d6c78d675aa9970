#!/usr/bin/env python3
"""crash_figures.py: the table, plot and report section of bench.sh's `crash` study (one JSON
object per tree and store from crash_run.py): kills, reopen failures, lost blocks, wrong
roots, failed resumes, where the kills landed, and the checker's self-check; used by
tables.py, plots.py and report.py.

Invariants: pure functions of the rows; a count a row lacks shows as '-', never 0; a tree
and store whose run failed to set up is named with its error, not left out; a row without
a store (runs before RocksDB was part of the study) is the arena's. Python 3 standard
library only.
"""
TREES = (("mpt", "MPT"), ("bintrie", "binary trie"))
STORES = (("arena", "arena"), ("rocksdb", "RocksDB"))
# The columns: (tree, store) in this order, each with its label.
KINDS = tuple((t, s) for t, _ in TREES for s, _ in STORES)
LABEL = {(t, s): f"{tl} {sl}" for t, tl in TREES for s, sl in STORES}
COUNTS = (("kill points", "kill_points"), ("killed", "kills"), ("finished first", "finished_first"),
          ("reopen failures", "reopen_failures"), ("lost blocks", "lost_blocks"), ("wrong roots", "wrong_roots"),
          ("failed resumes", "failed_resumes"), ("stdout behind", "stdout_behind"), ("bad reports", "bad_reports"),
          ("lock held", "lock_held"), ("exited early", "exited_early"))
# Where a kill landed, by the blocks published at reopen (after last: also a run that ended
# before its kill).
LANDED = (("before 1st commit", "before_first_commit"), ("between commits", "between_commits"),
          ("after last commit", "after_last_commit"), ("not reopened", "not_reopened"))


def by_kind(rows):
    """{(tree, store): row} of the crash rows."""
    out = {}
    for r in rows:
        kind = (r.get("tree"), r.get("store") or "arena")
        if r.get("command") == "crash" and kind in LABEL:
            out[kind] = r
    return out


def cell(r, *keys):
    v = r
    for k in keys:
        v = v.get(k) if isinstance(v, dict) else None
    return "-" if v is None else f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v)


def self_check_text(r):
    sc = r.get("self_check")
    if not sc:
        return "not run"
    caught = sum(1 for c in sc.get("cases", []) if c.get("caught"))
    missed = [c["name"] for c in sc.get("cases", []) if not c.get("caught")]
    return f"{caught}/{len(sc.get('cases', []))} caught" + (f" (missed: {', '.join(missed)})" if missed else "")


def table_crash(rows, failures):
    t = by_kind(rows)
    kinds = [x for x in KINDS if x in t]
    print("statetree run --inflight 2 --reader bal, SIGKILLed at seeded points over its wall time")
    print(f"{'':20}" + "".join(f"{LABEL[x]:>20}" for x in kinds))
    for label, key in COUNTS:
        print(f"{label:20}" + "".join(f"{cell(t[x], key):>20}" for x in kinds))
    print("where the kills landed:")
    for label, key in LANDED:
        print(f"  {label:18}" + "".join(f"{cell(t[x], 'landed', key):>20}" for x in kinds))
    print(f"{'blocks per run':20}" + "".join(f"{cell(t[x], 'reference', 'blocks'):>20}" for x in kinds))
    print(f"{'run wall ms':20}" + "".join(f"{min(t[x].get('reference', {}).get('run_wall_ms') or [0]):>20,.0f}"
                                          for x in kinds))
    print(f"{'study s':20}" + "".join(f"{cell(t[x], 'wall_s'):>20}" for x in kinds))
    for x in kinds:
        print(f"{LABEL[x]}: checker self-check {self_check_text(t[x])}")
        if t[x].get("setup_error"):
            print(f"{LABEL[x]}: SETUP FAILED: {t[x]['setup_error']}")
        for e in t[x].get("errors", [])[:5]:
            print(f"{LABEL[x]}: {e}")
        if t[x].get("landed", {}).get("between_commits") == 0:
            print(f"{LABEL[x]}: no kill landed between two commits (run too short for the kill points?)")
    for f in failures:
        print(f"FAILED: {f.get('command')} (exit {f.get('exit_code')})")


def plots_crash(rows, lines):
    """Blocks published at reopen and reported on stdout against the kill's delay, per tree and
    store (only those the run holds)."""
    t = by_kind(rows)
    series = []
    for x in KINDS:
        if x not in t:
            continue
        pts = t[x].get("points") or []
        series.append((f"{LABEL[x]}: published (reopened root)", [(p[0], p[3]) for p in pts if p[3] is not None]))
        series.append((f"{LABEL[x]}: reported on stdout", [(p[0], p[2]) for p in pts]))
    if not any(s[1] for s in series):
        return []
    return [lines("crash_points", "crash", "SIGKILL of run --inflight 2: blocks published vs reported, per kill",
                  "kill delay after the spawn (ms)", "blocks", series)]


def report_crash(rows, table):
    t = by_kind(rows)
    if not t:
        return ["(no results)", ""]
    kinds = [x for x in KINDS if x in t]
    any_row = t[kinds[0]]
    out = [f"Per tree and store (arena, RocksDB): a state of {cell(any_row, 'state', 'accounts')} accounts and "
           f"{cell(any_row, 'state', 'contracts')} x {cell(any_row, 'state', 'slots_per_contract')} slots, a file of "
           f"{cell(any_row, 'workload', 'blocks')} mixed_sload_sstore blocks (one transaction of "
           f"{cell(any_row, 'workload', 'loads')} balanceOf + {cell(any_row, 'workload', 'stores')} approve calls), "
           "apply's root per block as the reference. Each kill point: a fresh copy of the state, `statetree "
           f"{any_row.get('killed_command', 'run --inflight 2')}`, SIGKILL after a seeded delay in its slice of the "
           "uninterrupted run's wall time; then `verify`, the writer lock, the reopened root against apply's roots, "
           "the blocks reported on stdout against those published, and a resumed run of the remaining blocks "
           "against apply's final root (scripts/bench/crash_run.py).", ""]
    body = [[label] + [cell(t[x], key) for x in kinds] for label, key in COUNTS]
    body += [["landed " + label] + [cell(t[x], "landed", key) for x in kinds] for label, key in LANDED]
    body.append(["uninterrupted run, ms"] + [", ".join(f"{w:,.0f}" for w in t[x].get("reference", {}).get(
        "run_wall_ms", [])) or "-" for x in kinds])
    body.append(["checker self-check"] + [self_check_text(t[x]) for x in kinds])
    out += [table([""] + [LABEL[x] for x in kinds], body), ""]
    for x in kinds:
        if t[x].get("setup_error"):
            out.append(f"- {LABEL[x]}: setup failed: {t[x]['setup_error']}")
        for e in t[x].get("errors", [])[:5]:
            out.append(f"- {LABEL[x]}: {e}")
    out += ["Lost blocks: blocks the killed run printed as committed that the reopened database does not hold. "
            "The self-check runs the same checker on databases built to be wrong (another block's root, fewer blocks "
            "than stdout reported, more than one block ahead of stdout, a wrong reported root, a held writer lock, "
            "truncated files, resumes from the wrong state; on RocksDB also a MANIFEST ahead of RocksDB's commit "
            "record and RocksDB's own lock held, and a MANIFEST one commit behind the record, a legal state it must "
            "accept): each must be reported, so a zero above can be a result.",
            ""]
    return out
