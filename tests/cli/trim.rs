//! Trims: `rw=trim`, `randtrim`, `trimwrite` and `randtrimwrite`. A trim is a discard on a
//! block device (BLKDISCARD) and a punched hole in a file; the tests look at what the kernel
//! did (blocks freed, a loop device's backing file's holes), at fio's per-I/O logs (a trim,
//! then the write of the same bytes) and at the refusals that keep trims off data iogauge
//! does not own.

use super::*;
use std::os::fd::AsRawFd;

/// The file's data extents as the file system sees them (SEEK_DATA/SEEK_HOLE): exact, where
/// block counts carry the file system's own metadata blocks too.
fn data_extents(path: &Path) -> Vec<(u64, u64)> {
    let f = std::fs::File::open(path).unwrap();
    let (fd, len) = (f.as_raw_fd(), f.metadata().unwrap().len() as i64);
    let mut out = Vec::new();
    let mut at = 0;
    while at < len {
        // SAFETY: plain lseek calls on a descriptor `f` keeps open.
        let data = unsafe { libc::lseek(fd, at, libc::SEEK_DATA) };
        if data < 0 {
            break; // ENXIO: only a hole from here on
        }
        // SAFETY: as above.
        let hole = unsafe { libc::lseek(fd, data, libc::SEEK_HOLE) };
        out.push((data as u64, hole as u64));
        at = hole;
    }
    out
}

/// Per-I/O log lines: (ddir, bs, offset).
fn io_log(path: &Path) -> Vec<(u64, u64, u64)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            let v: Vec<u64> = l.split(',').map(|f| f.trim().parse().unwrap()).collect();
            (v[2], v[3], v[4])
        })
        .collect()
}

#[test]
fn randtrimwrite_pairs_each_trim_with_its_write_and_covers_every_sector() {
    let d = tmp();
    let o = run_in(
        d.path(),
        &[
            "fio",
            "--name=tw",
            "--filename=data",
            "--rw=randtrimwrite",
            "--size=1m",
            "--bsrange=512-4k",
            "--write_bw_log=tw",
            "--log_avg_msec=0",
            "--log_offset=1",
            "--per_job_logs=0",
            "--output-format=json",
            "--output=out.json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let log = io_log(&d.path().join("tw_bw.log"));
    assert!(log.len() >= 2 * 256, "{} I/Os", log.len());
    let mut sectors = vec![0u32; 2048];
    for pair in log.chunks(2) {
        let [(td, tbs, toff), (wd, wbs, woff)] = pair else {
            panic!("an odd I/O out: {pair:?}");
        };
        assert_eq!((*td, *wd), (2, 1), "a trim, then a write: {pair:?}");
        assert_eq!((tbs, toff), (wbs, woff), "the write takes the trim's bytes");
        assert!(*tbs >= 512 && *tbs <= 4096 && tbs % 512 == 0, "{pair:?}");
        for s in toff / 512..(toff + tbs) / 512 {
            sectors[s as usize] += 1;
        }
    }
    // The random map: each sector trimmed (and written) exactly once in the pass.
    assert!(sectors.iter().all(|&n| n == 1), "{sectors:?}");
    let doc: Value = serde_json::from_slice(&std::fs::read(d.path().join("out.json")).unwrap())
        .expect("fio's JSON");
    let j = &doc["jobs"][0];
    assert_eq!(j["trim"]["io_bytes"], 1 << 20);
    assert_eq!(j["write"]["io_bytes"], 1 << 20);
    assert_eq!(j["read"]["io_bytes"], 0);
    assert_eq!(j["trim"]["total_ios"], j["write"]["total_ios"]);
    // The writes filled every hole the trims punched: one extent, the whole file.
    assert_eq!(data_extents(&d.path().join("data")), vec![(0, 1 << 20)]);
}

#[test]
fn a_trim_of_a_file_frees_its_blocks_through_every_engine() {
    let d = tmp();
    for engine in ["psync", "sync", "pvsync", "pvsync2", "io_uring"] {
        let f = d.path().join(engine);
        let r = run_json(
            &[
                &format!("--filename={}", f.display()),
                &format!("--ioengine={engine}"),
                "--rw=trim",
                "--size=4m",
                "--bs=64k",
                "--keep",
            ],
            0,
        );
        let j = job(&r);
        let trim = (j["trim"]["ios"].as_u64(), j["trim"]["bytes"].as_u64());
        assert_eq!(trim, (Some(64), Some(4 << 20)), "{engine}");
        assert_eq!(counts(j), (0, 0, 0, 0), "{engine}: no reads, no writes");
        let calls = j["engine"]["calls"].as_str().unwrap();
        assert!(calls.contains("PUNCH_HOLE"), "{engine}: {calls}");
        assert_eq!(
            std::fs::metadata(&f).unwrap().len(),
            4 << 20,
            "{engine}: the length stays"
        );
        assert_eq!(
            data_extents(&f),
            vec![],
            "{engine}: one hole, the whole file"
        );
    }
}

#[test]
fn a_trim_of_a_loop_device_discards_into_its_backing_file() {
    let d = tmp();
    let img = d.path().join("dev.img");
    std::fs::write(&img, vec![0x5au8; 8 << 20]).unwrap();
    let Some(dev) = LoopDev::attach(&img) else {
        return;
    };
    let args = [
        &format!("--filename={}", dev.0)[..],
        "--rw=randtrim",
        "--size=4m",
        "--bs=64k",
    ];
    // A block device is trimmed only when the user says so, as it is written.
    let refused = iogauge(&[&["run"][..], &args].concat());
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("trimming destroys whatever it holds"),
        "{}",
        stderr(&refused)
    );
    let r = run_json(&[&args[..], &["--allow-overwrite"]].concat(), 0);
    assert_eq!(job(&r)["trim"]["bytes"], 4 << 20);
    // The loop driver punches the discarded range out of its backing file.
    let extents = data_extents(&img);
    if extents == vec![(0, 8 << 20)] {
        skip!("this loop device does not pass discards to its backing file");
        return;
    }
    assert_eq!(
        extents,
        vec![(4 << 20, 8 << 20)],
        "exactly the bytes trimmed"
    );
    let data = std::fs::read(&img).unwrap();
    assert!(data[..4 << 20].iter().all(|&b| b == 0));
    assert!(
        data[4 << 20..].iter().all(|&b| b == 0x5a),
        "nothing past size"
    );
}

#[test]
fn trims_are_refused_where_writes_are() {
    let (d, f, fname) = tmp_file();
    std::fs::write(&f, vec![7u8; 1 << 20]).unwrap();
    // A file iogauge did not create.
    let o = iogauge(&["run", &fname, "--rw=trim", "--size=1m"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("trimming would discard its data"),
        "{}",
        stderr(&o)
    );
    assert!(
        std::fs::read(&f).unwrap().iter().all(|&b| b == 7),
        "untouched"
    );
    // fio's --readonly.
    let o = run_in(
        d.path(),
        &[
            "fio",
            "--readonly",
            "--name=t",
            "--filename=g",
            "--rw=randtrim",
            "--size=1m",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--readonly"), "{}", stderr(&o));
    // Nothing to check in a trimmed block.
    let o = iogauge(&[
        "run",
        "--filename=/nonexistent/x",
        "--rw=trimwrite",
        "--verify=crc32c",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--verify"), "{}", stderr(&o));
    assert_eq!(entries(d.path()), vec![f], "nothing created");
}
