//! fio's directory engines on real directories: dircreate makes each directory as its
//! measured operation (mkdir, mode 0700) and the run removes what it made, whatever ends it;
//! dirstat stats each directory (the user's, used as they are, or ones the run makes);
//! dirdelete removes only directories the run made for it. rmdir never removes a directory
//! someone put something in. The system calls are checked with strace where it is installed.

use super::*;
use std::os::unix::fs::MetadataExt as _;

use super::fileops::names;

/// The calls `calls` that the run of `args` made, as strace shows them (None, printing why,
/// when strace is missing).
fn traced(calls: &str, args: &[&str]) -> Option<Vec<String>> {
    let Ok(out) = Command::new("strace")
        .args(["-f", "-qq", "-e", &format!("trace={calls}")])
        .arg(assert_cmd::cargo::cargo_bin!("iogauge"))
        .args(args)
        .output()
    else {
        skip!("strace is not installed (scripts/test-deps.sh installs it)");
        return None;
    };
    assert!(out.status.success(), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    Some(text.lines().map(str::to_string).collect())
}

#[test]
fn dircreate_makes_each_directory_as_its_operation_and_the_run_removes_them() {
    let d = shm_tmp();
    let dir = format!("--directory={}", d.path().display());
    let args = [
        "run",
        &dir,
        "--ioengine=dircreate",
        "--nrfiles=40",
        "--rw=write",
        "--output-format=json",
    ];
    let r = run_json(&args[1..], 0);
    // One mkdir per directory, counted as fio counts it: one 4 KiB block each.
    assert_eq!(counts(job(&r)), (0, 0, 40, 40 * 4096));
    assert_eq!(job(&r)["write"]["lat_ns"]["count"], 40);
    let data = job(&r)["data"].as_str().unwrap().to_string();
    assert!(data.contains("one directory's mkdir"), "{data}");
    assert!(entries(d.path()).is_empty(), "{:?}", names(d.path()));
    if let Some(lines) = traced("mkdir,mkdirat,rmdir,unlinkat", &args) {
        let job_dir = |l: &&String| l.contains("job.0.");
        let mkdirs: Vec<_> = lines
            .iter()
            .filter(job_dir)
            .filter(|l| l.starts_with("[pid") && l.contains("mkdirat(") && l.contains("0700"))
            .collect();
        assert_eq!(mkdirs.len(), 40, "{lines:#?}");
        let removed = lines
            .iter()
            .filter(job_dir)
            .filter(|l| l.contains("AT_REMOVEDIR) = 0"))
            .count();
        assert_eq!(removed, 40, "{lines:#?}");
    }

    // Kept: the directories are there, mode 0700, each marked as iogauge's.
    run_json(&[&dir, "--ioengine=dircreate", "--nrfiles=3", "--keep"], 0);
    assert_eq!(names(d.path()), ["job.0.0", "job.0.1", "job.0.2"]);
    for p in entries(d.path()) {
        let m = std::fs::symlink_metadata(&p).unwrap();
        assert!(m.is_dir() && m.mode() & 0o777 == 0o700, "{}", p.display());
    }
    // The names are taken now: a mkdir would fail. Refused in one line, nothing touched.
    let o = iogauge(&["run", &dir, "--ioengine=dircreate", "--nrfiles=3"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("job.0.0: exists") && e.contains("measured operation"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "{e}");
    // A second pass would find them made (fio's fails with EEXIST): refused.
    let o = iogauge(&[
        "run",
        &dir,
        "--ioengine=dircreate",
        "--loops=2",
        "--nrfiles=3",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("makes each directory once"),
        "{}",
        stderr(&o)
    );
    assert_eq!(names(d.path()), ["job.0.0", "job.0.1", "job.0.2"]);
}

#[test]
fn dirstat_stats_the_users_directories_as_they_are_and_makes_the_missing_ones() {
    let d = shm_tmp();
    let p = d.path();
    // The user's directories, with files of theirs in them; the others are missing.
    for i in 0..5 {
        std::fs::create_dir(p.join(format!("job.0.{i}"))).unwrap();
        std::fs::write(p.join(format!("job.0.{i}/theirs")), format!("{i}")).unwrap();
    }
    let dir = format!("--directory={}", p.display());
    let r = run_json(
        &[
            &dir,
            "--ioengine=dirstat",
            "--nrfiles=8",
            "--loops=3",
            "--stat_type=statx",
        ],
        0,
    );
    assert_eq!(counts(job(&r)), (24, 24 * 4096, 0, 0));
    // The user's directories stay, with their files; the run's three are gone.
    assert_eq!(
        names(p),
        ["job.0.0", "job.0.1", "job.0.2", "job.0.3", "job.0.4"]
    );
    for i in 0..5 {
        let f = p.join(format!("job.0.{i}/theirs"));
        assert_eq!(std::fs::read_to_string(f).unwrap(), format!("{i}"));
    }
    // A name that is a file is not a directory to stat: refused in one line.
    std::fs::write(p.join("job.0.6"), b"x").unwrap();
    let o = iogauge(&["run", &dir, "--ioengine=dirstat", "--nrfiles=8"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("job.0.6: not a directory"),
        "{}",
        stderr(&o)
    );
    assert_eq!(stderr(&o).lines().count(), 1);
    // stat_type belongs to filestat and dirstat.
    let o = iogauge(&["run", &dir, "--ioengine=dircreate", "--stat_type=lstat"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("applies only to ioengine=filestat or dirstat, not dircreate"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn dirdelete_removes_the_directories_it_made_and_nothing_else() {
    let d = tmp();
    let p = d.path();
    let dir = format!("--directory={}", p.display());
    let r = run_json(
        &[
            &dir,
            "--ioengine=dirdelete",
            "--nrfiles=30",
            "--rw=randwrite",
        ],
        0,
    );
    assert_eq!(counts(job(&r)), (0, 0, 30, 30 * 4096));
    assert!(entries(p).is_empty());

    // The user's directory where a name falls: refused before anything is made.
    std::fs::create_dir(p.join("job.0.2")).unwrap();
    let o = iogauge(&["run", &dir, "--ioengine=dirdelete", "--nrfiles=5"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("job.0.2: exists") && e.contains("removes only directories"),
        "{e}"
    );
    assert_eq!(names(p), ["job.0.2"]);
    let o = iogauge(&[
        "run",
        &dir,
        "--ioengine=dirdelete",
        "--time_based",
        "--runtime=1",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("removes each directory once"),
        "{}",
        stderr(&o)
    );
    assert!(p.join("job.0.2").is_dir());
}

#[test]
fn a_dircreate_that_runs_out_of_inodes_stops_reports_and_removes_what_it_made() {
    super::fileops::out_of_inodes_stops_reports_and_removes_what_it_made("dircreate");
}

#[test]
fn ctrl_c_during_dircreate_removes_every_directory_it_made() {
    super::fileops::ctrl_c_removes_everything_it_made("dircreate");
}
