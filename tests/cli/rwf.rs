//! The per-call flags fio's newer options ask for, on real file systems: `uncached`
//! (RWF_DONTCACHE) leaves nothing of the data in the page cache, where the same run without it
//! leaves all of it; `atomic` (RWF_ATOMIC) writes go through on XFS (which offers torn-write
//! protection in software on Linux 6.16+) and are refused before any I/O where the file or
//! the workload cannot take them. The engines' own tests show the flags reach the kernel per
//! direction; here strace shows pvsync2's.

use super::*;

/// Pages of `p` in the page cache (mincore over a mapping of the whole file).
fn resident_pages(p: &Path) -> usize {
    let f = std::fs::File::open(p).unwrap();
    let len = f.metadata().unwrap().len() as usize;
    use std::os::fd::AsRawFd as _;
    // SAFETY: a shared read-only mapping of a file this test made, unmapped below; mincore
    // writes one byte per page into a vector of that many.
    unsafe {
        let m = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            f.as_raw_fd(),
            0,
        );
        assert_ne!(m, libc::MAP_FAILED);
        let mut vec = vec![0u8; len.div_ceil(4096)];
        assert_eq!(libc::mincore(m, len, vec.as_mut_ptr()), 0);
        libc::munmap(m, len);
        vec.iter().filter(|&&b| b & 1 != 0).count()
    }
}

/// Drops `p`'s clean pages from the page cache.
fn drop_cache(p: &Path) {
    use std::os::fd::AsRawFd as _;
    let f = std::fs::File::open(p).unwrap();
    // SAFETY: an advice call on a descriptor this test holds.
    unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
}

#[test]
fn uncached_reads_and_writes_leave_nothing_in_the_page_cache() {
    // The temp dir is on the root file system (ext4 here), which has RWF_DONTCACHE.
    let d = tmp();
    let f = d.path().join("user.dat");
    std::fs::write(&f, vec![0x5au8; 16 << 20]).unwrap();
    let pages = 16 << 20 >> 12;
    let name = format!("--filename={}", f.display());
    for engine in ["--ioengine=io_uring", "--ioengine=pvsync2"] {
        for (uncached, want_cached) in [("--uncached=0", pages), ("--uncached=1", 0)] {
            std::process::Command::new("sync").status().unwrap();
            drop_cache(&f);
            let args = [
                "run",
                &name,
                engine,
                uncached,
                "--bs=128k",
                "--output-format=json",
            ];
            let o = iogauge(&args);
            if o.status.code() == Some(2) && stderr(&o).contains("RWF_DONTCACHE") {
                skip!(
                    "this kernel or file system has no RWF_DONTCACHE: {}",
                    stderr(&o)
                );
                return;
            }
            assert!(o.status.success(), "{args:?}: {}", stderr(&o));
            let r: Value = serde_json::from_slice(&o.stdout).unwrap();
            assert_eq!(counts(job(&r)).1, 16 << 20);
            let cached = resident_pages(&f);
            // The page cache is the kernel's: allow a few pages of slack either way.
            assert!(
                cached.abs_diff(want_cached) <= 16,
                "{args:?}: {cached} pages cached"
            );
        }
    }
    // Written uncached: once the writeback is done, the data's pages are gone too.
    let w = d.path().join("w");
    let wname = format!("--filename={}", w.display());
    let args = [
        &wname,
        "--ioengine=pvsync2",
        "--uncached=1",
        "--rw=write",
        "--bs=128k",
        "--size=16m",
        "--keep",
    ];
    run_json(&args, 0);
    std::process::Command::new("sync").status().unwrap();
    assert!(
        resident_pages(&w) <= 16,
        "{} pages cached",
        resident_pages(&w)
    );
    // The user's file is as it was.
    assert!(std::fs::read(&f).unwrap().iter().all(|&b| b == 0x5a));
}

