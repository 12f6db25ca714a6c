//! fio's logs (`write_bw_log`, `write_iops_log`, `write_lat_log`): `NAME_bw.N.log` and
//! friends (N counting the run's jobs from 1; `NAME_bw.log` for every job with
//! per_job_logs=0), each line `msec, value, direction, bs, [offset,] priority` as fio writes
//! them (direction 0 read, 1 write, 2 trim; the offset with log_offset=1; the priority: 1 for
//! a real-time I/O, else 0, or with log_prio=1 the I/O's ioprio value in hex).
//!
//! With log_avg_msec=0 (fio's default) a line per I/O, from the samples the job kept
//! ([`per_io`]): bandwidth as the I/O's bytes over its completion latency (fio's KiB/s
//! approximation, bytes per ms), IOPS 1, latencies in ns. Otherwise a line per window, from the
//! report's time series ([`render`]; bs and offset 0): bandwidth (KiB/s) and IOPS over full
//! windows only, as fio's; latency (mean ns) including the last, partial window. Pure:
//! returns names and contents; the binary writes them.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::plan::LogSpec;
use crate::result::fio::full_windows;
use crate::result::{DirReport, JobReport, RunReport};
use crate::stats::IoSample;

/// The logs a job asked for, from the options its report keeps.
pub fn wanted(o: &BTreeMap<String, String>) -> LogSpec {
    let flag = |k: &str, default: bool| crate::result::fio::option_flag(o, k, default);
    LogSpec {
        bw: o.get("write_bw_log").cloned(),
        iops: o.get("write_iops_log").cloned(),
        lat: o.get("write_lat_log").cloned(),
        per_io: o.get("log_avg_msec").is_none_or(|v| v.trim() == "0"),
        per_job: flag("per_job_logs", true),
        offset: flag("log_offset", false),
        prio: flag("log_prio", false),
        // An I/O log is written by the run itself: a saved report does not hold its lines.
        iolog: None,
        compressed: flag("log_store_compressed", false),
    }
}

/// fio 3.x's in-memory log sample (`struct io_sample`, then `io_sample_offset`'s offset):
/// time, value, ddir with the offset flag, priority, padding, bs: 32 bytes, 40 with the
/// offset, little-endian. Its `.log.fz` files are zlib streams of these records.
const SAMPLE_BYTES: usize = 32;
const LOG_OFFSET_SAMPLE_BIT: u32 = 0x8000_0000;
const LOG_PRIO_SAMPLE_BIT: u32 = 0x4000_0000;
const LOG_SAMPLE_BITS: u32 = 0xC000_0000;

/// A log's bytes as written: its text, or for a `.fz` name (fio's log_store_compressed) its
/// lines as fio's binary samples, zlib-compressed, which fio's `--inflate-log` and iogauge's
/// print back as the same text.
pub fn encoded(name: &str, text: &str) -> Vec<u8> {
    use std::io::Write;
    if !name.ends_with(".fz") {
        return text.as_bytes().to_vec();
    }
    let mut raw = Vec::with_capacity(text.len());
    for line in text.lines() {
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        let f: Vec<u64> = fields
            .iter()
            .map(|v| v.parse::<f64>().map_or(0, |x| x as u64))
            .collect();
        let with_offset = f.len() >= 6;
        let ddir = f.get(2).copied().unwrap_or(0) as u32;
        raw.extend_from_slice(&f.first().copied().unwrap_or(0).to_le_bytes());
        raw.extend_from_slice(&f.get(1).copied().unwrap_or(0).to_le_bytes());
        let mut flags = if with_offset {
            LOG_OFFSET_SAMPLE_BIT
        } else {
            0
        };
        // The last column: the ioprio value in hex with log_prio, else 1 for real-time.
        let last = fields.last().copied().unwrap_or("0");
        let prio = match last.strip_prefix("0x") {
            Some(hex) => {
                flags |= LOG_PRIO_SAMPLE_BIT;
                u16::from_str_radix(hex, 16).unwrap_or(0)
            }
            None if last == "1" => crate::plan::prio::ioprio(crate::plan::prio::CLASS_RT, 0),
            None => 0,
        };
        raw.extend_from_slice(&(ddir | flags).to_le_bytes());
        raw.extend_from_slice(&prio.to_le_bytes());
        raw.extend_from_slice(&[0u8; 2]); // padding
        raw.extend_from_slice(&f.get(3).copied().unwrap_or(0).to_le_bytes());
        if with_offset {
            raw.extend_from_slice(&f[4].to_le_bytes());
        }
    }
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(&raw)
        .expect("compressing into memory cannot fail");
    z.finish().expect("compressing into memory cannot fail")
}

