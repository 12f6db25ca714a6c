#!/usr/bin/env python3
"""Side-by-side benchmark: iogauge against fio on the same workloads, same files, same run.

Each case runs both tools alternately (ABBA order across rounds, so a drifting disk does not
favour either): tool-bound cases 3 rounds of 6 s, device-bound cases 30 rounds of 1 s. The
development VM's disk drifts up to 2.6x over minutes and flips between a ~1000 and a ~2000 MiB/s
state within seconds, so only many short, interleaved pairs resolve a 3% target: 3 rounds of
6 s gave per-round ratios from 0.64 to 1.34 for the same code, and 10 rounds of 3 s medians of
0.91-1.12 in one run and 1.015-1.026 in another. Prints per-round numbers and the median ratio
iogauge/fio for IOPS, MiB/s and CPU time per I/O, checks the targets, and writes the table to
bench/results/DATE-HHMM-HOST.md. Installs fio (Debian package) when it is missing.

Usage: python3 bench/vs_fio.py [--rounds N] [--seconds S] [--disk-rounds N] [--disk-seconds S]
                               [--dir DIR] [--only CASE,...]
"""

import argparse
import datetime
import json
import os
import platform
import resource
import shutil
import socket
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# IOGAUGE_PREBUILT: a folder that bench/pack.sh filled on another machine (iogauge, fio, the
# ceiling's loops), for a machine with no cargo, compiler or package archive: nothing is built
# or installed, and fio is the folder's own.
PREBUILT = os.environ.get("IOGAUGE_PREBUILT")
# IOGAUGE_BIN: another build to measure (a baseline), in place of this checkout's.
IOGAUGE = (os.environ.get("IOGAUGE_BIN")
           or os.path.join(PREBUILT or os.path.join(ROOT, "target", "release"), "iogauge"))
FIO = os.path.join(PREBUILT, "fio") if PREBUILT else "fio"


def sh(cmd, **kw):
    """Runs a tool; its stderr is shown when it fails."""
    r = subprocess.run(cmd, text=True, capture_output=True, **kw)
    if r.returncode != 0:
        sys.stderr.write(r.stderr[-2000:])
    r.check_returncode()
    return r.stdout


