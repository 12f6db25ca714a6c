//! The engines' conformance and their options: the same workload through every engine, at
//! depth 1 and 32, buffered and direct, must move the same bytes in the same number of I/Os
//! and leave the same file contents; numpages must be one call over N buffers; io_uring's
//! options must reach the kernel or fail with a clear message; libaio is the kernel's native
//! AIO, with the depth the kernel gives it.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::{counts, iogauge, job, run_json, stderr, tmp, tmp_file};

/// Whether a small job with `opt` runs in `dir`; prints the reason when it does not.
fn runs_here(dir: &Path, what: &str, opt: &str) -> bool {
    let f = dir.join(format!("probe-{what}"));
    let o = iogauge(&[
        "run",
        opt,
        &format!("--filename={}", f.display()),
        "--size=64k",
        "--output-format=json",
    ]);
    if o.status.success() {
        return true;
    }
    skip!("{what}: {}", stderr(&o).trim());
    false
}

fn uring_available(dir: &Path) -> bool {
    runs_here(dir, "io_uring", "--ioengine=io_uring")
}

fn libaio_available(dir: &Path) -> bool {
    runs_here(dir, "libaio", "--ioengine=libaio")
}

fn direct_available(dir: &Path) -> bool {
    runs_here(dir, "direct", "--direct=1")
}

/// FNV-1a over the file's bytes: equal contents, equal hashes.
fn content_hash(path: &Path) -> (u64, u64) {
    let data = std::fs::read(path).expect("kept file");
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for b in &data {
        h = (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3);
    }
    (data.len() as u64, h)
}

/// Runs one workload, keeps the file, and returns the counts and the file's content hash.
fn outcome(dir: &Path, tag: &str, args: &[String]) -> ((u64, u64, u64, u64), (u64, u64)) {
    let f = dir.join(tag);
    let mut all: Vec<String> = vec![format!("--filename={}", f.display()), "--keep".into()];
    all.extend_from_slice(args);
    let refs: Vec<&str> = all.iter().map(String::as_str).collect();
    let r = run_json(&refs, 0);
    let j = job(&r);
    assert!(j["error"].is_null(), "{tag}: {}", j["error"]);
    let c = counts(j);
    let h = content_hash(&f);
    std::fs::remove_file(&f).unwrap();
    (c, h)
}

#[test]
fn every_engine_gives_the_same_counts_and_contents() {
    let d = tmp();
    let mut engines = vec![
        "psync", "sync", "vsync", "pvsync", "pvsync2", "mmap", "splice", "posixaio",
    ];
    if uring_available(d.path()) {
        engines.push("io_uring");
    }
    if libaio_available(d.path()) {
        engines.push("libaio");
    }
    let directs: &[&str] = if direct_available(d.path()) {
        &["0", "1"]
    } else {
        &["0"]
    };
    const SIZE: u64 = 2 << 20;
    let mut checked = 0;
    for rw in [
        "read",
        "write",
        "randread",
        "randwrite",
        "rw",
        "randrw",
        "update",
    ] {
        for bs in [4096u64, 131072] {
            for direct in directs {
                let mut seen: BTreeMap<String, _> = BTreeMap::new();
                for engine in &engines {
                    // A mapping cannot bypass the page cache: mmap takes no direct=1.
                    if *engine == "mmap" && *direct == "1" {
                        continue;
                    }
                    for depth in ["1", "32"] {
                        let args: Vec<String> = vec![
                            format!("--rw={rw}"),
                            format!("--bs={bs}"),
                            format!("--size={SIZE}"),
                            format!("--ioengine={engine}"),
                            format!("--iodepth={depth}"),
                            format!("--direct={direct}"),
                        ];
                        let tag = format!("{rw}-{bs}-d{direct}-{engine}-q{depth}");
                        seen.insert(tag.clone(), outcome(d.path(), &tag, &args));
                        checked += 1;
                    }
                }
                // The same workload as numpages=4 of bs/4: one call over 4 buffers moves
                // exactly what one bs-sized call does.
                let quarter = bs / 4;
                for engine in engines.iter().filter(|e| {
                    !e.starts_with("psync") && !["sync", "mmap", "splice", "posixaio"].contains(*e)
                }) {
                    let args: Vec<String> = vec![
                        format!("--rw={rw}"),
                        format!("--bs={quarter}"),
                        "--numpages=4".into(),
                        format!("--size={SIZE}"),
                        format!("--ioengine={engine}"),
                        "--iodepth=8".into(),
                        format!("--direct={direct}"),
                    ];
                    let tag = format!("{rw}-{quarter}x4-d{direct}-{engine}");
                    seen.insert(tag.clone(), outcome(d.path(), &tag, &args));
                    checked += 1;
                }
                let (first_tag, first) = seen.iter().next().unwrap();
                let per_pass = SIZE / bs * if rw == "update" { 2 } else { 1 };
                let ((ri, rb, wi, wb), (len, _)) = *first;
                assert_eq!(ri + wi, per_pass, "{first_tag}: I/O count");
                assert_eq!(rb + wb, per_pass * bs, "{first_tag}: bytes");
                assert_eq!(len, SIZE, "{first_tag}: file size");
                for (tag, o) in &seen {
                    assert_eq!(o, first, "{tag} differs from {first_tag}");
                }
            }
        }
    }
    // Fresh random data per write (refill_buffers) is seeded per write, not per completion.
    let refill = |engine: &str, depth: &str| {
        let args: Vec<String> = ["--rw=update", "--size=1m", "--refill_buffers"]
            .iter()
            .map(|s| s.to_string())
            .chain([format!("--ioengine={engine}"), format!("--iodepth={depth}")])
            .collect();
        outcome(d.path(), &format!("refill-{engine}-{depth}"), &args)
    };
    let base = refill("psync", "1");
    for engine in &engines[1..] {
        assert_eq!(refill(engine, "32"), base, "refill_buffers on {engine}");
    }
    eprintln!("conformance: {checked} runs over engines {engines:?}, direct {directs:?}");
}

