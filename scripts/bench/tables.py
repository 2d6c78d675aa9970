#!/usr/bin/env python3
"""tables.py: the summary table of one bench.sh study, from RUN_DIR/STUDY.jsonl and meta.json
(the snapshot and database studies' tables: storage_figures.py; slot-budget's: slot_budget.py;
inflight's: inflight.py).

    tables.py RUN_DIR STUDY

Prints a title line, the study's table(s) (medians, [min, max] where the spread matters),
then the failed and skipped commands and a footer (commands, load before -> after, data
used). Tables stay under 80 columns. A line that is not JSON, or a figure a binary does not
report, shows as '-' instead of stopping the table. Python 3 standard library only.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pipeline_figures as pf  # noqa: E402
import crash_figures  # noqa: E402
import hash_traversal  # noqa: E402
import page_size_qd  # noqa: E402
import slot_budget  # noqa: E402
import inflight  # noqa: E402
import storage_figures  # noqa: E402


def load_rows(path):
    rows = []
    try:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                try:
                    rows.append(json.loads(line))
                except ValueError:
                    pass
    except OSError:
        pass
    return rows


def get(obj, *keys):
    """obj[k0][k1]..., None if any is missing."""
    for k in keys:
        if isinstance(obj, dict) and k in obj:
            obj = obj[k]
        elif isinstance(obj, list) and isinstance(k, int) and -len(obj) <= k < len(obj):
            obj = obj[k]
        else:
            return None
    return obj


def med(v):
    """The median of a {count, median, min, max} figure, or the plain number."""
    if isinstance(v, dict):
        return v.get("median")
    return v


def f(v, fmt=".2f", width=8):
    v = med(v)
    if v is None or isinstance(v, (str, bool)):
        return f"{'-' if v is None else str(v):>{width}}"
    return f"{v:{width}{fmt}}"


def spread(v, fmt=".2f"):
    if isinstance(v, dict) and "min" in v and "max" in v:
        return f"[{v['min']:{fmt}}, {v['max']:{fmt}}]"
    return ""


def mib(b):
    return None if b is None else b / 2**20


# ---- studies ------------------------------------------------------------------------------

def split_merkle(rows):
    """(main rows, size-sweep rows): the sweep's rows have another leaf count than the first."""
    if not rows:
        return [], []
    n = rows[0].get("leaves")
    return [r for r in rows if r.get("leaves") == n], [r for r in rows if r.get("leaves") != n]


def table_merkle(rows, failures):
    rows, sweep = split_merkle(rows)
    print(f"{'kernel':8} {'thr':>3} {'add':>7} {'compute':>7} {'total':>7} {'min':>7} {'max':>7} "
          f"{'limit':>7} {'eff':>4}")
    for r in rows:
        t = r.get("total_ns_per_leaf", {})
        eff = r.get("efficiency")
        print(f"{r.get('kernel', '-'):8} {r.get('threads', '-'):>3} {f(r.get('add_ns_per_leaf'), width=7)} "
              f"{f(r.get('compute_ns_per_leaf'), width=7)} {f(t, width=7)} {f(t.get('min'), width=7)} "
              f"{f(t.get('max'), width=7)} {f(r.get('limit_ns_per_leaf'), width=7)} "
              f"{'-' if eff is None else f'{100 * eff:3.0f}%':>4}")
        for name, b in r.get("baselines", {}).items():
            print(f"  {name}: {f(b.get('total_ns_per_leaf'), width=0)} ns/leaf, "
                  f"engine/it {f(b.get('engine_over_baseline'), '.3f', 0)}")
    for x in failures:
        words = x.get("command", "").split()
        kernel = words[words.index("--kernel") + 1] if "--kernel" in words[:-1] else "auto"
        threads = words[words.index("--threads") + 1] if "--threads" in words[:-1] else "-"
        print(f"{kernel:8} {threads:>3} FAILED, exit {x.get('exit_code')} (below)")
    print("ns per leaf, medians (min, max: of total); limit: this core's kernel cost;")
    print("eff = limit / total; openssl_*: baselines timed in the same run")
    one = next((r for r in rows if r.get("threads") == 1 and r.get("baselines")), None)
    two = next((r for r in rows if r.get("threads") == 2), None)
    if one and two and med(two.get("total_ns_per_leaf")):
        ratio = med(one["total_ns_per_leaf"]) / med(two["total_ns_per_leaf"])
        print(f"2 threads vs 1: {ratio:.2f}x")
    if rows:
        print(f"{rows[0].get('leaves', '-')} leaves, root {str(rows[0].get('root', '-'))[:16]}...")
    if sweep:
        print("size sweep (1 pinned thread, auto kernel): ns per leaf, median [min, max]")
        for r in sorted(sweep + [x for x in rows if x.get("threads") == 1 and x.get("baselines")],
                        key=lambda r: r.get("leaves", 0)):
            t = r.get("total_ns_per_leaf", {})
            eff = r.get("efficiency")
            print(f"  {r.get('leaves', '-'):>9} leaves {f(t, width=8)}  {spread(t)}"
                  f"  {'-' if eff is None else f'{100 * eff:.0f}%'}")


