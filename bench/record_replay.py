#!/usr/bin/env python3
"""What `iogauge record` costs the recorded program, and how faithfully `iogauge replay`
reproduces its timing.

Capture overhead: sqlite3 inserting 100,000 rows with synchronous=FULL (in transactions of 100
rows: 1,000 commits, each synced), run plain, under `iogauge record` (perf) and under
`strace -f` (the usual way to see a program's calls), alternating (each round in the other
order from the last), each round in a fresh directory; the ratio of each traced run's wall time to the plain runs' median. Also the
`--method=ptrace` fallback. The disk's speed drifts over minutes, so the database lives on
tmpfs by default (the capture's cost per call is what is measured; --dir puts it elsewhere).

Calibration: the overhead figure the trace states (the calibration's per-call costs times the
calls) against what the capture cost programs denser in system calls than sqlite (dd in
512-byte calls, tar of /usr/include): their recorded time (exec to end) against plain runs.

Replay fidelity: programs recorded on tmpfs (dd copying 64 MiB in 64 KiB calls; the sqlite
load; GNU sort of 32 MiB with a 2 MiB buffer; tar of a copy of /usr/include), recorded afresh
each round and that recording replayed at once in closed mode on tmpfs by this build and, with
--baseline BIN, by other builds, alternating: the replayed span against the recorded span (the
median round and the range) and against the program run alone in the same rounds, the time
inside the replayed calls against the recorded time inside them, and the issue-time error.

Native AIO: fio with libaio (4 KiB random reads, O_DIRECT, iodepth 16) on the disk, run plain
and under `iogauge record`, alternating: fio's own IOPS and completion latency each way (the
capture's cost on a program whose I/Os it reads from the program's memory as io_submit and
io_getevents run); then its trace replayed there, each I/O resubmitted asynchronously.

io_uring: fio with io_uring (4 KiB, iodepth 16 in batches of 4): random reads and writes
buffered on tmpfs, random reads buffered on the disk from a file out of the page cache, random
reads and writes O_DIRECT on the disk; each recorded once; the trace replayed (closed
mode, same storage) by this iogauge and, with --baseline BIN, by other builds, alternating:
the time in the replayed calls and the I/Os' mean latency against the recorded ones.

Mapped reads: a Python program reading a 256 MiB file on the disk through a mapping (out of
the page cache first, read-around off with MADV_RANDOM, 2,000 pages at random: each a major
page fault), recorded afresh each round; the trace replayed by this build and, with --baseline
BIN, by other builds, alternating, on the same disk (replayed span against recorded span: a
build that keeps the faults' sleep as computation matches it there too) and on tmpfs, against
the program itself run there (recorded on tmpfs, its span): where the storage differs, a
replay that reads the pages follows the target, one that keeps the recorded sleep does not.

Memory: what the recorder holds per call at its peak (the kernel's records while the program
runs, then the trace's events as they are decoded): dd copying a file in 512-byte calls (a
read and a write each, both recorded, both in the trace) on the bench's storage, recorded for
several counts; the recorder's peak resident set (wait4's ru_maxrss) against the calls, and
the bytes per call of the difference between two counts (what each added call costs, the
recorder's fixed footprint out). Again on the disk with the reads O_DIRECT from a written file:
each read waits for the device, so the scheduler's two switch records come with it.

Usage: python3 bench/record_replay.py [--rounds N] [--dir DIR] [--no-save]
       [--only overhead,calibration,fidelity,mapped,aio,uring,memory] [--baseline BIN ...]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vs_fio import IOGAUGE, save, start  # noqa: E402

ROWS = 100_000
PER_TXN = 100


def sql_file(d):
    path = os.path.join(d, "load.sql")
    with open(path, "w") as f:
        f.write("PRAGMA synchronous=FULL;\nCREATE TABLE t(a INTEGER, b TEXT);\n")
        for txn in range(ROWS // PER_TXN):
            f.write("BEGIN;\n")
            for i in range(PER_TXN):
                n = txn * PER_TXN + i
                f.write(f"INSERT INTO t VALUES({n}, 'row {n} with some text to store');\n")
            f.write("COMMIT;\n")
    return path


def timed(cmd, cwd):
    t = time.perf_counter()
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr[-600:]}")
    return time.perf_counter() - t, r.stderr


def trace_stats(trace):
    """`iogauge trace stats --json` of a trace."""
    out = subprocess.run([IOGAUGE, "trace", "stats", "--json", trace], capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout)


def overhead(rounds, base, sql, baselines=()):
    ways = {
        "plain": lambda d: ["sqlite3", "db", f".read {sql}"],
        "iogauge record": lambda d: [IOGAUGE, "record", "-o", os.path.join(d, "..", "t.iogtrace"),
                                     "--overwrite-output", "--", "sqlite3", "db", f".read {sql}"],
        "iogauge record --method=ptrace": lambda d: [
            IOGAUGE, "record", "--method=ptrace", "-o", os.path.join(d, "..", "t.iogtrace"),
            "--overwrite-output", "--", "sqlite3", "db", f".read {sql}"],
        "strace -f": lambda d: ["strace", "-f", "-qq", "-o", "/dev/null", "sqlite3", "db",
                                f".read {sql}"],
    }
    for i, b in enumerate(baselines):
        ways[f"iogauge record, baseline {i + 1}"] = (
            lambda d, b=b: [b, "record", "-o", os.path.join(d, "..", "t.iogtrace"),
                            "--overwrite-output", "--", "sqlite3", "db", f".read {sql}"])
    times = {k: [] for k in ways}
    # Under record: the program's own time (exec to its end, from the trace), besides the wall
    # time of the whole command (which adds the calibration and writing the trace).
    program = {k: [] for k in ways if k.startswith("iogauge")}
    claimed = []
    for r in range(rounds):
        # Each round runs the ways in the other order from the last (ABBA): on the disk, whose
        # speed drifts within a round, a way always run last (a baseline) read 20% slower.
        order = list(ways.items())
        if r % 2:
            order.reverse()
        for name, cmd in order:
            d = tempfile.mkdtemp(dir=base)
            w = os.path.join(d, "w")
            os.mkdir(w)
            secs, err = timed(cmd(w), w)
            times[name].append(secs)
            if name in program:
                trace = os.path.join(w, "..", "t.iogtrace")
                st = trace_stats(trace)
                program[name].append(st["duration_ns"] / 1e9)
            if name == "iogauge record":
                for line in err.splitlines():
                    if "capture overhead" in line:
                        claimed.append(line.split("capture overhead ≈ ")[1].split("%")[0])
            shutil.rmtree(d)
        print(f"round {r + 1}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in times.items()),
              flush=True)
    plain = statistics.median(times["plain"])
    rows = ["| run | median s | runs (s) | × plain |", "|---|---|---|---|"]
    for k, v in times.items():
        rows.append(f"| {k}: whole command | {statistics.median(v):.3f} | "
                    f"{', '.join(f'{x:.2f}' for x in v)} | {statistics.median(v) / plain:.3f} |")
        if k in program:
            p = program[k]
            rows.append(f"| {k}: the program (exec to end) | {statistics.median(p):.3f} | "
                        f"{', '.join(f'{x:.2f}' for x in p)} | {statistics.median(p) / plain:.3f} |")
    rows.append("")
    rows.append(f"The overhead `iogauge record` measured for itself (calibration × calls), per "
                f"round: {', '.join(c + '%' for c in claimed)}.")
    rec = statistics.median(program["iogauge record"])
    rows.append(f"What it cost the program: (recorded program − plain) / recorded program = "
                f"{100 * (rec - plain) / rec:.1f}% (medians; plain includes its fork and "
                "exec).")
    return rows


def calibration(rounds, base, baselines=()):
    """The overhead the trace states against what the capture cost, for programs denser in
    system calls than sqlite: dd of 64 MiB in 512-byte calls, tar of a copy of /usr/include;
    plain and recorded alternately, on the bench's storage (and recorded by each baseline
    build in turn, where given: a row each)."""
    d = tempfile.mkdtemp(dir=base)
    with open(os.path.join(d, "in"), "wb") as f:
        f.write(os.urandom(64 << 20))
    shutil.copytree("/usr/include", os.path.join(d, "tree"), symlinks=True)
    programs = {
        "dd 64 MiB in 512 B calls": ["dd", "if=in", "of=/dev/null", "bs=512", "status=none"],
        "tar of /usr/include": ["tar", "cf", "/dev/null", "tree"],
    }
    rows = ["| program | recorded by | plain s (median) | recorded program s (median) | "
            "what it cost % | the trace's figure % (each round) | whole command s (median) |",
            "|---|---|---|---|---|---|---|"]
    trace = os.path.join(base, "cal.iogtrace")
    builds = [("this build", IOGAUGE)] + [(f"baseline {i + 1}", b)
                                          for i, b in enumerate(baselines)]
    for name, cmd in programs.items():
        plain = []
        rec = {k: [] for k, _ in builds}
        claimed = {k: [] for k, _ in builds}
        whole = {k: [] for k, _ in builds}
        for _ in range(rounds):
            plain.append(timed(cmd, d)[0])
            for k, binary in builds:
                whole[k].append(timed([binary, "record", "-o", trace, "--overwrite-output",
                                       "--"] + cmd, d)[0])
                st = trace_stats(trace)
                rec[k].append(st["duration_ns"] / 1e9)
                claimed[k].append(st["overhead_pct"])
        p = statistics.median(plain)
        for k, _ in builds:
            r = statistics.median(rec[k])
            rows.append(f"| {name} | {k} | {p:.3f} | {r:.3f} | {100 * (r - p) / r:.1f} | "
                        f"{statistics.median(claimed[k]):.1f} "
                        f"({', '.join(f'{c:.1f}' for c in claimed[k])}) | "
                        f"{statistics.median(whole[k]):.3f} |")
            print(rows[-1], flush=True)
    shutil.rmtree(d)
    return rows


MEMORY_COUNTS = [100_000, 500_000, 1_000_000, 2_000_000]
# On the disk, reading with O_DIRECT: every read waits for the device, and the scheduler's two
# switch records come with it.
DISK_MEMORY_COUNTS = [100_000, 250_000, 500_000]


def peak_rss(cmd, cwd):
    """Runs cmd; its peak resident set in bytes (wait4's ru_maxrss: the process's own, or
    a waited-for child's if larger — dd's is a few MiB)."""
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {p.returncode}: {err[-600:]}")
    return ru.ru_maxrss * 1024


def memory(base, counts=MEMORY_COUNTS, direct=False):
    """The recorder's peak memory against the calls it recorded: dd copying in 512-byte
    calls, its reads O_DIRECT from a written file where `direct`."""
    d = tempfile.mkdtemp(dir=base)
    trace = os.path.join(base, "mem.iogtrace")
    with open(os.path.join(d, "in"), "wb") as f:
        if direct:
            # Written, not sparse: each O_DIRECT read goes to the device.
            for _ in range(max(counts) * 512 >> 20):
                f.write(b"\xa5" * (1 << 20))
        else:
            # A sparse input (it reads as zeros): a real file, every call on storage.
            f.truncate(max(counts) * 512)
    rows = ["| dd calls (read + write) | recorder's peak RSS MiB | bytes a call (all) | "
            "bytes a call (added since the row before) |", "|---|---|---|---|"]
    last = None
    flags = ["iflag=direct"] if direct else []
    for n in counts:
        calls = 2 * n
        rss = peak_rss([IOGAUGE, "record", "-o", trace, "--overwrite-output", "--", "dd",
                        "if=in", "of=out", "bs=512", f"count={n}", "status=none"] + flags, d)
        added = "" if last is None else f"{(rss - last[1]) / (calls - last[0]):.0f}"
        rows.append(f"| {calls:,} | {rss / 2**20:.1f} | {rss / calls:.0f} | {added} |")
        print(rows[-1], flush=True)
        last = (calls, rss)
        os.unlink(os.path.join(d, "out"))
    shutil.rmtree(d)
    return rows


def fidelity(rounds, base, sql, baselines=()):
    """Each program recorded afresh in every round by this build, and that round's trace
    replayed (closed mode, same storage) at once by this build and each baseline (each round
    in the other order from the last): a replay is set against the recording it follows, a
    minute's drift in the machine's speed out. One recording is one sample of the program's own
    spread: dd's 64 MiB copy, run plain five times on 2026-12-07, took 41-58 ms, and a table
    built on one recording showed its replays 0.86x the recorded span, and another night's
    1.02x. The row shown is each build's median round by replayed span against recorded span;
    the range of that ratio over the rounds beside it. Where builds are compared, an even
    number of rounds (one more where `rounds` is odd): with three rounds this build went first
    in two (on 2026-12-06 such a run showed it 2-5% slower than its parent, a difference ten
    balanced rounds did not show)."""
    if baselines and rounds % 2:
        rounds += 1
    d = tempfile.mkdtemp(dir=base)
    w = os.path.join(d, "w")
    os.mkdir(w)
    with open(os.path.join(w, "in"), "wb") as f:
        f.write(os.urandom(64 << 20))
    lines = []
    x = 1
    with open(os.path.join(w, "words"), "w") as f:
        while f.tell() < 32 << 20:
            x = (x * 6364136223846793005 + 1442695040888963407) % (1 << 64)
            f.write(f"{x:016x} a line of text for sort to order\n")
    os.mkdir(os.path.join(w, "spill"))
    shutil.copytree("/usr/include", os.path.join(w, "tree"), symlinks=True)
    programs = {
        "dd 64 MiB, 64 KiB calls": ["dd", "if=in", "of=out", "bs=64k", "status=none"],
        "sqlite3 100k rows, synchronous=FULL": ["sqlite3", "db", f".read {sql}"],
        "sort 32 MiB, 2 MiB buffer": ["sort", "-S", "2M", "--parallel=1", "-T", "spill", "-o",
                                      "sorted", "words"],
        "tar of /usr/include": ["tar", "cf", "out.tar", "tree"],
    }
    builds = [("this build", IOGAUGE)] + [(f"baseline {i + 1}", b)
                                          for i, b in enumerate(baselines)]
    rows = [f"Each program run alone and recorded {rounds} times, each recording replayed at once "
            "by each build (alternating); the row is each build's median round by replayed span "
            "against recorded span, with that ratio's range over the rounds. Recorded span in "
            "brackets: less the capture's own cost as it measured it. The program alone: the "
            "median of its plain runs' wall time, less that of `true` (starting and ending a "
            "process), timed in the same rounds — what a replay that took the capture's cost "
            "out of the think times aims at.", "",
            "| program | build | recorded span ms | replayed span ms | span × | span × range | "
            "program alone ms | replayed × alone | "
            "recorded time in calls ms | replayed ms | × | issue error p50 / p99 µs | "
            "calls differing |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    place = os.path.join(d, "replay")
    os.makedirs(place, exist_ok=True)
    for name, cmd in programs.items():
        trace = os.path.join(d, "p.iogtrace")
        runs = {b: [] for b, _ in builds}
        alone = []

        def clean():
            for f in ("out", "sorted", "db", "out.tar"):
                p = os.path.join(w, f)
                if os.path.exists(p):
                    os.remove(p)
        for k in range(rounds):
            clean()
            alone.append(timed(cmd, w)[0] - timed(["true"], w)[0])
            clean()
            timed([IOGAUGE, "record", "-o", trace, "--overwrite-output", "--"] + cmd, w)
            for b, binary in (builds if k % 2 == 0 else builds[::-1]):
                out = subprocess.run([binary, "replay", trace, "--directory", place,
                                      "--output-format=json"], capture_output=True, text=True,
                                     check=True)
                runs[b].append(json.loads(out.stdout))
        for b, _ in builds:
            def span(j):
                return j["replayed_span_ns"] / max(j["recorded_span_ns"], 1)
            ranked = sorted(runs[b], key=span)
            r = ranked[(len(ranked) - 1) // 2]
            untraced = r.get("recorded_span_untraced_ns") or r["recorded_span_ns"]
            plain = statistics.median(alone) * 1e9
            rows.append(
                f"| {name} | {b} | {r['recorded_span_ns'] / 1e6:.1f} ({untraced / 1e6:.1f}) | "
                f"{r['replayed_span_ns'] / 1e6:.1f} | {span(r):.3f} "
                f"({r['replayed_span_ns'] / max(untraced, 1):.3f}) | "
                f"{span(ranked[0]):.3f}–{span(ranked[-1]):.3f} | "
                f"{plain / 1e6:.1f} | {r['replayed_span_ns'] / max(plain, 1):.3f} | "
                f"{r['recorded_io_ns'] / 1e6:.1f} | {r['replayed_io_ns'] / 1e6:.1f} | "
                f"{r['replayed_io_ns'] / max(r['recorded_io_ns'], 1):.3f} | "
                f"{r['issue_error_p50_ns'] / 1e3:.1f} / {r['issue_error_p99_ns'] / 1e3:.1f} | "
                f"{r['results_differ']} |")
            print(rows[-1], flush=True)
    shutil.rmtree(d)
    return rows


MAPPED_PAGES = 2000
MAPPED_PROGRAM = """import mmap, os, random
fd = os.open('data.bin', os.O_RDONLY)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
size = os.fstat(fd).st_size
m = mmap.mmap(fd, size, prot=mmap.PROT_READ)
m.madvise(mmap.MADV_RANDOM)
rng = random.Random(7)
total = 0
for _ in range(TOUCHES):
    total += m[rng.randrange(size // mmap.PAGESIZE) * mmap.PAGESIZE]
print(total)
"""


def mapped(rounds, disk_dir, shm_dir, baselines):
    """The mapped-read program recorded on the disk each round and replayed there and on
    tmpfs by each build (each round in the other order from the last); and recorded on tmpfs,
    where its span is what a replay there should come to."""
    builds = [("this build", IOGAUGE)] + [(f"baseline {i + 1}", b)
                                          for i, b in enumerate(baselines)]
    if baselines and rounds % 2:
        rounds += 1
    disk = tempfile.mkdtemp(dir=disk_dir, prefix="iogauge-rr-map-")
    shm = tempfile.mkdtemp(dir=shm_dir, prefix="iogauge-rr-map-")
    try:
        data = os.urandom(256 << 20)
        for w in (disk, shm):
            with open(os.path.join(w, "data.bin"), "wb") as f:
                f.write(data)
                os.fsync(f.fileno())
            with open(os.path.join(w, "p.py"), "w") as f:
                f.write(MAPPED_PROGRAM.replace("TOUCHES", str(MAPPED_PAGES)))
        del data
        py = "/usr/bin/python3"
        runs = {b: [] for b, _ in builds}
        for k in range(rounds):
            traces = {}
            for w in (disk, shm):
                traces[w] = os.path.join(w, "m.iogtrace")
                timed([IOGAUGE, "record", "-o", traces[w], "--overwrite-output", "--", py,
                       "p.py"], w)
            truth = None
            for b, binary in (builds if k % 2 == 0 else builds[::-1]):
                got = {}
                for name, trace, place in (("disk", traces[disk], disk),
                                           ("tmpfs", traces[disk], shm),
                                           ("truth", traces[shm], shm)):
                    if name == "truth" and truth is not None:
                        continue
                    out = subprocess.run([binary, "replay", trace, "--directory", place,
                                          "--output-format=json"], capture_output=True,
                                         text=True, check=True)
                    got[name] = json.loads(out.stdout)
                truth = truth or got["truth"]["recorded_span_ns"]
                runs[b].append((got["disk"], got["tmpfs"], truth))
            print(f"mapped round {k + 1}: " + ", ".join(
                f"{b}: disk {v[-1][0]['replayed_span_ns'] / max(v[-1][0]['recorded_span_ns'], 1):.3f}, "
                f"tmpfs {v[-1][1]['replayed_span_ns'] / max(v[-1][2], 1):.3f}"
                for b, v in runs.items()), flush=True)
        rows = [f"{MAPPED_PAGES} random pages of 256 MiB through a mapping (MADV_RANDOM), "
                f"{rounds} rounds; the median round by each ratio, its range beside it.", "",
                "| build | disk: replayed span × recorded (range) | faults recorded / replayed / "
                "read from storage here | tmpfs: replayed span ms | program's span on tmpfs ms "
                "| × (range) |", "|---|---|---|---|---|---|"]
        for b, v in runs.items():
            same = sorted(x[0]["replayed_span_ns"] / max(x[0]["recorded_span_ns"], 1) for x in v)
            to = sorted(v, key=lambda x: x[1]["replayed_span_ns"] / max(x[2], 1))
            mid = to[(len(to) - 1) // 2]
            ratio = [x[1]["replayed_span_ns"] / max(x[2], 1) for x in to]
            f = v[(len(v) - 1) // 2][0].get("faults") or {}
            faults = (f"{f.get('recorded', '-')} / {f.get('replayed', '-')} / "
                      f"{f.get('major_here', '-')}")
            rows.append(f"| {b} | {same[(len(same) - 1) // 2]:.3f} ({same[0]:.3f}–{same[-1]:.3f}) "
                        f"| {faults} | {mid[1]['replayed_span_ns'] / 1e6:.1f} | {mid[2] / 1e6:.1f} "
                        f"| {ratio[(len(ratio) - 1) // 2]:.3f} ({ratio[0]:.3f}–{ratio[-1]:.3f}) |")
            print(rows[-1], flush=True)
        return rows
    finally:
        shutil.rmtree(disk, ignore_errors=True)
        shutil.rmtree(shm, ignore_errors=True)


def fio_aio(cmd_dir, extra):
    """fio's JSON for a libaio random read job in `cmd_dir`, run as `extra` + fio."""
    fio = ["fio", "--name=aio", "--filename=f", "--ioengine=libaio", "--direct=1",
           "--rw=randread", "--bs=4k", "--iodepth=16", "--size=256m", "--io_size=32m",
           "--randrepeat=0", "--output-format=json"]
    out = subprocess.run(extra + fio, cwd=cmd_dir, capture_output=True, text=True, check=True)
    j = json.loads(out.stdout[out.stdout.index("{"):])["jobs"][0]["read"]
    return j["iops"], j["clat_ns"]["mean"] / 1e3


def aio(rounds, disk_dir):
    d = tempfile.mkdtemp(dir=disk_dir, prefix="iogauge-rr-aio-")
    try:
        subprocess.run(["fio", "--name=lay", "--filename=f", "--size=256m", "--rw=write",
                        "--bs=1m", "--output=/dev/null"], cwd=d, check=True)
        trace = os.path.join(d, "aio.iogtrace")
        record = [IOGAUGE, "record", "-o", trace, "--overwrite-output", "--"]
        runs = {"plain": [], "iogauge record": []}
        for r in range(rounds):
            for name, extra in (("plain", []), ("iogauge record", record)):
                runs[name].append(fio_aio(d, extra))
            print(f"aio round {r + 1}: " + ", ".join(
                f"{k} {v[-1][0]:.0f} IOPS" for k, v in runs.items()), flush=True)
        plain = statistics.median(x[0] for x in runs["plain"])
        rows = ["| fio libaio randread 4 KiB, iodepth 16, O_DIRECT | median IOPS | runs (IOPS) "
                "| × plain | median clat µs |", "|---|---|---|---|---|"]
        for k, v in runs.items():
            iops = statistics.median(x[0] for x in v)
            rows.append(f"| {k} | {iops:.0f} | {', '.join(f'{x[0]:.0f}' for x in v)} | "
                        f"{iops / plain:.3f} | {statistics.median(x[1] for x in v):.1f} |")
        st = trace_stats(trace)
        out = subprocess.run([IOGAUGE, "replay", trace, "--directory", d, "--output-format=json"],
                             capture_output=True, text=True, check=True)
        r = json.loads(out.stdout)
        reads = next((o for o in r["ops"] if o["op"] == "read"), {})
        rows += ["", f"The last recorded run's trace: {st['async_ios']} asynchronous I/Os held, "
                 f"{st['async_unseen']} unseen. Replayed on the same disk (closed mode): span "
                 f"{r['replayed_span_ns'] / 1e6:.1f} ms against {r['recorded_span_ns'] / 1e6:.1f} "
                 f"ms recorded (× {r['replayed_span_ns'] / max(r['recorded_span_ns'], 1):.3f}); "
                 f"reads {reads.get('calls', 0)}, latency mean "
                 f"{reads.get('lat_mean_ns', 0) / 1e3:.1f} µs (recorded "
                 f"{reads.get('recorded_lat_mean_ns', 0) / 1e3:.1f} µs); calls differing: "
                 f"{r['results_differ']}."]
        return rows
    finally:
        shutil.rmtree(d, ignore_errors=True)


def uring_job(d, direct, rw):
    """Records fio's io_uring job in `d` (its file written and synced first, so that fio's
    own invalidation leaves it out of the page cache); the trace's path."""
    subprocess.run(["fio", "--name=lay", "--filename=f", "--size=256m", "--rw=write",
                    "--bs=1m", "--end_fsync=1", "--output=/dev/null"], cwd=d, check=True)
    trace = os.path.join(d, "u.iogtrace")
    fio = ["fio", "--name=u", "--filename=f", "--ioengine=io_uring", f"--direct={direct}",
           f"--rw={rw}", "--bs=4k", "--iodepth=16", "--iodepth_batch_submit=4", "--size=256m",
           "--io_size=16m", "--randrepeat=1", "--output=/dev/null"]
    timed([IOGAUGE, "record", "-o", trace, "--overwrite-output", "--"] + fio, d)
    return trace


def uring(rounds, places, baselines):
    """Each place: (name, directory, direct, fio's rw); each baseline another build's path."""
    binaries = [("this build", IOGAUGE)] + [(f"baseline {i + 1}", b)
                                            for i, b in enumerate(baselines)]
    rows = ["| storage | replayed by | time in calls × recorded (runs) | read latency mean µs "
            "(recorded) | write latency mean µs (recorded) | span × recorded |",
            "|---|---|---|---|---|---|"]
    for name, where, direct, rw in places:
        d = tempfile.mkdtemp(dir=where, prefix="iogauge-rr-uring-")
        try:
            trace = uring_job(d, direct, rw)
            runs = {b: [] for b, _ in binaries}
            for _ in range(rounds):
                for b, exe in binaries:
                    out = subprocess.run([exe, "replay", trace, "--directory", d,
                                          "--output-format=json"], capture_output=True,
                                         text=True, check=True)
                    runs[b].append(json.loads(out.stdout))
            for b, rs in runs.items():
                io = [r["replayed_io_ns"] / max(r["recorded_io_ns"], 1) for r in rs]
                mid = sorted(rs, key=lambda r: r["replayed_io_ns"])[len(rs) // 2]
                op = {o["op"]: o for o in mid["ops"]}
                lat = lambda k: (f"{op[k]['lat_mean_ns'] / 1e3:.1f} "
                                 f"({op[k]['recorded_lat_mean_ns'] / 1e3:.1f})") if k in op else "-"
                rows.append(f"| {name} | {b} | {statistics.median(io):.3f} "
                            f"({', '.join(f'{x:.3f}' for x in io)}) | {lat('read')} | "
                            f"{lat('write')} | "
                            f"{mid['replayed_span_ns'] / max(mid['recorded_span_ns'], 1):.3f} |")
                print(rows[-1], flush=True)
        finally:
            shutil.rmtree(d, ignore_errors=True)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline", action="append", default=[],
                    help="another iogauge build (repeatable): the overhead and calibration "
                    "parts record with it too and the io_uring part replays with it, "
                    "alternating")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dir", default="/dev/shm")
    ap.add_argument("--disk-dir", default="/var/tmp",
                    help="a directory on the disk: the overhead again where fsync waits for it")
    ap.add_argument("--no-save", action="store_true")
    ap.add_argument("--only", default="overhead,calibration,fidelity,mapped,aio,uring,memory",
                    help="the parts to run, comma-separated")
    a = ap.parse_args()
    only = set(a.only.split(","))
    m, lines = start("iogauge record's overhead and replay's fidelity")
    base = tempfile.mkdtemp(dir=a.dir, prefix="iogauge-rr-")
    try:
        sql = sql_file(base)
        lines += [f"- files on {a.dir}; {a.rounds} alternating rounds"]
        for i, b in enumerate(a.baseline):
            lines += [f"- baseline {i + 1}: {b} ("
                      + subprocess.run([b, "--version"], capture_output=True,
                                       text=True).stdout.strip() + ")"]
        lines += [""]
        if "overhead" in only:
            lines += [f"## Capture overhead: sqlite3, {ROWS} rows in transactions of {PER_TXN}, "
                      "synchronous=FULL", ""]
            lines += overhead(a.rounds, base, sql, a.baseline)
            disk = tempfile.mkdtemp(dir=a.disk_dir, prefix="iogauge-rr-")
            try:
                lines += ["", f"Again on the disk ({a.disk_dir}), where each commit waits for "
                          "fsync:", ""]
                lines += overhead(a.rounds, disk, sql, a.baseline)
            finally:
                shutil.rmtree(disk, ignore_errors=True)
        if "calibration" in only:
            lines += ["", "## The trace's overhead figure against the capture's cost "
                      f"(on {a.dir})", ""]
            lines += calibration(a.rounds, base, a.baseline)
        if "fidelity" in only:
            lines += ["", "## Replay fidelity: closed mode, same storage (recorded and replayed "
                      f"on {a.dir})", ""]
            lines += fidelity(a.rounds, base, sql, a.baseline)
        if "mapped" in only:
            lines += ["", "## Mapped reads replayed: major page faults, on the disk "
                      f"({a.disk_dir}) and on tmpfs ({a.dir})", ""]
            lines += mapped(a.rounds, a.disk_dir, a.dir, a.baseline)
        if "aio" in only:
            lines += ["", f"## Native AIO: fio with libaio on the disk ({a.disk_dir})", ""]
            lines += aio(a.rounds, a.disk_dir)
        if "uring" in only:
            lines += ["", "## io_uring replayed: fio's io_uring job (4 KiB, iodepth 16, "
                      f"batches of 4) on {a.dir} and on the disk ({a.disk_dir})", ""]
            lines += uring(a.rounds, [("tmpfs, buffered, randrw", a.dir, 0, "randrw"),
                                      ("disk, buffered, randread", a.disk_dir, 0, "randread"),
                                      ("disk, O_DIRECT, randrw", a.disk_dir, 1, "randrw")],
                           a.baseline)
        if "memory" in only:
            lines += ["", f"## The recorder's memory: dd in 512-byte calls (on {a.dir})", ""]
            lines += memory(base)
            disk = tempfile.mkdtemp(dir=a.disk_dir, prefix="iogauge-rr-")
            try:
                lines += ["", f"Again on the disk ({a.disk_dir}), reading with iflag=direct: "
                          "each read sleeps, two switch records with it", ""]
                lines += memory(disk, DISK_MEMORY_COUNTS, direct=True)
            finally:
                shutil.rmtree(disk, ignore_errors=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    text = "\n".join(lines) + "\n"
    print(text)
    if not a.no_save:
        save(text, m, "-record-replay")


if __name__ == "__main__":
    main()