/// The system calls a command makes, counted by strace (None when strace is missing).
fn strace_counts(args: &[&str]) -> Option<String> {
    let out = std::process::Command::new("strace")
        .args([
            "-f",
            "-c",
            "-e",
            "trace=preadv,pwritev,preadv2,pwritev2,pread64,pwrite64",
        ])
        .arg(assert_cmd::cargo::cargo_bin!("iogauge"))
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Calls of `name` in strace -c output.
fn calls(table: &str, name: &str) -> Option<u64> {
    table.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.last() == Some(&name)).then(|| f[3].parse().ok())?
    })
}

#[test]
fn numpages_is_one_vectored_call_per_io() {
    let (_d, f, fname) = tmp_file();
    // 4 MiB in calls of 16 pages of 64 KiB: 4 calls.
    let r = run_json(
        &[
            &fname,
            "--rw=write",
            "--bs=64k",
            "--numpages=16",
            "--size=4m",
            "--ioengine=pvsync",
        ],
        0,
    );
    let j = job(&r);
    assert_eq!(counts(j), (0, 0, 4, 4 << 20));
    assert_eq!(j["engine"]["bytes_per_io"], 1 << 20);
    assert_eq!(j["engine"]["numpages"], 16);
    assert_eq!(std::fs::metadata(&f).map(|m| m.len()).ok(), None, "removed");

    let Some(table) = strace_counts(&[
        "run",
        &fname,
        "--rw=write",
        "--bs=64k",
        "--numpages=16",
        "--size=4m",
        "--ioengine=pvsync2",
        "--output-format=json",
    ]) else {
        skip!("syscall count: strace is not installed");
        return;
    };
    // Layout is not needed for a sequential write, so these are the job's own calls.
    assert_eq!(calls(&table, "pwritev2"), Some(4), "{table}");
    assert_eq!(calls(&table, "pwrite64"), None, "{table}");
}

#[test]
fn numpages_rules_are_checked_before_anything_runs() {
    let (_d, f, fname) = tmp_file();
    for (args, want) in [
        (
            vec!["--numpages=4", "--ioengine=psync", "--size=1m"],
            "--numpages=4: needs a vectored engine",
        ),
        (
            vec!["--numpages=3", "--bs=64k", "--size=1m", "--ioengine=pvsync"],
            "not a multiple of bs x numpages",
        ),
        (
            vec!["--numpages=1025", "--ioengine=pvsync", "--size=1m"],
            "--numpages=1025",
        ),
        (
            vec![
                "--fixedbufs",
                "--numpages=2",
                "--ioengine=io_uring",
                "--size=1m",
            ],
            "--fixedbufs",
        ),
        (
            vec!["--fixedbufs", "--size=1m"],
            "applies only to ioengine=io_uring",
        ),
        (
            vec!["--hipri", "--ioengine=pvsync2", "--size=1m"],
            "--hipri=1: needs direct=1",
        ),
        (
            vec!["--nowait", "--ioengine=psync", "--size=1m"],
            "--nowait",
        ),
        (
            vec!["--iodepth=0", "--ioengine=io_uring", "--size=1m"],
            "--iodepth=0",
        ),
        (
            vec!["--iodepth=5000", "--ioengine=io_uring", "--size=1m"],
            "--iodepth=5000",
        ),
    ] {
        let mut all = vec!["run", &fname];
        all.extend(args.iter().copied());
        let o = iogauge(&all);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert_eq!(e.lines().count(), 1, "{args:?}: {e}");
        assert!(e.contains(want), "{args:?}: want {want:?} in {e}");
        assert!(!f.exists(), "{args:?} created the file");
    }
}