def table_kernels(rows, failures):
    for r in rows:
        results = r.get("results", [])
        kernels = []
        for x in results:
            if x.get("kernel") not in kernels:
                kernels.append(x.get("kernel"))
        main_entries, extra = [], []
        for x in results:
            e = x.get("entry", "-")
            if " " in e or len(e) > 16:
                extra.append(x)
            elif e not in main_entries:
                main_entries.append(e)
        print(f"ns per compression, median over {r.get('reps', '-')} reps, "
              f"{r.get('messages_per_pass', '-')} messages per pass; active: {r.get('active_kernel', '-')}")
        print(f"{'entry':16}" + "".join(f" {k:>9}" for k in kernels) + f" {'compr/msg':>9}")
        for e in main_entries:
            cells, cpm = [], None
            for k in kernels:
                x = next((x for x in results if x.get("kernel") == k and x.get("entry") == e), None)
                cells.append(f(get(x, "ns_per_compression"), width=9))
                if x is not None:
                    cpm = x.get("compressions_per_msg")
            print(f"{e:16}" + "".join(" " + c for c in cells) + f" {f(cpm, width=9)}")
        for x in extra:
            print(f"  {x.get('kernel')} {x.get('entry')}: {f(get(x, 'ns_per_compression'), width=0)}")


def figure_rows(title, items):
    """items: (label, figure, fmt); prints label, median, [min, max]."""
    print(title)
    for label, v, fmt in items:
        print(f"  {label:30} {f(v, fmt, 10)}  {spread(v, fmt)}")


def table_mpt(rows, failures):
    for r in rows:
        s, inc = r.get("from_scratch", {}), r.get("incremental", {})
        print(f"keccak kernel {r.get('keccak_kernel', '-')}, {r.get('reps', '-')} reps; median [min, max]")
        if s:
            figure_rows(f"from scratch, {s.get('entries', '-')} entries, root {str(s.get('root', '-'))[:12]}...", [
                ("build, 1 thread (ms)", s.get("build_1t_ms"), ".2f"),
                ("bare Keccak, same nodes (ms)", s.get("bare_keccak_ms"), ".2f"),
                ("build / Keccak", s.get("build_over_keccak"), ".3f"),
                (f"build, {s.get('threads', '-')} threads (ms)", s.get("build_nt_ms"), ".2f"),
                ("speedup threads / 1", s.get("speedup_nt_over_1t"), ".3f"),
            ])
        if inc:
            figure_rows(f"incremental: {inc.get('writes', '-')} writes into {inc.get('slots', '-')} slots "
                        f"({inc.get('timed_block_paths', '-')} paths)", [
                ("block (ms)", inc.get("block_ms"), ".3f"),
                ("bare Keccak, dirty nodes (ms)", inc.get("bare_keccak_ms"), ".3f"),
                ("block / Keccak", inc.get("block_over_keccak"), ".3f"),
                ("dirty nodes", inc.get("dirty_nodes"), ".0f"),
            ])


