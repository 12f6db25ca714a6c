#!/usr/bin/env python3
"""iogauge against its ceiling, side by side with fio.

The ceiling is bench/ceiling/: minimal loops that make the same system calls as each case and
measure nothing (a pread loop; an io_uring submit/reap loop at the same depth, plain and with
registered file and buffers; memcpy; drawing offsets), and two references from outside the
project: a bare pread loop in C (bench/ceiling/c/pread.c, built with cc -O2) and fio's own
t/io_uring, built from the fio source Debian ships for the installed fio (a copy of
scripts/fio-tests.sh --source, configured and built with `make t/io_uring` under
~/.cache/iogauge/fio-build). Each case runs ceiling, iogauge and fio alternately for ROUNDS
rounds of SECONDS on a tmpfs file, and reports each tool as a fraction of the ceiling's median,
and the CPU each spends per I/O: the whole process's CPU time (getrusage of the children: the
kernel's io_uring workers, which do tmpfs's buffered random reads, count; so does a tool's
start-up, ~20 ms for iogauge's clock calibration), and for the tools also their job thread's
own (usr_cpu + sys_cpu over its runtime), in ns and in cycles at the CPU's nominal clock
(`cpu MHz`: this VM exposes no hardware counters, so perf stat cannot count cycles or
instructions here). The goals (issue 18,
issue 34): psync on tmpfs >= 97% of the C pread loop, io_uring depth 32 batch 1/1 >= 97% of
t/io_uring and batch 32 with registered file and buffers >= 100% of it, all with per-I/O
latency recorded; cached 1 MiB reads >= 75% of single-thread memcpy; the null engine >= 15 M
IOPS per core and >= 4x fio.

Usage: python3 bench/ceiling.py [--rounds N] [--seconds S] [--only CASES] [--no-save]

On a machine with no compiler, cargo or fio: `bench/pack.sh DIR` here, copy DIR there, and
run with IOGAUGE_PREBUILT=DIR.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vs_fio import FIO, IOGAUGE, PREBUILT, ROOT, children_cpu, save, start  # noqa: E402

CEILING_DIR = os.path.join(ROOT, "bench", "ceiling")
CEILING = os.path.join(CEILING_DIR, "target", "release", "iogauge-ceiling")
C_PREAD = os.path.join(CEILING_DIR, "target", "c-pread")
FIO_BUILD = os.path.join(os.path.expanduser("~"), ".cache", "iogauge", "fio-build")
T_IO_URING = os.path.join(FIO_BUILD, "t", "io_uring")
if PREBUILT:
    # bench/pack.sh's names for the same programs.
    CEILING, C_PREAD, T_IO_URING = (os.path.join(PREBUILT, n) for n in
                                    ("iogauge-ceiling", "c-pread", "t-io_uring"))
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
    "psync-4k-randread-c": (["c-pread", FILE, "4096"], ["--rw=randread", "--bs=4k",
                            "--ioengine=psync"], "iops", 0.97, "C pread loop"),
    "uring-4k-randread-q32-t": (["t-io_uring", FILE, "-d32", "-s1", "-c1", "-b4096", "-B0",
                                 "-F0"],
                                ["--rw=randread", "--bs=4k", "--ioengine=io_uring",
                                 "--iodepth=32", "--iodepth_batch_submit=1",
                                 "--iodepth_batch_complete_min=1"], "iops", 0.97,
                                "fio's t/io_uring, depth 32, batch 1/1"),
    "uring-4k-randread-q32-b32-fixed-t": (["t-io_uring", FILE, "-d32", "-s32", "-c32",
                                           "-b4096", "-B1", "-F1"],
                                          ["--rw=randread", "--bs=4k", "--ioengine=io_uring",
                                           "--iodepth=32", "--iodepth_batch_submit=32",
                                           "--iodepth_batch_complete_min=32",
                                           "--fixedbufs=1", "--registerfiles=1"], "iops", 1.0,
                                          "fio's t/io_uring, depth 32, batch 32, registered "
                                          "file and buffers"),
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


def build_references():
    """The C pread loop and fio's t/io_uring, built once."""
    os.makedirs(os.path.dirname(C_PREAD), exist_ok=True)
    subprocess.run(["cc", "-O2", "-o", C_PREAD, os.path.join(CEILING_DIR, "c", "pread.c")],
                   check=True)
    if os.path.exists(T_IO_URING):
        return
    src = subprocess.run([os.path.join(ROOT, "scripts", "fio-tests.sh"), "--source"],
                         check=True, text=True, capture_output=True).stdout.strip()
    shutil.rmtree(FIO_BUILD, ignore_errors=True)
    # fio-tests.sh's copy carries a stand-in config-host.h; configure writes the real one.
    shutil.copytree(src, FIO_BUILD, ignore=shutil.ignore_patterns("config-host.*"))
    subprocess.run(["./configure", "--disable-native"], cwd=FIO_BUILD, check=True,
                   capture_output=True)
    subprocess.run(["make", f"-j{os.cpu_count() or 1}", "t/io_uring"], cwd=FIO_BUILD,
                   check=True, capture_output=True)


