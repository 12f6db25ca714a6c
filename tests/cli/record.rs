//! `iogauge record` checked against strace on programs no one here wrote (dd, GNU sort with
//! temporary spills, sqlite3 with synchronous=FULL, fio): for every file of the program's, the
//! reads, writes, fsyncs and fdatasyncs strace sees are in the trace, with the same bytes, and
//! the positioned calls (pread, pwrite…) at the same offsets. Each program runs twice, once
//! under each tool; the workloads are deterministic. And the command's own promises: bad
//! input refused with nothing created, the program's exit code passed on, an existing file
//! left alone.

use std::collections::BTreeMap;

use super::*;

/// What a file (or a group of files) saw.
#[derive(Debug, Default, PartialEq, Eq)]
struct Seen {
    reads: u64,
    writes: u64,
    read_bytes: u64,
    write_bytes: u64,
    fsyncs: u64,
    fdatasyncs: u64,
    /// Positioned calls: (call, offset, result), sorted.
    positioned: Vec<(String, u64, i64)>,
}

impl Seen {
    fn add(&mut self, call: &str, ret: i64, offset: Option<u64>) {
        let moved = ret.max(0) as u64;
        match call {
            "read" => {
                self.reads += 1;
                self.read_bytes += moved;
            }
            "write" => {
                self.writes += 1;
                self.write_bytes += moved;
            }
            "fsync" => self.fsyncs += 1,
            "fdatasync" => self.fdatasyncs += 1,
            _ => return,
        }
        if let Some(o) = offset {
            self.positioned.push((call.to_string(), o, ret));
        }
    }
}

const STRACED: &str =
    "read,write,pread64,pwrite64,readv,writev,preadv,pwritev,preadv2,pwritev2,fsync,fdatasync";

/// The calls strace sees, grouped by `group(path)` (None: not a file of the test's). None
/// (after SKIP) when strace cannot run.
fn by_strace(
    dir: &Path,
    cmd: &[&str],
    group: &dyn Fn(&str) -> Option<String>,
) -> Option<BTreeMap<String, Seen>> {
    let out = tmp();
    let prefix = out.path().join("s");
    let r = Command::new("strace")
        .current_dir(dir)
        .args([
            "-f",
            "-ff",
            "-y",
            "-qq",
            "-s",
            "0",
            "-e",
            &format!("trace={STRACED}"),
        ])
        .arg("-o")
        .arg(&prefix)
        .arg("--")
        .args(cmd)
        .output();
    match r {
        Err(e) => {
            skip!("strace cannot run ({e}); scripts/test-deps.sh installs it");
            return None;
        }
        Ok(o) => assert!(o.status.success(), "{cmd:?} under strace: {}", stderr(&o)),
    }
    let mut seen: BTreeMap<String, Seen> = BTreeMap::new();
    for f in entries(out.path()) {
        for line in std::fs::read_to_string(&f).unwrap().lines() {
            let Some((name, rest)) = line.split_once('(') else {
                continue;
            };
            let Some((_, rest)) = rest.split_once('<') else {
                continue;
            };
            // `read(3</p>, ""..., 4096)    = 4096`: strace pads before the result.
            let Some((call, ret)) = rest.rsplit_once(" = ") else {
                continue;
            };
            let call = call.trim_end();
            let call = call.strip_suffix(')').unwrap_or(call);
            let Some((path, args)) = call.split_once('>') else {
                continue;
            };
            let args = args.trim_start_matches(", ");
            let path = path.trim_end_matches(" (deleted)");
            let Some(g) = group(path) else { continue };
            let ret: i64 = ret.split_whitespace().next().unwrap().parse().unwrap();
            let ret = if ret < 0 { -1 } else { ret };
            let nums: Vec<&str> = args.rsplit(", ").collect();
            let (call, offset) = match name {
                "pread64" | "preadv" => ("read", nums[0].parse().ok()),
                "pwrite64" | "pwritev" => ("write", nums[0].parse().ok()),
                "preadv2" => (
                    "read",
                    nums[1]
                        .parse::<i64>()
                        .ok()
                        .filter(|o| *o >= 0)
                        .map(|o| o as u64),
                ),
                "pwritev2" => (
                    "write",
                    nums[1]
                        .parse::<i64>()
                        .ok()
                        .filter(|o| *o >= 0)
                        .map(|o| o as u64),
                ),
                "read" | "readv" => ("read", None),
                "write" | "writev" => ("write", None),
                other => (other, None),
            };
            seen.entry(g).or_default().add(call, ret, offset);
        }
    }
    Some(seen)
}

