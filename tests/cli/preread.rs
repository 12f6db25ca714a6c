//! fio's `pre_read`: the job's files are read once before it starts, untimed and before the
//! group's device counters, so the job's reads come from the page cache — and the report
//! says so (beside each file, and in the device check's warning).

use super::{job, resident_bytes, run_json, tmp_file};

/// A kept 16 MiB file, its cached pages dropped by a direct read: read 1 MiB of it at
/// random (`io_size=1m`) with `pre_read=1`, and the whole 16 MiB region is in the page
/// cache afterwards (the pre-read read all of it, not only the job's 1 MiB); the device
/// read nothing while the job ran, and the report says the reads came from the page cache
/// and names the pre-read beside the file. Without it, the default invalidate leaves only
/// what the job read.
#[test]
fn pre_read_fills_the_page_cache_before_the_job_and_the_report_says_so() {
    let (_d, f, fname) = tmp_file();
    run_json(
        &[&fname, "--rw=write", "--bs=1m", "--size=16m", "--keep"],
        0,
    );
    let common = [
        fname.as_str(),
        "--rw=randread",
        "--bs=64k",
        "--size=16m",
        "--io_size=1m",
        "--keep",
    ];
    let mut plain = common.to_vec();
    plain.push("--direct=1");
    run_json(&plain, 0);
    let Some(0) = resident_bytes(&f) else {
        skip!("fincore (util-linux) cannot say what of the file is cached here");
        return;
    };
    let mut pre = common.to_vec();
    pre.push("--pre_read=1");
    let r = run_json(&pre, 0);
    assert_eq!(
        resident_bytes(&f),
        Some(16 << 20),
        "the whole region pre-read"
    );
    let j = job(&r);
    assert_eq!(j["read"]["bytes"], 1 << 20);
    let layout = j["files"][0]["layout"].as_str().unwrap();
    assert!(
        layout.contains("pre-read (16.00 MiB from byte 0)"),
        "{layout}"
    );
    if r["groups"][0]["devices"].as_array().unwrap().is_empty() {
        skip!("no block device below the temp dir: the device check is not made");
        return;
    }
    let device_read = |r: &serde_json::Value| -> u64 {
        r["groups"][0]["devices"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["read_bytes"].as_u64().unwrap())
            .sum()
    };
    // The device's counters are the whole device's: the other tests running beside this one
    // read it too (8 MiB during one such job in CI). The job's own reads add nothing; up to
    // three runs, the quietest is the job's.
    let mut r = r;
    for _ in 0..2 {
        if device_read(&r) < 256 << 10 {
            break;
        }
        r = run_json(&pre, 0);
    }
    let read = device_read(&r);
    assert!(
        read < 256 << 10,
        "the job's reads came from the cache: {read}"
    );
    let warnings = r["warnings"].to_string();
    assert!(warnings.contains("came from the page cache"), "{warnings}");

    // Without pre_read, invalidate (the default) drops the pages first: the job's 1 MiB,
    // read from the device, is all that is cached after it.
    let r = run_json(&common, 0);
    let read: u64 = r["groups"][0]["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["read_bytes"].as_u64().unwrap())
        .sum();
    assert!(read >= 1 << 20, "read from the device: {read}");
    let cached = resident_bytes(&f).unwrap();
    assert!(
        cached < 8 << 20,
        "only what the job read is cached: {cached}"
    );
}

/// With direct=1 the pre-read goes around the page cache as the job's reads do: a warning
/// says it leaves nothing cached for them.
#[test]
fn pre_read_with_direct_is_said_to_cache_nothing() {
    let (_d, _f, fname) = tmp_file();
    run_json(&[&fname, "--rw=write", "--bs=1m", "--size=4m", "--keep"], 0);
    let r = run_json(
        &[
            &fname,
            "--rw=read",
            "--bs=64k",
            "--size=4m",
            "--direct=1",
            "--pre_read=1",
        ],
        0,
    );
    let warnings = r["warnings"].to_string();
    assert!(
        warnings.contains("pre_read with direct") && warnings.contains("nothing cached"),
        "{warnings}"
    );
}

/// A job that only writes opens its files write-only: it is not pre-read, and a warning says
/// so (the run goes on, and writes what it was asked to).
#[test]
fn pre_read_of_a_job_that_only_writes_is_said_and_skipped() {
    let (_d, _f, fname) = tmp_file();
    let r = run_json(
        &[
            &fname,
            "--rw=write",
            "--bs=64k",
            "--size=1m",
            "--pre_read=1",
        ],
        0,
    );
    assert_eq!(job(&r)["write"]["bytes"], 1 << 20);
    let warnings = r["warnings"].to_string();
    assert!(warnings.contains("nothing is pre-read"), "{warnings}");
}
