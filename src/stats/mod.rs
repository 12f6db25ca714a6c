//! Measurement types: everything a worker records per I/O, kept in fixed-size structures that
//! merge with `+=` (job → group). Stats are pure data: no printing, no I/O; the runner records
//! into them and `result` turns them into a report.

pub mod clock;
pub mod cold;
pub mod cpu;
pub mod diskstats;
pub mod histogram;
pub mod series;
pub mod steady;

use std::time::Duration;

pub use clock::Clock;
pub use cpu::CpuUsage;
pub use histogram::Histogram;
pub use series::{Sample, Series};

/// One I/O as a per-I/O log keeps it (log_avg_msec=0, fio's default): when it completed and
/// how long it took. Engines that time one span per I/O have `clat_ns` = `lat_ns` and no
/// `slat_ns`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoSample {
    /// From the start of the job's measured time to the I/O's completion.
    pub t_ns: u64,
    pub lat_ns: u64,
    pub clat_ns: u64,
    pub slat_ns: u64,
    pub offset: u64,
    pub bs: u32,
    /// 0 read, 1 write, 2 trim (fio's).
    pub dir: u8,
    /// Its priority (class << 13 | level).
    pub prio: u16,
}

/// The fewest I/Os a job's per-I/O log (or I/O log) keeps however little memory there is
/// (48 bytes each: 48 MiB); the run's cap is a share of the memory available
/// (`runner::limits::io_log_cap`), and I/Os past it are counted and said, not kept.
pub const MIN_IO_SAMPLES: usize = 1 << 20;

/// An I/O error that stopped a job: what the job recorded besides its counts.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct JobError {
    pub file: Option<std::path::PathBuf>,
    pub offset: Option<u64>,
    pub direction: Option<std::borrow::Cow<'static, str>>,
    pub errno: Option<i32>,
    pub message: String,
}

/// Latency of a set of operations: exact min/max/mean/stddev plus a histogram for percentiles.
#[derive(Debug, Clone, Default)]
pub struct LatStats {
    pub hist: Histogram,
    pub min_ns: u64,
    pub max_ns: u64,
    pub sum_ns: u128,
    pub sum_sq_ns: u128,
}

impl LatStats {
    #[inline]
    pub fn record(&mut self, ns: u64) {
        if self.hist.count() == 0 || ns < self.min_ns {
            self.min_ns = ns;
        }
        self.max_ns = self.max_ns.max(ns);
        self.sum_ns += u128::from(ns);
        self.sum_sq_ns += u128::from(ns) * u128::from(ns);
        self.hist.record(ns);
    }

    pub fn count(&self) -> u64 {
        self.hist.count()
    }

    pub fn mean_ns(&self) -> f64 {
        if self.count() == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.count() as f64
        }
    }

    /// Population standard deviation.
    pub fn stddev_ns(&self) -> f64 {
        let n = self.count() as f64;
        if n < 2.0 {
            return 0.0;
        }
        let mean = self.sum_ns as f64 / n;
        (self.sum_sq_ns as f64 / n - mean * mean).max(0.0).sqrt()
    }

    /// Percentile `p`, clamped to the observed [min, max]. The first and last ranks are the
    /// exact min and max; others are bucket midpoints (within 0.4%).
    pub fn percentile_ns(&self, p: f64) -> Option<u64> {
        let n = self.count();
        let rank = ((p / 100.0) * n as f64).ceil().max(1.0) as u64;
        if n == 0 {
            None
        } else if rank <= 1 {
            Some(self.min_ns)
        } else if rank >= n {
            Some(self.max_ns)
        } else {
            self.hist
                .percentile(p)
                .map(|v| v.clamp(self.min_ns, self.max_ns))
        }
    }
}

impl std::ops::AddAssign<&LatStats> for LatStats {
    fn add_assign(&mut self, o: &LatStats) {
        if o.count() == 0 {
            return;
        }
        self.min_ns = if self.count() == 0 {
            o.min_ns
        } else {
            self.min_ns.min(o.min_ns)
        };
        self.max_ns = self.max_ns.max(o.max_ns);
        self.sum_ns += o.sum_ns;
        self.sum_sq_ns += o.sum_sq_ns;
        self.hist += &o.hist;
    }
}

