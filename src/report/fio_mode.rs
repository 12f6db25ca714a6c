//! fio mode's outputs (`iogauge fio`, or iogauge run as `fio`): fio's formats with fio's
//! meaning. `json` and `json+` are fio's document (`fio version`, `jobs[]`, `disk_util[]`…)
//! with iogauge's whole report under one key of its own, `"iogauge"`, so nothing of iogauge's
//! sits among fio's keys; `json+` adds fio's latency histogram bins where iogauge's histogram
//! is of the same span; `normal` is fio's human-readable report, then iogauge's section
//! (provenance, warnings, errors) after a rule; `terse` is fio's semicolon-separated line per
//! job (versions 2, 3 and 4). Pure: a report in, text out.

use std::fmt::Write as _;

use serde::Serialize;

use super::fio::{self, FioDoc};
use crate::result::fio::{FioDir, FioJob, FioLat};
use crate::result::{DirReport, Measurement};
use crate::studies::Report;

/// One of fio's `--output-format` words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FioFormat {
    Normal,
    Terse,
    Json,
    JsonPlus,
}

/// An `--output-format` word fio mode does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--output-format={list}: unknown format {word}; fio's are normal, terse, json and json+")]
pub struct UnknownFioFormat {
    pub word: String,
    pub list: String,
}

impl FioFormat {
    /// fio's comma list (`json,normal`); each format once, in the order given. fio prints
    /// json+ in place of json when both are asked.
    pub fn parse_list(s: &str) -> Result<Vec<FioFormat>, UnknownFioFormat> {
        let mut v = Vec::new();
        for word in s.split(',').map(str::trim) {
            let f = match word {
                "normal" => FioFormat::Normal,
                "terse" => FioFormat::Terse,
                "json" => FioFormat::Json,
                "json+" => FioFormat::JsonPlus,
                _ => {
                    return Err(UnknownFioFormat {
                        word: word.to_string(),
                        list: s.to_string(),
                    });
                }
            };
            if !v.contains(&f) {
                v.push(f);
            }
        }
        if v.contains(&FioFormat::JsonPlus) {
            v.retain(|f| *f != FioFormat::Json);
        }
        Ok(v)
    }
}

/// The report in each format asked for, one after another, as fio writes them to one file
/// or stdout: terse first, then normal, then json (fio's order).
pub fn render(formats: &[FioFormat], terse_version: u32, report: &Report) -> String {
    let mut out = String::new();
    let order = [
        FioFormat::Terse,
        FioFormat::Normal,
        FioFormat::Json,
        FioFormat::JsonPlus,
    ];
    for f in order.iter().filter(|f| formats.contains(f)) {
        out += &match f {
            FioFormat::Terse => terse(report, terse_version),
            FioFormat::Normal => normal(report),
            FioFormat::Json => json(report, false),
            FioFormat::JsonPlus => json(report, true),
        };
    }
    out
}

#[derive(Serialize)]
struct Document<'a> {
    #[serde(flatten)]
    fio: FioDoc,
    /// Everything iogauge measured and noticed, under its own name.
    iogauge: &'a Report,
}

/// fio's JSON (with `plus`, json+), then iogauge's report under `"iogauge"`.
pub fn json(report: &Report, plus: bool) -> String {
    let mut doc = fio::doc(report);
    if plus {
        let measured = crate::result::fio::rows(report)
            .into_iter()
            .map(|r| r.measurement());
        for (row, m) in doc.jobs.iter_mut().zip(measured) {
            let j = &mut row.job;
            add_bins(&mut j.read, &m.read);
            add_bins(&mut j.write, &m.write);
            add_bins(&mut j.trim, &m.trim);
            if let Some(mixed) = j.mixed.as_mut() {
                add_bins(mixed, &crate::result::DirReport::sum(&m.dirs()));
            }
            if let Some(s) = m.sync.as_ref() {
                set_bins(&mut j.sync.lat_ns, s);
            }
        }
    }
    let mut s = serde_json::to_string_pretty(&Document {
        fio: doc,
        iogauge: report,
    })
    .expect("the report serialises");
    s.push('\n');
    s
}

