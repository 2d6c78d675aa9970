#!/usr/bin/env python3
"""crash_check.py: the checker of the `crash` study (crash_run.py): what one SIGKILLed
`statetree run` left behind, judged against `apply`'s roots, as the in-suite crash test
(tests/workloads/cli_run_crash_test.cpp) judges it, and the tally of many kills.

check_kill(st, db, stdout, ref) -> {reported, partial_line, published, errors}: published is
the number of blocks in the reopened database's root (None when verify fails or the root is
none of apply's); errors are (kind, text) pairs, kind one of KINDS. resume(...) runs the
blocks after the published ones and says why the end is not apply's final root (None when it
is). Invariants: a kind is reported only from what the binary printed or the database holds;
the checker never repairs a database; block files are sliced at their top-level RLP items,
byte for byte (a block file is a sequence of RLP items, engine/state/bal.h). Python 3
standard library only.
"""
import fcntl
import json
import os
import subprocess
import time

STORES = ("arena", "rocksdb")  # the node stores a crash run can build (statetree build --store)
# Checker findings, in the order the in-suite checker tests them.
KINDS = ("bad_report", "reopen_failure", "wrong_root", "lost_blocks", "stdout_behind", "lock_held")
FAILURE_COUNTS = ("exited_early", "reopen_failures", "wrong_roots", "lost_blocks", "runs_with_lost_blocks",
                  "stdout_behind", "bad_reports", "lock_held", "failed_resumes")
KIND_COUNT = {"bad_report": "bad_reports", "reopen_failure": "reopen_failures", "wrong_root": "wrong_roots",
              "stdout_behind": "stdout_behind", "lock_held": "lock_held"}
MAX_ERRORS = 20  # error texts kept in the JSON (the counts hold them all)


class SetupError(Exception):
    """The study could not start (a build, workload, apply or reference run failed)."""