def table_bintrie(rows, failures):
    for r in rows:
        s = r.get("from_scratch", {})
        print(f"{r.get('keys', '-')} keys, hash {r.get('hash', '-')} (kernel {r.get('sha256_kernel', '-')}), "
              f"{r.get('reps', '-')} reps, clock {r.get('clock', '-')}; median [min, max]")
        figure_rows(f"from scratch, root {str(r.get('root', '-'))[:12]}...", [
            ("root, 1 thread (ms)", s.get("root_1t_ms"), ".2f"),
            ("bare hashing, same nodes (ms)", s.get("bare_hash_ms"), ".2f"),
            ("root / bare", s.get("ratio_to_bare"), ".3f"),
            (f"root, {r.get('threads', '-')} threads (ms)", s.get("root_threads_ms"), ".2f"),
            ("speedup threads / 1", s.get("speedup_threads"), ".3f"),
        ])
        items = []
        for key, name in [("incremental_insert", "insert"), ("incremental_update", "update")]:
            x = r.get(key, {})
            items += [(f"{name} (ms)", x.get("ms"), ".3f"), (f"{name} / bare", x.get("ratio_to_bare"), ".3f")]
        d = r.get("dense_stem_writes", {})
        if d:
            items += [(f"{d.get('stems', '-')} dense stems (ms)", d.get("ms"), ".3f"),
                      ("dense stems, bare (ms)", d.get("bare_hash_ms"), ".3f")]
        figure_rows(f"incremental, {r.get('writes', '-')} writes per batch", items)
        figure_rows("proofs", [("proof bytes", r.get("key_proof_bytes"), ".0f"),
                               ("proof depth", r.get("key_proof_depth"), ".1f")])
        blobs = r.get("blobs", [])
        if blobs:
            print(f"  {'gd':>3} {'group blobs':>12} {'full':>9} {'mean B':>8} {'group MiB':>10}")
            for b in blobs:
                print(f"  {b.get('gd', '-'):>3} {b.get('group_blobs', '-'):>12} {b.get('group_blobs_full', '-'):>9} "
                      f"{f(b.get('group_blob_bytes_mean'), '.1f', 8)} {f(mib(b.get('group_bytes')), '.1f', 10)}")


def table_io(rows, failures):
    for r in rows:
        print(f"{r.get('size_mib', '-')} MiB arena, {r.get('page_size', '-')} B pages, "
              f"{r.get('reads_per_run', '-')} reads per run, {r.get('reps', '-')} reps "
              f"(fill {f(get(r, 'fill', 'mib_per_s'), '.0f', 0)} MiB/s)")
        print(f"{'qd':>3} {'IOPS':>8} {'us/read':>8} {'p50 us':>8} {'p99 us':>8} {'raw':>8} "
              f"{'store/raw':>9} {'rocksdb':>8}")
        for q in r.get("results", []):
            print(f"{q.get('qd', '-'):>3} {f(q.get('iops'), '.0f')} {f(q.get('us_per_read_amortized'))} "
                  f"{f(q.get('latency_us_p50'), '.1f')} {f(q.get('latency_us_p99'), '.1f')} "
                  f"{f(get(q, 'raw', 'us_per_read_amortized'))} {f(q.get('store_over_raw_us_per_read'), '.3f', 9)} "
                  f"{f(get(q, 'rocksdb', 'us_per_read_amortized'))}")
        print("us per read amortized, medians; raw: store-less io_uring loop; rocksdb: MultiGet")
        if r.get("regime_note"):
            print(f"note: {r['regime_note']}")


def db_of(command):
    """The --db argument of a command line, or None."""
    words = command.split()
    return words[words.index("--db") + 1] if "--db" in words[:-1] else None


