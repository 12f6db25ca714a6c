"""Two iogauge binaries side by side, alternating (old/new, then new/old), on tmpfs.

Usage: python3 bench/ab_binaries.py OLD_BINARY NEW_BINARY [ROUNDS] [CASE]
Prints, per case, the median ratio new/old of IOPS and its range. Build the old one from a
worktree: git worktree add /tmp/old REV && (cd /tmp/old && cargo build --release).
"""
import json, subprocess, statistics, sys
OLD, NEW = sys.argv[1], sys.argv[2]
sys.argv = [sys.argv[0]] + sys.argv[3:]
cases = {
 "null": ["--ioengine=null","--rw=randread","--bs=4k"],
 "psync-tmpfs": ["--ioengine=psync","--rw=randread","--bs=4k"],
 "uring-q32-tmpfs": ["--ioengine=io_uring","--iodepth=32","--rw=randread","--bs=4k"],
 "psync-tmpfs-write": ["--ioengine=psync","--rw=randwrite","--bs=4k"],
}
def run(b, args):
    o = subprocess.run([b,"fio","--name=ab","--filename=/dev/shm/ab.dat","--size=256m","--time_based","--runtime=2","--output-format=json"]+args, capture_output=True, text=True)
    d = json.loads(o.stdout); j = d["jobs"][0]
    return j["read"]["iops"] + j["write"]["iops"]
rounds = int(sys.argv[1]) if len(sys.argv)>1 else 6
for name, a in cases.items():
    if len(sys.argv)>2 and name != sys.argv[2]: continue
    r=[]
    for k in range(rounds):
        order = [OLD, NEW] if k % 2 == 0 else [NEW, OLD]
        res = {b: run(b, a) for b in order}
        r.append(res[NEW]/res[OLD])
    print(f"{name}: new/old median {statistics.median(r):.3f} ({min(r):.3f}-{max(r):.3f}) over {rounds}", flush=True)
