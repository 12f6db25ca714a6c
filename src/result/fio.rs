//! fio's rows of a RunReport: one `jobs[]` entry per job (or per group with
//! `group_reporting`), in fio's units — `bw` in KiB/s, `runtime` in ms, latencies in ns — with
//! fio's window statistics and latency tables. The fio JSON and CSV reporters print these rows
//! and `--repeat` spreads their figures. Pure arithmetic on the report; no I/O.

use std::collections::BTreeMap;

use serde::Serialize;
use serde::ser::SerializeMap;

use super::{DirReport, GroupReport, JobReport, LatReport, Measurement, RunReport, SeriesReport};

/// A JSON object whose keys keep the order fio prints them in.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ordered<T>(pub Vec<(String, T)>);

impl<T: Serialize> Serialize for Ordered<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl<T> Ordered<T> {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<T: Copy> Ordered<T> {
    pub fn get(&self, key: &str) -> Option<T> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct FioJob {
    pub jobname: String,
    pub groupid: usize,
    /// errno of the job's failure (1 where the failure had none), 0 when it succeeded.
    pub error: i32,
    /// Whole seconds the job measured, rounded up (fio's `elapsed`).
    pub elapsed: u64,
    #[serde(rename = "job options")]
    pub job_options: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "FioDir::folded")]
    pub read: FioDir,
    #[serde(skip_serializing_if = "FioDir::folded")]
    pub write: FioDir,
    #[serde(skip_serializing_if = "FioDir::folded")]
    pub trim: FioDir,
    /// `unified_rw_reporting=mixed|both`: reads, writes and trims as one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mixed: Option<FioDir>,
    pub sync: FioSync,
    /// Measured time in ms.
    pub job_runtime: u64,
    pub usr_cpu: f64,
    pub sys_cpu: f64,
    pub ctx: u64,
    pub majf: u64,
    pub minf: u64,
    /// Share of the measured time with 1, 2–3, 4–7, … I/Os in the kernel (time spent between
    /// I/Os left out, so the levels add up to 100 as fio's do).
    pub iodepth_level: Ordered<f64>,
    /// Share of submissions by how many I/Os each carried (0, 1–4, 5–8, …), fio's.
    #[serde(skip_serializing_if = "Ordered::is_empty")]
    pub iodepth_submit: Ordered<f64>,
    /// Share of reaps by how many completions each took, fio's.
    #[serde(skip_serializing_if = "Ordered::is_empty")]
    pub iodepth_complete: Ordered<f64>,
    /// Share of I/Os whose total latency fell in each range (percent).
    pub latency_ns: Ordered<f64>,
    pub latency_us: Ordered<f64>,
    pub latency_ms: Ordered<f64>,
    /// fio's steady state (`ss_dur`): the check, its window and whether it was attained.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steadystate: Option<crate::stats::steady::SteadyReport>,
    /// fio's latency target: `latency_depth` (the depth found), `latency_target` (ns),
    /// `latency_percentile`, `latency_window` (µs); only for a job that set one.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub latency: Option<FioLatencyTarget>,
    /// With continue_on_error (or ignore_error): fio's `total_err` and `first_error`.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub errors: Option<FioErrors>,
}

#[derive(Debug, Clone, Serialize)]
pub struct FioErrors {
    pub total_err: u64,
    pub first_error: i32,
}

