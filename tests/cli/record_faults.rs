//! `iogauge record` and the I/O a program does through mappings: a real program (Python's
//! mmap) reads a file's pages by touching them, each a major page fault the kernel reads
//! storage for. The trace ties each fault to its file and counts what the kernel counted for
//! the program itself (/proc/self/stat's majflt); `replay` reads the same pages through
//! mappings of its copies of the files, and `predict` takes what they took on the target in
//! place of the time slept in them.

use super::*;

/// Pages of the data file the program touches, in an order that is not sequential.
const TOUCHED: u64 = 37;

/// A Python program that maps `data.bin` (out of the page cache first), turns read-ahead off
/// for the mapping (MADV_RANDOM: one fault, one page), touches TOUCHED distinct pages, and
/// prints the major faults the kernel counted for it meanwhile.
const PROGRAM: &str = "import mmap, os
fd = os.open('data.bin', os.O_RDONLY)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
size = os.fstat(fd).st_size
pages = size // mmap.PAGESIZE
def majflt():
    return int(open('/proc/self/stat').read().rsplit(')', 1)[1].split()[9])
m = mmap.mmap(fd, size, prot=mmap.PROT_READ)
m.madvise(mmap.MADV_RANDOM)
before = majflt()
total = 0
for k in range(TOUCHED):
    total += m[(k * 7919 % pages) * mmap.PAGESIZE + 11]
print(majflt() - before)
";

/// The program recorded in `dir` by `method` (with `env` added) to `t.iogtrace`: its output
/// (the kernel's count of its major faults), or why it could not be recorded.
fn recorded(dir: &Path, method: &str, env: &[(&str, &str)]) -> Result<u64, String> {
    let data: Vec<u8> = (0..4u32 << 20).map(|i| (i * 31 % 251) as u8).collect();
    std::fs::write(dir.join("data.bin"), data).unwrap();
    // Written back, so that fadvise can put the pages out of memory.
    std::fs::File::open(dir.join("data.bin"))
        .unwrap()
        .sync_all()
        .unwrap();
    let program = PROGRAM.replace("TOUCHED", &TOUCHED.to_string());
    std::fs::write(dir.join("p.py"), program).unwrap();
    let method = format!("--method={method}");
    let o = run_in_env(
        dir,
        &[
            "record",
            "-o",
            "t.iogtrace",
            "--overwrite-output",
            &method,
            "--",
            predict::python(),
            "p.py",
        ],
        env,
    );
    if !o.status.success() {
        return Err(stderr(&o));
    }
    Ok(stdout(&o)
        .trim()
        .parse()
        .expect("the program prints its count"))
}

#[test]
fn major_page_faults_through_a_mapping_are_counted_on_their_file() {
    let d = tmp();
    let counted = match recorded(d.path(), "perf", &[]) {
        Ok(n) => n,
        Err(e) => {
            skip!("perf cannot record here: {e}");
            return;
        }
    };
    if counted < TOUCHED {
        skip!(
            "the kernel counted {counted} major faults for {TOUCHED} pages touched: the file's \
             pages stayed in memory (a tmpfs temp dir?)"
        );
        return;
    }
    let v = trace_stats(d.path(), "t.iogtrace");
    let method = v["method"].as_str().unwrap();
    if method.contains("major page faults: not seen") {
        skip!("perf's major-fault event refused here: {method}");
        return;
    }
    // One fault a page touched, on the data file (no read-ahead: each touch found its page
    // out of memory); and at least every fault the kernel counted while the program touched
    // them (more where its interpreter's own pages had left the page cache).
    let files = v["files"].as_array().unwrap();
    let data = files
        .iter()
        .find(|f| f["path"].as_str().unwrap().ends_with("/data.bin"))
        .expect("data.bin in the trace");
    assert_eq!(data["major_faults"], TOUCHED, "{data}");
    assert_eq!(data["advice"], serde_json::json!(["random"]), "{data}");
    let all = v["faults"]["faults"].as_u64().unwrap();
    assert!(
        all >= counted,
        "{counted} counted by the kernel: {}",
        v["faults"]
    );
    // Each read of a page from the disk sleeps; the file's sleeps are among the total's.
    let asleep = data["fault_asleep_ns"].as_u64().unwrap();
    assert!(asleep > 0, "{data}");
    let total = v["faults"]["asleep_ns"].as_u64().unwrap();
    assert!(total >= asleep, "{}", v["faults"]);
    let text = ok_in(d.path(), &["trace", "stats", "t.iogtrace"]);
    assert!(
        text.contains(&format!(
            "read through mappings: {TOUCHED} major page faults"
        )),
        "{text}"
    );
    replayed_and_predicted(d.path(), &v);
}

