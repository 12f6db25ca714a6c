//! Named presets that expand to ordinary sections. Today: the quick check that runs when
//! iogauge is started without a command. Presets only produce sections; they run through the
//! same resolve → run → report path as everything else.

use std::path::Path;

use crate::spec::{Origin, Section};

/// Labels of the quick check's tests, in order.
pub const QUICK_LABELS: [&str; 4] = [
    "sequential write 1 MiB",
    "cold sequential read 1 MiB",
    "random read 4 KiB",
    "random write 4 KiB",
];

/// The quick check of `dir`: sequential 1 MiB write (flushed inside the timing), cold
/// sequential 1 MiB read, then 4 KiB random read and write with O_DIRECT — one group each, on
/// one file of `size` bytes, each test at most `seconds` long.
pub fn quick_check(dir: &Path, size: u64, seconds: u64) -> Vec<Section> {
    let file = dir.join("iogauge-quick.tmp");
    let file = crate::rawpath::filename_value(&file);
    let size = size.to_string();
    let secs = format!("{seconds}s");
    let o = || Origin::Profile("quick");
    let base = |name: &str, rw: &str, bs: &str| {
        let mut s = Section::new(name);
        s.set("filename", &file, o())
            .set("rw", rw, o())
            .set("bs", bs, o())
            .set("size", &size, o())
            .set("runtime", &secs, o());
        s
    };
    let mut write = base("seq-write", "write", "1m");
    write.set("end_fsync", "1", o());
    let read = base("seq-read", "read", "1m");
    let mut rr = base("rand-read", "randread", "4k");
    rr.set("direct", "1", o()).set("time_based", "1", o());
    let mut rw = base("rand-write", "randwrite", "4k");
    rw.set("direct", "1", o()).set("time_based", "1", o());
    vec![write, read, rr, rw]
}

/// Default quick-check file size: 1 GiB, or a quarter of the free space when that is less
/// (rounded down to MiB), so the check never fills a disk.
pub fn quick_size(dir: &Path) -> u64 {
    let free = rustix::fs::statvfs(dir)
        .map(|v| v.f_bavail * v.f_frsize)
        .unwrap_or(u64::MAX);
    ((free / 4).min(1 << 30) >> 20) << 20
}
