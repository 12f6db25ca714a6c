#!/usr/bin/env python3
"""Rank 0's merge cost against the number of ranks, measured and modelled.

Runs `mpirun -n N iogauge run …` (built with --features mpi, oversubscribed on this host) for
N in RANKS, each rank one 1 s job of 4 KiB random reads on its own tmpfs file (so every
rank's report carries latency histograms, as a real run's does), and reads what rank 0's
report says the merge cost it (`scaleout.merge`): the bytes it received, the time to take and
parse them, the merge itself, and its peak resident memory. A least-squares line over the
measured points gives the cost per rank, and the model at 10,000 ranks.

Usage: python3 bench/mpi_merge.py [--ranks 4,8,16,32,64] [--repeat 3] [--no-save]
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
from vs_fio import ROOT, machine, save  # noqa: E402

MPI_BIN = os.path.join(ROOT, "target", "mpi", "release", "iogauge")


def once(n, d):
    cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-n", str(n), MPI_BIN, "run",
           f"--directory={d}", "--size=1m", "--rw=randread", "--bs=4k", "--time_based",
           "--runtime=1", "--output-format=json"]
    out = subprocess.run(cmd, capture_output=True, check=True, cwd=d).stdout
    r = json.loads(out)
    m = r["scaleout"]["merge"]
    return m["received_bytes"], m["receive_ms"], m["merge_ms"], m["peak_rss_kib"], len(out)


def fit(xs, ys):
    """Least-squares y = a + b x."""
    mx, my = statistics.mean(xs), statistics.mean(ys)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return my - b * mx, b


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", default="4,8,16,32,64")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-save", action="store_true")
    a = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "--quiet", "--features", "mpi"], cwd=ROOT,
                   check=True, env={**os.environ, "CARGO_TARGET_DIR": os.path.join(ROOT, "target", "mpi")})
    ranks = [int(x) for x in a.ranks.split(",")]
    m = machine()
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [f"# Rank 0's merge cost against the ranks — {when}", ""]
    lines += [f"- {k}: {v}" for k, v in m.items()]
    lines += [f"- each rank: 1 s of 4 KiB random reads (psync) on its own 1 MiB tmpfs file; "
              f"mpirun -n N --oversubscribe on this host; median of {a.repeat} runs per N", "",
              "| ranks | received (KiB) | per rank (KiB) | receive (ms) | merge (ms) | rank 0 peak RSS (MiB) | report (KiB) |",
              "|---|---|---|---|---|---|---|"]
    rows = []
    with tempfile.TemporaryDirectory(dir="/dev/shm") as d:
        for n in ranks:
            runs = [once(n, d) for _ in range(a.repeat)]
            med = [statistics.median(x) for x in zip(*runs)]
            rows.append((n, *med))
            b, rcv, mrg, rss, rep = med
            lines.append(f"| {n} | {b / 1024:.0f} | {b / 1024 / n:.1f} | {rcv:.1f} | {mrg:.1f} | "
                         f"{rss / 1024:.1f} | {rep / 1024:.0f} |")
            print(lines[-1], flush=True)
    ns = [r[0] for r in rows]
    model = []
    for name, k, unit, scale in [("received", 1, "MiB", 1 / 1048576), ("receive", 2, "s", 1e-3),
                                 ("merge", 3, "s", 1e-3), ("rank 0 peak RSS", 4, "MiB", 1 / 1024)]:
        base, per = fit(ns, [r[k] for r in rows])
        at = (base + per * 10000) * scale
        model.append(f"- {name}: {per * scale * 1000 if unit == 's' else per * scale:.4g} "
                     f"{'ms' if unit == 's' else unit} per rank; at 10,000 ranks about {at:.3g} {unit}")
    lines += ["", "Linear model (least squares over the measured points):", ""] + model
    text = "\n".join(lines) + "\n"
    print(text)
    if not a.no_save:
        save(text, m, "-mpi-merge")
    return 0


if __name__ == "__main__":
    sys.exit(main())
