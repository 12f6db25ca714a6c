//! ioengine=e4defrag: each write an EXT4_IOC_MOVE_EXT of its blocks to the donor file, as
//! fio's engine does: the file's data stays, its blocks move (seen with FIEMAP through
//! filefrag), the donor is iogauge's own file and goes at the end, and every way the engine
//! cannot work here is refused before anything is created.

use super::*;

/// A temp dir on an ext4 that moves extents, or None (with the reason printed): /tmp's own
/// where it does, else one on a fresh ext4 (with a journal) on a loop device. Linux 6.18
/// refuses EXT4_IOC_MOVE_EXT on an ext4 mounted without a journal (this project's VM's root);
/// iogauge says so before anything is made, which is checked here when it happens.
struct Ext4Dir {
    dir: tempfile::TempDir,
    // Unmounted after the directory in it is gone (fields drop in order).
    _fs: Option<LoopFs>,
}

impl Ext4Dir {
    fn path(&self) -> &Path {
        self.dir.path()
    }
}

fn ext4_dir() -> Option<Ext4Dir> {
    let d = tmp();
    let out = Command::new("stat")
        .args(["-f", "-c", "%T"])
        .arg(d.path())
        .output()
        .ok()?;
    let fs = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if fs != "ext2/ext3" {
        skip!("{} is on {fs}, not ext4", d.path().display());
        return None;
    }
    let o = run_in(
        d.path(),
        &[
            "run",
            "--filename=probe",
            "--ioengine=e4defrag",
            "--donorname=probe.def",
            "--rw=write",
            "--size=64k",
        ],
    );
    if !stderr(&o).contains("refuses EXT4_IOC_MOVE_EXT") {
        let _ = std::fs::remove_file(d.path().join("probe"));
        return Some(Ext4Dir { dir: d, _fs: None });
    }
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert_eq!(
        entries(d.path()),
        Vec::<PathBuf>::new(),
        "the refusal made files"
    );
    let fs = LoopFs::new(64)?;
    let dir = tempfile::tempdir_in(fs.path()).ok()?;
    Some(Ext4Dir { dir, _fs: Some(fs) })
}

/// The physical block the file's first extent starts at (filefrag's FIEMAP), or None.
fn first_physical(p: &Path) -> Option<u64> {
    let out = Command::new("filefrag").arg("-v").arg(p).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let row = text.lines().find(|l| l.trim_start().starts_with("0:"))?;
    let phys = row.split(':').nth(2)?.trim().split("..").next()?;
    phys.trim().parse().ok()
}

#[test]
fn e4defrag_moves_the_files_blocks_and_keeps_its_data() {
    let Some(d) = ext4_dir() else { return };
    let f = d.path().join("data");
    let bytes: Vec<u8> = (0..1u32 << 20).map(|i| (i % 251) as u8).collect();
    std::fs::write(&f, &bytes).unwrap();
    let before = first_physical(&f);
    let fname = format!("--filename={}", f.display());
    let donor = d.path().join("d.def");
    let dname = format!("--donorname={}", donor.display());
    let r = run_json(
        &[
            &fname,
            &dname,
            "--ioengine=e4defrag",
            "--rw=write",
            "--bs=64k",
            "--size=1m",
            "--allow-overwrite",
        ],
        0,
    );
    assert_eq!(counts(job(&r)), (0, 0, 16, 1 << 20));
    let calls = job(&r)["engine"]["calls"].as_str().unwrap();
    assert!(calls.contains("EXT4_IOC_MOVE_EXT"), "{calls}");
    assert!(std::fs::read(&f).unwrap() == bytes, "the data changed");
    assert!(
        !donor.exists(),
        "the donor is iogauge's and goes at the end"
    );
    match (before, first_physical(&f)) {
        (Some(a), Some(b)) => assert_ne!(a, b, "the blocks did not move"),
        _ => skip!("filefrag (e2fsprogs) is missing: the blocks' move is not checked"),
    }
}