def t_io_uring(args, seconds):
    """fio's t/io_uring on FILE, buffered (-O0), random (-R1), one thread: the mean of its
    per-second IOPS lines after the first."""
    path, opts = args[1], args[2:]
    cmd = [T_IO_URING] + opts + ["-O0", "-R1", "-n1", "-p0", f"-r{seconds + 1}", path]
    cpu0 = children_cpu()
    out = subprocess.run(cmd, check=True, text=True, capture_output=True).stdout
    cpu = children_cpu() - cpu0
    per_s = []
    for line in out.splitlines():
        if line.startswith("IOPS="):
            v = line.split(",")[0][5:]
            per_s.append(float(v[:-1]) * {"K": 1e3, "M": 1e6}[v[-1]] if v[-1] in "KM"
                         else float(v))
    iops = statistics.mean(per_s[1:] if len(per_s) > 1 else per_s)
    bs = int(next(o[2:] for o in opts if o.startswith("-b")))
    return {"iops": iops, "bw": iops * bs, "cpu_ns": cpu * 1e9 / max(1.0, sum(per_s))}


def ceiling(args, seconds, direct=False):
    if args[0] == "t-io_uring":
        return t_io_uring(args, seconds)
    if args[0] == "c-pread":
        cmd = [C_PREAD] + args[1:] + [str(seconds)] + (["direct"] if direct else [])
    else:
        # The seconds come before the optional "fixed", "timed" and "direct".
        flags = [x for x in args if x in ("fixed", "timed", "seq")] + (["direct"] if direct
                                                                       else [])
        cmd = [CEILING] + [x for x in args if x not in flags] + [str(seconds)] + flags
    cpu0 = children_cpu()
    out = subprocess.run(cmd, check=True, text=True, capture_output=True).stdout.split()
    cpu = children_cpu() - cpu0
    iops = float(out[0])
    return {"iops": iops, "bw": float(out[1]), "cpu_ns": cpu * 1e9 / max(1.0, iops * seconds)}


def tool(name, opts, seconds, path=FILE, size=SIZE):
    common = [f"--filename={path}", f"--size={size}", "--time_based", f"--runtime={seconds}",
              "--output-format=json"] + opts
    if name == "fio":
        cmd = [FIO, "--name=c"] + common
    else:
        cmd = [IOGAUGE, "run", "--name=c"] + common
    cpu0 = children_cpu()
    doc = json.loads(subprocess.run(cmd, check=True, text=True, capture_output=True).stdout)
    cpu = children_cpu() - cpu0
    job = doc["jobs"][0]
    j = job["read"]
    # The job thread's own CPU (over its runtime) leaves out the kernel's io_uring workers
    # (iou-wrk), which do buffered reads on tmpfs: the whole process's counts both, and its
    # start-up (iogauge's clock calibration, ~20 ms; fio's set-up) too.
    thread_s = (job["usr_cpu"] + job["sys_cpu"]) / 100 * job["job_runtime"] / 1000
    ios = max(1, j["total_ios"])
    return {"iops": j["iops"], "bw": j["bw_bytes"], "cpu_ns": cpu * 1e9 / ios,
            "thread_ns": thread_s * 1e9 / ios}


