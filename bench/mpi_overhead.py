#!/usr/bin/env python3
"""Scale-out overhead: the same work as 4 MPI ranks on one host against numjobs=4 in one
process, side by side.

Both run 4 jobs of 4 KiB random reads (psync) on their own tmpfs files for SECONDS, rounds
alternating (ABBA). The MPI side is `mpirun -n 4 iogauge run …` (built with --features mpi):
each rank one job, merged on rank 0; the other is `iogauge run --numjobs=4 --group_reporting`.
Compared: the aggregate IOPS and MiB/s each reports. The issue's goal: within 5%.

Usage: python3 bench/mpi_overhead.py [--rounds N] [--seconds S] [--no-save]
Needs OpenMPI (scripts/test-deps.sh installs it).
"""

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vs_fio import IOGAUGE, ROOT, machine, save  # noqa: E402


def run(side, seconds, d):
    common = [f"--directory={d}", "--size=64m", "--rw=randread", "--bs=4k", "--time_based",
              f"--runtime={seconds}", "--output-format=json"]
    if side == "mpi":
        cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-n", "4", IOGAUGE, "run",
               "--name=r"] + common
    else:
        cmd = [IOGAUGE, "run", "--name=r", "--numjobs=4", "--group_reporting"] + common
    out = subprocess.run(cmd, check=True, text=True, capture_output=True).stdout
    doc = json.loads(out)
    total = doc["groups"][0]["total"]["read"]
    jobs = len(doc["groups"][0]["jobs"])
    assert jobs == 4, (side, jobs)
    return total["iops"], total["mib_per_s"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--seconds", type=int, default=3)
    ap.add_argument("--no-save", action="store_true")
    a = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "--quiet", "--features", "mpi"], cwd=ROOT,
                   check=True)
    m = machine()
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [f"# Scale-out overhead: 4 MPI ranks vs numjobs=4 — {when}", ""]
    lines += [f"- {k}: {v}" for k, v in m.items()]
    lines += [f"- job: 4 x 4 KiB random reads (psync), 64 MiB tmpfs file each, {a.seconds} s; "
              f"{a.rounds} alternating rounds (ABBA); mpirun -n 4 (OpenMPI) vs --numjobs=4", "",
              "| round | MPI IOPS | numjobs IOPS | MPI MiB/s | numjobs MiB/s |", "|---|---|---|---|---|"]
    res = {"mpi": [], "threads": []}
    with tempfile.TemporaryDirectory(dir="/dev/shm") as d:
        for r in range(a.rounds):
            order = ["mpi", "threads"] if r % 2 == 0 else ["threads", "mpi"]
            for side in order:
                res[side].append(run(side, a.seconds, d))
            (mi, mm), (ti, tm) = res["mpi"][-1], res["threads"][-1]
            lines.append(f"| {r + 1} | {mi:.0f} | {ti:.0f} | {mm:.1f} | {tm:.1f} |")
            print(lines[-1], flush=True)
    ratios = [x[0] / y[0] for x, y in zip(res["mpi"], res["threads"])]
    med = statistics.median(ratios)
    lines += ["", f"Paired IOPS ratio MPI / numjobs: median {med:.3f} "
              f"[{min(ratios):.3f}, {max(ratios):.3f}] — "
              + ("within 5%" if abs(med - 1) <= 0.05 else "NOT within 5%")]
    text = "\n".join(lines) + "\n"
    print(text)
    if not a.no_save:
        save(text, m, "-mpi-overhead")
    return 0


if __name__ == "__main__":
    sys.exit(main())
