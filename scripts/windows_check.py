#!/usr/bin/env python3
"""iogauge.exe under Wine: the Windows build's command lines, outputs and safety, checked.

Runs the Windows build (cross-built with `cargo build --target x86_64-pc-windows-gnu`) through
scripts/wine-run.sh and asserts what a user of the seeds' tools gets: SASIOTEST's and sqlio's
command lines with Windows paths and drive letters print the tools' own output shapes, a fio
job file with ioengine=windowsaio runs at its depth and verifies what it wrote, and the
safety promises hold (a file iogauge did not create is never written, a raw device is
refused before it is opened, Linux's engines and the recorder are refused in one line, exit code 2,
nothing created). Wine runs overlapped I/O synchronously and enforces neither NO_BUFFERING
nor WRITE_THROUGH, keeps no named streams (iogauge's marks) and makes no symbolic links, so
this checks behaviour, not speed; docs/windows.md says what needs real Windows.

Usage: scripts/windows_check.py [PATH/TO/iogauge.exe]   (default: the debug build)
Exit 0 when every check holds; each failure is printed and the exit is 1.
"""
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXE = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    ROOT, "target", "x86_64-pc-windows-gnu", "debug", "iogauge.exe")
RUN = os.path.join(ROOT, "scripts", "wine-run.sh")
PREFIX = os.environ.get("IOGAUGE_WINEPREFIX", os.path.join(ROOT, "target", "wine"))
# C:\iogauge-check inside the Wine prefix: made here, removed at the end.
HOST_DIR = os.path.join(PREFIX, "drive_c", "iogauge-check")
WIN_DIR = "C:\\iogauge-check"

failures = []


def iogauge(*args, timeout=180):
    p = subprocess.run([RUN, EXE, *args], capture_output=True, text=True, timeout=timeout,
                       env={**os.environ, "IOGAUGE_WINEPREFIX": PREFIX})
    return p.returncode, p.stdout, p.stderr


def check(what, ok, detail=""):
    print(f"{'ok  ' if ok else 'FAIL'} {what}")
    if not ok:
        failures.append(what)
        if detail:
            print("     " + detail.strip().replace("\n", "\n     ")[:2000])


def host(name):
    return os.path.join(HOST_DIR, name)


def sasiotest():
    rc, out, err = iogauge("sasiotest", f"{WIN_DIR}\\test.out", "-w", "-pagesize", "64k",
                           "-filesize", "8M")
    check("sasiotest -w: runs", rc == 0, err)
    check("sasiotest -w: the seed's lines",
          f"Sequentially writing 8388608 bytes to file: {WIN_DIR}\\test.out with a 65536 page "
          "size." in out and re.search(r"Write Throughput: \d+\.\d{6} MB/Sec\.", out)
          and re.search(r"Elapsed time: \d+\.\d{6} Secs", out), out)
    check("sasiotest -w: 8 MiB written", os.path.getsize(host("test.out")) == 8 << 20)
    rc, out, err = iogauge("sasiotest", f"{WIN_DIR}\\test.out", "-r", "-pagesize", "64k",
                           "-filesize", "8M")
    check("sasiotest -r: runs and reads", rc == 0 and re.search(
        r"Sequentially reading 8388608 bytes from file: .*\nRead Throughput: \d+\.\d{6} MB/Sec\.",
        out) is not None, out + err)
    rc, out, err = iogauge("sasiotest", f"{WIN_DIR}\\sg.out", "-w", "-sgio", "-pagesize", "64k",
                           "-filesize", "32M", "-numpages", "16")
    check("sasiotest -w -sgio: gather writes of 16 pages",
          rc == 0 and "Gather Writing 16 pages - 32 iterations to file" in out
          and "ReadFileScatter/WriteFileGather" in out and "FILE_FLAG_NO_BUFFERING" in out,
          out + err)
    rc, out, err = iogauge("sasiotest", f"{WIN_DIR}\\sg.out", "-r", "-sgio", "-pagesize", "64k",
                           "-filesize", "32M", "-numpages", "16")
    check("sasiotest -r -sgio: scatter reads",
          rc == 0 and "Scatter Reading 16 pages - 32 iterations from file" in out, out + err)