def table_persist(rows, failures):
    by_db, order = {}, []
    for r in rows:
        db = r.get("db")
        if db not in by_db:
            by_db[db] = {"verify": []}
            order.append(db)
        cmd = r.get("command")
        if cmd == "verify":
            by_db[db]["verify"].append(r)
        else:
            by_db[db][cmd] = r
    failed = {}  # (db, step) -> exit code of the failed command
    for x in failures:
        db, words = db_of(x.get("command", "")), x.get("command", "").split()
        if db and len(words) > 1:
            failed[(db, words[1])] = x.get("exit_code")
            if db not in by_db:
                by_db[db] = {"verify": []}
                order.append(db)

    def name(db):
        tree, _, store = os.path.basename(db or "-").removeprefix("db-").partition("-")
        return f"{tree:8} {store or '-':8}"

    def verdict(db, i):
        v = by_db[db]["verify"]
        if len(v) > i:
            return f"{'ok' if v[i].get('ok') else 'FAIL'} {v[i].get('seconds', 0):.1f}s"
        return "FAILED" if (db, "verify") in failed else "-"

    def failed_row(db, step):
        print(f"{name(db)} FAILED: {step}, exit {failed[(db, step)]} (below)")

    print("build and verify")
    print(f"{'tree':8} {'store':8} {'slots':>9} {'build s':>8} {'disk MiB':>9} {'B/slot':>7} {'RSS MiB':>8} "
          f"{'verify':>9}")
    for db in order:
        b = by_db[db].get("build")
        if b is None:
            if (db, "build") in failed:
                failed_row(db, "build")
            continue
        print(f"{name(db)} {b.get('slots', '-'):>9} {f(b.get('wall_seconds'))} {f(mib(b.get('disk_bytes')), '.1f', 9)} "
              f"{f(b.get('disk_bytes_per_slot'), '.1f', 7)} {f(mib(b.get('peak_rss_bytes')), '.0f')} "
              f"{verdict(db, 0):>9}")

    lookups = [db for db in order if "read-bench" in by_db[db] or (db, "read-bench") in failed]
    if lookups:
        print("cold lookups (read-bench): medians; raw = store-less page reads, same QD")
        print(f"{'tree':8} {'store':8} {'qd':>3} {'us/lookup':>9} {'reads/lk':>8} {'us/read':>8} {'raw':>7} "
              f"{'eng/raw':>7} {'1-by-1/batch':>12}")
    for db in lookups:
        rb = by_db[db].get("read-bench")
        if rb is None:
            failed_row(db, "read-bench")
            continue
        for q in rb.get("batched", []):
            bt = q.get("batched", {})
            print(f"{name(db)} {q.get('qd', '-'):>3} {f(bt.get('us_per_lookup'), '.1f', 9)} "
                  f"{f(bt.get('page_reads_per_lookup'))} {f(bt.get('us_per_page_read'), '.1f')} "
                  f"{f(get(q, 'raw', 'us_per_read'), '.1f', 7)} {f(q.get('engine_over_raw_per_read'), '.2f', 7)} "
                  f"{f(q.get('single_over_batched_per_lookup'), '.2f', 12)}")

    commits = [db for db in order if "commit" in by_db[db] or (db, "commit") in failed]
    if commits:
        print("block commits (median per block), then verify")
        print(f"{'tree':8} {'store':8} {'blocks':>6} {'commit ms':>9} {'read ms':>8} {'pages wr':>8} "
              f"{'MiB after':>9} {'verify':>9}")
    for db in commits:
        c = by_db[db].get("commit")
        if c is None:
            failed_row(db, "commit")
            continue
        print(f"{name(db)} {c.get('blocks_applied', '-'):>6} {f(c.get('commit_ms'), '.1f', 9)} "
              f"{f(c.get('read_ms'), '.1f')} {f(c.get('pages_written'), '.0f')} "
              f"{f(mib(c.get('disk_bytes_after')), '.1f', 9)} {verdict(db, 1):>9}")


