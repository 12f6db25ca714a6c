//! `iogauge record` and the signals of the program it records: the program runs in iogauge's
//! process group (so a terminal's Ctrl-C reaches both), and a signal the program sends its
//! own group — a script's `kill 0`, the usual way to end its helpers — reaches iogauge too. It
//! is the program's business, not a request to stop the recording.

use std::os::unix::fs::FileTypeExt;
use std::os::unix::process::CommandExt;

use super::*;

/// `iogauge record -- sh -c script` in `dir`, to `t.iogtrace`, in a process group of its own
/// (the test's group must not be the one the script signals).
pub(super) fn recorded_in_a_group_of_its_own(dir: &Path, script: &str) -> Output {
    bin()
        .current_dir(dir)
        .args(["record", "-o", "t.iogtrace", "--", "sh", "-c", script])
        .process_group(0)
        .output()
        .expect("iogauge runs")
}

#[test]
fn the_programs_kill_0_does_not_stop_the_recording() {
    let d = tmp();
    // The shell starts a helper, then ignores SIGTERM itself and sends it to its process
    // group twice (a trap that runs again would): the helper dies of it, the shell goes on,
    // writes `after`, and ends with 0. iogauge, in the same group, takes neither as a request
    // to stop: until 2026-12-06 the first stopped the recording ("asked to stop", the shell
    // sent SIGTERM, exit 143) and the second ended iogauge at once, its trace unwritten.
    let script = "sleep 30 & trap '' TERM; kill 0; kill 0; wait; echo after > after";
    let o = recorded_in_a_group_of_its_own(d.path(), script);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{e}");
    assert!(!e.contains("asked to stop"), "{e}");
    assert_eq!(
        std::fs::read_to_string(d.path().join("after")).unwrap(),
        "after\n"
    );
    let v = trace_stats(d.path(), "t.iogtrace");
    let after = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"].as_str().unwrap().ends_with("/after"))
        .unwrap_or_else(|| panic!("the write after the signals is in the trace: {v}"));
    assert_eq!(after["writes"]["bytes"], 6, "{v}");
    // The helper was killed by the shell's signal, not left running or waited out: the
    // recording took a fraction of its 30 s.
    assert!(v["duration_ns"].as_u64().unwrap() < 10_000_000_000, "{v}");
    // Both signals to the group are in the trace as such.
    assert_eq!(
        (&v["signals_to_groups"], &v["signals_late"]),
        (&2.into(), &0.into()),
        "{v}"
    );
}

