#!/usr/bin/env python3
"""Many jobs and large targets: memory per job, wall time, honest group totals, readable reports.

Issue 18's scale cases:

- numjobs from 1 to 1024 threads (io_uring at depth 256, and the null engine), 4 KiB random
  reads of small files on tmpfs for a few seconds: peak RSS (GNU time), wall
  time, the group's IOPS and the time it was measured over, and how many lines the text report
  takes (a group of many jobs is folded into a summary).
- A 1 TiB target on a loop device: a sparse 1 TiB backing file on the checkout's disk, attached
  with losetup; O_DIRECT io_uring 4 KiB random reads over the whole TiB, then random writes
  (the device is written on purpose: --allow-overwrite), peak RSS for each. The backing file is
  sparse, so reads of its holes never reach the disk (iogauge warns of that); what this case
  shows is that a job over a TiB runs in the same memory as one over a MiB. A 1 TiB *file*
  laid out sparse-free needs a TiB of disk (and, at ~1 GB/s, a quarter of an hour); this
  machine has 72 GiB free, so that is not run here.

Needs root for the loop device (skipped otherwise). Writes bench/results/DATE-HOST-scale.md.

Usage: python3 bench/scale.py [--max-jobs N] [--seconds S] [--no-loop] [--no-save]
"""

import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IOGAUGE = os.path.join(ROOT, "target", "release", "iogauge")


def measured(cmd):
    """Runs cmd; returns its peak RSS (KiB), exit code, wall time and output. The peak comes
    from GNU time (`/usr/bin/time -f %M`): a child forked from Python would count Python's own
    pages, copied before the exec, into its peak."""
    if not os.path.exists("/usr/bin/time"):
        raise SystemExit("bench/scale.py needs GNU time (apt-get install -y time)")
    t0 = time.monotonic()
    p = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, capture_output=True, text=True)
    wall = time.monotonic() - t0
    *err, rss = p.stderr.rstrip("\n").split("\n")
    return {"rss": int(rss), "rc": p.returncode, "wall": wall, "out": p.stdout,
            "err": "\n".join(err)}


def group_figures(report_json):
    r = json.loads(report_json)
    g = r["groups"][0]
    t = g["total"]
    return t["read"]["iops"] + t["write"]["iops"], t["elapsed_ns"] / 1e9, r


def jobs_case(n, engine, seconds, work):
    d = os.path.join(work, f"j{n}{engine}")
    os.makedirs(d, exist_ok=True)
    base = [IOGAUGE, "run", "--name=s", f"--directory={d}", "--size=1m", f"--numjobs={n}",
            "--iodepth=256", "--bs=4k", "--rw=randread", f"--ioengine={engine}",
            "--time_based", f"--runtime={seconds}"]
    m = measured(base + ["--output-format=json"])
    if m["rc"] != 0:
        raise SystemExit(f"numjobs={n} {engine}: exit {m['rc']}: {m['err'][-2000:]}")
    iops, span, _ = group_figures(m["out"])
    # The text report of the same shape (a shorter run: only its length matters).
    t = measured(base[:-1] + ["--runtime=1"])
    lines = len(t["out"].splitlines())
    shutil.rmtree(d, ignore_errors=True)
    return {"jobs": n, "engine": engine, "rss_kib": m["rss"], "wall": m["wall"],
            "iops": iops, "span": span, "text_lines": lines}