def rb_at(rb, qd):
    """The batched entry of a read-bench result at queue depth qd, or None."""
    return next((q for q in (rb or {}).get("batched", []) if q.get("qd") == qd), None)


def table_queue_depth(rows, failures):
    rb = {r.get("tree"): r for r in rows if r.get("command") == "read-bench"}
    io = next((r for r in rows if r.get("command") == "io-bench"), None)
    qds = sorted({q.get("qd") for r in list(rb.values()) + ([io] if io else [])
                  for q in r.get("batched", r.get("results", []))})
    print("cold batched lookups (read-bench) beside the device (io-bench): medians, us")
    print(f"{'qd':>4} {'mpt/lk':>8} {'mpt/rd':>8} {'bt/lk':>8} {'bt/rd':>8} {'rb raw':>8} "
          f"{'io raw':>8} {'io store':>8}")
    for qd in qds:
        m, b = rb_at(rb.get("mpt"), qd), rb_at(rb.get("bintrie"), qd)
        q = next((x for x in (io or {}).get("results", []) if x.get("qd") == qd), None)
        raw = get(m, "raw", "us_per_read") or get(b, "raw", "us_per_read")
        print(f"{qd:>4} {f(get(m, 'batched', 'us_per_lookup'))} {f(get(m, 'batched', 'us_per_page_read'))} "
              f"{f(get(b, 'batched', 'us_per_lookup'))} {f(get(b, 'batched', 'us_per_page_read'))} "
              f"{f(raw)} {f(get(q, 'raw', 'us_per_read_amortized'))} {f(get(q, 'us_per_read_amortized'))}")
    print("lk: per lookup; rd: per page read; rb raw: read-bench's store-less reads of the")
    print("database file (mpt's); io raw / store: io-bench's loop and arena store, amortized")
    for tree, r in rb.items():
        print(f"{tree}: {r.get('keys', '-')} keys, cold protocol {get(r, 'cold', 'protocol') or 'none (host-warm)'}")


def table_group_depth(rows, failures):
    gds = sorted({r.get("group_depth") for r in rows if r.get("group_depth")})
    print("binary trie per group depth: bytes on disk, cold lookups, block commits (medians)")
    print(f"{'gd':>2} {'page':>5} {'B/slot':>7} {'disk MiB':>8} {'us/lk q1':>8} {'us/lk q32':>9} {'rd/lk':>6} "
          f"{'commit ms':>9} {'pg wr/blk':>9}")
    for gd in gds:
        b = next((r for r in rows if r.get("command") == "build" and r.get("group_depth") == gd), None)
        rb = next((r for r in rows if r.get("command") == "read-bench" and r.get("group_depth") == gd), None)
        db = (b or rb or {}).get("db")
        c = next((r for r in rows if r.get("command") == "commit" and r.get("db") == db), None)
        page = (b or rb or {}).get("page_size")
        print(f"{gd:>2} {'-' if not page else str(page // 1024) + 'K':>5} "
              f"{f(get(b, 'disk_bytes_per_slot'), '.1f', 7)} {f(mib(get(b, 'disk_bytes')), '.1f')} "
              f"{f(get(rb_at(rb, 1), 'batched', 'us_per_lookup'), '.1f')} "
              f"{f(get(rb_at(rb, 32), 'batched', 'us_per_lookup'), '.1f', 9)} "
              f"{f(get(rb_at(rb, 32), 'batched', 'page_reads_per_lookup'), '.2f', 6)} "
              f"{f(get(c, 'commit_ms'), '.2f', 9)} {f(get(c, 'pages_written'), '.0f', 9)}")
    for x in failures:
        print(f"FAILED: {x.get('command')} (exit {x.get('exit_code')})")


