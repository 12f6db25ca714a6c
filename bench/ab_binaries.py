#!/usr/bin/env python3
"""Two iogauge binaries side by side, alternating (old/new, then new/old), on tmpfs.

Each round runs both binaries on the same 256 MiB tmpfs file (made here, random data), in
turn, for SECONDS each; the figure is the group's IOPS. Prints, per case, the median of the
rounds' new/old ratios and their range. With --c-pread, the bare C pread loop
(bench/ceiling/c/pread.c, built with cc -O2; bench/pack.sh's c-pread) runs in each round too,
and each binary's rate is given as a fraction of the loop's in the same round (psync cases,
one job). --jobs N runs N jobs of each (numjobs, group_reporting). --save writes the table to
bench/results/DATE-HHMM-HOST-ab.md with the machine and how it was run.

Build the old one from a worktree: git worktree add /tmp/old REV && (cd /tmp/old && cargo
build --release).

Usage: python3 bench/ab_binaries.py OLD NEW [ROUNDS] [CASE] [--seconds S] [--jobs N]
                                    [--c-pread BIN] [--save] [--old-label TEXT]
                                    [--new-label TEXT]
"""

import argparse
import hashlib
import json
import os
import platform
import socket
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vs_fio import save  # noqa: E402

FILE = "/dev/shm/ab.dat"
SIZE = 256 << 20
CASES = {
    "null": ["--ioengine=null", "--rw=randread", "--bs=4k"],
    "psync-tmpfs": ["--ioengine=psync", "--rw=randread", "--bs=4k"],
    "uring-q32-tmpfs": ["--ioengine=io_uring", "--iodepth=32", "--rw=randread", "--bs=4k"],
    "uring-q32-b32-fixed-tmpfs": ["--ioengine=io_uring", "--iodepth=32", "--rw=randread",
                                  "--bs=4k", "--iodepth_batch_submit=32",
                                  "--iodepth_batch_complete_min=32", "--fixedbufs=1",
                                  "--registerfiles=1"],
}


def run(b, args, seconds, jobs):
    o = subprocess.run([b, "fio", "--name=ab", f"--filename={FILE}", f"--size={SIZE}",
                        "--time_based", f"--runtime={seconds}", f"--numjobs={jobs}",
                        "--group_reporting", "--output-format=json"] + args,
                       capture_output=True, text=True)
    if o.returncode != 0:
        raise SystemExit(f"{b}: exit {o.returncode}\n{o.stderr}")
    j = json.loads(o.stdout)["jobs"][0]
    return j["read"]["iops"] + j["write"]["iops"]


def digest(path):
    """The binary's sha256, first 12 hex digits: which build ran, whatever its path."""
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:12]


def c_loop(binary, seconds):
    out = subprocess.run([binary, FILE, "4096", str(seconds)], check=True, text=True,
                         capture_output=True).stdout.split()
    return float(out[0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("rounds", nargs="?", type=int, default=6)
    ap.add_argument("case", nargs="?", default="")
    ap.add_argument("--seconds", type=int, default=2)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--c-pread", default="")
    ap.add_argument("--save", action="store_true")
    ap.add_argument("--old-label", default="", help="what OLD is (its commit), for the result")
    ap.add_argument("--new-label", default="", help="what NEW is (its commit, the change)")
    a = ap.parse_args()
    if not (os.path.exists(FILE) and os.path.getsize(FILE) == SIZE):
        with open(FILE, "wb") as f:
            f.write(os.urandom(SIZE))
    lines = [f"# Two iogauge binaries, alternating — {a.rounds} rounds of {a.seconds} s, "
             f"{a.jobs} job(s), a {SIZE >> 20} MiB file on tmpfs", "",
             f"- host: {socket.gethostname()}, kernel {platform.release()}, "
             f"{os.cpu_count()} CPUs",
             f"- old: {a.old}" + (f" ({a.old_label})" if a.old_label else ""),
             f"- new: {a.new}" + (f" ({a.new_label})" if a.new_label else ""),
             "- binaries: " + ", ".join(f"{k} sha256 {digest(b)}" for k, b in
                                        (("old", a.old), ("new", a.new))), ""]
    for name, args in CASES.items():
        if a.case and name != a.case:
            continue
        ratio, old_c, new_c = [], [], []
        for k in range(a.rounds):
            order = ["old", "new"] if k % 2 == 0 else ["new", "old"]
            res = {side: run(getattr(a, side), args, a.seconds, a.jobs) for side in order}
            ratio.append(res["new"] / res["old"])
            if a.c_pread and name == "psync-tmpfs" and a.jobs == 1:
                c = c_loop(a.c_pread, a.seconds)
                old_c.append(res["old"] / c)
                new_c.append(res["new"] / c)
        line = (f"{name}: new/old median {statistics.median(ratio):.3f} "
                f"({min(ratio):.3f}-{max(ratio):.3f}) over {a.rounds}")
        if old_c:
            line += (f"; of the C pread loop in the same round: old "
                     f"{statistics.median(old_c):.3f} ({min(old_c):.2f}-{max(old_c):.2f}), new "
                     f"{statistics.median(new_c):.3f} ({min(new_c):.2f}-{max(new_c):.2f})")
        print(line, flush=True)
        lines.append(f"- {line}")
    if a.save:
        tag = f"-ab-{a.case}" if a.case else "-ab"
        save("\n".join(lines) + "\n", {"host": socket.gethostname()},
             tag + (f"-{a.jobs}j" if a.jobs > 1 else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
