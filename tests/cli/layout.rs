//! How files iogauge creates are laid out: fio's `fallocate` (native by default, posix, keep,
//! truncate, none) seen in the file's size and allocated blocks, what the report says of it,
//! and a preallocation that runs out of space.

use std::os::unix::fs::MetadataExt;

use super::*;

/// One 64 KiB write into a new 1 MiB file, kept: (size, allocated bytes, the report's layout).
fn one_write(dir: &Path, how: Option<&str>) -> (u64, u64, String) {
    let f = dir.join(format!("f-{}", how.unwrap_or("default")));
    let fname = format!("--filename={}", f.display());
    let mut args = vec![
        fname.as_str(),
        "--rw=write",
        "--bs=64k",
        "--size=1m",
        "--number_ios=1",
        "--keep",
    ];
    let opt = how.map(|h| format!("--fallocate={h}"));
    args.extend(opt.as_deref());
    let r = run_json(&args, 0);
    assert_eq!(counts(job(&r)), (0, 0, 1, 65536));
    let layout = job(&r)["files"][0]["layout"].as_str().unwrap().to_string();
    let m = std::fs::metadata(&f).unwrap();
    (m.len(), m.blocks() * 512, layout)
}

#[test]
fn fallocate_modes_allocate_as_fio_does() {
    let d = tmp();
    let p = d.path();
    let mib = 1 << 20;
    // fio's default on Linux: fallocate(2) to full size, so writes overwrite allocated blocks.
    let (len, alloc, layout) = one_write(p, None);
    assert_eq!(len, mib, "{layout}");
    assert!(alloc >= mib, "{alloc}");
    assert!(
        layout.contains("fallocate(2) of 1.00 MiB (fallocate=native)"),
        "{layout}"
    );
    let (len, alloc, _) = one_write(p, Some("posix"));
    assert!(len == mib && alloc >= mib, "{len} {alloc}");
    // keep: blocks reserved, the size grows only with the writes.
    let (len, alloc, layout) = one_write(p, Some("keep"));
    assert!(len == 65536 && alloc >= mib, "{len} {alloc}");
    assert!(layout.contains("KEEP_SIZE"), "{layout}");
    // truncate: full size, sparse.
    let (len, alloc, layout) = one_write(p, Some("truncate"));
    assert!(len == mib && alloc < mib / 2, "{len} {alloc}");
    assert!(layout.contains("sparse"), "{layout}");
    // none (and fio's 0): the job appends.
    for how in ["none", "0"] {
        let (len, alloc, layout) = one_write(p, Some(how));
        assert!(len == 65536 && alloc < mib / 2, "{how}: {len} {alloc}");
        assert!(layout.contains("the job's writes extend it"), "{layout}");
    }
    let o = iogauge(&["run", "--fallocate=sometimes", "--size=1m"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--fallocate=sometimes: expected one of native"));
}

#[test]
fn a_file_a_later_group_reads_is_laid_out_with_data_not_preallocated() {
    let d = tmp();
    let f = d.path().join("f");
    let jf = d.path().join("wr.fio");
    std::fs::write(
        &jf,
        format!(
            "[global]\nfilename={}\nbs=64k\nsize=1m\n[w]\nrw=write\nnumber_ios=4\n\
             [r]\nstonewall\nrw=read\n",
            f.display()
        ),
    )
    .unwrap();
    let o = run_in(
        d.path(),
        &["job", jf.to_str().unwrap(), "--output-format=json"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let w = &r["groups"][0]["jobs"][0]["files"][0]["layout"];
    assert!(w.as_str().unwrap().contains("not preallocated"), "{w}");
    // The writer wrote 256 KiB; the reader's group lays out the rest with data and reads 1 MiB.
    let rd = &r["groups"][1]["jobs"][0];
    let l = rd["files"][0]["layout"].as_str().unwrap();
    assert!(
        l.contains("laid out with random data from byte 262144"),
        "{l}"
    );
    assert_eq!(counts(rd), (16, 1 << 20, 0, 0));
}

#[test]
fn preallocation_without_room_stops_before_the_job_and_removes_the_file() {
    let Some(fs) = SmallFs::mount("4m") else {
        return;
    };
    let f = fs.path().join("big");
    let o = iogauge(&[
        "run",
        &format!("--filename={}", f.display()),
        "--rw=write",
        "--size=16m",
        "--skip-space-check",
    ]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        e.contains("fallocate=native of 16.00 MiB") && e.contains("No space"),
        "{e}"
    );
    assert!(
        entries(fs.path()).is_empty(),
        "removed: {:?}",
        entries(fs.path())
    );
}
