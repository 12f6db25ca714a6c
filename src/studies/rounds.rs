//! SNIA PTS-style rounds (`--until-steady`) and preconditioning (`--precondition`): the
//! workload runs round after round on the same files until the last five rounds are steady —
//! their range within 20% of their average and the excursion of their best-fit line within
//! 10% of it — or 25 rounds have run; preconditioning first writes the files sequentially N
//! times. This module holds the rules and the report; the command runs the rounds.

use serde::{Deserialize, Serialize};

use crate::plan::job::Timing;
use crate::plan::{Plan, RwMode};
use crate::runner::RunOutcome;

/// SNIA's steady-state window: rounds, range and slope-excursion limits (percent of the
/// window's average), and the most rounds.
pub const WINDOW: usize = 5;
pub const MAX_RANGE_PCT: f64 = 20.0;
pub const MAX_EXCURSION_PCT: f64 = 10.0;
pub const MAX_ROUNDS: usize = 25;

/// What `--until-steady` and `--precondition` asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RoundsSpec {
    /// Most rounds (0: no rounds, one run).
    pub max: usize,
    /// Sequential write passes over the files before the first round (0: none).
    pub precondition: u32,
}

/// The window's verdict: range and best-fit excursion, in percent of its average.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Window {
    pub range_pct: f64,
    pub excursion_pct: f64,
}

impl Window {
    pub fn steady(&self) -> bool {
        self.range_pct <= MAX_RANGE_PCT && self.excursion_pct <= MAX_EXCURSION_PCT
    }
}

/// The last [`WINDOW`] values' range and best-fit excursion (None with fewer values).
pub fn window(values: &[f64]) -> Option<Window> {
    if values.len() < WINDOW {
        return None;
    }
    let w = &values[values.len() - WINDOW..];
    let n = WINDOW as f64;
    let mean = w.iter().sum::<f64>() / n;
    if mean <= 0.0 {
        return Some(Window {
            range_pct: f64::INFINITY,
            excursion_pct: f64::INFINITY,
        });
    }
    let (lo, hi) = w
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &x| {
            (l.min(x), h.max(x))
        });
    let xm = (n - 1.0) / 2.0;
    let sxy: f64 = w
        .iter()
        .enumerate()
        .map(|(i, y)| (i as f64 - xm) * (y - mean))
        .sum();
    let sxx: f64 = (0..WINDOW).map(|i| (i as f64 - xm).powi(2)).sum();
    let slope = sxy / sxx;
    Some(Window {
        range_pct: 100.0 * (hi - lo) / mean,
        // The fitted line's rise across the window.
        excursion_pct: 100.0 * (slope * (n - 1.0)).abs() / mean,
    })
}

/// A round's figure: IOPS over every group (reads and writes), and MB/s.
pub fn figures(o: &RunOutcome) -> (f64, f64) {
    let (mut iops, mut mbs) = (0.0, 0.0);
    for g in &o.groups {
        let secs = g
            .iter()
            .map(|j| j.stats.elapsed.as_secs_f64())
            .fold(0.0, f64::max);
        if secs > 0.0 {
            let ios: u64 = g.iter().flat_map(|j| &j.stats.dirs).map(|d| d.ios).sum();
            let bytes: u64 = g.iter().flat_map(|j| &j.stats.dirs).map(|d| d.bytes).sum();
            iops += ios as f64 / secs;
            mbs += bytes as f64 / secs / 1e6;
        }
    }
    (iops, mbs)
}

/// The rounds' figure: MB/s when every job is sequential, else IOPS (SNIA's tests track
/// IOPS for random and bandwidth for sequential workloads).
pub fn tracks_bandwidth(plan: &Plan) -> bool {
    plan.groups
        .iter()
        .flat_map(|g| &g.jobs)
        .all(|j| matches!(j.rw, RwMode::Read | RwMode::Write | RwMode::ReadWrite))
}

/// The preconditioning plan: for each distinct region the workload writes (its files, offset
/// and size), one job writing it sequentially `passes` times, untimed and unpaced. Refused
/// when a job does not write: preconditioning would write files the workload only reads.
/// A job that only reads: preconditioning would write its files.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "--precondition: job {0} only reads; preconditioning writes the files, so it goes with \
     workloads that write (a file iogauge creates for reading is written in full before it is \
     read anyway)"
)]
pub struct ReadOnlyJob(pub String);

pub fn precondition_plan(plan: &Plan, passes: u32) -> Result<Plan, ReadOnlyJob> {
    let mut out = plan.clone();
    out.warnings.clear();
    for g in &mut out.groups {
        let mut seen = Vec::new();
        let mut jobs = Vec::new();
        for j in &g.jobs {
            if !j.rw.writes() {
                return Err(ReadOnlyJob(j.name.clone()));
            }
            let key = (j.paths(), j.offset, j.size);
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            let mut p = j.clone();
            p.name = format!("precondition-{}", j.name);
            p.rw = RwMode::Write;
            p.timing = Timing {
                runtime: None,
                time_based: false,
                ramp: std::time::Duration::ZERO,
                loops: passes,
                clock: j.timing.clock,
            };
            p.io_bytes = None;
            p.number_ios = None;
            p.gap = 0;
            p.pacing.rate_bps = [0; 3];
            p.pacing.rate_iops = [0; 3];
            p.pacing.thinktime = std::time::Duration::ZERO;
            p.pacing.startdelay = std::time::Duration::ZERO;
            p.pacing.wait_for = None;
            p.verify = None;
            p.steady = None;
            p.logs = Default::default();
            jobs.push(p);
        }
        g.jobs = jobs;
    }
    Ok(out)
}

/// What the rounds did, in the report (`rounds`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundsReport {
    /// "iops" or "mb_per_s": the figure tracked.
    pub metric: String,
    /// Per round, in order.
    pub values: Vec<f64>,
    pub max_rounds: usize,
    /// The last five rounds were steady (SNIA's rule), so the rounds stopped there.
    pub steady: bool,
    /// The last window's range and best-fit excursion, % of its average (absent with fewer
    /// than five rounds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub excursion_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precondition: Option<PreconditionReport>,
}

/// The sequential passes before the first round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PreconditionReport {
    pub passes: u32,
    pub bytes: u64,
    pub seconds: f64,
    pub mb_per_s: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_is_snias() {
        assert!(window(&[1.0, 2.0, 3.0, 4.0]).is_none());
        // Falling from a fresh drive's peak, then flat within a few percent.
        let rounds = [200.0, 150.0, 120.0, 101.0, 99.0, 100.0, 102.0, 98.0];
        let w = window(&rounds).unwrap();
        assert!(w.steady(), "{w:?}");
        assert!((w.range_pct - 4.0).abs() < 1e-9, "(102 - 98) / 100");
        // Still falling: range 12% of the average but the line drops more than 10%.
        let falling = [112.0, 109.0, 106.0, 103.0, 100.0];
        let w = window(&falling).unwrap();
        assert!(
            w.range_pct < MAX_RANGE_PCT && w.excursion_pct > MAX_EXCURSION_PCT,
            "{w:?}"
        );
        assert!(!w.steady());
        // Noisy without a trend: the range decides.
        let noisy = [80.0, 120.0, 100.0, 79.0, 121.0];
        let w = window(&noisy).unwrap();
        assert!(w.range_pct > MAX_RANGE_PCT && !w.steady(), "{w:?}");
    }
}
