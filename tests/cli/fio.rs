//! fio mode: `iogauge fio ARGS…` and the binary run under the name `fio` take fio's command
//! line, keep fio's defaults (files kept, a quiet stderr) and write fio's formats, iogauge's
//! own report under the `"iogauge"` key. fio's own test scripts run against it in
//! scripts/fio-tests.sh; these check the door itself.

use super::*;

/// The iogauge binary under the name `fio` (a link in `dir`).
fn fio_link(dir: &Path) -> PathBuf {
    let link = dir.join("fio");
    std::os::unix::fs::symlink(assert_cmd::cargo::cargo_bin!("iogauge"), &link)
        .expect("a link named fio");
    link
}

#[test]
fn named_fio_it_takes_fios_command_line_and_writes_fios_json() {
    let d = tmp();
    let fio = fio_link(d.path());
    let job = d.path().join("t.fio");
    std::fs::write(&job, "[seq]\nrw=write\nbs=4k\nsize=64k\nfilename=data\n").unwrap();
    // fio's order: options, the job file, more options after it; values as separate words.
    let o = Command::new(&fio)
        .current_dir(d.path())
        .args(["--max-jobs=16", "--output-format", "json", "t.fio"])
        .args(["--output=out.json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        "",
        "fio prints nothing on stderr for a good run"
    );
    let doc: Value = serde_json::from_slice(&std::fs::read(d.path().join("out.json")).unwrap())
        .expect("one JSON document");
    let j = &doc["jobs"][0];
    assert_eq!(j["jobname"], "seq");
    assert_eq!(j["write"]["io_kbytes"], 64);
    assert_eq!(j["write"]["total_ios"], 16);
    assert_eq!(j["job options"]["name"], "seq", "fio echoes the job's name");
    // iogauge's own report sits under one key, none of its keys among fio's.
    assert!(doc["iogauge"]["groups"].is_array());
    for k in ["groups", "warnings", "host", "schema"] {
        assert!(doc.get(k).is_none(), "{k} at the top level");
    }
    // fio keeps the file it laid out.
    assert_eq!(
        std::fs::metadata(d.path().join("data")).unwrap().len(),
        65536
    );
}

#[test]
fn options_before_the_first_name_are_defaults_and_warnings_go_to_the_report() {
    let d = tmp();
    let o = run_in(
        d.path(),
        &[
            "fio",
            "--rw=read",
            "--size=32k",
            "--bs=4k",
            "--ioengine=null",
            "--name=a",
            "--name=b",
            "--iodepth=4",
            "--output-format=json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // iodepth=4 with the null engine is a warning: in the report, not on stderr.
    assert_eq!(stderr(&o), "");
    let doc: Value = serde_json::from_str(&stdout(&o)).expect("JSON on stdout");
    let names: Vec<&str> = doc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["jobname"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a", "b"]);
    for j in doc["jobs"].as_array().unwrap() {
        assert_eq!(j["read"]["io_kbytes"], 32, "{j}");
    }
    let warnings = doc["iogauge"]["warnings"].to_string();
    assert!(warnings.contains("iodepth=4"), "{warnings}");
}

#[test]
fn normal_terse_and_json_plus_are_fios_formats() {
    let d = tmp();
    let args = |f: &str| {
        vec![
            "fio".to_string(),
            "--name=x".into(),
            "--ioengine=null".into(),
            "--rw=randread".into(),
            "--size=64k".into(),
            format!("--output-format={f}"),
        ]
    };
    let run = |f: &str| {
        let a = args(f);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let o = run_in(d.path(), &a);
        assert_eq!(o.status.code(), Some(0), "{f}: {}", stderr(&o));
        stdout(&o)
    };
    let normal = run("normal");
    assert!(
        normal.contains("x: (groupid=0, jobs=1): err= 0"),
        "{normal}"
    );
    assert!(normal.contains("  read: IOPS="), "{normal}");
    assert!(
        normal.contains("Run status group 0 (all jobs):"),
        "{normal}"
    );
    let terse = run("terse");
    let fields: Vec<&str> = terse.trim_end().split(';').collect();
    assert_eq!(&fields[..5], ["3", "fio-3.33", "x", "0", "0"], "{terse}");
    // Read: KiB, KiB/s, IOPS, runtime, then slat, clat, 20 percentiles, lat, bw (5).
    assert_eq!(fields[5], "64", "{terse}");
    let plus: Value = serde_json::from_str(&run("json+")).unwrap();
    let bins = &plus["jobs"][0]["read"]["clat_ns"]["bins"];
    let total: u64 = bins
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(total, 16, "every I/O in a bin: {bins}");
    let json: Value = serde_json::from_str(&run("json")).unwrap();
    assert!(json["jobs"][0]["read"]["clat_ns"].get("bins").is_none());
}

#[test]
fn refusals_name_the_option_and_create_nothing() {
    let d = tmp();
    for (args, want) in [
        (
            &[
                "fio",
                "--readonly",
                "--name=w",
                "--rw=write",
                "--size=4k",
                "--filename=f",
            ][..],
            "--readonly: job w writes",
        ),
        (
            &[
                "fio",
                "--max-jobs=2",
                "--name=m",
                "--numjobs=3",
                "--size=4k",
                "--filename=f",
            ][..],
            "--max-jobs=2: the jobs (numjobs clones counted) number 3",
        ),
        (
            &["fio", "--client=host1", "--name=c", "--size=4k"][..],
            "--client: fio's client/server mode is not iogauge's",
        ),
        (
            &["fio", "--output-format=xml", "--name=x"][..],
            "unknown format xml",
        ),
    ] {
        let o = run_in(d.path(), args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    }
    assert_eq!(
        std::fs::read_dir(d.path()).unwrap().count(),
        0,
        "nothing created"
    );
}

#[test]
fn parse_only_runs_nothing_and_debug_parse_says_what_was_parsed() {
    let d = tmp();
    let o = run_in(
        d.path(),
        &[
            "fio",
            "--parse-only",
            "--debug=parse",
            "--ss_dur=10s",
            "--ss=iops:10%",
            "--name=p",
            "--size=1m",
            "--filename=never",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("set steady state threshold to 10.000000%"),
        "{out}"
    );
    assert!(out.contains(" size=1m"), "{out}");
    // Each option once, as given (a job's defaults are not said again under it).
    assert_eq!(out.matches(" ss_dur=10s").count(), 1, "{out}");
    assert!(
        !d.path().join("never").exists(),
        "parse-only creates nothing"
    );
}

#[test]
fn verify_reads_count_as_reads_and_a_backlog_checks_each_block_once() {
    let d = tmp();
    let json = |extra: &[&str]| -> Value {
        let mut a = vec![
            "fio",
            "--name=v",
            "--filename=data",
            "--rw=write",
            "--bs=4k",
            "--size=256k",
            "--verify=md5",
            "--output-format=json",
        ];
        a.extend_from_slice(extra);
        let o = run_in(d.path(), &a);
        assert_eq!(o.status.code(), Some(0), "{a:?}: {}", stderr(&o));
        serde_json::from_str(&stdout(&o)).unwrap()
    };
    // fio's t0025: the verify phase's reads are the job's reads.
    let r = json(&[]);
    let read = &r["jobs"][0]["read"];
    assert_eq!(read["io_kbytes"], 256, "{read}");
    assert_eq!(read["total_ios"], 64);
    assert!(
        read["bw_bytes"].as_u64().unwrap() > 0,
        "over the check's time"
    );
    assert_eq!(r["jobs"][0]["write"]["io_kbytes"], 256);
    // fio's t0005: what the backlog's pauses checked is not read again after the job.
    let r = json(&["--verify_backlog=8"]);
    assert_eq!(r["jobs"][0]["read"]["io_kbytes"], 256, "{}", r["jobs"][0]);
    let v = &r["iogauge"]["groups"][0]["jobs"][0]["verify"];
    assert_eq!(v["blocks"], 64, "every block checked once: {v}");
    assert_eq!(v["bad_blocks"], 0);
    // A backlog batch smaller than the backlog leaves blocks to the phase after the job.
    let r = json(&["--verify_backlog=8", "--verify_backlog_batch=4"]);
    let v = &r["iogauge"]["groups"][0]["jobs"][0]["verify"];
    assert_eq!(v["blocks"], 64, "{v}");
    assert_eq!(r["jobs"][0]["read"]["io_kbytes"], 256);
}

#[test]
fn flow_keeps_the_jobs_of_a_flow_id_in_the_ratio_of_their_weights() {
    let d = tmp();
    let o = run_in(
        d.path(),
        &[
            "fio",
            "--ioengine=null",
            "--bs=4k",
            "--size=100g",
            "--time_based",
            "--runtime=1",
            // Jobs that idle between I/Os, so a loaded machine's scheduler does not decide
            // the ratio instead of the flow.
            "--thinktime=20",
            "--flow_id=1",
            "--name=light",
            "--flow=1",
            "--name=heavy",
            "--flow=4",
            "--output-format=json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let ios = |i: usize| r["jobs"][i]["read"]["total_ios"].as_u64().unwrap() as f64;
    let ratio = ios(1) / ios(0);
    assert!(
        (3.6..=4.4).contains(&ratio),
        "heavy/light = {ratio}: {} / {}",
        ios(1),
        ios(0)
    );
}

/// fio's `zonemode=strided` on a real file, with fio's leniency about a size with a stray
/// character after it (t/strided.py passes `--filesize=65536)`).
#[test]
fn strided_zones_keep_each_stretch_of_io_in_its_zone() {
    let d = tmp();
    let o = run_in(
        d.path(),
        &[
            "fio",
            "--name=z",
            "--filename=data",
            "--rw=randread",
            "--bs=4k",
            "--size=1m",
            "--filesize=1m)",
            "--zonemode=strided",
            "--zonerange=64k",
            "--zonesize=32k",
            "--zoneskip=64k",
            "--write_iops_log=z",
            "--log_offset=1",
            "--output-format=json",
            "--output=out.json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc: Value = serde_json::from_slice(&std::fs::read(d.path().join("out.json")).unwrap())
        .expect("fio's JSON");
    let warned = doc["iogauge"]["warnings"].to_string();
    assert!(
        warned.contains("filesize=1m): fio reads this as 1m"),
        "{warned}"
    );
    let offsets: Vec<u64> = std::fs::read_to_string(d.path().join("z_iops.1.log"))
        .unwrap()
        .lines()
        .map(|l| l.split(',').nth(4).unwrap().trim().parse().unwrap())
        .collect();
    // 256 I/Os of 4k: 8 per zone (32k), zones 128k apart (64k + 64k skipped), 8 zones in
    // 1 MiB, then around again.
    assert_eq!(offsets.len(), 256);
    for (k, chunk) in offsets.chunks(8).enumerate() {
        let zone = (k as u64 % 8) * (128 << 10);
        let mut seen: Vec<u64> = chunk.to_vec();
        assert!(
            seen.iter().all(|&o| o >= zone && o < zone + (64 << 10)),
            "{k}: {chunk:?}"
        );
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(
            seen.len(),
            8,
            "random map: no block twice in a stretch: {chunk:?}"
        );
    }
}

/// `write_iolog`: fio's I/O log, version 3, each I/O and flush in issue order; the real fio,
/// where installed, replays it to the same I/O.
#[test]
fn write_iolog_is_fios_and_fio_replays_it() {
    let d = tmp();
    let args = [
        "fio",
        "--name=w",
        "--rw=write",
        "--bs=1m",
        "--size=4m",
        "--fsync=2",
        "--write_iolog=w.iolog",
        "--output=/dev/null",
    ];
    let o = run_in(d.path(), &args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let log = std::fs::read_to_string(d.path().join("w.iolog")).unwrap();
    let lines: Vec<Vec<&str>> = log.lines().map(|l| l.split(' ').collect()).collect();
    assert_eq!(log.lines().next(), Some("fio version 3 iolog"));
    let ops: Vec<String> = lines[1..].iter().map(|l| l[1..].join(" ")).collect();
    assert_eq!(
        ops,
        [
            "w.0.0 add",
            "w.0.0 open",
            "w.0.0 write 0 1048576",
            "w.0.0 write 1048576 1048576",
            "w.0.0 sync 0 0",
            "w.0.0 write 2097152 1048576",
            "w.0.0 write 3145728 1048576",
            "w.0.0 sync 0 0",
            "w.0.0 close",
        ]
    );
    let times: Vec<u64> = lines[1..].iter().map(|l| l[0].parse().unwrap()).collect();
    assert!(
        times.windows(2).all(|t| t[0] <= t[1]),
        "in issue order: {times:?}"
    );
    // Several jobs into one log would interleave: refused before anything runs.
    let o = run_in(
        d.path(),
        &[&args[..], &["--numjobs=2", "--filename=x"]].concat(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("would both write it"), "{}", stderr(&o));
    assert!(!d.path().join("x").exists());
    // The real fio replays it: the same writes and flushes.
    let Ok(fio) = Command::new("fio")
        .current_dir(d.path())
        .args(["--name=r", "--read_iolog=w.iolog", "--output-format=json"])
        .output()
    else {
        skip!("fio is not installed: the replay is not checked");
        return;
    };
    assert!(fio.status.success(), "{}", stderr(&fio));
    let doc: Value = serde_json::from_slice(&fio.stdout).expect("fio's JSON");
    let j = &doc["jobs"][0];
    assert_eq!(j["write"]["io_bytes"], 4 << 20);
    assert_eq!(j["sync"]["total_ios"], 2);
}

/// log_store_compressed: the logs as fio's `.log.fz` (zlib streams of fio's binary samples),
/// which `--inflate-log` prints back; the real fio, where installed, reads iogauge's and
/// iogauge reads fio's, line for line.
#[test]
fn compressed_logs_are_fios_both_ways() {
    let d = tmp();
    let job = |prefix: &str| {
        [
            "--name=job",
            "--ioengine=null",
            "--filesize=8m",
            "--bs=128k",
            "--rw=write",
            &format!("--write_bw_log={prefix}"),
            "--per_job_logs=0",
            "--log_offset=1",
            "--log_compression=10k",
            "--log_store_compressed=1",
            "--output=/dev/null",
        ]
        .map(String::from)
    };
    let ours = job("ours");
    let o = run_in(
        d.path(),
        &[&["fio"][..], &ours.each_ref().map(String::as_str)].concat(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        !d.path().join("ours_bw.log").exists(),
        "only the compressed file"
    );
    let inflate = |file: &str| {
        let o = run_in(d.path(), &["fio", &format!("--inflate-log={file}")]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        stdout(&o)
    };
    let text = inflate("ours_bw.log.fz");
    let offsets: Vec<u64> = text
        .lines()
        .map(|l| l.split(", ").nth(4).unwrap().parse().unwrap())
        .collect();
    assert_eq!(
        offsets,
        (0..64).map(|k| k * 131072).collect::<Vec<_>>(),
        "{text}"
    );
    assert!(
        text.lines().all(|l| l.split(", ").nth(2) == Some("1")),
        "writes"
    );
    // A log that inflates past the 4 MiB pieces it is printed in: every line, in order.
    let o = run_in(
        d.path(),
        &[
            "fio",
            "--name=big",
            "--ioengine=null",
            "--size=800m",
            "--bs=4k",
            "--write_iops_log=big",
            "--log_offset=1",
            "--log_store_compressed=1",
            "--output=/dev/null",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let big = inflate("big_iops.1.log.fz");
    let offsets: Vec<u64> = big
        .lines()
        .map(|l| l.split(", ").nth(4).unwrap().parse().unwrap())
        .collect();
    assert_eq!(offsets.len(), 204_800, "40-byte samples: 8 MiB inflated");
    assert!(
        offsets
            .iter()
            .enumerate()
            .all(|(k, &o)| o == k as u64 * 4096)
    );
    // Not a compressed log: one line, exit 1.
    std::fs::write(d.path().join("plain"), "0, 1, 0, 4096, 0\n").unwrap();
    let o = run_in(d.path(), &["fio", "--inflate-log=plain"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("not a zlib-compressed log"),
        "{}",
        stderr(&o)
    );
    let Ok(fio) = Command::new("fio")
        .current_dir(d.path())
        .arg("--inflate-log=ours_bw.log.fz")
        .output()
    else {
        skip!("fio is not installed: compatibility with fio's .fz files is not checked");
        return;
    };
    assert_eq!(
        stdout(&fio),
        text,
        "fio reads iogauge's file as iogauge does"
    );
    let theirs = job("theirs");
    let made = Command::new("fio")
        .current_dir(d.path())
        .args(&theirs)
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", stderr(&made));
    let fio_text = Command::new("fio")
        .current_dir(d.path())
        .arg("--inflate-log=theirs_bw.log.fz")
        .output()
        .unwrap();
    assert_eq!(
        inflate("theirs_bw.log.fz"),
        stdout(&fio_text),
        "and fio's as fio does"
    );
}

/// fio's report switches: which latencies carry percentiles and json+ bins, and
/// `unified_rw_reporting=mixed` folding the directions into one block.
#[test]
fn percentile_switches_and_mixed_reporting_are_fios() {
    let d = tmp();
    let run = |extra: &[&str]| -> Value {
        let args = [
            &[
                "fio",
                "--name=p",
                "--filename=data",
                "--ioengine=io_uring",
                "--iodepth=4",
                "--rw=randrw",
                "--size=1m",
                "--output=out.json",
            ][..],
            extra,
        ]
        .concat();
        let o = run_in(d.path(), &args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let doc: Value =
            serde_json::from_slice(&std::fs::read(d.path().join("out.json")).unwrap()).unwrap();
        doc["jobs"][0].clone()
    };
    // fio's defaults: clat's percentiles only; plain json has no bins.
    let j = run(&["--output-format=json"]);
    for dir in ["read", "write"] {
        assert!(j[dir]["clat_ns"]["percentile"].is_object(), "{dir}");
        assert!(j[dir]["lat_ns"].get("percentile").is_none(), "{dir}");
        assert!(j[dir]["slat_ns"].get("percentile").is_none(), "{dir}");
        assert!(j[dir]["clat_ns"].get("bins").is_none(), "{dir}");
    }
    assert!(j.get("mixed").is_none());
    // All three, json+, folded: one block, each latency with bins that count every I/O.
    let j = run(&[
        "--output-format=json+",
        "--lat_percentiles=1",
        "--slat_percentiles=1",
        "--unified_rw_reporting=mixed",
    ]);
    for dir in ["read", "write", "trim"] {
        assert!(j.get(dir).is_none(), "{dir} folded into mixed");
    }
    let m = &j["mixed"];
    assert_eq!(m["io_bytes"], 1 << 20);
    assert_eq!(m["total_ios"], 256);
    for lat in ["slat_ns", "clat_ns", "lat_ns"] {
        let bins = m[lat]["bins"]
            .as_object()
            .unwrap_or_else(|| panic!("{lat}: {m}"));
        let n: u64 = bins.values().map(|v| v.as_u64().unwrap()).sum();
        assert_eq!(n, 256, "{lat}");
        assert!(
            m[lat]["percentile"]["99.000000"].as_u64().unwrap() >= m[lat]["min"].as_u64().unwrap()
        );
    }
    // A bad switch is refused by name.
    let o = run_in(
        d.path(),
        &["fio", "--name=p", "--size=1m", "--unified_rw_reporting=3"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--unified_rw_reporting=3"),
        "{}",
        stderr(&o)
    );
}

/// iodepth_level, iodepth_submit and iodepth_complete mean fio's: the share of I/Os by how
/// many were in flight once handed to the kernel, and of submissions and reaps by how many
/// I/Os each carried. For a size-bounded job the first two are exact counts, the same as the
/// real fio's where it is installed.
#[test]
fn iodepth_distributions_are_fios() {
    let d = tmp();
    std::fs::write(d.path().join("f"), vec![7u8; 16 << 20]).unwrap();
    let args = [
        "--name=d",
        "--filename=f",
        "--size=16m",
        "--rw=randread",
        "--ioengine=io_uring",
        "--iodepth=16",
        "--iodepth_batch_submit=4",
        "--output-format=json",
    ];
    let o = run_in(d.path(), &[&["fio"][..], &args].concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let ours: Value = serde_json::from_slice(&o.stdout).unwrap();
    let j = &ours["jobs"][0];
    // 4096 reads four at a time: the first four go in at 4 in flight (0.1%, fio's least
    // shown), the next eight at 8 and 12, then all at 16.
    let level = |k: &str| j["iodepth_level"][k].as_f64().unwrap();
    assert_eq!(level("16"), 100.0 * 4084.0 / 4096.0);
    assert_eq!((level("4"), level("8")), (0.1, 100.0 * 8.0 / 4096.0));
    assert_eq!(j["iodepth_submit"]["4"], 100.0, "four per submission");
    let psync = run_in(
        d.path(),
        &[
            "fio",
            "--name=p",
            "--filename=f",
            "--size=1m",
            "--output-format=json",
        ],
    );
    let p: Value = serde_json::from_slice(&psync.stdout).unwrap();
    assert_eq!(p["jobs"][0]["iodepth_level"]["1"], 100.0, "one at a time");
    assert_eq!(p["jobs"][0]["iodepth_complete"]["4"], 100.0);
    let Ok(fio) = Command::new("fio")
        .current_dir(d.path())
        .args(args)
        .output()
    else {
        skip!("fio is not installed: not compared with fio's");
        return;
    };
    let theirs: Value = serde_json::from_slice(&fio.stdout).expect("fio's JSON");
    for k in ["1", "2", "4", "8", "16", "32", ">=64"] {
        let (a, b) = (
            j["iodepth_level"][k].as_f64().unwrap(),
            theirs["jobs"][0]["iodepth_level"][k].as_f64().unwrap(),
        );
        assert!(
            (a - b).abs() < 1e-4,
            "iodepth_level {k}: {a} here, {b} in fio"
        );
        let (a, b) = (
            j["iodepth_submit"][k].as_f64(),
            theirs["jobs"][0]["iodepth_submit"][k].as_f64(),
        );
        assert_eq!(
            a.map(|x| x.round()),
            b.map(|x| x.round()),
            "iodepth_submit {k}"
        );
    }
}

/// --bandwidth-log: fio's aggregate logs, agg-read_bw.log, agg-write_bw.log and
/// agg-trim_bw.log: the whole run's KiB/s every 500 ms, every job summed, over every group;
/// an existing file of that name iogauge did not make is refused before anything runs.
#[test]
fn bandwidth_log_writes_fios_aggregate_logs() {
    let d = tmp();
    let args = [
        "fio",
        "--bandwidth-log",
        "--name=a",
        "--filename=f",
        "--size=8m",
        "--rw=randrw",
        "--bs=64k",
        "--name=b",
        "--stonewall",
        "--filename=g",
        "--size=4m",
        "--rw=write",
        "--output-format=json",
        "--output=out.json",
    ];
    let o = run_in(d.path(), &args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(d.path().join("out.json")).unwrap()).unwrap();
    let moved = |dir: &str| -> u64 {
        v["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j[dir]["io_bytes"].as_u64().unwrap())
            .sum()
    };
    for (ddir, name, dir) in [
        (0, "agg-read_bw.log", "read"),
        (1, "agg-write_bw.log", "write"),
        (2, "agg-trim_bw.log", "trim"),
    ] {
        let text = std::fs::read_to_string(d.path().join(name)).unwrap();
        let lines: Vec<Vec<f64>> = text
            .lines()
            .map(|l| l.split(',').map(|f| f.trim().parse().unwrap()).collect())
            .collect();
        assert!(!lines.is_empty(), "{name}");
        for (k, l) in lines.iter().enumerate() {
            assert_eq!(l.len(), 5, "{name}: {l:?}");
            assert_eq!(l[0], 500.0 * (k as f64 + 1.0), "{name}: every 500 ms");
            assert_eq!((l[2], l[3], l[4]), (ddir as f64, 0.0, 0.0));
        }
        // KiB/s over half-second windows: together, every byte the run moved that way.
        let kib: f64 = lines.iter().map(|l| l[1] * 0.5).sum();
        let want = moved(dir) as f64 / 1024.0;
        assert!(
            (kib - want).abs() <= lines.len() as f64,
            "{name}: {kib} KiB logged, {want} moved"
        );
    }
    let e = tmp();
    std::fs::write(e.path().join("agg-write_bw.log"), "not iogauge's").unwrap();
    let o = run_in(e.path(), &args);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("agg-write_bw.log"), "{}", stderr(&o));
    assert!(!e.path().join("f").exists(), "nothing ran");
}

/// The terse line under unified_rw_reporting, as fio writes it: `mixed` (1) puts the mixed
/// figures where the read's go and leaves out the write's; `both` (2) adds them after the
/// write's. The same field counts as the real fio's, where installed.
#[test]
fn terse_follows_unified_rw_reporting() {
    let d = tmp();
    std::fs::write(d.path().join("f"), vec![1u8; 1 << 20]).unwrap();
    let run = |bin: &str, unified: &str| -> Option<Vec<String>> {
        let args = [
            "--name=u",
            "--filename=f",
            "--rw=randread",
            "--size=1m",
            "--minimal",
            &format!("--unified_rw_reporting={unified}"),
        ];
        let o = match bin {
            "fio" => Command::new("fio")
                .current_dir(d.path())
                .args(args)
                .output()
                .ok()?,
            _ => run_in(d.path(), &[&["fio"][..], &args].concat()),
        };
        assert!(o.status.success(), "{bin} {unified}: {}", stderr(&o));
        let line = stdout(&o).lines().next().unwrap_or_default().to_string();
        Some(line.split(';').map(str::to_string).collect())
    };
    let (none, mixed, both) = (
        run("iogauge", "0").unwrap(),
        run("iogauge", "1").unwrap(),
        run("iogauge", "2").unwrap(),
    );
    let per_dir = none.len() - mixed.len();
    assert!(per_dir > 30, "a direction's fields: {per_dir}");
    assert_eq!(both.len(), none.len() + per_dir);
    // Mixed in the read's place: the whole 1 MiB, in KiB.
    assert_eq!(mixed[5], "1024", "{mixed:?}");
    assert_eq!(both[5 + 2 * per_dir], "1024", "{both:?}");
    let Some(fio_none) = run("fio", "0") else {
        skip!("fio is not installed: not compared with fio's");
        return;
    };
    let (fio_mixed, fio_both) = (run("fio", "1").unwrap(), run("fio", "2").unwrap());
    assert_eq!(
        (none.len(), mixed.len(), both.len()),
        (fio_none.len(), fio_mixed.len(), fio_both.len())
    );
}
