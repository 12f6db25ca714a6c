#!/usr/bin/env python3
"""How right `iogauge predict` is: real programs no one here wrote, each recorded on one
storage, predicted on another, then run there for real; the table of recorded, predicted and
actual run times, the error, and whether the stated bound held.

Storages:
- disk: ext4 on the VM's virtio disk, buffered (the program's own flags decide O_DIRECT);
- tmpfs: /dev/shm;
- throttled: the same disk with the program (and the replays) in a blkio cgroup throttled to
  THROTTLE_MIB MiB/s and THROTTLE_IOPS IOPS each way (cgroup v1's blkio.throttle: v2's io
  controller is not free on this VM; v1 throttles reads, direct writes and the writes a
  program's own fsync issues, not background writeback).

Programs (none written with iogauge):
- sas-like: 4 concurrent processes (Python), each reading its 96 MiB input and writing its
  output 128 KiB at a time, a read then a write (seed 001's pattern), then fsync;
- dd-direct: dd copying 512 MiB in 1 MiB calls, iflag=direct oflag=direct;
- sort: GNU sort of 24 MiB of lines with a 1 MiB buffer (temp files spilled, merged);
- sqlite: sqlite3 inserting 3,000 rows in 1,500 transactions, synchronous=FULL;
- tar: tar of a copy of /usr/include;
- fio-job: a fio job file (iogauge fio runs it), given to `predict` as the program;
- pgbench: PostgreSQL (Debian's postgresql; skipped, with the reason printed, where it is not
  installed): the server started on a cluster of pgbench's tables (scale 2), 4 clients running
  500 of pgbench's TPC-B-like transactions each (every commit waits for its WAL's fdatasync),
  the server stopped (its shutdown checkpoint writes and syncs what the transactions dirtied)
  — the server's processes and pgbench are the program, run as the postgres user.

Each case: inputs made in the from-storage and evicted from the page cache, the program
recorded there; then, alternating (ABBA, as the disk's speed drifts over minutes), RUNS real
runs on the to-storage (inputs made there and evicted each time; the median is the actual) and
RUNS `iogauge predict --repeat 1` there, combined as `--repeat` combines its replays (median;
95% prediction interval of their spread plus the capture's and unseen I/O's parts). The system's files (the
programs, their libraries) stay cached throughout, as on a server that runs them daily. The wall time of a program includes
its fork and exec (about a millisecond) which the trace does not.

With --baseline BIN, a second iogauge binary (an older build: git worktree add /tmp/old REV
&& (cd /tmp/old && cargo build --release)) predicts the same traces in the same rounds, and the
table gives its predictions, errors and bounds beside the new ones: on this VM the real runs of
one program differ by up to 50% from one day (or hour) to the next, so a change to the model is
judged only against the same real runs.

Usage: python3 bench/predict_accuracy.py [--only PROG,...] [--pairs disk:tmpfs,...] [--no-save]
                                         [--baseline BIN] [--runs N]
"""

import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vs_fio import IOGAUGE, save, start  # noqa: E402

DISK = "/var/tmp/iogauge-predict"
TMPFS = "/dev/shm/iogauge-predict"
CGROUP = "/sys/fs/cgroup/blkio/iogauge-predict"
THROTTLE_MIB = 50
THROTTLE_IOPS = 2000
RUNS = 3

SAS_LIKE = r"""
import os, sys
def worker(k):
    src = os.open(f"in{k}", os.O_RDONLY)
    dst = os.open(f"out{k}", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    while True:
        b = os.read(src, 131072)
        if not b:
            break
        os.write(dst, b)
    os.fsync(dst)
    os._exit(0)
kids = []
for k in range(4):
    pid = os.fork()
    if pid == 0:
        worker(k)
    kids.append(pid)
for pid in kids:
    os.waitpid(pid, 0)
"""

FIO_JOB = """[global]
bs=128k
size=256m
[write]
rw=write
fsync=16
[mixed]
stonewall
rw=randrw
bs=16k
size=32m
[read]
stonewall
rw=read
"""


def pg_bin():
    """The directory of PostgreSQL's programs (the newest version Debian's packages installed),
    or None."""
    found = glob.glob("/usr/lib/postgresql/*/bin/pgbench")
    found.sort(key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0)
    return os.path.dirname(found[-1]) if found else None


