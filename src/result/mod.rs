//! The RunReport: what a run measured, as plain serde data with its provenance and warnings.
//! Every reporter is a function of this type, and its JSON form is iogauge's documented,
//! versioned output (docs/json-schema.md). Building it is arithmetic on merged stats; nothing
//! here does I/O except reading host facts through `host`.

use std::collections::BTreeMap;

mod build;
pub mod fio;
mod sum;

pub use build::{
    Context, DeviceCheck, build, engine_report, group_label, job_error_line, measurement,
};

use serde::{Deserialize, Serialize};
use std::borrow::Cow;

use crate::files::targets::OpenedFile;
use crate::host::{Host, TargetInfo};
use crate::stats::JobError;

/// Bumped when a field changes meaning or disappears (adding fields does not bump it).
pub const SCHEMA_VERSION: u32 = 1;

/// Percentiles every latency report carries, as in fio's default list plus a few.
pub const PERCENTILES: &[f64] = &[
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// The advice of the device checks' warnings, in fio's options (a legacy tool's commands
/// put them in its own flags: `compat::in_own_words`).
pub const ADVICE_READ: &str = "(direct=1, or a file larger than RAM, measures the device)";
pub const ADVICE_WRITE: &str = "(end_fsync=1, sync=dsync or direct=1 time the device)";
pub const ADVICE_HIDDEN: &str = "(end_fsync=1 or direct=1 times it)";

/// Whether a report's warnings say its figures may be the page cache's (the device checks'
/// verdicts: reads it served, writes still in it, or unflushed writes another writer hid).
pub fn cache_served(warnings: &[String]) -> bool {
    warnings.iter().any(|w| {
        [ADVICE_READ, ADVICE_WRITE, ADVICE_HIDDEN]
            .iter()
            .any(|a| w.contains(a))
    })
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunReport {
    pub schema: Cow<'static, str>,
    pub schema_version: u32,
    pub tool: Tool,
    /// Start of the run, seconds since the Unix epoch (UTC).
    pub started_unix_s: u64,
    /// The same instant in milliseconds.
    #[serde(default)]
    pub started_unix_ms: u64,
    pub command_line: Vec<String>,
    pub host: Host,
    pub targets: Vec<TargetInfo>,
    pub groups: Vec<GroupReport>,
    /// The run was stopped by Ctrl-C or SIGTERM; results are partial.
    pub interrupted: bool,
    /// The clock that timed each I/O.
    pub clock: String,
    /// CPU used by the whole iogauge process during the run (all threads, set-up included).
    pub process_cpu: CpuReport,
    pub warnings: Vec<String>,
    pub errors: Vec<String>,
}

impl RunReport {
    /// Read from another tool's JSON (fio's): the host, targets, command line and time series
    /// were not recorded.
    pub fn imported(&self) -> bool {
        self.tool.name != "iogauge"
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Tool {
    pub name: Cow<'static, str>,
    pub version: Cow<'static, str>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GroupReport {
    pub id: usize,
    pub jobs: Vec<JobReport>,
    /// All jobs of the group together: totals summed, elapsed the longest job's.
    pub total: Measurement,
    /// What the kernel counted on the block devices under the group's files while it ran.
    pub devices: Vec<DeviceIo>,
    /// Files with no block device below them (tmpfs, network file systems): nothing to check.
    #[serde(with = "crate::rawpath::serde_paths")]
    pub without_device: Vec<std::path::PathBuf>,
    /// A job of the group set `group_reporting`: reporters show the group as one job.
    #[serde(default)]
    pub group_reporting: bool,
    /// What the device counters' verdicts compare them with, kept for a merge that judges
    /// several processes' jobs on the same devices together (a scale-out run's host); not
    /// part of the report's JSON.
    #[serde(skip)]
    pub device_check: Option<DeviceCheck>,
}

/// One block device's work during a group, from /proc/diskstats (fio's disk_util). Counts
/// include any other process's I/O to the device in that time.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DeviceIo {
    pub name: String,
    pub major_minor: String,
    pub read_ios: u64,
    pub read_merges: u64,
    pub read_bytes: u64,
    pub write_ios: u64,
    pub write_merges: u64,
    pub write_bytes: u64,
    /// Milliseconds the device's reads and writes spent, summed over I/Os.
    pub read_ms: u64,
    pub write_ms: u64,
    /// Weighted time in queue (ms), as diskstats field 11.
    pub in_queue_ms: u64,
    /// Share of the group's wall time with at least one I/O in flight.
    pub util_pct: f64,
    /// Milliseconds with at least one I/O in flight (diskstats field 10) and the length of
    /// the window it was counted in, so several groups can be combined.
    #[serde(default)]
    pub busy_ms: u64,
    #[serde(default)]
    pub wall_ms: u64,
    /// Of `wall_ms`, the longest ramp_time (and start delay) of the group's jobs: the
    /// counters cover the group from start to end, unmeasured time included.
    #[serde(default)]
    pub unmeasured_ms: u64,
    /// The bytes were not recorded (a report read from fio's JSON, whose disk_util counts
    /// I/Os and merges but not bytes): `read_bytes` and `write_bytes` mean nothing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub bytes_unknown: bool,
    /// Scale-out: the host whose device this is, and the ranks there that ran on it (one
    /// host's device is reported once: see `studies::scaleout::merge`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranks: Vec<usize>,
}

impl DeviceIo {
    /// Bytes read or written as a report shows them: "not recorded" where they were not.
    pub fn bytes_text(&self, bytes: u64) -> String {
        match self.bytes_unknown {
            true => "not recorded".into(),
            false => crate::units::human_bytes(bytes),
        }
    }

    /// "4.00 MiB in 64 I/Os", or "64 I/Os" where the bytes were not recorded.
    pub fn io_text(&self, bytes: u64, ios: u64) -> String {
        match self.bytes_unknown {
            true => format!("{ios} I/Os"),
            false => format!("{} in {ios} I/Os", crate::units::human_bytes(bytes)),
        }
    }

    /// The device's name with its major:minor where known.
    pub fn label(&self) -> String {
        let mut l = match self.major_minor.is_empty() {
            true => self.name.clone(),
            false => format!("{} ({})", self.name, self.major_minor),
        };
        if let Some(h) = &self.host {
            l += &format!(" on {h}");
            if !self.ranks.is_empty() {
                let ranks: Vec<String> = self.ranks.iter().map(|r| r.to_string()).collect();
                l += &format!(", rank(s) {}", ranks.join(","));
            }
        }
        l
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JobReport {
    pub name: String,
    pub clone: u32,
    /// The options as given (canonical names), plus the resolved essentials.
    pub options: BTreeMap<String, String>,
    pub files: Vec<OpenedFile>,
    pub engine: EngineReport,
    /// What the written bytes were (random and incompressible, compressible, a pattern…);
    /// empty where not recorded (a report read from fio's JSON).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub data: String,
    pub error: Option<JobError>,
    /// Scale-out with a row per host (`--rank-rows=host`): the ranks whose jobs of this name
    /// this row adds up (its files and options are the lowest rank's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranks: Vec<usize>,
    #[serde(flatten)]
    pub measurement: Measurement,
}

/// How the job issued I/O, as resolved (not as asked: a synchronous engine's iodepth is 1).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EngineReport {
    pub name: Cow<'static, str>,
    /// The syscalls or ring operations each I/O uses.
    pub calls: String,
    pub iodepth: u32,
    /// Page buffers per call, each of bs bytes.
    pub numpages: u32,
    /// Bytes each I/O moves (bs × numpages).
    pub bytes_per_io: u64,
    /// Per-call flags (RWF_*), where the engine sets any.
    pub per_call_flags: Vec<Cow<'static, str>>,
    /// io_uring set-up and batching: registered buffers/files, SQ polling, IOPOLL, batch sizes.
    pub features: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Measurement {
    pub elapsed_ns: u64,
    pub read: DirReport,
    pub write: DirReport,
    /// Trims (`rw=trim`, `randtrim`, the trimwrites); absent from JSON for a job without.
    #[serde(default, skip_serializing_if = "DirReport::is_idle")]
    pub trim: DirReport,
    /// fsync calls (fsync=N, end_fsync), timed inside the job.
    pub sync: Option<LatReport>,
    /// I/Os in the kernel over the measured time.
    pub iodepth: DepthReport,
    pub cpu: CpuReport,
    /// The verify phase (`verify=`): after the measured time, never in its figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<VerifyReport>,
    /// fio's steady-state check (`ss_dur`), as fio's JSON gives it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steadystate: Option<crate::stats::steady::SteadyReport>,
    /// A replay (`read_iolog`, the log's times kept): how closely it kept them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<ReplayReport>,
    /// fio's latency target (`latency_target`): the queue depth the search ended at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_target: Option<crate::stats::LatencyFound>,
    /// Failed I/Os the job went past (`continue_on_error`): how many, and the first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors_continued: Option<crate::stats::Continued>,
    /// fill_device: where the job found its file system full, which ended it (not an error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filled: Option<String>,
}

/// How closely a replay kept its log's schedule: each I/O's issue against its time.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReplayReport {
    /// I/Os issued on the schedule while measuring.
    pub ios: u64,
    /// How long after its time each was issued, in microseconds.
    pub late_p50_us: f64,
    pub late_p99_us: f64,
    pub late_max_us: f64,
    /// Issued more than 1 ms behind its time.
    pub behind_ios: u64,
    /// The schedule's span (the log's, scaled by replay_time_scale) and the replay's, in
    /// seconds.
    pub scheduled_s: f64,
    pub replayed_s: f64,
}

impl Measurement {
    /// Reads, writes and trims, in fio's direction order (its logs' `ddir` 0, 1, 2).
    pub fn dirs(&self) -> [&DirReport; 3] {
        [&self.read, &self.write, &self.trim]
    }
}

/// What reading the written blocks back found.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VerifyReport {
    pub checksum: String,
    /// Blocks read back and checked, each with its header.
    pub blocks: u64,
    pub bytes: u64,
    pub ios: u64,
    pub elapsed_ns: u64,
    pub mib_per_s: f64,
    pub mb_per_s: f64,
    /// The files were flushed and their cached pages dropped before reading back (false
    /// with O_DIRECT, which reads the device anyway).
    pub dropped_cache: bool,
    /// A job that only reads: each block checked as the workload read it (the bytes are its
    /// reads; the check's time is inside the measured reads).
    #[serde(default)]
    pub inline: bool,
    /// Threads that read back and checked (`verify_async`; a group: its jobs' sum); 1: the
    /// job's own thread, through its engine. 0 when checked inline or not recorded.
    #[serde(default)]
    pub threads: u32,
    /// Stopped (interrupted) before every written block was checked: no bad block among
    /// those checked is not a pass of the rest.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cut_short: bool,
    /// Blocks that were not what was written: 0 is a pass.
    pub bad_blocks: u64,
    /// The first of them, in full.
    pub first_bad: Vec<crate::stats::BadBlock>,
}

/// Share of the measured time with each number of I/Os in the kernel (fio's iodepth levels;
/// "0" is time the job spent outside I/O). For a group, the jobs' times are summed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DepthReport {
    /// Time-weighted mean of I/Os in flight.
    pub mean: f64,
    /// The mean was not measured (a report read from fio's JSON, which has only the levels).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub mean_unknown: bool,
    /// Level ("0", "1", "2", "4", …, ">=64") → percent of time; levels cover d..2d-1.
    pub pct_time: BTreeMap<String, f64>,
    /// fio's counts: I/Os by how many were in flight once handed to the kernel (1, 2–3,
    /// 4–7, 8–15, 16–31, 32–63, 64 and more), and submissions and reaps by how many I/Os each
    /// carried (0, 1–4, 5–8, 9–16, 17–32, 33–64, more). A synchronous engine's I/Os count one
    /// each, at depth 1. Empty where not measured (a report read from fio's JSON).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub at_submit: Vec<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub submit_calls: Vec<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub complete_calls: Vec<u64>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct DirReport {
    pub bytes: u64,
    pub ios: u64,
    pub bw_bytes_per_s: f64,
    pub mib_per_s: f64,
    pub mb_per_s: f64,
    pub iops: f64,
    /// Per-I/O total latency: from the I/O being prepared (just before the syscall, for
    /// synchronous engines) to its completion being seen.
    pub lat_ns: Option<LatReport>,
    /// Queued engines: prepared → handed to the kernel.
    pub slat_ns: Option<LatReport>,
    /// Queued engines: handed to the kernel → completion seen.
    pub clat_ns: Option<LatReport>,
    /// Latency per I/O priority, where per-command priorities (`cmdprio_percentage`,
    /// `cmdprio_bssplit`) were in use: the job's own priority first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prios: Vec<PrioReport>,
    pub series: SeriesReport,
    /// I/Os the peer sent that never arrived (net's UDP receivers, counted by the datagrams'
    /// sequence numbers; fio's `drop_ios`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dropped: u64,
}

/// The I/Os of one priority (fio's `prios` entries).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PrioReport {
    /// Linux's I/O priority class: 0 none, 1 real-time, 2 best-effort, 3 idle.
    pub class: u16,
    /// The level within the class, 0 (highest) to 7.
    pub level: u16,
    /// What `latency` times: `clat` (handed to the kernel → completion seen; the whole I/O
    /// for a synchronous engine) or `lat` (total latency, with lat_percentiles=1), as fio.
    pub of: String,
    pub latency: LatReport,
}

impl DirReport {
    /// The priorities the I/Os were split between, where there were two or more (fio reports
    /// them only then); else none.
    pub fn split_by_prio(&self) -> &[PrioReport] {
        if self.prios.len() >= 2 {
            &self.prios
        } else {
            &[]
        }
    }

    /// No I/O in this direction.
    pub fn is_idle(&self) -> bool {
        self.ios == 0
    }
    /// The total latency's 99th percentile, ns, where recorded.
    pub fn lat_p99_ns(&self) -> Option<u64> {
        self.lat_ns.as_ref()?.percentiles.get("99.000000").copied()
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LatReport {
    pub count: u64,
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    pub stddev: f64,
    /// Keyed like fio ("99.900000"), values in ns, each within 0.4% of the exact value and
    /// clamped to [min, max].
    pub percentiles: BTreeMap<String, u64>,
    /// The non-empty histogram buckets as `[lowest ns, highest ns, count]`, ascending (absent
    /// from reports read from fio's plain JSON, which has no bins); a bucket spans at most 1/128 of its lower bound. Lets reporters draw
    /// any bucketing (sqlio's per-millisecond rows, fio's latency_ms levels) after the fact.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub histogram_ns: Vec<[u64; 3]>,
}

impl LatReport {
    /// I/Os whose latency falls in `[lo_ns, hi_ns)`, from `histogram_ns` (a bucket counts
    /// where its midpoint falls).
    pub fn count_between(&self, lo_ns: u64, hi_ns: u64) -> u64 {
        self.histogram_ns
            .iter()
            .filter(|[lo, hi, _]| {
                let mid = lo + (hi - lo) / 2;
                mid >= lo_ns && mid < hi_ns
            })
            .map(|b| b[2])
            .sum()
    }
}

/// Per-interval rates; the last interval may be partial (its rate uses its true length).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SeriesReport {
    pub interval_ms: u64,
    pub bw_bytes_per_s: Vec<f64>,
    pub iops: Vec<f64>,
    pub lat_mean_ns: Vec<f64>,
    /// Queued engines only: mean submission and completion latency per interval.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slat_mean_ns: Vec<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clat_mean_ns: Vec<f64>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CpuReport {
    pub user_s: f64,
    pub system_s: f64,
    /// User and system time as a share of the elapsed time (may exceed 100 for a group).
    pub usr_pct: f64,
    pub sys_pct: f64,
    pub ctx_switches: u64,
    pub minor_faults: u64,
    pub major_faults: u64,
}

pub fn percentile_key(p: f64) -> String {
    format!("{p:.6}")
}

/// fio writes notes ("fio: …") ahead of the JSON in some versions and set-ups: the document
/// starts at the first line that opens an object.
pub fn json_start(text: &str) -> &str {
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with('{') {
            return &text[at..];
        }
        at += line.len();
    }
    text
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_before_the_document_are_skipped() {
        assert_eq!(json_start("fio: note\n{\n}\n"), "{\n}\n");
        assert_eq!(json_start("{}"), "{}");
    }
}
