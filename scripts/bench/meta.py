#!/usr/bin/env python3
"""meta.py: writes and updates RUN_DIR/meta.json for bench.sh, one event per call.

    meta.py RUN_DIR init --argv "./bench.sh ..." --scale S --bin BIN --data DIR --keep 0|1 --studies "a b" [--reps N]
                         [--slots N] [--contracts N] [--accounts N]
    meta.py RUN_DIR study-begin --study S
    meta.py RUN_DIR failure --study S --command CMD --exit-code RC --stderr FILE
    meta.py RUN_DIR skip --study S --command CMD
    meta.py RUN_DIR note --study S --text TEXT
    meta.py RUN_DIR study-end --study S --commands N --data-dir DIR --data-bytes B --data-kept 0|1
    meta.py RUN_DIR finish --status ok|failed|interrupted

Invariants: meta.json is rewritten whole through a temporary file and a rename, so it is
always complete JSON, also when a run is interrupted; times are UTC ISO 8601; load averages
are os.getloadavg() (1, 5, 15 minutes). Python 3 standard library only.
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys


def utc_now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def load_average():
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def output_of(argv):
    """stdout of argv (stripped) if it exits 0, else None."""
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout.strip() if r.returncode == 0 else None


def git_state():
    commit = output_of(["git", "rev-parse", "HEAD"])
    if commit is None:
        return None
    status = output_of(["git", "status", "--porcelain"])
    state = {"commit": commit, "dirty": bool(status)}
    branch = output_of(["git", "rev-parse", "--abbrev-ref", "HEAD"])
    if branch:
        state["branch"] = branch
    return state


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def memory_bytes():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return None


def read_meta(run_dir):
    with open(os.path.join(run_dir, "meta.json")) as f:
        return json.load(f)


def write_meta(run_dir, meta):
    path = os.path.join(run_dir, "meta.json")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


def study_entry(meta, name):
    for s in meta["studies"]:
        if s["name"] == name:
            return s
    s = {"name": name}
    meta["studies"].append(s)
    return s


def last_line(path):
    try:
        with open(path, errors="replace") as f:
            lines = [l.rstrip() for l in f if l.strip()]
    except OSError:
        return ""
    return lines[-1] if lines else ""


def main():
    ap = argparse.ArgumentParser(prog="meta.py")
    ap.add_argument("run_dir")
    ap.add_argument("event", choices=["init", "study-begin", "failure", "skip", "note", "study-end", "finish"])
    for opt in ["argv", "scale", "bin", "data", "keep", "studies", "reps", "slots", "contracts", "accounts",
                "study", "command", "exit-code", "stderr", "text", "commands", "data-dir",
                "data-bytes", "data-kept", "status"]:
        ap.add_argument("--" + opt, default="")
    a = ap.parse_args()

    if a.event == "init":
        affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
        meta = {
            "run": os.path.basename(os.path.normpath(a.run_dir)),
            "started_utc": utc_now(),
            "ended_utc": None,
            "status": "running",
            "command_line": a.argv,
            "scale": a.scale,
            "studies_requested": a.studies.split(),
            "overrides": {k: v for k, v in [("REPS", a.reps), ("SLOTS", a.slots), ("CONTRACTS", a.contracts),
                                            ("ACCOUNTS", a.accounts)] if v},
            "git": git_state(),
            "machine": {
                "cpu_model": cpu_model(),
                "cores": os.cpu_count(),
                "cores_usable": affinity,
                "memory_bytes": memory_bytes(),
                "kernel_release": platform.release(),
                "hostname": platform.node(),
            },
            "load_average_start": load_average(),
            "data_dir": a.data,
            "data_kept": a.keep == "1",
            "studies": [],
            "failures": [],
            "skipped": [],
        }
        version = output_of([a.bin, "--version"])  # absent in older binaries: then omitted
        if version:
            meta["statetree_version"] = version
        write_meta(a.run_dir, meta)
        return 0

    meta = read_meta(a.run_dir)
    if a.event == "study-begin":
        s = study_entry(meta, a.study)
        s.update({"started_utc": utc_now(), "load_average_before": load_average()})
    elif a.event == "failure":
        meta["failures"].append({"study": a.study, "command": a.command, "exit_code": int(a.exit_code),
                                 "stderr_last_line": last_line(a.stderr)})
    elif a.event == "skip":
        meta["skipped"].append({"study": a.study, "command": a.command,
                                "reason": "an earlier command of its configuration failed"})
    elif a.event == "note":
        study_entry(meta, a.study).setdefault("notes", []).append(a.text)
    elif a.event == "study-end":
        s = study_entry(meta, a.study)
        s.update({"ended_utc": utc_now(), "load_average_after": load_average(),
                  "commands": int(a.commands),
                  "failed": sum(1 for f in meta["failures"] if f["study"] == a.study),
                  "skipped": sum(1 for f in meta["skipped"] if f["study"] == a.study),
                  "data_dir": a.data_dir, "data_bytes": int(a.data_bytes or 0),
                  "data_kept": a.data_kept == "1"})
    elif a.event == "finish":
        meta["ended_utc"] = utc_now()
        meta["load_average_end"] = load_average()
        meta["status"] = a.status
    write_meta(a.run_dir, meta)
    return 0


if __name__ == "__main__":
    sys.exit(main())