#[test]
fn iodepth_with_a_sync_engine_warns() {
    let d = tmp();
    let fname = format!("--filename={}", d.path().join("f").display());
    let o = iogauge(&[
        "run",
        &fname,
        "--size=64k",
        "--iodepth=16",
        "--output-format=json",
    ]);
    assert!(o.status.success());
    let e = stderr(&o);
    assert!(
        e.contains("iodepth=16 has no effect with ioengine=psync"),
        "{e}"
    );
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(job(&r)["engine"]["iodepth"], 1);
}

#[test]
fn io_uring_keeps_the_queue_full_and_splits_latency() {
    let d = tmp();
    if !uring_available(d.path()) {
        return;
    }
    let fname = format!("--filename={}", d.path().join("f").display());
    let r = run_json(
        &[
            &fname,
            "--rw=randread",
            "--size=8m",
            "--ioengine=io_uring",
            "--iodepth=16",
        ],
        0,
    );
    let j = job(&r);
    assert_eq!(counts(j), (2048, 8 << 20, 0, 0));
    let rd = &j["read"];
    for k in ["lat_ns", "slat_ns", "clat_ns"] {
        assert_eq!(rd[k]["count"], 2048, "{k}");
    }
    // slat + clat = lat for every I/O, so the means add up (to rounding).
    let mean = |k: &str| rd[k]["mean"].as_f64().unwrap();
    let sum = mean("slat_ns") + mean("clat_ns");
    assert!(
        (sum - mean("lat_ns")).abs() <= 1.0 + mean("lat_ns") * 1e-9,
        "{rd}"
    );
    // Time at each depth adds to 100%; most of it with 8 or more in flight.
    let levels = &j["iodepth"]["pct_time"];
    let total: f64 = levels
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_f64().unwrap())
        .sum();
    assert!((total - 100.0).abs() < 0.01, "{levels}");
    let deep = levels["8"].as_f64().unwrap() + levels["16"].as_f64().unwrap();
    assert!(deep > 50.0, "queue not kept full: {levels}");
    assert_eq!(j["engine"]["name"], "io_uring");
    // The text report names the engine and lists the depth levels in numeric order.
    let o = iogauge(&[
        "run",
        &fname,
        "--rw=randread",
        "--size=8m",
        "--ioengine=io_uring",
        "--iodepth=16",
    ]);
    let text = super::stdout(&o);
    assert!(
        text.contains("engine io_uring: IORING_OP_READ/WRITE"),
        "{text}"
    );
    let depth = text
        .lines()
        .find(|l| l.trim_start().starts_with("depth"))
        .unwrap();
    // Each level is labelled with the range it counts: 8-15, not 8.
    let ranges: Vec<(u32, u32)> = depth
        .split_whitespace()
        .filter_map(|w| w.strip_suffix(':'))
        .map(|l| {
            let l = l.trim_start_matches(">=");
            match l.split_once('-') {
                Some((a, b)) => (a.parse().unwrap(), b.parse().unwrap()),
                None => (l.parse().unwrap(), l.parse().unwrap()),
            }
        })
        .collect();
    assert!(!ranges.is_empty() && ranges.is_sorted(), "{depth}");
    assert!(depth.contains(" 8-15: "), "{depth}");
    for (lo, hi) in &ranges {
        assert!(
            lo == hi || (*hi + 1).is_power_of_two() && hi + 1 == 2 * lo,
            "{depth}"
        );
    }
    // At iodepth 16 the top level holds exactly 16 in flight: "16", not "16-31".
    assert!(ranges.iter().all(|&(_, hi)| hi <= 16), "{depth}");

    // A synchronous engine has no submission phase, and one I/O in flight at most.
    let r = run_json(&[&fname, "--rw=randread", "--size=1m"], 0);
    let j = job(&r);
    assert!(j["read"]["slat_ns"].is_null());
    assert_eq!(j["iodepth"]["pct_time"]["2"], 0.0);
}

