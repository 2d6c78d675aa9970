#!/usr/bin/env python3
"""report.py: RUN_DIR/REPORT.md of a bench.sh run: the machine and regime, each study's table
beside the published figures (scripts/bench/published/), ratios, and the plots linked.

    report.py RUN_DIR [--bin STATETREE]

A ratio between two of our configurations comes with its bootstrap 95 % CI and Mann-Whitney
p from `statetree compare` (engine/stats: 10,000 resamples, seed 1) whenever both sides
carry repeated samples; a ratio to a published median is a plain quotient (the published
study gives medians only) and says which measure of ours stands for which of theirs.
The block-pipeline studies (cold-tail, mpt-vs-bintrie, slot-budget, hash-vs-traversal) set our
`statetree run` figures beside the published ones and say which reading of the cold tail the
data support; inflight sets `--inflight 2` vs 1 beside the runs' own ceiling; no figure is
made up where a run lacks it.
Reads only the run directory and scripts/bench/published/; exit 0 once REPORT.md is
written, 2 on bad usage. Python 3 standard library only.
"""
import csv
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PUBLISHED = os.path.join(HERE, "published")
sys.path.insert(0, HERE)
import plots  # noqa: E402  (the same readers: load_rows, get, med, rb_at, gd_figures)
import pipeline_figures as pf  # noqa: E402  (the block-pipeline studies' figures)
import crash_figures  # noqa: E402  (the crash study's section)
import hash_traversal  # noqa: E402  (the hash-vs-traversal study's section)
import page_size_qd  # noqa: E402  (the page-size study's table at every queue depth)
import slot_budget  # noqa: E402  (the slot-budget study's section)
import inflight  # noqa: E402  (the inflight study's section)
import storage_figures  # noqa: E402  (the snapshot and database studies' sections)

get, med, rb_at = plots.get, plots.med, plots.rb_at


# ---- figures ------------------------------------------------------------------------------

def fmt(v, digits=2):
    if v is None:
        return "-"
    if isinstance(v, float) and abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:.{digits}f}" if isinstance(v, float) else str(v)


def ratio(a, b):
    return None if a is None or b in (None, 0) else a / b


def x(v):
    return "-" if v is None else f"{v:.2f}x"


class Comparer:
    """Ratio B/A of two summaries with samples, through `statetree compare`."""

    def __init__(self, binary):
        self.binary = binary
        self.tmp = tempfile.mkdtemp(prefix="statetree-report-")
        self.used = False

    def ci(self, a, b):
        """(ratio, lo, hi, p, n_a, n_b) of median(b) / median(a), or None without samples."""
        if not self.binary or not all(isinstance(v, dict) and len(v.get("samples", [])) >= 2 for v in (a, b)):
            return None
        pa, pb = os.path.join(self.tmp, "a.json"), os.path.join(self.tmp, "b.json")
        for path, v in ((pa, a), (pb, b)):
            with open(path, "w") as f:
                json.dump({"m": {"samples": v["samples"]}}, f)
        try:
            r = subprocess.run([self.binary, "compare", pa, pb, "--metric", "m", "--json"], capture_output=True,
                               text=True, timeout=60)
            row = json.loads(r.stdout)["rows"][0] if r.returncode == 0 else None
        except (OSError, ValueError, KeyError, IndexError, subprocess.SubprocessError):
            row = None
        if row is None:
            return None
        self.used = True
        rb = row.get("ratio_b_over_a", {})
        lo, hi = (rb.get("ci95") or [None, None])[:2]
        return (rb.get("median_ratio"), lo, hi, get(row, "mann_whitney", "p_two_sided"), get(row, "a", "n"),
                get(row, "b", "n"))

    def cell(self, a, b):
        """'1.23x [1.10, 1.40], p 0.01 (n 5/5)' or the plain ratio of the medians."""
        c = self.ci(a, b)
        if c is None or c[0] is None:
            return x(ratio(med(b), med(a)))
        r, lo, hi, p, na, nb = c
        ci = f" [{lo:.2f}, {hi:.2f}]" if lo is not None and hi is not None else ""
        pp = f", p {p:.2g}" if p is not None else ""
        return f"{r:.2f}x{ci}{pp} (n {na}/{nb})"

    def close(self):
        for n in ("a.json", "b.json"):
            try:
                os.remove(os.path.join(self.tmp, n))
            except OSError:
                pass
        try:
            os.rmdir(self.tmp)
        except OSError:
            pass


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(out)


def load_published():
    pub = {"figures": {}, "mpt_vs_bt": [], "gd": {}}
    try:
        with open(os.path.join(PUBLISHED, "figures.json")) as f:
            pub["figures"] = json.load(f)
    except (OSError, ValueError):
        pass
    try:
        with open(os.path.join(PUBLISHED, "summary_mpt_vs_bt_medians.csv")) as f:
            pub["mpt_vs_bt"] = list(csv.DictReader(f))
    except OSError:
        pass
    pub["gd"] = plots.published_gd()
    return pub


# ---- sections -----------------------------------------------------------------------------

