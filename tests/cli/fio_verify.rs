//! fio's semantics around verification and failures in fio mode: a failed job ends only its
//! group (later groups still run, unless `exitall_on_error`), `verify_only` checks the blocks
//! the job's own writes would have written (fio replays the workload), and the options fio
//! accepts and ignores on a verify job (`verify_backlog` on a reader, `verify_offset` with
//! `verify=pattern`).

use super::*;

fn fio_json(dir: &Path, args: &[&str]) -> (Value, Output) {
    let mut all = vec!["fio", "--output-format=json", "--output=out.json"];
    all.extend_from_slice(args);
    let o = run_in(dir, &all);
    let text = std::fs::read_to_string(dir.join("out.json")).unwrap_or_default();
    let v = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{e}: {text}\nstderr: {}", stderr(&o)));
    (v, o)
}

fn by_name<'a>(v: &'a Value, name: &str) -> Option<&'a Value> {
    v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["jobname"] == name)
}

/// A file of bytes iogauge did not write: any verify of it fails.
fn foreign(dir: &Path) {
    std::fs::write(dir.join("foreign"), vec![0x5a; 64 << 10]).unwrap();
}

#[test]
fn a_failed_job_ends_only_its_group_in_fio_mode() {
    let d = tmp();
    foreign(d.path());
    let jobs = [
        "--name=check",
        "--filename=foreign",
        "--rw=read",
        "--size=64k",
        "--verify=md5",
        "--verify_only=1",
        "--name=after",
        "--stonewall",
        "--filename=mine",
        "--rw=write",
        "--size=64k",
    ];
    let (v, o) = fio_json(d.path(), &jobs);
    assert_ne!(o.status.code(), Some(0), "a failed job fails the run");
    assert_eq!(by_name(&v, "check").unwrap()["error"], 84, "EILSEQ");
    let after = by_name(&v, "after").expect("the next group ran");
    assert_eq!(after["error"], 0);
    assert_eq!(after["write"]["io_bytes"], 65536);

    // exitall_on_error=1 on the failing job: the run ends with it, as in fio.
    let mut with = jobs.to_vec();
    with.insert(6, "--exitall_on_error=1");
    let (v, _) = fio_json(d.path(), &with);
    assert!(by_name(&v, "check").is_some());
    assert!(by_name(&v, "after").is_none(), "{v}");

    // iogauge run keeps its own rule: a failed job ends the run.
    let mut run = vec!["run", "--output-format=json"];
    run.extend_from_slice(&jobs);
    let o = run_in(d.path(), &run);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["groups"].as_array().unwrap().len(), 1, "{v}");
}

#[test]
fn verify_only_checks_what_the_jobs_writes_would_have_written() {
    let d = tmp();
    for (rw, extra) in [
        ("randrw", "--rwmixread=50"),
        ("write:4k", "--bs=4k"),
        ("randwrite", "--norandommap=1"),
    ] {
        let rw_opt = format!("--rw={rw}");
        let base = [
            "--name=v",
            "--filename=data",
            "--size=256k",
            rw_opt.as_str(),
            extra,
            "--verify=crc32c",
        ];
        std::fs::remove_file(d.path().join("data")).ok();
        let (first, o) = fio_json(d.path(), &base);
        assert_eq!(o.status.code(), Some(0), "{rw}: {}", stderr(&o));
        let own = &first["iogauge"]["groups"][0]["jobs"][0]["verify"];
        let written = own["blocks"].as_u64().unwrap();
        assert!(
            written > 0 && written < 64,
            "{rw}: a part of the file: {written}"
        );
        let mut only = base.to_vec();
        only.push("--verify_only=1");
        let (second, o) = fio_json(d.path(), &only);
        assert_eq!(o.status.code(), Some(0), "{rw}: {}", stderr(&o));
        let checked = &second["iogauge"]["groups"][0]["jobs"][0]["verify"];
        assert_eq!(checked["blocks"], written, "{rw}: the same blocks, no more");
        assert_eq!(checked["bad_blocks"], 0, "{rw}");
    }
}