#[test]
fn io_uring_options_reach_the_kernel_or_fail_clearly() {
    let d = tmp();
    if !uring_available(d.path()) {
        return;
    }
    let f = d.path().join("f");
    let fname = format!("--filename={}", f.display());
    for opts in [
        vec!["--fixedbufs"],
        vec!["--registerfiles"],
        vec!["--fixedbufs", "--registerfiles"],
        vec!["--sqthread_poll"],
        vec![
            "--iodepth_batch_submit=8",
            "--iodepth_batch_complete_min=4",
            "--iodepth_low=4",
        ],
        vec!["--iodepth_batch_complete_min=0"],
    ] {
        let mut args = vec![
            fname.as_str(),
            "--rw=randrw",
            "--size=4m",
            "--ioengine=io_uring",
            "--iodepth=16",
        ];
        args.extend(opts.iter().copied());
        let mut all = vec!["run", "--output-format=json"];
        all.extend(args.iter().copied());
        let o = iogauge(&all);
        if o.status.code() == Some(2) && opts == ["--sqthread_poll"] {
            skip!("sqthread_poll: {}", stderr(&o).trim());
            continue;
        }
        assert_eq!(o.status.code(), Some(0), "{opts:?}: {}", stderr(&o));
        let r: Value = serde_json::from_slice(&o.stdout).unwrap();
        let (ri, _, wi, _) = counts(job(&r));
        assert_eq!(ri + wi, 1024, "{opts:?}");
        let features = job(&r)["engine"]["features"].to_string();
        for o in &opts {
            let name = o.trim_start_matches("--").split('=').next().unwrap();
            if !name.starts_with("iodepth") {
                assert!(features.contains(name), "{name} missing from {features}");
            }
        }
    }
    // hipri needs a device with poll queues; this one (virtio, tmpfs) has none: the job must
    // fail with the reason, not hang or report nonsense.
    if direct_available(d.path()) {
        let o = iogauge(&[
            "run",
            &fname,
            "--rw=randread",
            "--size=1m",
            "--ioengine=io_uring",
            "--direct=1",
            "--hipri",
            "--output-format=json",
        ]);
        match o.status.code() {
            Some(0) => eprintln!("hipri: this device supports polled I/O"),
            Some(1) => {
                let e = stderr(&o);
                assert!(e.contains("poll queues"), "{e}");
                skip!("hipri: not supported by this device (as expected here)");
            }
            c => panic!("hipri: exit {c:?}: {}", stderr(&o)),
        }
        assert!(!f.exists());
    }
}

#[test]
fn pvsync2_applies_write_through_per_call() {
    let (_d, _, fname) = tmp_file();
    let r = run_json(
        &[
            &fname,
            "--rw=write",
            "--size=256k",
            "--ioengine=pvsync2",
            "--sync=dsync",
        ],
        0,
    );
    let j = job(&r);
    assert_eq!(
        j["engine"]["per_call_flags"],
        serde_json::json!(["RWF_DSYNC"])
    );
    let flags = j["files"][0]["open_flags"].to_string();
    assert!(!flags.contains("O_DSYNC"), "{flags}");
    assert_eq!(counts(j), (0, 0, 64, 256 << 10));
}

