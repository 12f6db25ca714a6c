#!/usr/bin/env python3
"""Verification throughput: iogauge against fio on the same job, side by side.

One job per checksum: write a file on tmpfs sequentially in 4 KiB blocks with verify=KIND
(each block carries a header and the checksum of its data), then read every block back and
check it. Both tools run it alternately (ABBA across rounds). Compared: the write rate (which
includes sealing each block), the verify rate (fio counts its verify reads as the job's reads;
iogauge reports them as its own phase) and the whole command's wall time. Prints per-round
numbers and median ratios iogauge/fio, and writes the table to
bench/results/DATE-HHMM-HOST-verify.md. The issue's goal: iogauge >= 1.2x fio.

Each tool runs with its defaults: iogauge reads back and checks on one thread per CPU, fio in
the job's thread. --fio-verify-async=N gives fio N verify threads (its verify_async), and
--iogauge-verify-async=N pins iogauge's, for the like-for-like comparison.

Usage: python3 bench/verify_vs_fio.py [--rounds N] [--size SIZE] [--kinds crc32c,md5]
                                      [--fio-verify-async N] [--iogauge-verify-async N]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vs_fio import IOGAUGE, save, start  # noqa: E402

FILE = "/dev/shm/iogauge-verify-bench.dat"


def run(tool, kind, size, threads):
    common = [f"--filename={FILE}", f"--size={size}", "--bs=4k", "--rw=write",
              f"--verify={kind}", "--output-format=json"]
    if threads[tool] is not None:
        common.append(f"--verify_async={threads[tool]}")
    if tool == "fio":
        cmd = ["fio", "--name=v"] + common
    else:
        cmd = [IOGAUGE, "run", "--name=v"] + common
    if os.path.exists(FILE):
        os.remove(FILE)
    t0 = time.monotonic()
    out = subprocess.run(cmd, check=True, text=True, capture_output=True).stdout
    wall = time.monotonic() - t0
    if os.path.exists(FILE):
        os.remove(FILE)
    doc = json.loads(out)
    if tool == "fio":
        j = doc["jobs"][0]
        write = j["write"]["bw_bytes"] / 2**20
        verify = j["read"]["bw_bytes"] / 2**20
        checked = j["read"]["io_bytes"]
    else:
        j = doc["groups"][0]["jobs"][0]
        assert j["verify"]["bad_blocks"] == 0, j["verify"]
        write = j["write"]["mib_per_s"]
        verify = j["verify"]["mib_per_s"]
        checked = j["verify"]["bytes"]
        threads["iogauge used"] = j["verify"]["threads"]
    return {"write MiB/s": write, "verify MiB/s": verify, "wall s": wall, "checked": checked}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--size", default="512m")
    ap.add_argument("--kinds", default="crc32c,md5")
    ap.add_argument("--fio-verify-async", type=int)
    ap.add_argument("--iogauge-verify-async", type=int)
    ap.add_argument("--no-save", action="store_true")
    a = ap.parse_args()
    threads = {"fio": a.fio_verify_async, "iogauge": a.iogauge_verify_async}
    m, lines = start("Verification: iogauge vs fio")
    lines += [f"- job: {a.size} written sequentially in 4 KiB blocks on tmpfs (/dev/shm), "
              f"verify=KIND, then read back and checked; {a.rounds} alternating rounds (ABBA)",
              "- verify threads: fio " + (f"verify_async={a.fio_verify_async}"
                                          if a.fio_verify_async is not None
                                          else "default (the job's thread)")
              + ", iogauge " + (f"verify_async={a.iogauge_verify_async}"
                                if a.iogauge_verify_async is not None
                                else "default (one per CPU: @THREADS@)"),
              "", "| checksum | figure | iogauge (median) | fio (median) | ratio | "
              "paired ratio: median [min, max] |", "|---|---|---|---|---|---|"]
    per_round = []
    try:
        for kind in a.kinds.split(","):
            res = {"iogauge": [], "fio": []}
            for r in range(a.rounds):
                order = ["iogauge", "fio"] if r % 2 == 0 else ["fio", "iogauge"]
                for tool in order:
                    res[tool].append(run(tool, kind, a.size, threads))
                print(f"{kind}: round {r + 1}/{a.rounds} done", flush=True)
            assert all(x["checked"] == y["checked"] for x, y in zip(res["iogauge"], res["fio"])), \
                "both tools check every byte written"
            for fig in ["write MiB/s", "verify MiB/s", "wall s"]:
                g = [x[fig] for x in res["iogauge"]]
                f = [x[fig] for x in res["fio"]]
                # Wall time: lower is better, so the ratio is fio's over iogauge's.
                pairs = [(y / x if fig == "wall s" else x / y) for x, y in zip(g, f)]
                mg, mf = statistics.median(g), statistics.median(f)
                ratio = mf / mg if fig == "wall s" else mg / mf
                lines.append(f"| {kind} | {fig}{' (ratio: fio/iogauge)' if fig == 'wall s' else ''}"
                             f" | {mg:.2f} | {mf:.2f} | {ratio:.3f} | "
                             f"{statistics.median(pairs):.3f} [{min(pairs):.3f}, {max(pairs):.3f}] |")
                per_round.append(f"- {kind} {fig}: " + ", ".join(
                    f"{x:.1f}/{y:.1f}" for x, y in zip(g, f)))
    finally:
        if os.path.exists(FILE):
            os.remove(FILE)
    lines += ["", "Per round (iogauge / fio):", ""] + per_round
    text = "\n".join(lines).replace("@THREADS@", str(threads.get("iogauge used"))) + "\n"
    print(text)
    if not a.no_save:
        save(text, m, "-verify")
    return 0


if __name__ == "__main__":
    sys.exit(main())
