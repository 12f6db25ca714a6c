//! fio's latency target (the queue depth search) and max_latency, in fio mode on tmpfs:
//! the depth found and fio's four JSON fields, the job failing with ETIMEDOUT where fio's
//! does, and the options refused without a target.

use super::*;

/// `iogauge fio` with JSON output on a file of its own on tmpfs; the exit code and the job.
fn fio_json(d: &Path, extra: &[&str]) -> (Option<i32>, Value) {
    let file = format!("--filename={}", d.join("f").display());
    let mut args = vec![
        "fio",
        "--name=lt",
        &file,
        "--size=32m",
        "--rw=randread",
        "--ioengine=io_uring",
        "--iodepth=16",
        "--output-format=json",
    ];
    args.extend_from_slice(extra);
    let o = iogauge(&args);
    let v: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(&o), stderr(&o)));
    (o.status.code(), v["jobs"][0].clone())
}

#[test]
fn a_latency_target_every_depth_meets_reaches_iodepth_and_reports_it_as_fio_does() {
    let d = shm_tmp();
    let (code, j) = fio_json(
        d.path(),
        &[
            "--latency_target=2s",
            "--latency_window=100ms",
            "--latency_percentile=99.5",
            "--time_based",
            "--runtime=3",
        ],
    );
    assert_eq!(code, Some(0), "{j}");
    // 1, 2, 4, 8, 16 held, 16 again: settled at iodepth, then measured at it.
    assert_eq!(j["latency_depth"], 16, "{j}");
    assert_eq!(j["latency_target"], 2_000_000_000u64, "in ns, as fio's");
    assert_eq!(j["latency_window"], 100_000, "in µs, as fio's");
    assert_eq!(j["latency_percentile"], 99.5);
    // The figures are the last windows', at depth 16: time spent at 16 (fio's bucket 16-31).
    let at16 = j["iodepth_level"]["16"].as_f64().unwrap();
    assert!(at16 > 90.0, "{}", j["iodepth_level"]);
    // Without a target the fields are not written.
    let (_, j) = fio_json(d.path(), &["--number_ios=100"]);
    assert!(j.get("latency_depth").is_none(), "{j}");
}

#[test]
fn a_target_no_depth_meets_fails_with_etimedout_as_fio_does() {
    let d = shm_tmp();
    let (code, j) = fio_json(
        d.path(),
        &[
            "--latency_target=1",
            "--latency_window=50ms",
            "--time_based",
            "--runtime=5",
        ],
    );
    assert_eq!(code, Some(1), "{j}");
    assert_eq!(j["error"], 110, "ETIMEDOUT: {j}");
    // max_latency: the first I/O slower than it fails the job; a loose one never does.
    let (code, j) = fio_json(d.path(), &["--max_latency=1", "--number_ios=1000"]);
    assert_eq!((code, j["error"].as_i64()), (Some(1), Some(110)), "{j}");
    let (code, j) = fio_json(d.path(), &["--max_latency=10s", "--number_ios=1000"]);
    assert_eq!(code, Some(0), "{j}");
    assert_eq!(j["read"]["total_ios"], 1000);
}

#[test]
fn the_target_s_companions_without_a_target_are_refused_in_one_line() {
    let d = tmp();
    for (opt, says) in [
        (
            "--latency_window=1s",
            "latency_window=1s: needs latency_target",
        ),
        (
            "--latency_percentile=99",
            "latency_percentile=99: needs latency_target",
        ),
        ("--latency_run=1", "latency_run=1: needs latency_target"),
        ("--latency_percentile=101", "a percentage from 0 to 100"),
    ] {
        let file = format!("--filename={}", d.path().join("f").display());
        let o = iogauge(&["run", &file, "--size=1m", opt]);
        assert_eq!(o.status.code(), Some(2), "{opt}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{opt}: {}", stderr(&o));
        assert_eq!(stderr(&o).lines().count(), 1);
        assert!(entries(d.path()).is_empty());
    }
}