# The server refuses to run as root: as root, the cluster belongs to the postgres user and the
# program runs as that user.
PG_USER = "postgres"
PG_PORT = 54329
PGBENCH = """set -e
PATH={bin}:$PATH
export PGHOST="$PWD" PGPORT={port}
pg_ctl -D pg -w -s -l pg.log start
trap 'pg_ctl -D pg -s stop -m immediate >/dev/null 2>&1 || true' EXIT
pgbench -n -c 4 -j 2 -t 500 postgres
pg_ctl -D pg -w -s stop -m fast
trap - EXIT
"""


def as_pg(cmd):
    """`cmd` as the cluster's owner: the postgres user when run as root."""
    if os.geteuid() != 0:
        return cmd
    return ["setpriv", f"--reuid={PG_USER}", f"--regid={PG_USER}", "--init-groups"] + cmd


def pg_missing():
    """Why pgbench cannot run here, or None."""
    if pg_bin() is None:
        return "PostgreSQL is not installed (apt-get install postgresql)"
    if os.geteuid() == 0:
        import pwd
        try:
            pwd.getpwnam(PG_USER)
        except KeyError:
            return f"no {PG_USER} user to run the server as"
    return None


def setup_pg(d):
    """A cluster of pgbench's tables in d/pg, its server stopped, and the program's script."""
    b = pg_bin()
    with open(os.path.join(d, "pg.sh"), "w") as f:
        f.write(PGBENCH.format(bin=b, port=PG_PORT))
    if os.geteuid() == 0:
        import pwd
        u = pwd.getpwnam(PG_USER)
        os.chown(d, u.pw_uid, u.pw_gid)
    pg = os.path.join(d, "pg")
    q = dict(cwd=d, check=True, capture_output=True)
    subprocess.run(as_pg([f"{b}/initdb", "-D", pg, "-A", "trust", "-U", PG_USER, "--no-sync",
                          "--no-instructions"]), **q)
    with open(os.path.join(pg, "postgresql.conf"), "a") as f:
        f.write(f"listen_addresses = ''\nunix_socket_directories = '{d}'\nport = {PG_PORT}\n")
    env = dict(os.environ, PGHOST=d, PGPORT=str(PG_PORT))
    subprocess.run(as_pg([f"{b}/pg_ctl", "-D", pg, "-w", "-s", "-l", os.path.join(d, "pg.log"),
                          "start"]), env=env, **q)
    try:
        subprocess.run(as_pg([f"{b}/pgbench", "-i", "-q", "-s", "2", "postgres"]), env=env, **q)
    finally:
        subprocess.run(as_pg([f"{b}/pg_ctl", "-D", pg, "-w", "-s", "stop", "-m", "fast"]),
                       env=env, **q)


def write_random(path, mib):
    with open(path, "wb") as f:
        for _ in range(mib):
            f.write(os.urandom(1 << 20))


def setup_sas(d):
    with open(os.path.join(d, "sas.py"), "w") as f:
        f.write(SAS_LIKE)
    for k in range(4):
        write_random(os.path.join(d, f"in{k}"), 96)


def setup_dd(d):
    write_random(os.path.join(d, "in"), 512)


def setup_sort(d):
    import random
    rnd = random.Random(7)
    with open(os.path.join(d, "in.txt"), "w") as f:
        n = 0
        while n < 24 << 20:
            line = f"{rnd.getrandbits(64):020d} {rnd.getrandbits(32):010d} some text\n"
            f.write(line)
            n += len(line)


def setup_sqlite(d):
    with open(os.path.join(d, "load.sql"), "w") as f:
        f.write("PRAGMA synchronous=FULL;\nCREATE TABLE t(a INTEGER, b TEXT);\n")
        for txn in range(1500):
            f.write("BEGIN;\n")
            for i in range(2):
                f.write(f"INSERT INTO t VALUES({txn * 2 + i}, 'row {txn} {i} with text');\n")
            f.write("COMMIT;\n")


def setup_tar(d):
    shutil.copytree("/usr/include", os.path.join(d, "tree"), symlinks=True)


def setup_fio(d):
    with open(os.path.join(d, "job.fio"), "w") as f:
        f.write(FIO_JOB)