/// json+'s `bins` (latency in ns → I/Os, each bin named by its middle value) beside each
/// latency that carries percentiles, as fio gives them: from that latency's own histogram
/// (an engine that times one span per I/O reports it as clat and lat alike).
fn add_bins(row: &mut FioDir, d: &DirReport) {
    let clat = d.clat_ns.as_ref().or(d.lat_ns.as_ref());
    for (fl, l) in [
        (&mut row.slat_ns, d.slat_ns.as_ref()),
        (&mut row.clat_ns, clat),
        (&mut row.lat_ns, d.lat_ns.as_ref()),
    ] {
        if let Some(l) = l {
            set_bins(fl, l);
        }
    }
    for (fp, p) in row.prios.iter_mut().zip(&d.prios) {
        set_bins(fp.latency_mut(), &p.latency);
    }
}

fn set_bins(fl: &mut crate::result::fio::FioLat, l: &crate::result::LatReport) {
    if fl.percentile.is_none() || l.histogram_ns.is_empty() {
        return;
    }
    let bins: Vec<(String, u64)> = l
        .histogram_ns
        .iter()
        .map(|[lo, hi, n]| ((lo + (hi - lo) / 2).to_string(), *n))
        .collect();
    fl.bins = Some(crate::result::fio::Ordered(bins));
}

/// A value in fio's compact style: at most four significant figures and a unit prefix
/// (`1012k`, `3953`, `12.3M`); `base` 1024 for bytes in KiB/MiB (with `i`), 1000 otherwise.
fn compact(v: f64, base: f64, binary: bool) -> String {
    let units = ["", "k", "M", "G", "T", "P"];
    let mut v = v;
    let mut u = 0;
    while v >= 10000.0 && u + 1 < units.len() {
        v /= base;
        u += 1;
    }
    let unit = match (u, binary) {
        (0, _) => String::new(),
        (_, true) => format!("{}i", units[u].to_uppercase()),
        (_, false) => units[u].to_string(),
    };
    if v.fract() == 0.0 || v >= 100.0 {
        format!("{v:.0}{unit}")
    } else if v >= 10.0 {
        format!("{v:.1}{unit}")
    } else {
        format!("{v:.2}{unit}")
    }
}

/// Bytes per second as fio prints bandwidth: `BW=3953MiB/s (4145MB/s)`.
fn bandwidth(bytes_per_s: f64) -> String {
    let (mib, mb) = (bytes_per_s / 1048576.0, bytes_per_s / 1e6);
    if mib >= 1.0 {
        format!(
            "{}MiB/s ({}MB/s)",
            compact(mib, 1024.0, false),
            compact(mb, 1000.0, false)
        )
    } else {
        format!(
            "{}KiB/s ({}kB/s)",
            compact(bytes_per_s / 1024.0, 1024.0, false),
            compact(bytes_per_s / 1000.0, 1000.0, false)
        )
    }
}

/// An amount of bytes as fio prints it: `1024MiB (1074MB)`.
fn amount(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= 1048576.0 {
        format!(
            "{}MiB ({}MB)",
            compact(b / 1048576.0, 1024.0, false),
            compact(b / 1e6, 1000.0, false)
        )
    } else {
        format!(
            "{}KiB ({}kB)",
            compact(b / 1024.0, 1024.0, false),
            compact(b / 1000.0, 1000.0, false)
        )
    }
}