/// How many bytes at the start of `raw` are whole samples (their size, 32 or 40 bytes, from
/// the first one's offset flag).
pub fn whole_samples(raw: &[u8]) -> usize {
    sample_size(raw).map_or(0, |size| raw.len() / size * size)
}

/// The size of the samples `raw` starts with: 32 bytes, 40 with the offset flag; `None`
/// before a whole first sample.
fn sample_size(raw: &[u8]) -> Option<usize> {
    if raw.len() < SAMPLE_BYTES {
        return None;
    }
    let flags = u32::from_le_bytes(raw[16..20].try_into().expect("4 bytes"));
    Some(
        SAMPLE_BYTES
            + if flags & LOG_OFFSET_SAMPLE_BIT != 0 {
                8
            } else {
                0
            },
    )
}

/// fio's binary samples (whole ones, from a decompressed `.fz` chunk) as its log lines.
pub fn samples_text(raw: &[u8]) -> String {
    let word = |at: usize| u64::from_le_bytes(raw[at..at + 8].try_into().expect("8 bytes"));
    let Some(size) = sample_size(raw) else {
        return String::new();
    };
    let with_offset = size > SAMPLE_BYTES;
    let mut s = String::with_capacity(raw.len());
    for at in (0..raw.len() / size).map(|k| k * size) {
        let ddir = u32::from_le_bytes(raw[at + 16..at + 20].try_into().expect("4 bytes"));
        let prio = u16::from_le_bytes(raw[at + 20..at + 22].try_into().expect("2 bytes"));
        let (t, v, bs) = (word(at), word(at + 8) as i64, word(at + 24));
        let logged = ddir & LOG_PRIO_SAMPLE_BIT != 0;
        let ddir = ddir & !LOG_SAMPLE_BITS;
        let _ = write!(s, "{t}, {v}, {ddir}, {bs}, ");
        if with_offset {
            let _ = write!(s, "{}, ", word(at + 32));
        }
        prio_column(&mut s, prio, logged);
        s.push('\n');
    }
    s
}

/// A log line's last column, as fio writes it: with log_prio the I/O's ioprio value
/// (`0x2001`), else whether it was real-time class (1) or not (0).
fn prio_column(s: &mut String, ioprio: u16, logged: bool) {
    if logged {
        let _ = write!(s, "0x{ioprio:04x}");
    } else {
        let rt = crate::plan::prio::class_of(ioprio) == crate::plan::prio::CLASS_RT;
        s.push(if rt { '1' } else { '0' });
    }
}

/// fio's I/O log, version 3 (what fio 3.x writes and its `read_iolog` replays): the
/// version line; each file added and opened at 0; the job's lines (`T FILE OP OFFSET LEN`,
/// T in microseconds from the job's start); each file closed at `end_us`.
pub fn iolog(files: &[String], entries: &[crate::trace::iolog::Op], end_us: u64) -> String {
    let mut s = String::with_capacity(64 + entries.len() * 40);
    s.push_str("fio version 3 iolog\n");
    for f in files {
        let _ = writeln!(s, "0 {f} add");
    }
    for f in files {
        let _ = writeln!(s, "0 {f} open");
    }
    for e in entries {
        let f = &files[e.file as usize];
        let _ = writeln!(
            s,
            "{} {f} {} {} {}",
            e.t_us,
            e.action.word(),
            e.offset,
            e.len
        );
    }
    for f in files {
        let _ = writeln!(s, "{end_us} {f} close");
    }
    s
}