PROGRAMS = {
    # The interpreter itself: `python3` on PATH can be a version manager's shim (pyenv's is
    # a bash script that starts some 40 processes before Python), which is not the program.
    "sas-like": (setup_sas, [os.path.realpath(sys.executable), "sas.py"]),
    "dd-direct": (setup_dd, ["dd", "if=in", "of=out", "bs=1M", "iflag=direct", "oflag=direct",
                             "status=none"]),
    "sort": (setup_sort, ["sort", "-S", "1M", "-T", ".", "in.txt", "-o", "out.txt"]),
    "sqlite": (setup_sqlite, ["sqlite3", "db", ".read load.sql"]),
    "tar": (setup_tar, ["tar", "cf", "out.tar", "tree"]),
    "fio-job": (setup_fio, [IOGAUGE, "fio", "--output-format=terse", "job.fio"]),
    "pgbench": (setup_pg, as_pg(["sh", "pg.sh"])),
}
# Programs that need what a machine may lack: why they cannot run here (None: they can).
NEEDS = {"pgbench": pg_missing}

STORAGES = {"disk": DISK, "tmpfs": TMPFS, "throttled": DISK}


def evict(d):
    """The program's inputs out of the page cache (synced first); the system's files (the
    programs, their libraries) stay cached, as on a server that runs them daily."""
    subprocess.run(["sync"], check=True)
    for root, _, files in os.walk(d):
        for name in files:
            p = os.path.join(root, name)
            if os.path.islink(p):
                continue
            fd = os.open(p, os.O_RDONLY)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


def disk_device():
    st = os.stat("/var/tmp")
    major, minor = os.major(st.st_dev), os.minor(st.st_dev)
    # The whole disk (the cgroup throttles disks, not partitions).
    part = f"/sys/dev/block/{major}:{minor}/partition"
    if os.path.exists(part):
        parent = os.path.realpath(f"/sys/dev/block/{major}:{minor}/..")
        with open(os.path.join(parent, "dev")) as f:
            return f.read().strip()
    return f"{major}:{minor}"


def make_cgroup():
    os.makedirs(CGROUP, exist_ok=True)
    dev = disk_device()
    bps = THROTTLE_MIB << 20
    for name, v in [("read_bps_device", bps), ("write_bps_device", bps),
                    ("read_iops_device", THROTTLE_IOPS), ("write_iops_device", THROTTLE_IOPS)]:
        with open(os.path.join(CGROUP, f"blkio.throttle.{name}"), "w") as f:
            f.write(f"{dev} {v}\n")
    return dev


def wrap(storage, cmd):
    """The command, in the throttled cgroup where the storage is the throttled one."""
    if storage != "throttled":
        return cmd
    return ["sh", "-c", f'echo $$ > {CGROUP}/cgroup.procs && exec "$@"', "sh"] + cmd


def fresh(storage, prog, what="recorded"):
    """A new directory for the program's inputs: one for the recording, one for the real runs
    (the throttled storage is the disk's directory too)."""
    d = os.path.join(STORAGES[storage], f"{prog}-{what}")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    PROGRAMS[prog][0](d)
    evict(d)
    return d


def run(cmd, cwd):
    t = time.perf_counter()
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr[-800:]}")
    return time.perf_counter() - t, r.stdout


T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
        9: 2.262, 10: 2.228}


def t975(df):
    """Student's t at 97.5% for `df` degrees of freedom: the table to 10, then the
    Cornish-Fisher expansion around the normal's 1.96 (within 0.002 of the exact value there)."""
    if df in T975:
        return T975[df]
    z = 1.959964
    return z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2)


def combined(preds):
    """Single-replay predictions combined as `predict --repeat N` combines its replays: the
    median; the bound the 95% prediction interval of their spread plus the median of each
    other part (the capture's, the unseen I/O's, the recorded waits for a CPU, the wake-ups,
    the method's bias)."""
    ns = [p["predicted_ns"] for p in preds]
    n = len(ns)
    mean = sum(ns) / n
    s = (sum((x - mean) ** 2 for x in ns) / (n - 1)) ** 0.5
    noise = t975(n - 1) * s * (1 + 1 / n) ** 0.5
    med = lambda k: statistics.median(p["bound"][k] for p in preds)  # noqa: E731
    parts = ("capture_ns", "unseen_io_ns", "preempted_ns", "wake_ns", "model_ns")
    return statistics.median_low(ns), noise + sum(med(k) for k in parts)


