#!/usr/bin/env python3
"""User-space instructions per I/O, counted exactly (valgrind's callgrind), for iogauge and
fio on the same jobs.

This VM has no hardware performance counters and its CPUs' speed drifts by ±25% between runs,
so time-based figures cannot resolve a 5% change in a tool's own cost. Instruction counts can:
callgrind counts every user-space instruction a program executes, the same on every run. Each
job runs twice, with `loops=A` and `loops=B` over a 256 MiB region of 4 KiB blocks, and the
difference divided by the extra I/Os is the cost of one I/O in the steady loop, start-up and
report left out. The kernel's share of a real I/O (the system call, the copy) is not counted:
it is the same for every program making that call. Cases: the null engine (iogauge's and
fio's bookkeeping alone: offset, clocks, histograms, counters) and psync 4 KiB random reads of
a tmpfs file.

Usage: python3 bench/instructions.py [--iogauge BIN] [--also BIN] [--no-save] [--only CASES]
(valgrind is installed from Debian if missing, as vs_fio.py installs fio.)
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vs_fio import IOGAUGE, save, start  # noqa: E402

FILE = "/dev/shm/iogauge-instructions.dat"
SIZE = 256 << 20
BLOCKS = SIZE // 4096
LOOPS = (2, 4)
CASES = {
    "null-4k-randread": ["--rw=randread", "--bs=4k", "--ioengine=null"],
    "psync-4k-randread-tmpfs": ["--rw=randread", "--bs=4k", "--ioengine=psync"],
}


def instructions(cmd):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "cg.out")
        r = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"] + cmd,
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr[-400:]}")
        m = re.search(r"Collected : (\d+)", r.stderr)
        return int(m.group(1))


def per_io(tool, binary, opts):
    counts = []
    for loops in LOOPS:
        common = [f"--filename={FILE}", f"--size={SIZE}", f"--loops={loops}",
                  "--output-format=json"] + opts
        if tool == "fio":
            cmd = ["fio", "--name=c", "--thread"] + common
        else:
            cmd = [binary, "run", "--name=c"] + common
        counts.append(instructions(cmd))
    return (counts[1] - counts[0]) / ((LOOPS[1] - LOOPS[0]) * BLOCKS)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iogauge", default=IOGAUGE, help="the iogauge binary to count")
    ap.add_argument("--also", default="", help="a second iogauge binary (an A/B)")
    ap.add_argument("--only", default="")
    ap.add_argument("--no-save", action="store_true")
    a = ap.parse_args()
    if not shutil.which("valgrind"):
        print("installing valgrind (Debian package)...", flush=True)
        subprocess.run(["apt-get", "update", "-qq"], check=True)
        subprocess.run(["apt-get", "install", "-y", "-qq", "valgrind"], check=True)
    m, lines = start("User-space instructions per I/O (callgrind)")
    sides = [("iogauge", a.iogauge)] + ([("iogauge B", a.also)] if a.also else []) + \
        [("fio", None)]
    lines += [f"- loops={LOOPS[0]} and loops={LOOPS[1]} over {BLOCKS} blocks of 4 KiB; the "
              "difference over the extra I/Os", f"- iogauge: {a.iogauge}"] + \
        ([f"- iogauge B: {a.also}"] if a.also else []) + \
        ["", "| case | " + " | ".join(s[0] for s in sides) + " | iogauge / fio |",
         "|---|" + "---|" * (len(sides) + 1)]
    with open(FILE, "wb") as f:
        f.write(os.urandom(SIZE))
    try:
        for name, opts in CASES.items():
            if a.only and name not in a.only.split(","):
                continue
            got = [per_io("fio" if s[0] == "fio" else "iogauge", s[1], opts) for s in sides]
            print(name, got, flush=True)
            lines.append(f"| {name} | " + " | ".join(f"{x:.0f}" for x in got) +
                         f" | {got[0] / got[-1]:.2f} |")
    finally:
        os.remove(FILE)
    text = "\n".join(lines) + "\n"
    print(text)
    if not a.no_save:
        save(text, m, "-instructions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