/// Totals for one direction (read, write or trim).
#[derive(Debug, Clone, Default)]
pub struct DirStats {
    pub bytes: u64,
    pub ios: u64,
    /// Total latency: from the I/O being prepared to its completion being seen.
    pub lat: LatStats,
    /// Queued engines only: prepared → handed to the kernel (submission latency).
    pub slat: LatStats,
    /// Queued engines only: handed to the kernel → completion seen (completion latency).
    pub clat: LatStats,
    pub series: Series,
    /// I/Os the peer sent that never arrived (net's datagrams; fio's `drop_ios`).
    pub dropped: u64,
}

/// One direction's latencies per I/O priority (class << 13 | level), where per-command
/// priorities are in use: the latency fio keeps per priority (completion latency, or total
/// with lat_percentiles). The job's own priority first, then the others as configured.
#[derive(Debug, Clone, Default)]
pub struct PrioStats {
    pub by_prio: Vec<(u16, LatStats)>,
    /// The latencies are total latencies (lat_percentiles=1), not completion latencies.
    pub total: bool,
}

impl PrioStats {
    /// Adds an I/O of priority `ioprio` taking `ns`.
    #[inline]
    pub fn record(&mut self, ioprio: u16, ns: u64) {
        self.entry(ioprio).record(ns);
    }

    /// The latencies of priority `ioprio`, added after the others if it has none yet.
    pub fn entry(&mut self, ioprio: u16) -> &mut LatStats {
        let i = match self.by_prio.iter().position(|(p, _)| *p == ioprio) {
            Some(i) => i,
            None => {
                self.by_prio.push((ioprio, LatStats::default()));
                self.by_prio.len() - 1
            }
        };
        &mut self.by_prio[i].1
    }
}

impl std::ops::AddAssign<&PrioStats> for PrioStats {
    fn add_assign(&mut self, o: &PrioStats) {
        self.total |= o.total;
        for (p, l) in &o.by_prio {
            *self.entry(*p) += l;
        }
    }
}

impl std::ops::AddAssign<&DirStats> for DirStats {
    fn add_assign(&mut self, o: &DirStats) {
        self.bytes += o.bytes;
        self.ios += o.ios;
        self.lat += &o.lat;
        self.slat += &o.slat;
        self.clat += &o.clat;
        self.series += &o.series;
        self.dropped += o.dropped;
    }
}

/// Time spent with each number of I/Os in the kernel, in fio's iodepth levels: 0 (idle: the
/// tool's own time), 1, 2–3, 4–7, 8–15, 16–31, 32–63, 64 and more. Tells whether the device
/// or the tool capped the queue.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DepthStats {
    pub ns: [u64; DEPTH_LEVELS.len()],
    /// Σ depth × ns, for the time-weighted mean depth.
    pub depth_ns: u128,
    /// fio's counts (queued engines): I/Os by how many were in flight once handed to the
    /// kernel (levels 1, 2–3, 4–7, 8–15, 16–31, 32–63, 64 and more), and submissions and
    /// reaps by how many I/Os each carried (0, 1–4, 5–8, 9–16, 17–32, 33–64, more).
    pub at_submit: [u64; 7],
    pub submit_calls: [u64; 7],
    pub complete_calls: [u64; 7],
}

/// Lower bounds of the depth levels.
pub const DEPTH_LEVELS: [u32; 8] = [0, 1, 2, 4, 8, 16, 32, 64];

impl DepthStats {
    /// The level `depth` falls in.
    #[inline]
    pub fn level(depth: usize) -> usize {
        match depth {
            0 => 0,
            d => ((usize::BITS - d.leading_zeros()) as usize).min(DEPTH_LEVELS.len() - 1),
        }
    }

    #[inline]
    pub fn add(&mut self, depth: usize, ns: u64) {
        self.ns[Self::level(depth)] += ns;
        self.depth_ns += depth as u128 * u128::from(ns);
    }

    pub fn total_ns(&self) -> u64 {
        self.ns.iter().sum()
    }