def children_cpu():
    """CPU seconds (user + system) of this script's finished children so far: taken before
    and after a run, the difference is that run's whole process, its threads and the kernel
    workers it started included."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def ensure_fio():
    if shutil.which(FIO):
        return
    if PREBUILT:
        raise SystemExit(f"{FIO}: missing (bench/pack.sh puts fio in the folder)")
    print("installing fio (Debian package)...", flush=True)
    subprocess.run(["apt-get", "update", "-qq"], check=True)
    subprocess.run(["apt-get", "install", "-y", "-qq", "fio"], check=True)


def layout(path, size_mib):
    """Writes a fully allocated file of random data (the bench's own file)."""
    if os.path.exists(path) and os.path.getsize(path) == size_mib << 20:
        return
    with open(path, "wb") as f:
        chunk = os.urandom(1 << 20)
        for i in range(size_mib):
            f.write(i.to_bytes(8, "little") + chunk[8:])
        f.flush()
        os.fsync(f.fileno())


def warm(path):
    """Reads a file once so both tools find it in the page cache."""
    with open(path, "rb") as f:
        while f.read(1 << 20):
            pass


# The file-operation engines' directory, emptied before each tool's run.
META = "/dev/shm/iogauge-bench-meta"


# Each case: name, target check, the file it needs, the common options (fio names, shared by
# both tools), and optionally options for iogauge only and for fio only (where fio has no
# equivalent, its closest one). Targets: "ratio>=X" on IOPS; "withinN%" on IOPS (within3%: the
# device-bound rounds); a trailing
# "+cpu" also requires CPU time per I/O no higher than fio's (median ratio <= 1).
def cases(d, secs, disk_secs):
    shm = "/dev/shm/iogauge-bench.dat"
    space = "/dev/shm/iogauge-bench-space.dat"
    disk = os.path.join(d, "iogauge-bench.dat")
    cached = os.path.join(d, "iogauge-bench-cached.dat")
    defrag = os.path.join(d, "iogauge-bench-defrag.dat")
    t = ["--time_based=1", f"--runtime={secs}"]
    td = ["--time_based=1", f"--runtime={disk_secs}"]
    return [
        ("null-4k-randread", "ratio>=2.0", None, ["--ioengine=null", "--size=1g", "--bs=4k", "--rw=randread"] + t),
        ("psync-4k-randread-tmpfs", "ratio>=1.1", (shm, 1024),
         [f"--filename={shm}", "--size=1g", "--bs=4k", "--rw=randread", "--ioengine=psync"] + t),
        ("psync-1m-read-pagecache", "report", (cached, 1024),
         [f"--filename={cached}", "--size=1g", "--bs=1m", "--rw=read", "--ioengine=psync", "--invalidate=0"] + t),
        ("direct-1m-read-disk", "within3%", (disk, 2048),
         [f"--filename={disk}", "--size=2g", "--bs=1m", "--rw=read", "--ioengine=psync", "--direct=1"] + td),
        ("direct-1m-write-disk", "within3%", (disk, 2048),
         [f"--filename={disk}", "--size=2g", "--bs=1m", "--rw=write", "--ioengine=psync", "--direct=1"] + td),
        # Buffered tmpfs reads cannot complete inline in io_uring (tmpfs has no nowait reads):
        # the kernel punts every one to its io-wq threads, which then bound both tools' IOPS
        # on a small machine; what the tool controls there is its CPU per I/O.
        ("uring-4k-randread-tmpfs-q32", "report+cpu", (shm, 1024),
         [f"--filename={shm}", "--size=1g", "--bs=4k", "--rw=randread", "--ioengine=io_uring",
          "--iodepth=32"] + t),
        # With O_DIRECT, tmpfs serves the read inside the submission: tool-bound.
        ("uring-4k-randread-tmpfs-direct-q32", "ratio>=1.2+cpu", (shm, 1024),
         [f"--filename={shm}", "--size=1g", "--bs=4k", "--rw=randread", "--ioengine=io_uring",
          "--iodepth=32", "--direct=1"] + t),
    ] + [
        (f"uring-4k-randread-disk-q{q}", "within3%+cpu", (disk, 2048),
         [f"--filename={disk}", "--size=2g", "--bs=4k", "--rw=randread", "--ioengine=io_uring",
          f"--iodepth={q}", "--direct=1"] + td)
        for q in (1, 8, 32, 128)
    ] + [
        (f"uring-1m-{rw}-disk-q8", "within3%+cpu", (disk, 2048),
         [f"--filename={disk}", "--size=2g", "--bs=1m", f"--rw={rw}", "--ioengine=io_uring",
          "--iodepth=8", "--direct=1"] + td)
        for rw in ("read", "write")
    ] + [
        # Native AIO: direct on tmpfs is served inside io_submit (tool-bound, the engine's own
        # cost); buffered is too (the kernel has no asynchronous buffered AIO), where iogauge
        # reaps at once and fio when its queue is full; direct on the disk, device-bound.
        ("libaio-4k-randread-tmpfs-direct-q32", "ratio>=0.95+cpu", (shm, 1024),
         [f"--filename={shm}", "--size=1g", "--bs=4k", "--rw=randread", "--ioengine=libaio",
          "--iodepth=32", "--direct=1"] + t),
        ("libaio-4k-randread-tmpfs-q32", "ratio>=0.95", (shm, 1024),
         [f"--filename={shm}", "--size=1g", "--bs=4k", "--rw=randread", "--ioengine=libaio",
          "--iodepth=32"] + t),
        ("libaio-4k-randread-disk-q32", "within3%+cpu", (disk, 2048),
         [f"--filename={disk}", "--size=2g", "--bs=4k", "--rw=randread", "--ioengine=libaio",
          "--iodepth=32", "--direct=1"] + td),
        # fio's other local engines, tool-bound on tmpfs: vsync (readv at the file position),
        # falloc (each write a fallocate of its range) and ftruncate (each write an ftruncate).
        ("vsync-4k-read-tmpfs", "ratio>=0.95+cpu", (shm, 1024),
         [f"--filename={shm}", "--size=1g", "--bs=4k", "--rw=read", "--ioengine=vsync"] + t),
        # mmap: a copy from a shared mapping per I/O (page faults, no system call).
        ("mmap-4k-randread-tmpfs", "ratio>=0.95+cpu", (shm, 1024),
         [f"--filename={shm}", "--size=1g", "--bs=4k", "--rw=randread", "--ioengine=mmap"] + t),
        ("mmap-128k-read-tmpfs", "ratio>=0.95+cpu", (shm, 1024),
         [f"--filename={shm}", "--size=1g", "--bs=128k", "--rw=read", "--ioengine=mmap"] + t),
        # posixaio: glibc's POSIX AIO (helper threads doing pread), eight requests in flight.
        ("posixaio-4k-randread-tmpfs-q8", "ratio>=0.95+cpu", (shm, 1024),
         [f"--filename={shm}", "--size=1g", "--bs=4k", "--rw=randread", "--ioengine=posixaio",
          "--iodepth=8"] + t),
        # splice: file -> pipe -> buffer (splice, then vmsplice), 64 KiB a step.
        ("splice-64k-read-tmpfs", "ratio>=0.95+cpu", (shm, 1024),
         [f"--filename={shm}", "--size=1g", "--bs=64k", "--rw=read", "--ioengine=splice"] + t),
        # Each tool makes (and fio keeps) its own file: fio lays it out, iogauge is allowed
        # to use fio's.
        ("falloc-4k-randwrite-tmpfs", "ratio>=0.95", None,
         [f"--filename={space}", "--size=256m", "--bs=4k", "--rw=randwrite",
          "--ioengine=falloc"] + t, ["--allow-overwrite"], []),
        ("ftruncate-4k-write-tmpfs", "ratio>=0.95", None,
         [f"--filename={space}", "--size=256m", "--bs=4k", "--rw=write",
          "--ioengine=ftruncate"] + t, [], []),
        # e4defrag on the disk's ext4: each write an EXT4_IOC_MOVE_EXT of 32 KiB to the donor
        # (kernel-bound: copying the blocks). Each run gets the same start: one file laid out
        # here anew, no donor (see `relay`): the layout each tool makes of its own differs,
        # and moves change both files, so the cost of the next run. fio needs filesize to size
        # its donor, and takes an engine's options only after --ioengine. One pass, not
        # time_based: a second pass moves blocks still in the journal, where fio's run fails
        # with EBUSY and iogauge's commits them and goes on (see engine/platform/linux/defrag.rs).
        ("e4defrag-32k-write-disk", "ratio>=0.95", (defrag, 64),
         [f"--filename={defrag}", "--ioengine=e4defrag", f"--donorname={defrag}.def",
          "--size=64m", "--bs=32k", "--rw=write"], ["--allow-overwrite"],
         ["--filesize=64m"]),
    ] + [
        # fio's file-operation engines on tmpfs: the rate of creates, stats and deletes (what
        # SAS WORK and database temporary areas stress). Each run starts with an empty
        # directory (see `fresh`); filecreate and filedelete are bounded by files, not time (a
        # second pass would open or fail), and fio removes filecreate's files with unlink=1.
        (f"{e}-tmpfs", "ratio>=0.95+cpu", None,
         [f"--directory={META}", "--nrfiles=8000", "--filesize=4k", f"--ioengine={e}"]
         + extra, [], fio_extra)
        for e, extra, fio_extra in (
            ("filecreate", [], ["--unlink=1"]),
            ("filestat", t, []),
            ("filedelete", [], []),
        )
    ] + [
        # SGIO: 16 separate 64 KiB pages per preadv. fio cannot build a multi-entry iovec; its
        # closest equivalent is pvsync moving the same 1 MiB per call from one buffer.
        ("pvsync-64kx16-read-disk", "within3%", (disk, 2048),
         [f"--filename={disk}", "--size=2g", "--rw=read", "--ioengine=pvsync", "--direct=1"] + td,
         ["--bs=64k", "--numpages=16"], ["--bs=1m"]),
    ] + [
        # fio's net engine over loopback: a receiver and its sender, one job file run by each
        # tool in fio mode (the receiver's rate is the case's; both jobs' CPU counts). The
        # sender starts 1 s after the receiver listens, as fio's netio.fio does.
        (f"net-{proto}-{bs}-loopback", "ratio>=0.95", None, {"jobfile": net_job(proto, bs, secs)})
        for proto, bs in (("tcp", "64k"), ("tcp", "4k"), ("udp", "1k"))
    ]


def net_job(proto, bs, secs):
    """A receiver and a sender of fio's net engine, as a job file's text."""
    listen = "listen\n" if proto == "tcp" else ""
    return (f"[global]\nioengine=net\nprotocol={proto}\nport=18800\nbs={bs}\nsize=100g\n"
            f"time_based\nruntime={secs}\n[receiver]\n{listen}rw=read\n"
            f"[sender]\nhostname=127.0.0.1\nstartdelay=1\nrw=write\n")


def run_job_file(tool, text):
    """Runs a job file with fio or `iogauge fio` (fio's JSON either way): the first job's
    reads in blocks of the file's bs, and the CPU time of all its jobs."""
    path = "/dev/shm/iogauge-bench-net.fio"
    with open(path, "w") as f:
        f.write(text)
    cmd = [FIO] if tool == "fio" else [IOGAUGE, "fio"]
    out = sh(cmd + ["--output-format=json", path])
    os.remove(path)
    jobs = json.loads(out[out.index("{"):])["jobs"]
    d = jobs[0]["read"]
    cpu_s = sum((j["usr_cpu"] + j["sys_cpu"]) / 100.0 * j["job_runtime"] / 1000.0 for j in jobs)
    # Blocks, not fio's I/O count: fio's tcp receiver counts each partial recv as an I/O (at
    # 64 KiB most are), so its IOPS would count calls, not blocks.
    bs = jobs[0]["job options"].get("bs") or next(
        l.split("=", 1)[1] for l in text.splitlines() if l.startswith("bs="))
    bs = int(bs[:-1]) << 10 if bs.endswith("k") else int(bs)
    return {"iops": d["bw_bytes"] / bs, "mibs": d["bw_bytes"] / 1048576.0,
            "ios": d["io_bytes"] // bs, "cpu_s": cpu_s}


def run_iogauge(opts):
    extra = ["--allow-overwrite"] if any(o == "--rw=write" for o in opts) else []
    out = sh([IOGAUGE, "run", "--output-format=json"] + opts + extra)
    j = json.loads(out)["groups"][0]["total"]
    d = j["write"] if j["write"]["ios"] > j["read"]["ios"] else j["read"]
    cpu_s = j["cpu"]["user_s"] + j["cpu"]["system_s"]
    return {"iops": d["iops"], "mibs": d["mib_per_s"], "ios": d["ios"], "cpu_s": cpu_s}


def run_fio(opts):
    out = sh([FIO, "--name=bench", "--output-format=json"] + opts)
    j = json.loads(out)["jobs"][0]
    d = j["write"] if j["write"]["total_ios"] > j["read"]["total_ios"] else j["read"]
    runtime_s = d["runtime"] / 1000.0
    cpu_s = (j["usr_cpu"] + j["sys_cpu"]) / 100.0 * runtime_s
    return {"iops": d["iops"], "mibs": d["bw_bytes"] / 1048576.0, "ios": d["total_ios"], "cpu_s": cpu_s}


def machine():
    cpu = ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem = 0
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                mem = int(line.split()[1]) // 1024 // 1024
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], text=True,
                            capture_output=True).stdout.strip()
    # A build of a tree with changes to the code is not that commit's.
    changed = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--", "src", "Cargo.toml",
                              "Cargo.lock", "build.rs"], text=True,
                             capture_output=True).stdout.strip()
    if changed:
        commit += " + uncommitted changes"
    if PREBUILT and os.path.exists(os.path.join(PREBUILT, "COMMIT")):
        with open(os.path.join(PREBUILT, "COMMIT")) as f:
            commit = f.read().strip()
    return {
        "host": socket.gethostname(),
        "kernel": platform.release(),
        "cpu": f"{os.cpu_count()} x {cpu}",
        "memory": f"{mem} GiB",
        "fio": sh([FIO, "--version"]).strip() + (" (built by bench/pack.sh)" if PREBUILT else ""),
        "iogauge": sh([IOGAUGE, "--version"]).strip() + f" (commit {commit})",
    }


