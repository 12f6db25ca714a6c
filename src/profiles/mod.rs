//! Named presets that expand to ordinary sections. Today: the quick check that runs when
//! iogauge is started without a command. Presets only produce sections; they run through the
//! same resolve → run → report path as everything else.

use std::path::Path;

use crate::plan::{Origin, Section};

/// Labels of the quick check's tests, in order.
pub const QUICK_LABELS: [&str; 4] = [
    "sequential write 1 MiB",
    "cold sequential read 1 MiB",
    "random read 4 KiB",
    "random write 4 KiB",
];

/// The quick check of `dir`: sequential 1 MiB write (flushed inside the timing), cold
/// sequential 1 MiB read ([`cold`]), then 4 KiB random read and write with O_DIRECT — one
/// group each, on one file of `size` bytes, each test at most `seconds` long.
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
    let mut read = base("seq-read", "read", "1m");
    cold(&mut read, o());
    let mut rr = base("rand-read", "randread", "4k");
    rr.set("direct", "1", o()).set("time_based", "1", o());
    let mut rw = base("rand-write", "randwrite", "4k");
    rw.set("direct", "1", o()).set("time_based", "1", o());
    vec![write, read, rr, rw]
}

/// Makes a read of `s` come from the device, not the page cache: its cached pages dropped
/// first (`invalidate`) where the system takes that advice, else read without the cache
/// (`direct`: Windows drops no file's cached pages, so there only NO_BUFFERING reads cold).
fn cold(s: &mut Section, o: Origin) {
    match crate::platform::sys::CACHE_ADVICE {
        true => s.set("invalidate", "1", o),
        false => s.set("direct", "1", o),
    };
}

/// Default quick-check file size: 1 GiB, or a quarter of the free space when that is less
/// (rounded down to MiB), so the check never fills a disk.
pub fn quick_size(dir: &Path) -> u64 {
    let free = crate::host::space(dir).map_or(u64::MAX, |s| s.avail_bytes);
    ((free / 4).min(1 << 30) >> 20) << 20
}

/// `iogauge assess --for=sas`: the test names, for the summary.
pub const SAS_LABELS: [&str; 2] = ["SAS streams write 64 KiB", "SAS streams cold read 64 KiB"];

/// SAS's streams (iotest.sh's shape, seed 004): `streams` files of `per_stream` bytes in
/// `dir`, written at once sequentially in 64 KiB blocks (flushed inside the timing), then read
/// back at once from the device ([`cold`]).
pub fn assess_sas(dir: &Path, streams: usize, per_stream: u64) -> Vec<Section> {
    let o = || Origin::Profile("assess --for=sas");
    let size = per_stream.to_string();
    let file = |i: usize| crate::rawpath::filename_value(&dir.join(format!("iogauge-sas.{i}")));
    let mut sections = Vec::new();
    for (phase, rw) in [("sas-write", "write"), ("sas-read", "read")] {
        for i in 0..streams {
            let mut s = Section::new(phase);
            s.set("filename", &file(i), o())
                .set("rw", rw, o())
                .set("bs", "64k", o())
                .set("size", &size, o())
                .set("group_reporting", "1", o());
            if rw == "write" {
                s.set("end_fsync", "1", o());
            } else {
                cold(&mut s, o());
            }
            if i == 0 && rw == "read" {
                s.set("stonewall", "1", o());
            }
            sections.push(s);
        }
    }
    sections
}

/// `iogauge assess --for=database`: the test names, for the summary.
pub const DATABASE_LABELS: [&str; 4] = [
    "data read 8 KiB, 1 at once",
    "data read 8 KiB, 16 at once",
    "log write 8 KiB, write-through",
    "log write 64 KiB, write-through",
];

/// A database's I/O: 8 KiB random reads of a data file with O_DIRECT, one at a time and 16
/// at once, then log writes of 8 KiB and 64 KiB with O_DSYNC (write-through, as a commit
/// waits for its log record) to a preallocated log file, `seconds` each.
pub fn assess_database(dir: &Path, data_size: u64, seconds: u64) -> Vec<Section> {
    let o = || Origin::Profile("assess --for=database");
    let data = crate::rawpath::filename_value(&dir.join("iogauge-db.data"));
    let log = crate::rawpath::filename_value(&dir.join("iogauge-db.log"));
    let secs = format!("{seconds}s");
    let log_size = (data_size / 4).clamp(16 << 20, 256 << 20).to_string();
    let data_size = data_size.to_string();
    let mut out = Vec::new();
    for (name, jobs) in [("db-read-qd1", "1"), ("db-read-load", "16")] {
        let mut s = Section::new(name);
        s.set("filename", &data, o())
            .set("rw", "randread", o())
            .set("bs", "8k", o())
            .set("size", &data_size, o())
            .set("direct", "1", o())
            .set("numjobs", jobs, o())
            .set("group_reporting", "1", o())
            .set("time_based", "1", o())
            .set("runtime", &secs, o());
        out.push(s);
    }
    for (name, bs) in [("db-log-8k", "8k"), ("db-log-64k", "64k")] {
        let mut s = Section::new(name);
        s.set("filename", &log, o())
            .set("rw", "write", o())
            .set("bs", bs, o())
            .set("size", &log_size, o())
            .set("direct", "1", o())
            .set("sync", "dsync", o())
            .set("time_based", "1", o())
            .set("runtime", &secs, o());
        out.push(s);
    }
    out
}
