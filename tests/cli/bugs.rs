//! What a bug does: a panic in one thread of a run (made on purpose with
//! `IOGAUGE_PANIC_IN`, `runner::fault`) ends iogauge at once with exit 101, says it is a bug,
//! writes no report and leaves none of the files the run created. Before, the other threads
//! waited for the dead one: a fio job at the start barrier and a replay thread for the dead
//! thread's calls, for ever, a first Ctrl-C unheard.

use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use super::{bin, entries, run_in, stderr, stdout, tmp};

/// Runs iogauge in `dir` with the bug at `place`; a run still going after 60 s is killed and
/// fails the test (it hung).
fn with_a_bug_in(place: &str, dir: &Path, args: &[&str]) -> Output {
    let mut child = bin()
        .current_dir(dir)
        .args(args)
        .env("IOGAUGE_PANIC_IN", place)
        .env("RUST_BACKTRACE", "0")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("iogauge runs");
    let t = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if t.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("{args:?} with a bug in {place}: still running after 60 s (hung)");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("its output")
}

/// Exit 101, the panic and the one line saying what it is, nothing on stdout.
fn ended_as_a_bug(o: &Output, place: &str) {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(101), "{e}");
    assert!(e.contains(&format!("IOGAUGE_PANIC_IN={place}")), "{e}");
    assert!(
        e.contains("iogauge: internal error: a bug in iogauge") && e.contains("no report written"),
        "{e}"
    );
    assert_eq!(stdout(o), "", "no report");
}

#[test]
fn a_bug_in_one_job_ends_the_run_at_once_and_leaves_no_file() {
    let d = tmp();
    let files = d.path().join("files");
    std::fs::create_dir(&files).unwrap();
    // Two jobs of 30 s each: the other job would wait for the dead one at the start.
    let o = with_a_bug_in(
        "job",
        d.path(),
        &[
            "fio",
            "--name=a",
            "--directory=files",
            "--size=4m",
            "--numjobs=2",
            "--rw=randread",
            "--time_based",
            "--runtime=30",
        ],
    );
    ended_as_a_bug(&o, "job");
    assert_eq!(entries(&files), Vec::<std::path::PathBuf>::new());
}

#[test]
fn a_bug_in_one_replay_thread_ends_the_replay_at_once_and_leaves_no_file() {
    let d = tmp();
    let work = d.path().join("work");
    let place = d.path().join("place");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir(&place).unwrap();
    std::fs::write(work.join("in"), vec![7u8; 256 << 10]).unwrap();
    // Three processes, each after the one before it: the replay's threads wait for each
    // other's calls, and the later ones create files in the replay's directory.
    let script = "cat in > a; (cat a > b); (cat b > c; sync c)";
    let o = run_in(
        &work,
        &["record", "-o", "../t.iogtrace", "--", "sh", "-c", script],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // The thread that dies is whichever gets to its first call first: several tries.
    for _ in 0..5 {
        let o = with_a_bug_in(
            "replay",
            d.path(),
            &["replay", "t.iogtrace", "--directory=place"],
        );
        ended_as_a_bug(&o, "replay");
        assert_eq!(entries(&place), Vec::<std::path::PathBuf>::new());
    }
}