/// A replay of the trace reads each page a fault on a file of the trace read, through a
/// mapping of its copy there; `predict` puts only the sleep of those it could not replay (its
/// interpreter's, outside the trace's files) in its bound, and says what it made of them.
fn replayed_and_predicted(dir: &Path, stats: &Value) {
    let all = stats["faults"]["faults"].as_u64().unwrap();
    let outside = stats["faults"]["outside_files"].as_u64().unwrap();
    let target = tmp();
    let target = target.path().to_str().unwrap();
    let r: Value = serde_json::from_str(&ok_in(
        dir,
        &[
            "replay",
            "t.iogtrace",
            "--directory",
            target,
            "--output-format",
            "json",
        ],
    ))
    .unwrap();
    let f = &r["faults"];
    assert_eq!(f["recorded"], all, "{f}");
    assert_eq!(f["failed"], 0, "{f}");
    assert_eq!(f["replayed"], all - outside, "{f}");
    assert_eq!(f["kept"], outside, "{f}");
    assert!(f.get("not_replayed").is_none(), "{f}");
    // The data file was laid out and put out of memory (its faults say it was read cold),
    // and the replay's mapping of it was given the program's MADV_RANDOM: each page touched
    // was read from storage alone, as the program's was (without the advice the kernel reads
    // this disk's 8 MiB around the first, the whole file, and the rest find their page in
    // memory).
    assert_eq!(f["advice_followed"], 1, "{f}");
    let major = f["major_here"].as_u64().unwrap();
    assert!(major >= TOUCHED, "{f}");
    assert!(f["replayed_ns"].as_u64().unwrap() > 0, "{f}");
    let text = ok_in(dir, &["replay", "t.iogtrace", "--directory", target]);
    assert!(
        text.contains(&format!(
            "major page faults (I/O through mappings): recorded {all}; replayed {}",
            all - outside
        )),
        "{text}"
    );
    let p: Value = serde_json::from_str(&ok_in(
        dir,
        &[
            "predict",
            "t.iogtrace",
            "--directory",
            target,
            "--repeat",
            "1",
            "--json",
        ],
    ))
    .unwrap();
    // The program makes no asynchronous I/O: the unseen I/O is the faults kept, and the
    // replayed ones' sleep (the data file's, more than none) is not in it.
    let kept = &p["replays"][0]["faults"]["kept_asleep_ns"];
    assert_eq!(&p["bound"]["unseen_io_ns"], kept, "{}", p["bound"]);
    let total = stats["faults"]["asleep_ns"].as_u64().unwrap();
    assert!(kept.as_u64().unwrap() < total, "{kept} of {total}");
    let warned = p["warnings"].as_array().unwrap().iter().any(|w| {
        w.as_str().unwrap().starts_with(&format!(
            "{all} major page faults when recorded (I/O through mappings): {} replayed",
            all - outside
        ))
    });
    assert!(warned, "{}", p["warnings"]);
}

