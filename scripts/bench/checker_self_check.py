#!/usr/bin/env python3
"""checker_self_check.py: the `crash` study's checker (crash_check.py) run on databases and
stdout built to be wrong; each case must report its finding, or the study's zero counts
mean nothing. Run by crash_run.py on each tree's state before its kills.

Cases (run(st, base, blocks, ref, scratch) -> {"ok", "cases": [{name, expect, caught, found}]}):
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
Invariants: the base state is never written (each case works on its own copy); ok only when
every case found what it expects. Python 3 standard library only.
"""
import fcntl
import json
import os
import subprocess

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


def run(st, base, blocks, ref, scratch):
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

    broken = damaged_copy(base, os.path.join(scratch, "broken"))
    case("reopen_failure", "reopen_failure", kinds(cc.check_kill(st, broken, "", ref)))
    subprocess.run(["rm", "-rf", scratch], check=True)
    return {"ok": all(c["caught"] for c in cases), "cases": cases}
