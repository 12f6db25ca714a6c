//! fio's own JSON read back as a RunReport, so `iogauge report fio.json` draws a fio run with
//! the same page, text and CSV as an iogauge run: the inverse of `fio.rs` where fio's JSON
//! carries the facts. What it does not carry stays empty and the report says so in its
//! warnings: time series (fio keeps them in separate log files), the host and the devices'
//! provenance, and total-latency percentiles (fio prints them only with `lat_percentiles=1`;
//! completion-latency percentiles are there by default). `--output-format=json+` adds fio's
//! latency histograms (`bins`), which become the report's histograms. Pure: a function of the
//! parsed document.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::host::Host;
use crate::result::{
    CpuReport, DepthReport, DeviceIo, DirReport, EngineReport, GroupReport, JobReport, LatReport,
    Measurement, RunReport, SCHEMA_VERSION, SeriesReport, Tool,
};
use crate::stats::JobError;

/// A document fio wrote: `fio version` and `jobs[]`, without iogauge's `schema` key (iogauge's
/// JSON carries fio's keys too).
pub fn is_fio(doc: &serde_json::Value) -> bool {
    doc.get("schema").is_none() && doc.get("fio version").is_some() && doc.get("jobs").is_some()
}

#[derive(Deserialize)]
struct Doc {
    #[serde(rename = "fio version")]
    version: String,
    #[serde(default)]
    timestamp: u64,
    #[serde(default)]
    timestamp_ms: u64,
    #[serde(rename = "global options", default)]
    global: BTreeMap<String, String>,
    jobs: Vec<Job>,
    #[serde(default)]
    disk_util: Vec<Disk>,
}

#[derive(Deserialize)]
struct Job {
    jobname: String,
    #[serde(default)]
    groupid: usize,
    #[serde(default)]
    error: i32,
    #[serde(rename = "job options", default)]
    options: BTreeMap<String, String>,
    read: Dir,
    write: Dir,
    #[serde(default)]
    trim: Option<Dir>,
    #[serde(default)]
    sync: Option<Sync>,
    #[serde(default)]
    job_runtime: u64,
    #[serde(default)]
    usr_cpu: f64,
    #[serde(default)]
    sys_cpu: f64,
    #[serde(default)]
    ctx: u64,
    #[serde(default)]
    majf: u64,
    #[serde(default)]
    minf: u64,
    #[serde(default)]
    iodepth_level: BTreeMap<String, f64>,
    /// fio's steady-state block, kept as fio gave it (a malformed one is left out).
    #[serde(default, deserialize_with = "lenient")]
    steadystate: Option<crate::stats::steady::SteadyReport>,
    /// fio's latency target: the depth found (fio writes it for every job; 0 or absent: none).
    #[serde(default)]
    latency_depth: u32,
    #[serde(default)]
    latency_target: u64,
    #[serde(default)]
    latency_percentile: f64,
    #[serde(default)]
    latency_window: u64,
    /// With continue_on_error: the errors gone past and the first one's errno.
    #[serde(default)]
    total_err: u64,
    #[serde(default)]
    first_error: i32,
}

/// An optional block read if it parses, else left out.
fn lenient<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    let v = serde_json::Value::deserialize(d)?;
    Ok(serde_json::from_value(v).ok())
}

#[derive(Deserialize, Default)]
struct Dir {
    #[serde(default)]
    io_bytes: u64,
    #[serde(default)]
    bw_bytes: f64,
    #[serde(default)]
    iops: f64,
    /// Milliseconds.
    #[serde(default)]
    runtime: u64,
    #[serde(default)]
    total_ios: u64,
    /// I/Os the peer sent that never arrived (fio's net engine over UDP).
    #[serde(default)]
    drop_ios: u64,
    #[serde(default)]
    slat_ns: Option<Lat>,
    #[serde(default)]
    clat_ns: Option<Lat>,
    #[serde(default)]
    lat_ns: Option<Lat>,
    /// Per priority, where fio had per-command priorities (3.30 and later).
    #[serde(default)]
    prios: Vec<Prio>,
}

#[derive(Deserialize)]
struct Prio {
    #[serde(default)]
    prioclass: u16,
    #[serde(default)]
    prio: u16,
    #[serde(default)]
    clat_ns: Option<Lat>,
    #[serde(default)]
    lat_ns: Option<Lat>,
}

#[derive(Deserialize)]
struct Lat {
    #[serde(default)]
    min: u64,
    #[serde(default)]
    max: u64,
    #[serde(default)]
    mean: f64,
    #[serde(default)]
    stddev: f64,
    #[serde(rename = "N", default)]
    n: u64,
    #[serde(default)]
    percentile: BTreeMap<String, u64>,
    /// json+: fio's histogram, bucket value (ns) → I/Os.
    #[serde(default)]
    bins: BTreeMap<String, u64>,
}