#[test]
fn with_perfs_samples_the_faults_are_seen_as_with_the_ring() {
    // The calls as perf's samples (IOGAUGE_RECORD_SAMPLES=1): the fault rings are drained at
    // the perf rings' wake-ups, not every 2 ms.
    let d = tmp();
    let counted = match recorded(d.path(), "perf", &[("IOGAUGE_RECORD_SAMPLES", "1")]) {
        Ok(n) => n,
        Err(e) => {
            skip!("perf cannot record here: {e}");
            return;
        }
    };
    if counted < TOUCHED {
        skip!("the kernel counted {counted} major faults: the file's pages stayed in memory");
        return;
    }
    let v = trace_stats(d.path(), "t.iogtrace");
    let method = v["method"].as_str().unwrap();
    if !method.contains("as perf samples") || method.contains("major page faults: not seen") {
        skip!("not recorded through perf's samples with its major-fault event here: {method}");
        return;
    }
    let data = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"].as_str().unwrap().ends_with("/data.bin"))
        .cloned()
        .expect("data.bin in the trace");
    assert_eq!(data["major_faults"], TOUCHED, "{data}");
    assert!(
        v["faults"]["faults"].as_u64().unwrap() >= counted,
        "{}",
        v["faults"]
    );
}

#[test]
fn under_ptrace_the_faults_are_not_seen_and_the_trace_says_so() {
    let d = tmp();
    if let Err(e) = recorded(d.path(), "ptrace", &[]) {
        panic!("ptrace records everywhere: {e}");
    }
    let v = trace_stats(d.path(), "t.iogtrace");
    assert_eq!(v["faults"], Value::Null, "{}", v["faults"]);
    assert!(
        v["method"]
            .as_str()
            .unwrap()
            .contains("major page faults: not seen (ptrace)"),
        "{}",
        v["method"]
    );
    let text = ok_in(d.path(), &["trace", "stats", "t.iogtrace"]);
    assert!(!text.contains("major page faults (I/O"), "{text}");
}

/// A Python program that maps `data.bin` (out of the page cache first), asks for all of it
/// ahead (MADV_WILLNEED), waits, and touches every page: minor faults, the pages read ahead.
const AHEAD: &str = "import mmap, os, time
fd = os.open('data.bin', os.O_RDONLY)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
size = os.fstat(fd).st_size
m = mmap.mmap(fd, size, prot=mmap.PROT_READ)
m.madvise(mmap.MADV_WILLNEED)
time.sleep(0.3)
total = 0
for k in range(0, size, mmap.PAGESIZE):
    total += m[k]
print(total)
";

