//! fio's steady state (`ss`, `ss_dur`, `ss_ramp`, `ss_interval`): a job stops once its window
//! is steady, its JSON carries fio's `steadystate` block (criterion recomputed here from the
//! window's data, as fio's own test script does), a group_reporting group is judged as one,
//! and bad values are refused.

use serde_json::Value;

use super::{iogauge, run_json, stderr, tmp};

/// fio's criterion from a steadystate block's data (t/steadystate_tests.py's way).
fn criterion(ss: &Value) -> f64 {
    let spec = ss["ss"].as_str().unwrap();
    let key = if spec.starts_with("iops") {
        "iops"
    } else {
        "bw"
    };
    let data: Vec<f64> = ss["data"][key]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    let n = data.len() as f64;
    let mean = data.iter().sum::<f64>() / n;
    let value = if spec.contains("_slope") {
        let (sx, sx2) = (n * (n - 1.0) / 2.0, (n - 1.0) * n * (2.0 * n - 1.0) / 6.0);
        let sxy: f64 = data.iter().enumerate().map(|(i, y)| i as f64 * y).sum();
        (sxy - sx * data.iter().sum::<f64>() / n) / (sx2 - sx * sx / n)
    } else {
        data.iter().map(|y| (y - mean).abs()).fold(0.0, f64::max)
    };
    if spec.ends_with('%') {
        (100.0 * value / mean).abs()
    } else {
        value.abs()
    }
}

/// SNIA PTS: the last five values' range within 20% and best-fit excursion within 10% of
/// their average.
fn snia_steady(values: &[f64]) -> bool {
    let w = &values[values.len() - 5..];
    let mean = w.iter().sum::<f64>() / 5.0;
    let range =
        w.iter().cloned().fold(f64::MIN, f64::max) - w.iter().cloned().fold(f64::MAX, f64::min);
    let slope: f64 = w
        .iter()
        .enumerate()
        .map(|(i, y)| (i as f64 - 2.0) * (y - mean))
        .sum::<f64>()
        / 10.0;
    range <= 0.2 * mean && (slope * 4.0).abs() <= 0.1 * mean
}

fn pct(s: &Value) -> f64 {
    s.as_str().unwrap().trim_end_matches('%').parse().unwrap()
}

#[test]
fn a_steady_job_stops_and_says_so() {
    let d = tmp();
    let f = d.path().join("f");
    let fname = format!("--filename={}", f.display());
    // The null engine's rate is steady within 50% at once: the 4-sample window (2 s of
    // 500 ms samples) fills and the job stops, long before its 60 s.
    let r = run_json(
        &[
            &fname,
            "--ioengine=null",
            "--rw=read",
            "--size=1g",
            "--time_based",
            "--runtime=60",
            "--ss=iops:50%",
            "--ss_dur=2",
            "--ss_interval=500ms",
        ],
        0,
    );
    let j = &r["jobs"][0];
    let ss = &j["steadystate"];
    assert_eq!(ss["ss"], "iops:50.000000%");
    assert_eq!(
        (&ss["duration"], &ss["attained"]),
        (&Value::from(2), &Value::from(1))
    );
    assert_eq!(ss["data"]["iops"].as_array().unwrap().len(), 4);
    assert_eq!(ss["data"]["bw"].as_array().unwrap().len(), 4);
    let c = pct(&ss["criterion"]);
    assert!(c < 50.0, "{ss}");
    assert!(
        (c - criterion(ss)).abs() < 0.01 * c.max(1.0),
        "{c} vs {}: {ss}",
        criterion(ss)
    );
    let runtime = j["read"]["runtime"].as_u64().unwrap();
    assert!((2000..10_000).contains(&runtime), "stopped at {runtime} ms");
    // Never steady (no deviation is below 0%): the job runs its time, the block says so.
    let r = run_json(
        &[
            &fname,
            "--ioengine=null",
            "--rw=read",
            "--size=1g",
            "--time_based",
            "--runtime=2",
            "--ss=bw_slope:0",
            "--ss_dur=1",
            "--ss_interval=250ms",
        ],
        0,
    );
    let j = &r["jobs"][0];
    assert_eq!(j["steadystate"]["attained"], 0);
    assert_eq!(j["steadystate"]["data"]["bw"].as_array().unwrap().len(), 4);
    assert!(j["read"]["runtime"].as_u64().unwrap() >= 2000);
    // The text report says it too.
    let o = iogauge(&[
        "run",
        &fname,
        "--ioengine=null",
        "--rw=read",
        "--size=1g",
        "--time_based",
        "--runtime=30",
        "--ss=iops:50%",
        "--ss_dur=1",
        "--ss_interval=250ms",
    ]);
    assert!(
        super::stdout(&o).contains("steady iops:50.000000% over 1 s: attained"),
        "{}",
        super::stdout(&o)
    );
}