#[test]
fn io_uring_stops_cleanly_on_enospc_and_on_ctrl_c() {
    let d = tmp();
    if !uring_available(d.path()) {
        return;
    }
    if let Some(fs) = super::SmallFs::mount("4m") {
        let f = fs.path().join("big");
        let o = iogauge(&[
            "run",
            "--output-format=json",
            &format!("--filename={}", f.display()),
            "--rw=write",
            "--bs=16k",
            "--numpages=4",
            "--size=16m",
            "--ioengine=io_uring",
            "--iodepth=16",
            "--skip-space-check",
            "--fallocate=none",
        ]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        let r: Value = serde_json::from_slice(&o.stdout).unwrap();
        let err = &job(&r)["error"];
        assert_eq!(err["errno"].as_i64(), Some(libc::ENOSPC as i64), "{err}");
        let written = counts(job(&r)).3;
        assert!(
            written > 0 && written <= 4 << 20 && written % (64 << 10) == 0,
            "{written}"
        );
        assert!(super::entries(fs.path()).is_empty(), "created file removed");
    }

    let f = d.path().join("f");
    let child = super::bin()
        .args(["run", &format!("--filename={}", f.display()), "--size=16m"])
        .args(["--rw=randrw", "--ioengine=io_uring", "--iodepth=32"])
        .args(["--time_based", "--runtime=60", "--output-format=json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let sent = std::time::Instant::now();
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    assert!(
        sent.elapsed() < std::time::Duration::from_secs(2),
        "{:?}",
        sent.elapsed()
    );
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["interrupted"], true);
    let (ri, _, wi, _) = counts(job(&r));
    assert!(ri > 0 && wi > 0);
    assert!(!f.exists(), "file removed after Ctrl-C");
}

/// The system calls `iogauge run ARGS` makes among `which`, counted by strace.
fn strace_calls(which: &str, args: &[&str]) -> Option<String> {
    let out = std::process::Command::new("strace")
        .args(["-f", "-c", "-e", &format!("trace={which}")])
        .arg(assert_cmd::cargo::cargo_bin!("iogauge"))
        .arg("run")
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stderr).into_owned())
}

/// ioengine=libaio is Linux native AIO, not io_uring: direct reads at iodepth 8 go through
/// io_submit (one per I/O, fio's iodepth_batch_submit=1) and come back through io_getevents,
/// with the queue kept full; no ring is set up.
#[test]
fn libaio_is_native_aio_at_the_depth_asked() {
    let d = tmp();
    if !libaio_available(d.path()) || !direct_available(d.path()) {
        return;
    }
    let fname = format!("--filename={}", d.path().join("f").display());
    let args = [
        fname.as_str(),
        "--rw=randread",
        "--size=4m",
        "--ioengine=libaio",
        "--iodepth=8",
        "--direct=1",
        "--output-format=json",
    ];
    let r = run_json(&args[..6], 0);
    let j = job(&r);
    assert_eq!(counts(j), (1024, 4 << 20, 0, 0));
    assert_eq!(j["engine"]["name"], "libaio");
    assert_eq!(j["engine"]["iodepth"], 8);
    let levels = &j["iodepth"]["pct_time"];
    assert!(levels["8"].as_f64().unwrap() > 50.0, "{levels}");
    let Some(table) = strace_calls(
        "io_setup,io_submit,io_getevents,io_uring_setup,io_uring_enter",
        &args,
    ) else {
        skip!("syscall count: strace is not installed");
        return;
    };
    // The lay-out writes with psync first; the job's 1024 reads are one io_submit each.
    assert_eq!(calls(&table, "io_submit"), Some(1024), "{table}");
    assert!(
        calls(&table, "io_getevents").is_some_and(|n| n >= 100),
        "{table}"
    );
    assert_eq!(calls(&table, "io_uring_setup"), None, "{table}");
    assert_eq!(calls(&table, "io_uring_enter"), None, "{table}");
}

/// Buffered native AIO is done inside io_submit (the kernel has no asynchronous buffered
/// path for it): at iodepth 32 on a file the kernel reads from disk, libaio's achieved
/// depth is 1 and its latency is all submission, where io_uring keeps 32 reads in flight.
/// The same job, the same bytes; the depths differ because the kernel's do.
#[test]
fn buffered_libaio_gets_the_depth_the_kernel_gives_it() {
    let d = tmp();
    if !libaio_available(d.path()) || !uring_available(d.path()) {
        return;
    }
    let fname = format!("--filename={}", d.path().join("f").display());
    let run = |engine: &str| {
        let e = format!("--ioengine={engine}");
        // invalidate (the default) drops the file's cached pages before the job.
        let r = run_json(
            &[
                &fname,
                "--rw=randread",
                "--size=16m",
                &e,
                "--iodepth=32",
                "--keep",
            ],
            0,
        );
        job(&r).clone()
    };
    let aio = run("libaio");
    let ring = run("io_uring");
    for j in [&aio, &ring] {
        assert_eq!(counts(j), (4096, 16 << 20, 0, 0));
    }
    let mean = |j: &Value| j["iodepth"]["mean"].as_f64().unwrap();
    assert!(mean(&aio) <= 1.05, "libaio: {}", aio["iodepth"]);
    assert!(mean(&ring) >= 8.0, "io_uring: {}", ring["iodepth"]);
    let rd = &aio["read"];
    let m = |k: &str| rd[k]["mean"].as_f64().unwrap();
    assert!(m("clat_ns") < m("slat_ns") / 10.0, "{rd}");
}