/// fio's normal report: per job (or group_reporting group) its directions, CPU and depths;
/// per group its run status; the disks; then iogauge's section.
pub fn normal(report: &Report) -> String {
    let doc = fio::doc(report);
    let mut o = String::new();
    for row in &doc.jobs {
        job_block(
            &mut o,
            &row.job,
            &crate::units::ctime_utc(report.started_unix_s),
        );
    }
    for g in &report.groups {
        group_status(&mut o, g);
    }
    if !doc.disk_util.is_empty() {
        o += "\nDisk stats (read/write):\n";
        for d in &doc.disk_util {
            let _ = writeln!(
                o,
                "  {}: ios={}/{}, merge={}/{}, ticks={}/{}, in_queue={}, util={:.2}%",
                d.name,
                d.read_ios,
                d.write_ios,
                d.read_merges,
                d.write_merges,
                d.read_ticks,
                d.write_ticks,
                d.in_queue,
                d.util
            );
        }
    }
    o + &super::extras::extras(report, "fio")
}

fn job_block(o: &mut String, j: &FioJob, when: &str) {
    let _ = writeln!(
        o,
        "{}: (groupid={}, jobs=1): err={:2}: pid={}: {when}",
        j.jobname,
        j.groupid,
        j.error,
        std::process::id()
    );
    let shown = [("read", &j.read), ("write", &j.write), ("trim", &j.trim)]
        .into_iter()
        .filter(|(_, d)| !d.folded)
        .chain(j.mixed.iter().map(|d| ("mixed", d)));
    for (name, d) in shown {
        if d.total_ios == 0 {
            continue;
        }
        let _ = writeln!(
            o,
            "  {name}: IOPS={}, BW={}({}/{}msec)",
            compact(d.iops, 1000.0, false),
            bandwidth(d.bw_bytes as f64),
            amount(d.io_bytes).split(' ').next().unwrap_or(""),
            d.runtime
        );
        for (what, l) in [
            ("slat", &d.slat_ns),
            ("clat", &d.clat_ns),
            (" lat", &d.lat_ns),
        ] {
            if l.n > 0 {
                let _ = writeln!(
                    o,
                    "    {what} (nsec): min={}, max={}, avg={:.2}, stdev={:.2}",
                    l.min, l.max, l.mean, l.stddev
                );
            }
        }
        // Per priority, under the name of the latency fio keeps per priority.
        let prio_name = |p: &crate::result::fio::FioPrio| {
            let kind = if p.lat_ns.is_some() { "lat" } else { "clat" };
            format!("{kind} prio {}/{}", p.prioclass, p.prio)
        };
        for p in &d.prios {
            let l = p.latency();
            let _ = writeln!(
                o,
                "    {} (nsec): min={}, max={}, avg={:.2}, stdev={:.2}",
                prio_name(p),
                l.min,
                l.max,
                l.mean,
                l.stddev
            );
        }
        for (what, l) in [
            ("slat", &d.slat_ns),
            ("clat", &d.clat_ns),
            (" lat", &d.lat_ns),
        ] {
            percentiles(o, what, l);
        }
        // Shares of the latency the priorities split (fio's "(50.00% of IOs)").
        let all: u64 = d.prios.iter().map(|p| p.latency().n).sum();
        for p in &d.prios {
            let l = p.latency();
            let share = 100.0 * l.n as f64 / all.max(1) as f64;
            percentiles(o, &format!("{} ({share:.2}% of IOs)", prio_name(p)), l);
        }
        if d.bw_samples > 0 {
            let _ = writeln!(
                o,
                "   bw (  KiB/s): min={}, max={}, per={:.2}%, avg={:.2}, stdev={:.2}, samples={}",
                d.bw_min, d.bw_max, d.bw_agg, d.bw_mean, d.bw_dev, d.bw_samples
            );
            let _ = writeln!(
                o,
                "   iops        : min={}, max={}, avg={:.2}, stdev={:.2}, samples={}",
                d.iops_min, d.iops_max, d.iops_mean, d.iops_stddev, d.iops_samples
            );
        }
    }
    let _ = writeln!(
        o,
        "  cpu          : usr={:.2}%, sys={:.2}%, ctx={}, majf={}, minf={}",
        j.usr_cpu, j.sys_cpu, j.ctx, j.majf, j.minf
    );
    depth_lines(o, j);
}