def table_page_size(rows, failures):
    page_size_qd.print_table(rows)
    rows = [r for r in rows if r.get("command") in ("build", "read-bench", "commit")]
    print("arena page size: bytes on disk, cold lookups, block commits (medians)")
    print(f"{'tree':8} {'page':>6} {'B/slot':>7} {'us/lk q1':>8} {'us/lk q32':>9} {'us/rd q32':>9} "
          f"{'rd/lk':>6} {'commit ms':>9}")
    dbs = []
    for r in rows:
        if r.get("db") not in dbs:
            dbs.append(r.get("db"))
    for db in dbs:
        b = next((r for r in rows if r.get("db") == db and r.get("command") == "build"), None)
        rb = next((r for r in rows if r.get("db") == db and r.get("command") == "read-bench"), None)
        c = next((r for r in rows if r.get("db") == db and r.get("command") == "commit"), None)
        any_row = b or rb or c
        print(f"{any_row.get('tree', '-'):8} {any_row.get('page_size', '-'):>6} "
              f"{f(get(b, 'disk_bytes_per_slot'), '.1f', 7)} "
              f"{f(get(rb_at(rb, 1), 'batched', 'us_per_lookup'), '.1f')} "
              f"{f(get(rb_at(rb, 32), 'batched', 'us_per_lookup'), '.1f', 9)} "
              f"{f(get(rb_at(rb, 32), 'batched', 'us_per_page_read'), '.1f', 9)} "
              f"{f(get(rb_at(rb, 32), 'batched', 'page_reads_per_lookup'), '.2f', 6)} "
              f"{f(get(c, 'commit_ms'), '.2f', 9)}")
    for x in failures:
        print(f"FAILED: {x.get('command')} (exit {x.get('exit_code')})")


def table_fuzz(rows, failures):
    print(f"{'target':20} {'seconds':>7} {'runs':>10} {'runs/s':>8} {'corpus':>7} {'crashes':>7}")
    for r in rows:
        runs, secs = r.get("runs"), r.get("seconds")
        rate = runs / secs if runs is not None and secs else None
        print(f"{r.get('target', '-'):20} {secs or '-':>7} {'-' if runs is None else runs:>10} "
              f"{f(rate, '.0f')} {r.get('corpus', '-'):>7} {r.get('crashes', '-'):>7}")
        for c in r.get("crash_inputs", []):
            print(f"  crash input: {c}")
    print("libFuzzer with ASan + UBSan (build-fuzz/); a crash or a broken invariant is a failure")


def table_cold_tail(rows, failures):
    ct = pf.cold_tail(rows)
    txs = sorted({t for d in ct.values() for t in d})
    for metric, what in (("ms_per_miss", "ms per miss"), ("ms_per_slot", "ms per distinct slot read"),
                         ("ms_per_device_read", "ms per device read"),
                         ("ms_per_main_miss", "ms per miss as go-ethereum counts them (geth: less warm hits)")):
        for tree in pf.TREES:
            if not any(k[0] == tree for k in ct):
                continue
            print(f"{pf.TREE_LABEL[tree]}: {what} (state read per block) by transactions per block;")
            print("  +o: with the other work of the published blocks, -o: without")
            head = "".join(f" {r + s:>9}" for r in pf.READERS for s in ("+o", "-o"))
            print(f"{'txs':>4}{head}")
            for t in txs:
                cells = []
                for reader in pf.READERS:
                    for other in (True, False):
                        d = next((v for k, v in ct.items() if k[0] == tree and k[1] == reader and (k[2] > 0) == other),
                                 {})
                        cells.append(f(get(d, t, metric), ".4f", 9))
                print(f"{t:>4} " + " ".join(cells))
    for x in failures:
        print(f"FAILED: {x.get('command')} (exit {x.get('exit_code')})")


