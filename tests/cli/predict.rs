//! `iogauge predict`: a recorded real program (dd) and a fio job file predicted on another
//! directory — the replays' count, the figures' exact call counts, the bound made of its
//! parts, nothing left behind and the recorded files untouched — and its bad input.

use super::*;

fn predicted(dir: &Path, args: &[&str]) -> Value {
    let o = run_in(dir, args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("{e}: {}", stdout(&o)))
}

/// Whether the temp dirs (`tmp()`) are on tmpfs, where no read waits for a device.
fn tmp_is_tmpfs() -> bool {
    std::fs::read_to_string("/proc/self/mounts")
        .unwrap_or_default()
        .lines()
        .any(|l| l.split_whitespace().nth(1) == Some("/tmp") && l.contains(" tmpfs "))
}

/// One replay's prediction of `trace` (in `w`) for `target`, as JSON.
fn predicted_once(w: &Path, trace: &str, target: &Path) -> Value {
    let t = target.to_str().unwrap();
    predicted(
        w,
        &[
            "predict",
            trace,
            "--directory",
            t,
            "--repeat",
            "1",
            "--json",
        ],
    )
}

/// The prediction's warning that says `what`, if any.
fn warning(p: &Value, what: &str) -> Option<String> {
    p["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|x| x.as_str())
        .find(|x| x.contains(what))
        .map(str::to_string)
}

/// Whether `trace` (in `w`) was recorded under ptrace, which does not see the scheduler.
fn under_ptrace(w: &Path, trace: &str) -> bool {
    trace_stats(w, trace)["method"]
        .as_str()
        .unwrap()
        .starts_with("ptrace")
}

/// Writes `data` to `path` and waits until it is on the device, so a test's program finds
/// it written back (no dirty pages to flush first) when it reads it.
fn on_the_device(path: &Path, data: impl AsRef<[u8]>) {
    std::fs::write(path, data).unwrap();
    std::fs::File::open(path).unwrap().sync_all().unwrap();
}

/// `script` recorded by `sh -c` in a new directory under /tmp, beside a file `in` of `blocks`
/// 4 KiB blocks on the device (so its direct reads wait for the device), and its `trace
/// stats`; None, having said why, where /tmp is tmpfs. iogauge runs in a process group of its
/// own: a script's `kill 0` signals its group, which must not be the test's.
pub(super) fn recorded_beside_a_file_on_the_device(
    blocks: usize,
    script: &str,
) -> Option<(tempfile::TempDir, Value)> {
    let work = tmp();
    if tmp_is_tmpfs() {
        skip!("/tmp is tmpfs: direct reads there wait for no device");
        return None;
    }
    on_the_device(&work.path().join("in"), vec![7u8; blocks * 4096]);
    let o = super::record_signals::recorded_in_a_group_of_its_own(work.path(), script);
    assert!(o.status.success(), "{}", stderr(&o));
    let stats = trace_stats(work.path(), "t.iogtrace");
    Some((work, stats))
}

/// Whether the capture of a trace (its `stats`) saw who woke whom; where not, says so.
pub(super) fn sees_wake_ups(stats: &Value) -> bool {
    let m = stats["method"].as_str().unwrap();
    let sees = m.contains("who woke whom among the tasks: the sched:sched_waking");
    if !sees {
        skip!("the capture could not see who woke whom: {m}");
    }
    sees
}

/// `t.iogtrace` in `w` predicted once for a new directory on the tmpfs at /dev/shm, which it
/// leaves empty, with most of the time the busiest thread spent in calls when recorded (the
/// reads) gone from the prediction: asserts that, `about` in its message, and returns the
/// prediction; None, having said why, where there is no such tmpfs.
pub(super) fn most_reads_gone_on_tmpfs(w: &Path, about: &str) -> Option<Value> {
    let Some(shm) = shm_tmpfs() else {
        skip!("no tmpfs at /dev/shm to predict for");
        return None;
    };
    let target = tempfile::tempdir_in(shm).unwrap();
    let p = predicted_once(w, "t.iogtrace", target.path());
    assert!(entries(target.path()).is_empty());
    let reads = p["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["recorded_io_ns"].as_u64().unwrap())
        .max()
        .unwrap();
    let (recorded, predicted) = (
        p["recorded_ns"].as_u64().unwrap(),
        p["predicted_ns"].as_u64().unwrap(),
    );
    if predicted + reads / 2 >= recorded {
        panic!(
            "recorded {recorded} ns, reads {reads} ns, predicted {predicted} ns: {p}; {about}; \
             the trace's ends: {}",
            ends_in_trace(&w.join("t.iogtrace"))
        );
    }
    Some(p)
}

/// For a failure's message (the trace goes with the test's directory): the trace's signals
/// and kills, and per thread its end and its last calls — what `trace::anchor::ends` and
/// `predict::end` decided from.
fn ends_in_trace(trace: &Path) -> String {
    let file = std::fs::File::open(trace).unwrap();
    let r = iogauge::trace::recording::Recording::decode(std::io::BufReader::new(file)).unwrap();
    let mut s = format!("signals {:?}, kills {:?}", r.footer.signals, r.footer.kills);
    for th in &r.footer.threads {
        let last: Vec<_> = (r.events.iter().rev())
            .filter(|e| e.tid == th.tid)
            .take(4)
            .map(|e| (e.t, e.dur, e.op))
            .collect();
        s += &format!(
            "; thread {} (parent {:?}) ended {:?}, its last calls (t, dur, op) {last:?}",
            th.tid, th.parent, th.ended_ns
        );
    }
    s
}

fn pattern_calls(p: &Value, prefix: &str) -> u64 {
    p["patterns"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["pattern"].as_str().unwrap().starts_with(prefix))
        .map(|x| x["calls"].as_u64().unwrap())
        .sum()
}

#[test]
fn a_recorded_dd_is_replayed_on_the_target_and_predicted_with_its_bound() {
    let (work, target) = (tmp(), tmp());
    let w = work.path();
    std::fs::write(w.join("in"), vec![7u8; 64 * 65536]).unwrap();
    let o = run_in(
        w,
        &[
            "record",
            "-o",
            "dd.iogtrace",
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
    let before = std::fs::metadata(w.join("out"))
        .unwrap()
        .modified()
        .unwrap();
    let p = predicted(
        w,
        &[
            "predict",
            "dd.iogtrace",
            "--directory",
            target.path().to_str().unwrap(),
            "--repeat",
            "2",
            "--json",
        ],
    );
    assert_eq!(p["replays"].as_array().unwrap().len(), 2);
    let predicted_ns = p["predicted_ns"].as_u64().unwrap();
    assert!(predicted_ns > 0, "{p}");
    // The prediction is one of the replays' (the lower middle of two).
    let each: Vec<u64> = p["replays"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["predicted_ns"].as_u64().unwrap())
        .collect();
    assert_eq!(predicted_ns, *each.iter().min().unwrap());
    let b = &p["bound"];
    let parts = [
        "noise_ns",
        "capture_ns",
        "unseen_io_ns",
        "preempted_ns",
        "wake_ns",
        "model_ns",
    ]
    .map(|k| b[k].as_u64().unwrap());
    assert_eq!(p["bound_ns"].as_u64().unwrap(), parts.iter().sum::<u64>());
    // Two replays: t(0.975, 1) · s · √(3/2), s = |a - b| / √2.
    let d = (each[0] as f64 - each[1] as f64).abs();
    let want = 12.706 * d / 2f64.sqrt() * 1.5f64.sqrt();
    assert!(
        (parts[0] as f64 - want).abs() <= 1.0,
        "{} vs {want}",
        parts[0]
    );
    // dd's 64 reads and 64 writes of 64 KiB (the last read finds the end: 0 bytes), one
    // fsync; the thread that decides the end is dd's.
    assert_eq!(pattern_calls(&p, "64 KiB reads"), 65);
    assert_eq!(pattern_calls(&p, "64 KiB writes"), 64);
    assert_eq!(pattern_calls(&p, "fsyncs"), 1);
    let crit = p["critical_tid"].as_u64().unwrap();
    let t = p["threads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["tid"].as_u64() == Some(crit))
        .unwrap();
    assert!(t["calls"].as_u64().unwrap() >= 130, "{t}");
    let out = p["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"].as_str().unwrap().ends_with("/out"))
        .unwrap();
    assert_eq!(out["bytes"].as_u64().unwrap(), 64 * 65536);
    // The replays' directories are gone; the program's files were not touched.
    assert!(
        entries(target.path()).is_empty(),
        "{:?}",
        entries(target.path())
    );
    assert_eq!(
        std::fs::metadata(w.join("out"))
            .unwrap()
            .modified()
            .unwrap(),
        before
    );
    let text = ok_in(
        w,
        &[
            "predict",
            "dd.iogtrace",
            "--directory",
            target.path().to_str().unwrap(),
            "--repeat",
            "1",
        ],
    );
    for want in [
        "recorded",
        "predicted",
        "± ",
        "bound:",
        "decides the end",
        "64 KiB writes, sequential",
    ] {
        assert!(text.contains(want), "{want}: {text}");
    }
}

#[test]
fn a_fio_job_file_is_recorded_as_iogauge_runs_it_and_predicted() {
    let (work, target, rec) = (tmp(), tmp(), tmp());
    let w = work.path();
    std::fs::write(w.join("j.fio"), "[w]\nrw=write\nbs=64k\nsize=4m\n").unwrap();
    let p = predicted(
        w,
        &[
            "predict",
            "j.fio",
            "--directory",
            target.path().to_str().unwrap(),
            "--record-directory",
            rec.path().to_str().unwrap(),
            "--repeat",
            "1",
            "--json",
        ],
    );
    // The job's 64 writes of 64 KiB, as the replay issued them.
    assert_eq!(pattern_calls(&p, "64 KiB writes"), 64);
    assert!(p["command"].as_array().unwrap().iter().any(|a| a == "fio"));
    assert!(p["trace"].as_str().unwrap().contains("j.fio"));
    assert!(
        entries(target.path()).is_empty(),
        "{:?}",
        entries(target.path())
    );
    assert!(entries(rec.path()).is_empty(), "{:?}", entries(rec.path()));
    assert_eq!(entries(w), vec![w.join("j.fio")]);
}

#[test]
fn predict_refuses_bad_input_and_creates_nothing() {
    let work = tmp();
    let w = work.path();
    std::fs::write(w.join("notes.txt"), "just some words\n").unwrap();
    let cases: [(&[&str], &str); 5] = [
        (&["predict", "missing.iogtrace"], "missing.iogtrace"),
        (&["predict", "notes.txt"], "neither a trace"),
        (&["predict", "notes.txt", "--repeat", "0"], "--repeat=0"),
        (
            &["predict", "notes.txt", "--directory", "nowhere"],
            "--directory=nowhere",
        ),
        (
            &["predict", "notes.txt", "--record-directory", "nowhere"],
            "--record-directory=nowhere",
        ),
    ];
    for (args, want) in cases {
        let o = run_in(w, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
    assert_eq!(entries(w), vec![w.join("notes.txt")]);
}

#[test]
fn calls_that_slept_when_recorded_are_known_and_a_target_where_they_do_not_moves_the_prediction() {
    // dd reads 16 blocks of a file on the disk with O_DIRECT: each read waits for the device
    // and its thread sleeps; then `sleep 0.2` sleeps outside any watched call.
    let script = "dd if=in of=/dev/null bs=4k count=16 iflag=direct status=none; sleep 0.2";
    let Some((work, stats)) = recorded_beside_a_file_on_the_device(16, script) else {
        return;
    };
    let w = work.path();
    // The eBPF ring's capture and perf's both take the switches from perf's events.
    if stats["method"].as_str().unwrap().starts_with("ptrace") {
        skip!("recorded with ptrace: the scheduler's switches are not seen under ptrace");
        return;
    }
    let shown = ok_in(w, &["trace", "show", "t.iogtrace"]);
    let direct: Vec<&str> = shown
        .lines()
        .filter(|l| l.split_whitespace().nth(2) == Some("read") && l.contains("direct"))
        .collect();
    assert_eq!(direct.len(), 16, "{shown}");
    // Each read waits for the device asleep, except one whose I/O completes while its thread
    // is preempted (a busy 2-CPU machine does that now and then): it never goes to sleep.
    let slept = direct.iter().filter(|l| l.contains("slept")).count() as u64;
    assert!(slept >= 14, "{direct:?}");
    // The thread of `sleep` slept 0.2 s between its calls, outside any watched one.
    let threads = stats["threads"].as_array().unwrap();
    assert!(
        threads.iter().any(|t| {
            let off = &t["off_cpu"];
            off["think_asleep_ns"].as_u64().unwrap_or(0) >= 190_000_000
                && off["think_sleeps"].as_u64().unwrap_or(0) >= 1
        }),
        "{threads:?}"
    );
    // On tmpfs the direct reads do not sleep: the replay says so, and the prediction takes
    // part of the recorded wake-ups' cost away, half its range in the bound.
    let Some(shm) = shm_tmpfs() else {
        skip!("no tmpfs at /dev/shm to predict for");
        return;
    };
    let target = tempfile::tempdir_in(shm).unwrap();
    let p = predicted_once(w, "t.iogtrace", target.path());
    let r = &p["replays"][0];
    assert!(r["wakes"]["fewer"].as_u64().unwrap() >= slept, "{r}");
    assert_eq!(r["wakes"]["more"].as_u64().unwrap(), 0, "{r}");
    let shrink = r["wakes"]["shrink_ns"].as_u64().unwrap();
    assert_eq!(p["bound"]["wake_ns"].as_u64().unwrap(), shrink / 2, "{p}");
    let replay = ok_in(
        w,
        &[
            "replay",
            "t.iogtrace",
            "--directory",
            target.path().to_str().unwrap(),
            "--output-format=json",
        ],
    );
    let replay: Value = serde_json::from_str(&replay).unwrap();
    assert!(
        replay["recorded_calls_slept"].as_u64().unwrap() >= slept,
        "{replay}"
    );
    assert_eq!(
        replay["replayed_calls_slept"].as_u64().unwrap(),
        0,
        "{replay}"
    );
    assert!(entries(target.path()).is_empty());
}

#[test]
fn a_file_read_cold_through_read_ahead_is_replayed_cold_and_one_read_cached_stays_cached() {
    // dd reads a 32 MiB file on the disk in 4 KiB calls: once out of the page cache — read-ahead
    // serves most of its reads from memory, yet the first waits for the device — and once
    // cached. The first is laid out cold (its replay's reads wait for the device too), the
    // second stays cached (its replay's never do) and the prediction says it assumed that.
    let (work, target) = (tmp(), tmp());
    let w = work.path();
    if tmp_is_tmpfs() {
        skip!("/tmp is tmpfs: no read there waits for a device");
        return;
    }
    let data: Vec<u8> = (0..32u32 << 20).map(|i| ((i * 7) >> 9) as u8).collect();
    on_the_device(&w.join("in"), &data);
    {
        use std::os::fd::AsRawFd as _;
        let f = std::fs::File::open(w.join("in")).unwrap();
        // SAFETY: an advice call on a descriptor this test holds.
        unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    }
    let dd = ["dd", "if=in", "of=/dev/null", "bs=4k", "status=none"];
    let record = |trace: &str| {
        let o = run_in(w, &[&["record", "-o", trace, "--"][..], &dd[..]].concat());
        assert!(o.status.success(), "{}", stderr(&o));
    };
    record("cold.iogtrace");
    if under_ptrace(w, "cold.iogtrace") {
        skip!("recorded with ptrace: the scheduler's switches are not seen under ptrace");
        return;
    }
    // The file is cached now: dd read it through the page cache.
    record("warm.iogtrace");
    let t = target.path().to_str().unwrap();
    let replayed_sleeps = |trace: &str| {
        let out = ok_in(
            w,
            &["replay", trace, "--directory", t, "--output-format=json"],
        );
        let v: Value = serde_json::from_str(&out).unwrap();
        (
            v["recorded_calls_slept"].as_u64().unwrap(),
            v["replayed_calls_slept"].as_u64().unwrap(),
        )
    };
    let (recorded, replayed) = replayed_sleeps("cold.iogtrace");
    assert!(recorded >= 1 && replayed >= 1, "{recorded} {replayed}");
    // A cached read waits for no device; under the other tests' disk traffic a handful of
    // the 8,192 may still sleep (an atime update, a page lock: CI once saw 3 recorded and 5
    // replayed).
    let (recorded, replayed) = replayed_sleeps("warm.iogtrace");
    assert!(recorded <= 8 && replayed <= 8, "{recorded} {replayed}");
    let cached = |trace: &str| {
        let p = predicted_once(w, trace, target.path());
        warning(&p, "files that existed and were read from memory")
    };
    assert_eq!(cached("cold.iogtrace"), None);
    if recorded > 0 {
        // Any read that slept makes a file not read from memory (stats::read_from_memory).
        skip!(
            "{recorded} of the warm run's cached reads slept (the other tests' disk traffic):              its file is not counted as read from memory"
        );
        assert!(entries(target.path()).is_empty());
        return;
    }
    let warm = cached("warm.iogtrace").expect("the cached file said");
    // The file, and what dd read of the system's files (a few KiB).
    assert!(
        warm.contains(" (32.0") && warm.contains(" MiB read)"),
        "{warm}"
    );
    assert!(entries(target.path()).is_empty());
}

#[test]
fn a_program_that_waits_through_a_pipe_for_another_follows_it_or_is_said_to_be_kept() {
    // dd writes 200 blocks O_DSYNC on the disk while a subshell waits on a pipe for it to end,
    // then creates a file: that wait is asleep outside any call the trace holds. Woken by the
    // end of the pipe's writer (its exit: no wake-up a trace sees), the replay keeps it as
    // recorded, though dd's writes take far less on tmpfs, and says so. Woken by the writer's
    // `echo` into the pipe, where the trace knows who woke whom, the replay follows it (the
    // subshell goes on when the writer's side is done there) and nothing is said. The same
    // two one after the other: the shell waited for dd to end, which the replay makes.
    let work = tmp();
    let w = work.path();
    if tmp_is_tmpfs() {
        skip!("/tmp is tmpfs: its synchronous writes wait for no device");
        return;
    }
    let Some(shm) = shm_tmpfs() else {
        skip!("no tmpfs at /dev/shm to predict for");
        return;
    };
    let asleep = |script: &str| {
        let o = run_in(
            w,
            &[
                "record",
                "-o",
                "t.iogtrace",
                "--overwrite-output",
                "--",
                "sh",
                "-c",
                script,
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let target = tempfile::tempdir_in(shm).unwrap();
        let p = predicted_once(w, "t.iogtrace", target.path());
        assert!(entries(target.path()).is_empty());
        warning(&p, "spent asleep outside their calls")
    };
    let dd = "dd if=/dev/zero of=f bs=64k count=200 oflag=dsync status=none";
    // (dd puts its output file on its standard output: the group holds the pipe open.)
    let piped = asleep(&format!("{{ {dd}; true; }} | {{ read x; : > done; }}"));
    if under_ptrace(w, "t.iogtrace") {
        skip!("recorded with ptrace: the scheduler's switches are not seen under ptrace");
        return;
    }
    let said = piped.expect("the subshell's wait for dd said");
    if trace_stats(w, "t.iogtrace")["threads"][0]["woken"].is_object() {
        assert!(said.contains("a pipe's last writer ending"), "{said}");
        let echoed = asleep(&format!("{{ {dd}; echo go; }} | {{ read x; : > done; }}"));
        assert_eq!(echoed, None);
    } else {
        assert!(said.contains("sockets or pipes"), "{said}");
    }
    // One after the other, the shell's wait for dd is the replay's: what is left kept asleep
    // (a page fault, a timer under the other tests' load: 3 ms once in CI, said where the
    // prediction is short) is a small part of the pipe's wait.
    let keeps = |w: &str| -> f64 {
        let at = w.find("keeps ").expect("a figure") + "keeps ".len();
        w[at..].split(' ').next().unwrap().parse().unwrap()
    };
    let sequential = asleep(&format!("{dd}; {{ read x; : > done; }} < /dev/null"));
    let kept = sequential.as_deref().map_or(0.0, keeps);
    assert!(kept < keeps(&said) / 3.0, "{sequential:?} against {said}");
}

#[test]
fn a_process_that_waited_on_a_pipe_for_slow_reads_is_predicted_to_wait_as_long_as_they_take() {
    // A subshell waits on a pipe while dd reads the disk with O_DIRECT (each read waits for
    // the device); then the shell writes to the pipe and the subshell's dd writes a file.
    // Recorded on the disk and predicted for tmpfs, where the reads take microseconds: the
    // subshell was woken by the shell after the reads, so its dd starts when they are done
    // there, not at its recorded time.
    let script = "mkfifo f; \
        (read l < f; dd if=/dev/zero of=out bs=4k count=4 status=none) & \
        dd if=in of=/dev/null bs=4k count=512 iflag=direct status=none; \
        echo go > f; wait";
    let Some((work, stats)) = recorded_beside_a_file_on_the_device(512, script) else {
        return;
    };
    let w = work.path();
    if !sees_wake_ups(&stats) {
        return;
    }
    // The subshell's sleep on the pipe was ended by the shell, a task of the program.
    let threads = stats["threads"].as_array().unwrap();
    let woken: u64 = threads
        .iter()
        .map(|t| t["woken"]["sleeps"].as_u64().unwrap_or(0))
        .sum();
    assert!(woken >= 1, "{threads:?}");
    // Most of the reads' time is gone from the prediction (it would all be there if the
    // writer kept its recorded start).
    if most_reads_gone_on_tmpfs(w, "").is_none() {
        return;
    }
    assert!(w.join("out").exists());
}

/// A program whose child looks for the file `ready` every 5 ms (opens it; where it is not
/// there, sleeps) while the parent writes 16 MiB and then appends 4 KiB and syncs it 200
/// times (on a disk each sync waits for the device; on tmpfs for nothing), then makes `ready`.
const POLLER: &str = r#"
import os, time
pid = os.fork()
if pid == 0:
    while True:
        try:
            with open("ready") as f:
                f.read()
            os._exit(0)
        except FileNotFoundError:
            time.sleep(0.005)
fd = os.open("data", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
for _ in range(16):
    os.write(fd, b"x" * (1 << 20))
for _ in range(200):
    os.write(fd, b"y" * 4096)
    os.fdatasync(fd)
os.close(fd)
fd = os.open("ready", os.O_WRONLY | os.O_CREAT | os.O_EXCL)
os.write(fd, b"ok")
os.close(fd)
os.waitpid(pid, 0)
"#;

/// A replay's time in its fdatasyncs, ns.
fn sync_time(r: &Value) -> f64 {
    r["ops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["op"] == "fdatasync")
        .map_or(0.0, |o| {
            o["calls"].as_u64().unwrap() as f64 * o["lat_mean_ns"].as_f64().unwrap()
        })
}

/// The Python to run POLLER with: Debian's, where a version manager's shim may stand first on
/// PATH (pyenv's starts dozens of processes before Python).
pub(super) fn python() -> &'static str {
    if Path::new("/usr/bin/python3").exists() {
        "/usr/bin/python3"
    } else {
        "python3"
    }
}

/// POLLER recorded in `w`, and how many of its looks for `ready` found nothing.
fn recorded_poller(w: &Path) -> u64 {
    let o = run_in(
        w,
        &["record", "-o", "t.iogtrace", "--", python(), "-c", POLLER],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let stats = trace_stats(w, "t.iogtrace");
    stats["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["path"].as_str().unwrap().ends_with("/ready"))
        .map(|f| f["not_found"].as_u64().unwrap())
        .sum()
}

/// `t.iogtrace` in `w` replayed in a new directory under `target`, as JSON.
fn replayed_in(w: &Path, target: &Path) -> Value {
    let dir = tempfile::tempdir_in(target).unwrap();
    let t = dir.path().to_str().unwrap();
    let r = predicted(
        w,
        &[
            "replay",
            "t.iogtrace",
            "--directory",
            t,
            "--output-format",
            "json",
        ],
    );
    assert!(entries(dir.path()).is_empty());
    r
}

#[test]
fn a_thread_polling_for_a_file_stops_at_the_look_that_finds_it_made_there() {
    // Recorded on the disk, where the syncs take many of the child's 5 ms turns, and
    // replayed on tmpfs, where they take microseconds: the file is made at the end of the
    // writes there, the looks after the next one are not made, and the program ends then —
    // not at the recorded last look.
    if tmp_is_tmpfs() {
        skip!("/tmp is tmpfs: the sync there waits for no device");
        return;
    }
    let Some(shm) = shm_tmpfs() else {
        skip!("no tmpfs at /dev/shm to replay on");
        return;
    };
    let work = tmp();
    let w = work.path();
    let missed = recorded_poller(w);
    if missed < 2 {
        skip!("the child looked for the file {missed} times before it was made: no loop to see");
        return;
    }
    let r = replayed_in(w, shm);
    assert_eq!(r["polls"]["found"], 1, "{r}");
    // The time the replay's calls saved against the recorded ones (the syncs, less whatever
    // a loaded machine added to the writes): the file is made that much sooner there.
    let (recorded_io, replayed_io) = (
        r["recorded_io_ns"].as_u64().unwrap(),
        r["replayed_io_ns"].as_u64().unwrap(),
    );
    let saved = recorded_io.saturating_sub(replayed_io);
    if saved < 20_000_000 {
        skip!("the replay's calls saved {saved} ns on tmpfs, less than four of the child's turns");
        return;
    }
    assert_eq!(r["polls"]["ended_sooner"], 1, "{r}");
    // A look made in the microseconds between the file's creation and the write the poll
    // waited for finds the file where the recorded one did not: one at most.
    assert!(r["results_differ"].as_u64().unwrap() <= 1, "{r}");
    // The program ends about `saved` sooner (a turn more at most). Had the child kept its
    // recorded looks, it would end at its recorded last look, however soon the file came.
    let (recorded, replayed) = (
        r["recorded_span_ns"].as_u64().unwrap(),
        r["replayed_span_ns"].as_u64().unwrap(),
    );
    assert!(
        replayed + saved / 2 < recorded,
        "{missed} looks missed when recorded; {saved} ns saved; recorded {recorded} ns, replayed {replayed} ns: {r}"
    );
}

#[test]
fn a_thread_polling_for_a_file_made_later_there_looks_until_its_turn_after_it() {
    // Recorded on tmpfs, where the file is made within a few turns, and replayed on the
    // disk, where the syncs take longer: the child's last look waits for the file and then
    // for its next turn, as the program's would (the look before it plus whole periods).
    let Some(shm) = shm_tmpfs() else {
        skip!("no tmpfs at /dev/shm to record on");
        return;
    };
    if tmp_is_tmpfs() {
        skip!("/tmp is tmpfs: no disk to replay on");
        return;
    }
    let work = tempfile::tempdir_in(shm).unwrap();
    let w = work.path();
    let missed = recorded_poller(w);
    if missed < 2 {
        skip!("the child looked for the file {missed} times before it was made: no loop to see");
        return;
    }
    let disk = tmp();
    let r = replayed_in(w, disk.path());
    assert_eq!(r["polls"]["found"], 1, "{r}");
    let sync = sync_time(&r);
    if sync < 20e6 {
        skip!("the syncs took {sync} ns on the disk: the file came within the recorded turns");
        return;
    }
    assert_eq!(r["polls"]["ended_later"], 1, "{r}");
    assert!(r["results_differ"].as_u64().unwrap() <= 1, "{r}");
}