/// The same, from `iogauge record`'s trace (`trace show`): and the trace's show output.
fn by_record(
    dir: &Path,
    cmd: &[&str],
    group: &dyn Fn(&str) -> Option<String>,
    (extra, env): (&[&str], &[(&str, &str)]),
) -> (BTreeMap<String, Seen>, String) {
    let out = tmp();
    let trace = out.path().join("t.iogtrace");
    let mut args = vec!["record", "-o", trace.to_str().unwrap()];
    args.extend_from_slice(extra);
    args.push("--");
    args.extend_from_slice(cmd);
    let o = run_in_env(dir, &args, env);
    assert_eq!(o.status.code(), Some(0), "{env:?} {args:?}: {}", stderr(&o));
    assert!(stderr(&o).contains("iogauge: recorded "), "{}", stderr(&o));
    let shown = ok_in(dir, &["trace", "show", trace.to_str().unwrap()]);
    let mut files: BTreeMap<u64, String> = BTreeMap::new();
    for l in shown.lines() {
        if let Some(rest) = l.strip_prefix("# file ") {
            let (i, p) = rest.split_once(": ").unwrap();
            let p = p.rsplit_once(" (").unwrap().0;
            files.insert(i.parse().unwrap(), p.to_string());
        }
    }
    let mut seen: BTreeMap<String, Seen> = BTreeMap::new();
    for l in shown.lines().filter(|l| !l.starts_with('#')) {
        let w: Vec<&str> = l.split_whitespace().collect();
        let (call, file, offset, ret, flags) = (w[2], w[3], w[4], w[6], w[8]);
        let Ok(file) = file.parse::<u64>() else {
            continue;
        };
        let Some(g) = group(&files[&file]) else {
            continue;
        };
        let ret: i64 = ret.parse().unwrap();
        let ret = if ret < 0 { -1 } else { ret };
        let offset = flags
            .contains("positional")
            .then(|| offset.parse().unwrap());
        seen.entry(g).or_default().add(call, ret, offset);
    }
    (seen, shown)
}

/// Records `cmd` both ways in `dir` and asserts the files under it saw the same calls;
/// `made` are the files the program makes, removed before each run so both start alike.
fn same_as_strace(
    dir: &Path,
    cmd: &[&str],
    group: &dyn Fn(&str) -> Option<String>,
    extra: (&[&str], &[(&str, &str)]),
    made: &[&str],
) -> Option<String> {
    let reset = || {
        for m in made {
            let _ = std::fs::remove_file(dir.join(m));
        }
    };
    reset();
    let mut want = by_strace(dir, cmd, group)?;
    reset();
    let (mut got, shown) = by_record(dir, cmd, group, extra);
    for s in want.values_mut().chain(got.values_mut()) {
        s.positioned.sort();
    }
    assert!(!want.is_empty(), "strace saw no calls on the test's files");
    assert_eq!(
        got, want,
        "{cmd:?}: the trace (left) against strace (right)"
    );
    Some(shown)
}

fn under(dir: &Path) -> impl Fn(&str) -> Option<String> + '_ {
    move |p: &str| p.strip_prefix(dir.to_str().unwrap()).map(str::to_string)
}

#[test]
fn dd_with_direct_io_is_recorded_call_for_call_with_offsets() {
    let d = tmp();
    std::fs::write(d.path().join("in"), vec![7u8; 4 << 20]).unwrap();
    let cmd = [
        "dd",
        "if=in",
        "of=out",
        "bs=64k",
        "oflag=direct",
        "conv=fsync",
        "status=none",
    ];
    let Some(shown) = same_as_strace(d.path(), &cmd, &under(d.path()), (&[], &[]), &["out"]) else {
        return;
    };
    // dd's writes are plain write(2)s: the trace follows the position, 64 KiB a step.
    let writes: Vec<Vec<&str>> = shown
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|w| w.len() > 8 && w[2] == "write" && w[8].contains("direct"))
        .collect();
    assert_eq!(writes.len(), 64);
    for (i, w) in writes.iter().enumerate() {
        assert_eq!(w[4], (i * 65536).to_string(), "write {i}");
        assert_eq!(w[6], "65536");
    }
}

/// dd copying `in` (1 MiB, made here) to `out` in 16 KiB calls, then fdatasync.
const DD_SYNCED: [&str; 6] = [
    "dd",
    "if=in",
    "of=out",
    "bs=16k",
    "conv=fdatasync",
    "status=none",
];

#[test]
fn the_ptrace_fallback_records_the_same_calls() {
    let d = tmp();
    std::fs::write(d.path().join("in"), vec![1u8; 1 << 20]).unwrap();
    same_as_strace(
        d.path(),
        &DD_SYNCED,
        &under(d.path()),
        (&["--method=ptrace"], &[]),
        &["out"],
    );
}