/// fio's depth distributions and the I/Os issued.
fn depth_lines(o: &mut String, j: &FioJob) {
    let shares = |d: &crate::result::fio::Ordered<f64>| {
        let cells: Vec<String> = d.0.iter().map(|(k, v)| format!("{k}={v:.1}%")).collect();
        cells.join(", ")
    };
    let _ = writeln!(o, "  IO depths    : {}", shares(&j.iodepth_level));
    for (what, d) in [
        ("submit", &j.iodepth_submit),
        ("complete", &j.iodepth_complete),
    ] {
        if !d.is_empty() {
            let _ = writeln!(o, "     {what:<10}: {}", shares(d));
        }
    }
    let _ = writeln!(
        o,
        "     issued rwts: total={},{},{},0 short=0,0,0,0 dropped={},{},{},0\n",
        j.read.total_ios,
        j.write.total_ios,
        j.trim.total_ios,
        j.read.drop_ios,
        j.write.drop_ios,
        j.trim.drop_ios
    );
}

/// fio's percentile table, four to a line.
fn percentiles(o: &mut String, what: &str, l: &FioLat) {
    let Some(p) = l.percentile.as_ref().filter(|p| !p.0.is_empty() && l.n > 0) else {
        return;
    };
    let _ = writeln!(o, "    {what} percentiles (nsec):");
    for chunk in p.0.chunks(4) {
        let cells: Vec<String> = chunk
            .iter()
            .map(|(k, v)| {
                let pct = k.parse::<f64>().unwrap_or(0.0);
                format!("{pct:5.2}th=[{v:>6}]")
            })
            .collect();
        let _ = writeln!(o, "     | {}", cells.join(", "));
    }
}

/// fio's "Run status group N (all jobs)" lines: per direction the group's bandwidth, the
/// range over its jobs, the bytes, and the range of their runtimes.
fn group_status(o: &mut String, g: &crate::result::GroupReport) {
    let _ = writeln!(o, "Run status group {} (all jobs):", g.id);
    for (upper, pick) in [
        (
            "READ",
            (|m: &Measurement| &m.read) as fn(&Measurement) -> &DirReport,
        ),
        ("WRITE", |m: &Measurement| &m.write),
    ] {
        let total = pick(&g.total);
        if total.ios == 0 {
            continue;
        }
        let rates: Vec<f64> = g
            .jobs
            .iter()
            .map(|j| pick(&j.measurement).bw_bytes_per_s)
            .collect();
        let runs: Vec<u64> = g
            .jobs
            .iter()
            .map(|j| j.measurement.elapsed_ns / 1_000_000)
            .collect();
        let lo = rates.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = rates.iter().copied().fold(0.0, f64::max);
        let _ = writeln!(
            o,
            "  {upper:>5}: bw={}, {}-{}, io={}, run={}-{}msec",
            bandwidth(total.bw_bytes_per_s),
            bandwidth(lo).split(' ').next().unwrap_or(""),
            bandwidth(hi).split(' ').next().unwrap_or(""),
            amount(total.bytes),
            runs.iter().min().copied().unwrap_or(0),
            runs.iter().max().copied().unwrap_or(0)
        );
    }
}

