#!/usr/bin/env python3
"""The latency clock, TSC against CLOCK_MONOTONIC, side by side in one run.

Each round runs the same job twice, alternating which goes first: iogauge with
clocksource=cpu (the TSC, calibrated against CLOCK_MONOTONIC) and with
clocksource=clock_gettime (CLOCK_MONOTONIC through the vDSO). Reported per clock: IOPS, the
whole process's CPU per I/O (getrusage of the child, ns), and the latency percentiles p50 and
p99 (clat_ns, which for psync is the whole call). The goal (issue 34): the TSC's percentiles
within 1% of CLOCK_MONOTONIC's at p50 and p99 (the clocks agree on what they time), and the
TSC no slower. Cases: psync 4 KiB random reads of a cached tmpfs file (the shortest I/O, where
the clock's own cost shows most) and io_uring at depth 32.

Usage: python3 bench/clocksource.py [--rounds N] [--seconds S] [--no-save]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vs_fio import IOGAUGE, children_cpu, save, start  # noqa: E402

FILE = "/dev/shm/iogauge-clock.dat"
SIZE = 256 << 20
CASES = {
    "psync-4k-randread": ["--rw=randread", "--bs=4k", "--ioengine=psync"],
    "uring-4k-randread-q32": ["--rw=randread", "--bs=4k", "--ioengine=io_uring",
                              "--iodepth=32"],
}
CLOCKS = ("cpu", "clock_gettime")


def run(opts, clock, seconds):
    cmd = [IOGAUGE, "run", "--name=c", f"--filename={FILE}", f"--size={SIZE}", "--time_based",
           f"--runtime={seconds}", f"--clocksource={clock}", "--output-format=json"] + opts
    cpu0 = children_cpu()
    doc = json.loads(subprocess.run(cmd, check=True, text=True, capture_output=True).stdout)
    cpu = children_cpu() - cpu0
    j = doc["jobs"][0]["read"]
    pct = j["clat_ns"]["percentile"]
    return {"iops": j["iops"], "cpu_ns": cpu * 1e9 / max(1, j["total_ios"]),
            "p50": pct["50.000000"], "p99": pct["99.000000"], "clock": doc["clock"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=int, default=3)
    ap.add_argument("--no-save", action="store_true")
    a = ap.parse_args()
    m, lines = start("The latency clock: TSC against CLOCK_MONOTONIC")
    lines += [f"- {a.rounds} rounds of {a.seconds} s per clock and case, alternating which "
              f"clock goes first; a {SIZE >> 20} MiB file on tmpfs, cached", "",
              "| case | clock | IOPS | CPU per I/O (ns) | p50 (ns) | p99 (ns) | "
              "TSC / monotonic: IOPS, p50, p99 (paired medians) | goal |",
              "|---|---|---|---|---|---|---|---|"]
    with open(FILE, "wb") as f:
        f.write(os.urandom(SIZE))
    per_round = []
    described = {}
    try:
        for name, opts in CASES.items():
            res = {c: [] for c in CLOCKS}
            for r in range(a.rounds):
                order = CLOCKS if r % 2 == 0 else tuple(reversed(CLOCKS))
                for c in order:
                    got = run(opts, c, a.seconds)
                    res[c].append(got)
                    described[c] = got["clock"]
                print(f"{name}: round {r + 1}/{a.rounds}", flush=True)
            med = {c: {k: statistics.median(x[k] for x in res[c])
                       for k in ("iops", "cpu_ns", "p50", "p99")} for c in CLOCKS}
            ratio = {k: statistics.median(t[k] / m_[k] for t, m_ in zip(res["cpu"],
                                                                         res["clock_gettime"]))
                     for k in ("iops", "p50", "p99")}
            met = abs(ratio["p50"] - 1) <= 0.01 and abs(ratio["p99"] - 1) <= 0.01
            for c in CLOCKS:
                x = med[c]
                lines.append(f"| {name} | {c} | {x['iops']:.0f} | {x['cpu_ns']:.0f} | "
                             f"{x['p50']:.0f} | {x['p99']:.0f} | " +
                             (f"{ratio['iops']:.3f}, {ratio['p50']:.3f}, {ratio['p99']:.3f} | "
                              f"p50 and p99 within 1%: {'met' if met else 'NOT met'} |"
                              if c == "cpu" else " | |"))
            per_round.append(f"- {name}: " + ", ".join(
                f"{t['iops']:.0f}/{g['iops']:.0f} p50 {t['p50']}/{g['p50']} p99 "
                f"{t['p99']}/{g['p99']}" for t, g in zip(res["cpu"], res["clock_gettime"])))
    finally:
        os.remove(FILE)
    lines += ["", "Clocks as the reports named them: " +
              "; ".join(f"{c}: {d}" for c, d in described.items()), "",
              "Per round (cpu / clock_gettime):", ""] + per_round
    text = "\n".join(lines) + "\n"
    print(text)
    if not a.no_save:
        save(text, m, "-clock")
    return 0


if __name__ == "__main__":
    sys.exit(main())