#[derive(Debug, Clone, Serialize)]
pub struct FioLatencyTarget {
    pub latency_depth: u32,
    pub latency_target: u64,
    pub latency_percentile: f64,
    pub latency_window: u64,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct FioDir {
    /// Folded into `mixed` (`unified_rw_reporting=mixed`): not written.
    #[serde(skip)]
    pub folded: bool,
    pub io_bytes: u64,
    pub io_kbytes: u64,
    pub bw_bytes: u64,
    /// KiB/s.
    pub bw: u64,
    pub iops: f64,
    /// ms.
    pub runtime: u64,
    pub total_ios: u64,
    pub short_ios: u64,
    pub drop_ios: u64,
    pub slat_ns: FioLat,
    pub clat_ns: FioLat,
    pub lat_ns: FioLat,
    /// Bandwidth (KiB/s) over the job's full sampling windows (`log_avg_msec`, 500 ms by
    /// default); a last, partial window is left out, as fio does.
    pub bw_min: u64,
    pub bw_max: u64,
    /// This job's share of its group's bandwidth, in percent.
    pub bw_agg: f64,
    pub bw_mean: f64,
    pub bw_dev: f64,
    pub bw_samples: u64,
    pub iops_min: u64,
    pub iops_max: u64,
    pub iops_mean: f64,
    pub iops_stddev: f64,
    pub iops_samples: u64,
    /// Per I/O priority, where per-command priorities were in use and two or more
    /// priorities did I/O (fio prints it only then).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub prios: Vec<FioPrio>,
}

/// One priority's I/Os: fio's `prios` entry, with the latency fio keeps per priority under
/// its name (`clat_ns`, or `lat_ns` with lat_percentiles=1).
#[derive(Debug, Clone, Default, Serialize)]
pub struct FioPrio {
    pub prioclass: u16,
    pub prio: u16,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clat_ns: Option<FioLat>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lat_ns: Option<FioLat>,
}

impl FioPrio {
    pub fn latency(&self) -> &FioLat {
        self.lat_ns
            .as_ref()
            .or(self.clat_ns.as_ref())
            .expect("a priority entry has one latency")
    }
    pub fn latency_mut(&mut self) -> &mut FioLat {
        match self.lat_ns.as_mut() {
            Some(l) => l,
            None => self
                .clat_ns
                .as_mut()
                .expect("a priority entry has one latency"),
        }
    }
}

impl FioDir {
    fn folded(&self) -> bool {
        self.folded
    }
}

/// fio's switches for which latencies carry percentiles (and, in json+, bins):
/// `slat_percentiles` (default off), `clat_percentiles` (on), `lat_percentiles` (off); a
/// latency with no samples has none either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Percentiles {
    pub slat: bool,
    pub clat: bool,
    pub lat: bool,
}

impl Percentiles {
    pub fn of(options: &BTreeMap<String, String>) -> Percentiles {
        let flag = |k: &str, default: bool| option_flag(options, k, default);
        Percentiles {
            slat: flag("slat_percentiles", false),
            clat: flag("clat_percentiles", true),
            lat: flag("lat_percentiles", false),
        }
    }

    /// Drops the percentiles the switches leave out.
    fn apply(self, d: &mut FioDir) {
        for (on, l) in [
            (self.slat, &mut d.slat_ns),
            (self.clat, &mut d.clat_ns),
            (self.lat, &mut d.lat_ns),
        ] {
            if !on || l.n == 0 {
                l.percentile = None;
            }
        }
        // Per priority, percentiles come with either of clat's and lat's switches.
        for p in &mut d.prios {
            if !(self.clat || self.lat) {
                p.latency_mut().percentile = None;
            }
        }
    }
}

/// A boolean job option as the report keeps it (`options` as given), or `default`.
pub fn option_flag(options: &BTreeMap<String, String>, key: &str, default: bool) -> bool {
    options.get(key).map_or(default, |v| {
        crate::plan::value::parse_bool(v).unwrap_or(default)
    })
}

/// fio's `unified_rw_reporting`: `none` (0), `mixed` (1: one `mixed` block instead of read,
/// write and trim) or `both` (2: the three and `mixed`).
pub fn unified(options: &BTreeMap<String, String>) -> (bool, bool) {
    match options.get("unified_rw_reporting").map(|v| v.trim()) {
        Some("1" | "mixed") => (true, true),
        Some("2" | "both") => (true, false),
        _ => (false, false),
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct FioLat {
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    pub stddev: f64,
    #[serde(rename = "N")]
    pub n: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub percentile: Option<Ordered<u64>>,
    /// json+ only: latency in ns → I/Os, fio's histogram bins (see `report::fio_mode`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bins: Option<Ordered<u64>>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct FioSync {
    pub total_ios: u64,
    pub lat_ns: FioLat,
}

/// Upper bounds of fio's latency ranges, in the unit of each table.
const LAT_BOUNDS: [u64; 10] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000];

/// One of fio's rows: a job, or a whole group where the group asked for `group_reporting`.
#[derive(Debug, Clone, Copy)]
pub enum Row<'a> {
    Group(&'a GroupReport),
    Job(&'a GroupReport, &'a JobReport),
}

impl<'a> Row<'a> {
    /// What the row's figures are: the group's total, or the job's.
    pub fn measurement(self) -> &'a Measurement {
        match self {
            Row::Group(g) => &g.total,
            Row::Job(_, j) => &j.measurement,
        }
    }
}