#[test]
fn options_fio_accepts_and_ignores_on_a_verify_job_are_accepted() {
    let d = tmp();
    let (_, o) = fio_json(
        d.path(),
        &[
            "--name=w",
            "--filename=data",
            "--size=256k",
            "--rw=write",
            "--verify=pattern",
            "--verify_pattern=0xa5",
            "--verify_offset=1024",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).is_empty(),
        "fio mode says nothing: {}",
        stderr(&o)
    );
    let on_disk = std::fs::read(d.path().join("data")).unwrap();
    assert!(on_disk.iter().all(|&b| b == 0xa5), "no header was moved in");
    let (v, o) = fio_json(
        d.path(),
        &[
            "--name=r",
            "--filename=data",
            "--size=256k",
            "--rw=read",
            "--verify=pattern",
            "--verify_pattern=0xa5",
            "--verify_backlog=16",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let warned = v["iogauge"]["warnings"].to_string();
    assert!(warned.contains("verify_backlog=16 is ignored"), "{warned}");
    assert_eq!(v["jobs"][0]["read"]["io_bytes"], 256 << 10);
}

#[test]
fn a_pattern_with_fios_offset_piece_carries_each_writes_offset() {
    let d = tmp();
    let base = [
        "--name=o",
        "--filename=data",
        "--size=64k",
        "--bs=4k",
        "--rw=randwrite",
        "--verify=pattern",
        "--verify_pattern=1%o",
        "--verify_interval=512",
    ];
    let (v, o) = fio_json(d.path(), &base);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        v["iogauge"]["groups"][0]["jobs"][0]["verify"]["blocks"],
        128
    );
    let on_disk = std::fs::read(d.path().join("data")).unwrap();
    for (w, write) in on_disk.chunks(4096).enumerate() {
        let mut p = vec![1u8];
        p.extend_from_slice(&(w as u64 * 4096).to_le_bytes());
        assert!(
            write.iter().enumerate().all(|(k, &b)| b == p[k % 9]),
            "the write at {} holds 0x01 and its offset, repeated",
            w * 4096
        );
    }
    // A block holding another write's offset is found, where it is.
    let mut patched = on_disk.clone();
    patched[8192 + 1024 + 1..8192 + 1024 + 9].copy_from_slice(&4096u64.to_le_bytes());
    std::fs::write(d.path().join("data"), &patched).unwrap();
    let mut only = base.to_vec();
    only.push("--verify_only=1");
    let (v, _) = fio_json(d.path(), &only);
    assert_eq!(v["jobs"][0]["error"], 84);
    let bad = &v["iogauge"]["groups"][0]["jobs"][0]["verify"]["first_bad"];
    assert_eq!(bad.as_array().unwrap().len(), 1, "{bad}");
    assert_eq!(bad[0]["offset"], 8192 + 1024);
    // Where a block's write cannot be told (sizes that vary), %o is refused.
    let mut varied = base.to_vec();
    varied.push("--bsrange=4k-8k");
    let o = run_in(d.path(), &[&["fio"][..], &varied].concat());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("%o"), "{}", stderr(&o));
}

#[test]
fn verify_pattern_interval_restarts_the_pattern_with_its_own_offset() {
    let d = tmp();
    let base = [
        "--name=i",
        "--filename=data",
        "--filesize=16k",
        "--bs=4k",
        "--rw=write",
        "--verify=pattern",
        "--verify_pattern=%o",
        "--verify_pattern_interval=1000",
        "--verify_interval=512",
    ];
    let (v, o) = fio_json(d.path(), &base);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(v["jobs"][0]["error"], 0);
    let on_disk = std::fs::read(d.path().join("data")).unwrap();
    for (at, &b) in on_disk.iter().enumerate() {
        // The write's start, then every 1000 bytes into it: the pattern again, holding where.
        let write = at / 4096 * 4096;
        let start = write + (at - write) / 1000 * 1000;
        let want = (start as u64).to_le_bytes()[(at - start) % 8];
        assert_eq!(b, want, "byte {at}");
    }
    let mut only = base.to_vec();
    only.push("--verify_only=1");
    let (v, _) = fio_json(d.path(), &only);
    assert_eq!(v["jobs"][0]["error"], 0);
    assert_eq!(v["iogauge"]["groups"][0]["jobs"][0]["verify"]["blocks"], 32);
}