/// libaio's options: userspace_reap runs, and nowait with direct reads (the kernel refuses
/// RWF_NOWAIT on buffered native AIO writes with EOPNOTSUPP, as fio then reports); io_uring's
/// and pvsync2's own are refused with libaio, and userspace_reap with any other engine, by
/// name, before anything is created.
#[test]
fn libaio_options_run_or_are_refused_by_name() {
    let d = tmp();
    if !libaio_available(d.path()) {
        return;
    }
    let fname = format!("--filename={}", d.path().join("f").display());
    let r = run_json(
        &[
            &fname,
            "--rw=randwrite",
            "--size=1m",
            "--ioengine=libaio",
            "--iodepth=4",
            "--userspace_reap=1",
        ],
        0,
    );
    assert_eq!(counts(job(&r)), (0, 0, 256, 1 << 20));
    // The kernel's EOPNOTSUPP for a buffered RWF_NOWAIT write, where it gives one, is
    // explained.
    let o = iogauge(&[
        "run",
        &fname,
        "--rw=write",
        "--size=1m",
        "--ioengine=libaio",
        "--nowait=1",
    ]);
    if o.status.code() == Some(1) && stderr(&o).contains("os error 95") {
        assert!(
            stderr(&o).contains("nowait (RWF_NOWAIT) is not supported"),
            "{}",
            stderr(&o)
        );
    } else {
        skip!("this file system takes buffered RWF_NOWAIT native AIO writes: no EOPNOTSUPP");
    }
    assert!(!d.path().join("f").exists());
    if direct_available(d.path()) {
        let r = run_json(
            &[
                &fname,
                "--rw=randread",
                "--size=1m",
                "--ioengine=libaio",
                "--iodepth=4",
                "--direct=1",
                "--nowait=1",
            ],
            0,
        );
        assert_eq!(counts(job(&r)), (256, 1 << 20, 0, 0));
        assert!(
            job(&r)["engine"].to_string().contains("RWF_NOWAIT"),
            "{}",
            job(&r)["engine"]
        );
    }
    for (args, says) in [
        (
            ["--ioengine=libaio", "--hipri=1"],
            "applies only to ioengine=io_uring or pvsync2",
        ),
        (
            ["--ioengine=libaio", "--fixedbufs=1"],
            "applies only to ioengine=io_uring",
        ),
        (
            ["--ioengine=io_uring", "--userspace_reap=1"],
            "applies only to ioengine=libaio",
        ),
    ] {
        let o = iogauge(&["run", &fname, "--size=1m", args[0], args[1]]);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
        assert!(!d.path().join("f").exists());
    }
}

/// fio's space engines: falloc makes each write a fallocate of its range (the file's blocks
/// allocated, no data written: it reads back as zeros), ftruncate each write an ftruncate to
/// its offset (a sequential pass of 1 MiB in 4 KiB ends at 1 MiB - 4 KiB, as fio's); both
/// count each I/O's bytes as fio does, and refuse verify (no data to read back).
#[test]
fn falloc_and_ftruncate_do_what_fio_does_per_io() {
    use std::os::unix::fs::MetadataExt as _;
    let d = tmp();
    let f = d.path().join("f");
    let fname = format!("--filename={}", f.display());
    let r = run_json(
        &[
            &fname,
            "--rw=randwrite",
            "--size=1m",
            "--ioengine=falloc",
            "--keep",
        ],
        0,
    );
    assert_eq!(counts(job(&r)), (0, 0, 256, 1 << 20));
    assert!(
        job(&r)["data"].as_str().unwrap().contains("moves no data"),
        "{}",
        job(&r)["data"]
    );
    let m = std::fs::metadata(&f).unwrap();
    assert_eq!(m.len(), 1 << 20);
    assert!(
        m.blocks() * 512 >= 1 << 20,
        "allocated: {} blocks",
        m.blocks()
    );
    std::fs::remove_file(&f).unwrap();

    let r = run_json(
        &[
            &fname,
            "--rw=write",
            "--size=1m",
            "--ioengine=ftruncate",
            "--keep",
        ],
        0,
    );
    assert_eq!(counts(job(&r)), (0, 0, 256, 1 << 20));
    assert_eq!(std::fs::metadata(&f).unwrap().len(), (1 << 20) - 4096);
    std::fs::remove_file(&f).unwrap();

    for engine in ["falloc", "ftruncate"] {
        let e = format!("--ioengine={engine}");
        let o = iogauge(&[
            "run",
            &fname,
            "--size=1m",
            "--rw=write",
            &e,
            "--verify=crc32c",
        ]);
        assert_eq!(o.status.code(), Some(2));
        assert!(stderr(&o).contains("moves no data"), "{}", stderr(&o));
        assert!(!f.exists());
    }
}