    /// `n` I/Os handed to the kernel in one submission, `in_flight` there with them.
    #[inline]
    pub fn submitted(&mut self, in_flight: usize, n: usize) {
        let level = (Self::level(in_flight) - 1).min(6);
        self.at_submit[level] += n as u64;
        self.submit_calls[batch_index(n)] += 1;
    }

    /// One reap that took `n` completions.
    #[inline]
    pub fn reaped(&mut self, n: usize) {
        self.complete_calls[batch_index(n)] += 1;
    }

    /// Time-weighted mean of I/Os in flight.
    pub fn mean(&self) -> f64 {
        match self.total_ns() {
            0 => 0.0,
            t => self.depth_ns as f64 / t as f64,
        }
    }
}

/// fio's bucket for a submission or reap of `n` I/Os: 0, 1–4, 5–8, 9–16, 17–32, 33–64, more.
fn batch_index(n: usize) -> usize {
    match n {
        0 => 0,
        n => ((usize::BITS - (n - 1).leading_zeros()) as usize)
            .saturating_sub(1)
            .clamp(1, 6),
    }
}

impl std::ops::AddAssign<&DepthStats> for DepthStats {
    fn add_assign(&mut self, o: &DepthStats) {
        for (a, b) in [
            (&mut self.at_submit, &o.at_submit),
            (&mut self.submit_calls, &o.submit_calls),
            (&mut self.complete_calls, &o.complete_calls),
        ] {
            for (x, y) in a.iter_mut().zip(b) {
                *x += y;
            }
        }
        for (a, b) in self.ns.iter_mut().zip(o.ns) {
            *a += b;
        }
        self.depth_ns += o.depth_ns;
    }
}

/// Everything measured for one job (or, merged, for a group).
#[derive(Debug, Clone, Default)]
pub struct JobStats {
    /// Indexed by `Dir as usize`: 0 read, 1 write, 2 trim.
    pub dirs: [DirStats; 3],
    /// fsync/fdatasync calls (from `fsync=N` and `end_fsync`).
    pub syncs: LatStats,
    /// I/Os in flight over the measured time.
    pub depth: DepthStats,
    pub cpu: CpuUsage,
    /// Measured time: from the start of measurement to the end, final flush included.
    pub elapsed: Duration,
    /// When the measured time began and ended, in ns on the run's clock (comparable between
    /// the jobs of a run; merged: the earliest start and the latest end).
    pub window_ns: Option<(u64, u64)>,
    /// Per direction, latencies per I/O priority (per-command priorities only; else empty).
    pub prios: [PrioStats; 3],
    /// The verify phase (`verify=`), after the measured time.
    pub verify: Option<VerifyStats>,
    /// fio's steady-state check (`ss_dur`): its group's, at the end.
    pub steady: Option<steady::SteadyReport>,
    /// A replay's timing against its log (`read_iolog` with the log's times kept).
    pub replay: Option<ReplayStats>,
    /// fio's latency target: the depth the search ended at, and what it searched for.
    pub latency: Option<LatencyFound>,
    /// Failed I/Os the job went past (`continue_on_error`), if any.
    pub continued: Option<Continued>,
    /// fill_device: where the job found its file system full, ending it.
    pub filled: Option<String>,
}

/// Failed I/Os a job counted and went past (`continue_on_error`): how many, and the first.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Continued {
    pub total: u64,
    /// Of those, per direction (read, write, trim): fio counts them in `total_ios`.
    #[serde(default)]
    pub per_dir: [u64; 3],
    pub first_errno: i32,
    /// The first one: what failed, where, and the error.
    pub first: String,
}

/// fio's latency target as a job ended it (fio's `latency_depth` and the options).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LatencyFound {
    /// The queue depth the search ended at.
    pub depth: u32,
    pub target_ns: u64,
    pub window_us: u64,
    pub percentile: f64,
    /// The depth settled and the statistics are the last window's at it (fio's final run);
    /// false: the job ended while still searching (or `latency_run` kept it searching);
    /// unknown for a fio report read back.
    #[serde(default)]
    pub settled: Option<bool>,
}