/// Every windowed log file of the run (the jobs with log_avg_msec above 0): (file name,
/// contents); files several jobs write (per_job_logs=0) once, their lines in job order.
pub fn render(report: &RunReport) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let jobs = report.groups.iter().flat_map(|g| &g.jobs);
    for (i, job) in jobs.enumerate() {
        let n = i + 1;
        let wanted = wanted(&job.options);
        if wanted.per_io {
            continue;
        }
        if let Some(b) = &wanted.bw {
            let text = lines(job, &wanted, true, |d, k| {
                d.series.bw_bytes_per_s[k] / 1024.0
            });
            out.push((wanted.file_name(b, "bw", n), text));
        }
        if let Some(b) = &wanted.iops {
            out.push((
                wanted.file_name(b, "iops", n),
                lines(job, &wanted, true, |d, k| d.series.iops[k]),
            ));
        }
        if let Some(b) = &wanted.lat {
            out.push((
                wanted.file_name(b, "lat", n),
                lines(job, &wanted, false, |d, k| d.series.lat_mean_ns[k]),
            ));
            // Synchronous engines time one span: fio logs it as clat and leaves slat empty.
            let queued = job
                .measurement
                .dirs()
                .iter()
                .any(|d| !d.series.clat_mean_ns.is_empty());
            let clat = if queued {
                lines(job, &wanted, false, |d, k| {
                    d.series.clat_mean_ns.get(k).copied().unwrap_or(0.0)
                })
            } else {
                lines(job, &wanted, false, |d, k| d.series.lat_mean_ns[k])
            };
            out.push((wanted.file_name(b, "clat", n), clat));
            let slat = if queued {
                lines(job, &wanted, false, |d, k| {
                    d.series.slat_mean_ns.get(k).copied().unwrap_or(0.0)
                })
            } else {
                String::new()
            };
            out.push((wanted.file_name(b, "slat", n), slat));
        }
    }
    joined(out)
}

/// Files named more than once (per_job_logs=0) as one, their parts in order.
fn joined(files: Vec<(String, String)>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for (name, text) in files {
        match out.iter_mut().find(|(n, _)| *n == name) {
            Some((_, t)) => t.push_str(&text),
            None => out.push((name, text)),
        }
    }
    out
}

/// One job's per-I/O logs: its number in the run (from 1), the logs it asked for, and the
/// I/Os it kept, in completion order.
pub struct JobSamples<'a> {
    pub n: usize,
    pub logs: &'a LogSpec,
    pub samples: &'a [IoSample],
}

/// Every per-I/O log file of the run (the jobs with log_avg_msec=0): (file name, contents).
pub fn per_io(jobs: &[JobSamples]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for j in jobs.iter().filter(|j| j.logs.per_io) {
        let l = j.logs;
        let line = |value: &dyn Fn(&IoSample) -> u64| {
            let mut s = String::new();
            for x in j.samples {
                let _ = write!(
                    s,
                    "{}, {}, {}, {}",
                    x.t_ns / 1_000_000,
                    value(x),
                    x.dir,
                    x.bs
                );
                if l.offset {
                    let _ = write!(s, ", {}", x.offset);
                }
                s.push_str(", ");
                prio_column(&mut s, x.prio, l.prio);
                s.push('\n');
            }
            s
        };
        if let Some(b) = &l.bw {
            // fio: the I/O's bytes over its completion latency, bytes per ms (≈ KiB/s).
            let bw = |x: &IoSample| {
                (x.bs as u64 * 1_000_000)
                    .checked_div(x.clat_ns)
                    .unwrap_or(0)
            };
            out.push((l.file_name(b, "bw", j.n), line(&bw)));
        }
        if let Some(b) = &l.iops {
            out.push((l.file_name(b, "iops", j.n), line(&|_| 1)));
        }
        if let Some(b) = &l.lat {
            out.push((l.file_name(b, "lat", j.n), line(&|x| x.lat_ns)));
            out.push((l.file_name(b, "clat", j.n), line(&|x| x.clat_ns)));
            // Engines that time one span have no submission latency: fio leaves slat empty.
            let queued = j.samples.iter().any(|x| x.slat_ns > 0);
            let slat = if queued {
                line(&|x| x.slat_ns)
            } else {
                String::new()
            };
            out.push((l.file_name(b, "slat", j.n), slat));
        }
    }
    joined(out)
}

/// fio's aggregate bandwidth logs' names (`--bandwidth-log`), per direction, written in the
/// working directory.
pub const AGGREGATE_LOGS: [&str; 3] = ["agg-read_bw.log", "agg-write_bw.log", "agg-trim_bw.log"];

/// A job's measured window on the run's clock (ns), and its directions' stats.
pub type JobWindow<'a> = (Option<(u64, u64)>, &'a [crate::stats::DirStats; 3]);