def sqlio():
    with open(host("testfile.dat"), "wb") as f:
        f.write(os.urandom(1 << 20) * 16)
    # -d takes drive letters on Windows; the file is at the drive's root, so the check's
    # directory is given as a path instead (the drive letter form is checked below).
    rc, out, err = iogauge("sqlio", "-kR", "-s2", "-frandom", "-o4", "-b64", "-t2", "-LS",
                           "-BH", f"-d{WIN_DIR}", "testfile.dat")
    check("sqlio -kR -o4 -t2 -LS -BH: runs", rc == 0, err)
    for line in ["2 threads reading for 2 secs from file", "using 64KB random IOs",
                 "enabling multiple I/Os per thread with 4 outstanding", "CUMULATIVE DATA:",
                 "IOs/sec:", "MBs/sec:", "Min_Latency(ms):", "Avg_Latency(ms):", "histogram:"]:
        check(f"sqlio: prints '{line}'", line in out, out)
    check("sqlio: -o runs on windowsaio at depth 4",
          "overlapped, on an I/O completion port" in out and "iodepth 4" in out, out)
    # sqlio's own form: a drive letter, the file at the drive's root.
    root = os.path.join(PREFIX, "drive_c", "iogauge-check-sqlio.dat")
    shutil.copyfile(host("testfile.dat"), root)
    try:
        rc, out, err = iogauge("sqlio", "-kR", "-s1", "-fsequential", "-b64", "-dC",
                               "iogauge-check-sqlio.dat")
        check("sqlio -dC: the file at C:\\'s root", rc == 0
              and "reading for 1 secs from file C:\\iogauge-check-sqlio.dat" in out,
              out + err)
    finally:
        os.remove(root)
    rc, _, err = iogauge("sqlio", "-kR", "-s1", "-dQ", "testfile.dat")
    check("sqlio -dQ: a drive that is not there is refused",
          rc == 2 and "drive Q: is not there" in err, err)


def windowsaio_job():
    job = host("w.fio")
    data = f"{WIN_DIR}\\w.dat".replace(":", "\\:")
    with open(job, "w") as f:
        f.write(f"[w]\nioengine=windowsaio\niodepth=8\nrw=randwrite\nbs=16k\nsize=4m\n"
                f"filename={data}\ndirect=1\nverify=crc32c\nnumpages=4\n")
    rc, out, err = iogauge("job", f"{WIN_DIR}\\w.fio")
    check("job file, ioengine=windowsaio numpages=4 verify=crc32c: runs", rc == 0, out + err)
    check("windowsaio: every block read back as written",
          "every block as written" in out, out)
    check("windowsaio: its files are removed", not os.path.exists(host("w.dat")))


def quick():
    rc, out, err = iogauge("quick", f"--directory={WIN_DIR}", "--seconds=1", "--size=8m")
    check("quick: runs, its cold read unbuffered (Windows drops no file's cache)",
          rc == 0 and re.search(r"sequential read 1 MiB .* NO_BUFFERING ", out) is not None
          and "cannot drop" not in err, out + err)
    check("quick: its file is removed", not os.path.exists(host("iogauge-quick.tmp")))