/// fio's rows in fio's order, the one place that decides which jobs fold into their group.
pub fn rows(r: &RunReport) -> Vec<Row<'_>> {
    let mut out = Vec::new();
    for g in &r.groups {
        if g.group_reporting && !g.jobs.is_empty() {
            out.push(Row::Group(g));
        } else {
            out.extend(g.jobs.iter().map(|j| Row::Job(g, j)));
        }
    }
    out
}

/// One row per job, or per group where the group asked for `group_reporting`.
pub fn jobs(r: &RunReport) -> Vec<FioJob> {
    rows(r).into_iter().map(row_job).collect()
}

fn row_job(row: Row) -> FioJob {
    match row {
        Row::Job(g, j) => {
            let error = j.error.as_ref().map(|e| e.errno.unwrap_or(1));
            job(&j.name, g, j.options.clone(), error, &j.measurement)
        }
        Row::Group(g) => group_job(g),
    }
}

/// A group_reporting group as one row.
fn group_job(g: &GroupReport) -> FioJob {
    let first = &g.jobs[0];
    let mut options = first.options.clone();
    // One entry is a group fio already folded (read from fio's JSON): its options
    // say how many jobs it had.
    if g.jobs.len() > 1 {
        options.insert("numjobs".into(), g.jobs.len().to_string());
    }
    let error = g.jobs.iter().find_map(|j| j.error.as_ref());
    let mut fj = job(
        &first.name,
        g,
        options,
        error.map(|e| e.errno.unwrap_or(1)),
        &g.total,
    );
    // fio's group: job_runtime is the jobs' runtimes summed, and CPU is the jobs' CPU
    // time over that sum (a job's average share of a CPU), where iogauge's own
    // figure (groups[].total.cpu) is the share of the group's elapsed time.
    let runtime_ms: u64 = g
        .jobs
        .iter()
        .map(|j| j.measurement.elapsed_ns / 1_000_000)
        .sum();
    let pct = |s: f64| match runtime_ms {
        0 => 0.0,
        ms => 100.0 * s * 1000.0 / ms as f64,
    };
    fj.job_runtime = runtime_ms;
    fj.usr_cpu = pct(g.jobs.iter().map(|j| j.measurement.cpu.user_s).sum());
    fj.sys_cpu = pct(g.jobs.iter().map(|j| j.measurement.cpu.system_s).sum());
    fj
}

