#!/usr/bin/env python3
"""fio's own example job files through fio and `iogauge fio`, side by side: do the numbers agree?

Every job file of Debian's fio-examples (/usr/share/doc/fio/examples) is run by both tools,
scaled down the same way tests/cli/jobfiles.rs scales it (files in a scratch directory, 4 MiB
regions, 1 MiB files where the example sizes files, at most 64 files per job, no ramp or start
delay) and time-based (S seconds, 3 by default), by appending the overrides to every section of
a copy of the file, so both tools read the very same text. The tools alternate (ABBA across
rounds, so a drifting machine favours neither). An example fio itself cannot run here (its
engine needs hardware, a service or a program this machine lacks, or an unset variable) is
listed as such and not compared.

For each example: the IOPS of all its jobs together (reads, writes and trims; files created,
stat'ed or removed for the file-operation engines) from each tool's fio-format JSON, per round,
the median ratio iogauge/fio and fio's own spread between its rounds (max/min). The issue's
target: within 15% where the example works on local files. Writes the table to
bench/results/DATE-HHMM-HOST-examples.md.

Usage: python3 bench/examples_vs_fio.py [--rounds N] [--seconds S] [--dir DIR] [--only A,B]
"""

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vs_fio import IOGAUGE, save, start  # noqa: E402

EXAMPLES = "/usr/share/doc/fio/examples"

# Not run by either tool: fio's own headers warn of a kernel panic (online defragmentation
# racing AIO on one file); tests/cli/defrag.rs runs the engine alone.
NOT_RUN = {
    "e4defrag.fio": "fio's header: can trigger a kernel panic (defragmenting under AIO)",
    "e4defrag2.fio": "fio's header: can trigger a kernel panic (defragmenting under AIO)",
    # Thirty writers 124 GiB apart on an NVMe device: on a file, 3.5 TiB of offsets.
    "cross-stripe-verify.fio": "its offsets span 3.5 TiB (30 jobs 124 GiB apart on a device)",
    # Its program (turbostat) is not installed: fio's job ends at once without an error.
    "exec.fio": "its program, /usr/sbin/turbostat, is not installed here",
}


def scaled(text, scratch, seconds):
    """The job file with the scaling overrides appended to each section."""
    over = [f"directory={scratch}", "size=4m", f"runtime={seconds}", "time_based=1",
            "ramp_time=0", "startdelay=0", "loops=1"]
    if re.search(r"^\s*filename=/", text, re.M):
        over.append("filename=data")
    # Files sized above 1 MiB come down to it; smaller ones stay: the file-operation engines
    # count filesize/bs I/Os per file (one operation, the rest accounting), so a 4 KiB file
    # made 1 MiB would count 255 I/Os that do nothing per create or stat.
    sizes = re.findall(r"^\s*filesize\s*=\s*(\S+)", text, re.M)
    if any(size_bytes(v) > 1 << 20 for v in sizes):
        over.append("filesize=1m")
    if "nrfiles" in text:
        over.append("nrfiles=64")
    # The example's own values of those options go (fio checks a directory as it parses).
    keys = {o.split("=", 1)[0] for o in over}
    out, in_section = [], False
    for line in text.splitlines():
        if line.split("=", 1)[0].strip() in keys:
            line = "; (scaled) " + line
        if line.strip().startswith("["):
            if in_section:
                out.extend(over)
            in_section = True
        out.append(line)
    if in_section:
        out.extend(over)
    return "\n".join(out) + "\n"


def size_bytes(v):
    """fio's size text (4k, 1m, 10g; a range takes its upper end) in bytes."""
    v = v.split("-")[-1].split(":")[-1].lower().rstrip("ib")
    mult = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}.get(v[-1:], 1)
    try:
        return int(float(v.rstrip("kmgt")) * mult)
    except ValueError:
        return 0


# Examples whose figure is the CPU they burn, not I/O: compared on usr + sys CPU (%, all jobs
# together). (cpuio's "I/Os" are rounds of burning whose size differs by mode and tool: fio
# 3.33 even reports 0 IOPS for cpuio.fio's jobs beside a count of 10.)
CPU_ONLY = {"cpuio.fio"}


def iops(doc, cpu=False):
    """All jobs' IOPS together (or CPU %), and whether any job reported an error."""
    total, failed = 0.0, False
    for j in doc.get("jobs", []):
        if cpu:
            total += j.get("usr_cpu", 0.0) + j.get("sys_cpu", 0.0)
        else:
            total += sum(j.get(d, {}).get("iops", 0.0) for d in ("read", "write", "trim"))
        failed |= j.get("error", 0) != 0
    return total, failed