#[test]
fn perfs_samples_record_the_same_calls_as_the_ring() {
    // Where the kernel refuses the eBPF ring the calls are read from, they are perf's
    // samples of the same tracepoints (IOGAUGE_RECORD_SAMPLES=1 takes that path here): the
    // same calls, and the trace says which way they came.
    let d = tmp();
    std::fs::write(d.path().join("in"), vec![1u8; 1 << 20]).unwrap();
    let mut how = Vec::new();
    for env in [&[][..], &[("IOGAUGE_RECORD_SAMPLES", "1")][..]] {
        let same = same_as_strace(d.path(), &DD_SYNCED, &under(d.path()), (&[], env), &["out"]);
        if same.is_none() {
            return;
        }
        let trace = d.path().join("t.iogtrace");
        let o = bin()
            .current_dir(d.path())
            .args([
                "record",
                "--overwrite-output",
                "-o",
                trace.to_str().unwrap(),
                "--",
            ])
            .args(["dd", "if=in", "of=/dev/null", "status=none"])
            .envs(env.iter().copied())
            .output()
            .expect("iogauge runs");
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let stats = ok_in(d.path(), &["trace", "stats", trace.to_str().unwrap()]);
        how.push(
            stats
                .lines()
                .find(|l| l.starts_with("recorded: "))
                .unwrap()
                .to_string(),
        );
    }
    if !how[0].contains("ring buffer") {
        skip!("the calls were not read into an eBPF ring here: {}", how[0]);
        return;
    }
    assert!(!how[0].contains("perf samples"), "{}", how[0]);
    assert!(how[1].contains("the calls as perf samples"), "{}", how[1]);
}

#[test]
fn tasks_past_the_rings_map_are_counted_not_silently_missed() {
    // The eBPF programs follow the program's live tasks in a map of 65,536;
    // IOGAUGE_RECORD_TASKS=1 makes it hold only the first task (the shell), so the two dd it
    // starts are not followed: they still run and write, the trace holds none of their calls,
    // and it says how many tasks it missed.
    let d = tmp();
    let o = bin()
        .current_dir(d.path())
        .env("IOGAUGE_RECORD_TASKS", "1")
        .args(["record", "-o", "t.iogtrace", "--", "sh", "-c"])
        .arg(
            "dd if=/dev/zero of=a bs=4k count=4 status=none; \
             dd if=/dev/zero of=b bs=4k count=4 status=none; true",
        )
        .output()
        .expect("iogauge runs");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for f in ["a", "b"] {
        assert_eq!(std::fs::metadata(d.path().join(f)).unwrap().len(), 16384);
    }
    let v = trace_stats(d.path(), "t.iogtrace");
    if !v["method"].as_str().unwrap().contains("ring buffer") {
        skip!(
            "the calls were not read into an eBPF ring here: {}",
            v["method"]
        );
        return;
    }
    assert_eq!(v["untracked_tasks"], 2, "{v}");
    assert!(
        stderr(&o).contains("2 tasks the program started"),
        "{}",
        stderr(&o)
    );
    let files = v["files"].as_array().unwrap();
    assert!(
        !files
            .iter()
            .any(|f| f["writes"]["calls"].as_u64() > Some(0)),
        "the shell writes nothing, the tasks that did were not followed: {v}"
    );
    let text = ok_in(d.path(), &["trace", "stats", "t.iogtrace"]);
    assert!(text.contains("INCOMPLETE"), "{text}");
}