fn job(
    name: &str,
    g: &GroupReport,
    job_options: BTreeMap<String, String>,
    error: Option<i32>,
    m: &Measurement,
) -> FioJob {
    let runtime_ms = m.elapsed_ns / 1_000_000;
    let agg = |d: &DirReport, total: &DirReport| {
        if total.bw_bytes_per_s > 0.0 {
            100.0 * d.bw_bytes_per_s / total.bw_bytes_per_s
        } else {
            0.0
        }
    };
    let mut read = dir(&m.read, m.elapsed_ns);
    read.bw_agg = agg(&m.read, &g.total.read);
    if let Some(v) = m.verify.as_ref().filter(|v| !v.inline) {
        verify_reads(&mut read, v);
    }
    let mut write = dir(&m.write, m.elapsed_ns);
    write.bw_agg = agg(&m.write, &g.total.write);
    let mut trim = dir(&m.trim, m.elapsed_ns);
    trim.bw_agg = agg(&m.trim, &g.total.trim);
    let pct = Percentiles::of(&job_options);
    for d in [&mut read, &mut write, &mut trim] {
        pct.apply(d);
    }
    counted_past(m, [&mut read, &mut write, &mut trim]);
    let (with_mixed, folded) = unified(&job_options);
    let mixed = with_mixed.then(|| {
        let mut d = dir(&DirReport::sum(&m.dirs()), m.elapsed_ns);
        pct.apply(&mut d);
        d
    });
    for d in [&mut read, &mut write, &mut trim] {
        d.folded = folded;
    }
    let mut sync = m.sync.as_ref().map_or_else(FioSync::default, |s| FioSync {
        total_ios: s.count,
        lat_ns: lat(Some(s)),
    });
    // fio gives the flushes' percentiles with either switch.
    if !(pct.clat || pct.lat) {
        sync.lat_ns.percentile = None;
    }
    let (lat_ns, lat_us, lat_ms) = latency_tables(m);
    let errors = fio_errors(&job_options, m);
    // The first error gone past is the job's error when nothing stopped it.
    let error = error.or(errors.as_ref().map(|e| e.first_error).filter(|&e| e != 0));
    // fio echoes every option of the job as given, its name among them.
    let mut job_options = job_options;
    job_options
        .entry("name".into())
        .or_insert_with(|| name.to_string());
    FioJob {
        jobname: name.to_string(),
        groupid: g.id,
        error: error.unwrap_or(0),
        elapsed: m.elapsed_ns.div_ceil(1_000_000_000),
        job_options,
        read,
        write,
        trim,
        mixed,
        sync,
        job_runtime: runtime_ms,
        usr_cpu: m.cpu.usr_pct,
        sys_cpu: m.cpu.sys_pct,
        ctx: m.cpu.ctx_switches,
        majf: m.cpu.major_faults,
        minf: m.cpu.minor_faults,
        iodepth_level: iodepth_levels(m),
        iodepth_submit: iodepth_calls(&m.iodepth.submit_calls),
        iodepth_complete: iodepth_calls(&m.iodepth.complete_calls),
        latency_ns: lat_ns,
        latency_us: lat_us,
        latency_ms: lat_ms,
        steadystate: m.steadystate.clone(),
        latency: m.latency_target.map(|l| FioLatencyTarget {
            latency_depth: l.depth,
            latency_target: l.target_ns,
            latency_percentile: l.percentile,
            latency_window: l.window_us,
        }),
        errors,
    }
}

/// fio's total_ios counts the I/Os issued, the failed ones it went past among them.
fn counted_past(m: &Measurement, dirs: [&mut FioDir; 3]) {
    if let Some(c) = &m.errors_continued {
        for (d, n) in dirs.into_iter().zip(c.per_dir) {
            d.total_ios += n;
        }
    }
}

/// fio's total_err and first_error, written for a job with continue_on_error (or
/// ignore_error) set, even when nothing failed.
fn fio_errors(job_options: &BTreeMap<String, String>, m: &Measurement) -> Option<FioErrors> {
    let continues = ["continue_on_error", "ignore_error"].iter().any(|o| {
        job_options
            .get(*o)
            .is_some_and(|v| !matches!(v.as_str(), "" | "none" | "0"))
    });
    continues.then(|| FioErrors {
        total_err: m.errors_continued.as_ref().map_or(0, |c| c.total),
        first_error: m.errors_continued.as_ref().map_or(0, |c| c.first_errno),
    })
}

/// fio counts the reads that check written data (the verify phase after the writes, and
/// verify_backlog's reads while they go on) as the job's reads: in io_bytes, io_kbytes and
/// total_ios. A job whose workload read nothing has the check's time as its read runtime,
/// and its read bandwidth and IOPS over it, as fio reports a write job's verify. (A job that
/// read as well keeps its workload's read runtime and rates; its verify reads' latencies are
/// not in clat_ns, which iogauge keeps for the workload.)
fn verify_reads(read: &mut FioDir, v: &crate::result::VerifyReport) {
    let workload_read = read.total_ios > 0;
    read.io_bytes += v.bytes;
    read.io_kbytes = read.io_bytes / 1024;
    read.total_ios += v.ios;
    if !workload_read && v.elapsed_ns > 0 {
        let secs = v.elapsed_ns as f64 / 1e9;
        read.runtime = v.elapsed_ns / 1_000_000;
        read.bw_bytes = (v.bytes as f64 / secs) as u64;
        read.bw = (v.bytes as f64 / secs / 1024.0) as u64;
        read.iops = v.ios as f64 / secs;
    }
}