/// group_reporting: the group's jobs pool their samples into one check, all stop together,
/// and the one reported row carries the block.
#[test]
fn a_reporting_group_is_judged_as_one() {
    let d = tmp();
    let f = d.path().join("f");
    let r = run_json(
        &[
            &format!("--filename={}", f.display()),
            "--ioengine=null",
            "--rw=read",
            "--size=1g",
            "--numjobs=3",
            "--group_reporting",
            "--time_based",
            "--runtime=60",
            "--ss=iops:50%",
            "--ss_dur=1",
            "--ss_interval=250ms",
        ],
        0,
    );
    let jobs = r["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 1, "one row for the group");
    let ss = &jobs[0]["steadystate"];
    assert_eq!(ss["attained"], 1);
    // Each sample is the three jobs' IOPS together.
    let per_job: Vec<u64> = r["groups"][0]["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["read"]["iops"].as_f64().unwrap() as u64)
        .collect();
    let sum: u64 = per_job.iter().sum();
    let mean = ss["data"]["iops_mean"].as_u64().unwrap();
    assert!(
        mean > sum / 2 && mean < sum * 2,
        "the window's mean {mean} is the group's rate ({per_job:?})"
    );
    for j in r["groups"][0]["jobs"].as_array().unwrap() {
        let ns = j["elapsed_ns"].as_u64().unwrap();
        assert!(
            (1_000_000_000..30_000_000_000).contains(&ns),
            "{ns} ns of 60 s"
        );
        assert_eq!(
            j["steadystate"]["attained"], 1,
            "every job stopped with the group"
        );
    }
}

#[test]
fn bad_steady_state_options_are_refused() {
    let d = tmp();
    let f = d.path().join("f");
    let fname = format!("--filename={}", f.display());
    for (extra, want) in [
        (
            vec!["--ss=speed:1%", "--ss_dur=2"],
            "--steadystate=speed:1%: speed: expected iops, iops_slope",
        ),
        (vec!["--ss=iops", "--ss_dur=2"], "expected CRITERION:LIMIT"),
        (
            vec!["--ss=iops:-1", "--ss_dur=2"],
            "expected a limit of 0 or more",
        ),
        (
            vec!["--ss_dur=3", "--ss_interval=2"],
            "expected a multiple of the interval",
        ),
        (vec!["--ss_dur=1", "--ss_interval=1"], "at least twice"),
    ] {
        let mut args = vec!["run", fname.as_str(), "--size=1m", "--rw=read"];
        args.extend(extra.iter());
        let o = iogauge(&args);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{extra:?}: {}", stderr(&o));
        assert!(!f.exists());
    }
    // A reporting group whose jobs disagree.
    let o = iogauge(&[
        "run",
        &fname,
        "--size=1m",
        "--group_reporting",
        "--name=a",
        "--ss_dur=2",
        "--name=b",
        "--ss_dur=4",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("job b differs from job a in its group"),
        "{}",
        stderr(&o)
    );
    // Without ss_dur the others do nothing, and iogauge says so.
    let o = iogauge(&["run", &fname, "--size=1m", "--rw=read", "--ss=iops:1%"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("steadystate: has no effect without steadystate_duration"));
}

/// fio's own steadystate.fio, on a tmpfs file instead of /dev/null and /dev/zero and scaled
/// from minutes to seconds: both groups report their check with the example's criteria, and
/// the criterion fio would compute from the window.
#[test]
fn fios_steadystate_example_runs_on_a_file() {
    let example = std::path::Path::new("/usr/share/doc/fio/examples/steadystate.fio");
    if !example.exists() {
        skip!("fio's steadystate.fio: fio-examples is not installed (scripts/test-deps.sh)");
        return;
    }
    let d = super::shm_tmp();
    let mut args = vec!["job", example.to_str().unwrap(), "--output-format=json"];
    for set in [
        "filename=data",
        "size=8m",
        "runtime=6",
        "ss_dur=2",
        "ss_ramp=1",
        "ss_interval=500ms",
        "numjobs=2",
    ] {
        args.extend(["--set", set]);
    }
    let o = super::run_in(d.path(), &args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let jobs = r["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2, "one row per group (group_reporting)");
    for (j, ss_spec) in jobs.iter().zip(["iops:10.000000%", "bw_slope:1.000000%"]) {
        let ss = &j["steadystate"];
        assert_eq!(ss["ss"], ss_spec, "{j}");
        assert_eq!(ss["duration"], 2);
        let samples = ss["data"]["iops"].as_array().unwrap().len();
        assert_eq!(samples, 4, "{ss}");
        let c = pct(&ss["criterion"]);
        assert!(
            (c - criterion(ss)).abs() <= 0.02 * c.max(0.5),
            "{c} vs {}",
            criterion(ss)
        );
        let limit: f64 = ss_spec
            .split(':')
            .nth(1)
            .unwrap()
            .trim_end_matches('%')
            .parse()
            .unwrap();
        assert_eq!(ss["attained"] == 1, c < limit, "{ss}");
    }
    assert!(super::entries(d.path()).is_empty());
}

/// `--until-steady`: rounds on the same files until SNIA's 5-round window is steady;
/// `--precondition`: sequential passes first, exactly N times the files' size, untimed.
#[test]
fn rounds_run_until_steady_after_preconditioning() {
    let d = super::shm_tmp();
    let f = d.path().join("f");
    let fname = format!("--filename={}", f.display());
    // The null engine is as steady as anything gets: five rounds, then the verdict.
    let r = run_json(
        &[
            &fname,
            "--ioengine=null",
            "--rw=randread",
            "--size=64m",
            "--time_based",
            "--runtime=300ms",
            "--until-steady",
        ],
        0,
    );
    let rounds = &r["rounds"];
    assert_eq!(rounds["metric"], "iops", "random: IOPS");
    assert_eq!(rounds["max_rounds"], 25);
    // The rounds stopped at the first steady window, computed here by SNIA's rule.
    let values: Vec<f64> = rounds["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    let first_steady = (5..=values.len()).find(|&k| snia_steady(&values[..k]));
    match first_steady {
        Some(k) => {
            assert_eq!(
                k,
                values.len(),
                "stopped at the first steady window: {rounds}"
            );
            assert_eq!(rounds["steady"], true);
            assert!(rounds["range_pct"].as_f64().unwrap() <= 20.0);
            assert!(rounds["excursion_pct"].as_f64().unwrap() <= 10.0);
        }
        None => {
            assert_eq!(values.len(), 25, "not steady: all the rounds ran: {rounds}");
            assert_eq!(rounds["steady"], false);
        }
    }
    // Two passes over a 4 MiB file, then the 1 MiB-block sequential workload's rounds on
    // the same file, which is removed at the end.
    let r = run_json(
        &[
            &fname,
            "--rw=write",
            "--bs=1m",
            "--size=4m",
            "--precondition",
            "--until-steady",
            "--max-rounds=6",
        ],
        0,
    );
    let rounds = &r["rounds"];
    assert_eq!(rounds["metric"], "mb_per_s", "sequential: bandwidth");
    assert_eq!(rounds["precondition"]["passes"], 2);
    assert_eq!(rounds["precondition"]["bytes"], 2 * (4 << 20));
    let n = rounds["values"].as_array().unwrap().len();
    assert!((5..=6).contains(&n), "{rounds}");
    if n == 5 {
        assert_eq!(
            rounds["steady"], true,
            "stopped before its most: steady: {rounds}"
        );
    }
    // The job's figures are the last round's alone.
    assert_eq!(r["groups"][0]["jobs"][0]["write"]["bytes"], 4 << 20);
    assert!(!f.exists(), "created once, removed at the end");
    // The text says it.
    let o = iogauge(&["run", &fname, "--rw=write", "--size=1m", "--precondition=3"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        super::stdout(&o)
            .contains("Preconditioned: the files written sequentially 3 time(s), 3.00 MiB"),
        "{}",
        super::stdout(&o)
    );
    // Refused: preconditioning a workload that only reads; rounds with --repeat;
    // --max-rounds alone.
    for (extra, want) in [
        (
            vec!["--rw=read", "--precondition"],
            "--precondition: job job only reads",
        ),
        (
            vec!["--until-steady", "--repeat=3"],
            "--repeat with --until-steady",
        ),
        (
            vec!["--max-rounds=10"],
            "--max-rounds: goes with --until-steady",
        ),
    ] {
        let mut args = vec!["run", fname.as_str(), "--size=1m"];
        args.extend(extra.iter());
        let o = iogauge(&args);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{extra:?}: {}", stderr(&o));
        assert!(!f.exists());
    }
}