#[test]
fn pattern_hdr_checks_the_header_and_the_pattern_between_it_and_the_trailer() {
    let d = tmp();
    let base = [
        "--name=h",
        "--filename=data",
        "--size=64k",
        "--bs=4k",
        "--rw=randwrite",
        "--verify=pattern_hdr",
        "--verify_pattern=\"abcde\"",
        "--verify_interval=1024",
    ];
    let (v, o) = fio_json(d.path(), &base);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(v["iogauge"]["groups"][0]["jobs"][0]["verify"]["blocks"], 64);
    let on_disk = std::fs::read(d.path().join("data")).unwrap();
    // Each block: iogauge's 104-byte header, the pattern as the write laid it (from the
    // write's start), the 16-byte trailer.
    for (k, block) in on_disk.chunks(1024).enumerate() {
        let into_write = k % 4 * 1024;
        for (j, &b) in block.iter().enumerate().take(1024 - 16).skip(104) {
            assert_eq!(b, b"abcde"[(into_write + j) % 5], "block {k} byte {j}");
        }
    }
    // A changed byte of the pattern is found, where it is.
    let mut patched = on_disk.clone();
    patched[5 * 1024 + 500] ^= 0x20;
    std::fs::write(d.path().join("data"), &patched).unwrap();
    let mut only = base.to_vec();
    only.push("--verify_only=1");
    let (v, _) = fio_json(d.path(), &only);
    assert_eq!(v["jobs"][0]["error"], 84);
    let bad = &v["iogauge"]["groups"][0]["jobs"][0]["verify"]["first_bad"][0];
    assert_eq!(bad["offset"], 5 * 1024);
    assert_eq!(bad["fault"]["first_bad_byte"], 500);
    // A block of the same pattern without a header (verify=pattern's) is not taken for one.
    std::fs::remove_file(d.path().join("data")).unwrap();
    let mut plain = base.to_vec();
    plain[5] = "--verify=pattern";
    let (_, o) = fio_json(d.path(), &plain);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (v, _) = fio_json(d.path(), &only);
    assert_eq!(v["jobs"][0]["error"], 84);
}

/// One job of a group fails mid-run (a write meets EIO below the file system): in fio mode
/// the other runs its whole time, as in fio; under `iogauge run` the failure stops it.
#[test]
fn a_failed_job_leaves_the_others_of_its_group_running_in_fio_mode() {
    use super::faultfs::Fault;
    let Some((d, fs, mnt)) = super::verify::fault_fs() else {
        return;
    };
    let failing = format!("--filename={}", mnt.join("f").display());
    let jobs = [
        "--name=failing",
        failing.as_str(),
        "--rw=write",
        "--size=1m",
        "--direct=1",
        "--name=beside",
        "--filename=mine",
        "--rw=write",
        "--size=1m",
        "--time_based",
        "--runtime=1",
    ];
    fs.arm(Fault::WriteEio { at: 64 << 10 }, 0);
    let (v, _) = fio_json(d.path(), &jobs);
    assert_eq!(by_name(&v, "failing").unwrap()["error"], libc::EIO);
    let beside = by_name(&v, "beside").unwrap();
    assert_eq!(beside["error"], 0);
    assert!(
        beside["job_runtime"].as_u64().unwrap() >= 990,
        "ran its whole second: {beside}"
    );
    std::fs::remove_file(mnt.join("f")).ok();
    fs.arm(Fault::WriteEio { at: 64 << 10 }, 0);
    let mut run = vec!["run", "--output-format=json"];
    run.extend_from_slice(&jobs);
    let o = run_in(d.path(), &run);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let beside = &v["groups"][0]["jobs"][1];
    assert!(
        beside["elapsed_ns"].as_u64().unwrap() < 900_000_000,
        "iogauge run: stopped by the failure: {beside}"
    );
}