/// fio's terse line per row: version 2, 3 (the default) or 4 (with trim), fields in fio's
/// order; latencies in µs, bandwidth in KiB/s.
pub fn terse(report: &Report, version: u32) -> String {
    let doc = fio::doc(report);
    let mut o = String::new();
    for row in &doc.jobs {
        let j = &row.job;
        if version == 2 {
            let _ = write!(o, "2;{};{};{}", j.jobname, j.groupid, j.error);
        } else {
            let _ = write!(
                o,
                "{version};fio-3.33;{};{};{}",
                j.jobname, j.groupid, j.error
            );
        }
        // unified_rw_reporting, as fio: mixed in the read's place, or after the three.
        match &j.mixed {
            Some(m) if j.read.folded => terse_dir(&mut o, m),
            mixed => {
                terse_dir(&mut o, &j.read);
                terse_dir(&mut o, &j.write);
                if version == 2 || version == 4 {
                    terse_dir(&mut o, &j.trim);
                }
                if let Some(m) = mixed {
                    terse_dir(&mut o, m);
                }
            }
        }
        let _ = write!(
            o,
            ";{:.6}%;{:.6}%;{};{};{}",
            j.usr_cpu, j.sys_cpu, j.ctx, j.majf, j.minf
        );
        for (_, v) in &j.iodepth_level.0 {
            let _ = write!(o, ";{v:3.1}%");
        }
        for (_, v) in &j.latency_us.0 {
            let _ = write!(o, ";{v:3.2}%");
        }
        // fio's twelve millisecond levels: 2 … 2000 and >= 2000.
        let ms: Vec<f64> = j.latency_ms.0.iter().map(|(_, v)| *v).collect();
        for i in 0..12 {
            let _ = write!(o, ";{:3.2}%", ms.get(i).copied().unwrap_or(0.0));
        }
        if version >= 3 {
            for d in &doc.disk_util {
                let _ = write!(
                    o,
                    ";{};{};{};{};{};{};{};{};{:3.2}%",
                    d.name,
                    d.read_ios,
                    d.write_ios,
                    d.read_merges,
                    d.write_merges,
                    d.read_ticks,
                    d.write_ticks,
                    d.in_queue,
                    d.util
                );
            }
        }
        o.push('\n');
    }
    o
}

/// One direction's terse fields: KiB, KiB/s, IOPS, runtime; slat, clat (min, max, mean,
/// stdev in µs); twenty clat percentiles; lat; bandwidth's min, max, share, mean, stdev.
fn terse_dir(o: &mut String, d: &FioDir) {
    let _ = write!(
        o,
        ";{};{};{};{}",
        d.io_kbytes, d.bw, d.iops as u64, d.runtime
    );
    let us = |o: &mut String, l: &FioLat| {
        let _ = write!(
            o,
            ";{};{};{:.6};{:.6}",
            l.min / 1000,
            l.max / 1000,
            l.mean / 1000.0,
            l.stddev / 1000.0
        );
    };
    us(o, &d.slat_ns);
    us(o, &d.clat_ns);
    // fio's terse line holds one table: total latency's with lat_percentiles, else clat's.
    let pct: Vec<(String, u64)> = [&d.lat_ns, &d.clat_ns]
        .into_iter()
        .find_map(|l| l.percentile.as_ref().filter(|_| l.n > 0))
        .map(|p| p.0.clone())
        .unwrap_or_default();
    for i in 0..20 {
        match pct.get(i) {
            Some((k, v)) => {
                let _ = write!(o, ";{:.6}%={}", k.parse::<f64>().unwrap_or(0.0), v / 1000);
            }
            None => o.push_str(";0%=0"),
        }
    }
    us(o, &d.lat_ns);
    let _ = write!(
        o,
        ";{};{};{:.6}%;{:.6};{:.6}",
        d.bw_min, d.bw_max, d.bw_agg, d.bw_mean, d.bw_dev
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_fios_words_and_json_plus_replaces_json() {
        assert_eq!(
            FioFormat::parse_list("json,normal,json").unwrap(),
            [FioFormat::Json, FioFormat::Normal]
        );
        assert_eq!(
            FioFormat::parse_list("json,json+").unwrap(),
            [FioFormat::JsonPlus]
        );
        let e = FioFormat::parse_list("json,csv").unwrap_err();
        assert_eq!(
            e.to_string(),
            "--output-format=json,csv: unknown format csv; fio's are normal, terse, json and json+"
        );
    }

    #[test]
    fn compact_values_keep_four_figures() {
        assert_eq!(compact(1012345.0, 1000.0, false), "1012k");
        assert_eq!(compact(3953.0, 1024.0, false), "3953");
        assert_eq!(compact(12.34, 1000.0, false), "12.3");
        assert_eq!(compact(1.5, 1000.0, false), "1.50");
    }
}