#[test]
fn a_kill_of_a_child_already_waited_for_is_kept_as_late() {
    // The shell kills its helper, waits for it, and kills it again: the second kill fails
    // (ESRCH) — a trap's `kill $child` that came just too late. The trace keeps it, for
    // `predict` to end such a child where it runs longer.
    let d = tmp();
    let script = "sleep 30 & p=$!; sleep 0.3; kill $p; wait $p; kill $p 2>/dev/null; echo x > x";
    let o = recorded_in_a_group_of_its_own(d.path(), script);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = trace_stats(d.path(), "t.iogtrace");
    assert_eq!(
        (&v["signals_to_groups"], &v["signals_late"]),
        (&0.into(), &1.into()),
        "{v}"
    );
    let helper = v["threads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["signalled_late"] == 1)
        .unwrap_or_else(|| panic!("the helper, signalled late: {v}"));
    assert_eq!(helper["signalled"], 1, "the first kill reached it: {v}");
    let text = ok_in(d.path(), &["trace", "stats", "t.iogtrace"]);
    assert!(text.contains("signals: 0 to a process group"), "{text}");
    assert!(
        text.contains("signalled after it had ended and been waited for: 1"),
        "{text}"
    );
}

/// `iogauge record -- sh -c script` in `dir`, to `t.iogtrace`, in a process group of its own,
/// once the script has written "hi" to `x` (the recording is under way).
fn under_way(dir: &Path, script: &str) -> std::process::Child {
    let child = bin()
        .current_dir(dir)
        .args(["record", "-o", "t.iogtrace", "--", "sh", "-c", script])
        .process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    for _ in 0..500 {
        if std::fs::read_to_string(dir.join("x")).is_ok_and(|s| s == "hi\n") {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(100));
    child
}

/// `child` sent `signal` by someone outside it (this test), and what it said as it ended.
fn stopped(child: std::process::Child, signal: rustix::process::Signal) -> Output {
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(child.id() as i32).expect("a pid"),
        signal,
    )
    .expect("signal sent");
    child.wait_with_output().unwrap()
}

#[test]
fn a_request_from_outside_the_program_still_stops_the_recording() {
    // The same group, and SIGTERM sent to iogauge by someone else (this test): a request to
    // stop, as before — the program is sent SIGTERM and the trace holds what it did.
    let d = tmp();
    let child = under_way(d.path(), "echo hi > x; exec sleep 30");
    let o = stopped(child, rustix::process::Signal::TERM);
    let e = stderr(&o);
    assert!(e.contains("asked to stop"), "{e}");
    let v = trace_stats(d.path(), "t.iogtrace");
    assert!(v["duration_ns"].as_u64().unwrap() < 10_000_000_000, "{v}");
}

#[test]
fn a_program_that_ignores_the_stop_is_killed_after_the_grace_and_its_trace_written() {
    // A shell that ignores SIGTERM and SIGINT, and its child that sleeps: until 2026-12-07 a
    // Ctrl-C left the recording waiting for it for ever (a second one quit without the
    // trace).
    let d = tmp();
    let child = under_way(
        d.path(),
        "trap '' TERM INT; echo hi > x; sleep 60; echo late > y",
    );
    let asked = std::time::Instant::now();
    let o = stopped(child, rustix::process::Signal::INT);
    let took = asked.elapsed();
    let e = stderr(&o);
    // Told at once what happens next; killed 10 s on (SIGKILL: 137), not 60 s.
    assert!(e.contains("stopping: the program was sent SIGTERM"), "{e}");
    assert!(e.contains("were killed"), "{e}");
    assert_eq!(o.status.code(), Some(137), "{e}");
    assert!(
        took >= Duration::from_secs(9) && took < Duration::from_secs(30),
        "{took:?}"
    );
    assert!(!d.path().join("y").exists());
    let v = trace_stats(d.path(), "t.iogtrace");
    let x = super::record::file_ending(&v, "/x");
    assert_eq!(x["writes"]["bytes"], 3, "{x}");
}

#[test]
fn a_signal_through_a_pidfd_is_a_tell_where_the_trace_knows_its_process() {
    // A Python program starts `sleep 30` and ends it through pidfd_open's descriptor
    // (os.pidfd_open, signal.pidfd_send_signal); then starts another through clone with
    // CLONE_PIDFD (as Go's os/exec does since 1.23), whose descriptor's number the kernel
    // writes into the program's memory, and ends it through that: counted, not a tell.
    let d = tmp();
    // Each child is given time to start `sleep` (its calls put it in the trace) first.
    let py = "import ctypes, os, signal, time
p = os.fork()
if p == 0:
    os.execv('/bin/sleep', ['sleep', '30'])
time.sleep(0.3)
fd = os.pidfd_open(p)
signal.pidfd_send_signal(fd, signal.SIGTERM)
os.waitpid(p, 0)
os.close(fd)
SYS_clone, CLONE_PIDFD = 56, 0x1000
pidfd = ctypes.c_int(-1)
libc = ctypes.CDLL(None, use_errno=True)
c = libc.syscall(SYS_clone, CLONE_PIDFD | signal.SIGCHLD, 0, ctypes.byref(pidfd), 0, 0)
if c == 0:
    os.execv('/bin/sleep', ['sleep', '30'])
time.sleep(0.3)
signal.pidfd_send_signal(pidfd.value, signal.SIGTERM)
os.waitpid(c, 0)
";
    if std::env::consts::ARCH != "x86_64" {
        skip!("the program calls clone by x86_64's number");
        return;
    }
    // The interpreter itself: `python3` on PATH can be a version manager's shell script.
    let found = std::process::Command::new("python3")
        .args([
            "-c",
            "import os, signal, sys; os.pidfd_open; signal.pidfd_send_signal; \
             print(os.path.realpath(sys.executable))",
        ])
        .output();
    let Some(python) = found
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    else {
        skip!("no python3 with os.pidfd_open (Python 3.9 and Linux 5.3)");
        return;
    };
    std::fs::write(d.path().join("p.py"), py).unwrap();
    let o = run_in(
        d.path(),
        &["record", "-o", "t.iogtrace", "--", &python, "p.py"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = trace_stats(d.path(), "t.iogtrace");
    // Both sleeps were ended by their signals, not waited out.
    assert!(v["duration_ns"].as_u64().unwrap() < 10_000_000_000, "{v}");
    let threads = v["threads"].as_array().unwrap();
    let told: Vec<_> = threads.iter().filter(|t| t["signalled"] == 1).collect();
    let all = serde_json::to_string(&v["threads"]).unwrap();
    assert_eq!(told.len(), 1, "one sleep told, through pidfd_open's: {all}");
    assert_ne!(
        told[0]["pid"], threads[0]["pid"],
        "a child, not the program: {all}"
    );
    assert_eq!(v["signals_unfollowed"], 1, "{all}");
    let text = ok_in(d.path(), &["trace", "stats", "t.iogtrace"]);
    assert!(
        text.contains("1 through a pidfd the trace cannot follow"),
        "{text}"
    );
}

/// iogauge run with `args` in `dir`, where `fifo` is a FIFO nothing reads yet, once it has
/// said that it waits for a reader; with the thread that reads the rest of what it says (all
/// of it, when it has ended). `None` without mkfifo.
pub(super) fn waiting_for_a_reader(
    dir: &Path,
    args: &[&str],
) -> Option<(std::process::Child, std::thread::JoinHandle<String>)> {
    use std::io::BufRead;
    let made = Command::new("mkfifo").arg(dir.join("fifo")).status();
    if !made.is_ok_and(|s| s.success()) {
        return None;
    }
    let mut child = bin()
        .current_dir(dir)
        .args(args)
        .process_group(0)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let mut said = String::new();
    for l in lines.by_ref() {
        let l = l.unwrap();
        said.push_str(&l);
        said.push('\n');
        if l.contains("waiting for a program to read the FIFO") {
            let rest = std::thread::spawn(move || {
                said + &lines.map(|l| l.unwrap() + "\n").collect::<String>()
            });
            return Some((child, rest));
        }
    }
    let ended = child.wait();
    panic!("iogauge ended ({ended:?}) without waiting for the FIFO's reader: {said}");
}

const RECORD_TO_FIFO: &[&str] = &["record", "-o", "fifo", "--", "sh", "-c", "echo hi > x"];

#[test]
fn a_trace_to_a_fifo_nothing_reads_yet_waits_for_its_reader() {
    // `mkfifo t; iogauge record -o t -- job & … gzip < t > t.gz` started late: until
    // 2026-12-07 the open for writing failed at once (ENXIO) and the recording was lost.
    let d = tmp();
    let Some((mut child, said)) = waiting_for_a_reader(d.path(), RECORD_TO_FIFO) else {
        skip!("mkfifo failed");
        return;
    };
    std::thread::sleep(Duration::from_millis(300));
    let trace = std::fs::read(d.path().join("fifo")).unwrap();
    let status = child.wait().unwrap();
    let e = said.join().unwrap();
    assert_eq!(status.code(), Some(0), "{e}");
    assert!(e.contains("trace: fifo"), "{e}");
    std::fs::write(d.path().join("t.iogtrace"), &trace).unwrap();
    let v = trace_stats(d.path(), "t.iogtrace");
    let x = super::record::file_ending(&v, "/x");
    assert_eq!(x["writes"]["bytes"], 3, "{v}");
}

#[test]
fn ctrl_c_while_a_fifo_has_no_reader_gives_up_the_wait_and_says_so() {
    let d = tmp();
    let Some((mut child, said)) = waiting_for_a_reader(d.path(), RECORD_TO_FIFO) else {
        skip!("mkfifo failed");
        return;
    };
    interrupt(&child);
    let status = child.wait().unwrap();
    let e = said.join().unwrap();
    assert_eq!(status.code(), Some(130), "{e}");
    assert!(
        e.contains("the trace was NOT written: fifo: no program read the FIFO before the stop"),
        "{e}"
    );
    // The program had ended: the stop was not one of the recording.
    assert!(!e.contains("asked to stop"), "{e}");
    // Nothing made but the program's file; the FIFO left a FIFO.
    assert_eq!(
        entries(d.path()),
        vec![d.path().join("fifo"), d.path().join("x")]
    );
    assert!(
        std::fs::metadata(d.path().join("fifo"))
            .unwrap()
            .file_type()
            .is_fifo()
    );
}

#[test]
fn a_second_ctrl_c_while_the_trace_is_written_leaves_no_temporary_file() {
    // The trace goes to a file of a random name beside it, renamed into place when whole: a
    // large trace on a slow disk takes a while. Until 2026-12-07 a second Ctrl-C meanwhile
    // ended iogauge with that file left, hidden (`.t.iogtrace.iogauge-…`), as large as the
    // trace.
    // Served by two threads: the stalled write holds one, the removal takes the other.
    let Some((d, fs, mnt)) = super::verify::fault_fs_served_by(2) else {
        return;
    };
    let child = recording_stalled_in_its_trace(d.path(), &fs, &mnt);
    // Sent to iogauge's signal thread: a Ctrl-C the kernel gives the writing thread waits
    // until its write returns (as a real slow disk's would, write by write).
    let (pid, tid) = (child.id(), signal_thread(child.id()));
    for _ in 0..2 {
        // SAFETY: a plain syscall with numbers; the thread belongs to the child.
        let r = unsafe { libc::syscall(libc::SYS_tgkill, pid as i32, tid, libc::SIGINT) };
        assert_eq!(r, 0);
        std::thread::sleep(Duration::from_millis(100));
    }
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert!(
        !stderr(&o).contains("NOT written"),
        "ended at once: {}",
        stderr(&o)
    );
    let left: Vec<_> = std::fs::read_dir(&mnt)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_temporary_file_a_killed_iogauge_left_goes_at_the_next_write_there() {
    // SIGKILL (or the OOM killer) while the trace is written leaves its temporary file, hidden
    // beside the output and as large as the trace: nothing can run in a killed process. The
    // next iogauge to write into that directory removes it, and says so. Until 2026-12-07 it
    // stayed for good.
    let Some((d, fs, mnt)) = super::verify::fault_fs_served_by(2) else {
        return;
    };
    let mut child = recording_stalled_in_its_trace(d.path(), &fs, &mnt);
    child.kill().unwrap();
    child.wait().unwrap();
    let names = |dir: &Path| -> Vec<String> {
        let mut n: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        n.sort();
        n
    };
    let left = names(&mnt);
    assert!(
        left.len() == 1 && left[0].starts_with(".t.iogtrace.iogauge-"),
        "the killed writer's file: {left:?}"
    );
    // A file of the same kind of name that iogauge did not make stays.
    std::fs::write(mnt.join(".n.iogauge-0123456789abcdef"), b"mine").unwrap();

    let o = bin()
        .current_dir(d.path())
        .args(["record", "-o"])
        .arg(mnt.join("u.iogtrace"))
        .args(["--", "true"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let said = stderr(&o);
    assert!(
        said.contains(&format!("removed {}", mnt.join(&left[0]).display()))
            && said.contains(
                "the temporary file of t.iogtrace, left there by an iogauge that was killed"
            ),
        "{said}"
    );
    assert_eq!(names(&mnt), [".n.iogauge-0123456789abcdef", "u.iogtrace"]);
}

/// `iogauge record -o MNT/t.iogtrace -- sh -c 'echo x > y'` in `dir`, once the trace's first
/// write has stalled in `fs` (two seconds).
fn recording_stalled_in_its_trace(
    dir: &Path,
    fs: &super::faultfs::Mounted,
    mnt: &Path,
) -> std::process::Child {
    fs.arm(super::faultfs::Fault::Stall { at: 0 }, 0);
    let child = bin()
        .current_dir(dir)
        .args(["record", "-o"])
        .arg(mnt.join("t.iogtrace"))
        .args(["--", "sh", "-c", "echo x > y"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while fs.fired().is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(fs.fired().len(), 1, "the trace's first write stalls");
    child
}

/// The thread id of iogauge's signal thread in process `pid`.
pub(super) fn signal_thread(pid: u32) -> i32 {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .filter_map(|t| t.ok())
        .find(|t| {
            std::fs::read_to_string(t.path().join("comm"))
                .is_ok_and(|c| c.trim() == "iogauge-signals")
        })
        .and_then(|t| t.file_name().to_str()?.parse::<i32>().ok())
        .expect("iogauge's signal thread")
}

#[test]
fn a_recording_that_waits_on_what_the_program_left_running_says_so_while_it_waits() {
    // `sh -c 'server &'`: the shell ends at once, its child runs on, and the recording follows
    // it. Until 2026-12-08 it waited without a word, and looked hung.
    let d = tmp();
    let mut child = under_way(d.path(), "echo hi > x; sleep 60 & echo $! > bg; exit 0");
    let bg = std::fs::read_to_string(d.path().join("bg")).unwrap();
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut err, &mut line).unwrap();
    // Said while the recording waits, before anyone asks it to stop.
    assert!(child.try_wait().unwrap().is_none(), "{line}");
    // The child is named as it was then: `sleep`, or `sh` where it had not yet exec'd it.
    let left = |name: &str| {
        format!(
            "ended; the recording goes on until the 1 process it left running ends ({} {name})",
            bg.trim()
        )
    };
    assert!(
        line.starts_with("iogauge: record: sh (pid ")
            && (line.contains(&left("sleep")) || line.contains(&left("sh")))
            && line.contains("Ctrl-C stops it and writes the trace"),
        "{line}"
    );
    child.stderr = Some(err.into_inner());
    let o = stopped(child, rustix::process::Signal::INT);
    let e = stderr(&o);
    assert!(e.contains("asked to stop"), "{e}");
    let v = trace_stats(d.path(), "t.iogtrace");
    assert!(v["duration_ns"].as_u64().unwrap() < 30_000_000_000, "{v}");

    // A program that waits for its children says nothing of the kind.
    let o = run_in(
        d.path(),
        &[
            "record",
            "-o",
            "u.iogtrace",
            "--",
            "sh",
            "-c",
            "sleep 0.2 & wait",
        ],
    );
    assert!(
        o.status.success() && !stderr(&o).contains("left running"),
        "{}",
        stderr(&o)
    );
}