#[derive(Deserialize)]
struct Sync {
    #[serde(default)]
    lat_ns: Option<Lat>,
}

#[derive(Deserialize)]
struct Disk {
    name: String,
    #[serde(default)]
    read_ios: u64,
    #[serde(default)]
    write_ios: u64,
    #[serde(default)]
    read_merges: u64,
    #[serde(default)]
    write_merges: u64,
    #[serde(default)]
    read_ticks: u64,
    #[serde(default)]
    write_ticks: u64,
    #[serde(default)]
    in_queue: u64,
    #[serde(default)]
    util: f64,
}

/// Why a JSON document cannot be read as fio's.
#[derive(Debug, thiserror::Error)]
pub enum FioJsonError {
    #[error("not fio's JSON as fio 3 writes it: {0}")]
    Shape(serde_json::Error),
    #[error("fio's JSON has no jobs")]
    NoJobs,
}

/// The report of the fio run `doc` describes; the error says what is missing or malformed.
pub fn run_report(doc: &serde_json::Value) -> Result<RunReport, FioJsonError> {
    let d = Doc::deserialize(doc).map_err(FioJsonError::Shape)?;
    if d.jobs.is_empty() {
        return Err(FioJsonError::NoJobs);
    }
    let mut warnings = vec![format!(
        "read from {}'s JSON: it has no time series (fio writes them to log files), no host or \
         device facts, and total-latency percentiles only with lat_percentiles=1 (completion \
         latency's are shown instead){}",
        d.version,
        if d.jobs
            .iter()
            .any(|j| [&j.read, &j.write].iter().any(|x| has_bins(x)))
        {
            ""
        } else {
            "; no latency histogram without --output-format=json+"
        }
    )];
    let mut errors = Vec::new();
    let mut groups: Vec<GroupReport> = Vec::new();
    for j in &d.jobs {
        add_job(&d, j, &mut groups, &mut errors);
    }
    for g in &mut groups {
        let parts: Vec<&Measurement> = g.jobs.iter().map(|j| &j.measurement).collect();
        g.total = Measurement::sum(&parts);
    }
    // fio counts the disks over the whole run, not per group.
    if !d.disk_util.is_empty() {
        if groups.len() > 1 {
            warnings.push(
                "fio's disk_util covers the whole run: it is shown under the first group".into(),
            );
        }
        groups[0].devices = d.disk_util.iter().map(device).collect();
    }
    let clock = d.global.get("clocksource").map_or_else(
        || "fio's default clock source (not recorded in its JSON)".to_string(),
        |c| format!("fio clocksource={c}"),
    );
    Ok(RunReport {
        schema: "iogauge-run".into(),
        schema_version: SCHEMA_VERSION,
        tool: Tool {
            name: "fio".into(),
            version: d.version.trim_start_matches("fio-").to_string().into(),
        },
        started_unix_s: d.timestamp,
        started_unix_ms: d.timestamp_ms,
        command_line: Vec::new(),
        host: Host {
            hostname: String::new(),
            kernel: String::new(),
            arch: String::new(),
            cpu_model: String::new(),
            cpus: 0,
            memory_bytes: 0,
        },
        targets: Vec::new(),
        groups,
        interrupted: false,
        clock,
        process_cpu: CpuReport::default(),
        warnings,
        errors,
    })
}

/// fio's job `j` added to its group (the group made when it is the first of it), its error,
/// if any, to `errors`.
fn add_job(d: &Doc, j: &Job, groups: &mut Vec<GroupReport>, errors: &mut Vec<String>) {
    let mut options = d.global.clone();
    options.extend(j.options.iter().map(|(k, v)| (k.clone(), v.clone())));
    // fio's JSON leaves out options without a value (group_reporting among them), but a job
    // of numjobs=N that appears once was reported as one.
    let clones: usize = options
        .get("numjobs")
        .and_then(|n| n.parse().ok())
        .unwrap_or(1);
    let group_reporting = clones > 1
        && d.jobs
            .iter()
            .filter(|x| x.groupid == j.groupid && x.jobname == j.jobname)
            .count()
            == 1;
    let at = match groups.iter().position(|g| g.id == j.groupid) {
        Some(at) => at,
        None => {
            groups.push(GroupReport {
                id: j.groupid,
                jobs: Vec::new(),
                total: empty_measurement(),
                devices: Vec::new(),
                without_device: Vec::new(),
                group_reporting,
                device_check: None,
            });
            groups.len() - 1
        }
    };
    let g = &mut groups[at];
    g.group_reporting |= group_reporting;
    let clone = g.jobs.iter().filter(|x| x.name == j.jobname).count() as u32;
    let error = (j.error != 0).then(|| JobError {
        file: None,
        offset: None,
        direction: None,
        errno: Some(j.error),
        message: format!(
            "fio reported error {} ({})",
            j.error,
            std::io::Error::from_raw_os_error(j.error)
        ),
    });
    if let Some(e) = &error {
        errors.push(crate::result::job_error_line(&j.jobname, clone, e));
    }
    g.jobs.push(JobReport {
        name: j.jobname.clone(),
        clone,
        engine: engine(&options),
        data: String::new(),
        options: essentials(options),
        files: Vec::new(),
        error,
        ranks: Vec::new(),
        measurement: measurement(j),
    });
}