def table_mpt_vs_bintrie(rows, failures):
    mb = pf.mpt_vs_bintrie(rows)
    print("ms per slot (medians over the blocks), binary trie / MPT")
    print(f"{'workload':19} {'reader':6} {'MPT rd':>7} {'BT rd':>7} {'BT/MPT':>6} {'MPT tot':>7} {'BT tot':>7} "
          f"{'BT/MPT':>6}")
    for w in pf.WORKLOADS:
        for reader in ("bal", "serial"):
            a, b = mb.get(("mpt", w, reader)), mb.get(("bintrie", w, reader))
            if not a and not b:
                continue
            cells = []
            for m in ("ms_per_slot_read", "ms_per_slot_total"):
                ma, mbb = pf.median((a or {}).get(m, [])), pf.median((b or {}).get(m, []))
                cells += [f(ma, ".4f", 7), f(mbb, ".4f", 7), f(None if not ma or mbb is None else mbb / ma, ".2f", 6)]
            print(f"{w:19} {reader:6} " + " ".join(cells))
    raw = pf.raw_us_per_read(rows)
    for tree in pf.TREES:
        if tree not in raw:
            continue
        cells = [f"{w} {reader} {f(pf.over_device(mb[(tree, w, reader)], raw[tree]), '.2f', 0)}x"
                 for w in pf.WORKLOADS for reader in ("bal", "serial") if (tree, w, reader) in mb]
        print(f"{pf.TREE_LABEL[tree]}: raw loop {raw[tree]:.2f} us per page read at QD 32; ms per slot read / "
              f"(device reads per slot x that): " + ", ".join(cells))
    for x in failures:
        print(f"FAILED: {x.get('command')} (exit {x.get('exit_code')})")


TABLES = {"merkle": table_merkle, "kernels": table_kernels, "mpt": table_mpt, "bintrie": table_bintrie,
          "io": table_io, "persist": table_persist, "queue-depth": table_queue_depth,
          "group-depth": table_group_depth, "page-size": table_page_size, "fuzz": table_fuzz,
          "cold-tail": table_cold_tail, "mpt-vs-bintrie": table_mpt_vs_bintrie,
          "snapshot": storage_figures.table_snapshot, "database": storage_figures.table_database,
          "slot-budget": slot_budget.table_slot_budget,
          "hash-vs-traversal": hash_traversal.table_hash_vs_traversal, "inflight": inflight.table_inflight,
          "crash": crash_figures.table_crash}


def footer(meta, study):
    s = next((x for x in meta.get("studies", []) if x.get("name") == study), {})
    for note in s.get("notes", []):
        print(f"note: {note}")
    for x in meta.get("failures", []):
        if x.get("study") == study:
            print(f"FAILED (exit {x.get('exit_code')}): {x.get('command')}")
            print(f"  {x.get('stderr_last_line') or '(no stderr)'}")
    skipped = [x for x in meta.get("skipped", []) if x.get("study") == study]
    if skipped:
        print(f"skipped: {len(skipped)} commands whose configuration failed before them (meta.json)")
    lb, la = s.get("load_average_before"), s.get("load_average_after")
    kept = "kept" if s.get("data_kept") else "removed"
    data = s.get("data_bytes") or 0
    print(f"{s.get('commands', '-')} commands, {s.get('failed', 0)} failed, {s.get('skipped', 0)} skipped; "
          f"{s.get('started_utc', '-')} to {s.get('ended_utc', '-')}")
    print(f"load average (1 min) {lb[0] if lb else '-'} before, {la[0] if la else '-'} after")
    if data > 4096:
        print(f"data: {data / 2**20:.1f} MiB in {s.get('data_dir', '-')} ({kept})")


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in TABLES:
        print("usage: tables.py RUN_DIR " + "|".join(TABLES), file=sys.stderr)
        return 2
    run_dir, study = sys.argv[1], sys.argv[2]
    try:
        with open(os.path.join(run_dir, "meta.json")) as fh:
            meta = json.load(fh)
    except (OSError, ValueError):
        meta = {}
    print(f"== {study} (scale {meta.get('scale', '-')}) ==")
    rows = load_rows(os.path.join(run_dir, study + ".jsonl"))
    failures = [x for x in meta.get("failures", []) if x.get("study") == study]
    if rows or study in ("merkle", "persist"):
        TABLES[study](rows, failures)
    else:
        print("(no results)")
    footer(meta, study)
    return 0


if __name__ == "__main__":
    sys.exit(main())
