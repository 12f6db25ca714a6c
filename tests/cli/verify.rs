//! Data verification (`verify=`): every block written comes back as written, read back in a
//! phase of its own; damage done to a kept file between runs (a flipped bit, swapped blocks,
//! a zeroed block, a block torn between two runs' writes) is found by `verify_only` at the
//! exact offset, with the right name, exit 1; and faults injected below the file system while
//! a run goes (faultfs.rs, over FUSE: lost, stale, misdirected, torn and flipped writes,
//! another run's data, EIO and ENOSPC) are each found at their offset, or stop the run
//! cleanly with what was measured.

use std::path::Path;

use serde_json::Value;

use super::{counts, entries, iogauge, job, run_json, stderr, tmp_file};

fn verify(j: &Value) -> &Value {
    &j["verify"]
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a u64: {v}"))
}

/// Writes `f` (1 MiB in 64 KiB writes, md5) and keeps it.
fn kept_file(f: &Path) {
    let r = run_json(
        &[
            &format!("--filename={}", f.display()),
            "--size=1m",
            "--bs=64k",
            "--rw=write",
            "--verify=md5",
            "--keep",
        ],
        0,
    );
    assert_eq!(u(&verify(job(&r))["bad_blocks"]), 0);
}

/// `verify_only` over the kept file: the report and the bad blocks it names.
fn check_kept(f: &Path, extra: &[&str], code: i32) -> Value {
    let mut args = vec!["--output-format=json"];
    args.extend_from_slice(extra);
    let o = kept_output(f, &args);
    assert_eq!(o.status.code(), Some(code), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// `verify_only` over the kept file, in the output format `extra` asks for.
fn kept_output(f: &Path, extra: &[&str]) -> std::process::Output {
    let fname = format!("--filename={}", f.display());
    let mut args = vec![
        "run",
        fname.as_str(),
        "--size=1m",
        "--bs=64k",
        "--rw=write",
        "--verify=md5",
        "--verify_only=1",
    ];
    args.extend_from_slice(extra);
    iogauge(&args)
}

fn bad(r: &Value) -> Vec<(u64, String)> {
    bad_of(verify(job(r)))
}

/// The bad blocks a verify report keeps: offset and kind.
fn bad_of(v: &Value) -> Vec<(u64, String)> {
    v["first_bad"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                u(&b["offset"]),
                b["fault"]["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn patch(f: &Path, at: u64, bytes: &[u8]) {
    use std::os::unix::fs::FileExt;
    let file = std::fs::OpenOptions::new().write(true).open(f).unwrap();
    file.write_all_at(bytes, at).unwrap();
}

fn read_at(f: &Path, at: u64, len: usize) -> Vec<u8> {
    use std::os::unix::fs::FileExt;
    let mut b = vec![0; len];
    std::fs::File::open(f)
        .unwrap()
        .read_exact_at(&mut b, at)
        .unwrap();
    b
}

/// verify_offset: the header is stored that far into each block, the data's bytes it displaced
/// at the front; checked as written, and a flipped bit is named where it is on the media.
#[test]
fn verify_offset_moves_the_header_into_the_block() {
    let (_d, f, _) = tmp_file();
    let opt = "--verify_offset=1000";
    let mut args = vec![
        "run",
        "--filename=F",
        "--size=1m",
        "--bs=64k",
        "--rw=write",
        "--verify=md5",
        "--keep",
        "--output-format=json",
        opt,
    ];
    let fname = format!("--filename={}", f.display());
    args[1] = &fname;
    let o = iogauge(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for block in 0..16u64 {
        let b = read_at(&f, block * 65536, 65536);
        assert_eq!(&b[1000..1004], b"IOGV", "block {block}: the header at 1000");
        assert_ne!(&b[..4], b"IOGV", "block {block}: data at the front");
    }
    // Checked with the same option; without it, every header is missing.
    assert_eq!(u(&verify(job(&check_kept(&f, &[opt], 0)))["blocks"]), 16);
    let r = check_kept(&f, &[], 1);
    assert_eq!(u(&verify(job(&r))["bad_blocks"]), 16);
    // A bit of the data swapped to the front, and one after the header: each named at its
    // byte in the block as stored.
    for at in [10u64, 5000] {
        let b = read_at(&f, 2 * 65536 + at, 1);
        patch(&f, 2 * 65536 + at, &[b[0] ^ 0x10]);
        let r = check_kept(&f, &[opt, "--verify_dump=1"], 1);
        assert_eq!(bad(&r), [(2 * 65536, "bit flip".to_string())]);
        let first = &verify(job(&r))["first_bad"][0];
        assert_eq!(u(&first["fault"]["first_bad_byte"]), at);
        // The dumps are as stored: the received one is the block on the media, the expected
        // one differs from it at that byte alone.
        let name = |s: &str| format!("{}.{}.{s}", f.display(), 2 * 65536);
        let received = std::fs::read(name("received")).unwrap();
        let expected = std::fs::read(name("expected")).unwrap();
        assert_eq!(received, read_at(&f, 2 * 65536, 65536));
        let diff: Vec<usize> = (0..65536).filter(|&i| received[i] != expected[i]).collect();
        assert_eq!(diff, [at as usize]);
        patch(&f, 2 * 65536 + at, &b);
    }
}

#[test]
fn what_was_written_comes_back_with_every_checksum() {
    for kind in [
        "crc32c",
        "crc32c-intel",
        "crc64",
        "md5",
        "sha1",
        "sha256",
        "xxhash",
        "meta",
        "null",
    ] {
        let (d, _f, fname) = tmp_file();
        let r = run_json(
            &[
                &fname,
                "--size=1m",
                "--bs=4k",
                "--rw=randwrite",
                &format!("--verify={kind}"),
            ],
            0,
        );
        let j = job(&r);
        let v = verify(j);
        assert_eq!(u(&v["blocks"]), 256, "{kind}");
        assert_eq!(u(&v["bytes"]), 1 << 20, "{kind}");
        assert_eq!(u(&v["bad_blocks"]), 0, "{kind}");
        assert_eq!(v["dropped_cache"], true, "{kind}");
        // The verify reads are not the job's: its figures are the writes alone.
        assert_eq!(counts(j), (0, 0, 256, 1 << 20), "{kind}");
        assert!(j["error"].is_null(), "{kind}");
        assert!(entries(d.path()).is_empty(), "{kind}: the file is removed");
    }
}

#[test]
fn queued_mixed_repeated_and_timed_writes_verify() {
    let cases: &[&[&str]] = &[
        // Depth 8: writes of the same block never overlap within a pass (random map).
        &[
            "--rw=randwrite",
            "--ioengine=io_uring",
            "--iodepth=8",
            "--loops=3",
        ],
        // Reads mixed in are the workload's; only the writes' blocks are checked.
        &["--rw=randrw", "--iodepth=4", "--ioengine=io_uring"],
        // Read, then write the same block back (update).
        &["--rw=update"],
        // As many passes as fit in the time, blocks written several times.
        &[
            "--rw=randwrite",
            "--time_based",
            "--runtime=300ms",
            "--norandommap",
        ],
        // Without the random map, writes of one block are in flight together: either may be
        // on the media, and the check accepts both (the header's other checks still hold).
        &[
            "--rw=randwrite",
            "--ioengine=io_uring",
            "--iodepth=32",
            "--norandommap",
            "--loops=4",
        ],
        // Direct I/O reads the device anyway: no cache to drop.
        &[
            "--rw=write",
            "--direct=1",
            "--ioengine=pvsync",
            "--numpages=4",
        ],
        &[
            "--rw=write",
            "--bs=16k",
            "--verify_interval=4k",
            "--verify=sha256",
        ],
        &["--rw=randwrite", "--bsrange=4k-16k", "--refill_buffers"],
        &["--rw=write", "--zero_buffers", "--do_verify=1"],
    ];
    for extra in cases {
        let (d, _f, fname) = tmp_file();
        let mut args = vec![fname.as_str(), "--size=1m", "--verify=crc32c"];
        args.extend_from_slice(extra);
        let r = run_json(&args, 0);
        let j = job(&r);
        let v = verify(j);
        let blocks = u(&v["blocks"]);
        assert!(blocks > 0, "{extra:?}");
        assert_eq!(u(&v["bad_blocks"]), 0, "{extra:?}: {v}");
        let partial = ["time_based", "randrw", "bsrange", "norandommap"];
        if !extra.iter().any(|a| partial.iter().any(|p| a.contains(p))) {
            // Every block of the file was written, once or more, and checked once.
            assert_eq!(blocks, (1 << 20) / 4096, "{extra:?}");
        } else {
            // Random sizes and mixes cover part of the file: what was written is checked.
            assert!(blocks <= 256, "{extra:?}");
        }
        assert_eq!(
            v["dropped_cache"],
            !extra.contains(&"--direct=1"),
            "{extra:?}"
        );
        assert!(entries(d.path()).is_empty(), "{extra:?}");
    }
    // do_verify=0 writes the headers and checks nothing.
    let (_d, _f, fname) = tmp_file();
    let r = run_json(
        &[
            &fname,
            "--size=1m",
            "--rw=write",
            "--verify=crc32c",
            "--do_verify=0",
        ],
        0,
    );
    assert!(job(&r)["verify"].is_null() || u(&verify(job(&r))["blocks"]) == 0);
}

#[test]
fn a_flipped_bit_is_found_at_its_byte() {
    let (_d, f, _) = tmp_file();
    kept_file(&f);
    assert_eq!(u(&verify(job(&check_kept(&f, &[], 0)))["blocks"]), 16);
    // One bit of block 3's data.
    let at = 3 * 65536 + 5000;
    let original = read_at(&f, 3 * 65536, 65536);
    let b = read_at(&f, at, 1);
    patch(&f, at, &[b[0] ^ 0x04]);
    let r = check_kept(&f, &[], 1);
    assert_eq!(bad(&r), [(3 * 65536, "bit flip".to_string())]);
    let first = &verify(job(&r))["first_bad"][0];
    assert_eq!(u(&first["fault"]["first_bad_byte"]), 5000);
    assert_eq!(
        u(&first["fault"]["found"]["seq"]),
        3,
        "the fourth write put it there"
    );
    let e = &job(&r)["error"];
    assert_eq!(e["direction"], "verify");
    assert_eq!(u(&e["offset"]), 3 * 65536);
    assert_eq!(
        e["errno"],
        libc::EILSEQ,
        "fio's errno for data not as written"
    );
    // The HTML page has the phase and the bad block.
    let o = kept_output(&f, &["--output-format=html"]);
    assert_eq!(o.status.code(), Some(1));
    let html = super::stdout(&o);
    assert!(
        html.contains("<h2 id=\"verify\">Verification</h2>"),
        "{html}"
    );
    assert!(html.contains("1 bad"));
    assert!(html.contains(&format!("at offset {} (65536 bytes): bit flip", 3 * 65536)));
    assert!(html.contains("first differing byte 5000"));
    // verify_dump: the block as read, and as written (made again from its header), beside
    // the file under fio's names.
    let r = check_kept(&f, &["--verify_dump=1"], 1);
    let dumped = &verify(job(&r))["first_bad"][0]["dumped"];
    let name = |s: &str| format!("{}.{}.{s}", f.display(), 3 * 65536);
    assert_eq!(dumped[0], name("received"));
    assert_eq!(dumped[1], name("expected"));
    assert_eq!(std::fs::read(name("expected")).unwrap(), original);
    assert_eq!(
        std::fs::read(name("received")).unwrap(),
        read_at(&f, 3 * 65536, 65536)
    );
    // A second dump over the first (iogauge's own files) is allowed.
    check_kept(&f, &["--verify_dump=1"], 1);
    for s in ["received", "expected"] {
        std::fs::remove_file(name(s)).unwrap();
    }
    std::fs::remove_file(&f).unwrap();
}

#[test]
fn swapped_zeroed_and_torn_blocks_are_told_apart() {
    let (d, f, _) = tmp_file();
    kept_file(&f);
    let older = d.path().join("older");
    std::fs::copy(&f, &older).unwrap();
    // A second run rewrites the file: block 9's first half from the first run, the rest
    // from the second, as a write torn by a power cut would leave it.
    kept_file(&f);
    let half = read_at(&older, 9 * 65536, 32768);
    patch(&f, 9 * 65536, &half);
    // Blocks 2 and 5 swapped: each is where the other should be.
    let (b2, b5) = (read_at(&f, 2 * 65536, 65536), read_at(&f, 5 * 65536, 65536));
    patch(&f, 2 * 65536, &b5);
    patch(&f, 5 * 65536, &b2);
    // Block 12 never written: zeros.
    patch(&f, 12 * 65536, &[0; 65536]);
    let r = check_kept(&f, &[], 1);
    assert_eq!(
        bad(&r),
        [
            (2 * 65536, "misdirected write".to_string()),
            (5 * 65536, "misdirected write".to_string()),
            (9 * 65536, "torn write".to_string()),
            (12 * 65536, "lost write".to_string()),
        ]
    );
    assert_eq!(u(&verify(job(&r))["bad_blocks"]), 4);
    // verify_fatal stops at the first.
    let r = check_kept(&f, &["--verify_fatal=1"], 1);
    assert_eq!(u(&verify(job(&r))["bad_blocks"]), 1);
    // The text report names each one.
    let o = kept_output(&f, &[]);
    assert_eq!(o.status.code(), Some(1));
    let t = super::stdout(&o);
    assert!(t.contains("4 BAD"), "{t}");
    assert!(
        t.contains(&format!("at offset {} (64.00 KiB): torn write", 9 * 65536)),
        "{t}"
    );
    assert!(f.exists(), "verify_only leaves the file it checked");
    std::fs::remove_file(&f).unwrap();
}

#[test]
fn verify_refuses_what_it_cannot_check() {
    let (d, f, fname) = tmp_file();
    for (args, want) in [
        (
            vec![fname.as_str(), "--size=1m", "--rw=read", "--verify=md5"],
            "does not exist and no earlier job of this run writes it",
        ),
        (
            vec![fname.as_str(), "--size=1m", "--rw=write", "--verify=crc7"],
            "--verify=crc7: expected crc7 is not supported yet",
        ),
        (
            vec![
                fname.as_str(),
                "--size=1m",
                "--rw=write",
                "--verify=md5",
                "--verify_interval=300",
            ],
            "--verify_interval=300",
        ),
        (
            // A second job writing the same file unsealed would fail the first one's check.
            vec![
                fname.as_str(),
                "--size=1m",
                "--name=a",
                "--rw=write",
                "--verify=md5",
                "--name=b",
                "--rw=randwrite",
            ],
            "and only one verifies",
        ),
        (
            vec![
                fname.as_str(),
                "--size=1m",
                "--rw=write",
                "--verify=md5",
                "--numjobs=2",
                "--verify_state_save=1",
            ],
            "verify_state_save journals one job's writes of a file",
        ),
        (
            vec![
                fname.as_str(),
                "--size=1m",
                "--rw=write",
                "--verify=md5",
                "--name=a",
                "--name=b",
                "--offset=2k",
            ],
            "not whole verify_interval blocks (4096 bytes) apart",
        ),
        (
            vec![
                fname.as_str(),
                "--size=1m",
                "--rw=write",
                "--verify=md5",
                "--verify_only=1",
            ],
            "does not exist and no earlier job of this run writes it: nothing to verify",
        ),
        (
            vec![fname.as_str(), "--size=1m", "--rw=write", "--verify_only=1"],
            "--verify_only=1: needs verify=",
        ),
        (
            vec!["--size=1m", "--rw=write", "--ioengine=null", "--verify=md5"],
            "ioengine=null moves no data",
        ),
        (
            vec![
                fname.as_str(),
                "--size=1m",
                "--rw=write",
                "--verify=md5",
                "--verify_offset=8",
            ],
            "--verify_offset=8: 8 bytes into a block of 4096: expected 0, or from 104",
        ),
        (
            vec![
                fname.as_str(),
                "--size=1m",
                "--rw=write",
                "--verify=md5",
                "--verify_offset=3977",
            ],
            "to 3976 (the header must end before the block's 16-byte trailer)",
        ),
    ] {
        let mut all = vec!["run"];
        all.extend_from_slice(&args);
        let o = iogauge(&all);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
        assert!(!f.exists() && entries(d.path()).is_empty(), "{args:?}");
    }
}

/// fio's basic-verify.fio (Debian's fio-examples), pointed at a file instead of /dev/XXX as
/// its comment says: 4 KiB random writes at depth 16, O_DIRECT, crc32c, then the check.
#[test]
fn fios_basic_verify_example_runs_on_a_file() {
    let example = Path::new("/usr/share/doc/fio/examples/basic-verify.fio");
    if !example.exists() {
        skip!("fio's basic-verify.fio: fio-examples is not installed (scripts/test-deps.sh)");
        return;
    }
    let d = super::tmp();
    let o = super::run_in(
        d.path(),
        &[
            "job",
            example.to_str().unwrap(),
            "--set",
            "filename=data",
            "--set",
            "size=4m",
            "--output-format=json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let v = verify(job(&r));
    assert_eq!(v["checksum"], "crc32c");
    assert_eq!(u(&v["blocks"]), 1024);
    assert_eq!(u(&v["bad_blocks"]), 0);
    assert!(entries(d.path()).is_empty());

    // cross-stripe-verify.fio: 30 jobs writing 16 KiB every 128 KiB of one device from
    // offsets 124 GiB apart, each write checked at once (verify_backlog=1) and again at the
    // end, group_reporting: on a file, 4 jobs 4 MiB apart (their regions apart, as the
    // example's are: 120 GiB written of each 124 GiB).
    let example = Path::new("/usr/share/doc/fio/examples/cross-stripe-verify.fio");
    let mut args = vec!["job", example.to_str().unwrap(), "--output-format=json"];
    for set in [
        "filename=data",
        "offset_increment=4m",
        "io_size=256k",
        "numjobs=4",
        "size=4m",
    ] {
        args.extend(["--set", set]);
    }
    let o = super::run_in(d.path(), &args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let g = &r["groups"][0];
    assert_eq!(g["jobs"].as_array().unwrap().len(), 4);
    let v = &g["total"]["verify"];
    assert!(u(&v["blocks"]) >= 4 * 16, "{v}");
    assert_eq!(u(&v["bad_blocks"]), 0, "{v}");
    assert!(entries(d.path()).is_empty());
}

/// SASIOTEST's and iotest's `-verify`/`--verify`: what they wrote is checked, the legacy
/// output unchanged above iogauge's additions, the verdict below.
#[test]
fn the_personalities_check_what_they_wrote() {
    let d = super::tmp();
    let p = d.path();
    let out = super::ok_in(
        p,
        &[
            "sasiotest",
            "t.out",
            "-w",
            "-filesize",
            "1m",
            "-pagesize",
            "8k",
            "-verify",
        ],
    );
    assert!(out.contains("Write Throughput:"), "{out}");
    assert!(
        out.contains("verify crc32c: 128 blocks (1.00 MiB) read back")
            && out.contains("every block as written"),
        "{out}"
    );
    // The kept file checks out with verify_only, and its damage is found.
    let f = p.join("t.out");
    let check = |code| {
        run_json(
            &[
                &format!("--filename={}", f.display()),
                "--size=1m",
                "--bs=8k",
                "--rw=write",
                "--verify=crc32c",
                "--verify_only=1",
            ],
            code,
        )
    };
    assert_eq!(u(&verify(job(&check(0)))["blocks"]), 128);
    patch(&f, 40 * 8192 + 1000, b"x");
    assert_eq!(bad(&check(1)), [(40 * 8192, "bit flip".to_string())]);
    let o = iogauge(&["sasiotest", f.to_str().unwrap(), "-r", "-verify"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("-verify checks the pages this run writes"));
    std::fs::remove_file(&f).unwrap();

    let target = p.join("saswork");
    std::fs::create_dir(&target).unwrap();
    let out = super::ok_in(
        p,
        &[
            "iotest",
            "-i",
            "2",
            "-t",
            target.to_str().unwrap(),
            "-b",
            "64",
            "-s",
            "64",
            "--verify",
        ],
    );
    // Two files of 64 x 64 KiB, checked after the readers.
    assert!(
        out.contains("verify crc32c: 128 blocks (8.00 MiB) read back")
            && out.contains("every block as written"),
        "{out}"
    );
    assert!(entries(&target).is_empty(), "iotest removes its files");
}

/// A FaultFs mounted in a temp dir, or SKIP with the reason.
pub(super) fn fault_fs() -> Option<(
    tempfile::TempDir,
    super::faultfs::Mounted,
    std::path::PathBuf,
)> {
    fault_fs_served_by(1)
}

/// [`fault_fs`], its requests served by `threads` threads.
pub(super) fn fault_fs_served_by(
    threads: usize,
) -> Option<(
    tempfile::TempDir,
    super::faultfs::Mounted,
    std::path::PathBuf,
)> {
    let d = super::tmp();
    let mnt = d.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    match super::faultfs::mount(&mnt, threads) {
        Ok(m) => Some((d, m, mnt)),
        Err(why) => {
            skip!("faults below the file system: cannot mount FUSE here: {why}");
            None
        }
    }
}

/// Writes 1 MiB in 4 KiB blocks to `f` (`extra` options after), crc32c, with JSON out.
fn write_verify(f: &Path, extra: &[&str], code: i32) -> Value {
    let fname = format!("--filename={}", f.display());
    let mut args = vec![
        fname.as_str(),
        "--size=1m",
        "--bs=4k",
        "--rw=write",
        "--verify=crc32c",
    ];
    args.extend_from_slice(extra);
    run_json(&args, code)
}

const B: u64 = 4096;

#[test]
fn faults_below_the_file_system_are_each_found_at_their_offset() {
    use super::faultfs::Fault;
    let Some((_d, fs, mnt)) = fault_fs() else {
        return;
    };
    let f = mnt.join("f");
    // The verify phase in the job's thread through its engine, and on threads of its own.
    for threads in [1, 3] {
        let fired = fs.fired().len();
        // Acknowledged and never stored, stored with a bit flipped, stored elsewhere.
        fs.arm(Fault::DropWrite { at: 10 * B }, 0);
        fs.arm(Fault::FlipBit { at: 20 * B + 3000 }, 0);
        fs.arm(
            Fault::Misdirect {
                at: 30 * B,
                to: 5 * B,
            },
            0,
        );
        let async_opt = format!("--verify_async={threads}");
        let r = write_verify(&f, &[&async_opt], 1);
        assert_eq!(fs.fired().len() - fired, 3);
        assert_eq!(
            bad(&r),
            [
                (5 * B, "misdirected write".to_string()),
                (10 * B, "lost write".to_string()),
                (20 * B, "bit flip".to_string()),
                (30 * B, "lost write".to_string()),
            ]
        );
        let v = verify(job(&r));
        assert_eq!(u(&v["threads"]), threads);
        assert_eq!((u(&v["blocks"]), u(&v["bad_blocks"])), (256, 4));
        assert_eq!(u(&v["first_bad"][2]["fault"]["first_bad_byte"]), 3000);
        assert_eq!(
            u(&v["first_bad"][0]["fault"]["found"]["offset"]),
            30 * B,
            "block 5 holds the write meant for block 30"
        );
        // The job's own figures are the writes, all acknowledged.
        assert_eq!(counts(job(&r)), (0, 0, 256, 1 << 20));
        // The evidence is kept, though --keep was not given.
        assert!(f.exists(), "the file that failed verification is kept");
        std::fs::remove_file(&f).unwrap();
    }

    // Second pass over the file: a dropped write leaves the first pass's block (stale), a torn
    // one half of each.
    fs.arm(Fault::DropWrite { at: 10 * B }, 1);
    fs.arm(
        Fault::Tear {
            at: 50 * B,
            keep: 2048,
        },
        1,
    );
    let r = write_verify(&f, &["--loops=2"], 1);
    assert_eq!(
        bad(&r),
        [
            (10 * B, "stale data".to_string()),
            (50 * B, "torn write".to_string()),
        ]
    );
    let stale = &verify(job(&r))["first_bad"][0];
    assert_eq!(u(&stale["expected_generation"]), 2);
    assert_eq!(u(&stale["fault"]["found"]["generation"]), 1);
    std::fs::remove_file(&f).unwrap();

    // A write this run lost over a file an earlier run left: that run's block is found.
    write_verify(&f, &["--keep"], 0);
    fs.arm(Fault::DropWrite { at: 7 * B }, 0);
    let r = write_verify(&f, &[], 1);
    assert_eq!(bad(&r), [(7 * B, "another run's data".to_string())]);

    // A file this run created that fails verification: kept, its path said on stderr.
    std::fs::remove_file(&f).unwrap();
    fs.arm(Fault::FlipBit { at: 3 * B + 1 }, 0);
    let fname = format!("--filename={}", f.display());
    let o = super::iogauge(&[
        "run",
        &fname,
        "--size=1m",
        "--bs=4k",
        "--rw=write",
        "--verify=crc32c",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let want = format!("{}: kept: its data failed verification", f.display());
    assert!(stderr(&o).contains(&want), "{}", stderr(&o));
    assert!(f.exists());
}

#[test]
fn eio_and_enospc_mid_run_stop_cleanly_with_what_was_measured() {
    use super::faultfs::Fault;
    let Some((_d, fs, mnt)) = fault_fs() else {
        return;
    };
    let f = mnt.join("f");
    for (fault, errno, dir, threads) in [
        (Fault::WriteEio { at: 60 * B }, libc::EIO, "write", 1),
        (Fault::WriteEnospc { at: 70 * B }, libc::ENOSPC, "write", 1),
        // While reading back: the verify phase's read fails, in the job's thread or in one
        // of the phase's threads.
        (Fault::ReadEio { at: 40 * B }, libc::EIO, "read", 1),
        (Fault::ReadEio { at: 40 * B }, libc::EIO, "read", 3),
    ] {
        fs.arm(fault, 0);
        let threads_opt = format!("--verify_async={threads}");
        let r = write_verify(&f, &[&threads_opt], 1);
        let j = job(&r);
        let e = &j["error"];
        assert_eq!(e["errno"], errno, "{fault:?}: {e}");
        assert_eq!(e["direction"], dir, "{fault:?}");
        assert_eq!(u(&e["offset"]), fault_at(fault), "{fault:?}");
        assert_eq!(e["file"], f.display().to_string());
        if dir == "write" {
            // The writes before the failing one, exactly.
            assert_eq!(u(&j["write"]["bytes"]), fault_at(fault), "{fault:?}");
        } else {
            assert_eq!(u(&j["write"]["bytes"]), 1 << 20);
            // Every block before the failing read was read back, and the failing one was
            // not counted. Alone, the job's thread stops right there. With others beside it,
            // they go on taking the next blocks until the failing thread raises the halt:
            // how many depends on how long that thread waited for a CPU between taking its
            // block and its read failing (45 blocks under CI's load), so only that the failing
            // block is not among them is certain.
            let back = u(&verify(j)["bytes"]);
            let read_back = if threads == 1 {
                back == 40 * B
            } else {
                (40 * B..=(1 << 20) - B).contains(&back) && back % B == 0
            };
            assert!(read_back, "{threads} thread(s) read back {back} bytes");
            assert_eq!(u(&verify(j)["threads"]), threads);
        }
        assert!(!f.exists(), "{fault:?}: the file is removed");
    }
}

/// verify_state_save journals what was durable; after a power cut, verify_only with
/// verify_state_load reports exactly the durable writes that were lost: none when the device
/// kept its word (the writes after the last flush may go, as they were never durable), and
/// the one block whose flush the device lied about.
#[test]
fn after_a_power_cut_exactly_the_lost_durable_writes_are_named() {
    use super::faultfs::Fault;
    let Some((d, fs, mnt)) = fault_fs() else {
        return;
    };
    fs.set_volatile();
    let f = mnt.join("f");
    let fname = format!("--filename={}", f.display());
    // 250 blocks, twice: durable every 16 writes; the last few after the last flush not.
    let common = [
        fname.as_str(),
        "--size=1000k",
        "--bs=4k",
        "--rw=write",
        "--verify=crc32c",
    ];
    let cwd = d.path();
    let json = |extra: &[&str], code: i32| -> Value {
        let mut args = vec!["run", "--output-format=json"];
        args.extend_from_slice(&common);
        args.extend_from_slice(extra);
        let o = super::run_in(cwd, &args);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {}", stderr(&o));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let write = [
        "--loops=2",
        "--fdatasync=16",
        "--do_verify=0",
        "--verify_state_save=1",
        "--keep",
    ];
    let check = ["--verify_only=1", "--verify_state_load=1"];
    let state = cwd.join("job-0-verify.state");
    for lie in [false, true] {
        if lie {
            // The flush after the second pass's write of block 40 is acknowledged, and
            // that write lost.
            fs.arm(
                Fault::LoseOnFsync {
                    at: 40 * B,
                    len: B as usize,
                },
                1,
            );
        }
        json(&write, 0);
        assert!(state.exists());
        assert_eq!(fs.fired().len(), usize::from(lie), "{:?}", fs.fired());
        fs.power_cut();
        let r = json(&check, if lie { 1 } else { 0 });
        let v = verify(job(&r));
        assert!(u(&v["blocks"]) >= 240, "{v}");
        if lie {
            assert_eq!(bad(&r), [(40 * B, "lost write".to_string())], "{v}");
            let found = &v["first_bad"][0]["fault"];
            assert!(
                found["detail"]
                    .as_str()
                    .unwrap()
                    .contains("acknowledged durable"),
                "{found}"
            );
        } else {
            assert_eq!(u(&v["bad_blocks"]), 0, "{v}");
        }
        std::fs::remove_file(&f).unwrap();
        std::fs::remove_file(&state).unwrap();
    }
    // Without its journal, verify_state_load is refused before anything runs.
    let o = super::run_in(
        cwd,
        &[
            "run",
            &fname,
            "--size=1000k",
            "--verify=crc32c",
            "--verify_only=1",
            "--verify_state_load=1",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("job-0-verify.state is not there"),
        "{}",
        stderr(&o)
    );
}

fn fault_at(f: super::faultfs::Fault) -> u64 {
    use super::faultfs::Fault;
    match f {
        Fault::WriteEio { at } | Fault::WriteEnospc { at } | Fault::ReadEio { at } => at,
        _ => unreachable!(),
    }
}

/// The data options shape what is written, exactly, the report says what it was and warns,
/// and verification works over each.
#[test]
fn data_patterns_are_what_they_say_and_verify() {
    use std::collections::HashSet;
    let written = |extra: &[&str]| -> (Vec<u8>, Value, String) {
        let (_d, f, fname) = tmp_file();
        let mut args = vec![
            "run",
            "--output-format=json",
            fname.as_str(),
            "--size=1m",
            "--bs=64k",
            "--rw=write",
            "--keep",
        ];
        args.extend_from_slice(extra);
        let o = iogauge(&args);
        assert_eq!(o.status.code(), Some(0), "{extra:?}: {}", stderr(&o));
        let r: Value = serde_json::from_slice(&o.stdout).unwrap();
        (std::fs::read(&f).unwrap(), r, stderr(&o))
    };
    let unique = |d: &[u8], n: usize| d.chunks(n).collect::<HashSet<_>>().len();

    let (d, r, err) = written(&[]);
    assert_eq!(unique(&d, 4096), 256, "every 4 KiB block unique");
    assert!(job(&r)["data"].as_str().unwrap().contains("incompressible"));
    assert!(!err.contains("compresses or deduplicates"), "{err}");

    let (d, r, err) = written(&["--buffer_compress_percentage=75"]);
    // Each 512-byte chunk: 128 random bytes, then 384 zeros (the stamp's 8 bytes lead it).
    assert!(d.chunks(512).all(|c| c[128..].iter().all(|&b| b == 0)));
    assert!(d.chunks(512).all(|c| c[8..128].iter().any(|&b| b != 0)));
    assert!(
        job(&r)["data"]
            .as_str()
            .unwrap()
            .contains("75% compressible")
    );
    assert!(err.contains("compresses or deduplicates"), "{err}");
    let (d, _, _) = written(&[
        "--buffer_compress_percentage=50",
        "--buffer_compress_chunk=4k",
    ]);
    assert!(d.chunks(4096).all(|c| c[2048..].iter().all(|&b| b == 0)));

    let (d, r, _) = written(&["--buffer_pattern=0xdeadbeef"]);
    assert!(d.chunks(4).all(|c| c == [0xde, 0xad, 0xbe, 0xef]));
    assert!(job(&r)["data"].as_str().unwrap().contains("0xdeadbeef"));
    let (d, _, _) = written(&["--buffer_pattern=\"iog\""]);
    assert_eq!(&d[..6], b"iogiog");

    // Half the 64 KiB writes repeat one write's data: 8 of 16 writes unique, plus that one.
    let (d, r, _) = written(&["--dedupe_percentage=50"]);
    let writes = unique(&d, 65536);
    assert!((7..=10).contains(&writes), "{writes} distinct writes of 16");
    assert!(
        job(&r)["data"]
            .as_str()
            .unwrap()
            .contains("50% of writes repeating")
    );
    let (d, _, _) = written(&["--scramble_buffers=0"]);
    assert_eq!(unique(&d, 65536), 1, "every write alike");

    for extra in [
        &["--buffer_compress_percentage=60"][..],
        &["--buffer_pattern=0x0123456789"],
        &["--dedupe_percentage=30"],
        &["--refill_buffers", "--buffer_compress_percentage=25"],
    ] {
        let mut args = vec!["--verify=md5"];
        args.extend_from_slice(extra);
        let (_, r, _) = written(&args);
        let v = verify(job(&r));
        assert_eq!((u(&v["blocks"]), u(&v["bad_blocks"])), (16, 0), "{extra:?}");
    }
    let o = iogauge(&[
        "run",
        "--size=1m",
        "--rw=write",
        "--zero_buffers",
        "--buffer_pattern=0x1",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--buffer_pattern=0x1: cannot be combined with zero_buffers"));
}

/// fio's dedupe working set (`dedupe_mode=working_set`): the repeating writes spread over a
/// working set of unique writes, not one block written again and again; with `dedupe_global`
/// the jobs sharing it repeat each other's data across their files (fio's dedupe-global.fio,
/// scaled down: fio 3.33 gave each file 67-68% unique 4 KiB blocks and the two together 53%);
/// the data verifies; jobs that cannot share are refused.
#[test]
fn dedupe_working_sets_spread_the_repeats_and_are_shared_across_jobs() {
    use std::collections::HashMap;
    let d = super::tmp();
    let p = d.path();
    let counts_of = |f: &str| -> HashMap<Vec<u8>, usize> {
        let data = std::fs::read(p.join(f)).unwrap();
        let mut m = HashMap::new();
        for b in data.chunks(4096) {
            *m.entry(b.to_vec()).or_insert(0) += 1;
        }
        m
    };
    let run = |text: &str| {
        std::fs::write(p.join("d.fio"), text).unwrap();
        let o = super::run_in(p, &["job", "d.fio", "--keep", "--output-format=json"]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        serde_json::from_slice::<Value>(&o.stdout).unwrap()
    };
    let base = "[global]\nrw=write\nbs=4k\nsize=4m\ndedupe_percentage=50\n";
    // One job, repeat (the default): the repeating writes are all one block.
    run(&format!("{base}[r]\n"));
    let r = counts_of("r.0.0");
    assert!(
        r.values().max().unwrap() > &400,
        "one block repeated by half the writes"
    );
    // A working set of 10% of the job's size: about 102 unique writes to repeat.
    let ws = "dedupe_mode=working_set\ndedupe_working_set_percentage=10\n";
    let rep = run(&format!("{base}[w]\n{ws}"));
    let w = counts_of("w.0.0");
    let unique = w.len() as f64 / 1024.0;
    assert!((0.45..0.62).contains(&unique), "{unique}");
    let repeated = w.values().filter(|&&n| n > 1).count();
    assert!((60..=140).contains(&repeated), "{repeated} blocks repeated");
    assert!(
        *w.values().max().unwrap() < 30,
        "spread over the working set"
    );
    let j = job(&rep);
    assert!(
        j["data"]
            .as_str()
            .unwrap()
            .contains("working set of about 102 unique writes"),
        "{}",
        j["data"]
    );
    // dedupe_global: two jobs, two files, one working set (fio's dedupe-global.fio).
    let shared = "dedupe_mode=working_set\ndedupe_global=1\ndedupe_working_set_percentage=50\n\
                  buffer_compress_percentage=50\n";
    let rep = run(&format!("{base}{shared}[a]\n[b]\n"));
    let (a, b) = (counts_of("a.0.0"), counts_of("b.0.0"));
    let both = a.keys().filter(|k| b.contains_key(*k)).count();
    let mut all = a.clone();
    for (k, n) in &b {
        *all.entry(k.clone()).or_insert(0) += n;
    }
    let ratio = |m: &HashMap<Vec<u8>, usize>, n: f64| m.len() as f64 / n;
    let (ra, rb, rab) = (ratio(&a, 1024.0), ratio(&b, 1024.0), ratio(&all, 2048.0));
    assert!(
        (0.6..0.78).contains(&ra) && (0.6..0.78).contains(&rb),
        "{ra} {rb}"
    );
    assert!((0.44..0.6).contains(&rab), "together {rab}");
    assert!(both > 200, "{both} blocks in both files");
    for j in rep["groups"][0]["jobs"].as_array().unwrap() {
        assert!(j["data"].as_str().unwrap().contains("shared by 2 jobs"));
    }
    for f in ["r.0.0", "w.0.0", "a.0.0", "b.0.0"] {
        std::fs::remove_file(p.join(f)).unwrap();
    }
    // Both verify (their headers make each block unique, as fio's do).
    for text in [
        format!("{base}[w]\n{ws}verify=md5\n"),
        format!("{base}{shared}verify=md5\n[a]\n[b]\n"),
    ] {
        let rep = run(&text);
        for j in rep["groups"][0]["jobs"].as_array().unwrap() {
            assert_eq!(
                (u(&verify(j)["blocks"]), u(&verify(j)["bad_blocks"])),
                (1024, 0)
            );
        }
        for f in super::entries(p) {
            if f.extension().is_some_and(|x| x == "0") {
                std::fs::remove_file(f).unwrap();
            }
        }
    }
    // Sharing jobs that write otherwise cannot repeat each other's bytes: refused.
    std::fs::write(
        p.join("d.fio"),
        format!("{base}{shared}[a]\n[b]\ndedupe_percentage=20\n"),
    )
    .unwrap();
    let o = super::run_in(p, &["job", "d.fio"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("dedupe_global") && stderr(&o).contains("job b shares"),
        "{}",
        stderr(&o)
    );
    assert_eq!(super::entries(p).len(), 1, "nothing made");
}

/// A job that only reads, with verify=, checks each block as it reads it (fio's way): what an
/// earlier job of the run wrote (a write phase, then a read phase, as fio's surface-scan
/// example), or a kept file; the reads stay the job's figures.
#[test]
fn a_reader_checks_what_it_reads() {
    let d = super::tmp();
    let p = d.path();
    std::fs::write(
        p.join("scan.fio"),
        "[global]\nfilename=data\nsize=1m\nbs=64k\nverify=crc32c\n\n[write-phase]\nrw=write\n\
         do_verify=0\n\n[verify-phase]\nstonewall\nrw=randread\n",
    )
    .unwrap();
    let o = super::run_in(p, &["job", "scan.fio", "--output-format=json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let reader = &r["groups"][1]["jobs"][0];
    let v = verify(reader);
    assert_eq!(v["inline"], true);
    assert_eq!((u(&v["blocks"]), u(&v["bad_blocks"])), (16, 0));
    assert_eq!(
        counts(reader),
        (16, 1 << 20, 0, 0),
        "the reads are the job's"
    );
    assert!(
        r["groups"][0]["jobs"][0]["verify"].is_null(),
        "do_verify=0: no phase"
    );
    assert!(entries(p).iter().all(|e| e.ends_with("scan.fio")));

    // A kept file, damaged: the reader names the block.
    let f = p.join("kept");
    kept_file(&f);
    patch(&f, 6 * 65536 + 9000, b"!");
    let r = run_json(
        &[
            &format!("--filename={}", f.display()),
            "--size=1m",
            "--bs=64k",
            "--rw=read",
            "--verify=md5",
        ],
        1,
    );
    assert_eq!(bad(&r), [(6 * 65536, "bit flip".to_string())]);
    std::fs::remove_file(&f).unwrap();
}

/// Several jobs writing one file at once, with writes of the same block in flight from
/// different jobs: the file's map is shared, overlapping blocks accept either write, the jobs
/// meet before reading back and split the file between them, and a write lost below the file
/// system is still found once, at its offset.
#[test]
fn jobs_sharing_a_file_verify_it_together() {
    let (_d, f, fname) = tmp_file();
    for extra in [
        &[
            "--rw=randwrite",
            "--ioengine=io_uring",
            "--iodepth=8",
            "--norandommap",
            "--loops=3",
        ][..],
        &["--rw=randwrite", "--time_based", "--runtime=300ms"],
        &["--rw=write"],
    ] {
        let mut args = vec![
            fname.as_str(),
            "--size=1m",
            "--verify=crc32c",
            "--numjobs=4",
        ];
        args.extend_from_slice(extra);
        let r = run_json(&args, 0);
        let jobs = r["groups"][0]["jobs"].as_array().unwrap();
        let checked: Vec<u64> = jobs.iter().map(|j| u(&verify(j)["blocks"])).collect();
        let total: u64 = checked.iter().sum();
        assert!(total > 0 && total <= 256, "{extra:?}: {checked:?}");
        if extra == ["--rw=write"] {
            // Every job wrote the whole file; each block is checked once, by one of them.
            assert_eq!(total, 256, "{checked:?}");
            assert!(checked.iter().all(|&c| c == 64), "{checked:?}");
        }
        assert!(
            jobs.iter().all(|j| u(&verify(j)["bad_blocks"]) == 0),
            "{extra:?}"
        );
        assert!(!f.exists());
    }

    use super::faultfs::Fault;
    let Some((_d, fs, mnt)) = fault_fs() else {
        return;
    };
    let f = mnt.join("f");
    fs.arm(Fault::DropWrite { at: 100 * B }, 0);
    let fname = format!("--filename={}", f.display());
    // Two jobs write the file one after the other's blocks (offset_increment): each block
    // once, so the lost one is certain.
    let r = run_json(
        &[
            &fname,
            "--size=512k",
            "--bs=4k",
            "--rw=write",
            "--verify=crc32c",
            "--numjobs=2",
            "--offset_increment=512k",
        ],
        1,
    );
    let bad: Vec<(u64, String)> = r["groups"][0]["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|j| verify(j)["first_bad"].as_array().unwrap().clone())
        .map(|b| {
            (
                u(&b["offset"]),
                b["fault"]["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(bad, [(100 * B, "lost write".to_string())]);
}

/// verify_backlog: the job pauses every N writes to check them, so a fault is found while the
/// job runs (with verify_fatal, it stops there), and a block found bad is reported once.
#[test]
fn the_backlog_finds_a_fault_while_the_job_runs() {
    let (_d, _f, fname) = tmp_file();
    let r = run_json(
        &[
            &fname,
            "--size=1m",
            "--rw=randwrite",
            "--verify=crc32c",
            "--verify_backlog=16",
        ],
        0,
    );
    let j = job(&r);
    // Every block checked once, in the pauses: as fio, the check after the job does not read
    // again what a pause checked (and nothing was written since).
    assert_eq!(u(&verify(j)["blocks"]), 256);
    assert_eq!(
        counts(j),
        (0, 0, 256, 1 << 20),
        "the pauses' reads are not the job's"
    );
    let r = run_json(
        &[
            &fname,
            "--size=1m",
            "--rw=randwrite",
            "--verify=crc32c",
            "--verify_backlog=64",
            "--verify_backlog_batch=16",
        ],
        0,
    );
    // The pauses check the last 16 of every 64 writes (64 blocks); the check after the job
    // reads the other 192: each block once.
    assert_eq!(u(&verify(job(&r))["blocks"]), 256);
    // do_verify=0: the pauses alone check, and say so; their reads are timed with them (the
    // rate is the reads over their own time, never reads over no time).
    let r = run_json(
        &[
            &fname,
            "--size=1m",
            "--rw=randwrite",
            "--verify=crc32c",
            "--verify_backlog=16",
            "--do_verify=0",
        ],
        0,
    );
    let v = verify(job(&r));
    assert_eq!((u(&v["blocks"]), u(&v["bytes"])), (256, 1 << 20), "{v}");
    let ns = u(&v["elapsed_ns"]);
    assert!(ns > 0, "{v}");
    let rate = v["mib_per_s"].as_f64().unwrap();
    assert!((rate - 1e9 / ns as f64).abs() < 1e-6 * rate, "{v}");
    // Several writers of one file with a backlog: refused before anything is created (each
    // job's pause would race with the others' writes).
    let o = iogauge(&[
        "run",
        &fname,
        "--size=2m",
        "--rw=randwrite",
        "--verify=crc32c",
        "--verify_backlog=8",
        "--numjobs=3",
        "--time_based",
        "--runtime=2",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("verify_backlog checks a job's blocks while it runs"));
    assert!(!Path::new(fname.trim_start_matches("--filename=")).exists());

    use super::faultfs::Fault;
    let Some((_d, fs, mnt)) = fault_fs() else {
        return;
    };
    let f = mnt.join("f");
    let fname = format!("--filename={}", f.display());
    fs.arm(Fault::DropWrite { at: 10 * B }, 0);
    let r = write_verify(&f, &["--verify_backlog=16", "--verify_fatal=1"], 1);
    let j = job(&r);
    assert_eq!(bad(&r), [(10 * B, "lost write".to_string())]);
    assert_eq!(u(&verify(j)["bad_blocks"]), 1, "found once");
    // It stopped at the first pause: 16 writes, not 256.
    assert_eq!(u(&j["write"]["bytes"]), 16 * B);
    // Without verify_fatal the job goes on; the block is still reported once.
    fs.arm(Fault::DropWrite { at: 10 * B }, 0);
    let r = run_json(
        &[
            &fname,
            "--size=1m",
            "--bs=4k",
            "--rw=write",
            "--verify=crc32c",
            "--verify_backlog=16",
        ],
        1,
    );
    assert_eq!(u(&job(&r)["write"]["bytes"]), 1 << 20);
    assert_eq!(bad(&r), [(10 * B, "lost write".to_string())]);
}

/// verify_pattern: the data is the pattern (behind the header), and verify=pattern checks the
/// pattern alone, byte for byte, with no header.
#[test]
fn verify_pattern_writes_and_checks_the_pattern() {
    let (_d, f, fname) = tmp_file();
    let p = [0xaa, 0x55, 0x5a, 0xa5];
    let r = run_json(
        &[
            &fname,
            "--size=1m",
            "--rw=write",
            "--verify=crc32c",
            "--verify_pattern=0xaa555aa5",
            "--keep",
        ],
        0,
    );
    assert_eq!(u(&verify(job(&r))["bad_blocks"]), 0);
    let d = std::fs::read(&f).unwrap();
    // Each 4 KiB block: the 104-byte header, the pattern, the 16-byte trailer.
    assert!(d.chunks(4096).all(|b| {
        b[104..4080]
            .iter()
            .enumerate()
            .all(|(i, &x)| x == p[(104 + i) % 4])
    }));
    std::fs::remove_file(&f).unwrap();

    let pattern_job = |extra: &[&str], code| {
        let mut args = vec![
            fname.as_str(),
            "--size=1m",
            "--rw=write",
            "--verify=pattern",
            "--verify_pattern=0xaa555aa5",
            "--verify_interval=512",
        ];
        args.extend_from_slice(extra);
        run_json(&args, code)
    };
    let r = pattern_job(&["--keep"], 0);
    assert_eq!(u(&verify(job(&r))["blocks"]), 2048);
    let d = std::fs::read(&f).unwrap();
    assert!(
        d.iter().enumerate().all(|(i, &x)| x == p[i % 4]),
        "no header: the pattern only"
    );
    patch(&f, 700 * 512 + 33, &[0]);
    let r = pattern_job(&["--verify_only=1"], 1);
    assert_eq!(bad(&r), [(700 * 512, "wrong data".to_string())]);
    assert_eq!(
        u(&verify(job(&r))["first_bad"][0]["fault"]["first_bad_byte"]),
        33
    );
    std::fs::remove_file(&f).unwrap();

    // A pattern that does not divide the block (fio's "abcd"-12 form, 8 bytes into 512) runs
    // through each write from its start: the bytes on disk say so, and the check agrees.
    let odd = |extra: &[&str], code| {
        let mut args = vec![
            fname.as_str(),
            "--size=1m",
            "--bs=4k",
            "--rw=randwrite",
            "--verify=pattern",
            "--verify_pattern=\"abcd\"-12",
            "--verify_interval=512",
        ];
        args.extend_from_slice(extra);
        run_json(&args, code)
    };
    let r = odd(&["--keep"], 0);
    assert_eq!(u(&verify(job(&r))["blocks"]), 2048);
    let q = [b'a', b'b', b'c', b'd', 0xf4, 0xff, 0xff, 0xff];
    let d = std::fs::read(&f).unwrap();
    assert!(
        d.iter().enumerate().all(|(i, &x)| x == q[i % 4096 % 8]),
        "each 4 KiB write holds the pattern from its own start"
    );
    patch(&f, 4096 + 1024 + 5, &[0x55]);
    let r = odd(&["--verify_only=1"], 1);
    assert_eq!(bad(&r), [(4096 + 1024, "wrong data".to_string())]);
    std::fs::remove_file(&f).unwrap();

    for (args, want) in [
        (vec!["--verify=pattern"], "give it (verify_pattern=0xaa55)"),
        (
            vec![
                "--verify=pattern",
                "--verify_pattern=0x010203",
                "--verify_interval=512",
                "--bsrange=4k-8k",
            ],
            "does not divide verify_interval",
        ),
        (
            vec![
                "--verify=md5",
                "--verify_pattern=0x01",
                "--buffer_pattern=0x02",
            ],
            "differs from buffer_pattern",
        ),
    ] {
        let mut all = vec!["run", fname.as_str(), "--size=1m", "--rw=write"];
        all.extend_from_slice(&args);
        let o = iogauge(&all);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
    }
}

/// A state journal is trusted only whole: a damaged record or header is an error that names
/// the record, never a list of lost writes; a journal in the way that is not iogauge's is
/// refused before anything runs, and a link there is never written through.
#[test]
fn a_damaged_or_foreign_journal_is_never_read_as_lost_writes() {
    let d = super::tmp();
    let f = d.path().join("f");
    let fname = format!("--filename={}", f.display());
    let base = [
        fname.as_str(),
        "--size=256k",
        "--bs=4k",
        "--rw=write",
        "--verify=crc32c",
    ];
    let run = |extra: &[&str]| {
        let mut a = vec!["run", "--output-format=json"];
        a.extend_from_slice(&base);
        a.extend_from_slice(extra);
        super::run_in(d.path(), &a)
    };
    let save = [
        "--fsync=4",
        "--do_verify=0",
        "--verify_state_save=1",
        "--keep",
    ];
    let o = run(&save);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let state = d.path().join("job-0-verify.state");
    let good = std::fs::read(&state).unwrap();
    assert!(good.len() > 64 + 24 * 60, "{} bytes", good.len());
    let load = ["--verify_only=1", "--verify_state_load=1"];
    let o = run(&load);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // The file cut in half: the journal's durable blocks past the end are lost writes (not
    // "another job's journal"), the half that is left checks clean.
    let whole = std::fs::read(&f).unwrap();
    std::fs::write(d.path().join("g"), &whole[..128 << 10]).unwrap();
    std::fs::rename(d.path().join("g"), &f).unwrap();
    let o = super::run_in(
        d.path(),
        &[
            "run",
            "--output-format=json",
            &fname,
            "--bs=4k",
            "--rw=write",
            "--verify=crc32c",
            "--verify_only=1",
            "--verify_state_load=1",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let v = verify(job(&r));
    assert_eq!(u(&v["bad_blocks"]), 32, "{v}");
    let first = &v["first_bad"][0];
    assert_eq!(u(&first["offset"]), 128 << 10);
    assert!(
        first["fault"]["detail"]
            .as_str()
            .unwrap()
            .contains("cut short"),
        "{first}"
    );
    std::fs::write(&f, &whole).unwrap();
    // Seven bytes of garbage over a record in the middle.
    let mut bad = good.clone();
    bad[200..207].copy_from_slice(b"garbage");
    std::fs::write(&state, &bad).unwrap();
    let o = run(&load);
    let err = stderr(&o);
    assert_ne!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("is damaged"), "{err}");
    assert!(!err.contains("lost write"), "{err}");
    // The header too.
    let mut bad = good.clone();
    bad[30] ^= 1;
    std::fs::write(&state, &bad).unwrap();
    let o = run(&load);
    assert!(stderr(&o).contains("header is damaged"), "{}", stderr(&o));
    // The user's file in the journal's place is found before the run, and left as it was.
    std::fs::write(&state, b"my notes").unwrap();
    std::fs::remove_file(&f).unwrap();
    let o = run(&save);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("verify_state_save"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&state).unwrap(), b"my notes");
    assert!(!f.exists(), "nothing was created");
    // A link there: refused, and its target untouched.
    let victim = d.path().join("victim");
    std::fs::write(&victim, b"precious").unwrap();
    std::fs::remove_file(&state).unwrap();
    std::os::unix::fs::symlink(&victim, &state).unwrap();
    let o = run(&save);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
}

/// A check stopped by Ctrl-C says it was stopped: never "every block as written" for blocks
/// it did not reach.
#[test]
fn an_interrupted_check_never_says_every_block_was_as_written() {
    let (d, f, fname) = tmp_file();
    let common = [
        fname.as_str(),
        "--size=256m",
        "--bs=4k",
        "--rw=write",
        "--verify=crc32c",
    ];
    let mut write = vec!["run"];
    write.extend_from_slice(&common);
    write.extend(["--do_verify=0", "--keep"]);
    let o = super::run_in(d.path(), &write);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // On the device before the check starts: else the signal can land while the check
    // first flushes the written pages (a slow disk takes over a second for 256 MiB), before
    // any block is read.
    std::fs::File::open(&f).unwrap().sync_all().unwrap();
    // Read back 4 KiB at a time from the device: seconds, long enough to be stopped.
    let mut check = vec!["run", "--output-format=json"];
    check.extend_from_slice(&common);
    check.extend(["--verify_only=1", "--direct=1"]);
    let child = super::bin()
        .current_dir(d.path())
        .args(&check)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(400));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let v = verify(job(&r));
    if u(&v["blocks"]) == 65536 {
        skip!("the check read 256 MiB in 0.4 s: nothing left to interrupt");
        return;
    }
    assert_eq!(v["cut_short"], true, "{v}");
    assert_eq!(u(&v["bad_blocks"]), 0);
    std::fs::write(d.path().join("r.json"), &o.stdout).unwrap();
    let t = super::run_in(d.path(), &["report", "--output-format=text", "r.json"]);
    let t = super::stdout(&t);
    assert!(t.contains("STOPPED before every block was checked"), "{t}");
    assert!(!t.contains("every block as written"), "{t}");
    std::fs::remove_file(&f).unwrap();
}

/// A reader of a later group checks each block against the write the earlier groups of the
/// run left there (their generation map is handed on): a rewrite lost below the file system
/// leaves the first group's block, an earlier copy of a block its last write — both caught
/// by the reader, at their offsets, though the writers did not check (do_verify=0).
#[test]
fn a_reader_catches_an_older_write_of_the_same_run() {
    use super::faultfs::Fault;
    let Some((_d, fs, mnt)) = fault_fs() else {
        return;
    };
    let job = mnt.join("handed.fio");
    let run = |text: &str, code: i32| -> Value {
        std::fs::write(&job, text).unwrap();
        let o = super::run_in(&mnt, &["job", "handed.fio", "--output-format=json"]);
        assert_eq!(o.status.code(), Some(code), "{text}\n{}", stderr(&o));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let reader_bad = |r: &Value| -> Vec<(u64, String)> {
        let g = r["groups"].as_array().unwrap();
        bad_of(&g[g.len() - 1]["jobs"][0]["verify"])
    };
    let global = "[global]\nfilename=data\nsize=256k\nbs=4k\nverify=crc32c\n";
    // A stonewalled rewrite whose write of block 10 is lost: the block still holds the first
    // group's write.
    fs.arm(Fault::DropWrite { at: 10 * B }, 1);
    let r = run(
        &format!(
            "{global}\n[first]\nrw=write\ndo_verify=0\n\n[rewrite]\nstonewall\nrw=write\n\
             do_verify=0\n\n[reader]\nstonewall\nrw=read\n"
        ),
        1,
    );
    assert_eq!(reader_bad(&r), [(10 * B, "another job's data".to_string())]);
    // One job writing each block twice, its second write of block 20 lost: the block holds
    // the job's first copy.
    fs.arm(Fault::DropWrite { at: 20 * B }, 1);
    let r = run(
        &format!(
            "{global}\n[twice]\nrw=write\nloops=2\ndo_verify=0\n\n[reader]\nstonewall\n\
             rw=randread\n"
        ),
        1,
    );
    assert_eq!(reader_bad(&r), [(20 * B, "stale data".to_string())]);
    // Nothing lost: the reader passes every block.
    let r = run(
        &format!("{global}\n[first]\nrw=write\ndo_verify=0\n\n[reader]\nstonewall\nrw=read\n"),
        0,
    );
    let g = r["groups"].as_array().unwrap();
    assert_eq!(u(&g[1]["jobs"][0]["verify"]["blocks"]), 64);
}
