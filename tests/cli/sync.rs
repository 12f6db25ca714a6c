//! fio's sync family: fsync=N, fdatasync=N, sync_file_range=FLAGS:N, end_fsync,
//! fsync_on_close, end_syncfs and write_barrier — the calls made (seen by strace), their
//! count in the report's sync latencies, and the refusals.

use super::*;

/// The flush calls the job's thread made (the thread that wrote), as strace prints them, and
/// the report. None (after printing SKIP) when strace is missing.
fn traced(args: &[&str]) -> Option<(Vec<String>, Value)> {
    let d = tmp();
    let trace = d.path().join("trace");
    let mut all = vec!["run", "--output-format=json"];
    all.extend_from_slice(args);
    let out = match Command::new("strace")
        .args(["-f", "-o"])
        .arg(&trace)
        .args([
            "-e",
            "trace=pwrite64,fsync,fdatasync,sync_file_range,syncfs",
        ])
        .arg(assert_cmd::cargo::cargo_bin!("iogauge"))
        .args(&all)
        .output()
    {
        Ok(o) => o,
        Err(e) => {
            skip!("strace cannot run ({e}); scripts/test-deps.sh installs it");
            return None;
        }
    };
    assert_eq!(out.status.code(), Some(0), "{all:?}: {}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    let text = std::fs::read_to_string(&trace).unwrap();
    let writer = text
        .lines()
        .find(|l| l.contains("pwrite64("))
        .and_then(|l| l.split_whitespace().next())
        .expect("the job wrote")
        .to_string();
    let calls = text
        .lines()
        .filter(|l| l.split_whitespace().next() == Some(writer.as_str()))
        .filter(|l| !l.contains("pwrite64(") && !l.contains("+++"))
        .map(|l| {
            let call = l.split_once(' ').unwrap().1;
            call.split_whitespace().collect::<Vec<_>>().join(" ")
        })
        .collect();
    Some((calls, report))
}

fn sync_count(r: &Value) -> u64 {
    job(r)["sync"]["count"].as_u64().unwrap_or(0)
}

fn names(calls: &[String]) -> Vec<&str> {
    calls.iter().map(|c| c.split('(').next().unwrap()).collect()
}

#[test]
fn fdatasync_every_n_writes_is_the_log_writer_test() {
    let (_d, _f, fname) = tmp_file();
    // 1 MiB in 8 KiB writes: 128 writes, a flush after every 4th.
    let args = [
        fname.as_str(),
        "--rw=write",
        "--bs=8k",
        "--size=1m",
        "--fdatasync=4",
    ];
    let Some((calls, r)) = traced(&args) else {
        return;
    };
    assert_eq!(names(&calls), vec!["fdatasync"; 32], "{calls:?}");
    assert_eq!(sync_count(&r), 32);
    assert_eq!(counts(job(&r)), (0, 0, 128, 1 << 20));
    // fio's part of the report has the sync block fio users read.
    let fio = &r["jobs"][0]["sync"];
    assert_eq!(fio["lat_ns"]["N"], 32, "{fio}");
    assert!(fio["lat_ns"]["mean"].as_f64().unwrap() > 0.0);
}

#[test]
fn fsync_and_fdatasync_together_follow_fios_order() {
    let (_d, _f, fname) = tmp_file();
    // 16 writes: fsync after writes 4, 8, 12, 16; fdatasync after 2, 6, 10, 14.
    let Some((calls, r)) = traced(&[
        &fname,
        "--rw=write",
        "--bs=4k",
        "--size=64k",
        "--fsync=4",
        "--fdatasync=2",
    ]) else {
        return;
    };
    let want: Vec<&str> = (0..4).flat_map(|_| ["fdatasync", "fsync"]).collect();
    assert_eq!(names(&calls), want, "{calls:?}");
    assert_eq!(sync_count(&r), 8);
}

#[test]
fn sync_file_range_covers_what_was_written_since_the_last_one() {
    let (_d, _f, fname) = tmp_file();
    // 32 writes of 8 KiB, a call after every 8th: four calls of 64 KiB each, in order.
    let Some((calls, r)) = traced(&[
        &fname,
        "--rw=write",
        "--bs=8k",
        "--size=256k",
        "--sync_file_range=wait_before,write:8",
    ]) else {
        return;
    };
    let want: Vec<String> = (0..4)
        .map(|i| {
            format!(
                "sync_file_range({{fd}}, {}, 65536, SYNC_FILE_RANGE_WAIT_BEFORE|SYNC_FILE_RANGE_WRITE) = 0",
                i * 65536
            )
        })
        .collect();
    let got: Vec<String> = calls
        .iter()
        .map(|c| {
            // The descriptor number is the process's business.
            let (head, rest) = c.split_once('(').unwrap();
            let (_, rest) = rest.split_once(',').unwrap();
            format!("{head}({{fd}},{rest}")
        })
        .collect();
    assert_eq!(got, want);
    assert_eq!(sync_count(&r), 4);
}

#[test]
fn end_flushes_fsync_each_file_or_sync_the_file_system_once() {
    let d = tmp();
    let dir = format!("--directory={}", d.path().display());
    let base = [
        dir.as_str(),
        "--rw=write",
        "--bs=64k",
        "--size=1m",
        "--nrfiles=2",
    ];
    for (flag, want) in [
        ("--end_fsync=1", vec!["fsync", "fsync"]),
        ("--fsync_on_close=1", vec!["fsync", "fsync"]),
        ("--end_syncfs=1", vec!["syncfs"]),
    ] {
        let mut args = base.to_vec();
        args.push(flag);
        let Some((calls, r)) = traced(&args) else {
            return;
        };
        assert_eq!(names(&calls), want, "{flag}: {calls:?}");
        assert_eq!(sync_count(&r), want.len() as u64, "{flag}");
    }
}

#[test]
fn sync_options_refuse_bad_values_and_say_what_barriers_do() {
    let (_d, f, fname) = tmp_file();
    for (opt, want) in [
        (
            "--sync_file_range=flush:8",
            "--sync_file_range=flush:8: expected FLAGS:N, FLAGS one or more of wait_before",
        ),
        (
            "--sync_file_range=write:0",
            "--sync_file_range=write:0: expected",
        ),
        ("--fdatasync=-1", "--fdatasync=-1: expected"),
    ] {
        let o = iogauge(&["run", &fname, "--rw=write", "--size=64k", opt]);
        assert_eq!(o.status.code(), Some(2), "{opt}");
        let e = stderr(&o);
        assert!(e.contains(want) && e.trim().lines().count() == 1, "{e}");
        assert!(!f.exists(), "nothing created for {opt}");
    }
    let o = iogauge(&[
        "run",
        &fname,
        "--rw=write",
        "--size=64k",
        "--write_barrier=4",
        "--output-format=json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("write_barrier: Linux has no barrier writes"));
}