#[test]
fn willneed_advice_is_given_again_by_the_replay_on_its_copy_of_the_file() {
    // Until 2026-12-07 willneed was counted and not replayed: the program's pages came in by
    // the kernel's read-ahead, its touches were minor faults (not in the trace), and the
    // replay read none of the 4 MiB the program read.
    let d = tmp();
    let data: Vec<u8> = (0..4u32 << 20).map(|i| (i * 31 % 251) as u8).collect();
    std::fs::write(d.path().join("data.bin"), data).unwrap();
    std::fs::write(d.path().join("p.py"), AHEAD).unwrap();
    let python = predict::python();
    let o = run_in(
        d.path(),
        &["record", "-o", "t.iogtrace", "--", python, "p.py"],
    );
    if !o.status.success() {
        skip!("cannot record here: {}", stderr(&o));
        return;
    }
    let v = trace_stats(d.path(), "t.iogtrace");
    if v["method"]
        .as_str()
        .unwrap()
        .contains("major page faults: not seen")
    {
        skip!("mappings are not watched here: {}", v["method"]);
        return;
    }
    let data = super::record::file_ending(&v, "/data.bin");
    assert_eq!(data["advice"], serde_json::json!(["willneed"]), "{data}");
    // The range asked for is where the program reached: the replay lays it out.
    assert_eq!(data["extent"], 4 << 20, "{data}");
    // The replay, recorded: its thread gives the advice on its copy of the file.
    let target = tmp();
    let me = assert_cmd::cargo::cargo_bin!("iogauge");
    let o = run_in(
        d.path(),
        &[
            "record",
            "-o",
            "replay.iogtrace",
            "--",
            me.to_str().unwrap(),
            "replay",
            "t.iogtrace",
            "--output-format=json",
            "--directory",
            target.path().to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let r: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        (
            &r["faults"]["advice_followed"],
            &r["faults"]["willneed_given"]
        ),
        (&1.into(), &1.into()),
        "{}",
        r["faults"]
    );
    let outer = trace_stats(d.path(), "replay.iogtrace");
    let copy = super::record::file_ending(&outer, "-data.bin");
    assert!(
        copy["path"]
            .as_str()
            .unwrap()
            .starts_with(target.path().to_str().unwrap()),
        "{copy}"
    );
    assert_eq!(copy["advice"], serde_json::json!(["willneed"]), "{copy}");
}

/// A Python program that maps `data.bin` (out of the page cache first) with MAP_POPULATE: the
/// kernel reads the whole mapping in before mmap returns, and the program's touches then find
/// their pages in memory (no major fault).
const POPULATED: &str = "import mmap, os
fd = os.open('data.bin', os.O_RDONLY)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
size = os.fstat(fd).st_size
m = mmap.mmap(fd, size, flags=mmap.MAP_SHARED | mmap.MAP_POPULATE, prot=mmap.PROT_READ)
print(sum(m[k] for k in range(0, size, mmap.PAGESIZE)))
";

#[test]
fn a_populated_mapping_is_read_in_again_by_the_replay() {
    // Until 2026-12-08 no mmap was replayed: a MAP_POPULATE mapping's read (4 MiB here) stayed
    // in the replay as the recorded time of a call not made, whatever the storage.
    let d = tmp();
    let data: Vec<u8> = (0..4u32 << 20).map(|i| (i * 31 % 251) as u8).collect();
    std::fs::write(d.path().join("data.bin"), data).unwrap();
    std::fs::write(d.path().join("p.py"), POPULATED).unwrap();
    let python = predict::python();
    let t = d.path().join("t.iogtrace");
    let shown = super::trace_replay::record(d.path(), &t, &[python, "p.py"]);
    let file = |shown: &str, ending: &str| {
        shown
            .lines()
            .find_map(|l| {
                let (i, p) = l.strip_prefix("# file ")?.split_once(": ")?;
                p.contains(ending).then(|| (i.to_string(), p.to_string()))
            })
            .unwrap_or_else(|| panic!("no file ending {ending}: {shown}"))
    };
    let mmaps = |shown: &str, file: &str| -> Vec<String> {
        shown
            .lines()
            .filter(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                w.len() > 5 && w[2] == "mmap" && w[3] == file
            })
            .map(|l| {
                l.split_whitespace()
                    .skip(4)
                    .take(2)
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    };
    let (data, _) = file(&shown, "/data.bin (");
    assert_eq!(mmaps(&shown, &data), ["0 4194304"], "{shown}");
    // The replay, recorded: it maps its copy of the file whole, once.
    let target = tmp();
    let me = assert_cmd::cargo::cargo_bin!("iogauge");
    let outer = d.path().join("replay.iogtrace");
    let args = [
        me.to_str().unwrap(),
        "replay",
        t.to_str().unwrap(),
        "--directory",
        target.path().to_str().unwrap(),
    ];
    let replayed = super::trace_replay::record(d.path(), &outer, &args);
    let (copy, path) = file(&replayed, "-data.bin (");
    assert!(path.starts_with(target.path().to_str().unwrap()), "{path}");
    assert_eq!(mmaps(&replayed, &copy), ["0 4194304"], "{replayed}");
    let o = run_in(
        d.path(),
        &[
            "replay",
            t.to_str().unwrap(),
            "--output-format=json",
            "--directory",
            target.path().to_str().unwrap(),
        ],
    );
    let r: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let op = r["ops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["op"] == "mmap")
        .unwrap_or_else(|| panic!("no mmap replayed: {}", r["ops"]));
    assert_eq!(
        (&op["calls"], &op["errors"]),
        (&1.into(), &0.into()),
        "{op}"
    );
}
