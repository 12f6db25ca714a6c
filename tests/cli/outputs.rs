//! The report formats: fio-compatible JSON, CSV, several formats at once, fio's interval logs,
//! HTML (rendered in headless Chromium), `iogauge report`, `iogauge compare`, and fio-plot
//! drawing from iogauge's files. Tools the machine lacks (chromium, fio, fio-plot: installed
//! by scripts/test-deps.sh) make their part print SKIP with the reason.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{counts, iogauge, job, ok_in, run_in, stderr, stdout, tmp, tmp_file};

fn json_in(dir: &Path, args: &[&str]) -> Value {
    let mut a = vec!["run", "--output-format=json"];
    a.extend_from_slice(args);
    let out = ok_in(dir, &a);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("one JSON document: {e}\n{out}"))
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a u64: {v}"))
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn fio_json_is_a_superset_and_group_reporting_sums() {
    let d = tmp();
    let p = d.path();
    let common = [
        "--filename=data",
        "--size=2m",
        "--bs=4k",
        "--rw=randread",
        "--numjobs=2",
    ];
    let r = json_in(p, &common);
    // fio's top level, then iogauge's own keys.
    assert!(r["fio version"].as_str().unwrap().starts_with("iogauge-"));
    assert!(u(&r["timestamp_ms"]) / 1000 == u(&r["timestamp"]));
    assert_eq!(
        r["time"].as_str().unwrap().len(),
        24,
        "ctime: {}",
        r["time"]
    );
    assert!(r["global options"].is_object() && r["disk_util"].is_array());
    assert!(r["groups"].is_array() && r["host"].is_object());
    let jobs = r["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2);
    for (i, j) in jobs.iter().enumerate() {
        let native = &r["groups"][0]["jobs"][i];
        assert_eq!(j["jobname"], "job");
        assert_eq!(j["groupid"], 0);
        assert_eq!(j["error"], 0);
        let o = &j["job options"];
        assert_eq!(
            (&o["rw"], &o["bs"], &o["iodepth"], &o["numjobs"]),
            (
                &Value::from("randread"),
                &Value::from("4096"),
                &Value::from("1"),
                &Value::from("2")
            )
        );
        let rd = &j["read"];
        // Each clone reads the whole 2 MiB: 512 I/Os of 4 KiB.
        assert_eq!((u(&rd["io_bytes"]), u(&rd["total_ios"])), (2 << 20, 512));
        assert_eq!(u(&rd["io_kbytes"]), 2048);
        assert_eq!(u(&rd["bw"]), u(&rd["bw_bytes"]) / 1024, "bw is KiB/s");
        let bw = f(&native["read"]["bw_bytes_per_s"]);
        assert!((u(&rd["bw_bytes"]) as f64 - bw).abs() <= 1.0);
        assert_eq!(u(&rd["runtime"]), u(&native["elapsed_ns"]) / 1_000_000);
        assert_eq!(u(&j["write"]["total_ios"]), 0);
        assert_eq!(u(&j["trim"]["total_ios"]), 0);
        // psync: one span per I/O, reported as clat and lat, no submission latency.
        assert_eq!(u(&rd["slat_ns"]["N"]), 0);
        assert_eq!(u(&rd["clat_ns"]["N"]), 512);
        assert_eq!(rd["clat_ns"]["min"], native["read"]["lat_ns"]["min"]);
        let pct = &rd["clat_ns"]["percentile"];
        assert!(
            pct["99.900000"].is_u64() && pct["50.000000"].is_u64(),
            "{pct}"
        );
        let buckets: f64 = ["latency_ns", "latency_us", "latency_ms"]
            .iter()
            .flat_map(|t| j[t].as_object().unwrap().values().map(f))
            .sum();
        assert!(
            (buckets - 100.0).abs() < 0.01,
            "latency tables sum to {buckets}"
        );
        assert!((f(&j["iodepth_level"]["1"]) - 100.0).abs() < 1e-6);
        for k in ["usr_cpu", "sys_cpu", "ctx", "majf", "minf", "job_runtime"] {
            assert!(j[k].is_number(), "{k}");
        }
        for k in [
            "bw_min",
            "bw_max",
            "bw_mean",
            "bw_dev",
            "bw_samples",
            "iops_stddev",
        ] {
            assert!(rd[k].is_number(), "{k}");
        }
        let agg = f(&rd["bw_agg"]);
        assert!(agg > 0.0 && agg <= 100.0, "bw_agg {agg}");
    }

    // group_reporting: one job, totals summed, bandwidth over the longest job's time.
    let mut a = common.to_vec();
    a.push("--group_reporting");
    let r = json_in(p, &a);
    let jobs = r["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 1);
    let rd = &jobs[0]["read"];
    assert_eq!((u(&rd["io_bytes"]), u(&rd["total_ios"])), (4 << 20, 1024));
    assert_eq!(
        u(&rd["clat_ns"]["N"]),
        1024,
        "latencies merged, not averaged"
    );
    let longest = r["groups"][0]["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| u(&j["elapsed_ns"]))
        .max()
        .unwrap();
    let want = (4u64 << 20) as f64 / (longest as f64 / 1e9);
    assert!(
        (u(&rd["bw_bytes"]) as f64 - want).abs() <= 1.0,
        "{} vs {want}",
        rd["bw_bytes"]
    );
    assert_eq!(jobs[0]["job options"]["numjobs"], "2");
    // fio's group CPU and job_runtime: the jobs' runtimes summed, CPU time over that sum.
    let native: Vec<&Value> = r["groups"][0]["jobs"].as_array().unwrap().iter().collect();
    let runtime_ms: u64 = native.iter().map(|j| u(&j["elapsed_ns"]) / 1_000_000).sum();
    assert_eq!(u(&jobs[0]["job_runtime"]), runtime_ms);
    let sys_s: f64 = native.iter().map(|j| f(&j["cpu"]["system_s"])).sum();
    let want = 100.0 * sys_s * 1000.0 / runtime_ms as f64;
    assert!(
        (f(&jobs[0]["sys_cpu"]) - want).abs() < 1e-6,
        "{want} {}",
        jobs[0]["sys_cpu"]
    );
    assert!((f(&rd["bw_agg"]) - 100.0).abs() < 1e-6);
}

#[test]
fn csv_has_one_row_per_job_and_direction_with_the_json_fields() {
    let d = tmp();
    let p = d.path();
    let args = [
        "run",
        "--filename=data",
        "--size=1m",
        "--bs=4k",
        "--rw=randrw",
        "--numjobs=2",
        "--output-format=csv",
    ];
    let out = ok_in(p, &args);
    let mut rows = csv_rows(&out);
    let header = rows.remove(0);
    assert_eq!(rows.len(), 4, "2 jobs × read, write:\n{out}");
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    for k in [
        "jobname",
        "direction",
        "io_bytes",
        "bw",
        "iops",
        "clat_ns_p99.000000",
        "lat_ns_mean",
        "usr_cpu",
    ] {
        col(k);
    }
    let dirs: Vec<&str> = rows.iter().map(|r| r[col("direction")].as_str()).collect();
    assert_eq!(dirs, ["read", "write", "read", "write"]);
    for pair in rows.chunks(2) {
        let bytes: u64 = pair
            .iter()
            .map(|r| r[col("io_bytes")].parse::<u64>().unwrap())
            .sum();
        assert_eq!(bytes, 1 << 20, "each job moves the whole size");
        let ios: u64 = pair
            .iter()
            .map(|r| r[col("total_ios")].parse::<u64>().unwrap())
            .sum();
        assert_eq!(ios, 256);
    }
    // A read-only job has no write row.
    let out = ok_in(
        p,
        &[
            "run",
            "--filename=data",
            "--size=64k",
            "--rw=read",
            "--output-format=csv",
        ],
    );
    assert_eq!(csv_rows(&out).len(), 2);
}

/// Splits simple CSV (iogauge quotes nothing in these runs: no commas in the fields).
fn csv_rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .map(|l| l.split(',').map(String::from).collect())
        .collect()
}

#[test]
fn a_fio_report_to_a_fifo_nothing_reads_yet_waits_for_its_reader() {
    // fio's `--output=FIFO`, read by a program started later: the report was lost (ENXIO at
    // the open) until 2026-12-07.
    let d = tmp();
    let args = [
        "fio",
        "--output=fifo",
        "--output-format=json",
        "--name=x",
        "--filename=data",
        "--size=256k",
        "--rw=write",
    ];
    let Some((mut child, said)) = super::record_signals::waiting_for_a_reader(d.path(), &args)
    else {
        skip!("mkfifo failed");
        return;
    };
    let text = std::fs::read_to_string(d.path().join("fifo")).unwrap();
    let status = child.wait().unwrap();
    let e = said.join().unwrap();
    assert_eq!(status.code(), Some(0), "{e}");
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|err| panic!("{err}: {text}"));
    assert_eq!(v["jobs"][0]["write"]["io_bytes"], 256 * 1024, "{v}");
}

#[test]
fn several_formats_go_to_their_own_files() {
    let d = tmp();
    let p = d.path();
    let o = run_in(
        p,
        &[
            "run",
            "--filename=data",
            "--size=256k",
            "--rw=write",
            "--output-format=text,json,csv,html",
            "--output=out/run",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "missing output directory");
    assert!(stderr(&o).contains("--output=out/run"), "{}", stderr(&o));
    assert!(!p.join("data").exists(), "nothing created on bad input");
    std::fs::create_dir(p.join("out")).unwrap();
    let o = run_in(
        p,
        &[
            "run",
            "--filename=data",
            "--size=256k",
            "--rw=write",
            "--output-format=text,json,csv,html",
            "--output=out/run",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    for ext in ["txt", "json", "csv", "html"] {
        let f = p.join("out").join(format!("run.{ext}"));
        assert!(f.metadata().unwrap().len() > 100, "{}", f.display());
        assert!(stderr(&o).contains(&format!("wrote out/run.{ext}")));
    }
    assert!(
        stdout(&o).contains("IOPS"),
        "text goes to the screen as well: {}",
        stdout(&o)
    );
    let j: Value =
        serde_json::from_str(&std::fs::read_to_string(p.join("out/run.json")).unwrap()).unwrap();
    assert_eq!(u(&j["jobs"][0]["write"]["io_bytes"]), 256 << 10);

    // Without --output: text on stdout, the others in files named after the start time.
    let o = run_in(
        p,
        &[
            "run",
            "--filename=data",
            "--size=256k",
            "--rw=write",
            "--output-format=json,text",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("MiB/s") && !stdout(&o).contains("\"jobs\""));
    let json: Vec<PathBuf> = std::fs::read_dir(p)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|f| f.extension().is_some_and(|e| e == "json"))
        .collect();
    assert_eq!(json.len(), 1, "{json:?}");
    let name = json[0].file_name().unwrap().to_str().unwrap().to_string();
    assert!(name.starts_with("iogauge-") && name.len() == "iogauge-20261121-121858.json".len());

    let o = run_in(p, &["run", "--size=4k", "--output-format=text,yaml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--output-format=text,yaml: yaml: unknown format"),
        "{}",
        stderr(&o)
    );
}

/// Lines of a fio log: (msec, value, direction, bs, offset).
fn log_lines(path: &Path) -> Vec<[u64; 5]> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| {
            let v: Vec<u64> = l.split(", ").map(|x| x.parse().unwrap()).collect();
            [v[0], v[1], v[2], v[3], v[4]]
        })
        .collect()
}

#[test]
fn interval_logs_are_fios_format_and_agree_with_the_report() {
    let d = tmp();
    let p = d.path();
    let r = json_in(
        p,
        &[
            "--filename=data",
            "--size=1m",
            "--bs=4k",
            "--rw=randrw",
            "--time_based",
            "--runtime=1",
            "--log_avg_msec=250",
            "--write_bw_log=x",
            "--write_iops_log=x",
            "--write_lat_log=x",
            "--numjobs=2",
        ],
    );
    for n in [1, 2] {
        for kind in ["bw", "iops", "lat", "clat", "slat"] {
            assert!(p.join(format!("x_{kind}.{n}.log")).exists(), "x_{kind}.{n}");
        }
    }
    let series = &r["groups"][0]["jobs"][0]["read"]["series"];
    assert_eq!(series["interval_ms"], 250);
    let iops = log_lines(&p.join("x_iops.1.log"));
    let reads: Vec<&[u64; 5]> = iops.iter().filter(|l| l[2] == 0).collect();
    assert!(
        iops.iter().any(|l| l[2] == 1),
        "writes logged as direction 1"
    );
    // Full windows only: 250, 500, 750 (and 1000 when the job ran past it); a window with
    // no reads (a stalled disk on a loaded machine) has no read line.
    assert!((1..=4).contains(&reads.len()), "{iops:?}");
    for l in &reads {
        assert!(l[0] % 250 == 0 && l[0] <= 1000, "{l:?}");
        assert_eq!((l[3], l[4]), (0, 0), "averaged logs carry no bs or offset");
        let want = f(&series["iops"][(l[0] / 250 - 1) as usize]);
        assert!((l[1] as f64 - want).abs() <= 0.5, "{} vs {want}", l[1]);
    }
    let bw = log_lines(&p.join("x_bw.1.log"));
    let bw0 = bw.iter().find(|l| l[2] == 0).unwrap();
    let want = f(&series["bw_bytes_per_s"][(bw0[0] / 250 - 1) as usize]) / 1024.0;
    assert!(
        (bw0[1] as f64 - want).abs() <= 0.5,
        "KiB/s: {} vs {want}",
        bw0[1]
    );
    // psync: latency goes to lat and clat, the submission log stays empty.
    assert!(!log_lines(&p.join("x_lat.1.log")).is_empty());
    assert_eq!(
        log_lines(&p.join("x_lat.1.log")),
        log_lines(&p.join("x_clat.1.log"))
    );
    assert!(log_lines(&p.join("x_slat.1.log")).is_empty());

    // A file iogauge did not write is never overwritten; its own logs are.
    std::fs::write(p.join("y_bw.1.log"), "precious").unwrap();
    let o = run_in(
        p,
        &["run", "--size=64k", "--ioengine=null", "--write_bw_log=y"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("y_bw.1.log: exists and iogauge did not create it"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        std::fs::read_to_string(p.join("y_bw.1.log")).unwrap(),
        "precious"
    );
    let o = run_in(
        p,
        &["run", "--size=64k", "--ioengine=null", "--write_bw_log=x"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn per_io_logs_have_a_line_per_io_as_fios_default() {
    let d = tmp();
    let p = d.path();
    // log_avg_msec=0 (the default): a line per I/O; log_offset adds each I/O's offset;
    // per_job_logs=0 names the file without the job number; a bare write_lat_log is named
    // after the job.
    let r = json_in(
        p,
        &[
            "--name=seq",
            "--filename=data",
            "--size=64k",
            "--bs=4k",
            "--rw=write",
            "--write_bw_log=w",
            "--write_iops_log=w",
            "--write_lat_log",
            "--log_offset=1",
            "--per_job_logs=0",
        ],
    );
    assert_eq!(r["jobs"][0]["write"]["total_ios"], 16);
    let lines = |name: &str| -> Vec<Vec<u64>> {
        std::fs::read_to_string(p.join(name))
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .lines()
            .map(|l| l.split(", ").map(|x| x.parse().unwrap()).collect())
            .collect()
    };
    let iops = lines("w_iops.log");
    assert_eq!(iops.len(), 16, "{iops:?}");
    for (k, l) in iops.iter().enumerate() {
        // time, value, direction, bs, offset, priority
        assert_eq!(l[1..], [1, 1, 4096, 4096 * k as u64, 0], "{l:?}");
    }
    assert!(iops.windows(2).all(|w| w[0][0] <= w[1][0]), "in time order");
    let bw = lines("w_bw.log");
    assert_eq!(bw.len(), 16);
    assert!(bw.iter().all(|l| l[1] > 0), "bytes over latency: {bw:?}");
    let lat = lines("seq_lat.log");
    assert_eq!(lat.len(), 16);
    assert!(lat.iter().all(|l| l[1] > 0));
    assert_eq!(
        lat,
        lines("seq_clat.log"),
        "psync times one span: clat is lat"
    );
    assert!(lines("seq_slat.log").is_empty());
}

#[test]
fn compare_marks_and_gates_regressions() {
    let d = tmp();
    let p = d.path();
    let base = json_in(
        p,
        &["--filename=data", "--size=1m", "--bs=4k", "--rw=randread"],
    );
    std::fs::write(p.join("base.json"), base.to_string()).unwrap();
    let mut worse = base.clone();
    for k in ["bw_bytes", "iops"] {
        let v = f(&worse["jobs"][0]["read"][k]);
        worse["jobs"][0]["read"][k] = Value::from(v * 0.8);
    }
    std::fs::write(p.join("worse.json"), worse.to_string()).unwrap();
    let mut negative = base.clone();
    negative["jobs"][0]["read"]["iops"] = Value::from(-5.0);
    std::fs::write(p.join("negative.json"), negative.to_string()).unwrap();

    let same = ok_in(
        p,
        &["compare", "base.json", "base.json", "--fail-on-regression"],
    );
    assert!(same.contains("0 worse"), "{same}");
    let o = run_in(p, &["compare", "base.json", "worse.json"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "reports without gating by default"
    );
    let t = stdout(&o);
    assert!(t.contains("MiB/s") && t.contains("-20.0%  WORSE"), "{t}");
    assert!(t.contains("p99 lat (µs)"), "{t}");
    let o = run_in(
        p,
        &["compare", "base.json", "worse.json", "--fail-on-regression"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let o = run_in(
        p,
        &[
            "compare",
            "base.json",
            "worse.json",
            "--threshold=25%",
            "--fail-on-regression",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    for (args, want) in [
        (
            vec!["compare", "base.json", "nope.json"],
            "nope.json: cannot read",
        ),
        (
            vec!["compare", "base.json", "base.json", "--threshold=lots"],
            "--threshold=lots",
        ),
        (
            vec!["compare", "base.json", "negative.json"],
            "iops is -5: a report's figures are never negative",
        ),
    ] {
        let o = run_in(p, &args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
        assert!(stderr(&o).contains(want), "{}", stderr(&o));
    }

    // fio's own JSON compares with iogauge's.
    let fio = Command::new("fio")
        .current_dir(p)
        .args([
            "--name=job",
            "--filename=data",
            "--size=1m",
            "--bs=4k",
            "--rw=randread",
            "--output-format=json",
            "--output=fio.json",
        ])
        .output();
    match fio {
        Ok(o) if o.status.success() => {
            let o = run_in(p, &["compare", "fio.json", "base.json"]);
            assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
            let t = stdout(&o);
            assert!(t.contains("fio-3") && t.contains("job.0"), "{t}");
            assert!(!t.contains("only in"), "jobs pair up: {t}");
        }
        _ => skip!("fio comparison: fio is not installed (scripts/test-deps.sh)"),
    }
}

/// Runs a command with a time limit; None when it could not start or ran too long.
fn run_limited(cmd: &mut Command, limit: Duration) -> Option<std::process::Output> {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    let start = Instant::now();
    loop {
        if child.try_wait().ok()?.is_some() {
            return child.wait_with_output().ok();
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn html_is_self_contained_round_trips_and_renders_in_chromium() {
    let d = tmp();
    let p = d.path();
    ok_in(
        p,
        &[
            "run",
            "--filename=data",
            "--size=4m",
            "--bs=4k",
            "--rw=randrw",
            "--time_based",
            "--runtime=1",
            "--output-format=json,html",
            "--output=run",
        ],
    );
    let html = std::fs::read_to_string(p.join("run.html")).unwrap();
    for banned in [
        "http:", "https:", "<script", "<link", "src=", "@import", "url(",
    ] {
        assert!(!html.contains(banned), "fetches nothing: found {banned}");
    }
    for want in [
        "How this was measured",
        "id=\"summary\"",
        "Bandwidth over time",
        "IOPS over time",
        "Latency percentiles",
        "Latency histogram",
        "MiB/s",
    ] {
        assert!(html.contains(want), "missing {want}");
    }
    // The saved JSON gives the same page.
    ok_in(p, &["report", "run.json", "-o", "again.html"]);
    assert_eq!(std::fs::read_to_string(p.join("again.html")).unwrap(), html);
    let o = run_in(p, &["report", "nope.json"]);
    assert_eq!(o.status.code(), Some(2));
    // A queued engine's report (slat/clat without histograms) reads back too, in every format.
    ok_in(
        p,
        &[
            "run",
            "--filename=data",
            "--size=1m",
            "--rw=randread",
            "--ioengine=io_uring",
            "--iodepth=4",
            "--output-format=json",
            "--output=uring.json",
        ],
    );
    for format in ["html", "text", "csv", "json"] {
        let out = ok_in(p, &["report", "uring.json", "--output-format", format]);
        assert!(
            out.contains("MiB/s") || out.contains("bw_bytes"),
            "{format}"
        );
    }

    let Some(chromium) = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|c| {
            Command::new(c)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
    else {
        skip!("chromium rendering: no chromium here (scripts/test-deps.sh installs it)");
        return;
    };
    let url = format!("file://{}", p.join("run.html").display());
    let profile = p.join("chromium-profile");
    let base = |c: &mut Command| {
        c.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
        ])
        .arg(format!("--user-data-dir={}", profile.display()));
    };
    let mut dump = Command::new(chromium);
    base(&mut dump);
    dump.args(["--dump-dom", &url]);
    let Some(out) = run_limited(&mut dump, Duration::from_secs(90)) else {
        skip!("chromium rendering: {chromium} did not finish in 90 s");
        return;
    };
    let dom = stdout(&out);
    assert!(
        dom.contains("Bandwidth over time"),
        "chromium parsed the page"
    );
    let lines = dom.matches("<polyline").count();
    // Bandwidth, IOPS and percentiles, each for read and write.
    assert_eq!(lines, 6, "{dom}");
    assert!(dom.matches("class=\"bar\"").count() >= 2);
    let mut shot = Command::new(chromium);
    base(&mut shot);
    let png = p.join("run.png");
    shot.arg(format!("--screenshot={}", png.display()))
        .args(["--window-size=1200,2000", &url]);
    run_limited(&mut shot, Duration::from_secs(90));
    let bytes = std::fs::read(&png).expect("chromium wrote a screenshot");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    assert!(bytes.len() > 20_000, "a drawn page, not a blank one");
}

/// fio-plot from scripts/test-deps.sh's virtual environment, or on PATH.
fn fio_plot() -> Option<PathBuf> {
    let venv = std::env::var_os("IOGAUGE_FIO_PLOT_VENV")
        .map(PathBuf::from)
        .or_else(|| {
            let cache = std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
            Some(cache.join("iogauge/fio-plot-venv"))
        });
    let candidates = venv
        .map(|v| v.join("bin/fio-plot"))
        .into_iter()
        .chain(std::iter::once(PathBuf::from("fio-plot")));
    candidates.into_iter().find(|c| {
        Command::new(c)
            .arg("--help")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

#[test]
fn fio_plot_draws_from_iogauge_json_and_logs() {
    let Some(fp) = fio_plot() else {
        skip!("fio-plot acceptance: fio-plot is not installed (scripts/test-deps.sh)");
        return;
    };
    let d = tmp();
    let p = d.path();
    for dir in ["json", "logs"] {
        std::fs::create_dir(p.join(dir)).unwrap();
    }
    for depth in [1, 4] {
        ok_in(
            p,
            &[
                "run",
                "--filename=data",
                "--size=4m",
                "--bs=4k",
                "--rw=randread",
                "--ioengine=io_uring",
                &format!("--iodepth={depth}"),
                "--time_based",
                "--runtime=1",
                "--output-format=json",
                &format!("--output=json/qd{depth}.json"),
            ],
        );
    }
    let name = "randread-iodepth-1-numjobs-1";
    ok_in(
        &p.join("logs"),
        &[
            "run",
            "--filename=../data",
            "--size=4m",
            "--bs=4k",
            "--rw=randread",
            "--time_based",
            "--runtime=2",
            "--log_avg_msec=200",
            &format!("--write_bw_log={name}"),
            &format!("--write_iops_log={name}"),
            &format!("--write_lat_log={name}"),
        ],
    );
    let graphs: [(&str, &[&str]); 4] = [
        ("bars.png", &["-i", "json", "-l", "-d", "1", "4"]),
        ("hist.png", &["-i", "json", "-H", "-d", "1"]),
        (
            "logs.png",
            &["-i", "logs", "-g", "-d", "1", "-t", "bw", "iops", "lat"],
        ),
        ("clat.png", &["-i", "logs", "-g", "-d", "1", "-t", "clat"]),
    ];
    for (out, args) in graphs {
        let o = Command::new(&fp)
            .current_dir(p)
            .args(["-T", "iogauge", "-r", "randread", "-n", "1", "-o", out])
            .args(args)
            .output()
            .unwrap();
        let all = format!("{}{}", stdout(&o), stderr(&o));
        assert!(o.status.success(), "fio-plot {args:?}:\n{all}");
        assert!(
            !all.contains("Traceback") && !all.contains("not appear to be a valid"),
            "{all}"
        );
        let png = std::fs::read(p.join(out)).unwrap_or_else(|e| panic!("{out}: {e}\n{all}"));
        assert_eq!(&png[..4], b"\x89PNG");
    }
}

#[test]
fn fio_style_options_without_run_are_a_run() {
    let (_d, f, fname) = tmp_file();
    // fio users type the options straight after the program's name.
    let o = iogauge(&[
        "--name=x",
        &fname,
        "--rw=write",
        "--size=64k",
        "--output-format=json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(job(&r)["name"], "x");
    assert_eq!(counts(job(&r)), (0, 0, 16, 64 << 10));
    assert!(!f.exists(), "removed after the run");
    // Its own flags stay its own.
    let o = iogauge(&["--version"]);
    assert_eq!(stdout(&o).trim(), "iogauge 0.1.0");
    let o = iogauge(&["--bogus=1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--bogus"), "{}", stderr(&o));
}

#[test]
fn several_formats_put_text_on_the_screen_and_every_format_in_a_file() {
    let d = tmp();
    let o = run_in(
        d.path(),
        &[
            "run",
            "--ioengine=null",
            "--size=1m",
            "--output-format=text,json",
            "--output=run",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("IOPS"),
        "text on stdout: {}",
        stdout(&o)
    );
    assert!(d.path().join("run.json").is_file());
    assert!(d.path().join("run.txt").is_file(), "and kept in a file");
}

#[test]
fn a_warning_shows_once_where_stdout_and_stderr_are_one_file() {
    let d = tmp();
    let log = d.path().join("both.log");
    let out = std::fs::File::create(&log).unwrap();
    let err = out.try_clone().unwrap();
    let status = Command::new(assert_cmd::cargo::cargo_bin!("iogauge"))
        .args(["run", "--iodepth=4", "--size=1m"])
        .arg(format!("--filename={}", d.path().join("f").display()))
        .stdout(out)
        .stderr(err)
        .status()
        .unwrap();
    assert!(status.success());
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        text.matches("has no effect with ioengine=psync").count(),
        1,
        "{text}"
    );
    // Apart, each stream is whole: the report keeps its warnings.
    let o = iogauge(&[
        "run",
        "--iodepth=4",
        "--size=1m",
        &format!("--filename={}", d.path().join("g").display()),
    ]);
    assert!(stdout(&o).contains("warning: iodepth=4 has no effect with ioengine=psync"));
    assert!(stderr(&o).contains("warning: iodepth=4 has no effect with ioengine=psync"));
}

#[test]
fn the_report_records_the_device_queue_as_the_kernel_has_it() {
    let (_d, _f, fname) = tmp_file();
    let r = super::run_json(&[&fname, "--size=64k"], 0);
    let Some(dev) = r["targets"][0]["device"].as_object() else {
        skip!("no block device under the temp dir");
        return;
    };
    let name = dev["name"].as_str().unwrap();
    let mut disk = std::fs::canonicalize(format!("/sys/class/block/{name}")).unwrap();
    if disk.join("partition").exists() {
        disk.pop();
    }
    let sys = |f: &str| {
        std::fs::read_to_string(disk.join("queue").join(f))
            .unwrap()
            .trim()
            .to_string()
    };
    assert_eq!(dev["write_cache"], sys("write_cache"));
    assert!(
        sys("scheduler").contains(&format!("[{}]", dev["scheduler"].as_str().unwrap()))
            || sys("scheduler") == dev["scheduler"].as_str().unwrap()
    );
    for k in ["read_ahead_kb", "max_sectors_kb", "nr_requests"] {
        assert_eq!(dev[k].to_string(), sys(k), "{k}");
    }
    // A model, not a PCI vendor number.
    let model = dev["model"].as_str().unwrap();
    assert!(!model.starts_with("0x"), "{model}");
}

#[test]
fn device_counters_say_what_they_cover_and_who_else_wrote() {
    // Ramp: the counters span the whole group, and the report says how much was not measured.
    let (_d, _f, fname) = tmp_file();
    let r = super::run_json(
        &[
            &fname,
            "--size=1m",
            "--ramp_time=1",
            "--time_based",
            "--runtime=1",
        ],
        0,
    );
    if let Some(dev) = r["groups"][0]["devices"].get(0) {
        assert_eq!(dev["unmeasured_ms"], 1000, "{dev}");
        assert!(dev["wall_ms"].as_u64().unwrap() >= 2000, "{dev}");
    } else {
        skip!("no block device under the temp dir");
    }
    // A read-only group during which someone else wrote to its device is flagged.
    let Some(fs) = super::LoopFs::new(96) else {
        skip!("no loop-mounted ext4 here");
        return;
    };
    let data = fs.path().join("data");
    std::fs::write(&data, vec![7u8; 8 << 20]).unwrap();
    let other = fs.path().join("other");
    // The other writer goes on until iogauge is done, so its writes fall inside the measured
    // group however late a loaded machine starts it (16 MiB rewritten, each MiB made durable).
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = std::thread::spawn({
        let done = done.clone();
        move || {
            use std::os::unix::fs::FileExt as _;
            let f = std::fs::File::create(&other).unwrap();
            let mut k = 0u64;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                f.write_all_at(&vec![1u8; 1 << 20], (k % 16) << 20).unwrap();
                f.sync_data().unwrap();
                k += 1;
            }
        }
    });
    let o = iogauge(&[
        "run",
        &format!("--filename={}", data.display()),
        "--rw=randread",
        "--size=8m",
        "--direct=1",
        "--time_based",
        "--runtime=2",
        // About 40 MiB read: the other writer's rewrites are a share of the device's work.
        "--rate=20m",
        "--output-format=json",
    ]);
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    writer.join().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("the jobs only read, yet the device"),
        "{}",
        stderr(&o)
    );
}

/// `iogauge report` reads fio's own JSON: the same page, text, CSV and JSON, with fio's
/// figures exactly (bytes, I/Os, sync calls), group_reporting recognised, json+ histograms
/// drawn, and what fio's JSON lacks said rather than invented.
#[test]
fn report_reads_fio_json_and_json_plus() {
    let d = tmp();
    let p = d.path();
    std::fs::write(
        p.join("t.fio"),
        "[global]\nsize=2m\n\n[rd]\nrw=randread\nbs=4k\n\n[wr]\nrw=write\nbs=8k\nfdatasync=4\n\n\
         [g2]\nstonewall\nrw=randrw\nbs=4k\nnumjobs=2\ngroup_reporting\n",
    )
    .unwrap();
    for format in ["json", "json+"] {
        let fio = Command::new("fio")
            .current_dir(p)
            .args([
                "t.fio",
                &format!("--output-format={format}"),
                "--output=fio.json",
            ])
            .output();
        match fio {
            Ok(o) if o.status.success() => {}
            _ => {
                skip!("reading fio's JSON: fio is not installed (scripts/test-deps.sh)");
                return;
            }
        }
        let fio: Value =
            serde_json::from_str(&std::fs::read_to_string(p.join("fio.json")).unwrap()).unwrap();
        let fjobs = fio["jobs"].as_array().unwrap();
        assert_eq!(fjobs.len(), 3, "group_reporting folds g2's two jobs");

        let ours: Value =
            serde_json::from_str(&ok_in(p, &["report", "fio.json", "--output-format=json"]))
                .unwrap();
        let groups = ours["groups"].as_array().unwrap();
        assert_eq!(groups.len(), 2);
        assert_eq!(ours["tool"]["name"], "fio");
        assert_eq!(groups[1]["group_reporting"], true);
        assert_eq!(groups[0]["group_reporting"], false);
        let jobs: Vec<&Value> = groups
            .iter()
            .flat_map(|g| g["jobs"].as_array().unwrap())
            .collect();
        for (f, j) in fjobs.iter().zip(&jobs) {
            assert_eq!(j["name"], f["jobname"]);
            for dir in ["read", "write"] {
                assert_eq!(u(&j[dir]["bytes"]), u(&f[dir]["io_bytes"]), "{dir}");
                assert_eq!(u(&j[dir]["ios"]), u(&f[dir]["total_ios"]), "{dir}");
            }
        }
        // fio's fdatasync calls, as fio counted them: every fourth of 256 writes, less the
        // last (fio 3.33 skips the flush after the job's final write).
        let wr = &jobs[1];
        assert_eq!(u(&wr["sync"]["count"]), u(&fjobs[1]["sync"]["lat_ns"]["N"]));
        assert!((63..=64).contains(&u(&wr["sync"]["count"])));
        // The fio part of our JSON carries fio's own figures back.
        assert_eq!(
            ours["jobs"][0]["read"]["io_bytes"],
            fjobs[0]["read"]["io_bytes"]
        );

        let text = ok_in(p, &["report", "fio.json", "--output-format=text"]);
        assert!(text.starts_with("fio 3."), "{text}");
        assert!(text.contains("not recorded"), "{text}");
        // fio's disk_util counts I/Os, not bytes: no "0 B" fio never recorded.
        for l in text
            .lines()
            .filter(|l| l.trim_start().starts_with("device "))
        {
            assert!(!l.contains(" B in ") && !l.contains("()"), "{l}");
            assert!(l.contains("bytes not recorded"), "{l}");
        }
        assert!(text.contains("fsync/fdatasync/sync_file_range:"), "{text}");
        assert!(
            text.contains("the group as one (group_reporting):"),
            "{text}"
        );
        // A row per job and direction it did: rd read, wr write, g2 read and write.
        let csv = ok_in(p, &["report", "fio.json", "--output-format=csv"]);
        assert_eq!(csv.lines().count(), 1 + 1 + 1 + 2, "{csv}");
        assert!(
            csv.lines()
                .any(|l| l.starts_with("g2,1,0,write,randrw,4096,,2,psync,")),
            "{csv}"
        );

        let html = ok_in(p, &["report", "fio.json"]);
        assert!(html.contains("not recorded in fio&#39;s JSON"));
        assert!(html.contains("No time series in this report."));
        assert!(html.contains("sync calls"));
        assert!(html.contains("group 2 (g2), reported as one"));
        assert!(html.contains("<code>fdatasync=4</code>"));
        let bars = html.matches("class=\"bar\"").count();
        if format == "json+" {
            assert!(bars > 0, "json+ histograms are drawn");
            assert!(!html.contains("no latency histogram"));
        } else {
            assert_eq!(bars, 0);
            assert!(html.contains("no latency histogram without --output-format=json+"));
        }
    }
    // Notes fio prints ahead of the document are skipped; a document that is neither tool's
    // is refused in one line.
    let body = std::fs::read_to_string(p.join("fio.json")).unwrap();
    std::fs::write(p.join("noted.json"), format!("fio: a note\n{body}")).unwrap();
    ok_in(p, &["report", "noted.json", "--output-format=text"]);
    std::fs::write(p.join("other.json"), "{\"jobs\": 3}").unwrap();
    let o = run_in(p, &["report", "other.json"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("other.json: not an iogauge JSON report"));
}

/// fio's command line: each --name starts a job; options before the first apply to all.
#[test]
fn each_name_on_the_command_line_is_a_job() {
    let d = tmp();
    let p = d.path();
    let r: Value = serde_json::from_str(&ok_in(
        p,
        &[
            "--size=1m",
            "--output-format=json",
            "--name=r",
            "--rw=read",
            "--name=w",
            "--rw=write",
            "--bs=8k",
        ],
    ))
    .unwrap();
    let jobs = r["groups"][0]["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2, "both jobs ran, side by side");
    assert_eq!(jobs[0]["name"], "r");
    assert_eq!(u(&jobs[0]["read"]["bytes"]), 1 << 20);
    assert_eq!(
        u(&jobs[0]["read"]["ios"]),
        256,
        "4 KiB, the default, not w's 8k"
    );
    assert_eq!(jobs[1]["name"], "w");
    assert_eq!(u(&jobs[1]["write"]["bytes"]), 1 << 20);
    assert_eq!(u(&jobs[1]["write"]["ios"]), 128);
}

/// A group of many jobs reads as a group: above 16 jobs (without group_reporting) the text
/// gives the total and the jobs' spread, not a block per job; JSON keeps every job.
#[test]
fn many_jobs_fold_into_their_spread_in_text() {
    let d = super::tmp();
    let fname = format!("--filename={}", d.path().join("f").display());
    let run = |jobs: &str, format: &str| {
        let o = super::iogauge(&[
            "run",
            &fname,
            "--size=1m",
            "--rw=randread",
            "--ioengine=null",
            &format!("--numjobs={jobs}"),
            "--time_based",
            "--runtime=100ms",
            &format!("--output-format={format}"),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", super::stderr(&o));
        super::stdout(&o)
    };
    let text = run("40", "text");
    assert!(text.lines().count() < 30, "{text}");
    assert!(text.contains("all 40 jobs together:"), "{text}");
    assert!(text.contains("40 jobs, each: IOPS min "), "{text}");
    assert!(text.contains("slowest: job."), "{text}");
    let json: serde_json::Value = serde_json::from_str(&run("40", "json")).unwrap();
    assert_eq!(json["groups"][0]["jobs"].as_array().unwrap().len(), 40);
    // 16 jobs: each still shown.
    let text = run("16", "text");
    assert_eq!(
        text.matches("  read ").count(),
        17,
        "16 jobs and the total: {text}"
    );
    assert!(!text.contains("jobs, each:"));
}

/// A large report (6,400 jobs, tens of MB) is read by `report` and `compare` in memory near
/// its own size: under an address-space limit of 8 times the report's size they finish
/// (reading it as a JSON tree took 20 times its size for `compare`).
#[test]
fn large_reports_are_read_in_bounded_memory() {
    use std::os::unix::process::CommandExt;
    let d = tmp();
    let p = d.path();
    let mut r = json_in(p, &["--ioengine=null", "--size=1m", "--numjobs=64"]);
    let (jobs, fio_jobs) = (r["groups"][0]["jobs"].clone(), r["jobs"].clone());
    for _ in 0..99 {
        let g = r["groups"][0]["jobs"].as_array_mut().unwrap();
        g.extend(jobs.as_array().unwrap().iter().cloned());
        let f = r["jobs"].as_array_mut().unwrap();
        f.extend(fio_jobs.as_array().unwrap().iter().cloned());
    }
    let text = r.to_string();
    drop(r);
    let size = text.len() as u64;
    assert!(size > 20 << 20, "{size}");
    std::fs::write(p.join("big.json"), text).unwrap();
    let limit = 8 * size + (128 << 20);
    for args in [
        &["report", "--output-format=text", "big.json"][..],
        &["compare", "big.json", "big.json"][..],
    ] {
        let mut c = super::bin();
        c.current_dir(p).args(args);
        // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
        unsafe {
            c.pre_exec(move || {
                let l = libc::rlimit {
                    rlim_cur: limit,
                    rlim_max: limit,
                };
                libc::setrlimit(libc::RLIMIT_AS, &l);
                Ok(())
            });
        }
        let o = c.output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
    }
}