def run(tool, path, scratch, seconds):
    """One run in a fresh scratch directory: (IOPS, None) or (None, why it failed)."""
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    cmd = ["fio"] if tool == "fio" else [IOGAUGE, "fio"]
    # In a session of its own, so that a tool that does not finish goes with all it forked.
    p = subprocess.Popen(cmd + ["--output-format=json", path], text=True, cwd=scratch,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = p.communicate(timeout=seconds * 4 + 30)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        # fio's job processes may sit in sessions of their own, holding the pipes: by name.
        subprocess.run(["pkill", "-9", "-f", path], check=False)
        p.communicate()
        return None, f"did not finish in {seconds * 4 + 30} s"
    r = subprocess.CompletedProcess(p.args, p.returncode, out, err)
    try:
        doc = json.loads(out[out.index("{"):])
    except ValueError:
        why = (r.stderr.strip().splitlines() or ["no output"])[-1]
        return None, f"exit {r.returncode}: {why[:140]}"
    value, failed = iops(doc, os.path.basename(path) in CPU_ONLY)
    if r.returncode != 0 or failed:
        why = (r.stderr.strip().splitlines() or ["a job reported an error"])[-1]
        return None, f"exit {r.returncode}: {why[:140]}"
    return value, None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seconds", type=int, default=3)
    ap.add_argument("--dir", default="/dev/shm", help="where the scratch directory goes")
    ap.add_argument("--only", default="", help="comma-separated example file names")
    ap.add_argument("--no-save", action="store_true")
    a = ap.parse_args()
    m, lines = start("fio's example job files: fio and iogauge side by side")
    only = {o for o in a.only.split(",") if o}
    files = sorted(f for f in os.listdir(EXAMPLES) if f.endswith(".fio")
                   and (not only or f in only))
    work = tempfile.mkdtemp(prefix="iogauge-examples-", dir=a.dir)
    scratch = os.path.join(work, "scratch")
    lines += [f"- scratch directory on: {a.dir}; {a.rounds} rounds of {a.seconds} s per tool, "
              "ABBA", "",
              "| example | fio IOPS (rounds) | iogauge IOPS (rounds) | iogauge/fio | "
              "fio's spread | verdict |", "|---|---|---|---|---|---|"]
    tally = {}
    for name in files:
        if name in NOT_RUN:
            lines.append(f"| {name} | | | | | not run: {NOT_RUN[name]} |")
            continue
        with open(os.path.join(EXAMPLES, name)) as f:
            text = scaled(f.read(), scratch, a.seconds)
        job = os.path.join(work, name)
        with open(job, "w") as f:
            f.write(text)
        got = {"fio": [], "iogauge": []}
        why = {}
        for r in range(a.rounds):
            order = ("fio", "iogauge") if r % 2 == 0 else ("iogauge", "fio")
            for tool in order:
                if tool in why:
                    continue
                v, err = run(tool, job, scratch, a.seconds)
                if err:
                    why[tool] = err
                else:
                    got[tool].append(v)
            if "fio" in why:
                break
        fmt = lambda vs: ", ".join(f"{v:,.0f}" for v in vs)
        if "fio" in why:
            verdict, ratio, spread = f"fio cannot run it here ({why['fio']})", "", ""
            if "iogauge" in why:
                verdict += f"; iogauge: {why['iogauge']}"
            key = "fio cannot run"
        elif "iogauge" in why:
            verdict, ratio, spread = f"iogauge FAILED: {why['iogauge']}", "", ""
            key = "iogauge failed"
        elif max(got["fio"]) == 0 and max(got["iogauge"]) == 0:
            verdict, ratio, spread = "no I/O in either (cpuio burns CPU only)", "", ""
            key = "no I/O"
        else:
            f_med = statistics.median(got["fio"])
            i_med = statistics.median(got["iogauge"])
            q = i_med / f_med if f_med else float("inf")
            s = max(got["fio"]) / min(got["fio"]) if min(got["fio"]) else float("inf")
            ratio, spread = f"{q:.2f}", f"{s:.2f}"
            if abs(q - 1) <= 0.15:
                verdict, key = "agrees (±15%)", "agrees"
                if name in CPU_ONLY:
                    verdict += " on CPU load (usr + sys %, not IOPS)"
            elif q >= 1 / s and q <= s:
                verdict, key = "within fio's own spread", "within spread"
            elif q > 1:
                # No device below (null, cached reads on tmpfs): the tool is what is measured.
                verdict, key = "iogauge faster: the tool is the limit here", "iogauge faster"
            else:
                verdict, key = "DIFFERS: iogauge slower", "iogauge slower"
        tally[key] = tally.get(key, 0) + 1
        row = f"| {name} | {fmt(got['fio'])} | {fmt(got['iogauge'])} | {ratio} | {spread} | " \
              f"{verdict} |"
        print(row, flush=True)
        lines.append(row)
    shutil.rmtree(work, ignore_errors=True)
    lines += ["", "Tally: " + ", ".join(f"{k} {v}" for k, v in sorted(tally.items())), ""]
    print(lines[-2])
    if not a.no_save:
        save("\n".join(lines), m, "-examples")


if __name__ == "__main__":
    main()