fn dir(d: &DirReport, elapsed_ns: u64) -> FioDir {
    // Synchronous engines time one span per I/O: fio reports it as clat (and lat) with no
    // submission latency, so tools that read clat_ns find it there too.
    let clat = d.clat_ns.as_ref().or(d.lat_ns.as_ref());
    let (bw, iops) = window_stats(&d.series, elapsed_ns);
    FioDir {
        folded: false,
        io_bytes: d.bytes,
        io_kbytes: d.bytes / 1024,
        bw_bytes: d.bw_bytes_per_s as u64,
        bw: (d.bw_bytes_per_s / 1024.0) as u64,
        iops: d.iops,
        runtime: if d.ios > 0 { elapsed_ns / 1_000_000 } else { 0 },
        total_ios: d.ios,
        short_ios: 0,
        drop_ios: d.dropped,
        slat_ns: lat(d.slat_ns.as_ref()),
        clat_ns: lat(clat),
        lat_ns: lat(d.lat_ns.as_ref()),
        bw_min: bw.min as u64,
        bw_max: bw.max as u64,
        bw_agg: 0.0,
        bw_mean: bw.mean,
        bw_dev: bw.dev,
        bw_samples: bw.n,
        iops_min: iops.min as u64,
        iops_max: iops.max as u64,
        iops_mean: iops.mean,
        iops_stddev: iops.dev,
        iops_samples: iops.n,
        prios: d
            .split_by_prio()
            .iter()
            .map(|p| {
                let l = Some(lat(Some(&p.latency)));
                let total = p.of == "lat";
                FioPrio {
                    prioclass: p.class,
                    prio: p.level,
                    clat_ns: if total { None } else { l.clone() },
                    lat_ns: if total { l } else { None },
                }
            })
            .collect(),
    }
}

fn lat(l: Option<&LatReport>) -> FioLat {
    let Some(l) = l else {
        return FioLat::default();
    };
    FioLat {
        min: l.min,
        max: l.max,
        mean: l.mean,
        stddev: l.stddev,
        n: l.count,
        percentile: Some({
            let mut v: Vec<(String, u64)> =
                l.percentiles.iter().map(|(k, &v)| (k.clone(), v)).collect();
            v.sort_by(|a, b| {
                let f = |s: &str| s.parse::<f64>().unwrap_or(0.0);
                f(&a.0).total_cmp(&f(&b.0))
            });
            Ordered(v)
        }),
        bins: None,
    }
}

/// min, max, mean and sample standard deviation of per-window values.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct WindowStats {
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    pub dev: f64,
    pub n: u64,
}

