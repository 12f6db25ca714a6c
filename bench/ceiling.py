#!/usr/bin/env python3
"""iogauge against its ceiling, side by side with fio.

The ceiling is bench/ceiling/: minimal loops that make the same system calls as each case and
measure nothing (a pread loop; an io_uring submit/reap loop at the same depth, plain and with
registered file and buffers; memcpy; drawing offsets). Each case runs ceiling, iogauge and fio
alternately for ROUNDS rounds of SECONDS on a tmpfs file, and reports each tool as a fraction
of the ceiling's median. The goals (issue 18): psync and io_uring on tmpfs >= 95% of the
ceiling with per-I/O latency recorded; cached 1 MiB reads >= 75% of single-thread memcpy; the
null engine >= 15 M IOPS per core.

Usage: python3 bench/ceiling.py [--rounds N] [--seconds S] [--only CASES] [--no-save]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vs_fio import IOGAUGE, ROOT, save, start  # noqa: E402

CEILING_DIR = os.path.join(ROOT, "bench", "ceiling")
CEILING = os.path.join(CEILING_DIR, "target", "release", "iogauge-ceiling")
FILE = "/dev/shm/iogauge-ceiling.dat"
SIZE = 256 << 20
# Device-bound cases: a file on the disk under the checkout, read with O_DIRECT; many short
# alternating rounds, since the disk's speed drifts (see vs_fio.py).
DISK = os.path.join(ROOT, "iogauge-ceiling-disk.dat")
DISK_SIZE = 2 << 30
DISK_CASE = {"file": DISK, "size": DISK_SIZE, "direct": True}

# name: (ceiling args, iogauge/fio options, figure, goal fraction, what the ceiling is)
CASES = {
    "psync-4k-randread": (["pread", FILE, "4096"], ["--rw=randread", "--bs=4k",
                          "--ioengine=psync"], "iops", 0.95, "pread loop"),
    "uring-4k-randread-q32": (["uring", FILE, "4096", "32"], ["--rw=randread", "--bs=4k",
                              "--ioengine=io_uring", "--iodepth=32"], "iops", 0.95,
                              "io_uring loop, depth 32"),
    "uring-4k-randread-q32-fixed": (["uring", FILE, "4096", "32", "fixed"], ["--rw=randread",
                                    "--bs=4k", "--ioengine=io_uring", "--iodepth=32",
                                    "--fixedbufs=1", "--registerfiles=1"], "iops", 0.95,
                                    "io_uring loop, depth 32, registered file and buffers"),
    "uring-4k-randread-q32-timed": (["uring", FILE, "4096", "32", "timed"], ["--rw=randread",
                                    "--bs=4k", "--ioengine=io_uring", "--iodepth=32"], "iops",
                                    0.95, "io_uring loop, depth 32, timing each I/O"),
    "cached-1m-read": (["memcpy", str(1 << 20)], ["--rw=read", "--bs=1m", "--ioengine=psync"],
                       "bw", 0.75, "memcpy of 1 MiB, one thread"),
    "cached-1m-read-pread": (["pread", FILE, str(1 << 20), "seq"], ["--rw=read", "--bs=1m",
                             "--ioengine=psync"], "bw", 0.95,
                             "pread loop of 1 MiB, in order (the kernel's copy)"),
    "null-4k": (["offsets"], ["--rw=randread", "--bs=4k", "--ioengine=null"], "iops", None,
                "drawing random offsets only"),
    "direct-1m-read-disk": (["pread", DISK, str(1 << 20), "seq"], ["--rw=read", "--bs=1m",
                            "--ioengine=psync", "--direct=1"], "bw", 0.97,
                            "O_DIRECT pread loop of 1 MiB, in order", DISK_CASE),
    "direct-4k-randread-disk-q32": (["uring", DISK, "4096", "32"], ["--rw=randread", "--bs=4k",
                                    "--ioengine=io_uring", "--iodepth=32", "--direct=1"],
                                    "iops", 0.97, "O_DIRECT io_uring loop, depth 32",
                                    DISK_CASE),
}


def ceiling(args, seconds, direct=False):
    # The seconds come before the optional "fixed", "timed" and "direct".
    flags = [x for x in args if x in ("fixed", "timed", "seq")] + (["direct"] if direct else [])
    args = [x for x in args if x not in flags] + [str(seconds)] + flags
    out = subprocess.run([CEILING] + args, check=True, text=True,
                         capture_output=True).stdout.split()
    return {"iops": float(out[0]), "bw": float(out[1])}


def tool(name, opts, seconds, path=FILE, size=SIZE):
    common = [f"--filename={path}", f"--size={size}", "--time_based", f"--runtime={seconds}",
              "--output-format=json"] + opts
    if name == "fio":
        cmd = ["fio", "--name=c"] + common
    else:
        cmd = [IOGAUGE, "run", "--name=c"] + common
    doc = json.loads(subprocess.run(cmd, check=True, text=True, capture_output=True).stdout)
    j = doc["jobs"][0]["read"]
    return {"iops": j["iops"], "bw": j["bw_bytes"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=4)
    ap.add_argument("--disk-rounds", type=int, default=30)
    ap.add_argument("--disk-seconds", type=int, default=1)
    ap.add_argument("--only", default="")
    ap.add_argument("--no-save", action="store_true")
    a = ap.parse_args()
    m, lines = start("iogauge against its ceiling, with fio")
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=CEILING_DIR, check=True)
    cpus = os.cpu_count() or 1
    lines += [f"- {a.rounds} alternating rounds of {a.seconds} s per case; a 256 MiB file on "
              "tmpfs (/dev/shm), cached; fractions are of the ceiling's median", "",
              f"- device cases (`-disk`): {a.disk_rounds} alternating rounds of "
              f"{a.disk_seconds} s, O_DIRECT, a {DISK_SIZE >> 30} GiB file on the checkout's "
              "disk", "",
              "| case | figure | ceiling | iogauge | fio | iogauge / ceiling | fio / ceiling | "
              "paired iogauge / ceiling: median (min-max) | goal |",
              "|---|---|---|---|---|---|---|---|---|"]
    chosen = {k: v for k, v in CASES.items() if not a.only or k in a.only.split(",")}
    with open(FILE, "wb") as f:
        f.write(os.urandom(SIZE))
    if any(len(v) > 5 for v in chosen.values()):
        with open(DISK, "wb") as f:
            for _ in range(DISK_SIZE >> 20):
                f.write(os.urandom(1 << 20))
            os.fsync(f.fileno())
    per_round = []
    try:
        for name, case in chosen.items():
            cargs, opts, fig, goal, what = case[:5]
            disk = case[5] if len(case) > 5 else None
            rounds, secs = (a.disk_rounds, a.disk_seconds) if disk else (a.rounds, a.seconds)
            res = {"ceiling": [], "iogauge": [], "fio": []}
            for r in range(rounds):
                order = ["ceiling", "iogauge", "fio"]
                order = order[r % 3:] + order[:r % 3]
                for side in order:
                    if side == "ceiling":
                        res[side].append(ceiling(cargs, secs, bool(disk))[fig])
                    elif disk:
                        res[side].append(tool(side, opts, secs, disk["file"],
                                              disk["size"])[fig])
                    else:
                        res[side].append(tool(side, opts, secs)[fig])
                print(f"{name}: round {r + 1}/{rounds}", flush=True)
            c, g, f = (statistics.median(res[k]) for k in ("ceiling", "iogauge", "fio"))
            paired = sorted(y / x for x, y in zip(res["ceiling"], res["iogauge"]) if x > 0)
            paired_text = (f"{statistics.median(paired):.3f} ({paired[0]:.2f}-{paired[-1]:.2f})"
                           if paired else "-")
            unit = "IOPS" if fig == "iops" else "MB/s"
            scale = 1 if fig == "iops" else 1e6
            if name == "null-4k":
                goal_text = f">= 15 M IOPS per core: {g / 1e6:.1f} M" + \
                            (" (met)" if g >= 15e6 else " (NOT met)")
            else:
                # Judged on the rounds' paired ratios, not the ratio of the medians: the disk
                # drifts and the CPUs are shared, and a pair ran back to back.
                pm = statistics.median(paired) if paired else g / c
                if pm > 1.02:
                    # The tool beat the loop: the loop is not a ceiling yet, and says nothing.
                    goal_text = f">= {goal:.0%}: unknown (the loop is below the tool)"
                else:
                    goal_text = f"paired median >= {goal:.0%}: " + ("met" if pm >= goal
                                                                    else "NOT met")
            lines.append(f"| {name} ({what}) | {unit} | {c / scale:.0f} | {g / scale:.0f} | "
                         f"{f / scale:.0f} | {g / c:.3f} | {f / c:.3f} | {paired_text} | "
                         f"{goal_text} |")
            per_round.append(f"- {name}: " + ", ".join(
                f"{x / scale:.0f}/{y / scale:.0f}/{z / scale:.0f}"
                for x, y, z in zip(res["ceiling"], res["iogauge"], res["fio"])))
    finally:
        os.remove(FILE)
        if os.path.exists(DISK):
            os.remove(DISK)
    lines += ["", f"CPUs: {cpus}. Per round (ceiling / iogauge / fio):", ""] + per_round
    text = "\n".join(lines) + "\n"
    print(text)
    if not a.no_save:
        save(text, m, "-ceiling")
    return 0


if __name__ == "__main__":
    sys.exit(main())