def start(title):
    """Installs fio if needed, builds iogauge, and returns the machine and the result's
    opening lines (title with the date, then how it was measured)."""
    ensure_fio()
    if not PREBUILT:
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    m = machine()
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return m, [f"# {title} — {when}", ""] + [f"- {k}: {v}" for k, v in m.items()]


def save(text, m, suffix=""):
    """Writes a result to bench/results/DATE-HHMM-HOST{suffix}.md."""
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d-%H%M")
    out = os.path.join(ROOT, "bench", "results", f"{stamp}-{m['host']}{suffix}.md")
    with open(out, "w") as fh:
        fh.write(text)
    print("saved", out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=6)
    ap.add_argument("--disk-rounds", type=int, default=30)
    ap.add_argument("--disk-seconds", type=int, default=1)
    ap.add_argument("--dir", default=ROOT, help="directory on the disk under test")
    ap.add_argument("--only", default="", help="comma-separated case names")
    ap.add_argument("--no-save", action="store_true")
    a = ap.parse_args()

    m, lines = start("iogauge vs fio")
    lines += [f"- tool-bound cases: {a.rounds} rounds of {a.seconds} s; device-bound (within3%): "
              f"{a.disk_rounds} rounds of {a.disk_seconds} s; alternating (ABBA)", ""]
    lines += ["| case | round | iogauge IOPS | fio IOPS | iogauge MiB/s | fio MiB/s | iogauge CPU µs/IO | fio CPU µs/IO |",
              "|---|---|---|---|---|---|---|---|"]
    summary = ["", "| case | target | IOPS ratio (median) | MiB/s ratio | CPU/IO ratio | verdict |",
               "|---|---|---|---|---|---|"]
    only = set(filter(None, a.only.split(",")))
    # The space engines' file, which each tool makes for itself.
    made = ["/dev/shm/iogauge-bench-space.dat"]
    try:
        ok_all = run_cases(a, only, made, lines, summary)
    finally:
        for f in made:
            if os.path.exists(f):
                os.remove(f)
        shutil.rmtree(META, ignore_errors=True)
        donor = os.path.join(a.dir, "iogauge-bench-defrag.dat.def")
        if os.path.exists(donor):
            os.remove(donor)
    text = "\n".join(lines + summary) + "\n"
    print(text)
    if not a.no_save:
        # Date and time in the name: several runs a day must not overwrite each other.
        save(text, m)
    return 0 if ok_all else 1