/// How closely a replay kept its log's schedule.
#[derive(Debug, Clone, Default)]
pub struct ReplayStats {
    /// Per I/O issued while measuring: how long after its time in the schedule (0: on time).
    pub late: LatStats,
    /// Of those, issued more than [`REPLAY_LATE_NS`] behind.
    pub behind: u64,
    /// The schedule's span (its last I/O's time) and the replay's (its first action to its
    /// last I/O's issue); merged, the longest of each.
    pub scheduled_ns: u64,
    pub replayed_ns: u64,
}

/// An I/O issued later than this behind its time counts as behind the schedule.
pub const REPLAY_LATE_NS: u64 = 1_000_000;

impl ReplayStats {
    #[inline]
    pub fn issued(&mut self, late_ns: u64, scheduled_ns: u64, replayed_ns: u64) {
        self.late.record(late_ns);
        self.behind += u64::from(late_ns > REPLAY_LATE_NS);
        self.scheduled_ns = self.scheduled_ns.max(scheduled_ns);
        self.replayed_ns = self.replayed_ns.max(replayed_ns);
    }
}

impl std::ops::AddAssign<&ReplayStats> for ReplayStats {
    fn add_assign(&mut self, o: &ReplayStats) {
        self.late += &o.late;
        self.behind += o.behind;
        self.scheduled_ns = self.scheduled_ns.max(o.scheduled_ns);
        self.replayed_ns = self.replayed_ns.max(o.replayed_ns);
    }
}

/// Bad blocks kept in full per job (all are counted).
pub const BAD_BLOCKS_KEPT: usize = 10;

/// What a verify phase read and found.
#[derive(Debug, Clone, Default)]
pub struct VerifyStats {
    pub checksum: &'static str,
    /// Blocks checked (each with its header).
    pub blocks: u64,
    pub bytes: u64,
    pub ios: u64,
    /// Reading back and checking: the verify phase from its first read to its last check, and
    /// every verify_backlog pause (whose reads `bytes` counts too); cache dropping excluded.
    pub elapsed: Duration,
    /// The files were flushed and their cached pages dropped first, so reads came from the
    /// device (false with O_DIRECT, which reads the device anyway).
    pub dropped_cache: bool,
    /// Checked as the job's own reads completed (a job that only reads), not in a phase of
    /// its own: bytes are the job's reads, and no time is the check's alone.
    pub inline: bool,
    /// Threads that read and checked in the phase (1: the job's own, through its engine).
    pub threads: u32,
    /// The check was stopped before it reached every written block (an interrupt).
    pub cut_short: bool,
    /// Blocks that were not what was written.
    pub bad: u64,
    /// The first [`BAD_BLOCKS_KEPT`] of them.
    pub bad_blocks: Vec<BadBlock>,
}

/// A block that did not come back as written.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct BadBlock {
    #[serde(with = "crate::rawpath::serde_path")]
    pub file: std::path::PathBuf,
    pub offset: u64,
    pub len: u64,
    /// The block's generation this run acknowledged (0: none, 255: either of overlapping
    /// writes), as the map held it.
    pub expected_generation: u8,
    pub fault: crate::verify::Fault,
    /// When the check found it, ns since the Unix epoch.
    pub found_unix_ns: u64,
    /// verify_dump: the files written (the block as read, and as written where it could be
    /// made again), or why one was not.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dumped: Vec<String>,
}

impl std::ops::AddAssign<&VerifyStats> for VerifyStats {
    /// Merges jobs verified side by side: sums, the longest time, the first bad blocks.
    fn add_assign(&mut self, o: &VerifyStats) {
        if self.checksum.is_empty() {
            self.checksum = o.checksum;
        }
        self.blocks += o.blocks;
        self.bytes += o.bytes;
        self.ios += o.ios;
        self.elapsed = self.elapsed.max(o.elapsed);
        self.dropped_cache |= o.dropped_cache;
        self.cut_short |= o.cut_short;
        self.threads += o.threads;
        self.inline |= o.inline;
        self.bad += o.bad;
        let room = BAD_BLOCKS_KEPT.saturating_sub(self.bad_blocks.len());
        self.bad_blocks
            .extend(o.bad_blocks.iter().take(room).cloned());
    }
}