#[test]
fn uncached_on_a_file_system_without_it_is_refused_before_any_io() {
    let Some(shm) = shm_tmpfs() else {
        skip!("no tmpfs at /dev/shm");
        return;
    };
    let d = tempfile::tempdir_in(shm).unwrap();
    let dir = format!("--directory={}", d.path().display());
    let o = iogauge(&[
        "run",
        &dir,
        "--size=1m",
        "--ioengine=io_uring",
        "--uncached=1",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("--uncached") && e.contains("RWF_DONTCACHE"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(entries(d.path()).is_empty(), "what it laid out is removed");
    // Direct I/O has no page cache to leave: a warning, and the run goes on.
    let o = iogauge(&[
        "run",
        &dir,
        "--size=1m",
        "--ioengine=pvsync2",
        "--uncached=1",
        "--direct=1",
    ]);
    if o.status.success() {
        assert!(stderr(&o).contains("uncached=1 has no effect with direct=1"));
    }
}

#[test]
fn atomic_writes_run_where_the_file_takes_them_and_are_refused_before_io_elsewhere() {
    // Bad input first: one line, exit 2, nothing created.
    let (d, f, name) = tmp_file();
    for (extra, says) in [
        (&["--direct=1", "--bs=12k"][..], "not a power of two"),
        (&["--direct=1", "--bsrange=4k-16k"][..], "one write bs"),
        (
            &["--direct=1", "--bs=4k,16k", "--rw=randrw"][..],
            "must start at a multiple of 16384",
        ),
        (
            &["--direct=1", "--bs=16k", "--offset=4k"][..],
            "offset puts writes",
        ),
        (&["--bs=16k"][..], "needs direct=1"),
        (
            &["--direct=1", "--ioengine=psync"][..],
            "applies only to ioengine=io_uring, libaio",
        ),
    ] {
        let mut a = vec![
            "run",
            name.as_str(),
            "--size=1m",
            "--rw=randwrite",
            "--atomic=1",
        ];
        if !extra.iter().any(|x| x.starts_with("--ioengine")) {
            a.push("--ioengine=pvsync2");
        }
        a.extend_from_slice(extra);
        let o = iogauge(&a);
        assert_eq!(o.status.code(), Some(2), "{a:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{a:?}: {}", stderr(&o));
        assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
        assert!(!f.exists());
    }
    // ext4 over the root disk: statx reports no atomic writes; refused before any I/O.
    let o = iogauge(&[
        "run",
        &name,
        "--size=1m",
        "--rw=write",
        "--bs=4k",
        "--direct=1",
        "--atomic=1",
        "--ioengine=pvsync2",
    ]);
    if o.status.code() == Some(2) {
        assert!(
            stderr(&o).contains("takes no atomic writes"),
            "{}",
            stderr(&o)
        );
        assert!(entries(d.path()).is_empty());
    }
    // XFS (reflink, Linux 6.16+): atomic writes in software, up to what statx says.
    let Some(fs) = LoopFs::made_by(512, &["mkfs.xfs", "-q", "-f"]) else {
        return;
    };
    let target = format!("--filename={}", fs.path().join("t").display());
    let base = [
        "run",
        &target,
        "--size=4m",
        "--direct=1",
        "--atomic=1",
        "--rw=randwrite",
    ];
    let probe = iogauge(&[&base[..], &["--bs=16k", "--ioengine=pvsync2"]].concat());
    if probe.status.code() == Some(2) && stderr(&probe).contains("takes no atomic writes") {
        skip!(
            "this kernel's XFS offers no atomic writes: {}",
            stderr(&probe)
        );
        return;
    }
    for engine in [
        "--ioengine=pvsync2",
        "--ioengine=io_uring",
        "--ioengine=libaio",
    ] {
        let mut a = base.to_vec();
        a.extend_from_slice(&[engine, "--bs=16k", "--iodepth=4", "--output-format=json"]);
        let o = iogauge(&a);
        assert!(o.status.success(), "{a:?}: {}", stderr(&o));
        let r: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(counts(job(&r)).3, 4 << 20, "{engine}");
        let flags = job(&r)["engine"]["per_call_flags"].to_string();
        assert!(flags.contains("RWF_ATOMIC"), "{engine}: {flags}");
    }
    // The kernel sees the flag on every write (and on no read).
    let traced = Command::new("strace")
        .args(["-f", "-qq", "-e", "trace=pwritev2,preadv2"])
        .arg(assert_cmd::cargo::cargo_bin!("iogauge"))
        .args(base)
        .args([
            "--bs=16k",
            "--ioengine=pvsync2",
            "--rw=randrw",
            "--output-format=json",
        ])
        .output();
    match traced {
        Ok(o) => {
            assert!(o.status.success(), "{}", stderr(&o));
            let text = stderr(&o);
            let writes: Vec<_> = text.lines().filter(|l| l.contains("pwritev2(")).collect();
            let reads: Vec<_> = text.lines().filter(|l| l.contains("preadv2(")).collect();
            assert!(writes.len() > 10 && reads.len() > 10, "{text}");
            // An strace older than the flag prints its value (0x40).
            let atomic = |l: &str| l.contains("RWF_ATOMIC") || l.contains(", 0x40");
            assert!(writes.iter().all(|l| atomic(l)), "{writes:#?}");
            assert!(!reads.iter().any(|l| atomic(l)), "{reads:#?}");
        }
        Err(_) => skip!("strace is not installed (scripts/test-deps.sh installs it)"),
    }
    // Larger than the file system takes: refused, naming its range.
    let o = iogauge(
        &[
            &base[..],
            &["--bs=64m", "--size=128m", "--ioengine=io_uring"],
        ]
        .concat(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("takes atomic writes of"),
        "{}",
        stderr(&o)
    );
    assert!(entries(fs.path()).is_empty(), "{:?}", entries(fs.path()));
}
