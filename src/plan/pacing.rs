//! When a job starts and how fast it may go: its start delay, the job it waits for, rate caps
//! and floors, thinktime and fio's flow control.

use std::time::Duration;

/// When a job starts and how fast it may go.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Pacing {
    /// Wait this long after the group starts (each clone's draw from `startdelay`'s range).
    pub startdelay: Duration,
    /// Start when every clone of this earlier job of the same group has finished.
    pub wait_for: Option<String>,
    /// Caps per direction (0: none): bytes per second and I/Os per second.
    pub rate_bps: [u64; 3],
    pub rate_iops: [u64; 3],
    /// Capped I/Os arrive with exponential gaps (`rate_process=poisson`).
    pub rate_poisson: bool,
    /// Floors per direction (0: none), as fio's `ratemin` and `rate_iops_min`: from 2 s into
    /// the measured time, the rate over each `rate_cycle` below one fails the job.
    pub rate_min_bps: [u64; 3],
    pub rate_min_iops: [u64; 3],
    pub rate_cycle: Duration,
    /// Idle this long after every `thinktime_blocks` I/Os.
    pub thinktime: Duration,
    pub thinktime_blocks: u32,
    /// fio's flow control (`flow`, `flow_id`, `flow_sleep`); `None` without a weight.
    pub flow: Option<FlowSpec>,
    /// fio's latency target: the queue depth is searched for (see [`LatencyTarget`]).
    pub latency: Option<LatencyTarget>,
    /// `max_latency` per direction (zero: none): an I/O slower than this, from its
    /// submission to its completion, fails the job (ETIMEDOUT, as fio's).
    pub max_latency: [Duration; 3],
}

/// fio's `latency_target` with `latency_window`, `latency_percentile` and `latency_run`: the
/// job runs at the deepest queue (up to `iodepth`) at which `percentile` % of the I/Os of each
/// `window` complete within `target`, searched for as fio searches (from depth 1, doubling,
/// then bisecting), then measured over one more window at that depth (or, with `run`, the
/// search goes on for the whole job).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LatencyTarget {
    pub target: Duration,
    pub window: Duration,
    pub percentile: f64,
    pub run: bool,
}

/// A job's place in a flow: jobs of one `id` keep their I/O counts in the ratio of their
/// weights; one ahead of its share waits `sleep` (or checks again at once) before its next I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowSpec {
    pub id: u32,
    pub weight: u32,
    pub sleep: Duration,
}