#[test]
fn two_recordings_at_once_each_hold_their_own_programs_calls() {
    // Each recording loads its own programs and maps: two at once must not see each other's
    // program, lose calls to each other, or trip over each other's cleanup. Each dd writes a
    // different count of blocks to its own file, slowly enough (a sync each) to overlap.
    let d = tmp();
    let record = |name: &str, count: u32| {
        bin()
            .current_dir(d.path())
            .args(["record", "-o", &format!("{name}.iogtrace"), "--", "dd"])
            .args(["if=/dev/zero", &format!("of={name}"), "bs=4k"])
            .args([&format!("count={count}"), "oflag=dsync", "status=none"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("iogauge runs")
    };
    let runs = [("a", 300u32), ("b", 170)].map(|(name, count)| (name, count, record(name, count)));
    for (name, count, child) in runs {
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{name}: {}", stderr(&o));
        let v = trace_stats(d.path(), &format!("{name}.iogtrace"));
        let written: Vec<(&str, u64, u64)> = v["files"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["writes"]["calls"].as_u64() > Some(0))
            .map(|f| {
                (
                    f["path"].as_str().unwrap(),
                    f["writes"]["calls"].as_u64().unwrap(),
                    f["writes"]["bytes"].as_u64().unwrap(),
                )
            })
            .collect();
        let count = u64::from(count);
        assert!(
            matches!(written[..], [(path, calls, bytes)]
                if path.ends_with(&format!("/{name}")) && calls == count && bytes == count * 4096),
            "{name}: {written:?}"
        );
        assert_eq!(v["lost"], 0, "{name}: {v}");
        assert_eq!(v["untracked_tasks"], 0, "{name}: {v}");
    }
}

#[test]
fn gnu_sort_with_temporary_spills_is_recorded_whole() {
    let d = tmp();
    std::fs::create_dir(d.path().join("spill")).unwrap();
    // 8 MiB of lines in a scrambled order, sorted with a 1 MiB buffer: sort spills runs to
    // temporary files (random names, removed at its end) and merges them.
    let mut text = String::with_capacity(9 << 20);
    let mut x: u64 = 12345;
    while text.len() < 8 << 20 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        text += &format!("{:016x} some payload to make the line longer\n", x >> 8);
    }
    std::fs::write(d.path().join("input"), text).unwrap();
    let spill = d.path().join("spill");
    let group = |p: &str| {
        let rel = p.strip_prefix(d.path().to_str().unwrap())?;
        // The spill files' names differ run to run: one group for all.
        Some(if p.starts_with(spill.to_str().unwrap()) {
            "/spill/*".to_string()
        } else {
            rel.to_string()
        })
    };
    let cmd = [
        "sort",
        "-S",
        "1M",
        "--parallel=1",
        "-T",
        "spill",
        "-o",
        "sorted",
        "input",
    ];
    let Some(shown) = same_as_strace(d.path(), &cmd, &group, (&[], &[]), &["sorted"]) else {
        return;
    };
    assert!(
        shown.contains("/spill/"),
        "sort spilled nothing:\n{}",
        &shown[shown.len().saturating_sub(2000)..]
    );
    assert!(
        shown.lines().any(|l| l.contains(" unlink ")),
        "the spills' removal is in the trace"
    );
}

/// Writes `dir/load.sql`: synchronous=FULL, a table, and `rows` inserts of growing rows, each
/// its own transaction. False (after SKIP) when sqlite3 is not installed.
pub(super) fn sqlite_load(dir: &Path, rows: usize, width: usize) -> bool {
    if Command::new("sqlite3").arg("-version").output().is_err() {
        skip!("sqlite3 is not installed; scripts/test-deps.sh installs it");
        return false;
    }
    let mut sql = String::from("PRAGMA synchronous=FULL;\nCREATE TABLE t(a INTEGER, b TEXT);\n");
    for i in 0..rows {
        sql += &format!("INSERT INTO t VALUES({i}, '{}');\n", "x".repeat(width + i));
    }
    std::fs::write(dir.join("load.sql"), sql).unwrap();
    true
}

#[test]
fn sqlite_with_synchronous_full_is_recorded_with_every_sync() {
    let d = tmp();
    if !sqlite_load(d.path(), 150, 100) {
        return;
    }
    let cmd = ["sqlite3", "db.sqlite", ".read load.sql"];
    let group = |p: &str| {
        p.strip_prefix(d.path().to_str().unwrap())
            .filter(|r| r.starts_with("/db"))
            .map(str::to_string)
    };
    let made = ["db.sqlite", "db.sqlite-journal"];
    let Some(_) = same_as_strace(d.path(), &cmd, &group, (&[], &[]), &made) else {
        return;
    };
    std::fs::remove_file(d.path().join("db.sqlite")).unwrap();
    let (seen, _) = by_record(d.path(), &cmd, &group, (&[], &[]));
    let syncs: u64 = seen.values().map(|s| s.fsyncs + s.fdatasyncs).sum();
    assert!(
        syncs >= 150,
        "each autocommitted insert syncs: {syncs} syncs"
    );
}

#[test]
fn fio_as_the_recorded_program_is_followed_into_its_job_process() {
    if Command::new("fio").arg("--version").output().is_err() {
        skip!("fio is not installed; scripts/test-deps.sh installs it");
        return;
    }
    let d = tmp();
    let cmd = [
        "fio",
        "--name=rec",
        "--filename=f",
        "--rw=randrw",
        "--bs=4k",
        "--size=2m",
        "--ioengine=psync",
        "--randrepeat=1",
        "--fsync=16",
        "--output=/dev/null",
    ];
    let group = |p: &str| {
        p.strip_prefix(d.path().to_str().unwrap())
            .filter(|r| *r == "/f")
            .map(str::to_string)
    };
    let Some(shown) = same_as_strace(d.path(), &cmd, &group, (&[], &[]), &["f"]) else {
        return;
    };
    let threads: std::collections::HashSet<&str> = shown
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split_whitespace().nth(1).unwrap())
        .collect();
    assert!(
        threads.len() >= 2,
        "fio's job runs in a process of its own: {threads:?}"
    );
}

#[test]
fn bad_input_is_refused_and_nothing_is_created() {
    let d = tmp();
    let trace = d.path().join("t.iogtrace");
    let t = trace.to_str().unwrap();
    let o = run_in(d.path(), &["record", "-o", t, "--", "no-such-program-here"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no-such-program-here: no such program"),
        "{}",
        stderr(&o)
    );
    let o = run_in(
        d.path(),
        &["record", "-o", t, "--method=ebpf", "--", "true"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--method=ebpf"), "{}", stderr(&o));
    let o = run_in(d.path(), &["record", "-o", t]);
    assert_eq!(o.status.code(), Some(2));
    let said = stderr(&o);
    assert_eq!(said.lines().count(), 1, "{said}");
    assert!(
        said.contains("<COMMAND> is required; 'iogauge record --help'"),
        "{said}"
    );
    assert!(entries(d.path()).is_empty(), "{:?}", entries(d.path()));
    // A file that is there is not iogauge's to replace.
    std::fs::write(&trace, "precious").unwrap();
    let o = run_in(d.path(), &["record", "-o", t, "--", "true"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&trace).unwrap(), "precious");
    // Not a trace: said, exit 2.
    let o = run_in(d.path(), &["trace", "stats", t]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("not an iogauge trace"),
        "{}",
        stderr(&o)
    );
}

/// The file of `trace stats --json`'s `v` whose path ends with `end`.
pub(super) fn file_ending<'a>(v: &'a Value, end: &str) -> &'a Value {
    v["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"].as_str().unwrap().ends_with(end))
        .unwrap_or_else(|| panic!("no file ending {end} in the trace"))
}

