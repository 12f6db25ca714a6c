//! fio's file-operation engines on real directories: filecreate creates each file as its
//! measured operation (and the run removes what it created, whatever ends it), filestat stats
//! each file with the call asked, filedelete deletes only files the run laid out for it. The
//! system calls are checked with strace where it is installed.

use super::*;

/// The lines of `strace -f -e trace=CALLS` for a run of iogauge with `args` that name a file
/// under `dir` (None, printing why, when strace is missing).
fn traced(calls: &str, dir: &Path, args: &[&str]) -> Option<Vec<String>> {
    let out = Command::new("strace")
        .args(["-f", "-qq", "-y", "-e", &format!("trace={calls}")])
        .arg(assert_cmd::cargo::cargo_bin!("iogauge"))
        .args(args)
        .output();
    let Ok(out) = out else {
        skip!("strace is not installed (scripts/test-deps.sh installs it)");
        return None;
    };
    assert!(out.status.success(), "{}", stderr(&out));
    let d = dir.display().to_string();
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    Some(
        text.lines()
            .filter(|l| l.contains(&d))
            .map(str::to_string)
            .collect(),
    )
}

pub(super) fn names(dir: &Path) -> Vec<String> {
    entries(dir)
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn filecreate_creates_each_file_as_its_operation_and_the_run_removes_them() {
    let d = tmp();
    let dir = format!("--directory={}", d.path().display());
    let r = run_json(&[&dir, "--ioengine=filecreate", "--nrfiles=50"], 0);
    // One create per file, counted as fio counts it: one 4 KiB block each, on the read side.
    assert_eq!(counts(job(&r)), (50, 50 * 4096, 0, 0));
    assert_eq!(job(&r)["read"]["lat_ns"]["count"], 50, "{}", job(&r));
    assert!(
        job(&r)["data"]
            .as_str()
            .unwrap()
            .contains("one file's create")
    );
    assert!(entries(d.path()).is_empty(), "{:?}", names(d.path()));

    // Kept: the files are there, empty, each marked as iogauge's.
    run_json(&[&dir, "--ioengine=filecreate", "--nrfiles=5", "--keep"], 0);
    let kept = names(d.path());
    assert_eq!(
        kept,
        ["job.0.0", "job.0.1", "job.0.2", "job.0.3", "job.0.4"]
    );
    for p in entries(d.path()) {
        assert_eq!(std::fs::metadata(&p).unwrap().len(), 0);
        let mark = xattr_of(&p);
        assert!(mark.starts_with("iogauge:kept"), "{}: {mark}", p.display());
    }
    // The names are taken now: a create would not be one. Refused, nothing touched.
    let o = iogauge(&["run", &dir, "--ioengine=filecreate", "--nrfiles=5"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("job.0.0: exists") && e.contains("measured operation"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "{e}");
    assert_eq!(names(d.path()), kept);
}

/// The `user.iogauge.created` mark of `p` ("" when it has none).
fn xattr_of(p: &Path) -> String {
    let out = Command::new("getfattr")
        .args(["--only-values", "-n", "user.iogauge.created"])
        .arg(p)
        .output();
    match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).into_owned(),
        Ok(_) => String::new(),
        // Without getfattr, read it through the kernel directly.
        Err(_) => {
            let mut buf = vec![0u8; 256];
            let n = rustix::fs::getxattr(p, "user.iogauge.created", &mut buf).unwrap_or(0);
            String::from_utf8_lossy(&buf[..n]).into_owned()
        }
    }
}

#[test]
fn filecreate_makes_one_exclusive_create_per_file_then_opens_on_later_passes() {
    let d = shm_tmp();
    let dir = format!("--directory={}", d.path().display());
    let args = [
        "run",
        &dir,
        "--ioengine=filecreate",
        "--nrfiles=20",
        "--loops=3",
        "--output-format=json",
    ];
    let Some(lines) = traced("openat,unlink,unlinkat", d.path(), &args) else {
        return;
    };
    let job_file = |l: &&String| l.contains("job.0.");
    let opens: Vec<&String> = lines
        .iter()
        .filter(job_file)
        .filter(|l| l.contains("openat("))
        .collect();
    let creates = opens
        .iter()
        .filter(|l| l.contains("O_CREAT|O_EXCL"))
        .count();
    // The run itself opens no job file by its whole path: only the engine, by name.
    assert_eq!(creates, 20, "{opens:#?}");
    let reopens = opens.iter().filter(|l| !l.contains("O_CREAT")).count();
    assert_eq!(reopens, 40, "{opens:#?}");
    assert!(entries(d.path()).is_empty(), "removed at the end");
}

#[test]
fn filestat_stats_existing_files_with_the_call_asked_and_never_changes_them() {
    let d = shm_tmp();
    let p = d.path();
    for i in 0..10 {
        std::fs::write(p.join(format!("job.0.{i}")), format!("user data {i}")).unwrap();
    }
    let before: Vec<_> = entries(p)
        .iter()
        .map(|f| std::fs::metadata(f).unwrap().modified().unwrap())
        .collect();
    let dir = format!("--directory={}", p.display());
    for (call, traced_as) in [
        ("stat", "}, 0) = 0"),
        ("lstat", "}, AT_SYMLINK_NOFOLLOW) = 0"),
        ("statx", ", AT_STATX_SYNC_AS_STAT, STATX_ALL,"),
    ] {
        let st = format!("--stat_type={call}");
        let args = [
            "run",
            &dir,
            "--ioengine=filestat",
            "--nrfiles=10",
            "--loops=3",
            &st,
            "--output-format=json",
        ];
        let r = run_json(&args[1..6], 0);
        assert_eq!(counts(job(&r)), (30, 30 * 4096, 0, 0), "{call}");
        let Some(lines) = traced("newfstatat,statx,stat,lstat", p, &args) else {
            return;
        };
        // Per thread: the job's thread makes exactly one call per file per pass (the run's
        // own checks, on the main thread, look at the files too).
        let mut per_thread = std::collections::BTreeMap::<&str, usize>::new();
        for l in lines
            .iter()
            .filter(|l| l.contains("job.0.") && l.contains(traced_as))
        {
            let pid = l.split(']').next().unwrap_or("");
            *per_thread.entry(pid).or_default() += 1;
        }
        assert!(
            per_thread.values().any(|&n| n == 30),
            "{call}: {per_thread:?}"
        );
    }
    // Existing files are the user's: unchanged, and not removed.
    for (i, f) in entries(p).iter().enumerate() {
        assert_eq!(
            std::fs::read_to_string(f).unwrap(),
            format!("user data {i}")
        );
        assert_eq!(std::fs::metadata(f).unwrap().modified().unwrap(), before[i]);
    }
    // stat_type belongs to filestat.
    let o = iogauge(&["run", &dir, "--ioengine=filecreate", "--stat_type=lstat"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("applies only to ioengine=filestat"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn filedelete_deletes_the_files_it_laid_out_and_nothing_else() {
    let d = tmp();
    let p = d.path();
    let dir = format!("--directory={}", p.display());
    let r = run_json(
        &[
            &dir,
            "--ioengine=filedelete",
            "--nrfiles=20",
            "--filesize=8k",
            "--rw=randwrite",
        ],
        0,
    );
    // Each delete counted once, on the write side as asked.
    assert_eq!(counts(job(&r)), (0, 0, 20, 20 * 4096));
    assert!(entries(p).is_empty());

    // A file of the user's where a name falls: refused before anything is created.
    std::fs::write(p.join("job.0.3"), b"keep me").unwrap();
    let o = iogauge(&["run", &dir, "--ioengine=filedelete", "--nrfiles=5"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("job.0.3: exists") && e.contains("deletes only files this run creates"),
        "{e}"
    );
    assert_eq!(names(p), ["job.0.3"]);
    assert_eq!(std::fs::read(p.join("job.0.3")).unwrap(), b"keep me");

    // A second pass would find the files gone (fio's fails with ENOENT): refused.
    for extra in [&["--time_based", "--runtime=1"][..], &["--loops=2"][..]] {
        let mut a = vec!["run", dir.as_str(), "--ioengine=filedelete", "--nrfiles=2"];
        a.extend_from_slice(extra);
        let o = iogauge(&a);
        assert_eq!(o.status.code(), Some(2), "{a:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("deletes each file once"),
            "{}",
            stderr(&o)
        );
        assert_eq!(names(p), ["job.0.3"]);
    }
}

/// A creating engine (filecreate, dircreate) that runs out of inodes part way: the job
/// stops with ENOSPC, reports what it made, and the run removes all of it.
pub(super) fn out_of_inodes_stops_reports_and_removes_what_it_made(engine: &str) {
    // 64 KiB of space but room for few inodes: the creates fail with ENOSPC part way.
    let Some(fs) = SmallFs::mount("64k,nr_inodes=40") else {
        return;
    };
    let dir = format!("--directory={}", fs.path().display());
    let engine = format!("--ioengine={engine}");
    let r = run_json(&[&dir, &engine, "--nrfiles=100"], 1);
    let j = job(&r);
    let made = j["read"]["ios"].as_u64().unwrap();
    assert!(
        (10..100).contains(&made),
        "{engine}: {made} made before the error"
    );
    let err = j["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(err.contains("No space left"), "{j}");
    assert!(entries(fs.path()).is_empty(), "{:?}", names(fs.path()));
}

/// A creating engine stopped by Ctrl-C part way (2,000 creates a second, stopped with about
/// 1,000 made): exit 130, what was measured reported, everything it made removed.
pub(super) fn ctrl_c_removes_everything_it_made(engine: &str) {
    let d = shm_tmp();
    let child = bin()
        .args([
            "run",
            &format!("--directory={}", d.path().display()),
            &format!("--ioengine={engine}"),
            "--nrfiles=8000",
            "--rate_iops=2000",
            "--output-format=json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    while entries(d.path()).len() < 1000 && t0.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(100));
    }
    // SAFETY: signalling the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["interrupted"], true);
    assert!(counts(job(&r)).0 >= 1000, "what was measured is reported");
    let left = entries(d.path()).len();
    assert_eq!(left, 0, "{engine}: {left} left");
}

#[test]
fn a_filecreate_that_runs_out_of_inodes_stops_reports_and_removes_what_it_made() {
    out_of_inodes_stops_reports_and_removes_what_it_made("filecreate");
}

#[test]
fn ctrl_c_during_filecreate_removes_every_file_it_made() {
    ctrl_c_removes_everything_it_made("filecreate");
}

#[test]
fn file_operations_refuse_patterns_they_cannot_do_in_one_line() {
    let d = tmp();
    let dir = format!("--directory={}", d.path().display());
    for (extra, says) in [
        (
            "--rw=randrw",
            "does one operation per file: rw=read or write",
        ),
        ("--rw=trim", "does one operation per file: rw=read or write"),
        ("--rw=read:8k", "no offsets to skip"),
        ("--verify=crc32c", "moves no data"),
        ("--numpages=4", "needs a vectored engine"),
    ] {
        for engine in ["--ioengine=filecreate", "--ioengine=filestat"] {
            let o = iogauge(&["run", &dir, engine, "--nrfiles=4", extra]);
            assert_eq!(o.status.code(), Some(2), "{extra}: {}", stderr(&o));
            assert!(stderr(&o).contains(says), "{extra}: {}", stderr(&o));
            assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
        }
    }
    assert!(entries(d.path()).is_empty(), "nothing created");
}

/// Sends SIGINT twice in a row to iogauge's signal thread (a user's two Ctrl-Cs; sent to that
/// thread, so a job thread in a long call does not hold them up).
fn two_ctrl_c(pid: u32) {
    let tid = super::record_signals::signal_thread(pid);
    for _ in 0..2 {
        // SAFETY: a plain syscall with numbers; the thread belongs to the child.
        let r = unsafe { libc::syscall(libc::SYS_tgkill, pid as i32, tid, libc::SIGINT) };
        assert_eq!(r, 0);
    }
}

#[test]
fn two_ctrl_c_amid_filecreate_leave_no_file_behind() {
    // The second Ctrl-C removes what the run made and exits at once. A job thread amid a
    // create then (a few microseconds between the create and the file's entry on the list of
    // what to remove, in a loop that does little else) made a file after the list was gone
    // through, or put it there too late: until 2026-12-07 it stayed. Now no create starts once
    // the process is ending, and the ending waits for those under way (`ending.rs`). Several
    // tries, on tmpfs, where creates are fastest and the window widest.
    let Ok(shm) = tempfile::tempdir_in("/dev/shm") else {
        skip!("no /dev/shm here");
        return;
    };
    for k in 0..4 {
        let dir = shm.path().join(format!("d{k}"));
        std::fs::create_dir(&dir).unwrap();
        let child = bin()
            .args([
                "run",
                "--ioengine=filecreate",
                "--nrfiles=4500",
                "--numjobs=2",
            ])
            .arg(format!("--directory={}", dir.display()))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::fs::read_dir(&dir).unwrap().nth(100).is_none() {
            assert!(Instant::now() < deadline, "the jobs never began creating");
            std::thread::sleep(Duration::from_micros(200));
        }
        std::thread::sleep(Duration::from_millis(k));
        two_ctrl_c(child.id());
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
        let left = names(&dir);
        assert!(
            left.is_empty(),
            "try {k}: {} files left, e.g. {:?}",
            left.len(),
            &left[..left.len().min(3)]
        );
    }
}