def safety():
    foreign = host("foreign.dat")
    with open(foreign, "wb") as f:
        f.write(b"precious" * 1024)
    rc, _, err = iogauge("run", "--name=x", f"--filename={WIN_DIR}\\foreign.dat".replace(
        "C:", "C\\:"), "--rw=write", "--size=8k")
    check("a file iogauge did not create is not written (exit 2)",
          rc == 2 and "did not create" in err, err)
    with open(foreign, "rb") as f:
        check("... and is left as it was", f.read() == b"precious" * 1024)
    for rw in (["--rw=write"], ["--rw=write", "--allow-overwrite"], ["--rw=read"]):
        rc, _, err = iogauge("run", "--name=x", "--filename=\\\\.\\PhysicalDrive0", *rw,
                             "--size=64k")
        check(f"a raw device is refused before it is opened, {' '.join(rw)} (exit 2, one line)",
              rc == 2 and "a raw device" in err and len(err.strip().splitlines()) == 1, err)
    rc, _, err = iogauge("run", "--name=x", f"--directory={WIN_DIR}", "--ioengine=io_uring",
                         "--size=64k")
    check("Linux's engines are refused in one line",
          rc == 2 and "one of Linux's own engines" in err and len(err.strip().splitlines()) == 1,
          err)
    rc, _, err = iogauge("run", "--name=x", f"--directory={WIN_DIR}", "--ioengine=windowsaio",
                         "--numpages=4", "--size=64k")
    check("windowsaio's scatter/gather without direct=1 is refused, naming numpages",
          rc == 2 and "--numpages=4" in err and "direct=1" in err, err)
    rc, _, err = iogauge("run", "--name=x", f"--filename={WIN_DIR}\\x.dat", "--size=64k")
    check("an unescaped drive letter in fio's filename is refused, saying how to escape it",
          rc == 2 and "C\\:" in err, err)
    for bad, named in [("--bs=1000", "--bs=1000"), ("--offset=100", "--offset=100")]:
        rc, _, err = iogauge("run", "--name=x", f"--directory={WIN_DIR}", "--direct=1",
                             "--size=64k", bad)
        check(f"direct=1 with {bad}: iogauge's own alignment error, naming the sector size",
              rc == 2 and named in err and "logical block size" in err
              and re.search(r"\((512|4096) bytes\)", err) is not None, err)
    rc, _, err = iogauge("sasiotest", f"{WIN_DIR}\\x.dat", "-w", "-unbuffered", "-pagesize",
                         "1000", "-filesize", "1000000")
    check("sasiotest -unbuffered with a page size off the sector is refused",
          rc == 2 and "-pagesize 1000" in err and "logical block size" in err, err)
    rc, out, err = iogauge("run", "--name=x", f"--directory={WIN_DIR}", "--size=64k",
                           "--numjobs=2", "--direct=1", "--sync=dsync", "--rw=randrw")
    check("the report names Windows' calls and open flags, not Linux's",
          rc == 0 and "ReadFile/WriteFile at an offset" in out
          and "[GENERIC_READ|GENERIC_WRITE|FILE_FLAG_NO_BUFFERING|FILE_FLAG_WRITE_THROUGH]" in out
          and "SetFileInformationByHandle" in out and "pread" not in out
          and "O_DIRECT" not in out and "fallocate(2)" not in out
          and "ctx switches not counted here" in out, out + err)
    check("the target line names the volume's file system and disk, in Windows' paths",
          rc == 0 and re.search(r"target C:\\iogauge-check\\x\.0\.0: \S+ on ", out) is not None
          and "/" not in out.split("target ", 1)[1].split("\n", 1)[0], out + err)
    rc, _, err = iogauge("record", "--", "cmd.exe", "/c", "echo")
    check("record is refused on Windows", rc == 2 and "needs Linux" in err, err)
    left = sorted(n for n in os.listdir(HOST_DIR) if n.startswith("x."))
    check("refusals create nothing", not left, str(left))


def main():
    if not os.path.exists(EXE):
        print(f"windows_check: {EXE} is not built (cargo build --target x86_64-pc-windows-gnu)")
        return 2
    shutil.rmtree(HOST_DIR, ignore_errors=True)
    os.makedirs(HOST_DIR)
    rc, out, _ = iogauge("--version")
    check("iogauge.exe --version", rc == 0 and out.startswith("iogauge "), out)
    try:
        sasiotest()
        sqlio()
        windowsaio_job()
        quick()
        safety()
    finally:
        shutil.rmtree(HOST_DIR, ignore_errors=True)
    print(f"windows_check: {len(failures)} failed" if failures else "windows_check: all held")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