def read_text(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def last_line(path):
    lines = [x for x in read_text(path).splitlines() if x.strip()]
    return lines[-1] if lines else ""


class Statetree:
    """The binary, called with argument lists (no shell)."""

    def __init__(self, binary):
        self.binary = binary

    def call(self, *args):
        r = subprocess.run([self.binary, *args], capture_output=True, text=True)
        return r.returncode, r.stdout, r.stderr

    def ok(self, *args):
        rc, out, err = self.call(*args)
        if rc != 0:
            lines = err.strip().splitlines() or ["(no stderr)"]
            raise SetupError(f"statetree {args[0]} exited {rc}: {lines[-1]}")
        return out

    def run_killed(self, args, out, delay_s):
        """Runs statetree ARGS (stdout in OUT, stderr in OUT.err, both new files); with a
        delay, SIGKILLs it delay_s after the spawn began. (exit status, wall seconds): the
        status is -9 when the kill ended it."""
        with open(out, "w") as o, open(out + ".err", "w") as e:
            t0 = time.monotonic()
            p = subprocess.Popen([self.binary, *args], stdout=o, stderr=e, stdin=subprocess.DEVNULL)
            if delay_s is not None:
                time.sleep(max(0.0, t0 + delay_s - time.monotonic()))
                if p.poll() is None:
                    p.kill()
            rc = p.wait()
            return rc, time.monotonic() - t0

    def root(self, db):
        """(verify's exit status, the root it printed or None, its last stderr line)."""
        rc, out, err = self.call("verify", "--db", db, "--json")
        root = None
        try:
            j = json.loads(out)
            root = j.get("root") if isinstance(j, dict) else None
        except ValueError:
            pass
        return rc, root, (err.strip().splitlines() or [""])[-1]


class Reference:
    """roots[0]: the initial root; roots[i + 1]: the root after block i; items: the block
    file's blocks as raw RLP items."""

    def __init__(self, roots, items):
        self.roots, self.items = roots, items

    def blocks(self):
        return len(self.roots) - 1


def rlp_items(data):
    """The top-level RLP items of DATA as byte strings; ValueError if they do not tile it."""
    items, i = [], 0
    while i < len(data):
        b = data[i]
        if b < 0x80:
            n = 1
        elif b < 0xb8:
            n = 1 + b - 0x80
        elif b < 0xc0:
            w = b - 0xb7
            n = 1 + w + int.from_bytes(data[i + 1:i + 1 + w], "big")
        elif b < 0xf8:
            n = 1 + b - 0xc0
        else:
            w = b - 0xf7
            n = 1 + w + int.from_bytes(data[i + 1:i + 1 + w], "big")
        if i + n > len(data):
            raise ValueError(f"RLP item at byte {i} runs past the end")
        items.append(data[i:i + n])
        i += n
    return items


def fresh_copy(base, to):
    """TO, a fresh copy of the database BASE (a reflink where the file system has them)."""
    subprocess.run(["rm", "-rf", to], check=True)
    subprocess.run(["cp", "-a", "--reflink=auto", base, to], check=True)
    return to


def reference(st, base, blocks, scratch):
    """The initial root (verify) and apply's root after each block, on a copy of BASE."""
    rc, root, err = st.root(base)
    if rc != 0 or not root:
        raise SetupError(f"verify of the base state exited {rc}: {err}")
    db = fresh_copy(base, scratch)
    j = json.loads(st.ok("apply", "--db", db, "--blocks", blocks, "--json"))
    roots = [root] + [b["root"] for b in j["blocks"]]
    subprocess.run(["rm", "-rf", db], check=True)
    with open(blocks, "rb") as f:
        items = rlp_items(f.read())
    if len(items) != len(roots) - 1:
        raise SetupError(f"the block file holds {len(items)} items, apply reported {len(roots) - 1} blocks")
    return Reference(roots, items)


def parse_reports(stdout, ref, k):
    """Counts the complete block lines of the killed run's stdout into k['reported']."""
    lines = stdout.split("\n")
    if lines and lines[-1] != "":
        k["partial_line"] = True  # the kill cut this line: not reported
    for line in lines[:-1]:
        try:
            j = json.loads(line)
        except ValueError:
            k["errors"].append(("bad_report", "stdout line is not JSON: " + line[:80]))
            continue
        if not isinstance(j, dict) or j.get("type") != "block":
            continue
        i = j.get("index")
        if i != k["reported"]:
            k["errors"].append(("bad_report", f"block line {k['reported']} has index {i}"))
        elif not isinstance(i, int) or i >= ref.blocks() or j.get("root") != ref.roots[i + 1]:
            k["errors"].append(("bad_report", f"block {i} reported root {j.get('root')}, not apply's"))
        k["reported"] += 1


def lock_held(db):
    """Which lock of DB cannot be taken now, or None: the writer lock (DIR/LOCK, flock LOCK_EX,
    io/db_lock.h) and, in a RocksDB store, RocksDB's own lock (DIR/rocksdb/LOCK, a POSIX
    record lock)."""
    try:
        fd = os.open(os.path.join(db, "LOCK"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError:
        return "writer lock"
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(fd, fcntl.LOCK_UN)
    except OSError:
        return "writer lock"
    finally:
        os.close(fd)
    rocks_lock = os.path.join(db, "rocksdb", "LOCK")
    if os.path.exists(rocks_lock) and not posix_lock_is_free(rocks_lock):
        return "RocksDB's lock (rocksdb/LOCK)"
    return None


def posix_lock_is_free(path):
    """True when no other process holds a POSIX record lock on PATH (this process holds none:
    taking it here and closing the file releases it)."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def check_kill(st, db, stdout, ref):
    k = {"reported": 0, "partial_line": False, "published": None, "errors": []}
    parse_reports(stdout, ref, k)
    rc, root, err = st.root(db)
    if rc != 0:
        k["errors"].append(("reopen_failure", f"verify failed (exit {rc}): {err}"))
        return k
    if root not in ref.roots:
        k["errors"].append(("wrong_root", f"reopened root {root} is not the initial root nor any block's root"))
        return k
    p = ref.roots.index(root)
    k["published"] = p
    if p < k["reported"]:
        k["errors"].append(("lost_blocks", f"lost blocks: {k['reported']} reported committed, {p} published"))
    # Each block's line is printed (and flushed) before the next block's commit begins.
    if p > k["reported"] + 1 + (1 if k["partial_line"] else 0):
        k["errors"].append(("stdout_behind", f"stdout {k['reported']} blocks behind the published {p}"))
    held = lock_held(db)
    if held:
        k["errors"].append(("lock_held", f"{held} not free after the kill"))
    return k


def resume(st, db, blocks_path, p, ref, rest_path, extra=()):
    """Runs blocks p.. of the file on DB (two in flight); None when each block ends at apply's
    root and verify then gives apply's final root, else why not."""
    if p < ref.blocks():
        with open(rest_path, "wb") as f:
            f.write(b"".join(ref.items[p:]))
        rc, out, err = st.call("run", "--db", db, "--blocks", rest_path, "--inflight", "2", "--reader", "bal",
                               "--json", *extra)
        if rc != 0:
            return f"resume from block {p} exited {rc}: {(err.strip().splitlines() or [''])[-1]}"
        n = 0
        for line in out.splitlines():
            j = json.loads(line)
            if j.get("type") != "block":
                continue
            if p + 1 + n >= len(ref.roots) or j.get("root") != ref.roots[p + 1 + n]:
                return f"resume from block {p}: block {p + n} root {j.get('root')} is not apply's"
            n += 1
        if n != ref.blocks() - p:
            return f"resume from block {p}: {n} blocks run, {ref.blocks() - p} expected"
    rc, root, err = st.root(db)
    if rc != 0 or root != ref.roots[-1]:
        return f"after the resume from block {p}: verify exit {rc}, root {root}, not apply's final root"
    return None


def new_result(a):
    return {"command": "crash", "tree": a.tree, "store": a.store,
            "state": {"accounts": a.accounts, "contracts": a.contracts, "slots_per_contract": a.slots_per_contract,
                      "seed": 3},
            "workload": {"kind": "mixed_sload_sstore", "blocks": a.blocks, "txs_per_block": 1, "loads": a.loads,
                         "stores": a.stores, "seed": 4},
            "killed_command": "run --inflight 2 --reader bal --json" + (f" --pin {a.pin}" if a.pin else ""),
            "pin": a.pin or None, "kill_points": a.kills, "seed": a.seed,
            "kills": 0, "finished_first": 0, **{c: 0 for c in FAILURE_COUNTS},
            "landed": {"before_first_commit": 0, "between_commits": 0, "after_last_commit": 0, "not_reopened": 0},
            "points": [], "errors": []}


def tally(result, i, delay_s, rc, k, resumed, nblocks, stderr_line):
    """Adds kill i to RESULT: points[i] = [delay ms, exit status, reported, published]."""
    errors = list(k["errors"])
    if rc == -9:
        result["kills"] += 1
    elif rc == 0:
        result["finished_first"] += 1
    else:
        result["exited_early"] += 1
        errors.insert(0, ("exited_early", f"run exited {rc} before the kill: {stderr_line}"))
    for kind, _ in k["errors"]:
        if kind == "lost_blocks":
            result["lost_blocks"] += k["reported"] - k["published"]
            result["runs_with_lost_blocks"] += 1
        else:
            result[KIND_COUNT[kind]] += 1
    p = k["published"]
    where = ("not_reopened" if p is None else "before_first_commit" if p == 0 else
             "after_last_commit" if p == nblocks else "between_commits")
    result["landed"][where] += 1
    if resumed:
        result["failed_resumes"] += 1
        errors.append(("failed_resume", resumed))
    result["points"].append([round(delay_s * 1000, 2), rc, k["reported"], p])
    for kind, text in errors:
        if len(result["errors"]) < MAX_ERRORS:
            result["errors"].append(f"point {i} ({delay_s * 1000:.1f} ms): {kind}: {text}")


def all_held(result):
    return ("setup_error" not in result and (result.get("self_check") or {}).get("ok") is True and
            all(result[c] == 0 for c in FAILURE_COUNTS) and len(result["points"]) == result["kill_points"])


def why_not(result):
    if "setup_error" in result:
        return "setup failed: " + result["setup_error"]
    bad = [f"{c} {result[c]}" for c in FAILURE_COUNTS if result[c]]
    if (result.get("self_check") or {}).get("ok") is not True:
        bad.append("the checker's self-check did not catch every broken database")
    return ", ".join(bad) + (f"; first: {result['errors'][0]}" if result["errors"] else "")


def one_line(result):
    return (f"crash {result['tree']}: {result['kill_points']} points, {result['kills']} killed, "
            f"{result['finished_first']} finished first; reopen failures {result['reopen_failures']}, lost blocks "
            f"{result['lost_blocks']}, wrong roots {result['wrong_roots']}, failed resumes {result['failed_resumes']}; "
            f"landed {result['landed']}; self-check {(result.get('self_check') or {}).get('ok')}")