def case(prog, src, dst, baseline=None):
    """One program from `src` to `dst`: its row. With `baseline` (another iogauge binary), that
    binary predicts the same trace too, in the same rounds, its order among the steps turning
    round by round, so that a change to the model is judged against the same real runs."""
    d = fresh(src, prog)
    trace = os.path.join(STORAGES["tmpfs"], f"{prog}.iogtrace")
    if os.path.exists(trace):
        os.remove(trace)
    cmd = PROGRAMS[prog][1]

    def pred_cmd(binary):
        if prog == "fio-job":
            # The job file is the program: predict records it itself, in the from-storage.
            return [binary, "predict", os.path.join(d, "job.fio"), "--record-directory", d]
        return [binary, "predict", trace]

    if prog != "fio-job":
        run(wrap(src, [IOGAUGE, "record", "-o", trace, "--"] + cmd), d)
    target = os.path.join(STORAGES[dst], "replays")
    shutil.rmtree(target, ignore_errors=True)
    os.makedirs(target)
    actual = []
    binaries = [IOGAUGE] + ([baseline] if baseline else [])
    preds = {b: [] for b in binaries}

    def real():
        w = fresh(dst, prog, "run")
        secs, _ = run(wrap(dst, cmd), w)
        actual.append(secs)
        shutil.rmtree(w, ignore_errors=True)

    def predicted(binary):
        def step():
            _, out = run(wrap(dst, pred_cmd(binary) + ["--directory", target, "--repeat", "1",
                                                       "--json"]), d)
            preds[binary].append(json.loads(out))
        return step

    # The disk's speed drifts over minutes: the real runs and the predictions alternate, each
    # prediction one replay (ABBA for two steps; with a baseline, each step first in turn).
    steps = [real] + [predicted(b) for b in binaries]
    for k in range(RUNS):
        n = len(steps)
        order = (steps if k % 2 == 0 else steps[::-1]) if n == 2 else steps[k % n:] + steps[:k % n]
        for step in order:
            step()
    shutil.rmtree(d, ignore_errors=True)
    if os.path.exists(trace):
        os.remove(trace)
    a = statistics.median(actual)
    row = {"program": prog, "from": src, "to": dst,
           "recorded": preds[IOGAUGE][0]["recorded_ns"] / 1e9,
           "actual": a, "actual_runs": actual}
    row.update(judged(preds[IOGAUGE], a))
    if baseline:
        row["baseline"] = judged(preds[baseline], a)
    return row


def judged(preds, a):
    """One binary's predictions of a case: combined, against the actual `a`."""
    pred_ns, bound_ns = combined(preds)
    pred, bound = pred_ns / 1e9, bound_ns / 1e9
    warnings = sorted({w for p in preds for w in p["warnings"] if not w.startswith("one replay")})
    return {"predicted": pred, "bound": bound,
            "predictions": [p["predicted_ns"] / 1e9 for p in preds],
            "error_pct": (pred - a) / a * 100, "held": abs(pred - a) <= bound,
            "warnings": warnings}


LOCK = "/var/tmp/iogauge-predict.lock"


def hold_lock():
    """The bench's lock, held until it exits: two at once would share DISK, TMPFS and the
    cgroup, remove each other's directories and both fail (or worse, time each other)."""
    import fcntl
    f = open(LOCK, "a")
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        sys.exit(f"predict_accuracy.py: another run holds {LOCK}; wait for it to end")
    return f


