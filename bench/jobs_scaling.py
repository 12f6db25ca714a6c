#!/usr/bin/env python3
"""numjobs scaling: N jobs against one, in the same run, alternating (issue 34).

Cases where the tool, not the storage, is the limit: the null engine (no system call per I/O:
what the tool itself costs per I/O, and whether its jobs share a cache line), 4 KiB random
preads of a cached tmpfs file, and the same through io_uring at depth 32. The file is shared
by every job, as fio's numjobs shares a --filename. Each case runs one job and N jobs (N = the
CPUs, unless --jobs), with iogauge and with fio, in rotating order, ROUNDS rounds of SECONDS;
the figure is the group's IOPS (group_reporting), and the scaling is N jobs' IOPS over one
job's from the same round, pair by pair (the machine's speed drifts between rounds). Goals:
iogauge >= 1.9x one job on 2 CPUs, >= 15x on 16 (0.94 N elsewhere), for null and psync. The whole process's CPU
per I/O (getrusage of the children: threads, forked jobs and io_uring's workers) is shown too:
if it grows with N, the jobs are contending for something.

On a machine with no cargo or fio: bench/pack.sh DIR here, then IOGAUGE_PREBUILT=DIR there.
Writes bench/results/DATE-HHMM-HOST-scaling.md.

Usage: python3 bench/jobs_scaling.py [--jobs N] [--rounds R] [--seconds S] [--only CASES]
                                     [--no-fio] [--no-save]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vs_fio import FIO, IOGAUGE, children_cpu, save, start  # noqa: E402

FILE = "/dev/shm/iogauge-scaling.dat"
SIZE = 256 << 20

# name: (options, whether the goal applies). io_uring's buffered reads of tmpfs run in the
# kernel's io-wq workers, so one such job already keeps more than one CPU busy: its scaling is
# shown, not judged.
CASES = {
    "null-4k-randread": (["--ioengine=null", "--rw=randread", "--bs=4k", "--size=1g"], True),
    "psync-4k-randread-tmpfs": (["--ioengine=psync", "--rw=randread", "--bs=4k",
                                 f"--filename={FILE}", f"--size={SIZE}"], True),
    "uring-4k-randread-q32-tmpfs": (["--ioengine=io_uring", "--iodepth=32", "--rw=randread",
                                     "--bs=4k", f"--filename={FILE}", f"--size={SIZE}"], False),
}


def goal(n):
    """The issue's figures: 1.9x on 2 CPUs, 15x on 16; 94% of linear elsewhere."""
    return {1: 1.0, 2: 1.9, 16: 15.0}.get(n, 0.94 * n)


def one(tool, opts, jobs, seconds):
    """The group's IOPS and the whole process's CPU ns per I/O for one run."""
    common = ["--name=s", f"--numjobs={jobs}", "--group_reporting", "--time_based",
              f"--runtime={seconds}", "--output-format=json"] + opts
    cmd = ([FIO] if tool == "fio" else [IOGAUGE, "run"]) + common
    cpu0 = children_cpu()
    p = subprocess.run(cmd, text=True, capture_output=True)
    cpu = children_cpu() - cpu0
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stderr}")
    doc = json.loads(p.stdout)
    if tool == "fio":
        j = doc["jobs"][0]
        iops, ios = j["read"]["iops"], j["read"]["total_ios"] + j["write"]["total_ios"]
    else:
        t = doc["groups"][0]["total"]
        iops = t["read"]["iops"] + t["write"]["iops"]
        ios = t["read"]["ios"] + t["write"]["ios"]
    return iops, cpu * 1e9 / max(1, ios)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=3)
    ap.add_argument("--only", default="")
    ap.add_argument("--no-fio", action="store_true")
    ap.add_argument("--no-save", action="store_true")
    a = ap.parse_args()
    n = a.jobs
    m, lines = start(f"numjobs scaling: {n} jobs against one")
    tools = ["iogauge"] + ([] if a.no_fio else ["fio"])
    lines += [f"- {a.rounds} rounds of {a.seconds} s per side, in rotating order; 1 and {n} "
              f"jobs; {os.cpu_count()} CPUs; a {SIZE >> 20} MiB file on tmpfs (/dev/shm), "
              "shared by the jobs; the group's IOPS (group_reporting); scaling = N jobs' IOPS "
              "over one job's in the same round, paired", "",
              "| case | tool | 1 job: IOPS | CPU ns/I/O | " + f"{n} jobs: IOPS | CPU ns/I/O | "
              "scaling, paired: median (min-max) | goal |",
              "|---|---|---|---|---|---|---|---|"]
    chosen = {k: v for k, v in CASES.items() if not a.only or k in a.only.split(",")}
    if any(FILE in " ".join(v[0]) for v in chosen.values()):
        with open(FILE, "wb") as f:
            f.write(os.urandom(SIZE))
    per_round = []
    try:
        for name, (opts, judged) in chosen.items():
            sides = [(t, j) for t in tools for j in (1, n)]
            got = {s: [] for s in sides}
            for r in range(a.rounds):
                order = sides[r % len(sides):] + sides[:r % len(sides)]
                for s in order:
                    got[s].append(one(s[0], opts, s[1], a.seconds))
                print(f"{name}: round {r + 1}/{a.rounds}", flush=True)
            for t in tools:
                ones, many = got[(t, 1)], got[(t, n)]
                paired = sorted(y[0] / x[0] for x, y in zip(ones, many) if x[0] > 0)
                med = statistics.median(paired)
                if t == "iogauge" and judged:
                    g = goal(n)
                    goal_text = f">= {g:.1f}x: " + ("met" if med >= g else "NOT met")
                else:
                    goal_text = "-"
                lines.append(
                    f"| {name} | {t} | {statistics.median(x[0] for x in ones) / 1e6:.2f} M | "
                    f"{statistics.median(x[1] for x in ones):.0f} | "
                    f"{statistics.median(x[0] for x in many) / 1e6:.2f} M | "
                    f"{statistics.median(x[1] for x in many):.0f} | "
                    f"{med:.3f}x ({paired[0]:.2f}-{paired[-1]:.2f}) | {goal_text} |")
                per_round.append(f"- {name}, {t}: " + ", ".join(
                    f"{x[0] / 1e6:.2f}/{y[0] / 1e6:.2f} M" for x, y in zip(ones, many)))
    finally:
        if os.path.exists(FILE):
            os.remove(FILE)
    lines += ["", f"Per round (1 job / {n} jobs):", ""] + per_round
    text = "\n".join(lines) + "\n"
    print(text)
    if not a.no_save:
        save(text, m, "-scaling")
    return 0


if __name__ == "__main__":
    sys.exit(main())