/// `iogauge record -o TRACE -- CMD…` run in `dir`.
fn recorded(dir: &Path, trace: &Path, cmd: &[&str]) -> Output {
    let mut args = vec!["record", "-o", trace.to_str().unwrap(), "--"];
    args.extend_from_slice(cmd);
    run_in(dir, &args)
}

#[test]
fn the_programs_exit_code_is_passed_on_and_its_trace_kept() {
    let d = tmp();
    let trace = d.path().join("t.iogtrace");
    let o = recorded(d.path(), &trace, &["sh", "-c", "echo hi > x; exit 3"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let v = trace_stats(d.path(), trace.to_str().unwrap());
    assert_eq!(v["exit_code"], 3);
    let x = file_ending(&v, "/x");
    assert_eq!(x["writes"]["bytes"], 3);
    assert_eq!(x["size_at_open"], Value::Null, "created by the program");
    assert!(
        v["overhead_pct"].as_f64().is_some(),
        "the capture's cost is measured: {v}"
    );
}

/// A trace that does not fit where --output points: what was recorded is said, and why the
/// trace is not there, with the room it needed; the writer's partial file is gone; exit 1,
/// though the program succeeded (its trace, what was asked for, is lost).
#[test]
fn a_trace_that_does_not_fit_its_file_system_says_what_was_recorded_and_what_it_needed() {
    let Some(fs) = SmallFs::mount("4k") else {
        return;
    };
    let d = tmp();
    let trace = fs.path.join("t.iogtrace");
    let script = "for i in $(seq 100); do cat /etc/hostname > /dev/null; done";
    let o = recorded(d.path(), &trace, &["sh", "-c", script]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("iogauge: recorded "), "{err}");
    assert!(
        err.contains("the trace was NOT written")
            && err.contains("No space left on device")
            && err.contains("the trace needs ")
            && err.contains(" free there"),
        "{err}"
    );
    let left: Vec<_> = std::fs::read_dir(&fs.path).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}

/// A program whose first process ends and leaves a child running (`cmd &` in a shell): the
/// recording follows the child, and Ctrl-C ends it — the child is sent SIGTERM too, not
/// waited for — and the trace is written. Until 2026-12-03 only the first process, long gone,
/// was signalled, and `record` waited for the child (`sleep 1000` here) until a second Ctrl-C.
#[test]
fn ctrl_c_ends_a_recording_whose_program_left_a_child_running() {
    let d = tmp();
    let trace = d.path().join("t.iogtrace");
    let mut child = bin()
        .current_dir(d.path())
        .args([
            "record",
            "-o",
            trace.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            "sleep 1000 > /dev/null 2>&1 & echo $!; echo hi > x",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let sleeper: i32 = line.trim().parse().expect("the child's pid");
    let alive = || {
        std::fs::read_to_string(format!("/proc/{sleeper}/stat")).is_ok_and(|st| {
            st.rsplit(')')
                .next()
                .is_some_and(|rest| !rest.trim_start().starts_with('Z'))
        })
    };
    assert!(alive(), "the child runs");
    // The shell has ended by now; the recording goes on for its child.
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(child.try_wait().unwrap(), None, "record follows the child");
    interrupt(&child);
    let started = Instant::now();
    let o = child.wait_with_output().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "record waited {:?} after Ctrl-C",
        started.elapsed()
    );
    for _ in 0..100 {
        if !alive() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive(), "the child was left running");
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "the shell's own exit: {e}");
    assert!(e.contains("asked to stop"), "{e}");
    let v = trace_stats(d.path(), trace.to_str().unwrap());
    let x = file_ending(&v, "/x");
    assert_eq!(x["writes"]["bytes"], 3);
}

/// The recorded program gets the signals a shell gives it, not iogauge's: `yes` writing into a
/// pipe whose reader has gone dies of SIGPIPE (141 in bash's PIPESTATUS), as it does
/// unrecorded — until 2026-12-03 it inherited the SIGPIPE that Rust's runtime ignores, and
/// ended in EPIPE with exit code 1 instead.
#[test]
fn the_recorded_program_dies_of_sigpipe_as_it_does_unrecorded() {
    let d = tmp();
    let trace = d.path().join("t.iogtrace");
    let script =
        "yes | head -n 1 > /dev/null; echo ${PIPESTATUS[0]}; grep SigIgn /proc/self/status";
    let plain = std::process::Command::new("bash")
        .args(["-c", script])
        .output()
        .unwrap();
    let o = recorded(d.path(), &trace, &["bash", "-c", script]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (out, plain) = (
        stdout(&o),
        String::from_utf8_lossy(&plain.stdout).to_string(),
    );
    let first = |s: &str| s.lines().next().unwrap_or("").to_string();
    assert_eq!(first(&out), "141", "recorded: {out}");
    assert_eq!(first(&out), first(&plain), "recorded: {out} plain: {plain}");
    // SIGPIPE (13) is not among the signals the program ignores.
    let ignored = out
        .lines()
        .find_map(|l| l.strip_prefix("SigIgn:"))
        .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
        .expect("SigIgn");
    assert_eq!(ignored & (1 << 12), 0, "{out}");
}

/// iogauge recorded by iogauge: the inner record's program is the outer tracer's (it follows
/// forks) before it can be the inner's, and the inner one says so — naming its tracer — and
/// writes nothing, where it said "did not stop for the tracer (status 0x7f00)" before.
#[test]
fn record_under_a_tracer_that_takes_its_children_says_so() {
    let d = tmp();
    let (outer, inner) = (
        d.path().join("outer.iogtrace"),
        d.path().join("inner.iogtrace"),
    );
    let me = assert_cmd::cargo::cargo_bin!("iogauge")
        .to_str()
        .unwrap()
        .to_string();
    let o = recorded(
        d.path(),
        &outer,
        &[&me, "record", "-o", inner.to_str().unwrap(), "--", "true"],
    );
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "the inner record's exit: {e}");
    assert!(e.contains("iogauge is itself traced, by process "), "{e}");
    assert!(!inner.exists());
    assert!(outer.exists(), "the outer recording is written: {e}");
}

/// The files under `dir` a trace names, with what it says of each (path made relative).
fn files_under(dir: &Path, trace: &Path) -> (Vec<Value>, String) {
    let v = trace_stats(dir, trace.to_str().unwrap());
    let root = dir.to_str().unwrap();
    let mut files: Vec<Value> = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| {
            let p = f["path"].as_str()?.strip_prefix(root)?;
            Some(serde_json::json!({
                "path": p, "kind": f["kind"], "size_at_open": f["size_at_open"],
                "extent": f["extent"], "removed": f["removed"], "opens": f["opens"],
                "reads": [f["reads"]["calls"], f["reads"]["bytes"]],
                "writes": [f["writes"]["calls"], f["writes"]["bytes"]],
            }))
        })
        .collect();
    files.sort_by_key(|f| f["path"].as_str().unwrap().to_string());
    (files, v["method"].as_str().unwrap().to_string())
}

/// `iogauge record --method=METHOD -o TRACE -- CMD…` run in `dir`.
fn recorded_by(dir: &Path, method: &str, trace: &Path, cmd: &[&str]) -> Output {
    let method = format!("--method={method}");
    let mut args = vec!["record", "-o", trace.to_str().unwrap(), &method, "--"];
    args.extend_from_slice(cmd);
    run_in(dir, &args)
}

#[test]
fn paths_read_in_the_kernel_are_those_read_at_ptrace_stops() {
    // Relative paths after a chdir, a rename, a directory removed through descriptors of
    // its own (rm -r: unlinkat relative to an open directory), an existing file appended to:
    // the paths the eBPF probes read, made absolute when decoding, and what each open found,
    // must be what the ptrace stops read from /proc while the program waited.
    let d = tmp();
    let script = "mkdir sub && cd sub && dd if=/dev/zero of=a bs=4k count=2 status=none \
                  && dd if=a of=b bs=4k status=none && mv b c && cat c > /dev/null \
                  && cd .. && echo more >> kept && rm -r sub";
    let mut got = Vec::new();
    for method in ["perf", "ptrace"] {
        std::fs::write(d.path().join("kept"), vec![b'k'; 1000]).unwrap();
        let trace = d.path().join(format!("{method}.iogtrace"));
        let o = recorded_by(d.path(), method, &trace, &["sh", "-c", script]);
        if method == "perf" && !o.status.success() {
            skip!("perf cannot record here: {}", stderr(&o));
            return;
        }
        assert_eq!(o.status.code(), Some(0), "{method}: {}", stderr(&o));
        got.push(files_under(d.path(), &trace));
    }
    let (kernel, method) = &got[0];
    if let Some(why) = method.split("eBPF not used: ").nth(1) {
        skip!("paths were read at ptrace stops here, eBPF not used: {why}");
        return;
    }
    assert!(method.contains("eBPF"), "{method}");
    assert_eq!(kernel, &got[1].0, "eBPF (left) against ptrace (right)");
    let by = |p: &str| kernel.iter().find(|f| f["path"] == p).cloned();
    let a = by("/sub/a").expect("sub/a, opened relative to the directory cd made");
    assert_eq!(
        a["size_at_open"],
        Value::Null,
        "created by the program: {a}"
    );
    assert_eq!(a["writes"], serde_json::json!([2, 8192]));
    assert_eq!(
        a["removed"], true,
        "rm -r removed it through its directory: {a}"
    );
    let b = by("/sub/b").expect("sub/b");
    assert_eq!(b["removed"], true, "renamed to c, which rm -r removed: {b}");
    let kept = by("/kept").expect("kept");
    assert_eq!(kept["size_at_open"], 1000, "existing, appended to: {kept}");
    assert_eq!(kept["removed"], false);
}

/// Opens `target` through a path in a page of a mapped file the program has not touched: the
/// page is not in its page tables when the call enters, so the entry's copy of the path
/// (which cannot fault it in) comes back empty; the kernel's own copy faults it in.
const OPEN_FROM_AN_UNTOUCHED_PAGE: &str = r#"
import ctypes, mmap, os, sys
d = sys.argv[1]
# Past the pages the kernel maps around a faulting one (fault_around_bytes, 64 KiB).
page = 1 << 20
with open(os.path.join(d, "path"), "wb") as f:
    f.write(os.path.join(d, "target").encode().ljust(page, b"\0"))
    f.write(os.path.join(d, "missing").encode() + b"\0")
fd = os.open(os.path.join(d, "path"), os.O_RDONLY)
# A private mapping (writable, so that ctypes takes its address; never written).
mm = mmap.mmap(fd, 0, access=mmap.ACCESS_COPY)
addr = ctypes.addressof(ctypes.c_char.from_buffer(mm))
libc = ctypes.CDLL(None, use_errno=True)
t = libc.open(ctypes.c_void_p(addr), os.O_RDONLY)
assert t >= 0, ctypes.get_errno()
assert os.read(t, 100) == b"target's bytes"
# A look, its path 1 MiB further on (untouched too): nothing there.
assert libc.open(ctypes.c_void_p(addr + page), os.O_RDONLY) == -1
assert ctypes.get_errno() == 2
"#;

/// A successful open whose path was in a page the program had not touched yet is recorded
/// under its path, read again at the call's exit (not under the working directory, which an
/// empty relative path would be made into), by every method; and so is a look (an open that
/// found nothing there) whose path was in such a page.
#[test]
fn an_opens_path_in_a_page_not_yet_in_memory_is_recorded_as_opened() {
    let d = tmp();
    std::fs::write(d.path().join("target"), "target's bytes").unwrap();
    let script = d.path().join("open.py");
    std::fs::write(&script, OPEN_FROM_AN_UNTOUCHED_PAGE).unwrap();
    for method in ["perf", "ptrace"] {
        let trace = d.path().join(format!("{method}.iogtrace"));
        let dir = d.path().to_str().unwrap();
        let o = recorded_by(
            d.path(),
            method,
            &trace,
            &["python3", script.to_str().unwrap(), dir],
        );
        if method == "perf" && !o.status.success() {
            skip!("perf cannot record here: {}", stderr(&o));
            continue;
        }
        assert_eq!(o.status.code(), Some(0), "{method}: {}", stderr(&o));
        let (files, how) = files_under(d.path(), &trace);
        let paths: Vec<&str> = files.iter().filter_map(|f| f["path"].as_str()).collect();
        assert!(
            !paths.contains(&""),
            "{method} ({how}): the directory as a file: {files:?}"
        );
        let target = files
            .iter()
            .find(|f| f["path"] == "/target")
            .unwrap_or_else(|| panic!("{method} ({how}): no /target in {files:?}"));
        assert_eq!(
            target["reads"],
            serde_json::json!([1, 14]),
            "{method}: {target}"
        );
        assert_eq!(target["size_at_open"], 14, "{method}: {target}");
        let v = trace_stats(d.path(), trace.to_str().unwrap());
        let missing = format!("{dir}/missing");
        assert!(
            v.to_string().contains(&missing),
            "{method} ({how}): the look for {missing} is not in the trace: {v}"
        );
    }
}

#[test]
fn the_trace_page_draws_each_files_access_pattern() {
    let d = tmp();
    std::fs::write(d.path().join("in"), vec![3u8; 1 << 20]).unwrap();
    let o = run_in(
        d.path(),
        &[
            "record",
            "-o",
            "t.iogtrace",
            "--",
            "dd",
            "if=in",
            "of=out",
            "bs=64k",
            "conv=fsync",
            "status=none",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = ok_in(
        d.path(),
        &["trace", "stats", "t.iogtrace", "--html", "t.html"],
    );
    let page = std::fs::read_to_string(d.path().join("t.html")).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"));
    // dd's two files drawn (its input the first: as many bytes, and read before written),
    // 16 reads of 64 KiB and the one that found the end, 16 writes, as marks; the fsync as a
    // line; the figures as printed.
    let svgs: Vec<&str> = page.split("<svg").skip(1).collect();
    assert!(svgs.len() >= 2, "{page}");
    let of = |name: &str| {
        svgs.iter()
            .find(|s| s.contains(&format!("access pattern of {}/{name}", d.path().display())))
            .unwrap_or_else(|| panic!("{name} drawn"))
    };
    assert_eq!(of("in").matches("fill=\"#1f77b4\"").count(), 17);
    assert_eq!(of("out").matches("fill=\"#d62728\"").count(), 16);
    assert_eq!(of("out").matches("stroke=\"#7f7f7f\"").count(), 1);
    let first_line = text.lines().next().unwrap();
    assert!(page.contains(first_line), "the page holds the figures");
    // The page is an output like any other: not over a file iogauge did not write.
    let o = run_in(d.path(), &["trace", "stats", "t.iogtrace", "--html", "in"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(std::fs::read(d.path().join("in")).unwrap().len(), 1 << 20);
    // Its own page, unchanged since, it replaces; one somebody edited needs the user's word.
    ok_in(
        d.path(),
        &["trace", "stats", "t.iogtrace", "--html", "t.html"],
    );
    std::fs::write(d.path().join("t.html"), "my notes").unwrap();
    let o = run_in(
        d.path(),
        &["trace", "stats", "t.iogtrace", "--html", "t.html"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(d.path().join("t.html")).unwrap(),
        "my notes"
    );
    ok_in(
        d.path(),
        &[
            "trace",
            "stats",
            "t.iogtrace",
            "--html",
            "t.html",
            "--overwrite-output",
        ],
    );
}

#[test]
fn a_recording_past_its_memory_cap_keeps_what_came_first_and_says_so() {
    // The cap (a quarter of the memory available, or IOGAUGE_RECORD_MAX_CALLS) keeps a long
    // program from exhausting memory: the calls after it are left out and counted, the
    // program runs to its end, and the trace says INCOMPLETE. With perf and with ptrace.
    for method in ["auto", "ptrace"] {
        capped_recording(method);
    }
}

fn capped_recording(method: &str) {
    let d = tmp();
    let o = bin()
        .current_dir(d.path())
        .env("IOGAUGE_RECORD_MAX_CALLS", "300")
        .args([
            "record",
            "-o",
            "t.iogtrace",
            "--method",
            method,
            "--",
            "dd",
            "if=/dev/zero",
            "of=out",
            "bs=4k",
            "count=3000",
            "status=none",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("memory cap"), "{}", stderr(&o));
    assert_eq!(
        std::fs::metadata(d.path().join("out")).unwrap().len(),
        3000 * 4096,
        "the program ran to its end"
    );
    let v = trace_stats(d.path(), "t.iogtrace");
    assert!(v["capped"].as_u64().unwrap() > 0, "{method}: {v}");
    let out = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"].as_str().unwrap().ends_with("/out"))
        .expect("out, opened before the cap");
    let writes = out["writes"]["calls"].as_u64().unwrap();
    assert!(writes > 0 && writes < 300, "{method}: {out}");
    let text = ok_in(d.path(), &["trace", "stats", "t.iogtrace"]);
    assert!(text.contains("INCOMPLETE"), "{text}");
}

#[test]
fn the_calls_it_does_not_watch_are_counted_and_each_task_knows_its_parent() {
    // perl makes 100,000 getppid()s (not watched, but each passes the tracepoints: a cost the
    // trace must count); sh runs two cats one after the other, each its child.
    let d = tmp();
    std::fs::write(d.path().join("in"), b"some bytes\n").unwrap();
    let trace = d.path().join("t.iogtrace");
    let t = trace.to_str().unwrap();
    let o = run_in(
        d.path(),
        &[
            "record",
            "-o",
            t,
            "--",
            "sh",
            "-c",
            "perl -e 'getppid() for 1..100000'; cat in > a; cat a > b",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v = trace_stats(d.path(), t);
    // The eBPF ring's programs and perf's tracepoints both count every call; ptrace stops
    // only at the watched ones.
    if v["method"].as_str().unwrap().starts_with("ptrace") {
        skip!("recorded with ptrace (no counter of the calls it does not watch)");
        return;
    }
    let unwatched = v["unwatched_calls"].as_u64().unwrap();
    assert!(
        (100_000..110_000).contains(&unwatched),
        "perl's getppid()s and the programs' start-up: {unwatched}"
    );
    // Every thread but the shell's has the shell (or, for perl's, its process) above it.
    let threads = v["threads"].as_array().unwrap();
    let root = threads
        .iter()
        .find(|t| t["parent"].is_null())
        .expect("the shell");
    let children: Vec<&Value> = threads.iter().filter(|t| !t["parent"].is_null()).collect();
    assert!(children.len() >= 3, "perl and two cats: {threads:?}");
    assert!(
        children.iter().all(|t| t["parent"] == root["tid"]),
        "{threads:?}"
    );
}
