#!/usr/bin/env python3
"""bench_loaders: input-loading time of `statetree root --tree mpt` next to the root it feeds.

  bench_loaders.py STATETREE DIR [--sizes 10000,100000,1000000] [--reps 3]

Generates (once, into DIR, with gen_loader_inputs.py) a genesis allocation and a --kv file
of each size, runs `STATETREE root --tree mpt --alloc F --json` and `--kv F --json` REPS
times, and prints a markdown table of the medians of the command's own "load_seconds"
(open + parse + checks, up to the pairs handed to the trie) and "root_seconds". Run it on a
quiet machine; the figures are single-threaded (the command's default --threads 1).
"""
import json
import os
import statistics
import subprocess
import sys


def main() -> int:
    args = sys.argv[1:]
    if len(args) < 2:
        sys.stderr.write(__doc__)
        return 2
    binary, workdir = args[0], args[1]
    sizes, reps = [10_000, 100_000, 1_000_000], 3
    rest = args[2:]
    while rest:
        if rest[0] == "--sizes" and len(rest) > 1:
            sizes = [int(x) for x in rest[1].split(",")]
        elif rest[0] == "--reps" and len(rest) > 1:
            reps = int(rest[1])
        else:
            sys.stderr.write(__doc__)
            return 2
        rest = rest[2:]
    os.makedirs(workdir, exist_ok=True)
    gen = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen_loader_inputs.py")
    print("| input | size | file MB | load ms | root ms | load / root | load ns per item |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for kind, option in (("genesis", "--alloc"), ("kv", "--kv")):
        for n in sizes:
            path = os.path.join(workdir, f"{kind}_{n}.{'json' if kind == 'genesis' else 'txt'}")
            if not os.path.exists(path):
                subprocess.run([sys.executable, gen, kind, str(n), path], check=True)
            loads, roots = [], []
            for _ in range(reps):
                out = subprocess.run([binary, "root", "--tree", "mpt", option, path, "--json"],
                                     check=True, capture_output=True, text=True).stdout
                j = json.loads(out)
                loads.append(j["load_seconds"] * 1e3)
                roots.append(j["root_seconds"] * 1e3)
            load, root = statistics.median(loads), statistics.median(roots)
            mb = os.path.getsize(path) / 1e6
            label = "genesis accounts" if kind == "genesis" else "--kv lines"
            print(f"| {label} | {n:,} | {mb:.1f} | {load:.1f} | {root:.1f} | {load / root:.2f} | {load * 1e6 / n:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