def loop_case(seconds, work_dir):
    if os.geteuid() != 0 or shutil.which("losetup") is None:
        return None, "skipped: needs root and losetup"
    backing = os.path.join(work_dir, "iogauge-scale-1tib.img")
    with open(backing, "wb") as f:
        f.truncate(1 << 40)
    dev = subprocess.run(["losetup", "-f", "--show", "--direct-io=on", backing],
                         capture_output=True, text=True)
    if dev.returncode != 0:
        os.unlink(backing)
        return None, f"skipped: losetup failed: {dev.stderr.strip()}"
    dev = dev.stdout.strip()
    rows = []
    try:
        for rw, extra in (("randread", []), ("randwrite", ["--allow-overwrite"])):
            cmd = [IOGAUGE, "run", f"--filename={dev}", "--rw=" + rw, "--bs=4k",
                   "--ioengine=io_uring", "--iodepth=32", "--direct=1", "--time_based",
                   f"--runtime={seconds}", "--output-format=json"] + extra
            m = measured(cmd)
            if m["rc"] != 0:
                rows.append({"rw": rw, "error": m["err"].strip()[-500:]})
                continue
            iops, span, r = group_figures(m["out"])
            size = r["groups"][0]["jobs"][0]["options"].get("size", "?")
            rows.append({"rw": rw, "rss_kib": m["rss"], "iops": iops, "span": span,
                         "size": size, "warnings": r.get("warnings", [])})
    finally:
        subprocess.run(["losetup", "-d", dev])
        os.unlink(backing)
    return rows, dev


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-jobs", type=int, default=1024)
    ap.add_argument("--seconds", type=int, default=2)
    ap.add_argument("--no-loop", action="store_true")
    ap.add_argument("--no-save", action="store_true")
    a = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    version = subprocess.run([IOGAUGE, "--version"], capture_output=True, text=True).stdout
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip()
    work = tempfile.mkdtemp(prefix="iogauge-scale-", dir="/dev/shm")
    rows = []
    try:
        for n in [k for k in (1, 16, 64, 256, 1024) if k <= a.max_jobs]:
            for engine in ("io_uring", "null"):
                print(f"numjobs={n} {engine}", file=sys.stderr)
                rows.append(jobs_case(n, engine, a.seconds, work))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    loop_rows, loop_dev = (None, "not run (--no-loop)")
    if not a.no_loop:
        print("1 TiB loop device", file=sys.stderr)
        loop_rows, loop_dev = loop_case(a.seconds + 3, ROOT)

    now = datetime.datetime.now(datetime.timezone.utc)
    host = platform.node()
    mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / (1 << 30)
    out = [f"# Many jobs and a 1 TiB target: memory, time, totals — {now:%Y-%m-%d %H:%M} UTC", "",
           f"- host: {host} ({os.cpu_count()} CPUs, {mem_gib:.0f} GiB), kernel "
           f"{platform.release()}",
           f"- {version.strip()} (commit {commit}); peak RSS by GNU time (`%M`)",
           f"- jobs: `iogauge run --name=s --directory=/dev/shm/… --size=1m --numjobs=N "
           f"--iodepth=256 --bs=4k --rw=randread --ioengine=E --time_based "
           f"--runtime={a.seconds}`", "",
           "| numjobs | engine | peak RSS (KiB) | wall (s) | group IOPS | group time (s) | "
           "text report lines |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['jobs']} | {r['engine']} | {r['rss_kib']} | {r['wall']:.2f} | "
                   f"{r['iops']:.0f} | {r['span']:.2f} | {r['text_lines']} |")
    out += ["", f"1 TiB loop device ({loop_dev}; sparse backing file, O_DIRECT io_uring 4 KiB at "
            f"depth 32, {a.seconds + 3} s):", ""]
    if loop_rows is None:
        out.append(f"- {loop_dev}")
    else:
        out += ["| rw | region | peak RSS (KiB) | IOPS |", "|---|---|---|---|"]
        for r in loop_rows:
            if "error" in r:
                out.append(f"| {r['rw']} | failed: {r['error']} | | |")
            else:
                out.append(f"| {r['rw']} | {r['size']} bytes | {r['rss_kib']} | "
                           f"{r['iops']:.0f} |")
        for r in loop_rows:
            for w in r.get("warnings", []):
                out.append(f"- {r['rw']}: warning: {w}")
    text = "\n".join(out) + "\n"
    print(text)
    if not a.no_save:
        path = os.path.join(ROOT, "bench", "results",
                            f"{now:%Y-%m-%d-%H%M}-{host}-scale.md")
        with open(path, "w") as f:
            f.write(text)
        print(f"saved {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