/// Two seconds of io_uring random reads at depth 8 of the file `name` names, its cached pages
/// kept, with `extra`.
fn cached_uring_reads<'a>(name: &'a str, extra: &'a str) -> [&'a str; 11] {
    [
        "run",
        name,
        "--ioengine=io_uring",
        "--rw=randread",
        "--bs=4k",
        "--iodepth=8",
        "--time_based",
        "--runtime=2",
        "--invalidate=0",
        extra,
        "--output-format=text",
    ]
}

/// io_uring's `force_async=N`: every Nth I/O goes to io_uring's worker threads (IOSQE_ASYNC)
/// instead of being tried inline: buffered reads of a cached file, which complete inline
/// without it, then run on `iou-wrk` threads, seen in the process while it runs.
#[test]
fn io_uring_force_async_hands_io_to_the_kernels_workers() {
    let d = tmp();
    if !uring_available(d.path()) {
        return;
    }
    let f = d.path().join("data");
    std::fs::write(&f, vec![3u8; 16 << 20]).unwrap();
    let workers = |extra: &str| -> usize {
        let name = format!("--filename={}", f.display());
        let mut child = super::bin()
            .current_dir(d.path())
            .args(cached_uring_reads(&name, extra))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let most = most_threads(&child, |c| c.starts_with("iou-wrk"));
        assert!(child.wait().unwrap().success());
        most
    };
    // Warm the page cache, so that without the flag each read completes inline.
    let _ = std::fs::read(&f).unwrap();
    assert_eq!(
        workers("--force_async=0"),
        0,
        "cached reads complete inline"
    );
    assert!(
        workers("--force_async=1") > 0,
        "every read handed to a worker"
    );
    let o = iogauge(&["run", "--size=1m", "--ioengine=psync", "--force_async=2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("applies only to ioengine=io_uring"),
        "{}",
        stderr(&o)
    );
}

/// The jobs' cpu lines count their own threads; when the kernel's io_uring workers do the I/O
/// (force_async), the text report says how much more the whole process spent, and the JSON's
/// process_cpu holds it. A job whose thread does its own I/O gets no such line.
#[test]
fn the_kernels_io_workers_cpu_is_reported_beside_the_jobs() {
    let d = tmp();
    if !uring_available(d.path()) {
        return;
    }
    let f = d.path().join("data");
    std::fs::write(&f, vec![3u8; 16 << 20]).unwrap();
    let _ = std::fs::read(&f).unwrap();
    let name = format!("--filename={}", f.display());
    let run = |extra: &str| {
        let o = iogauge(&cached_uring_reads(&name, extra));
        assert!(o.status.success(), "{}", stderr(&o));
        super::stdout(&o)
    };
    let text = run("--force_async=1");
    let line = text
        .lines()
        .find(|l| l.starts_with("process cpu"))
        .unwrap_or_else(|| panic!("no process line:\n{text}"));
    assert!(line.contains("more than the jobs' threads"), "{line}");
    assert!(line.contains("iou-wrk"), "{line}");
    let text = run("--force_async=0");
    assert!(!text.contains("process cpu"), "{text}");
}

/// fio's `write_hint`: a writing job's files carry the write lifetime hint on their inode
/// (read back with fcntl F_GET_RW_HINT); without it they carry none; a value it does not take
/// is refused naming the accepted ones.
#[test]
fn write_hint_reaches_the_files_inode() {
    const F_GET_RW_HINT: libc::c_int = 1035;
    let d = tmp();
    let hint_of = |extra: &[&str]| -> u64 {
        let f = d.path().join("h");
        let name = format!("--filename={}", f.display());
        let mut args = vec!["run", &name, "--size=1m", "--rw=write", "--keep"];
        args.extend_from_slice(extra);
        let o = super::run_in(d.path(), &args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let file = std::fs::File::open(&f).unwrap();
        let mut hint = u64::MAX;
        use std::os::fd::AsRawFd as _;
        // SAFETY: fcntl writes one u64 to the pointer, which outlives the call.
        let r = unsafe { libc::fcntl(file.as_raw_fd(), F_GET_RW_HINT, &mut hint as *mut u64) };
        assert_eq!(r, 0, "{}", std::io::Error::last_os_error());
        std::fs::remove_file(&f).unwrap();
        hint
    };
    assert_eq!(hint_of(&[]), 0, "RWH_WRITE_LIFE_NOT_SET");
    assert_eq!(hint_of(&["--write_hint=short"]), 2);
    assert_eq!(hint_of(&["--write_hint=extreme"]), 5);
    let o = iogauge(&["run", "--size=1m", "--rw=write", "--write_hint=forever"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("extreme"), "{}", stderr(&o));
}

/// The most threads of `child` whose name `named` takes, seen in 1.5 s of looking.
fn most_threads(child: &std::process::Child, named: impl Fn(&str) -> bool) -> usize {
    let mut most = 0;
    for _ in 0..15 {
        std::thread::sleep(std::time::Duration::from_millis(100));
        let n = std::fs::read_dir(format!("/proc/{}/task", child.id()))
            .map(|tasks| {
                tasks
                    .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
                    .filter(|c| named(c))
                    .count()
            })
            .unwrap_or(0);
        most = most.max(n);
    }
    most
}

/// posixaio is the C library's POSIX AIO: glibc's helper thread (named after the job's
/// thread that made it) does the reads, where psync's job does its own. The report names the
/// calls.
#[test]
fn posixaio_runs_on_the_c_librarys_helper_threads() {
    let d = tmp();
    let f = d.path().join("data");
    std::fs::write(&f, vec![5u8; 16 << 20]).unwrap();
    let helpers = |engine: &str| -> usize {
        let name = format!("--filename={}", f.display());
        let e = format!("--ioengine={engine}");
        let mut child = super::bin()
            .current_dir(d.path())
            .args(["run", &name, &e, "--rw=randread", "--bs=4k", "--iodepth=8"])
            .args(["--time_based", "--runtime=2", "--invalidate=1"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // glibc's helpers take the name of the thread that starts them: the job's.
        let most = most_threads(&child, |c| c.trim() == "iogauge-job.0");
        assert!(child.wait().unwrap().success());
        most
    };
    assert_eq!(helpers("psync"), 1, "psync's job issues its own reads");
    let aio = helpers("posixaio");
    assert!(aio > 1, "no helper threads: {aio}");
    let name = format!("--filename={}", f.display());
    let r = run_json(
        &[&name, "--ioengine=posixaio", "--iodepth=4", "--size=1m"],
        0,
    );
    let calls = job(&r)["engine"]["calls"].as_str().unwrap();
    assert!(calls.contains("aio_read/aio_write"), "{calls}");
    assert_eq!(counts(job(&r)), (256, 1 << 20, 0, 0));
}

/// Windows' own engine is not in the Linux build: a job naming it is refused before anything
/// is created, in one line naming the option, the engine and what this build has; a job file
/// checked with `--parse-only` sets it aside as fio's hardware engines are.
#[test]
fn windowsaio_is_refused_here_and_set_aside_by_parse_only() {
    let d = tmp();
    let f = d.path().join("w.dat");
    let o = iogauge(&[
        "run",
        "--name=w",
        "--ioengine=windowsaio",
        "--rw=write",
        "--size=64k",
        &format!("--filename={}", f.display()),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("--ioengine=windowsaio")
            && err.contains("one of Windows' own engines")
            && err.contains("it has psync, sync"),
        "{err}"
    );
    assert!(!f.exists(), "nothing is created");
    let job = d.path().join("w.fio");
    std::fs::write(
        &job,
        format!(
            "[w]\nioengine=windowsaio\nrw=randread\niodepth=8\nsize=1m\nfilename={}\n",
            f.display()
        ),
    )
    .unwrap();
    let o = iogauge(&["job", job.to_str().unwrap(), "--parse-only"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout).into_owned() + &stderr(&o);
    assert!(
        out.contains("ioengine=windowsaio") && out.contains("needs Windows"),
        "{out}"
    );
    assert!(!f.exists(), "parse-only creates nothing");
}