/// fio's aggregate bandwidth logs (`--bandwidth-log`): `agg-read_bw.log`, `agg-write_bw.log`
/// and `agg-trim_bw.log`, the whole run's bandwidth (KiB/s, every job summed) every 500 ms
/// (fio's bw_avg_time) from the first job's start to the last one's end, each line `msec,
/// KiB/s, direction, 0, 0` as fio writes them. `jobs`: each job's measured window on the
/// run's clock (ns) and its directions' series.
pub fn aggregate_bw(jobs: &[JobWindow]) -> Vec<(String, String)> {
    const WINDOW_MS: u64 = 500;
    let windows_ns = jobs.iter().filter_map(|(w, _)| *w);
    let zero_ns = windows_ns.clone().map(|(s, _)| s).min().unwrap_or(0);
    let end_ms = windows_ns
        .map(|(_, e)| (e - zero_ns) / 1_000_000)
        .max()
        .unwrap_or(0);
    let windows = end_ms.div_ceil(WINDOW_MS).max(1) as usize;
    let mut bytes = [
        vec![0u64; windows],
        vec![0u64; windows],
        vec![0u64; windows],
    ];
    for (window, dirs) in jobs {
        let Some((start_ns, _)) = window else {
            continue;
        };
        for (d, ds) in dirs.iter().enumerate() {
            let interval = ds.series.interval_ms;
            for (k, sample) in ds.series.samples.iter().enumerate() {
                // A sample counts in the window its start falls in.
                let at_ms = (start_ns - zero_ns) / 1_000_000 + k as u64 * interval;
                let w = ((at_ms / WINDOW_MS) as usize).min(windows - 1);
                bytes[d][w] += sample.bytes;
            }
        }
    }
    AGGREGATE_LOGS
        .iter()
        .zip(&bytes)
        .enumerate()
        .map(|(d, (name, per_window))| {
            let mut s = String::new();
            for (w, b) in per_window.iter().enumerate() {
                let kib_s = *b as f64 / 1024.0 / (WINDOW_MS as f64 / 1000.0);
                let _ = writeln!(s, "{}, {kib_s:.0}, {d}, 0, 0", (w as u64 + 1) * WINDOW_MS);
            }
            (name.to_string(), s)
        })
        .collect()
}

/// One line per window and direction that did I/O in it, in time order.
fn lines(
    job: &JobReport,
    spec: &LogSpec,
    full_only: bool,
    value: impl Fn(&DirReport, usize) -> f64,
) -> String {
    let m = &job.measurement;
    let dirs = [(0, &m.read), (1, &m.write), (2, &m.trim)];
    let count = |d: &DirReport| {
        if full_only {
            full_windows(&d.series, m.elapsed_ns)
        } else {
            d.series.iops.len()
        }
    };
    let windows = dirs.iter().map(|(_, d)| count(d)).max().unwrap_or(0);
    let mut s = String::new();
    for k in 0..windows {
        for (ddir, d) in dirs {
            if k >= count(d) || d.series.iops[k] == 0.0 {
                continue;
            }
            let interval = d.series.interval_ms;
            let end_ms = ((k as u64 + 1) * interval).min(m.elapsed_ns / 1_000_000);
            let offset = if spec.offset { ", 0" } else { "" };
            let _ = write!(s, "{end_ms}, {:.0}, {ddir}, 0{offset}, ", value(d, k));
            // A window has no one priority: fio writes 0.
            prio_column(&mut s, 0, spec.prio);
            s.push('\n');
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_are_fios() {
        let mut o = BTreeMap::new();
        o.insert(
            "write_bw_log".to_string(),
            "randread-iodepth-8-numjobs-1".to_string(),
        );
        o.insert("write_lat_log".to_string(), "x".to_string());
        let w = wanted(&o);
        assert_eq!(
            w.files(2),
            vec![
                "randread-iodepth-8-numjobs-1_bw.2.log",
                "x_lat.2.log",
                "x_clat.2.log",
                "x_slat.2.log"
            ]
        );
    }

    /// A `.fz` log prints back as the text it was made from, the priority column in both of
    /// fio's forms (log_prio's hex value, or the real-time flag) and with the offset column.
    #[test]
    fn compressed_samples_print_back_as_their_lines() {
        use std::io::Read;
        for text in [
            "0, 5120, 0, 4096, 0x6004\n1, 7000, 1, 65536, 0x0000\n",
            "3, 100, 0, 4096, 1\n4, 200, 1, 4096, 0\n",
            "5, 100, 2, 8192, 12288, 0x2001\n",
        ] {
            let z = encoded("x_lat.1.log.fz", text);
            let mut raw = Vec::new();
            flate2::read::ZlibDecoder::new(&z[..])
                .read_to_end(&mut raw)
                .unwrap();
            assert_eq!(whole_samples(&raw), raw.len());
            assert_eq!(samples_text(&raw), text);
        }
    }
}