class Report:
    def __init__(self, run_dir, binary):
        self.run = run_dir
        self.cmp = Comparer(binary)
        self.pub = load_published()
        self.lines = []
        try:
            with open(os.path.join(run_dir, "meta.json")) as f:
                self.meta = json.load(f)
        except (OSError, ValueError):
            self.meta = {}
        try:
            with open(os.path.join(run_dir, "plots", "plots.json")) as f:
                self.plots = json.load(f).get("plots", [])
        except (OSError, ValueError):
            self.plots = []
        self.studies = [s.get("name") for s in self.meta.get("studies", [])]
        self.rows = {s: plots.load_rows(run_dir, s) for s in self.studies}

    def w(self, *text):
        self.lines.extend(text)

    def study_meta(self, name):
        return next((s for s in self.meta.get("studies", []) if s.get("name") == name), {})

    def plots_of(self, study):
        for p in self.plots:
            if p.get("study") == study:
                state = "" if p.get("ok") else f" (FAILED: {p.get('why')})"
                self.w(f"![{p['title']}]({p['file']}){state}", "")

    def regime_line(self, study):
        s = self.study_meta(study)
        lb, la = s.get("load_average_before"), s.get("load_average_after")
        fails = [f for f in self.meta.get("failures", []) if f.get("study") == study]
        self.w(f"_{s.get('commands', '-')} commands, {s.get('failed', 0)} failed, {s.get('skipped', 0)} skipped; "
               f"{s.get('started_utc', '-')} to {s.get('ended_utc', '-')}; load average (1 min) "
               f"{lb[0] if lb else '-'} before, {la[0] if la else '-'} after._", "")
        for f in fails:
            self.w(f"- FAILED (exit {f.get('exit_code')}): `{f.get('command')}`: {f.get('stderr_last_line')}")
        if fails:
            self.w("")

    def header(self):
        m = self.meta
        mach = m.get("machine", {})
        git = m.get("git") or {}
        self.w(f"# statetree bench report: run {m.get('run', os.path.basename(self.run))}", "",
               f"`{m.get('command_line', './bench.sh')}`, scale **{m.get('scale', '-')}**, status {m.get('status', '-')}; "
               f"{m.get('started_utc', '-')} to {m.get('ended_utc') or '(running)'}.", "",
               "## Machine and regime", "",
               f"- machine: {mach.get('cpu_model', '-')}, {mach.get('cores', '-')} cores "
               f"({mach.get('cores_usable', '-')} usable), {fmt((mach.get('memory_bytes') or 0) / 2**30, 1)} GiB, "
               f"Linux {mach.get('kernel_release', '-')}",
               f"- {(m.get('statetree_version') or 'statetree -').splitlines()[0]}, checkout at commit "
               f"{(git.get('commit') or '-')[:12]}"
               f"{' (uncommitted changes)' if git.get('dirty') else ''}")
        cold = set()
        for rows in self.rows.values():
            for r in rows:
                if r.get("command") == "read-bench":
                    cold.add(get(r, "cold", "protocol") or "none: host-warm (no --cold)")
                if r.get("command") == "run":
                    dropped = get(r, "regime", "page_cache", "dropped")
                    cold.add("run: " + (get(r, "regime", "page_cache", "protocol") if dropped else
                                        "none before the run: host-warm (no --cold)"))
        if cold:
            self.w(f"- cold protocol of the lookups: {', '.join(sorted(cold))} (drop_caches when root, else "
                   "posix_fadvise; O_DIRECT reads either way)")
        pinned, unpinned = set(), set()
        try:
            with open(os.path.join(self.run, "commands.txt")) as f:
                for line in f:
                    words = line.split()
                    if len(words) < 2 or line.startswith("#") or words[0].endswith("setup.sh") or words[0] == "rm":
                        continue
                    script = words[0].endswith((".sh", ".py"))  # fuzz.sh, crash_run.py
                    name = os.path.basename(words[0]) if script else words[1]
                    (pinned if "--pin" in words else unpinned).add(name)
        except OSError:
            pass
        if pinned or unpinned:
            self.w(f"- pinned (`--pin`, commands.txt): {', '.join(sorted(pinned)) or 'none'}; not pinned: "
                   f"{', '.join(sorted(unpinned - pinned)) or 'none'}"
                   f"{'; pinned in some runs only: ' + ', '.join(sorted(pinned & unpinned)) if pinned & unpinned else ''}")
        la, le = m.get("load_average_start"), m.get("load_average_end")
        self.w(f"- load average (1, 5, 15 min): {la or '-'} at the start, {le or '-'} at the end; per study below",
               "- medians over repetitions; a ratio between two of our configurations gives the bootstrap 95 % CI "
               "of the ratio of medians and the Mann-Whitney p (`statetree compare`), n = samples per side",
               "- published figures: scripts/bench/published/ (README there names the sources); they come from "
               "other machines and far larger states, so a ratio to them is a shape to compare, not a speed-up", "")
        if m.get("failures"):
            self.w(f"**{len(m['failures'])} commands failed** (each named in its study below).", "")

    # ---- per study -----------------------------------------------------------------------
    def merkle(self):
        rows = self.rows["merkle"]
        main, sweep = (rows, []) if not rows else (
            [r for r in rows if r.get("leaves") == rows[0].get("leaves")],
            [r for r in rows if r.get("leaves") != rows[0].get("leaves")])
        t = []
        for r in main:
            tot = r.get("total_ns_per_leaf")
            t.append([f"{r.get('kernel')}, {r.get('threads')} thread(s)", fmt(med(tot)),
                      f"[{fmt(get(tot, 'min'))}, {fmt(get(tot, 'max'))}]", fmt(med(r.get("limit_ns_per_leaf"))),
                      "-" if r.get("efficiency") is None else f"{100 * r['efficiency']:.0f} %"])
            for name, b in (r.get("baselines") or {}).items():
                bt = b.get("total_ns_per_leaf")
                t.append([name, fmt(med(bt)), f"[{fmt(get(bt, 'min'))}, {fmt(get(bt, 'max'))}]", "-", "-"])
        self.w(f"{rows[0].get('leaves') if rows else '-'} leaves, ns per leaf:", "",
               table(["configuration", "median", "[min, max]", "kernel limit", "efficiency"], t), "")
        one = next((r for r in main if r.get("baselines")), None)
        two = next((r for r in main if r.get("threads") == 2), None)
        if one and two:
            self.w(f"- 2 threads / 1 thread (time): {self.cmp.cell(one.get('total_ns_per_leaf'), two.get('total_ns_per_leaf'))}")
        pub = self.pub["figures"].get("merkle_ns_per_leaf", {})
        if one and pub:
            ours = med(one.get("total_ns_per_leaf"))
            ossl = med(get(one, "baselines", "openssl_sha256_init_update_final", "total_ns_per_leaf"))
            self.w(f"- published (1M leaves, one isolated core of another CPU): OpenSSL C {pub.get('openssl_c')}, "
                   f"SHA-NI C {pub.get('shani_c')}, best port {pub.get('best_port')} ns/leaf. Ours / best port: "
                   f"{x(ratio(ours, pub.get('best_port')))}; our OpenSSL Init/Update/Final loop / their OpenSSL C: "
                   f"{x(ratio(ossl, pub.get('openssl_c')))}; ours / our OpenSSL loop (same core, same run): "
                   f"{x(ratio(ours, ossl))}")
        if sweep:
            self.w("- size sweep (1 pinned thread): " + "; ".join(
                f"{r.get('leaves')} leaves {fmt(med(r.get('total_ns_per_leaf')))} ns"
                for r in sorted(sweep, key=lambda r: r.get("leaves", 0))))
        self.w("")

    def kernels(self):
        for r in self.rows["kernels"][:1]:
            res = r.get("results", [])
            kernels = []
            for y in res:
                if y.get("kernel") not in kernels:
                    kernels.append(y.get("kernel"))
            entries = []
            for y in res:
                e = y.get("entry", "-")
                if " " not in e and len(e) <= 16 and e not in entries:
                    entries.append(e)
            t = []
            for e in entries:
                t.append([e] + [fmt(med(get(next((y for y in res if y.get("kernel") == k and y.get("entry") == e), None),
                                                "ns_per_compression"))) for k in kernels])
            self.w(f"ns per compression, median of {r.get('reps')} reps (active kernel {r.get('active_kernel')}):", "",
                   table(["entry"] + kernels, t), "")

    def hash_vs_bare(self):
        pub = self.pub["figures"].get("hash_vs_traversal", {})
        t = []
        for r in self.rows.get("mpt", [])[:1]:
            s, inc = r.get("from_scratch", {}), r.get("incremental", {})
            t.append([f"MPT, {s.get('entries')} entries from scratch", fmt(med(s.get("build_1t_ms")), 3),
                      fmt(med(s.get("bare_keccak_ms")), 3), self.cmp.cell(s.get("bare_keccak_ms"), s.get("build_1t_ms")), "-"])
            t.append([f"MPT, block of {inc.get('writes')} writes into {inc.get('slots')} slots",
                      fmt(med(inc.get("block_ms")), 3), fmt(med(inc.get("bare_keccak_ms")), 3),
                      self.cmp.cell(inc.get("bare_keccak_ms"), inc.get("block_ms")),
                      f"{get(pub, 'mpt', 'ratio')}x ({get(pub, 'mpt', 'hash_ms')} / {get(pub, 'mpt', 'pure_hash_ms')} ms)"])
        for r in self.rows.get("bintrie", [])[:1]:
            s, up = r.get("from_scratch", {}), r.get("incremental_update", {})
            t.append([f"binary trie, {r.get('keys')} keys from scratch", fmt(med(s.get("root_1t_ms")), 3),
                      fmt(med(s.get("bare_hash_ms")), 3), self.cmp.cell(s.get("bare_hash_ms"), s.get("root_1t_ms")), "-"])
            t.append([f"binary trie, batch of {r.get('writes')} overwrites", fmt(med(up.get("ms")), 3),
                      fmt(med(up.get("bare_hash_ms")), 3), self.cmp.cell(up.get("bare_hash_ms"), up.get("ms")),
                      f"{get(pub, 'bintrie', 'ratio')}x ({get(pub, 'bintrie', 'hash_ms')} / "
                      f"{get(pub, 'bintrie', 'pure_hash_ms')} ms)"])
        if t:
            self.w("Hash versus traversal, in memory: the engine's time against the bare hashing of the same nodes "
                   "(the published column: go-ethereum's state hash time of an erc20_approve block against the pure "
                   "hash of its nodes).", "",
                   table(["what", "engine ms", "bare hash ms", "engine / bare (ours)", "published"], t), "")

    def bintrie_blobs(self):
        for r in self.rows["bintrie"][:1]:
            blobs = r.get("blobs", [])
            if blobs:
                self.w(table(["GD", "group blobs", "full", "mean bytes", "group MiB"],
                             [[b.get("gd"), b.get("group_blobs"), b.get("group_blobs_full"),
                               fmt(med(b.get("group_blob_bytes_mean")), 1), fmt((b.get("group_bytes") or 0) / 2**20, 2)]
                              for b in blobs]), "")

    def io(self):
        for r in self.rows["io"][:1]:
            t = []
            for q in r.get("results", []):
                t.append([q.get("qd"), fmt(med(q.get("iops")), 0), fmt(med(q.get("us_per_read_amortized"))),
                          fmt(med(get(q, "raw", "us_per_read_amortized"))),
                          self.cmp.cell(get(q, "raw", "us_per_read_amortized"), q.get("us_per_read_amortized")),
                          fmt(med(get(q, "rocksdb", "us_per_read_amortized"))),
                          self.cmp.cell(q.get("us_per_read_amortized"), get(q, "rocksdb", "us_per_read_amortized"))])
            self.w(f"{r.get('size_mib')} MiB arena file, {r.get('page_size')} B pages, {r.get('reads_per_run')} reads "
                   f"per run, {r.get('reps')} reps; us per read amortized:", "",
                   table(["QD", "IOPS", "store", "raw loop", "store / raw", "RocksDB", "RocksDB / store"], t), "")
            if r.get("regime_note"):
                self.w(f"_{r['regime_note']}_", "")

    def tree_pair_lookups(self, rows, label):
        """BT / MPT cold lookup ratios per QD, beside the published per-miss and per-slot ratios."""
        rb = {}
        for r in rows:
            if r.get("command") == "read-bench" and r.get("store", "arena") == "arena":
                rb.setdefault(r.get("tree"), r)
        if "mpt" not in rb or "bintrie" not in rb:
            return
        pubf = self.pub["figures"].get("read_per_cache_miss_ms", {})
        per_slot = {r["config"]: float(r["ms_per_slot_read"]) for r in self.pub["mpt_vs_bt"]
                    if r.get("benchmark") == "erc20_balanceof"}
        pub_slot = ratio(per_slot.get("bt-gd5"), per_slot.get("mpt"))
        t = []
        for q in rb["mpt"].get("batched", []):
            qd = q.get("qd")
            b = rb_at(rb["bintrie"], qd)
            t.append([qd, fmt(med(get(q, "batched", "us_per_lookup")), 1), fmt(med(get(b, "batched", "us_per_lookup")), 1),
                      self.cmp.cell(get(q, "batched", "us_per_lookup"), get(b, "batched", "us_per_lookup")),
                      fmt(med(get(q, "batched", "page_reads_per_lookup"))), fmt(med(get(b, "batched", "page_reads_per_lookup")))])
        self.w(f"{label}: binary trie (GD 5) against MPT, cold lookups of existing slots, arena store:", "",
               table(["QD", "MPT us/lookup", "BT us/lookup", "BT / MPT (ours)", "MPT reads/lookup", "BT reads/lookup"], t), "",
               f"Published (erc20_balanceof, go-ethereum on Pebble, ~400M entries): BT / MPT {x(pub_slot)} per slot read, "
               f"{pubf.get('ratio', '-')}x per cache miss ({pubf.get('bintrie', '-')} vs {pubf.get('mpt', '-')} ms). "
               "Ours are one batched lookup each on a far smaller state, so the published ratio is the shape to "
               "compare, not the times.", "")

    def commits(self, rows, label):
        cs = [r for r in rows if r.get("command") == "commit"]
        if not cs:
            return
        t = [[plots.db_label(c), c.get("blocks_applied"), fmt(med(c.get("commit_ms"))), fmt(med(c.get("read_ms"))),
              fmt(med(c.get("resolve_ms"))), fmt(med(c.get("apply_ms"))), fmt(med(c.get("write_ms"))),
              fmt(med(c.get("publish_ms"))), fmt(med(c.get("pages_written")), 0)] for c in cs]
        self.w(f"{label}, per block (median):", "",
               table(["database", "blocks", "commit ms", "read", "resolve", "apply", "write", "publish", "pages written"], t), "")
        m = next((c for c in cs if c.get("tree") == "mpt"), None)
        b = next((c for c in cs if c.get("tree") == "bintrie"), None)
        if m and b:
            pub = {r["config"]: r for r in self.pub["mpt_vs_bt"] if r.get("benchmark") == "erc20_approve"}
            pr = None
            if "mpt" in pub and "bt-gd5" in pub:
                pr = ratio(float(pub["bt-gd5"]["state_hash_ms"]) + float(pub["bt-gd5"]["commit_ms"]),
                           float(pub["mpt"]["state_hash_ms"]) + float(pub["mpt"]["commit_ms"]))
            self.w(f"- BT / MPT commit per block (ours, {m.get('writes_per_block')} writes): "
                   f"{self.cmp.cell(m.get('commit_ms'), b.get('commit_ms'))}; published erc20_approve state hash + "
                   f"commit: {x(pr)} (but their blocks hold 4,094 approve writes of another gas rule each)", "")

    def persist(self):
        rows = self.rows["persist"]
        t = []
        for r in rows:
            if r.get("command") == "build":
                t.append([plots.db_label(r), r.get("slots"), fmt(r.get("wall_seconds")), fmt(r.get("disk_bytes_per_slot"), 1),
                          fmt((r.get("peak_rss_bytes") or 0) / 2**20, 0)])
        if t:
            self.w(table(["database", "slots", "build s", "bytes on disk per slot", "peak RSS MiB"], t), "")
        self.tree_pair_lookups(rows, "persist")
        self.commits(rows, "Block commits")

    def queue_depth(self):
        rows = self.rows["queue-depth"]
        rb = {r.get("tree"): r for r in rows if r.get("command") == "read-bench"}
        io = next((r for r in rows if r.get("command") == "io-bench"), None)
        t = []
        qds = sorted({q.get("qd") for r in rb.values() for q in r.get("batched", [])} |
                     {q.get("qd") for q in (io or {}).get("results", [])})
        for qd in qds:
            m, b = rb_at(rb.get("mpt"), qd), rb_at(rb.get("bintrie"), qd)
            q = next((y for y in (io or {}).get("results", []) if y.get("qd") == qd), None)
            raw = get(q, "raw", "us_per_read_amortized")
            t.append([qd, fmt(med(get(m, "batched", "us_per_page_read"))), fmt(med(get(b, "batched", "us_per_page_read"))),
                      fmt(med(get(m, "raw", "us_per_read"))), fmt(med(raw)),
                      self.cmp.cell(get(m, "raw", "us_per_read"), get(m, "batched", "us_per_page_read")),
                      self.cmp.cell(get(b, "raw", "us_per_read"), get(b, "batched", "us_per_page_read"))])
        self.w("us per page read (median) against queue depth: the trees' cold batched lookups, read-bench's "
               "store-less reads of the same file, io-bench's raw io_uring loop:", "",
               table(["QD", "MPT", "BT", "raw (read-bench)", "raw (io-bench)", "MPT / raw", "BT / raw"], t), "",
               "The published study ran go-ethereum's sequential reads (QD about 1) and named parallel execution "
               "to raise the queue depth an open question: this curve is what deeper queues give on this device.", "")
        self.tree_pair_lookups(rows, "queue-depth")

    def group_depth(self):
        rows = self.rows["group-depth"]
        figs = plots.gd_figures(rows)
        pub = self.pub["gd"]
        rb = {r.get("group_depth"): r for r in rows if r.get("command") == "read-bench"}
        builds = {r.get("group_depth"): r for r in rows if r.get("command") == "build"}
        gd_of_db = {r.get("db"): r.get("group_depth") for r in rows if r.get("group_depth")}
        commits = {gd_of_db.get(r.get("db")): r for r in rows if r.get("command") == "commit"}

        def prel(bench, col, gd):
            b = pub.get(bench, {})
            return ratio(float(b[gd][col]), float(b[5][col])) if gd in b and 5 in b else None
        t = []
        for gd in range(1, 9):
            page = get(builds.get(gd), "page_size") or get(rb.get(gd), "page_size")
            t.append([gd, "-" if not page else f"{page // 1024} KiB", fmt(figs.get(gd, {}).get("bytes_per_slot"), 1),
                      fmt(figs.get(gd, {}).get("lookup_us_qd32"), 1),
                      self.cmp.cell(get(rb_at(rb.get(5), 32), "batched", "us_per_lookup"),
                                    get(rb_at(rb.get(gd), 32), "batched", "us_per_lookup")) if gd in rb and 5 in rb else "-",
                      x(prel("erc20_balanceof", "state_read_ms", gd)),
                      fmt(figs.get(gd, {}).get("commit_ms")),
                      self.cmp.cell(get(commits.get(5), "commit_ms"), get(commits.get(gd), "commit_ms"))
                      if gd in commits and 5 in commits else "-",
                      x(prel("erc20_approve", "total_ms", gd)), x(prel("mixed_sload_sstore", "total_ms", gd))])
        self.w("Binary trie per group depth; every ratio is to GD 5 (ours with its bootstrap CI). Published: "
               "go-ethereum's group-depth sweep, medians per block.", "",
               table(["GD", "page", "bytes/slot", "lookup us, QD 32", "ours / GD 5", "published balanceOf read / GD 5",
                      "commit ms", "ours / GD 5", "published approve total / GD 5", "published mixed total / GD 5"], t), "")
        best_pub = min(pub.get("erc20_balanceof", {}).items(), key=lambda kv: float(kv[1]["state_read_ms"]), default=None)
        def page(gd):
            return get(builds.get(gd), "page_size") or get(rb.get(gd), "page_size")
        valid = {gd: f["lookup_us_qd32"] for gd, f in figs.items() if f.get("lookup_us_qd32") and page(gd) == 4096}
        if valid and best_pub:
            best = min(valid, key=valid.get)
            self.w(f"- fastest cold lookup at QD 32 on 4 KiB pages: GD {best}; the published reads were fastest at "
                   f"GD {best_pub[0]}. GD 7 and 8 run on 16 KiB pages here (a full group exceeds a 4 KiB page, which "
                   "the published study's 4 KB database blocks straddled), so their lookups also read 4x the bytes "
                   "per page: compare them with the page-size study, not with GD 1..6.", "")

    def page_size(self):
        recs = page_size_qd.records(self.rows["page-size"], self.cmp.ci)
        self.w(*page_size_qd.report_lines(recs, table))
        page_size_qd.write_files(self.run, recs)
        rows = [r for r in self.rows["page-size"] if r.get("command") in ("build", "read-bench", "commit")]
        by_db = {}
        for r in rows:
            by_db.setdefault(r.get("db"), {})[r.get("command")] = r
        t = []
        by_tree = {}
        for db, d in by_db.items():
            any_row = d.get("build") or d.get("read-bench") or d.get("commit")
            by_tree.setdefault(any_row.get("tree"), {})[any_row.get("page_size")] = d
            q32 = rb_at(d.get("read-bench"), 32)
            t.append([any_row.get("tree"), any_row.get("page_size"), fmt(get(d.get("build"), "disk_bytes_per_slot"), 1),
                      fmt(med(get(rb_at(d.get("read-bench"), 1), "batched", "us_per_lookup")), 1),
                      fmt(med(get(q32, "batched", "us_per_lookup")), 1), fmt(med(get(q32, "batched", "us_per_page_read")), 1),
                      fmt(med(get(q32, "batched", "page_reads_per_lookup"))), fmt(med(get(d.get("commit"), "commit_ms")))])
        self.w(table(["tree", "page B", "bytes/slot", "lookup us QD 1", "lookup us QD 32", "us/page read QD 32",
                      "reads/lookup", "commit ms"], t), "")
        pub = self.pub["figures"].get("page_size", {})
        for tree, d in by_tree.items():
            a, b = d.get(4096), d.get(16384)
            if a and b:
                ua = get(rb_at(a.get("read-bench"), 32), "batched", "us_per_lookup")
                ub = get(rb_at(b.get("read-bench"), 32), "batched", "us_per_lookup")
                pa = med(get(rb_at(a.get("read-bench"), 32), "batched", "us_per_page_read"))
                pb = med(get(rb_at(b.get("read-bench"), 32), "batched", "us_per_page_read"))
                thr = ratio(None if pa is None else 4 * pa, pb)
                self.w(f"- {tree}: 16 KiB / 4 KiB lookup time at QD 32: {self.cmp.cell(ua, ub)}; bytes per page read "
                       f"per us, 16 KiB / 4 KiB: {x(thr)} (published, raw NVMe reads: {pub.get('ratio', '-')}x)")
        self.w("")

    def fuzz(self):
        t = []
        for r in self.rows["fuzz"]:
            runs, secs = r.get("runs"), r.get("seconds")
            t.append([r.get("target"), secs, "-" if runs is None else f"{runs:,}",
                      "-" if not runs or not secs else f"{runs / secs:,.0f}", r.get("corpus"), r.get("crashes")])
        self.w(table(["target", "seconds", "inputs run", "per second", "corpus", "crashes"], t), "")

    # ---- the block-pipeline studies -----------------------------------------------------
    def cold_tail(self):
        ct = pf.cold_tail(self.rows["cold-tail"])
        pub = self.pub["figures"].get("cold_tail", {})
        txs = sorted({t for d in ct.values() for t in d})
        if not txs:
            self.w("(no results)", "")
            return
        t1, tn = txs[0], txs[-1]
        others = sorted({k[2] for k in ct if k[2] > 0})
        self.w("`statetree run --workload erc20_balanceof --txs T` on a fresh copy of the state per run "
               "(commands.txt): each transaction makes the same number of balanceOf calls; **with the other work** "
               f"each transaction after a block's first also reads {', '.join(map(str, others)) or '-'} distinct cold "
               "slots of other contracts (`--other-slots`, the published blocks' conditions). Per block, the state "
               "read (prefetch + traverse) divided by the misses (go-ethereum's ms per cache miss), by the distinct "
               "slots read and by the device reads; sums over the run's blocks. Published: go-ethereum's binary "
               f"trie, {pub.get('tx1_ms', '-')} ms per miss at 1 transaction, {pub.get('tx9_ms', '-')} ms at 9 "
               f"({pub.get('ratio', '-')}x). `geth ms/main miss` counts misses as go-ethereum does: a slot a "
               "worker read first is a cache hit for the main traversal (misses less the workers' warm hits).", "")
        for tree in pf.TREES:
            if not any(k[0] == tree for k in ct):
                continue
            for other in (True, False):
                head = ["txs"]
                for reader in pf.READERS:
                    head += [f"{reader} ms/miss", f"{reader} ms/slot", f"{reader} ms/dev.read"]
                    if reader == "geth":
                        head.append("geth ms/main miss")
                if tree == "bintrie" and other:
                    head.append("published ms/miss")
                rows = []
                for t in txs:
                    row = [t]
                    for reader in pf.READERS:
                        d = next((v for k, v in ct.items() if k[0] == tree and k[1] == reader and (k[2] > 0) == other),
                                 {})
                        v = d.get(t, {})
                        row += [fmt(v.get("ms_per_miss"), 4), fmt(v.get("ms_per_slot"), 4),
                                fmt(v.get("ms_per_device_read"), 4)]
                        if reader == "geth":
                            row.append(fmt(v.get("ms_per_main_miss"), 4))
                    if tree == "bintrie" and other:
                        row.append({1: pub.get("tx1_ms"), 9: pub.get("tx9_ms")}.get(t, "") or "")
                    rows.append(row)
                self.w(f"**{pf.TREE_LABEL[tree]}, {'with' if other else 'without'} the other work**", "",
                       table(head, rows), "")
        # Which mechanism: the figures at the most transactions over those at one.
        self.w(f"**What rises from {t1} to {tn} transactions per block** (with the other work; figure at {tn} / "
               f"figure at {t1}):", "")
        rows, facts = [], {}
        for tree in pf.TREES:
            for reader in pf.READERS:
                d = next((v for k, v in ct.items() if k[0] == tree and k[1] == reader and k[2] > 0), None)
                if not d or t1 not in d or tn not in d:
                    continue
                a, b = d[t1], d[tn]
                fr = {m: ratio(b.get(m), a.get(m)) for m in ("ms_per_miss", "ms_per_main_miss", "ms_per_slot",
                                                             "ms_per_device_read", "device_reads_per_slot",
                                                             "misses_per_slot")}
                fr["lock_wait"] = (a.get("lock_wait_ms_per_block"), b.get("lock_wait_ms_per_block"))
                facts[(tree, reader)] = fr
                rows.append([pf.TREE_LABEL[tree], reader, x(fr["ms_per_miss"]), x(fr["ms_per_main_miss"]),
                             x(fr["ms_per_slot"]), x(fr["ms_per_device_read"]), x(fr["device_reads_per_slot"]),
                             x(fr["misses_per_slot"]),
                             f"{fmt(fr['lock_wait'][0], 1)} -> {fmt(fr['lock_wait'][1], 1)}" if reader == "geth" else "-"])
        self.w(table(["tree", "reader", "ms/miss", "ms/main miss (geth)", "ms/slot", "ms/dev.read", "dev.reads/slot",
                      "misses/slot", f"geth lock wait ms/block, {t1} -> {tn}"], rows), "")
        self.w(*self.cold_tail_reading(facts, t1, tn), "")

    @staticmethod
    def cold_tail_reading(facts, t1, tn):
        """The sentences the figures support (thresholds: a change within 1.2x is flat)."""
        out = []
        def rises(v):
            return v is not None and v > 1.2
        def flat(v):
            return v is not None and 1 / 1.2 <= v <= 1.2
        for tree in pf.TREES:
            f = {r: facts.get((tree, r)) for r in pf.READERS}
            if not any(f.values()):
                continue
            name = pf.TREE_LABEL[tree]
            parts = []
            colder = [r for r, v in f.items() if v and rises(v["device_reads_per_slot"])]
            if colder:
                parts.append(f"device reads per slot rise with the transaction count under {', '.join(colder)} "
                             "(colder paths: more pages per slot)")
            else:
                parts.append("device reads per slot do not rise by more than 1.2x under any reader, so the paths do "
                             "not get colder")
            g = f.get("geth")
            if g:
                lw0, lw1 = g["lock_wait"]
                if rises(g["ms_per_main_miss"]) and not rises(g["ms_per_slot"]):
                    parts.append(f"with geth, counted as go-ethereum counts (a slot a worker read first is the main "
                                 f"traversal's hit), the cost per miss rises {x(g['ms_per_main_miss'])} while the cost "
                                 f"per distinct slot changes {x(g['ms_per_slot'])} and per device read "
                                 f"{x(g['ms_per_device_read'])}: the denominator shrinks (the workers' reads leave the "
                                 "main traversal's misses) while the time per slot does not rise: a shrinking denominator, not slower "
                                 "reads")
                elif rises(g["ms_per_main_miss"]):
                    parts.append(f"with geth, counted as go-ethereum counts, the cost per miss rises "
                                 f"{x(g['ms_per_main_miss'])} and per distinct slot {x(g['ms_per_slot'])}")
                else:
                    parts.append(f"with geth the cost per miss does not rise ({x(g['ms_per_miss'])}; "
                                 f"{x(g['ms_per_main_miss'])} counted as go-ethereum counts)")
                if lw0 is not None and lw1 is not None:
                    parts.append(f"the main traversal's wait for the one reader's mutex grows from {fmt(lw0, 1)} to "
                                 f"{fmt(lw1, 1)} ms per block ({'contention' if lw1 > 1.2 * lw0 + 1 else 'no growth'})")
            def trend(v):
                return "stays within 1.2x" if flat(v) else "rises" if rises(v) else "falls" if v is not None else "-"
            b = f.get("bal")
            if b:
                parts.append(f"with bal the cost per miss {trend(b['ms_per_miss'])} ({x(b['ms_per_miss'])})")
            sr = f.get("serial")
            if sr:
                parts.append(f"with serial (each slot read when its transaction reaches it, one at a time) it "
                             f"{trend(sr['ms_per_miss'])} ({x(sr['ms_per_miss'])})")
            falls = [r for r, v in f.items() if v and v["ms_per_miss"] is not None and v["ms_per_miss"] < 1 / 1.2]
            if falls:
                parts.append(f"where it falls ({', '.join(falls)}), a block's reader keeps the pages it read for the "
                             "rest of the block, so more slots per block share the upper trie levels read once")
            out.append(f"- {name}: " + "; ".join(parts) + ".")
        out.append("- The published rise (7.5x per miss from 1 to 9 transactions) was read as colder trie paths. "
                   "Colder paths would show as more device reads per distinct slot and a higher cost per slot; a rise "
                   "per miss without them is the denominator (and the mutex), not the trie.")
        return out

    def mpt_vs_bintrie(self):
        mb = pf.mpt_vs_bintrie(self.rows["mpt-vs-bintrie"])
        pub = plots.published_mpt_vs_bt()
        if not mb:
            self.w("(no results)", "")
            return
        self.w("`statetree run --workload W --txs 1` (explicit calls, the gas caps lifted) on a fresh copy of the "
               "state per tree x workload x reader (commands.txt); each run's blocks are the repetitions (each "
               "block's reader starts cold). Per slot: state read / slots read (`ms_per_slot_read`) and block total "
               "/ slots read (`ms_per_slot_total`), medians over the blocks; binary trie / MPT with the bootstrap 95 % "
               "CI of the ratio of medians. Published: go-ethereum, medians per block (cold cache, restart per run).",
               "")
        rows = []
        for w in pf.WORKLOADS:
            for reader in ("bal", "serial"):
                a, b = mb.get(("mpt", w, reader)), mb.get(("bintrie", w, reader))
                if not a and not b:
                    continue
                a, b = a or {}, b or {}
                cells = [w, reader, fmt(a.get("slots_read"), 0), fmt(a.get("slots_written"), 0)]
                for m in ("ms_per_slot_read", "ms_per_slot_total"):
                    sa, sb = pf.samples(a.get(m, [])), pf.samples(b.get(m, []))
                    cells += [fmt(med(sa), 4), fmt(med(sb), 4), self.cmp.cell(sa, sb) if sa and sb else "-"]
                rows.append(cells)
        self.w(table(["workload", "reader", "slots read", "written", "MPT ms/slot read", "BT ms/slot read",
                      "BT / MPT read", "MPT ms/slot total", "BT ms/slot total", "BT / MPT total"], rows), "")
        raw = pf.raw_us_per_read(self.rows["mpt-vs-bintrie"])
        drows = [[pf.TREE_LABEL[t], w, reader, fmt(mb[(t, w, reader)].get("device_reads_per_slot"), 2), fmt(raw[t], 2),
                  x(pf.over_device(mb[(t, w, reader)], raw[t]))]
                 for t in pf.TREES if t in raw for w in pf.WORKLOADS for reader in ("bal", "serial")
                 if (t, w, reader) in mb]
        if drows:
            self.w("Against the device: the raw loop (read-bench's store-less random page reads of the base's arena "
                   "file at QD 32, cold) gives the amortized cost of one device read; ms per slot read / (device "
                   "reads per slot x that) is 1.0 when a slot costs its device reads and nothing else.", "",
                   table(["tree", "workload", "reader", "device reads / slot", "raw loop us / read",
                          "ms per slot read / device floor"], drows), "")
        prow = []
        for w in pf.WORKLOADS:
            m, b = pub.get((w, "mpt")), pub.get((w, "bintrie"))
            if not m or not b:
                continue
            def q(k):
                try:
                    return x(float(b[k]) / float(m[k]))
                except (KeyError, ValueError, ZeroDivisionError):
                    return "-"
            prow.append([w, m.get("storage_slots_read"), m.get("ms_per_slot_read"), b.get("ms_per_slot_read"),
                         q("ms_per_slot_read"), m.get("ms_per_slot_total"), b.get("ms_per_slot_total"),
                         q("ms_per_slot_total"), m.get("ms_per_cache_miss"), b.get("ms_per_cache_miss")])
        if prow:
            self.w("Published (go-ethereum, binary trie GD 5 vs MPT; slots per block as published):", "",
                   table(["workload", "slots read", "MPT ms/slot read", "BT ms/slot read", "BT / MPT read",
                          "MPT ms/slot total", "BT ms/slot total", "BT / MPT total", "MPT ms/miss", "BT ms/miss"],
                         prow), "")

    # ---- the storage studies and the slot budget (their sections: storage_figures.py, slot_budget.py)
    def snapshot(self):
        per = {r["config"]: r for r in self.pub["mpt_vs_bt"] if r.get("benchmark") == "erc20_balanceof"}
        def q(k):
            try:
                return x(float(per["bt-gd5"][k]) / float(per["mpt"][k]))
            except (KeyError, ValueError, ZeroDivisionError):
                return "-"
        self.w(*storage_figures.report_snapshot(self.rows["snapshot"], self.cmp.cell, table,
                                                f"{q('ms_per_slot_total')} total, {q('ms_per_slot_read')} state read"))

    def database(self):
        self.w(*storage_figures.report_database(self.rows["database"], self.cmp.cell, table))

    def slot_budget(self):
        share = get(self.pub["figures"], "slot_budget", "share")
        self.w(*slot_budget.report_slot_budget(self.rows["slot-budget"], self.cmp.cell, table, self.pub["mpt_vs_bt"],
                                               share))

    def hash_vs_traversal(self):
        self.w(*hash_traversal.report_hash_vs_traversal(self.rows["hash-vs-traversal"], self.cmp.cell, table,
                                                        self.pub["figures"].get("hash_vs_traversal", {})))

    def inflight(self):
        self.w(*inflight.report_inflight(self.rows["inflight"], self.cmp.cell, table))

    def crash(self):
        self.w(*crash_figures.report_crash(self.rows["crash"], table))

    def write(self):
        self.header()
        sections = [("merkle", "Merkle tree (`statetree merkle`)", self.merkle),
                    ("kernels", "SHA-256 kernels (`statetree hash-bench`)", self.kernels),
                    ("mpt", "MPT in memory (`statetree mpt-bench`)", None),
                    ("bintrie", "Binary trie in memory (`statetree bintrie-bench`)", self.bintrie_blobs),
                    ("io", "Node store reads (`statetree io-bench`)", self.io),
                    ("persist", "Trees on disk (`build`, `verify`, `read-bench`, `commit`)", self.persist),
                    ("queue-depth", "Queue depth (`read-bench` beside `io-bench`)", self.queue_depth),
                    ("group-depth", "Group depth (binary trie on disk)", self.group_depth),
                    ("page-size", "Page size (4 vs 16 KiB)", self.page_size),
                    ("snapshot", "Flat snapshot on / off (`build --snapshot`, `read-bench --snapshot`)", self.snapshot),
                    ("database", "Arena store vs RocksDB (`build --store`, `read-bench`, `run`, `commit`)",
                     self.database),
                    ("cold-tail", "The cold tail (`statetree run`, 1..9 transactions per block)", self.cold_tail),
                    ("mpt-vs-bintrie", "Binary trie vs MPT per workload (`statetree run`)", self.mpt_vs_bintrie),
                    ("slot-budget", "The 12-second slot budget (`statetree run`, one full block)", self.slot_budget),
                    ("hash-vs-traversal", "Hash versus traversal per block (`statetree run`, pure hash beside)",
                     self.hash_vs_traversal),
                    ("inflight", "Blocks in flight: `--inflight 2` vs 1 beside the run's ceiling (`statetree run`)",
                     self.inflight),
                    ("crash", "Crash safety: `statetree run --inflight 2` SIGKILLed at random points", self.crash),
                    ("fuzz", "Fuzzing (`scripts/fuzz.sh`)", self.fuzz)]
        hash_done = False
        for study, title, fn in sections:
            if study not in self.studies:
                continue
            self.w(f"## {title}", "")
            self.regime_line(study)
            if study in ("mpt", "bintrie") and not hash_done:
                self.hash_vs_bare()
                hash_done = True
            if fn:
                fn()
            self.plots_of(study)
        if self.cmp.used:
            self.w("_Confidence intervals: `statetree compare` (bootstrap of the ratio of medians, 10,000 resamples, "
                   "seed 1; Mann-Whitney U, exact for small samples)._", "")
        path = os.path.join(self.run, "REPORT.md")
        with open(path + ".tmp", "w") as f:
            f.write("\n".join(self.lines).rstrip() + "\n")
        os.replace(path + ".tmp", path)
        self.cmp.close()


def main(argv):
    binary = None
    args = argv[1:]
    if len(args) == 3 and args[1] == "--bin":
        binary = args[2]
        args = args[:1]
    if len(args) != 1 or args[0].startswith("-"):
        print("usage: report.py RUN_DIR [--bin STATETREE]", file=sys.stderr)
        return 2
    if binary and not os.path.isabs(binary):
        binary = os.path.abspath(binary)
    Report(args[0], binary).write()
    print(f"report: {os.path.join(args[0], 'REPORT.md')}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
