//! Scale-out over MPI. Without the `mpi` feature: a launch by mpirun is refused, never run as
//! N independent copies. With it (`cargo test --features mpi`, OpenMPI's mpirun): 4 ranks on
//! this host merge into one report on rank 0 — sums equal the ranks' sums, the merged latency
//! histogram is the sum of the ranks' and its p99 is read from it, the host is named — and a
//! rank that cannot start stops every rank before any creates a file.

use std::process::Command;

use super::{entries, stderr, tmp};

fn mpirun() -> Option<Command> {
    let ok = Command::new("mpirun")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        skip!("mpirun is not installed (scripts/test-deps.sh installs openmpi-bin)");
        return None;
    }
    let mut c = Command::new("mpirun");
    // A hang fails the test instead of holding CI.
    c.args([
        "--allow-run-as-root",
        "--oversubscribe",
        "--timeout",
        "180",
        "-n",
        "4",
    ]);
    Some(c)
}

/// `iogauge ARGS` on 4 ranks; None (after saying why) without mpirun.
#[cfg(feature = "mpi")]
fn launch<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Option<std::process::Output> {
    let mut mpi = mpirun()?;
    Some(
        mpi.arg(super::bin().get_program())
            .args(args)
            .output()
            .unwrap(),
    )
}

#[cfg(not(feature = "mpi"))]
#[test]
fn a_build_without_mpi_refuses_a_launch() {
    let d = tmp();
    let f = d.path().join("f");
    let fname = format!("--filename={}", f.display());
    // The launcher's environment alone (OpenMPI's and PMI's).
    for env in [
        [("OMPI_COMM_WORLD_RANK", "1"), ("OMPI_COMM_WORLD_SIZE", "4")],
        [("PMI_RANK", "0"), ("PMI_SIZE", "4")],
    ] {
        let o = super::bin()
            .args(["run", &fname, "--size=1m", "--rw=write"])
            .envs(env)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
        assert!(stderr(&o).contains("built without MPI"), "{}", stderr(&o));
        assert!(stderr(&o).contains("4 independent copies"));
        assert!(!f.exists());
    }
    // Reading a report is not a run: allowed.
    let o = super::bin()
        .args(["options"])
        .envs([("OMPI_COMM_WORLD_RANK", "1"), ("OMPI_COMM_WORLD_SIZE", "4")])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    // A real launch.
    let Some(mut mpi) = mpirun() else {
        return;
    };
    let o = mpi
        .arg(super::bin().get_program())
        .args(["run", &fname, "--size=1m", "--rw=write"])
        .output()
        .unwrap();
    assert_ne!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("built without MPI"), "{}", stderr(&o));
    assert!(entries(d.path()).is_empty());
}

