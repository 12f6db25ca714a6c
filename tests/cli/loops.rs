//! `unlink_each_loop`: each loop after the first writes new files. Checked by what the loops
//! leave (a kept file's size shows whether the last loop started from an empty file), the
//! bytes moved, what is left behind, and the refusals that keep it from removing anything
//! that is not iogauge's.

use super::*;

/// A 1 MiB file the run creates and keeps (iogauge's, by its mark).
fn kept_file(dir: &Path) -> PathBuf {
    let f = dir.join("data");
    ok_in(
        dir,
        &[
            "run",
            "--rw=write",
            "--bs=64k",
            "--size=1m",
            "--filename=data",
            "--keep",
        ],
    );
    assert_eq!(std::fs::metadata(&f).unwrap().len(), 1 << 20);
    f
}

/// The job: the first 256 KiB of the file written sequentially, twice.
fn job_text(engine: &str, renew: bool) -> String {
    format!(
        "[w]\nioengine={engine}\niodepth=8\nrw=write\nbs=16k\nsize=256k\nloops=2\n\
         filename=data\nunlink_each_loop={}\n",
        u8::from(renew)
    )
}

#[test]
fn each_loop_after_the_first_writes_a_new_file() {
    for engine in ["psync", "pvsync2", "io_uring", "libaio", "posixaio"] {
        for renew in [false, true] {
            let d = tmp();
            let f = kept_file(d.path());
            std::fs::write(d.path().join("j.fio"), job_text(engine, renew)).unwrap();
            let o = run_in(
                d.path(),
                &["job", "j.fio", "--output-format=json", "--keep"],
            );
            assert_eq!(o.status.code(), Some(0), "{engine}: {}", stderr(&o));
            let r: Value = serde_json::from_slice(&o.stdout).unwrap();
            assert_eq!(
                counts(job(&r)).3,
                512 << 10,
                "{engine}: two loops of 256 KiB"
            );
            // Renewed, the last loop's file holds only what it wrote; otherwise the first
            // run's megabyte is still there.
            let size = std::fs::metadata(&f).unwrap().len();
            let want = if renew { 256 << 10 } else { 1 << 20 };
            assert_eq!(size, want, "{engine}, unlink_each_loop={renew}");
        }
    }
}

#[test]
fn renewed_files_are_removed_at_the_end_and_loops_count_as_fio_counts_them() {
    let d = tmp();
    let text = "[w]\nrw=randwrite\nbs=4k\nsize=512k\nloops=3\nnrfiles=2\nunlink_each_loop=1\n";
    std::fs::write(d.path().join("j.fio"), text).unwrap();
    let o = run_in(d.path(), &["job", "j.fio", "--output-format=json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(counts(job(&r)).3, 3 * (512 << 10));
    assert_eq!(
        entries(d.path()),
        vec![d.path().join("j.fio")],
        "nothing left behind"
    );
    // One loop, or time-based: nothing to renew, as in fio; the option is taken.
    for extra in ["loops=1\n", "time_based=1\nruntime=200ms\n"] {
        let text = format!("[w]\nrw=write\nbs=4k\nsize=64k\nunlink_each_loop=1\n{extra}");
        std::fs::write(d.path().join("j.fio"), text).unwrap();
        ok_in(d.path(), &["job", "j.fio"]);
    }
}

#[test]
fn what_it_cannot_renew_safely_is_refused_before_anything_is_touched() {
    let d = tmp();
    let user = d.path().join("data");
    std::fs::write(&user, b"the user's own data").unwrap();
    let cases = [
        // Reads would find the files gone: fio fails there with ENOENT.
        ("rw=randrw", "the job reads its files"),
        ("rw=write\nverify=crc32c", "the job reads its files"),
        ("rw=write\nioengine=mmap", "not taken with ioengine=mmap"),
        (
            "rw=write\nioengine=io_uring\nregisterfiles=1",
            "not taken with ioengine=io_uring with registerfiles",
        ),
        // A file iogauge did not create is never removed.
        ("rw=write\nfilename=data", "iogauge did not create it"),
    ];
    let allow = "--allow-overwrite";
    for (opts, want) in cases {
        let text = format!("[w]\n{opts}\nbs=4k\nsize=64k\nloops=2\nunlink_each_loop=1\n");
        std::fs::write(d.path().join("j.fio"), text).unwrap();
        // Allowed to overwrite (not to remove): the removal is what is refused.
        let o = run_in(d.path(), &["job", "j.fio", allow]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{opts}: {err}");
        assert!(
            err.contains("unlink_each_loop") && err.contains(want),
            "{opts}: {err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        assert_eq!(std::fs::read(&user).unwrap(), b"the user's own data");
        let mut left = entries(d.path());
        left.retain(|p| p != &user && !p.ends_with("j.fio"));
        assert!(left.is_empty(), "{opts}: created {left:?}");
    }
}
