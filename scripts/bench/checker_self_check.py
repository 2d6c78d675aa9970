#!/usr/bin/env python3
"""checker_self_check.py: the `crash` study's checker (crash_check.py) run on databases and
stdout built to be wrong; each case must report its finding, or the study's zero counts
mean nothing. Run by crash_run.py on each tree's state before its kills.

Cases (run(st, base, blocks, ref, scratch, store) -> {"ok", "cases": [{name, expect, caught, found}]}):
  off_reference     a copy that ran one block of another file: root on none of apply's roots
  resume_off        the resume of the file's blocks on that copy: must not end at the final root
  behind_reported   the initial state, stdout saying two blocks committed: lost blocks
  ahead_of_stdout   three blocks applied, stdout saying one: stdout behind the published state
  bad_report        stdout naming a root that is not apply's: a bad report
  lock_held         the writer lock held (by this process) during the check
  reopen_failure    a copy whose files are truncated: verify fails
  resume_skipping   the resume of blocks 2.. on the initial state (blocks 0 and 1 never run):
                    must not end at the final root (a resume that starts too early cannot be
                    caught, nor needs to be: a block's post-values applied again change nothing)
RocksDB's own, besides (store rocksdb: the nodes and the commit record live in RocksDB, the
MANIFEST beside it is published after the record's batch, io/rocksdb_store.h):
  manifest_ahead    the initial state under the MANIFEST of three blocks later (RocksDB lost
                    what the MANIFEST names): verify fails
  rocks_lock_held   RocksDB's own lock (rocksdb/LOCK) held by another process: lock held
  manifest_behind   three blocks applied under the initial state's MANIFEST (a kill between
                    the record's batch and the MANIFEST): a legal state, which the checker must
                    accept at block 3 with no finding (a checker that fails it fails every kill
                    landing there)
Invariants: the base state is never written (each case works on its own copy); ok only when
every case found what it expects. Python 3 standard library only.
"""
import fcntl
import json
import os
import shutil
import subprocess
import sys

import crash_check as cc


def block_line(i, root):
    return json.dumps({"type": "block", "index": i, "root": root}) + "\n"


def kinds(k):
    return sorted({kind for kind, _ in k["errors"]})


def damaged_copy(base, to):
    """A copy of BASE with every regular file cut to half its size."""
    cc.fresh_copy(base, to)
    for d, _, files in os.walk(to):
        for name in files:
            if name in ("LOCK", "READERS"):
                continue
            path = os.path.join(d, name)
            os.truncate(path, os.path.getsize(path) // 2)
    return to


def held_by_child(path):
    """A child process holding a POSIX record lock on PATH (as RocksDB holds rocksdb/LOCK) until
    its stdin closes; returned once it holds it."""
    code = ("import fcntl, os, sys\nfd = os.open(sys.argv[1], os.O_RDWR)\nfcntl.lockf(fd, fcntl.LOCK_EX)\n"
            "print('held', flush=True)\nsys.stdin.read()\n")
    child = subprocess.Popen([sys.executable, "-c", code, path], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True)
    if child.stdout.readline().strip() != "held":
        child.kill()
        child.wait()
        raise cc.SetupError(f"the self-check could not hold {path}")
    return child


def with_manifest_of(db, other):
    """DB with the MANIFEST of the database OTHER (RocksDB's files left as they are)."""
    shutil.copyfile(os.path.join(other, "MANIFEST"), os.path.join(db, "MANIFEST"))
    return db


def rocksdb_cases(st, ref, initial, ahead, scratch, case):
    """The RocksDB store's own wrong and legal states (the module's header)."""
    lost = with_manifest_of(cc.fresh_copy(initial, os.path.join(scratch, "lost")), ahead)
    case("manifest_ahead", "reopen_failure", kinds(cc.check_kill(st, lost, "", ref)))
    child = held_by_child(os.path.join(initial, "rocksdb", "LOCK"))
    try:
        case("rocks_lock_held", "lock_held", kinds(cc.check_kill(st, initial, "", ref)))
    finally:
        child.stdin.close()
        child.wait()
    behind = with_manifest_of(cc.fresh_copy(ahead, os.path.join(scratch, "behind")), initial)
    k = cc.check_kill(st, behind, block_line(0, ref.roots[1]) + block_line(1, ref.roots[2]), ref)
    case("manifest_behind", "accepted at block 3",
         ["accepted at block 3"] if not k["errors"] and k["published"] == 3 else kinds(k) or [f"at {k['published']}"])


def run(st, base, blocks, ref, scratch, store="arena"):
    os.makedirs(scratch, exist_ok=True)
    cases = []

    def case(name, expect, found):
        cases.append({"name": name, "expect": expect, "caught": expect in found, "found": found})

    other = os.path.join(scratch, "other.bal")
    st.ok("workload", "--kind", "mixed_sload_sstore", "--db", base, "--blocks", "1", "--txs", "1", "--loads", "3",
          "--stores", "3", "--seed", "99", "--out", other)
    off = cc.fresh_copy(base, os.path.join(scratch, "off"))
    st.ok("run", "--db", off, "--blocks", other)
    case("off_reference", "wrong_root", kinds(cc.check_kill(st, off, "", ref)))
    r = cc.resume(st, off, blocks, 0, ref, os.path.join(scratch, "rest.bal"))
    case("resume_off", "failed_resume", ["failed_resume"] if r else [])

    initial = cc.fresh_copy(base, os.path.join(scratch, "initial"))
    said = block_line(0, ref.roots[1]) + block_line(1, ref.roots[2])
    case("behind_reported", "lost_blocks", kinds(cc.check_kill(st, initial, said, ref)))
    case("bad_report", "bad_report", kinds(cc.check_kill(st, initial, block_line(0, ref.roots[0]), ref)))

    ahead = cc.fresh_copy(base, os.path.join(scratch, "ahead"))
    first3 = os.path.join(scratch, "first3.bal")
    with open(first3, "wb") as f:
        f.write(b"".join(ref.items[:3]))
    st.ok("run", "--db", ahead, "--blocks", first3)
    case("ahead_of_stdout", "stdout_behind", kinds(cc.check_kill(st, ahead, block_line(0, ref.roots[1]), ref)))
    skipping = cc.fresh_copy(base, os.path.join(scratch, "skipping"))
    r = cc.resume(st, skipping, blocks, 2, ref, os.path.join(scratch, "rest.bal"))
    case("resume_skipping", "failed_resume", ["failed_resume"] if r else [])

    fd = os.open(os.path.join(initial, "LOCK"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        case("lock_held", "lock_held", kinds(cc.check_kill(st, initial, "", ref)))
    finally:
        os.close(fd)

    if store == "rocksdb":
        rocksdb_cases(st, ref, initial, ahead, scratch, case)
    broken = damaged_copy(base, os.path.join(scratch, "broken"))
    case("reopen_failure", "reopen_failure", kinds(cc.check_kill(st, broken, "", ref)))
    subprocess.run(["rm", "-rf", scratch], check=True)
    return {"ok": all(c["caught"] for c in cases), "cases": cases}