#[cfg(feature = "mpi")]
#[test]
fn ranks_merge_into_one_report() {
    use serde_json::Value;
    let Some(mut mpi) = mpirun() else {
        return;
    };
    let d = super::shm_tmp();
    let o = mpi
        .arg(super::bin().get_program())
        .args([
            "run",
            &format!("--filename={}", d.path().join("data").display()),
            "--size=8m",
            "--rw=randread",
            "--time_based",
            "--runtime=1",
            "--output-format=json",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // One document: rank 0's, for everyone.
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let host = rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .to_string();
    let s = &r["scaleout"];
    assert_eq!(s["ranks"], 4);
    assert_eq!(s["hosts"][0]["host"], host);
    assert_eq!(s["hosts"][0]["ranks"], serde_json::json!([0, 1, 2, 3]));
    assert!(s["groups"][0]["start_skew_ms"].as_f64().unwrap() >= 0.0);
    // One host, one clock: the measured offsets are round-trip noise.
    let offset = s["max_clock_offset_ms"].as_f64().unwrap();
    assert!((0.0..50.0).contains(&offset), "{offset} ms");
    let g = &r["groups"][0];
    let jobs = g["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 4);
    for (k, j) in jobs.iter().enumerate() {
        assert_eq!(j["name"], format!("job@{host}#{k}"));
        // Each rank its own file.
        let path = j["files"][0]["path"].as_str().unwrap().to_string();
        assert!(path.ends_with(&format!("data.r{k}")), "{path}");
    }
    let sum = |k: &str| {
        jobs.iter()
            .map(|j| j["read"][k].as_u64().unwrap())
            .sum::<u64>()
    };
    let total = &g["total"]["read"];
    assert_eq!(total["ios"].as_u64().unwrap(), sum("ios"));
    assert_eq!(total["bytes"].as_u64().unwrap(), sum("bytes"));
    // The merged histogram is the ranks' added bucket by bucket; its p99 is read from it.
    let mut merged = std::collections::BTreeMap::<(u64, u64), u64>::new();
    for j in jobs {
        for b in j["read"]["lat_ns"]["histogram_ns"].as_array().unwrap() {
            let (lo, hi, n) = (
                b[0].as_u64().unwrap(),
                b[1].as_u64().unwrap(),
                b[2].as_u64().unwrap(),
            );
            *merged.entry((lo, hi)).or_default() += n;
        }
    }
    let got: Vec<(u64, u64, u64)> = total["lat_ns"]["histogram_ns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b[0].as_u64().unwrap(),
                b[1].as_u64().unwrap(),
                b[2].as_u64().unwrap(),
            )
        })
        .collect();
    let want: Vec<(u64, u64, u64)> = merged.iter().map(|(&(lo, hi), &n)| (lo, hi, n)).collect();
    assert_eq!(got, want);
    let count: u64 = want.iter().map(|b| b.2).sum();
    assert_eq!(count, sum("ios"));
    let mut seen = 0;
    let (lo, hi, _) = *want
        .iter()
        .find(|b| {
            seen += b.2;
            seen as f64 >= 0.99 * count as f64
        })
        .unwrap();
    let p99 = total["lat_ns"]["percentiles"]["99.000000"]
        .as_u64()
        .unwrap();
    assert!(
        (lo..=hi).contains(&p99),
        "p99 {p99} outside the merged bucket [{lo}, {hi}]"
    );
    // The fio part carries the aggregate: one row.
    assert_eq!(r["jobs"].as_array().unwrap().len(), 1);
    // The HTML page draws the host rows from the same report.
    let saved = d.path().join("r.json");
    std::fs::write(&saved, &o.stdout).unwrap();
    let html = super::iogauge(&["report", saved.to_str().unwrap()]);
    let page = super::stdout(&html);
    assert!(
        page.contains("<h2 id=\"scaleout\">Scale-out</h2>"),
        "{page}"
    );
    assert!(page.contains(&format!(
        "<td class=\"l\">{host}</td><td class=\"l\">0,1,2,3</td>"
    )));
    std::fs::remove_file(&saved).unwrap();
    assert!(entries(d.path()).is_empty(), "every rank removed its file");
}

#[cfg(feature = "mpi")]
#[test]
fn a_rank_that_cannot_start_stops_every_rank_before_any_file_is_made() {
    let Some(mut mpi) = mpirun() else {
        return;
    };
    let d = tmp();
    // Rank 2's file is a directory: it cannot start.
    std::fs::create_dir(d.path().join("f2")).unwrap();
    let o = mpi
        .arg(super::bin().get_program())
        .args([
            "run",
            &format!("--filename={}/f$rank", d.path().display()),
            "--size=1m",
            "--rw=write",
        ])
        .output()
        .unwrap();
    // A usage error on rank 2: every rank's code is the worst one's.
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    let said: Vec<&str> = e.lines().filter(|l| l.starts_with("iogauge:")).collect();
    // Rank 0 says each reason once, naming its ranks; not once per rank.
    assert_eq!(said.len(), 2, "{e}");
    assert!(
        said[0].starts_with("iogauge: rank 2 (") && said[0].contains("f2: not a regular file"),
        "{e}"
    );
    assert!(
        said[1].starts_with("iogauge: ranks 0,1,3 (") && said[1].contains("another rank"),
        "{e}"
    );
    assert_eq!(
        entries(d.path()),
        [d.path().join("f2")],
        "no other rank made its file"
    );
}

/// A directory per rank, `d0` to `d3`, rank 2's a 2 MiB tmpfs that fills at once (None: cannot
/// mount here, skipped). Fields drop in order: unmounted first, then removed.
#[cfg(feature = "mpi")]
struct RankDirs {
    _small: super::SmallFs,
    dir: tempfile::TempDir,
}

#[cfg(feature = "mpi")]
impl RankDirs {
    fn new() -> Option<RankDirs> {
        let dir = tmp();
        for k in 0..4 {
            std::fs::create_dir(dir.path().join(format!("d{k}"))).unwrap();
        }
        let small = super::SmallFs::mount_at(&dir.path().join("d2"), "2m")?;
        Some(RankDirs { _small: small, dir })
    }

    fn path(&self) -> &std::path::Path {
        self.dir.path()
    }

    /// Every rank removed its file.
    fn assert_emptied(&self) {
        for k in 0..4 {
            let dir = self.path().join(format!("d{k}"));
            assert!(entries(&dir).is_empty(), "rank {k} removed its file");
        }
    }
}

/// The merged report names rank 2's full file system as the error.
#[cfg(feature = "mpi")]
fn blames_rank_2_filling(r: &serde_json::Value) {
    let errors = r["errors"].to_string();
    assert!(
        errors.contains("rank 2") && errors.contains("No space left on device"),
        "{errors}"
    );
}

/// A rank whose write fails mid-run (its file system fills) stops every rank within moments:
/// rank 0 reports the failing rank's error and each rank's partial figures, and every rank
/// removes its file.
#[cfg(feature = "mpi")]
#[test]
fn a_rank_failing_mid_run_stops_every_rank() {
    use serde_json::Value;
    let Some(mut mpi) = mpirun() else {
        return;
    };
    // Rank 2 writes to a 2 MiB tmpfs.
    let Some(d) = RankDirs::new() else {
        return;
    };
    let started = std::time::Instant::now();
    let o = mpi
        .arg(super::bin().get_program())
        .args([
            "run",
            &format!("--filename={}/d$rank/f", d.path().display()),
            "--size=8m",
            "--rw=write",
            "--fallocate=none",
            "--time_based",
            "--runtime=60",
            "--skip-space-check",
            "--output-format=json",
        ])
        .output()
        .unwrap();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "the others stopped with it, not after their 60 s"
    );
    assert_ne!(o.status.code(), Some(0));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    blames_rank_2_filling(&r);
    let warnings = r["warnings"].to_string();
    assert!(
        warnings.contains("stopped early because rank 2 stopped"),
        "{warnings}"
    );
    // Partial figures from every rank, in the merged total.
    let jobs = r["groups"][0]["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 4);
    assert!(
        jobs.iter()
            .all(|j| j["write"]["bytes"].as_u64().unwrap() > 0)
    );
    d.assert_emptied();
}

/// A rank that fails in the first of two groups while the others, done with it, already wait
/// to start the second: they stop there (no abort), rank 0 reports every rank's first group
/// and the failing rank's error, the exit code is the failure's (1, not an interruption's),
/// and every rank removes its file.
#[cfg(feature = "mpi")]
#[test]
fn a_rank_failing_before_the_next_group_stops_the_others_there() {
    use serde_json::Value;
    let Some(mut mpi) = mpirun() else {
        return;
    };
    let Some(d) = RankDirs::new() else {
        return;
    };
    let job = d.path().join("two.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\nfilename={}/d$rank/f\nsize=8m\nfallocate=none\n\n[w]\nrw=write\n\n\
             [r]\nstonewall\nrw=read\n",
            d.path().display()
        ),
    )
    .unwrap();
    let o = mpi
        .arg(super::bin().get_program())
        .arg("job")
        .arg(&job)
        .args(["--skip-space-check", "--output-format=json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        !stderr(&o).contains("MPI_ABORT"),
        "no abort: {}",
        stderr(&o)
    );
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["interrupted"], false, "a failure, not an interruption");
    blames_rank_2_filling(&r);
    let groups = r["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 1, "the second group ran nowhere");
    assert_eq!(groups[0]["jobs"].as_array().unwrap().len(), 4);
    assert_eq!(r["scaleout"]["ranks"], 4);
    d.assert_emptied();
}

/// Ctrl-C at mpirun: OpenMPI sends each rank SIGCONT, SIGTERM a second later, SIGKILL a second
/// after that. The ranks stop at SIGTERM, remove their files, and rank 0 writes the merged
/// partial report before MPI_Finalize (which waits on mpirun, by then ending the job): whole
/// with --output, and, printed to stdout, also whole in a file of its own in the working
/// directory, since mpirun forwards only the first few KiB of it.
#[cfg(feature = "mpi")]
#[test]
fn ctrl_c_at_mpirun_gives_the_partial_result() {
    use serde_json::Value;
    use std::time::{Duration, Instant};
    let d = super::shm_tmp();
    let cwd = tmp();
    for to_file in [true, false] {
        let out = d.path().join("report.json");
        let Some(mut mpi) = mpirun() else {
            return;
        };
        mpi.current_dir(cwd.path())
            .arg(super::bin().get_program())
            .args([
                "run",
                &format!("--filename={}/f$rank", d.path().display()),
                "--size=4m",
                "--rw=randread",
                "--time_based",
                "--runtime=60",
                "--output-format=json",
            ]);
        if to_file {
            mpi.arg(format!("--output={}", out.display()));
        } else {
            mpi.stdout(std::process::Stdio::null());
        }
        let child = mpi.stderr(std::process::Stdio::piped()).spawn().unwrap();
        // Running once every rank's file is there.
        let started = Instant::now();
        while (0..4).any(|k| !d.path().join(format!("f{k}")).exists()) {
            assert!(started.elapsed() < Duration::from_secs(30), "never started");
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_millis(1500));
        let stopped = Instant::now();
        let killed = Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let o = child.wait_with_output().unwrap();
        assert!(
            stopped.elapsed() < Duration::from_secs(15),
            "stopped at Ctrl-C"
        );
        let saved = if to_file {
            out.clone()
        } else {
            let partial: Vec<_> = entries(cwd.path())
                .into_iter()
                .filter(|p| p.to_string_lossy().ends_with("-partial.json"))
                .collect();
            assert_eq!(partial.len(), 1, "{partial:?} {}", stderr(&o));
            partial[0].clone()
        };
        let text = std::fs::read_to_string(&saved).unwrap();
        let r: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("a whole report ({e}): {text}\n{}", stderr(&o)));
        assert_eq!(r["interrupted"], true);
        assert_eq!(r["scaleout"]["ranks"], 4);
        let jobs = r["groups"][0]["jobs"].as_array().unwrap();
        assert_eq!(jobs.len(), 4);
        assert!(jobs.iter().all(|j| j["read"]["ios"].as_u64().unwrap() > 0));
        let total: u64 = jobs
            .iter()
            .map(|j| j["read"]["ios"].as_u64().unwrap())
            .sum();
        assert_eq!(r["groups"][0]["total"]["read"]["ios"].as_u64(), Some(total));
        std::fs::remove_file(&saved).unwrap();
        let left = entries(d.path());
        assert!(left.is_empty(), "every rank removed its file: {left:?}");
    }
}

