//! fio's mmap engine: I/O as copies through a shared mapping of each file. Writes land in the
//! file (checked by verify), reads return its bytes, options that cannot apply are refused,
//! and a page that cannot be read (the file cut under the mapping: SIGBUS) is the job's error
//! with a report, not a dead process.

use super::*;

#[test]
fn writes_through_the_mapping_land_and_verify() {
    let d = tmp();
    let f = d.path().join("m");
    let name = format!("--filename={}", f.display());
    let o = run_in(
        d.path(),
        &[
            "run",
            &name,
            "--ioengine=mmap",
            "--rw=randwrite",
            "--bs=4k",
            "--size=1m",
            "--verify=md5",
            "--output-format=json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let j = job(&r);
    assert_eq!(counts(j).2, 256, "256 writes");
    assert_eq!(j["write"]["bytes"], 1 << 20);
    let v = &j["verify"];
    assert_eq!(
        (v["blocks"].as_u64(), v["bad_blocks"].as_u64()),
        (Some(256), Some(0))
    );
    assert!(
        j["engine"]["calls"]
            .as_str()
            .unwrap()
            .contains("shared mapping"),
        "{}",
        j["engine"]
    );
    assert!(entries(d.path()).is_empty(), "the file is removed");
}

#[test]
fn reads_through_the_mapping_return_the_files_bytes() {
    let d = tmp();
    let f = d.path().join("data");
    let bytes: Vec<u8> = (0..(1u32 << 20)).map(|i| (i * 7 % 253) as u8).collect();
    std::fs::write(&f, &bytes).unwrap();
    // A file of the test's own, read for a second through the mapping.
    let name = format!("--filename={}", f.display());
    let o = run_in(
        d.path(),
        &[
            "run",
            &name,
            "--ioengine=mmap",
            "--rw=randread",
            "--bs=64k",
            "--time_based",
            "--runtime=1",
            "--output-format=json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(counts(job(&r)).0 > 16, "{:?}", counts(job(&r)));
    assert_eq!(
        std::fs::read(&f).unwrap(),
        bytes,
        "a read job leaves the file as it was"
    );
}

#[test]
fn direct_io_and_trims_are_refused_with_mmap() {
    let d = tmp();
    for (extra, want) in [
        ("--direct=1", "copies through the page cache"),
        ("--rw=randtrim", "ioengine=mmap has no trim"),
    ] {
        let o = run_in(
            d.path(),
            &["run", "--ioengine=mmap", "--size=1m", "--name=m", extra],
        );
        assert_eq!(o.status.code(), Some(2), "{extra}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{extra}: {}", stderr(&o));
        assert!(entries(d.path()).is_empty());
    }
}

/// fio's `thp`: reads through a private mapping with huge pages asked for (the mapping's
/// flags are checked in the engine's unit test); writes, which a private mapping keeps from
/// the file, and thp on another engine are refused.
#[test]
fn thp_reads_through_a_private_mapping_and_refuses_writes() {
    let d = tmp();
    let f = d.path().join("m");
    let name = format!("--filename={}", f.display());
    let o = run_in(
        d.path(),
        &[
            "run",
            &name,
            "--ioengine=mmap",
            "--thp=1",
            "--rw=randread",
            "--bs=4k",
            "--size=2m",
            "--output-format=json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let j = job(&r);
    assert_eq!(counts(j), (512, 2 << 20, 0, 0));
    let calls = j["engine"]["calls"].as_str().unwrap();
    assert!(
        calls.contains("MAP_PRIVATE") && calls.contains("MADV_HUGEPAGE"),
        "{calls}"
    );
    for (engine, extra, want) in [
        (
            "--ioengine=mmap",
            "--rw=randwrite",
            "thp=1 with rw=randwrite: fio's thp maps the file privately",
        ),
        (
            "--ioengine=mmap",
            "--rw=randrw",
            "writes would never reach the file",
        ),
        (
            "--ioengine=psync",
            "--rw=read",
            "applies only to ioengine=mmap, not psync",
        ),
    ] {
        let o = run_in(
            d.path(),
            &["run", engine, "--thp=1", "--size=1m", "--name=t", extra],
        );
        assert_eq!(o.status.code(), Some(2), "{extra}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{extra}: {}", stderr(&o));
        assert_eq!(stderr(&o).trim().lines().count(), 1, "{}", stderr(&o));
        assert!(entries(d.path()).is_empty());
    }
}

/// The file cut under the mapping mid-run (another program truncating it): the next page
/// the job touches raises SIGBUS, which becomes the I/O's error (EIO); the run reports what
/// it measured and exits 1, not killed by the signal.
#[test]
fn a_file_cut_under_the_mapping_is_an_error_not_a_dead_process() {
    let d = tmp();
    let f = d.path().join("data");
    std::fs::write(&f, vec![1u8; 8 << 20]).unwrap();
    let name = format!("--filename={}", f.display());
    let child = bin()
        .current_dir(d.path())
        .args([
            "run",
            &name,
            "--ioengine=mmap",
            "--rw=randread",
            "--bs=4k",
            "--time_based",
            "--runtime=5",
            "--output-format=json",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(700));
    std::fs::OpenOptions::new()
        .write(true)
        .open(&f)
        .unwrap()
        .set_len(0)
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(1),
        "not a signal: {:?} {}",
        o.status,
        stderr(&o)
    );
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let errors = r["errors"].to_string();
    assert!(errors.contains("Input/output error"), "{errors}");
    assert!(counts(job(&r)).0 > 0, "what it read before is reported");
}
