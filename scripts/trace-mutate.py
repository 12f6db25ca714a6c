#!/usr/bin/env python3
"""Damaged traces, replayed for real: records a small program (or takes a trace), then many
times mutates it — bits flipped, cut short, an event's field set to an edge value, a number
of the footer's JSON set to an edge value — and runs `trace show`, `trace stats --json`,
`replay` (closed and afap) and `predict --repeat 1` on each. Each must exit 0, 1 or 2 within
the time limit, without a panic, leaving nothing in the replay directory. cargo-fuzz
(scripts/fuzz.sh) finds panics in the decoding and arithmetic; this finds what only a real
replay shows: threads that wait for each other for ever, a layout that will not end.

    scripts/trace-mutate.py [--trace TRACE] [--rounds N] [--seed S] [--timeout SECONDS]

About 2 s a round on this project's VM. Exit 1 where any case failed; the traces that
failed are kept in the work directory it names.
"""

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
IOGAUGE = os.path.join(HERE, "..", "target", "release", "iogauge")
EVENT = 56
PREFIX = 12  # the magic and the version, before the zlib stream
EDGES = [0, 1, 2**32 - 1, 2**63 - 1, 2**64 - 1, 10**12]


def body(trace):
    """The trace's bytes before its stream, its decompressed body, and where its footer is."""
    data = open(trace, "rb").read()
    raw = zlib.decompress(data[PREFIX:])
    header = int.from_bytes(raw[0:4], "little")
    count = int.from_bytes(raw[4 + header : 12 + header], "little")
    events = 12 + header
    return data[:PREFIX], raw, events, count, events + count * EVENT


def numbers(o, path=()):
    """The paths of every number in a JSON value."""
    if isinstance(o, dict):
        for k, v in o.items():
            yield from numbers(v, path + (k,))
    elif isinstance(o, list):
        for i, v in enumerate(o):
            yield from numbers(v, path + (i,))
    elif isinstance(o, int) and not isinstance(o, bool):
        yield path


def mutate(rng, raw, events, count, footer_at):
    b = bytearray(raw)
    kind = rng.choice(["flip", "cut", "event", "footer"])
    if kind == "flip":
        for _ in range(rng.randint(1, 3)):
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
    elif kind == "cut":
        b = b[: rng.randrange(len(b))]
    elif kind == "event" and count:
        at = events + rng.randrange(count) * EVENT + rng.randrange(7) * 8
        value = rng.choice(EDGES + [rng.getrandbits(64)])
        b[at : at + 8] = value.to_bytes(8, "little")
    else:
        footer = json.loads(raw[footer_at + 4 :])
        paths = list(numbers(footer))
        for _ in range(rng.randint(1, 3)):
            path = rng.choice(paths)
            o = footer
            for k in path[:-1]:
                o = o[k]
            o[path[-1]] = rng.choice(EDGES + [o[path[-1]] * 2 + 1, o[path[-1]] // 2])
        text = json.dumps(footer).encode()
        b = b[:footer_at] + len(text).to_bytes(4, "little") + text
    return kind, bytes(b)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trace")
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=int, default=60)
    a = ap.parse_args()
    if not os.access(IOGAUGE, os.X_OK):
        sys.exit(f"{IOGAUGE}: build it first (cargo build --release)")
    work = tempfile.mkdtemp(prefix="iogauge-mutate-")
    # The replay directory on tmpfs where there is one: a layout is the trace's files.
    shm = "/dev/shm" if os.path.isdir("/dev/shm") else work
    replays = tempfile.mkdtemp(prefix="iogauge-mutate-replays-", dir=shm)
    trace = a.trace
    if trace is None:
        trace = os.path.join(work, "recorded.trace")
        data = os.path.join(replays, "data")
        with open(data, "wb") as f:
            f.write(os.urandom(8 << 20))
        program = (
            f"dd if={data} of={replays}/copy bs=64k 2>/dev/null; "
            f"sort --parallel=2 -S 1M -T {replays} /etc/services > {replays}/sorted; "
            f"rm {replays}/copy {replays}/sorted"
        )
        subprocess.run(
            [IOGAUGE, "record", "--output", trace, "--", "sh", "-c", program], check=True
        )
        os.unlink(data)
    prefix, raw, events, count, footer_at = body(trace)
    rng = random.Random(a.seed)
    damaged = os.path.join(work, "damaged.trace")
    commands = [
        ["trace", "show", damaged],
        ["trace", "stats", "--json", damaged],
        ["replay", "--directory", replays, damaged],
        ["replay", "--mode", "afap", "--directory", replays, damaged],
        ["predict", "--repeat", "1", "--directory", replays, damaged],
    ]
    failed, exits = 0, {}
    for n in range(a.rounds):
        kind, b = mutate(rng, raw, events, count, footer_at)
        with open(damaged, "wb") as f:
            f.write(prefix + zlib.compress(b))
        for cmd in commands:
            try:
                r = subprocess.run(
                    [IOGAUGE] + cmd, capture_output=True, timeout=a.timeout
                )
                why = None
                if r.returncode not in (0, 1, 2) or b"panicked" in r.stderr:
                    why = f"exit {r.returncode}: {r.stderr[-300:].decode(errors='replace')}"
                exits[(cmd[0], r.returncode)] = exits.get((cmd[0], r.returncode), 0) + 1
            except subprocess.TimeoutExpired:
                why = f"still running after {a.timeout} s"
            left = [p for p in os.listdir(replays) if p.endswith(".replay")]
            if left and why is None:
                why = f"left {left} behind"
            if why:
                failed += 1
                kept = os.path.join(work, f"failed-{failed}.trace")
                shutil.copy(damaged, kept)
                print(f"round {n} ({kind}) {' '.join(cmd[:2])}: {why}; trace: {kept}")
                for p in left:
                    shutil.rmtree(os.path.join(replays, p), ignore_errors=True)
    shutil.rmtree(replays, ignore_errors=True)
    print("exits:", ", ".join(f"{c} {e}: {k}" for (c, e), k in sorted(exits.items())))
    print(f"{a.rounds} rounds, {failed} failed; work directory {work}")
    if failed == 0 and a.trace is None:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
