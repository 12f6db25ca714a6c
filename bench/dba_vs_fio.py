#!/usr/bin/env python3
"""The DBA job file (bench/jobs/dba.fio) through fio and iogauge, side by side.

Two 8 KiB random readers at QD16 (direct, libaio in fio, io_uring in iogauge) beside an 8 KiB
log writer with fdatasync=1, one group, group_reporting. Both tools run the same job file over
the same files, alternately (ABBA across rounds, so the drifting disk favours neither), and
every figure both reports is compared: read IOPS, bandwidth and completion latency (mean,
p50, p99), write IOPS and latency, sync (fdatasync) count and latency, usr/sys CPU and
job_runtime, all read from each tool's fio-format JSON. Prints per-round values, the median
ratio iogauge/fio and the spread of fio's own rounds (max/min), so a difference can be set
against the noise; writes the table to bench/results/DATE-HHMM-HOST-dba.md.

Usage: python3 bench/dba_vs_fio.py [--rounds N] [--seconds S] [--dir DIR] [--data-size SIZE]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vs_fio import IOGAUGE, ROOT, save, start  # noqa: E402

JOB = os.path.join(ROOT, "bench", "jobs", "dba.fio")

# (label, path in fio's job entry); percentiles as fio keys them.
FIGURES = [
    ("read IOPS", ("read", "iops")),
    ("read KiB/s", ("read", "bw")),
    ("read clat mean µs", ("read", "clat_ns", "mean"), 1e-3),
    ("read clat p50 µs", ("read", "clat_ns", "percentile", "50.000000"), 1e-3),
    ("read clat p99 µs", ("read", "clat_ns", "percentile", "99.000000"), 1e-3),
    ("write IOPS", ("write", "iops")),
    ("write lat mean µs", ("write", "lat_ns", "mean"), 1e-3),
    # fio gives percentiles of clat only (lat_percentiles=0 by default).
    ("write clat p99 µs", ("write", "clat_ns", "percentile", "99.000000"), 1e-3),
    ("sync calls", ("sync", "lat_ns", "N")),
    ("sync lat mean µs", ("sync", "lat_ns", "mean"), 1e-3),
    ("sync lat p99 µs", ("sync", "lat_ns", "percentile", "99.000000"), 1e-3),
    ("usr_cpu %", ("usr_cpu",)),
    ("sys_cpu %", ("sys_cpu",)),
    ("job_runtime ms", ("job_runtime",)),
]


def pick(job, path, scale=1.0):
    v = job
    for k in path:
        v = v.get(k) if isinstance(v, dict) else None
        if v is None:
            return None
    return float(v) * scale


def run(tool, env, fio_job=JOB):
    if tool == "fio":
        cmd = ["fio", "--output-format=json", fio_job]
    else:
        cmd = [IOGAUGE, "job", JOB, "--output-format=json"]
    out = subprocess.run(cmd, env=env, check=True, text=True, capture_output=True).stdout
    doc = json.loads(out)
    jobs = doc["jobs"]
    assert len(jobs) == 1, f"{tool}: group_reporting gives one entry, got {len(jobs)}"
    return {f[0]: pick(jobs[0], f[1], *(f[2:] or [1.0])) for f in FIGURES}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--dir", default=ROOT, help="directory on the disk under test")
    ap.add_argument("--data-size", default="512m")
    ap.add_argument("--no-save", action="store_true")
    ap.add_argument("--fio-data-engine", default=None,
                    help="run fio's data readers with this engine instead of the job file's "
                         "libaio (io_uring: the engine iogauge runs libaio as), to tell the "
                         "kernel path's share of a difference from the tool's")
    a = ap.parse_args()
    m, head = start("DBA job file: iogauge vs fio")
    d = tempfile.mkdtemp(prefix="iogauge-dba-", dir=a.dir)
    env = dict(os.environ, DIR=d, RUNTIME=str(a.seconds), DATASIZE=a.data_size)
    fio_job = JOB
    if a.fio_data_engine:
        fio_job = os.path.join(tempfile.mkdtemp(prefix="iogauge-dba-job-"), "dba.fio")
        with open(JOB) as src, open(fio_job, "w") as dst:
            dst.write(src.read().replace("ioengine=libaio", f"ioengine={a.fio_data_engine}"))
    results = {"iogauge": [], "fio": []}
    try:
        for r in range(a.rounds):
            order = ["iogauge", "fio"] if r % 2 == 0 else ["fio", "iogauge"]
            for tool in order:
                results[tool].append(run(tool, env, fio_job))
                # Each tool lays out its own files: remove them so neither reuses the other's.
                for f in os.listdir(d):
                    os.remove(os.path.join(d, f))
            print(f"round {r + 1}/{a.rounds} done", flush=True)
    finally:
        for f in os.listdir(d):
            os.remove(os.path.join(d, f))
        os.rmdir(d)
    lines = head
    lines += [f"- job file: bench/jobs/dba.fio, runtime {a.seconds} s, data files "
              f"{a.data_size} x 2 in {a.dir}; {a.rounds} alternating rounds (ABBA)"]
    if a.fio_data_engine:
        lines += [f"- fio's data readers ran with ioengine={a.fio_data_engine} instead of the "
                  "file's libaio (iogauge runs libaio as io_uring)"]
    lines += [""]
    lines += ["| figure | iogauge (median) | fio (median) | ratio | paired ratio: median "
              "[quartiles] | iogauge lower in | fio's own spread (max/min) |",
              "|---|---|---|---|---|---|---|"]
    for label, *_ in FIGURES:
        g = [x[label] for x in results["iogauge"] if x[label] is not None]
        f = [x[label] for x in results["fio"] if x[label] is not None]
        if not g or not f:
            lines.append(f"| {label} | {g and statistics.median(g)} | "
                         f"{f and statistics.median(f)} | – | – | – | – |")
            continue
        mg, mf = statistics.median(g), statistics.median(f)
        ratio = mg / mf if mf else float("nan")
        spread = max(f) / min(f) if min(f) > 0 else float("nan")
        # Each round's two runs are minutes apart at most: their ratio sees less of the
        # disk's drift than the ratio of medians does.
        pairs = [x[label] / y[label] for x, y in zip(results["iogauge"], results["fio"])
                 if x[label] is not None and y[label]]
        if len(pairs) >= 4:
            q = statistics.quantiles(pairs, n=4)
            paired = f"{statistics.median(pairs):.3f} [{q[0]:.3f}, {q[2]:.3f}]"
        else:
            paired = f"{statistics.median(pairs):.3f}" if pairs else "–"
        lower = sum(1 for x in pairs if x < 1)
        lines.append(f"| {label} | {mg:.1f} | {mf:.1f} | {ratio:.3f} | {paired} | "
                     f"{lower}/{len(pairs)} | {spread:.2f} |")
    lines += ["", "Per round (iogauge / fio):", ""]
    for label, *_ in FIGURES:
        cells = [f"{g[label] or 0:.0f}/{f[label] or 0:.0f}"
                 for g, f in zip(results["iogauge"], results["fio"])]
        lines.append(f"- {label}: " + ", ".join(cells))
    text = "\n".join(lines) + "\n"
    print(text)
    if not a.no_save:
        save(text, m, "-dba" + (f"-fio-{a.fio_data_engine}" if a.fio_data_engine else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