#[test]
fn e4defrag_refuses_what_cannot_work_before_creating_anything() {
    let Some(d) = ext4_dir() else { return };
    let f = d.path().join("data");
    let fname = format!("--filename={}", f.display());
    let theirs = d.path().join("theirs");
    std::fs::write(&theirs, b"keep me").unwrap();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec![], "needs donorname"),
        (
            vec![format!("--donorname={}", theirs.display())],
            "--allow-overwrite",
        ),
        (
            vec!["--donorname=x".into(), "--rw=randrw".into()],
            "only writes",
        ),
        (
            vec![format!("--donorname={}", f.display())],
            "donor must be a file of its own",
        ),
    ];
    for (extra, says) in cases {
        let mut args = vec![
            "run",
            &fname,
            "--ioengine=e4defrag",
            "--rw=write",
            "--size=1m",
        ];
        args.extend(extra.iter().map(String::as_str));
        let o = run_in(d.path(), &args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
        assert!(!f.exists() && !d.path().join("x").exists());
    }
    assert_eq!(std::fs::read(&theirs).unwrap(), b"keep me");
    let o = iogauge(&["run", &fname, "--rw=write", "--size=1m", "--donorname=x"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("applies only to ioengine=e4defrag"));

    // Off ext4 (tmpfs): refused by name before anything is made.
    let Some(shm) = shm_tmpfs() else {
        skip!("no tmpfs at /dev/shm: the refusal off ext4 is not checked");
        return;
    };
    let s = tempfile::tempdir_in(shm).unwrap();
    let sf = format!("--filename={}", s.path().join("f").display());
    let o = run_in(
        s.path(),
        &[
            "run",
            &sf,
            "--ioengine=e4defrag",
            "--donorname=don",
            "--rw=write",
            "--size=1m",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("not on ext4"), "{}", stderr(&o));
    assert_eq!(std::fs::read_dir(s.path()).unwrap().count(), 0);
}

/// fio's two e4defrag examples, as they are but for their directory and sizes: they parse,
/// and the first one's isolated job runs and swaps every block of its file.
#[test]
fn fios_e4defrag_examples_run() {
    let Some(d) = ext4_dir() else { return };
    for ex in ["e4defrag.fio", "e4defrag2.fio"] {
        let p = Path::new("/usr/share/doc/fio/examples").join(ex);
        if !p.exists() {
            skip!(
                "{} is missing (scripts/test-deps.sh installs fio-examples)",
                p.display()
            );
            return;
        }
        let o = run_in(d.path(), &["job", p.to_str().unwrap(), "--parse-only"]);
        assert_eq!(o.status.code(), Some(0), "{ex}: {}", stderr(&o));
    }
    let dir = format!("directory={}", d.path().display());
    let o = run_in(
        d.path(),
        &[
            "job",
            "/usr/share/doc/fio/examples/e4defrag.fio",
            "--section=isolated-e4defrag",
            "--output-format=json",
            "--set",
            &dir,
            "--set",
            "size=4m",
            "--set",
            "filesize=4m",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(counts(job(&r)), (0, 0, 128, 4 << 20));
    assert_eq!(
        std::fs::read_dir(d.path()).unwrap().count(),
        0,
        "the file and the donor are removed"
    );
}

/// Moving blocks moved moments before meets EBUSY (their buffers wait in the journal): a
/// time_based job over a small file does so at its second pass, where fio's run fails with
/// err=16. iogauge commits both files and moves again, so the job runs its time.
#[test]
fn e4defrag_passes_over_blocks_it_just_moved() {
    let Some(d) = ext4_dir() else { return };
    let fname = format!("--filename={}", d.path().join("data").display());
    let dname = format!("--donorname={}", d.path().join("d.def").display());
    let r = run_json(
        &[
            &fname,
            &dname,
            "--ioengine=e4defrag",
            "--rw=write",
            "--bs=32k",
            "--size=1m",
            "--time_based",
            "--runtime=2",
        ],
        0,
    );
    let (_, _, ios, bytes) = counts(job(&r));
    assert!(
        ios > 3 * 32,
        "only {ios} moves: the second pass did not go on"
    );
    assert_eq!(bytes, ios * 32768);
    assert!(
        r["errors"].as_array().is_none_or(Vec::is_empty),
        "{}",
        r["errors"]
    );
}