impl JobStats {
    /// Empty stats whose time series sample every `ms` milliseconds.
    pub fn with_series_ms(ms: u64) -> JobStats {
        let mut s = JobStats::default();
        for d in &mut s.dirs {
            d.series = Series::new(ms);
        }
        s
    }
}

impl std::ops::AddAssign<&JobStats> for JobStats {
    /// Merges a concurrent job: sums totals; elapsed is the longest, since jobs run together.
    fn add_assign(&mut self, o: &JobStats) {
        for (a, b) in self.dirs.iter_mut().zip(o.dirs.iter()) {
            *a += b;
        }
        for (a, b) in self.prios.iter_mut().zip(o.prios.iter()) {
            *a += b;
        }
        self.syncs += &o.syncs;
        self.depth += &o.depth;
        self.cpu += &o.cpu;
        self.elapsed = self.elapsed.max(o.elapsed);
        self.window_ns = match (self.window_ns, o.window_ns) {
            (Some((a, b)), Some((c, d))) => Some((a.min(c), b.max(d))),
            (w, None) | (None, w) => w,
        };
        match (&mut self.verify, &o.verify) {
            (Some(a), Some(b)) => *a += b,
            (None, Some(b)) => self.verify = Some(b.clone()),
            _ => {}
        }
        match (&mut self.replay, &o.replay) {
            (Some(a), Some(b)) => *a += b,
            (None, Some(b)) => self.replay = Some(b.clone()),
            _ => {}
        }
        // A pooled group's jobs share one check; otherwise the group's is the first job's.
        if self.steady.is_none() {
            self.steady = o.steady.clone();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn submissions_count_as_fio_counts_them() {
        let mut d = DepthStats::default();
        d.submitted(1, 1);
        d.submitted(8, 4);
        d.submitted(64, 33);
        d.reaped(0);
        d.reaped(5);
        d.reaped(65);
        assert_eq!(d.at_submit, [1, 0, 0, 4, 0, 0, 33]);
        assert_eq!(d.submit_calls, [0, 2, 0, 0, 0, 1, 0]);
        assert_eq!(d.complete_calls, [1, 0, 1, 0, 0, 0, 1]);
        let mut e = d.clone();
        e += &d;
        assert_eq!(e.at_submit, [2, 0, 0, 8, 0, 0, 66]);
    }

    #[test]
    fn moments_are_exact() {
        let mut l = LatStats::default();
        for v in [2u64, 4, 4, 4, 5, 5, 7, 9] {
            l.record(v * 1000);
        }
        assert_eq!((l.min_ns, l.max_ns, l.count()), (2000, 9000, 8));
        assert_eq!(l.mean_ns(), 5000.0);
        assert!((l.stddev_ns() - 2000.0).abs() < 1e-6);
        assert_eq!(l.percentile_ns(100.0), Some(9000));
        assert_eq!(l.percentile_ns(0.0), Some(2000));
    }

    #[test]
    fn depth_levels_are_fios() {
        let levels: Vec<usize> = [0, 1, 2, 3, 4, 7, 8, 31, 32, 63, 64, 4096]
            .into_iter()
            .map(DepthStats::level)
            .collect();
        assert_eq!(levels, vec![0, 1, 2, 2, 3, 3, 4, 5, 6, 6, 7, 7]);
        let mut d = DepthStats::default();
        d.add(0, 100);
        d.add(32, 300);
        assert_eq!(d.total_ns(), 400);
        assert_eq!(d.mean(), 24.0);
    }

    #[test]
    fn merge_keeps_min_and_totals() {
        let (mut a, mut b) = (JobStats::default(), JobStats::default());
        a.dirs[0].lat.record(500);
        a.dirs[0].ios = 1;
        b.dirs[0].lat.record(100);
        b.dirs[0].ios = 1;
        b.elapsed = Duration::from_secs(2);
        a += &b;
        assert_eq!(
            (a.dirs[0].ios, a.dirs[0].lat.min_ns, a.dirs[0].lat.max_ns),
            (2, 100, 500)
        );
        assert_eq!(a.elapsed, Duration::from_secs(2));
        let mut empty = LatStats::default();
        empty += &a.dirs[0].lat;
        assert_eq!(empty.min_ns, 100);
    }
}
