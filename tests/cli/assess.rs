//! `iogauge assess`: SAS's streams on tmpfs (exact bytes per stream, the verdicts computed
//! from the report's own figures), a database's I/O on a loop device's ext4 (O_DIRECT reads,
//! O_DSYNC log writes, the device's own counters), and bad input.

use serde_json::Value;

use super::{entries, iogauge, stderr, tmp};

fn verdicts(r: &Value) -> Vec<(String, String, f64, String)> {
    r["assessment"]["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["test"].as_str().unwrap().to_string(),
                v["figure"].as_str().unwrap().to_string(),
                v["value"].as_f64().unwrap(),
                v["rating"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// `iogauge assess ARGS` on 16 MiB under `dir`, its outputs named `out/a.*`: the process's
/// output (exit 0 asserted) and the JSON report.
fn assess_into(
    args: &[&str],
    dir: &std::path::Path,
    out: &std::path::Path,
) -> (std::process::Output, Value) {
    let mut all = vec![
        "assess".to_string(),
        format!("--directory={}", dir.display()),
        "--size=16m".into(),
        format!("--output={}", out.join("a").display()),
    ];
    all.extend(args.iter().map(|a| a.to_string()));
    let o = iogauge(&all.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = serde_json::from_slice(&std::fs::read(out.join("a.json")).unwrap()).unwrap();
    (o, r)
}

fn rating(value: f64, good: f64, fair: f64, higher_better: bool) -> &'static str {
    match higher_better {
        true if value >= good => "good",
        true if value >= fair => "acceptable",
        false if value <= good => "good",
        false if value <= fair => "acceptable",
        _ => "poor",
    }
}

#[test]
fn sas_streams_are_rated_per_core_against_sas_guidance() {
    let d = super::shm_tmp();
    let o = iogauge(&[
        "assess",
        "--for=sas",
        &format!("--directory={}", d.path().display()),
        "--size=16m",
        "--streams=2",
        "--repeat=1",
        "--output-format=json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    // Two streams of 8 MiB each, written, then read back.
    let groups = r["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 2);
    for (g, dir) in groups.iter().zip(["write", "read"]) {
        let jobs = g["jobs"].as_array().unwrap();
        assert_eq!(jobs.len(), 2);
        for j in jobs {
            assert_eq!(j[dir]["bytes"], 8 << 20, "{dir}");
            assert_eq!(j["options"]["bs"], "65536");
        }
    }
    assert_eq!(r["assessment"]["for_"], "sas");
    let cores = r["host"]["cpus"].as_f64().unwrap();
    let v = verdicts(&r);
    assert_eq!(v.len(), 4, "{v:?}");
    for ((test, figure, value, rated), (g, dir)) in v.iter().zip([
        (&groups[0], "write"),
        (&groups[0], "write"),
        (&groups[1], "read"),
        (&groups[1], "read"),
    ]) {
        // SAS's MB is 2^20 bytes (iotest.sh's): the verdicts rate MiB/s.
        let mbs = g["total"][dir]["mib_per_s"].as_f64().unwrap();
        assert!(
            test.starts_with(&format!("SAS streams {dir}, 2 streams")),
            "{test}"
        );
        // tmpfs has no device to show the storage did the I/O: never "good", "poor" stays.
        let unproven = |r: &str| if r == "poor" { "poor" } else { "unproven" };
        if figure.starts_with("MB/s per core") {
            assert!(
                (value - mbs / cores).abs() < 1e-6,
                "{value} vs {mbs} / {cores}"
            );
            assert_eq!(rated, unproven(rating(*value, 100.0, 75.0, true)));
        } else {
            assert!((value - mbs).abs() < 1e-6);
            assert_eq!(rated, unproven(rating(*value, 100.0, 100.0, true)));
        }
    }
    for v in r["assessment"]["verdicts"].as_array().unwrap() {
        let c = v["caveat"].as_str().unwrap();
        assert!(c.contains("no block device below the files"), "{c}");
    }
    let overall = r["assessment"]["overall"].as_str().unwrap();
    assert!(["unproven", "poor"].contains(&overall), "{overall}");
    assert!(
        entries(d.path()).is_empty(),
        "the streams' files are removed"
    );
    // The text: the summary, the verdicts, the rules cited once.
    let o = iogauge(&[
        "assess",
        "--for=sas",
        &format!("--directory={}", d.path().display()),
        "--size=4m",
        "--streams=2",
    ]);
    let text = super::stdout(&o);
    assert!(
        text.contains("SAS streams cold read 64 KiB") || text.contains("SAS streams read 64 KiB")
    );
    assert!(
        text.contains("Assessment for sas:") && text.contains("Overall: "),
        "{text}"
    );
    assert_eq!(text.matches("SAS iotest.sh guidance").count(), 2, "{text}");
}

#[test]
fn database_io_is_rated_on_a_loop_device() {
    let Some(fs) = super::LoopFs::new(96) else {
        return;
    };
    let o = iogauge(&[
        "assess",
        "--for=database",
        &format!("--directory={}", fs.path().display()),
        "--size=32m",
        "--seconds=1",
        "--repeat=1",
        "--output-format=json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let groups = r["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 4);
    // O_DIRECT reads of the data file, O_DSYNC writes of the log, as a database opens them.
    let flags = |g: &Value| g["jobs"][0]["files"][0]["open_flags"].clone();
    assert!(flags(&groups[0]).to_string().contains("O_DIRECT"));
    assert!(flags(&groups[2]).to_string().contains("O_DSYNC"));
    assert_eq!(groups[1]["jobs"].as_array().unwrap().len(), 16);
    // The device saw the log writes: write-through reaches it inside the timing.
    let dev_writes = groups[2]["devices"][0]["write_bytes"].as_u64().unwrap();
    let log_bytes = groups[2]["total"]["write"]["bytes"].as_u64().unwrap();
    assert!(dev_writes >= log_bytes, "{dev_writes} < {log_bytes}");
    let v = verdicts(&r);
    assert_eq!(v.len(), 8);
    for (k, (test, figure, value, rated)) in v.iter().enumerate() {
        let g = &groups[k / 2];
        let d = if test.starts_with("log") {
            "write"
        } else {
            "read"
        };
        let lat = &g["total"][d]["lat_ns"];
        let want = if figure.starts_with("mean") {
            lat["mean"].as_f64().unwrap() / 1e6
        } else {
            lat["percentiles"]["99.000000"].as_f64().unwrap() / 1e6
        };
        assert!(
            (value - want).abs() < 1e-9,
            "{test} {figure}: {value} vs {want}"
        );
        let good = if test.starts_with("log") { 5.0 } else { 10.0 };
        assert_eq!(rated, rating(*value, good, 15.0, false), "{test} {figure}");
    }
    assert!(entries(fs.path()).iter().all(|p| p.ends_with("lost+found")));
}

#[test]
fn bad_assess_input_is_refused() {
    let d = tmp();
    let dir = format!("--directory={}", d.path().display());
    for (args, want) in [
        (vec!["assess", "--for=oracle", dir.as_str()], "oracle"),
        (
            vec!["assess", "--for=database", dir.as_str(), "--streams=4"],
            "--streams: goes with --for=sas",
        ),
        (
            vec!["assess", "--for=sas", "--directory=/nonexistent/x"],
            "no such directory",
        ),
        (
            vec!["assess", "--for=database", dir.as_str(), "--size=100k"],
            "at least 1 MiB",
        ),
        (
            vec!["assess", "--for=sas", dir.as_str(), "--seconds=5"],
            "--seconds=5: goes with --for=database",
        ),
        (
            vec!["assess", "--for=database", dir.as_str(), "--seconds=0"],
            "--seconds=0: expected a whole number from 1 to 3600",
        ),
    ] {
        let o = iogauge(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
        assert!(entries(d.path()).is_empty());
    }
}

/// A data set smaller than RAM is never GOOD, whatever it measured (SAS's KB asks for files
/// larger than RAM), and every format says so: the verdicts, the caveat and the rules cited in
/// the text, the HTML and the CSV.
#[test]
fn sas_on_less_data_than_ram_is_unproven_in_every_format() {
    let Some(fs) = super::LoopFs::new(96) else {
        return;
    };
    let d = tmp();
    let (o, r) = assess_into(
        &[
            "--for=sas",
            "--streams=2",
            "--output-format=text,json,html,csv",
        ],
        fs.path(),
        d.path(),
    );
    for v in r["assessment"]["verdicts"].as_array().unwrap() {
        assert_ne!(v["rating"], "good", "{v}");
        assert!(
            v["caveat"]
                .as_str()
                .unwrap()
                .contains("less than the host's RAM"),
            "{v}"
        );
    }
    let overall = r["assessment"]["overall"].as_str().unwrap().to_uppercase();
    assert!(
        ["UNPROVEN", "POOR"].contains(&overall.as_str()),
        "{overall}"
    );
    let text = super::stdout(&o);
    assert!(text.contains(&format!("Overall: {overall}")), "{text}");
    assert!(text.contains("not a figure to quote"), "{text}");
    let html = std::fs::read_to_string(d.path().join("a.html")).unwrap();
    assert!(
        html.contains(&format!("Assessment for sas: {overall}</h2>")),
        "no verdict in the HTML"
    );
    assert!(html.contains("not a figure to quote") && html.contains("SAS iotest.sh guidance"));
    let csv = std::fs::read_to_string(d.path().join("a.csv")).unwrap();
    let mut rows = csv::Reader::from_reader(csv.as_bytes());
    let head = rows.headers().unwrap().clone();
    let col = |n: &str| head.iter().position(|c| c == n).unwrap();
    let verdicts: Vec<csv::StringRecord> = rows
        .records()
        .map(Result::unwrap)
        .filter(|r| &r[col("direction")] == "verdict")
        .collect();
    assert_eq!(verdicts.len(), 5, "four verdicts and the overall one");
    assert_eq!(verdicts[4][col("verdict")].to_uppercase(), overall);
    assert!(
        verdicts[..4]
            .iter()
            .all(|v| v[col("caveat")].contains("RAM"))
    );
    assert!(verdicts[0][col("guidance")].contains("SAS iotest.sh guidance"));
}

/// By default assess runs its tests 3 times and rates each figure on the worse end of its 95%
/// interval (the upper for latency), so one noisy run cannot lift a verdict; the text shows
/// the spread and the table says how many I/Os each test kept in flight.
#[test]
fn database_verdicts_rate_the_worse_end_of_three_runs() {
    let Some(fs) = super::LoopFs::new(96) else {
        return;
    };
    let (o, r) = assess_into(
        &["--for=database", "--seconds=1", "--output-format=text,json"],
        fs.path(),
        fs.path(),
    );
    assert_eq!(r["repeat"]["completed"], 3);
    for v in r["assessment"]["verdicts"].as_array().unwrap() {
        let s = &v["spread"];
        assert_eq!(s["n"], 3, "{v}");
        let (mean, hi) = (s["mean"].as_f64().unwrap(), s["ci95"][1].as_f64().unwrap());
        assert!((v["value"].as_f64().unwrap() - mean).abs() < 1e-9, "{v}");
        assert!((v["rated_on"].as_f64().unwrap() - hi).abs() < 1e-9, "{v}");
        let good = if v["test"].as_str().unwrap().starts_with("log") {
            5.0
        } else {
            10.0
        };
        assert_eq!(v["rating"], rating(hi, good, 15.0, false), "{v}");
    }
    let text = super::stdout(&o);
    assert!(text.contains("over 3 runs, rated on"), "{text}");
    assert!(text.contains("over 3 runs (mean ±95% interval"), "{text}");
    // 16 jobs at depth 1 keep 16 I/Os in flight; the log writes are direct and write-through.
    let row = |label: &str| {
        text.lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("{label}: {text}"))[label.len()..]
            .split_whitespace()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    // file (2 words), time, then the I/Os in flight.
    assert_eq!(row("data read 8 KiB, 16 at once")[3], "16", "{text}");
    assert_eq!(row("data read 8 KiB, 1 at once")[3], "1", "{text}");
    assert_eq!(
        row("log write 8 KiB, write-through")[4],
        "O_DIRECT+DSYNC",
        "{text}"
    );
}