fn stats_of(values: impl Iterator<Item = f64>) -> WindowStats {
    let v: Vec<f64> = values.collect();
    if v.is_empty() {
        return WindowStats::default();
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let dev = if v.len() > 1 {
        (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
    } else {
        0.0
    };
    WindowStats {
        min: v.iter().copied().fold(f64::INFINITY, f64::min),
        max: v.iter().copied().fold(0.0, f64::max),
        mean,
        dev,
        n: v.len() as u64,
    }
}

/// Bandwidth (KiB/s) and IOPS over the full windows of a series.
pub fn window_stats(s: &SeriesReport, elapsed_ns: u64) -> (WindowStats, WindowStats) {
    let full = full_windows(s, elapsed_ns);
    (
        stats_of(s.bw_bytes_per_s[..full].iter().map(|b| b / 1024.0)),
        stats_of(s.iops[..full].iter().copied()),
    )
}

/// How many of the series' samples cover a whole interval.
pub fn full_windows(s: &SeriesReport, elapsed_ns: u64) -> usize {
    if s.interval_ms == 0 {
        return 0;
    }
    let whole = (elapsed_ns / 1_000_000 / s.interval_ms) as usize;
    whole.min(s.bw_bytes_per_s.len())
}

/// fio's iodepth_level: the share of I/Os by how many were in flight once handed to the
/// kernel. A report without those counts (read from fio's JSON) keeps the levels it has.
fn iodepth_levels(m: &Measurement) -> Ordered<f64> {
    let keys = ["1", "2", "4", "8", "16", "32", ">=64"];
    if !m.iodepth.at_submit.is_empty() {
        let total: u64 = m.iodepth.at_submit.iter().sum();
        return distribution(&keys, &m.iodepth.at_submit, total);
    }
    let busy: f64 = m
        .iodepth
        .pct_time
        .iter()
        .filter(|(k, _)| k.as_str() != "0")
        .map(|(_, v)| v)
        .sum();
    Ordered(
        keys.iter()
            .map(|&k| {
                let v = m.iodepth.pct_time.get(k).copied().unwrap_or(0.0);
                let pct = if busy > 0.0 { 100.0 * v / busy } else { 0.0 };
                (k.to_string(), pct)
            })
            .collect(),
    )
}

/// fio's iodepth_submit and iodepth_complete: the share of submissions (reaps) by how many
/// I/Os each carried. Empty where not measured.
fn iodepth_calls(calls: &[u64]) -> Ordered<f64> {
    let keys = ["0", "4", "8", "16", "32", "64", ">=64"];
    if calls.is_empty() {
        return Ordered::default();
    }
    distribution(&keys, calls, calls.iter().sum())
}

/// fio's stat_calc_dist: each count as a percentage of `total`, a count too small to show
/// as 0.1%.
fn distribution(keys: &[&str], counts: &[u64], total: u64) -> Ordered<f64> {
    Ordered(
        keys.iter()
            .zip(counts)
            .map(|(k, &c)| {
                let pct = match total {
                    0 => 0.0,
                    t => (100.0 * c as f64 / t as f64).max(if c > 0 { 0.1 } else { 0.0 }),
                };
                (k.to_string(), pct)
            })
            .collect(),
    )
}

/// fio's latency_ns / latency_us / latency_ms tables from the total-latency histograms of
/// both directions.
fn latency_tables(m: &Measurement) -> (Ordered<f64>, Ordered<f64>, Ordered<f64>) {
    let lats: Vec<&LatReport> = [&m.read.lat_ns, &m.write.lat_ns]
        .into_iter()
        .flatten()
        .collect();
    let total: u64 = lats.iter().map(|l| l.count).sum();
    let pct = |lo: u64, hi: u64| {
        if total == 0 {
            return 0.0;
        }
        let n: u64 = lats.iter().map(|l| l.count_between(lo, hi)).sum();
        100.0 * n as f64 / total as f64
    };
    let table = |scale: u64, lowest: u64| {
        let mut lo = lowest;
        Ordered(
            LAT_BOUNDS
                .iter()
                .map(|&b| {
                    let hi = b * scale;
                    let v = pct(lo, hi);
                    lo = hi;
                    (b.to_string(), v)
                })
                .collect(),
        )
    };
    let ns = table(1, 0);
    let us = table(1_000, 1_000);
    let mut ms = table(1_000_000, 1_000_000);
    ms.0.push(("2000".into(), pct(1_000_000_000, 2_000_000_000)));
    ms.0.push((">=2000".into(), pct(2_000_000_000, u64::MAX)));
    (ns, us, ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_stats_leave_out_the_partial_window() {
        let s = SeriesReport {
            interval_ms: 500,
            bw_bytes_per_s: vec![1024.0 * 100.0, 1024.0 * 300.0, 1.0],
            iops: vec![10.0, 30.0, 1.0],
            lat_mean_ns: vec![0.0; 3],
            slat_mean_ns: vec![],
            clat_mean_ns: vec![],
        };
        let (bw, iops) = window_stats(&s, 1_200_000_000);
        assert_eq!((bw.min, bw.max, bw.mean, bw.n), (100.0, 300.0, 200.0, 2));
        assert!((bw.dev - 141.421_356).abs() < 1e-3, "sample stddev");
        assert_eq!((iops.min, iops.max), (10.0, 30.0));
        assert_eq!(window_stats(&s, 400_000_000).0.n, 0);
    }
}