/// `--rank-stonewall` (IOR's stonewalling): when the first rank finishes a group, every other
/// rank stops it and goes on. Rank 0 reads 4 MiB once; ranks 1-3 would read for 60 s (an
/// MPMD launch gives them their own options). All stop within moments of rank 0's finish,
/// the report names rank 0 as where the group was stonewalled, and the figure is everything
/// the ranks moved until then.
#[cfg(feature = "mpi")]
#[test]
fn rank_stonewall_stops_every_rank_when_the_first_finishes() {
    use serde_json::Value;
    if mpirun().is_none() {
        return;
    }
    let d = super::shm_tmp();
    let bin = super::bin().get_program().to_owned();
    let file = format!("--filename={}/f$rank", d.path().display());
    let common = [
        "run",
        file.as_str(),
        "--size=4m",
        "--rw=read",
        "--rank-stonewall",
        "--output-format=json",
        // Each repetition stonewalls afresh, and the spread is over the merged totals.
        "--repeat=2",
        // Rank 0 runs other options than the others, on purpose.
        "--rank-mixed",
    ];
    let started = std::time::Instant::now();
    let o = Command::new("mpirun")
        .args(["--allow-run-as-root", "--oversubscribe", "--timeout", "180"])
        .args(["-n", "1"])
        .arg(&bin)
        .args(common)
        .args([":", "-n", "3"])
        .arg(&bin)
        .args(common)
        .args(["--time_based", "--runtime=60"])
        .output()
        .unwrap();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "ranks 1-3 stopped when rank 0 finished, not after their 60 s"
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let s = &r["scaleout"];
    assert_eq!(s["stonewall"], true);
    let at = s["groups"][0]["stonewalled_at"].as_str().unwrap();
    assert!(at.ends_with("#0"), "{at}");
    let jobs = r["groups"][0]["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 4);
    assert_eq!(jobs[0]["read"]["bytes"].as_u64(), Some(4 << 20));
    assert!(
        jobs.iter()
            .all(|j| j["read"]["bytes"].as_u64().unwrap() > 0)
    );
    let sum: u64 = jobs
        .iter()
        .map(|j| j["read"]["bytes"].as_u64().unwrap())
        .sum();
    assert_eq!(r["groups"][0]["total"]["read"]["bytes"].as_u64(), Some(sum));
    assert_eq!(r["interrupted"], false, "stonewalled, not interrupted");
    // Rank 0 ran another plan (size-based, the others time-based): said, not hidden.
    let warnings = r["warnings"].to_string();
    assert!(
        warnings.contains("rank(s) 1, 2, 3 ran other options than rank 0"),
        "{warnings}"
    );
    let rep = &r["repeat"];
    assert_eq!(rep["completed"], 2);
    // Of two repetitions, the last one's merged total is the spread's min or max, and rank
    // 0's own figure (what the spread was of before) is neither.
    let total = r["groups"][0]["total"]["read"]["mib_per_s"]
        .as_f64()
        .unwrap();
    let own = jobs[0]["read"]["mib_per_s"].as_f64().unwrap();
    let (lo, hi) = (
        rep["total_mib_per_s"]["min"].as_f64().unwrap(),
        rep["total_mib_per_s"]["max"].as_f64().unwrap(),
    );
    let sample = |x: f64| (x - lo).abs() <= 1e-6 * x || (x - hi).abs() <= 1e-6 * x;
    assert!(sample(total), "{lo} {total} {hi}");
    assert!(!sample(own), "{lo} {own} {hi}");
    assert!(entries(d.path()).is_empty());
}

/// `iogauge run ARGS --filename=DIR/f` without a launch is refused: exit 2, one line that
/// says `says`, nothing created in `dir`.
fn refused_alone(dir: &std::path::Path, args: &[&str], says: &str) {
    let o = super::bin()
        .arg("run")
        .args(args)
        .arg(format!("--filename={}", dir.join("f").display()))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains(says), "{}", stderr(&o));
    assert!(entries(dir).is_empty());
}

/// `--rank-stonewall` without a launch of several ranks is refused, nothing created.
#[test]
fn rank_stonewall_needs_a_launch() {
    let d = tmp();
    refused_alone(
        d.path(),
        &["--size=1m", "--rw=write", "--rank-stonewall"],
        "--rank-stonewall",
    );
}

/// `--rank-mixed` likewise.
#[test]
fn rank_mixed_needs_a_launch() {
    let d = tmp();
    refused_alone(
        d.path(),
        &["--size=1m", "--rw=write", "--rank-mixed"],
        "--rank-mixed",
    );
}

