#!/usr/bin/env python3
"""Where io_uring's gap to fio's t/io_uring comes from: t/io_uring as the ceiling uses it
(ring fd registered, no per-I/O timing), without the registered ring (-X0), with per-I/O
timing (-t1), and iogauge with and without its per-I/O latency (gtod_reduce=1), alternating,
depth 32, batch 1/1, 4 KiB random buffered reads of a tmpfs file, one thread.

Each side's IOPS is given as a fraction of plain t/io_uring's in the same round (paired).
Needs bench/pack.sh's folder (IOGAUGE_PREBUILT=DIR) or the ceiling bench's t/io_uring build.
Writes bench/results/DATE-HHMM-HOST-uring-gap.md unless --no-save.

Usage: python3 bench/uring_gap.py [--rounds R] [--seconds S] [--no-save]
"""

import argparse
import json
import os
import platform
import socket
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ceiling import T_IO_URING, t_io_uring as run_t_io_uring  # noqa: E402
from vs_fio import IOGAUGE, save  # noqa: E402

FILE = "/dev/shm/iogauge-uring-gap.dat"
SIZE = 256 << 20
# ceiling.t_io_uring adds -O0 -R1 -n1 -p0 (buffered, random, one thread, no polling).
T_ARGS = ["-d32", "-s1", "-c1", "-b4096", "-B0", "-F0"]
SIDES = {
    "t/io_uring": T_ARGS,
    "t/io_uring -X0 (ring fd not registered)": T_ARGS + ["-X0"],
    "t/io_uring -t1 (per-I/O timing)": T_ARGS + ["-t1"],
    "iogauge": [],
    "iogauge gtod_reduce=1 (no per-I/O latency)": ["--gtod_reduce=1"],
}


def t_io_uring(extra, seconds):
    return run_t_io_uring(["t-io_uring", FILE] + extra, seconds)["iops"]


def iogauge(extra, seconds):
    out = subprocess.run([IOGAUGE, "fio", "--name=g", f"--filename={FILE}", f"--size={SIZE}",
                          "--rw=randread", "--bs=4k", "--ioengine=io_uring", "--iodepth=32",
                          "--iodepth_batch_submit=1", "--iodepth_batch_complete_min=1",
                          "--time_based", f"--runtime={seconds}", "--output-format=json"]
                         + extra, check=True, text=True, capture_output=True).stdout
    return json.loads(out)["jobs"][0]["read"]["iops"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--seconds", type=int, default=3)
    ap.add_argument("--no-save", action="store_true")
    a = ap.parse_args()
    with open(FILE, "wb") as f:
        f.write(os.urandom(SIZE))
    got = {k: [] for k in SIDES}
    try:
        names = list(SIDES)
        for r in range(a.rounds):
            for k in names[r % len(names):] + names[:r % len(names)]:
                run = t_io_uring if k.startswith("t/") else iogauge
                got[k].append(run(SIDES[k], a.seconds))
            print(f"round {r + 1}/{a.rounds}", flush=True)
    finally:
        os.remove(FILE)
    lines = [f"# io_uring's gap to t/io_uring, by variant — {a.rounds} rounds of {a.seconds} s",
             "", f"- host: {socket.gethostname()}, kernel {platform.release()}, "
             f"{os.cpu_count()} CPUs", f"- t/io_uring: {T_IO_URING}", f"- iogauge: {IOGAUGE}",
             "- depth 32, batch 1/1, 4 KiB random buffered reads of a 256 MiB tmpfs file", "",
             "| side | IOPS, median | of plain t/io_uring, paired: median (min-max) |",
             "|---|---|---|"]
    base = got["t/io_uring"]
    for k, v in got.items():
        paired = sorted(x / b for x, b in zip(v, base))
        lines.append(f"| {k} | {statistics.median(v):.0f} | {statistics.median(paired):.3f} "
                     f"({paired[0]:.2f}-{paired[-1]:.2f}) |")
    text = "\n".join(lines) + "\n"
    print(text)
    if not a.no_save:
        save(text, {"host": socket.gethostname()}, "-uring-gap")
    return 0


if __name__ == "__main__":
    sys.exit(main())