def main():
    global RUNS
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="", help="comma-separated programs")
    ap.add_argument("--pairs", default="disk:tmpfs,tmpfs:disk,disk:throttled",
                    help="comma-separated from:to storages")
    ap.add_argument("--no-save", action="store_true")
    ap.add_argument("--runs", type=int, default=RUNS,
                    help=f"real runs and predictions per case (default {RUNS}; at least 2): more "
                         "where the real runs spread widely")
    ap.add_argument("--baseline", metavar="BIN",
                    help="another iogauge binary predicting the same traces in the same rounds "
                         "(its predictions, errors and bounds in columns of their own)")
    a = ap.parse_args()
    if a.runs < 2:
        sys.exit(f"--runs: {a.runs}: at least 2 (the bound needs the predictions' spread)")
    RUNS = a.runs
    if a.baseline and not os.access(a.baseline, os.X_OK):
        sys.exit(f"--baseline: {a.baseline}: not an executable file")
    lock = hold_lock()
    progs = [p for p in PROGRAMS if not a.only or p in a.only.split(",")]
    skipped = []
    for p in list(progs):
        why = NEEDS.get(p, lambda: None)()
        if why:
            print(f"SKIP {p}: {why}", file=sys.stderr)
            skipped.append(f"- skipped: {p} ({why})")
            progs.remove(p)
    pairs = [tuple(x.split(":")) for x in a.pairs.split(",")]
    m, lines = start("iogauge predict: accuracy")
    dev = make_cgroup()
    for s in (DISK, TMPFS):
        os.makedirs(s, exist_ok=True)
    lines += [f"- storages: disk = ext4 on the virtio disk ({DISK}); tmpfs = {TMPFS}; throttled ="
              f" the disk, program and replays in a blkio cgroup throttled to {THROTTLE_MIB} "
              f"MiB/s and {THROTTLE_IOPS} IOPS each way on {dev}",
              "- per case: the program recorded on the from-storage (its inputs out of the page "
              f"cache); then, alternating (ABBA), {RUNS} real runs on the to-storage (inputs made "
              f"there and out of the page cache each; wall time, fork and exec included) and {RUNS}"
              " `iogauge predict --repeat 1` there (a fio job recorded anew by each); the prediction"
              " is their median and the bound their 95% prediction interval plus the median of "
              "each other part (capture, unseen I/O, waits for a CPU, wake-ups, the method's "
              "bias) — what `--repeat 3` computes from its replays, with the disk's drift over "
              "minutes kept out"] + skipped + baseline_lines(a.baseline) + [""] + header(a.baseline)
    rows = []
    try:
        for prog in progs:
            for src, dst in pairs:
                rows.append(case(prog, src, dst, a.baseline))
                report_row(rows[-1], lines)
    finally:
        # The bench's directories and its cgroup (empty once its programs have ended).
        for d in (DISK, TMPFS):
            shutil.rmtree(d, ignore_errors=True)
        try:
            os.rmdir(CGROUP)
        except OSError as e:
            print(f"cannot remove {CGROUP}: {e}", file=sys.stderr)
    summarise(rows, lines, m, a.no_save)


def baseline_lines(baseline):
    """What the baseline binary is, for the result's header."""
    if not baseline:
        return []
    v = subprocess.run([baseline, "--version"], capture_output=True, text=True).stdout.strip()
    return [f"- baseline: {baseline} ({v}), predicting the same traces in the same rounds, each "
            "step (a real run, a prediction by each binary) first in turn"]


def header(baseline):
    cols = ["program", "from → to", "recorded s", "predicted s (each)", "± bound s",
            "actual s (runs)", "error %", "within bound"]
    if baseline:
        cols += ["baseline predicted s (each)", "baseline ± bound s", "baseline error %",
                 "baseline within bound"]
    return ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]


def judged_cells(j):
    each = ", ".join(f"{x:.3f}" for x in j["predictions"])
    return [f"{j['predicted']:.3f} ({each})", f"{j['bound']:.3f}", f"{j['error_pct']:+.1f}",
            "yes" if j["held"] else "NO"]


def report_row(r, lines):
    """Prints a case's row (and its warnings) and keeps the row for the result."""
    runs = ", ".join(f"{x:.3f}" for x in r["actual_runs"])
    mine = judged_cells(r)
    cells = [r["program"], f"{r['from']} → {r['to']}", f"{r['recorded']:.3f}", mine[0], mine[1],
             f"{r['actual']:.3f} ({runs})", mine[2], mine[3]]
    if "baseline" in r:
        cells += judged_cells(r["baseline"])
    line = "| " + " | ".join(cells) + " |"
    print(line, flush=True)
    for w in r["warnings"]:
        print("    warning:", w[:200], flush=True)
    lines.append(line)


def summary_of(judgements):
    errs = [abs(j["error_pct"]) for j in judgements]
    return (f"median |error| {statistics.median(errs):.1f}%, max {max(errs):.1f}%, "
            f"{sum(j['held'] for j in judgements)} of {len(judgements)} within their bound")


def summarise(rows, lines, m, no_save):
    """The summary line, the warnings, and the result saved."""
    summary = summary_of(rows)
    if rows and "baseline" in rows[0]:
        summary += f"; the baseline: {summary_of([r['baseline'] for r in rows])}"
    print(summary)
    lines += ["", summary, "", "Warnings the predictions carried:", ""]
    for r in rows:
        for w in r["warnings"]:
            lines.append(f"- {r['program']} {r['from']} → {r['to']}: {w}")
    if not no_save:
        save("\n".join(lines) + "\n", m, "-predict-accuracy")


if __name__ == "__main__":
    main()