def fresh(opts):
    """An empty directory for a case that names --directory (the file-operation engines)."""
    for o in opts:
        if o.startswith("--directory="):
            d = o.split("=", 1)[1]
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d)


def relay(file, opts):
    """The same start for each e4defrag run: the file laid out anew and the donor gone (moves
    change both files and their pages in the cache, and the next run's cost with them)."""
    for o in opts:
        if o.startswith("--donorname="):
            donor = o.split("=", 1)[1]
            if os.path.exists(donor):
                os.remove(donor)
    os.remove(file[0])
    layout(*file)
    os.sync()


def run_cases(a, only, made, lines, summary):
    ok_all = True
    for case in cases(a.dir, a.seconds, a.disk_seconds):
        name, target, file, opts = case[:4]
        own, fios = (case[4], case[5]) if len(case) > 4 else ([], [])
        if isinstance(opts, dict):
            # A job file each tool runs as it is.
            text = opts["jobfile"]
            tools = (lambda _: run_job_file("iogauge", text), lambda _: run_job_file("fio", text))
        else:
            tools = (run_iogauge, run_fio)
        if only and name not in only:
            continue
        if file:
            layout(*file)
            made.append(file[0])
            if "pagecache" in name:
                warm(file[0])
        ratios, mratios, cratios = [], [], []
        rounds = a.disk_rounds if target.startswith("within3%") else a.rounds
        for r in range(rounds):
            order = [("iogauge", tools[0], own), ("fio", tools[1], fios)]
            if r % 2:
                order.reverse()
            res = {}
            for tool, fn, extra in order:
                if isinstance(opts, dict):
                    res[tool] = fn(None)
                    continue
                fresh(opts)
                if name.startswith("e4defrag"):
                    relay(file, opts)
                res[tool] = fn(opts + extra)
            ig, fi = res["iogauge"], res["fio"]
            cpu_ig = ig["cpu_s"] / max(ig["ios"], 1) * 1e6
            cpu_fi = fi["cpu_s"] / max(fi["ios"], 1) * 1e6
            ratios.append(ig["iops"] / fi["iops"])
            mratios.append(ig["mibs"] / fi["mibs"])
            cratios.append(cpu_ig / cpu_fi if cpu_fi else float("nan"))
            row = (f"| {name} | {r + 1} | {ig['iops']:.0f} | {fi['iops']:.0f} | {ig['mibs']:.1f} | "
                   f"{fi['mibs']:.1f} | {cpu_ig:.3f} | {cpu_fi:.3f} |")
            print(row, flush=True)
            lines.append(row)
        med = statistics.median(ratios)
        base, _, cpu_check = target.partition("+")
        if base.startswith("ratio>="):
            ok = med >= float(base[7:])
        elif base.startswith("within") and base.endswith("%"):
            ok = abs(med - 1.0) <= float(base[6:-1]) / 100
        else:
            ok = True
        if cpu_check == "cpu":
            ok &= statistics.median(cratios) <= 1.0
        ok_all &= ok
        verdict = "ok" if ok else "MISSED"
        srow = (f"| {name} | {target} | {med:.3f} | {statistics.median(mratios):.3f} | "
                f"{statistics.median(cratios):.3f} | {verdict} |")
        print(srow, flush=True)
        summary.append(srow)
    return ok_all


if __name__ == "__main__":
    sys.exit(main())