fn has_bins(d: &Dir) -> bool {
    [&d.lat_ns, &d.clat_ns]
        .into_iter()
        .flatten()
        .any(|l| !l.bins.is_empty())
}

/// The options the reporters read as numbers (bs, size) in bytes, as iogauge records them;
/// the rest as fio printed them.
fn essentials(mut options: BTreeMap<String, String>) -> BTreeMap<String, String> {
    // fio's engine on Linux when none is named, as iogauge records the one it resolved.
    options
        .entry("ioengine".into())
        .or_insert_with(|| "psync".into());
    let kb = kb_base(&options);
    for k in ["bs", "size"] {
        if let Some(v) = options.get_mut(k) {
            if let Ok(s) = crate::plan::value::parse_size_base(v, kb) {
                *v = s.bytes.to_string();
            }
        }
    }
    options
}

fn kb_base(options: &BTreeMap<String, String>) -> u64 {
    options
        .get("kb_base")
        .and_then(|k| k.parse().ok())
        .unwrap_or(1024)
}

fn engine(options: &BTreeMap<String, String>) -> EngineReport {
    let get = |k: &str| options.get(k).map(String::as_str);
    let name = get("ioengine").unwrap_or("psync").to_string();
    let bytes_per_io = match get("bs") {
        Some(bs) => {
            crate::plan::value::parse_size_base(bs, kb_base(options)).map_or(0, |s| s.bytes)
        }
        // fio's default block size.
        None => 4096,
    };
    EngineReport {
        calls: format!("fio ioengine={name}"),
        name: name.into(),
        iodepth: get("iodepth").and_then(|d| d.parse().ok()).unwrap_or(1),
        numpages: 1,
        bytes_per_io,
        per_call_flags: Vec::new(),
        features: Vec::new(),
    }
}

fn measurement(j: &Job) -> Measurement {
    let dirs = [Some(&j.read), Some(&j.write), j.trim.as_ref()];
    // A group_reporting entry's job_runtime sums its jobs; each direction's runtime is the
    // group's wall time.
    let wall_ms = dirs.iter().flatten().map(|d| d.runtime).max().unwrap_or(0);
    let elapsed_ms = if wall_ms > 0 { wall_ms } else { j.job_runtime };
    let elapsed_ns = elapsed_ms * 1_000_000;
    let busy_s = j.job_runtime as f64 / 1e3;
    let (user_s, system_s) = (j.usr_cpu / 100.0 * busy_s, j.sys_cpu / 100.0 * busy_s);
    let pct = |s: f64| {
        if elapsed_ms == 0 {
            0.0
        } else {
            100.0 * s / (elapsed_ms as f64 / 1e3)
        }
    };
    Measurement {
        elapsed_ns,
        read: dir(&j.read),
        write: dir(&j.write),
        trim: j.trim.as_ref().map(dir).unwrap_or_default(),
        sync: j
            .sync
            .as_ref()
            .and_then(|s| s.lat_ns.as_ref())
            .and_then(lat),
        iodepth: DepthReport {
            mean: 0.0,
            mean_unknown: true,
            pct_time: j.iodepth_level.clone(),
            at_submit: Vec::new(),
            submit_calls: Vec::new(),
            complete_calls: Vec::new(),
        },
        cpu: CpuReport {
            user_s,
            system_s,
            usr_pct: pct(user_s),
            sys_pct: pct(system_s),
            ctx_switches: j.ctx,
            minor_faults: j.minf,
            major_faults: j.majf,
        },
        verify: None,
        steadystate: j.steadystate.clone(),
        replay: None,
        // Only a job that searched (fio writes the job's iodepth and target 0 otherwise).
        latency_target: (j.latency_target > 0).then_some(crate::stats::LatencyFound {
            depth: j.latency_depth,
            target_ns: j.latency_target,
            window_us: j.latency_window,
            percentile: j.latency_percentile,
            settled: None,
        }),
        errors_continued: (j.total_err > 0).then(|| crate::stats::Continued {
            total: j.total_err,
            per_dir: [0; 3],
            first_errno: j.first_error,
            first: std::io::Error::from_raw_os_error(j.first_error).to_string(),
        }),
        filled: None,
    }
}