def nominal_ghz():
    """The CPU's nominal clock from /proc/cpuinfo (the first `cpu MHz`), in GHz."""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("cpu MHz"):
                return float(line.split(":")[1]) / 1000
    except OSError:
        pass
    return None


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
    if not PREBUILT:
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=CEILING_DIR, check=True)
        build_references()
    cpus = os.cpu_count() or 1
    ghz = nominal_ghz()
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
    cpu_rows = []
    try:
        for name, case in chosen.items():
            cargs, opts, fig, goal, what = case[:5]
            disk = case[5] if len(case) > 5 else None
            rounds, secs = (a.disk_rounds, a.disk_seconds) if disk else (a.rounds, a.seconds)
            res = {"ceiling": [], "iogauge": [], "fio": []}
            cpu = {"ceiling": [], "iogauge": [], "fio": []}
            thread = {"iogauge": [], "fio": []}
            for r in range(rounds):
                order = ["ceiling", "iogauge", "fio"]
                order = order[r % 3:] + order[:r % 3]
                for side in order:
                    if side == "ceiling":
                        got = ceiling(cargs, secs, bool(disk))
                    elif disk:
                        got = tool(side, opts, secs, disk["file"], disk["size"])
                    else:
                        got = tool(side, opts, secs)
                    res[side].append(got[fig])
                    cpu[side].append(got["cpu_ns"])
                    if side in thread:
                        thread[side].append(got["thread_ns"])
                print(f"{name}: round {r + 1}/{rounds}", flush=True)
            ns = {k: statistics.median(v) for k, v in cpu.items()}
            cyc = {k: f"{v * ghz:.0f}" if ghz else "-" for k, v in ns.items()}
            cpu_rows.append(f"| {name} | {ns['ceiling']:.0f} ({cyc['ceiling']}) | "
                            f"{ns['iogauge']:.0f} ({cyc['iogauge']}) | "
                            f"{ns['fio']:.0f} ({cyc['fio']}) | "
                            f"{ns['iogauge'] - ns['ceiling']:+.0f} | "
                            f"{statistics.median(thread['iogauge']):.0f} | "
                            f"{statistics.median(thread['fio']):.0f} |")
            c, g, f = (statistics.median(res[k]) for k in ("ceiling", "iogauge", "fio"))
            paired = sorted(y / x for x, y in zip(res["ceiling"], res["iogauge"]) if x > 0)
            paired_text = (f"{statistics.median(paired):.3f} ({paired[0]:.2f}-{paired[-1]:.2f})"
                           if paired else "-")
            unit = "IOPS" if fig == "iops" else "MB/s"
            scale = 1 if fig == "iops" else 1e6
            if name == "null-4k":
                met = g >= 15e6 and g >= 4 * f
                goal_text = (f">= 15 M IOPS per core and >= 4x fio: {g / 1e6:.1f} M, "
                             f"{g / f:.1f}x" + (" (met)" if met else " (NOT met)"))
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
    clock = f"{ghz:.3f} GHz" if ghz else "unknown"
    lines += ["", f"CPU per I/O, median over the rounds: ns (cycles at the nominal {clock}) "
              "of the whole process (getrusage), and of the tools' job thread alone "
              "(usr_cpu + sys_cpu over its runtime: no io_uring workers, no start-up)", "",
              "| case | ceiling | iogauge | fio | iogauge - ceiling (ns) | iogauge job "
              "thread (ns) | fio job thread (ns) |",
              "|---|---|---|---|---|---|---|"] + cpu_rows
    lines += ["", f"CPUs: {cpus}. Per round (ceiling / iogauge / fio):", ""] + per_round
    text = "\n".join(lines) + "\n"
    print(text)
    if not a.no_save:
        save(text, m, "-ceiling")
    return 0


if __name__ == "__main__":
    sys.exit(main())