/// Ranks given other options than rank 0 (an MPMD launch: bs=1m on rank 0, 4k on the
/// others; or another --repeat, which would leave ranks waiting for a repetition that never
/// comes) are refused before any file is made: exit 2, one line from rank 0 naming the
/// ranks, the first difference each way, and --rank-mixed. The same launch with the ranks'
/// own file names differing runs.
#[cfg(feature = "mpi")]
#[test]
fn ranks_given_other_options_are_refused_before_any_file() {
    if mpirun().is_none() {
        return;
    }
    let d = super::shm_tmp();
    let bin = super::bin().get_program().to_owned();
    let mpmd = |zero: &[&str], rest: &[&str]| {
        let file = |n: &str| format!("--filename={}/{n}$rank", d.path().display());
        let common = ["run", "--size=1m", "--rw=write", "--output-format=json"];
        Command::new("mpirun")
            .args(["--allow-run-as-root", "--oversubscribe", "--timeout", "120"])
            .args(["-n", "1"])
            .arg(&bin)
            .args(common)
            .arg(file("a"))
            .args(zero)
            .args([":", "-n", "3"])
            .arg(&bin)
            .args(common)
            .arg(file("b"))
            .args(rest)
            .output()
            .unwrap()
    };
    for (zero, rest, says) in [
        (
            &["--bs=1m"][..],
            &["--bs=4k"][..],
            "rank(s) 1, 2, 3 were given other options than rank 0 (rank 1 has `[job] bs=4k`, \
             rank 0 has `[job] bs=1m`)",
        ),
        (&[][..], &["--repeat=2"][..], "rank 1 has `[tool] repeat=2`"),
    ] {
        let o = mpmd(zero, rest);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        let e = stderr(&o);
        let said: Vec<&str> = e.lines().filter(|l| l.starts_with("iogauge:")).collect();
        assert_eq!(said.len(), 1, "{e}");
        assert!(said[0].contains(says), "{e}");
        assert!(said[0].contains("--rank-mixed"), "{e}");
        assert!(entries(d.path()).is_empty());
    }
    // Only the file names differ: the same plan.
    let o = mpmd(&["--bs=64k"], &["--bs=64k"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(entries(d.path()).is_empty());
}

/// `--rank-timeout` likewise; a time that is zero or not a time is refused by name.
#[test]
fn rank_timeout_needs_a_launch_and_a_time() {
    let d = tmp();
    refused_alone(
        d.path(),
        &["--size=1m", "--rw=write", "--rank-timeout=30s"],
        "--rank-timeout=30s",
    );
    for (bad, says) in [
        ("0", "above zero"),
        ("soon", "soon"),
        ("", "--rank-timeout"),
    ] {
        let flag = format!("--rank-timeout={bad}");
        refused_alone(d.path(), &["--size=1m", "--rw=write", &flag], says);
    }
}

/// `--rank-jobs` likewise; a value it does not take is refused naming what it takes.
#[test]
fn rank_jobs_needs_a_launch_and_a_known_value() {
    let d = tmp();
    refused_alone(
        d.path(),
        &["--size=1m", "--rw=write", "--rank-jobs=host"],
        "--rank-jobs=host",
    );
    for bad in ["hosts", "", "1"] {
        let flag = format!("--rank-jobs={bad}");
        refused_alone(d.path(), &["--size=1m", "--rw=write", &flag], "each");
    }
}

/// `--rank-jobs=host`: the four ranks' jobs are one row per host and job (`NAME@HOST`, its
/// ranks named, their bytes and I/Os added up), the group's total and the host's row are
/// what they are with a row per rank, one target per file system of the host, and the merge
/// says what it cost rank 0.
#[cfg(feature = "mpi")]
#[test]
fn rank_jobs_host_folds_a_hosts_ranks_into_one_row() {
    let d = super::shm_tmp();
    let Some(o) = launch(&[
        "run",
        &format!("--filename={}", d.path().join("data").display()),
        "--size=2m",
        "--bs=64k",
        "--rw=write",
        "--name=w",
        "--output-format=json",
        "--rank-jobs=host",
    ]) else {
        return;
    };
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let host = rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .to_string();
    let s = &r["scaleout"];
    assert_eq!(s["jobs_per_host"], true);
    assert!(s["merge"]["received_bytes"].as_u64().unwrap() > 0);
    assert_eq!(s["groups"][0]["ranks"].as_array().unwrap().len(), 4);
    let g = &r["groups"][0];
    let jobs = g["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 1, "{jobs:?}");
    assert_eq!(jobs[0]["name"], format!("w@{host}"));
    assert_eq!(jobs[0]["ranks"], serde_json::json!([0, 1, 2, 3]));
    assert_eq!(jobs[0]["write"]["bytes"], 4 * 2 * 1048576);
    assert_eq!(jobs[0]["write"]["ios"], 4 * 32);
    assert_eq!(g["total"]["write"]["bytes"], 4 * 2 * 1048576);
    assert_eq!(r["targets"].as_array().unwrap().len(), 1, "one tmpfs");
    assert_eq!(
        r["jobs"].as_array().unwrap().len(),
        1,
        "fio's one aggregate row"
    );
    assert!(entries(d.path()).is_empty(), "every rank removed its file");
}

#[test]
fn rank_read_shift_needs_a_launch() {
    let d = tmp();
    refused_alone(
        d.path(),
        &["--size=1m", "--rw=read", "--rank-read-shift=1"],
        "--rank-read-shift=1",
    );
    for bad in ["0", "-1", "x", ""] {
        let flag = format!("--rank-read-shift={bad}");
        refused_alone(d.path(), &["--size=1m", "--rw=read", &flag], "host");
    }
}

/// IOR's `-C` (and `-R`): each rank writes its own file with verify headers, then reads the
/// file of the rank one further on and checks its blocks. Every read job opened its
/// neighbour's file (as the report names it), read and checked all of it, and every file is
/// gone at the end; on one host the report says the reads may come from its page cache.
#[cfg(feature = "mpi")]
#[test]
fn rank_read_shift_reads_another_ranks_files() {
    use serde_json::Value;
    let d = super::shm_tmp();
    let Some(o) = launch(&[
        "run",
        &format!("--filename={}/data", d.path().display()),
        "--size=1m",
        "--bs=64k",
        "--verify=crc32c",
        "--name=w",
        "--rw=write",
        "--name=r",
        "--rw=read",
        "--stonewall",
        "--rank-read-shift=1",
        "--output-format=json",
    ]) else {
        return;
    };
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["scaleout"]["read_shift"], 1);
    let groups = r["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 2);
    let data = |k: usize| format!("{}/data.r{k}", d.path().display());
    for (gi, want_rw) in [(0, "write"), (1, "read")] {
        let jobs = groups[gi]["jobs"].as_array().unwrap();
        assert_eq!(jobs.len(), 4);
        for k in 0..4 {
            let j = jobs
                .iter()
                .find(|j| j["name"].as_str().unwrap().ends_with(&format!("#{k}")))
                .unwrap();
            // Writers write their own file; readers read the next rank's, all of it.
            let (file, layout_has) = match want_rw {
                "write" => (data(k), "created".to_string()),
                _ => (data((k + 1) % 4), format!("rank {}'s file", (k + 1) % 4)),
            };
            let files = j["files"].as_array().unwrap();
            assert_eq!(files.len(), 1);
            assert_eq!(files[0]["path"], file.as_str(), "rank {k}, {want_rw}");
            assert!(
                files[0]["layout"].as_str().unwrap().contains(&layout_has),
                "{}",
                files[0]["layout"]
            );
            if want_rw == "read" {
                assert_eq!(files[0]["open_flags"][0], "O_RDONLY");
                // The neighbour's 16 blocks, each checked by its header as it was read.
                assert_eq!(j["verify"]["inline"], true);
                assert_eq!(j["verify"]["blocks"], 16, "rank {k}");
                assert_eq!(j["verify"]["bad_blocks"], 0, "rank {k}");
            }
            assert_eq!(j[want_rw]["bytes"], 1 << 20, "rank {k}, {want_rw}");
        }
    }
    // The merged read group carries the ranks' checks as one (the text's verify line).
    let v = &groups[1]["total"]["verify"];
    assert_eq!(v["blocks"], 64, "{v}");
    assert_eq!(v["bad_blocks"], 0, "{v}");
    let warnings = r["warnings"].to_string();
    assert!(
        warnings.contains("4 of 4 ranks read files written on their own host"),
        "{warnings}"
    );
    assert!(entries(d.path()).is_empty(), "every rank removed its file");
}

/// A reader checking another rank's blocks checks that rank's bytes: written without verify
/// headers, every block of every neighbour's file is reported bad, by file and offset.
#[cfg(feature = "mpi")]
#[test]
fn rank_read_shift_checks_the_neighbours_bytes() {
    use serde_json::Value;
    let d = super::shm_tmp();
    let Some(o) = launch(&[
        "run",
        &format!("--filename={}/data", d.path().display()),
        "--size=1m",
        "--bs=64k",
        "--name=w",
        "--rw=write",
        "--name=r",
        "--rw=read",
        "--verify=crc32c",
        "--stonewall",
        "--rank-read-shift=1",
        "--output-format=json",
    ]) else {
        return;
    };
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let readers = r["groups"][1]["jobs"].as_array().unwrap();
    assert_eq!(readers.len(), 4);
    for j in readers {
        let name = j["name"].as_str().unwrap();
        let k: usize = name.rsplit('#').next().unwrap().parse().unwrap();
        let theirs = format!("{}/data.r{}", d.path().display(), (k + 1) % 4);
        assert_eq!(j["verify"]["bad_blocks"], 16, "{name}");
        assert_eq!(
            j["verify"]["first_bad"][0]["file"],
            theirs.as_str(),
            "{name}"
        );
        assert_eq!(j["verify"]["first_bad"][0]["fault"]["kind"], "lost write");
    }
    assert!(entries(d.path()).is_empty());
}

/// A shift the launch cannot honour is refused before anything is created: on one host,
/// `host` has no other host to read from; a shift of all the ranks reads each rank's own.
/// Rank 0 says so once.
#[cfg(feature = "mpi")]
#[test]
fn rank_read_shift_the_launch_cannot_honour_is_refused() {
    let d = tmp();
    for (shift, says) in [
        ("host", "all 4 ranks run on one host"),
        ("8", "its own files"),
    ] {
        let Some(o) = launch(&[
            "run",
            "--size=1m",
            "--rw=read",
            &format!("--filename={}/f", d.path().display()),
            &format!("--rank-read-shift={shift}"),
        ]) else {
            return;
        };
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        let e = stderr(&o);
        let said: Vec<&str> = e.lines().filter(|l| l.starts_with("iogauge:")).collect();
        assert_eq!(said.len(), 1, "{e}");
        assert!(said[0].contains(says), "{e}");
        assert!(entries(d.path()).is_empty());
    }
}

/// Ranks meet between laying out their files and opening them when they read each other's:
/// rank 2 cannot lay out its file (its file system fills), so no rank opens another's, every
/// rank stops there, and rank 0 names rank 2's error; every file is removed.
#[cfg(feature = "mpi")]
#[test]
fn rank_read_shift_stops_every_rank_when_one_cannot_lay_out() {
    use serde_json::Value;
    let Some(d) = RankDirs::new() else {
        return;
    };
    let Some(o) = launch(&[
        "run",
        &format!("--filename={}/d$rank/f", d.path().display()),
        "--size=8m",
        "--rw=read",
        "--fallocate=none",
        "--skip-space-check",
        "--rank-read-shift=1",
        "--output-format=json",
    ]) else {
        return;
    };
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        !e.contains("cannot open rank"),
        "no rank opened another's: {e}"
    );
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    blames_rank_2_filling(&r);
    assert_eq!(r["groups"].as_array().unwrap().len(), 0, "nothing ran");
    d.assert_emptied();
}

/// SAS's iotest.sh run on every node at once: `mpirun iogauge iotest` runs each rank's streams
/// on its own files, rank 0 prints one iotest report for all (the verdict's per-core figure
/// over the hosts' cores) and writes the one results file; nothing is left in the target.
#[cfg(feature = "mpi")]
#[test]
fn iotest_runs_across_ranks() {
    let Some(mut mpi) = mpirun() else {
        return;
    };
    let d = super::shm_tmp();
    let cwd = tmp();
    let o = mpi
        .current_dir(cwd.path())
        .arg(super::bin().get_program())
        .args(["iotest", "-t"])
        .arg(d.path())
        .args(["-b", "64", "-s", "64", "-i", "1"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(out.matches("VERDICT").count(), 1, "{out}");
    assert!(out.contains("CPU cores on 1 host(s)"), "{out}");
    // Every rank's file was written and read: 4 streams of 4 MiB each way.
    assert!(out.contains("x 4 concurrent streams"), "{out}");
    for k in 0..4 {
        assert!(out.contains(&format!(".r{k}")), "rank {k}'s file: {out}");
    }
    let results: Vec<_> = entries(cwd.path());
    assert_eq!(results.len(), 1, "one results file, rank 0's: {results:?}");
    assert!(entries(d.path()).is_empty());
}

/// The merge's arithmetic, on real reports: a host's row is its bytes over its own span (its
/// first rank's start to its last rank's end), as the group's total is over the group's; two
/// ranks of one host that did not overlap do not add up to more than the host moved in any
/// second. Each rank's start and end are in the report, to compute any span again. Ranks
/// that ran other options than rank 0 are named in a warning, with the first difference.
/// A real report of one rank (64 MiB read from the null engine, with its histograms).
fn null_report() -> iogauge::result::RunReport {
    let d = tmp();
    let o = super::run_in(
        d.path(),
        &[
            "run",
            "--ioengine=null",
            "--size=64m",
            "--output-format=json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// `report` as the result of `rank` on `host`, its group started at `start` (its own clock).
fn rank_part(
    report: &iogauge::result::RunReport,
    rank: usize,
    host: &str,
    start: u64,
) -> iogauge::studies::scaleout::RankResult {
    iogauge::studies::scaleout::RankResult {
        rank,
        host: host.into(),
        exit_code: 0,
        group_start_unix_ns: vec![start],
        clock_offset_ns: 0,
        stonewall: false,
        stonewalled_by: Vec::new(),
        read_shift: None,
        report: report.clone(),
        device_checks: Vec::new(),
        rounds: None,
    }
}

/// `p` on a host whose device `vda` wrote `device_mib` MiB in its group while its jobs wrote
/// `mib` MiB, buffered and not flushed (what a rank sends for its host's devices' verdicts).
fn on_device(
    mut p: iogauge::studies::scaleout::RankResult,
    device_mib: u64,
    mib: u64,
) -> iogauge::studies::scaleout::RankResult {
    let device = serde_json::json!({
        "name": "vda", "major_minor": "254:0", "read_ios": 0, "read_merges": 0,
        "read_bytes": 0, "write_ios": device_mib, "write_merges": 0,
        "write_bytes": device_mib << 20, "read_ms": 0, "write_ms": 0, "in_queue_ms": 0,
        "util_pct": 50.0, "busy_ms": 500, "wall_ms": 1000,
    });
    p.report.groups[0].devices = vec![serde_json::from_value(device).unwrap()];
    p.device_checks = vec![Some(iogauge::result::DeviceCheck {
        group: format!("group 1 (w.r{})", p.rank),
        read: 0,
        written: mib << 20,
        buffered_reads: false,
        direct_reads: true,
        unflushed: true,
    })];
    p
}

/// The ranks on one host share its device: its counters are judged once, against all of the
/// host's ranks' jobs (not by each rank against its own share, which called the others'
/// writes another process's and gave one line per rank, each with its own figures).
#[test]
fn ranks_sharing_a_device_are_judged_together_once() {
    use iogauge::studies::scaleout::aggregate;
    let report = null_report();
    // Host a: four ranks of 32 MiB each, the fullest view of vda 300 MiB (each rank alone
    // would call 268 MiB of it another process's); host b: one rank, 32 MiB of 400 MiB.
    let a = [280, 300, 290, 295];
    let mut parts: Vec<_> = (0..4)
        .map(|r| on_device(rank_part(&report, r, "a", 0), a[r], 32))
        .collect();
    parts.push(on_device(rank_part(&report, 4, "b", 0), 400, 32));
    let verdicts = |r: &iogauge::studies::Report| -> Vec<String> {
        r.warnings
            .iter()
            .filter(|w| w.contains("the device (vda) wrote"))
            .cloned()
            .collect()
    };
    let (merged, _) = aggregate(parts.clone(), false);
    let said = verdicts(&merged);
    assert_eq!(said.len(), 1, "{:?}", merged.warnings);
    assert!(
        said[0].starts_with(
            "rank 4 (b): group 1 (w.r$rank): the device (vda) wrote 400.00 MiB while the jobs \
             wrote 32.00 MiB"
        ),
        "{said:?}"
    );
    // Host a's device busier still: one line for its four ranks, with their sum.
    for p in parts.iter_mut().take(4) {
        p.report.groups[0].devices[0].write_bytes = 700 << 20;
    }
    let (merged, _) = aggregate(parts, true);
    let said = verdicts(&merged);
    assert_eq!(said.len(), 2, "{:?}", merged.warnings);
    assert!(
        said[0].starts_with(
            "ranks 0,1,2,3 (a): group 1 (w.r$rank): the device (vda) wrote 700.00 MiB while \
             the jobs wrote 128.00 MiB"
        ),
        "{said:?}"
    );
    assert!(said[1].starts_with("rank 4 (b): "), "{said:?}");
}

#[test]
fn host_rows_are_bytes_over_the_hosts_span_and_other_plans_are_named() {
    use iogauge::studies::scaleout::aggregate;
    let report = null_report();
    let elapsed = report.groups[0].total.elapsed_ns;
    let bytes = report.groups[0].total.read.bytes;
    // Ranks 0 and 1 on host a, one after the other; rank 2 on b, with rank 0.
    let part = |rank: usize, host: &str, start: u64| rank_part(&report, rank, host, start);
    let t0 = 1_000_000_000_000;
    let parts = vec![
        part(0, "a", t0),
        part(1, "a", t0 + elapsed),
        part(2, "b", t0),
    ];
    let (merged, code) = aggregate(parts.clone(), false);
    assert_eq!(code, 0);
    let s = merged.scaleout.clone().unwrap();
    let a = &s.hosts.iter().find(|h| h.host == "a").unwrap().groups[0];
    let b = &s.hosts.iter().find(|h| h.host == "b").unwrap().groups[0];
    let rate = |bytes: u64, ns: u64| bytes as f64 / (ns as f64 / 1e9) / 1e6;
    // Host a moved twice the bytes over twice the time: one rank's rate, not two.
    assert!(
        (a.mb_per_s - rate(2 * bytes, 2 * elapsed)).abs() < 1e-6 * a.mb_per_s,
        "{a:?}"
    );
    assert!(
        (b.mb_per_s - rate(bytes, elapsed)).abs() < 1e-6 * b.mb_per_s,
        "{b:?}"
    );
    assert!(
        (a.span_ms - 2.0 * elapsed as f64 / 1e6).abs() < 1e-6,
        "{a:?}"
    );
    // The host rows add up to no more than the group's total.
    let total = merged.groups[0].total.read.mb_per_s;
    assert!((total - rate(3 * bytes, 2 * elapsed)).abs() < 1e-6 * total);
    let spans = &s.groups[0].ranks;
    assert_eq!(spans.len(), 3);
    assert_eq!(spans[1].start_ms, elapsed as f64 / 1e6);
    assert_eq!(spans[1].end_ms, 2.0 * elapsed as f64 / 1e6);

    assert!(!merged.warnings.iter().any(|w| w.contains("other options")));
    let names: Vec<&str> = merged.groups[0]
        .jobs
        .iter()
        .map(|j| j.name.as_str())
        .collect();
    let job = &report.groups[0].jobs[0].name;
    assert_eq!(
        names,
        [
            format!("{job}@a#0"),
            format!("{job}@a#1"),
            format!("{job}@b#2")
        ]
    );

    // A row per host and job (--rank-jobs=host), the results taken in any order: the same
    // total, host rows and windows; host a's two ranks are one row with both their bytes.
    let mut shuffled = parts.clone();
    shuffled.swap(1, 2);
    let mut m = iogauge::studies::scaleout::Merger::new(true);
    for p in shuffled {
        m.add(p);
    }
    let (folded, _) = m.finish().unwrap();
    let f = folded.scaleout.clone().unwrap();
    assert!(f.jobs_per_host && !s.jobs_per_host);
    assert_eq!(f.hosts, s.hosts, "the same host rows");
    assert_eq!(f.groups, s.groups, "the same windows and spans");
    let (t, ft) = (&merged.groups[0].total, &folded.groups[0].total);
    assert_eq!((ft.read.bytes, ft.read.ios), (t.read.bytes, t.read.ios));
    assert_eq!(ft.read.mb_per_s, t.read.mb_per_s);
    let lat = |d: &iogauge::result::DirReport| d.clat_ns.clone().or(d.lat_ns.clone()).unwrap();
    let (l, fl) = (lat(&t.read), lat(&ft.read));
    assert!(!l.histogram_ns.is_empty());
    assert_eq!(fl.histogram_ns, l.histogram_ns, "the same pooled histogram");
    assert_eq!(fl.percentiles, l.percentiles);
    let rows: Vec<(&str, &[usize], u64)> = folded.groups[0]
        .jobs
        .iter()
        .map(|j| {
            (
                j.name.as_str(),
                j.ranks.as_slice(),
                j.measurement.read.bytes,
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            (format!("{job}@a").as_str(), &[0, 1][..], 2 * bytes),
            (format!("{job}@b").as_str(), &[2][..], bytes)
        ]
    );

    // Ranks given other options (an MPMD launch): said, with the first difference.
    let mut other = part(2, "b", t0);
    other.report.groups[0].jobs[0]
        .options
        .insert("bs".into(), "8192".into());
    let (merged, _) = aggregate(vec![part(0, "a", t0), part(1, "a", t0), other], false);
    let w = merged
        .warnings
        .iter()
        .find(|w| w.contains("other options"))
        .expect("a warning");
    assert!(
        w.starts_with(
            "rank(s) 2 ran other options than rank 0 (rank 2 ran bs=8192 where rank 0 ran \
             bs=4096)"
        ),
        "{w}"
    );
}

/// A tree of host leaders (a row per host and job): each host's leader folds its host's
/// results, its merge goes to rank 0 as JSON (its windows on its own host's clock), and rank
/// 0 takes it in. The report is rank 0's merge of every result itself: the same host rows,
/// windows (shifted by the host's clock offset), totals, pooled histograms, job rows, warnings
/// and the ranks that ran other options.
#[test]
fn a_tree_of_host_leaders_merges_what_rank_0_alone_would() {
    use iogauge::studies::scaleout::{HostPart, Merger};
    let report = null_report();
    let elapsed = report.groups[0].total.elapsed_ns;
    let t0 = 1_000_000_000_000;
    // Host b's clock runs 3 s ahead of rank 0's.
    let ahead: i64 = 3_000_000_000;
    // Every rank on a host whose device wrote more than its jobs explain: a verdict per host.
    let part = |rank: usize, host: &str, start: u64| {
        on_device(rank_part(&report, rank, host, start), 900, 8)
    };
    let mut odd = part(5, "c", t0);
    odd.report.groups[0].jobs[0]
        .options
        .insert("bs".into(), "8192".into());
    odd.report.warnings.push("c's own warning".into());
    let on_rank_0_clock = vec![
        part(0, "a", t0),
        part(1, "a", t0 + elapsed),
        part(2, "b", t0),
        part(3, "b", t0 + elapsed / 2),
        part(4, "c", t0 + 2 * elapsed),
        odd,
    ];
    let mut flat = Merger::new(true);
    for p in on_rank_0_clock.clone() {
        flat.add(p);
    }
    let (flat, _) = flat.finish().unwrap();

    // Rank 0 adds its host's results; b's and c's leaders fold theirs (b's on its clock).
    let mut tree = Merger::new(true);
    let mut leaders = [Merger::new(true), Merger::new(true)];
    for mut p in on_rank_0_clock {
        match p.host.as_str() {
            "a" => tree.add(p),
            "b" => {
                p.group_start_unix_ns[0] += ahead as u64;
                leaders[0].add(p)
            }
            _ => leaders[1].add(p),
        }
    }
    for (m, (leader, offset)) in leaders.into_iter().zip([(2, ahead), (4, 0)]) {
        let wire = serde_json::to_vec(&HostPart {
            leader,
            merger: m,
            failed: Vec::new(),
            silent: Vec::new(),
            received_bytes: 0,
            receive_ms: 0.0,
        })
        .unwrap();
        let got: HostPart = serde_json::from_slice(&wire).unwrap();
        tree.absorb(got.merger, offset);
    }
    let (tree, _) = tree.finish().unwrap();
    let (f, t) = (
        flat.scaleout.clone().unwrap(),
        tree.scaleout.clone().unwrap(),
    );
    assert_eq!(t.hosts, f.hosts, "the same host rows");
    assert_eq!(t.groups, f.groups, "the same windows and spans");
    assert_eq!(t.ranks, 6);
    assert_eq!(t.max_clock_offset_ms, 3000.0);
    let (ft, tt) = (&flat.groups[0].total, &tree.groups[0].total);
    assert_eq!((tt.read.bytes, tt.read.ios), (ft.read.bytes, ft.read.ios));
    assert_eq!(tt.elapsed_ns, ft.elapsed_ns);
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs();
    assert!(close(tt.read.mb_per_s, ft.read.mb_per_s));
    let lat = |d: &iogauge::result::DirReport| d.clat_ns.clone().or(d.lat_ns.clone()).unwrap();
    let (fl, tl) = (lat(&ft.read), lat(&tt.read));
    assert_eq!(
        tl.histogram_ns, fl.histogram_ns,
        "the same pooled histogram"
    );
    assert_eq!(tl.percentiles, fl.percentiles);
    let rows = |r: &iogauge::studies::Report| {
        r.groups[0]
            .jobs
            .iter()
            .map(|j| (j.name.clone(), j.ranks.clone(), j.measurement.read.bytes))
            .collect::<Vec<_>>()
    };
    assert_eq!(rows(&tree), rows(&flat));
    assert_eq!(rows(&tree).len(), 3, "{:?}", rows(&tree));
    assert_eq!(tree.warnings, flat.warnings);
    let verdicts: Vec<&str> = tree
        .warnings
        .iter()
        .filter(|w| w.contains("the device (vda) wrote 900.00 MiB"))
        .map(|w| w.split(':').next().unwrap())
        .collect();
    assert_eq!(
        verdicts,
        ["ranks 0,1 (a)", "ranks 2,3 (b)", "ranks 4,5 (c)"]
    );
    assert!(
        tree.warnings
            .iter()
            .any(|w| w.starts_with("rank 5 (c): c's own warning")),
        "{:?}",
        tree.warnings
    );
    assert!(
        tree.warnings.iter().any(|w| w.starts_with(
            "rank(s) 5 ran other options than rank 0 (rank 5 ran bs=8192 where rank 0 ran \
             bs=4096)"
        )),
        "{:?}",
        tree.warnings
    );
}

/// One host, four ranks writing by `--directory` (each job named `w.r$rank` by design): the
/// text report gives the group's total once (the host's line points at it instead of a
/// second figure), each device of the host once with the ranks that ran on it, each warning
/// once with its ranks, and no "other options" warning for the names iogauge gave the ranks.
#[cfg(feature = "mpi")]
#[test]
fn one_host_reports_its_total_and_its_device_once() {
    let d = tmp();
    let Some(o) = launch(&[
        "run",
        &format!("--directory={}", d.path().display()),
        "--size=4m",
        "--bs=1m",
        "--rw=write",
        "--name=w",
    ]) else {
        return;
    };
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = super::stdout(&o);
    let all = format!("{text}{}", stderr(&o));
    let devices: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("  device "))
        .collect();
    if devices.is_empty() {
        skip!(
            "no block device below {}: the device line is not checked",
            d.path().display()
        );
    } else {
        assert_eq!(devices.len(), 1, "{text}");
        assert!(devices[0].contains(", rank(s) 0,1,2,3: "), "{text}");
    }
    assert_eq!(text.matches("all 4 jobs together").count(), 1, "{text}");
    assert!(
        text.contains("ranks 0,1,2,3 (the group's total above is this host's)"),
        "{text}"
    );
    assert!(!all.contains("ran other options"), "{all}");
    let mut warned: Vec<&str> = all.lines().filter(|l| l.starts_with("warning: ")).collect();
    let n = warned.len();
    warned.dedup();
    assert_eq!(warned.len(), n, "{all}");
    assert!(
        warned.iter().all(|w| !w.starts_with("warning: rank 1 ")),
        "a warning every rank gave is one line for all of them: {all}"
    );
    assert!(entries(d.path()).is_empty());
}

/// The process of `rank` among the iogauge ranks whose command line holds `marker`.
#[cfg(feature = "mpi")]
pub(super) fn rank_pid(marker: &str, rank: usize) -> Option<i32> {
    let want = format!("OMPI_COMM_WORLD_RANK={rank}");
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: i32 = e.file_name().to_str()?.parse().ok()?;
        let cmd = std::fs::read(e.path().join("cmdline")).ok()?;
        let env = std::fs::read(e.path().join("environ")).ok()?;
        let has = |b: &[u8], s: &str| b.split(|&c| c == 0).any(|w| w == s.as_bytes());
        let cmd_has = cmd.windows(marker.len()).any(|w| w == marker.as_bytes());
        (cmd_has && has(&env, &want)).then_some(pid)
    })
}

/// Starts 4 ranks of a 3 s timed read with `--rank-timeout=5s`, each on its own file in
/// `dir`, sends `signal` to rank 3 once all are running, and returns mpirun's output and how
/// long it took.
#[cfg(feature = "mpi")]
fn with_rank_3_signalled(
    dir: &std::path::Path,
    signal: &str,
    mpirun_args: &[&str],
) -> Option<(std::process::Output, std::time::Duration)> {
    use std::time::{Duration, Instant};
    let mut mpi = mpirun()?;
    mpi.args(mpirun_args);
    // Where a partial report would go after a signal: never the checkout.
    let cwd = tmp();
    let child = mpi
        .current_dir(cwd.path())
        .arg(super::bin().get_program())
        .args([
            "run",
            &format!("--filename={}/f$rank", dir.display()),
            "--size=4m",
            "--rw=read",
            "--time_based",
            "--runtime=3",
            "--rank-timeout=5s",
            "--output-format=json",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while (0..4).any(|k| !dir.join(format!("f{k}")).exists()) {
        assert!(started.elapsed() < Duration::from_secs(30), "never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    let marker = dir.to_str().unwrap();
    let pid = rank_pid(marker, 3).expect("rank 3's process");
    let sent = Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let o = child.wait_with_output().unwrap();
    // A stopped rank is continued, so mpirun can end it.
    let _ = Command::new("kill")
        .args(["-CONT", &pid.to_string()])
        .status();
    Some((o, started.elapsed()))
}

/// A rank that stalls (SIGSTOP, as a hung NFS client or a swapping node does) does not hang
/// the others: each waits at most --rank-timeout at the end, rank 0 reports what the others
/// measured, naming the silent rank and its host, marks the report partial and exits
/// non-zero; every other rank's file is removed.
#[cfg(feature = "mpi")]
#[test]
fn a_stalled_rank_is_given_up_and_named() {
    use serde_json::Value;
    let d = super::shm_tmp();
    let Some((o, took)) = with_rank_3_signalled(d.path(), "STOP", &[]) else {
        return;
    };
    assert!(
        took < std::time::Duration::from_secs(40),
        "ended within the deadline: {took:?}"
    );
    assert_ne!(o.status.code(), Some(0), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", stderr(&o));
    });
    let errors = r["errors"].to_string();
    assert!(
        errors.contains("rank 3 (") && errors.contains("did not answer within 5 s"),
        "{errors}"
    );
    assert!(errors.contains("the report is partial"), "{errors}");
    let jobs = r["groups"][0]["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 3, "ranks 0, 1 and 2 reported");
    assert!(jobs.iter().all(|j| j["read"]["ios"].as_u64().unwrap() > 0));
    for k in 0..3 {
        assert!(
            !d.path().join(format!("f{k}")).exists(),
            "rank {k}'s file removed"
        );
    }
}

/// A rank killed outright (SIGKILL, as the OOM killer does): mpirun ends the job, and every
/// surviving rank removes its file before it goes, instead of blocking on a send to the
/// dead rank. (The killed rank's own file cannot be removed by it; the next run on that path
/// says it found the leftover and takes it over.)
#[cfg(feature = "mpi")]
#[test]
fn a_killed_rank_leaves_no_file_of_the_others() {
    let d = super::shm_tmp();
    let Some((o, took)) = with_rank_3_signalled(d.path(), "KILL", &[]) else {
        return;
    };
    assert!(
        took < std::time::Duration::from_secs(40),
        "ended within the deadline: {took:?}"
    );
    assert_ne!(o.status.code(), Some(0), "{}", stderr(&o));
    for k in 0..3 {
        assert!(
            !d.path().join(format!("f{k}")).exists(),
            "rank {k}'s file removed"
        );
    }
}

/// The same kill under `mpirun --enable-recovery` (OpenMPI keeps the job when a process
/// dies): rank 0 lives to report. Its report (on stdout, and in its partial file) holds the
/// three ranks that answered and names rank 3 as the one that did not, within the deadline;
/// the three ranks' files are removed (rank 3's own stays: it was killed). mpirun's own exit
/// status under recovery is OpenMPI's (0 here, whatever rank 0 exits with), so it is not
/// checked: the report says what happened.
#[cfg(feature = "mpi")]
#[test]
fn a_killed_rank_under_enable_recovery_is_named_in_rank_0s_report() {
    let d = super::shm_tmp();
    let Some((o, took)) = with_rank_3_signalled(d.path(), "KILL", &["--enable-recovery"]) else {
        return;
    };
    assert!(
        took < std::time::Duration::from_secs(40),
        "ended within the deadline: {took:?}"
    );
    let r: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: no report on stdout: {}", stderr(&o)));
    let errors = r["errors"].to_string();
    assert!(
        errors.contains("rank 3 (") && errors.contains("did not answer"),
        "{errors}"
    );
    assert_eq!(r["scaleout"]["ranks"], 3, "the three that answered");
    for k in 0..3 {
        assert!(
            !d.path().join(format!("f{k}")).exists(),
            "rank {k}'s file removed"
        );
    }
}

/// The commands a job runs (exec_prerun, exec_postrun, ioengine=exec) write their output
/// after the job's name in the working directory the ranks share: refused under a launch,
/// before any file is made, with one line from rank 0.
#[cfg(feature = "mpi")]
#[test]
fn commands_a_job_runs_are_refused_under_a_launch() {
    let d = tmp();
    let dir = format!("--directory={}", d.path().display());
    for extra in [
        &["--exec_prerun=sync"][..],
        &[
            "--ioengine=exec",
            "--program=true",
            "--time_based",
            "--runtime=1",
        ],
    ] {
        let mut args = vec!["run", dir.as_str(), "--size=1m", "--name=j"];
        args.extend_from_slice(extra);
        let Some(o) = launch(&args) else {
            return;
        };
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", stderr(&o));
        let e = stderr(&o);
        let said: Vec<&str> = e.lines().filter(|l| l.starts_with("iogauge:")).collect();
        assert_eq!(said.len(), 1, "{e}");
        assert!(said[0].contains("not supported under mpirun/srun"), "{e}");
        assert!(entries(d.path()).is_empty());
    }
}