fn dir(d: &Dir) -> DirReport {
    let bw = d.bw_bytes;
    DirReport {
        bytes: d.io_bytes,
        ios: d.total_ios,
        bw_bytes_per_s: bw,
        mib_per_s: bw / (1024.0 * 1024.0),
        mb_per_s: bw / 1e6,
        iops: d.iops,
        lat_ns: d.lat_ns.as_ref().and_then(lat),
        slat_ns: d.slat_ns.as_ref().and_then(lat),
        clat_ns: d.clat_ns.as_ref().and_then(lat),
        prios: d
            .prios
            .iter()
            .filter_map(|p| {
                let (of, l) = match (&p.lat_ns, &p.clat_ns) {
                    (Some(l), _) => ("lat", l),
                    (None, Some(l)) => ("clat", l),
                    (None, None) => return None,
                };
                Some(crate::result::PrioReport {
                    class: p.prioclass,
                    level: p.prio,
                    of: of.into(),
                    latency: lat(l)?,
                })
            })
            .collect(),
        series: SeriesReport::none(),
        dropped: d.drop_ios,
    }
}

fn lat(l: &Lat) -> Option<LatReport> {
    if l.n == 0 {
        return None;
    }
    let mut histogram_ns: Vec<[u64; 3]> = l
        .bins
        .iter()
        .filter_map(|(v, &c)| Some(fio_bucket(v.parse().ok()?, c)))
        .collect();
    histogram_ns.sort_unstable();
    Some(LatReport {
        count: l.n,
        min: l.min,
        max: l.max,
        mean: l.mean,
        stddev: l.stddev,
        percentiles: l.percentile.clone(),
        histogram_ns,
    })
}

/// fio's histogram bucket whose printed value is `v` ns: fio keeps 64 buckets per power of two
/// (exact below 128 ns) and prints each bucket's midpoint, so a bucket spans `v ± width/2`.
fn fio_bucket(v: u64, count: u64) -> [u64; 3] {
    const BITS: u32 = 6;
    if v < 1 << (BITS + 1) {
        return [v, v, count];
    }
    let width = 1u64 << (63 - v.leading_zeros() - BITS);
    let lo = v - width / 2;
    [lo, lo + width - 1, count]
}

fn device(d: &Disk) -> DeviceIo {
    DeviceIo {
        name: d.name.clone(),
        major_minor: String::new(),
        read_ios: d.read_ios,
        read_merges: d.read_merges,
        read_bytes: 0,
        write_ios: d.write_ios,
        write_merges: d.write_merges,
        write_bytes: 0,
        read_ms: d.read_ticks,
        write_ms: d.write_ticks,
        in_queue_ms: d.in_queue,
        util_pct: d.util,
        busy_ms: 0,
        wall_ms: 0,
        unmeasured_ms: 0,
        bytes_unknown: true,
        host: None,
        ranks: Vec::new(),
    }
}

fn empty_measurement() -> Measurement {
    Measurement::sum(&[])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_buckets_span_their_midpoint() {
        // Exact below 128 ns.
        assert_eq!(fio_bucket(100, 3), [100, 100, 3]);
        // 892 ns: 512..1023 has buckets 8 ns wide.
        assert_eq!(fio_bucket(892, 1), [888, 895, 1]);
        // 1,646,592 ns (2^20..2^21: 16384 ns wide).
        assert_eq!(fio_bucket(1_646_592, 2), [1_638_400, 1_654_783, 2]);
    }

    #[test]
    fn jobs_that_did_not_run_sum_without_nan() {
        let doc = serde_json::json!({
            "fio version": "fio-3.33",
            "jobs": [
                {"jobname": "a", "groupid": 0, "read": {}, "write": {},
                 "iodepth_level": {"1": 100.0}},
                {"jobname": "b", "groupid": 0, "read": {}, "write": {},
                 "iodepth_level": {"1": 50.0}}
            ]
        });
        let r = run_report(&doc).unwrap();
        let total = &r.groups[0].total;
        assert_eq!(total.iodepth.pct_time["1"], 75.0);
        // It serialises (no NaN anywhere).
        crate::report::json::render(&crate::studies::Report::from(r));
    }
}
