#!/usr/bin/env python3
"""Rank 0's merge cost against the number of ranks, measured and modelled.

Runs `mpirun -n N iogauge run …` (built with --features mpi, oversubscribed on this host) for
N in RANKS, each rank one 1 s job of 4 KiB random reads on its own tmpfs file (so every
rank's report carries latency histograms, as a real run's does), and reads what rank 0's
report says the merge cost it (`scaleout.merge`): the bytes it received, the time to take and
parse them, the merge itself, and its peak resident memory. A least-squares line over the
measured points gives the cost per rank, and the model at 10,000 ranks. Each N runs with a row
per rank's job (`--rank-jobs=each`) and per host and job (`--rank-jobs=host`), alternating.

Then the scales this host cannot launch, simulated (`examples/merge_model.rs`): one real rank's
report becomes the result of each of N ranks, 20 to a host, parsed and folded into the merge
one at a time as rank 0 does under mpirun, up to 10,000 ranks, in both modes, and with a row
per host and job through a tree of host leaders (`tree`: what iogauge does on more than one
host with --rank-jobs=host; each host's leader folds its host's results and sends rank 0 one
merge — the launched runs here are on one host, where there is no tree).

Usage: python3 bench/mpi_merge.py [--ranks 4,8,16,32,64] [--repeat 3] [--simulate 256,1000,4000,10000] [--no-save]
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


def once(n, d, jobs):
    cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-n", str(n), MPI_BIN, "run",
           f"--directory={d}", "--size=1m", "--rw=randread", "--bs=4k", "--time_based",
           "--runtime=1", "--output-format=json", f"--rank-jobs={jobs}"]
    out = subprocess.run(cmd, capture_output=True, check=True, cwd=d).stdout
    r = json.loads(out)
    m = r["scaleout"]["merge"]
    return m["received_bytes"], m["receive_ms"], m["merge_ms"], m["peak_rss_kib"], len(out)


def fit(xs, ys):
    """Least-squares y = a + b x."""
    mx, my = statistics.mean(xs), statistics.mean(ys)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return my - b * mx, b


def simulated(ranks):
    """The merge at N ranks, 20 to a host, simulated from one real rank's report."""
    subprocess.run(["cargo", "build", "--release", "--quiet", "--example", "merge_model"],
                   cwd=ROOT, check=True)
    model = os.path.join(ROOT, "target", "release", "examples", "merge_model")
    lines = ["", "Simulated (examples/merge_model.rs: one real rank's report, 1 s of 4 KiB random "
             "reads, as the result of each of N ranks, 20 to a host, each parsed and folded as it "
             "comes, as rank 0 does):", "",
             "| ranks | hosts | results via | received (MiB) | parse (ms) | fold (ms) | finish (ms) "
             "| a host leader (ms) | rank 0 memory growth (MiB) | report (MiB) | job rows |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory(dir="/dev/shm") as d:
        rep = os.path.join(d, "rank.json")
        with open(rep, "wb") as f:
            f.write(subprocess.run([MPI_BIN, "run",
                          f"--filename={d}/f", "--size=1m", "--rw=randread", "--bs=4k",
                          "--time_based", "--runtime=1", "--output-format=json"],
                         capture_output=True, check=True).stdout)
        for n in ranks:
            for jobs in ("each", "host", "tree"):
                out = subprocess.run([model, rep, str(n), "20", jobs], capture_output=True,
                                     check=True, text=True).stdout
                r = json.loads(out)
                via = {"each": "rank 0 (each)", "host": "rank 0 (host)",
                       "tree": "host leaders (host)"}[jobs]
                leader = f"{r['leader_ms_max']:.0f}" if jobs == "tree" else "–"
                lines.append(f"| {n} | {-(-n // 20)} | {via} | {r['received_bytes'] / 1048576:.1f} | "
                             f"{r['parse_ms']:.0f} | {r['fold_ms']:.0f} | {r['finish_ms']:.1f} | {leader} | "
                             f"{r['peak_rss_growth_kib'] / 1024:.1f} | "
                             f"{r['report_bytes'] / 1048576:.2f} | {r['job_rows']} |")
                print(lines[-1], flush=True)
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", default="4,8,16,32,64")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--simulate", default="256,1000,4000,10000")
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
              f"mpirun -n N --oversubscribe on this host; median of {a.repeat} runs per N and mode",
              "", "| ranks | --rank-jobs | received (KiB) | per rank (KiB) | receive (ms) | merge (ms) "
              "| rank 0 peak RSS (MiB) | report (KiB) |",
              "|---|---|---|---|---|---|---|---|"]
    rows = {"each": [], "host": []}
    with tempfile.TemporaryDirectory(dir="/dev/shm") as d:
        for n in ranks:
            runs = {"each": [], "host": []}
            for _ in range(a.repeat):
                for jobs in runs:
                    runs[jobs].append(once(n, d, jobs))
            for jobs, rs in runs.items():
                med = [statistics.median(x) for x in zip(*rs)]
                rows[jobs].append((n, *med))
                b, rcv, mrg, rss, rep = med
                lines.append(f"| {n} | {jobs} | {b / 1024:.0f} | {b / 1024 / n:.1f} | {rcv:.1f} | "
                             f"{mrg:.1f} | {rss / 1024:.1f} | {rep / 1024:.0f} |")
                print(lines[-1], flush=True)
    lines += ["", "Linear model (least squares over the measured points):", ""]
    for jobs, rs in rows.items():
        ns = [r[0] for r in rs]
        for name, k, unit, scale in [("received", 1, "MiB", 1 / 1048576), ("receive", 2, "s", 1e-3),
                                     ("merge", 3, "s", 1e-3), ("rank 0 peak RSS", 4, "MiB", 1 / 1024),
                                     ("report", 5, "MiB", 1 / 1048576)]:
            base, per = fit(ns, [r[k] for r in rs])
            at = (base + per * 10000) * scale
            lines.append(f"- {jobs}: {name}: {per * scale * 1000 if unit == 's' else per * scale:.4g} "
                         f"{'ms' if unit == 's' else unit} per rank; at 10,000 ranks about {at:.3g} {unit}")
    if a.simulate:
        lines += simulated([int(x) for x in a.simulate.split(",")])
    text = "\n".join(lines) + "\n"
    print(text)
    if not a.no_save:
        save(text, m, "-mpi-merge")
    return 0


if __name__ == "__main__":
    sys.exit(main())
