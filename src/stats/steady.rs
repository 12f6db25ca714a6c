//! fio's steady state (`steadystate`/`ss`, `ss_dur`, `ss_ramp`, `ss_interval`): every
//! `ss_interval` each job adds what it did to its group's sample (a job alone is a group of
//! one; `group_reporting` pools the group's jobs, as fio does); over a rolling window of
//! `ss_dur` the criterion is checked — the least-squares slope of IOPS or bandwidth, or their
//! largest deviation from the window's mean (absolute, or in percent of the mean), or the mean
//! completion latency's deviation — and once it falls below the limit every job of the group
//! stops as if its runtime had ended.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};

use crate::plan::{SteadyCriterion, SteadyState};

/// The criterion over a full window: (value compared with the limit, slope, largest
/// deviation from the mean). Slope and deviation are in the data's unit per interval and in
/// its unit; the value is in percent of the mean when the limit is.
pub fn evaluate(ss: &SteadyState, ys: &[f64]) -> (f64, f64, f64) {
    let n = ys.len() as f64;
    let mean = ys.iter().sum::<f64>() / n.max(1.0);
    // x = 0, 1, … n-1: the intervals are (nearly) equally spaced, as fio assumes.
    let sum_x = n * (n - 1.0) / 2.0;
    let sum_x2 = (n - 1.0) * n * (2.0 * n - 1.0) / 6.0;
    let sum_xy: f64 = ys.iter().enumerate().map(|(i, y)| i as f64 * y).sum();
    let denominator = sum_x2 - sum_x * sum_x / n;
    let slope = if denominator > 0.0 {
        (sum_xy - sum_x * ys.iter().sum::<f64>() / n) / denominator
    } else {
        0.0
    };
    let deviation = ys.iter().map(|y| (y - mean).abs()).fold(0.0, f64::max);
    let raw = if ss.criterion.slope() {
        slope
    } else {
        deviation
    };
    let value = if ss.pct {
        if mean == 0.0 {
            f64::INFINITY
        } else {
            100.0 * raw / mean
        }
    } else {
        raw
    };
    (value.abs(), slope, deviation)
}

/// What one interval of a group held.
#[derive(Debug, Clone, Copy, Default)]
struct Interval {
    /// Jobs that added to it.
    jobs: usize,
    iops: f64,
    /// Bytes per second.
    bw: f64,
    lat_sum_ns: f64,
    lat_n: u64,
}

#[derive(Debug, Default)]
struct State {
    /// Jobs still adding intervals.
    running: usize,
    pending: BTreeMap<u64, Interval>,
    /// The last `ss_dur / ss_interval` complete intervals: IOPS, bytes/s, mean latency (ns).
    window: VecDeque<(f64, f64, f64)>,
    /// The last check: criterion, slope, deviation.
    last: Option<(f64, f64, f64)>,
}

/// A group's steady-state check, shared by its jobs.
#[derive(Debug)]
pub struct SteadyGroup {
    pub spec: SteadyState,
    state: Mutex<State>,
    attained: AtomicBool,
}

impl SteadyGroup {
    pub fn new(spec: SteadyState, jobs: usize) -> Self {
        SteadyGroup {
            spec,
            state: Mutex::new(State {
                running: jobs,
                ..State::default()
            }),
            attained: AtomicBool::new(false),
        }
    }

    /// Intervals in the window.
    pub fn intervals(&self) -> usize {
        self.spec.intervals()
    }

    /// Steady state was attained: the group's jobs stop.
    pub fn attained(&self) -> bool {
        self.attained.load(Ordering::Acquire)
    }

    /// A job's interval `index` (counted from the end of `ss_ramp`): its I/O per second,
    /// bytes per second, and the sum and number of its completion latencies.
    pub fn add(&self, index: u64, iops: f64, bw: f64, lat_sum_ns: f64, lat_n: u64) {
        let Ok(mut s) = self.state.lock() else {
            return;
        };
        let i = s.pending.entry(index).or_default();
        i.jobs += 1;
        i.iops += iops;
        i.bw += bw;
        i.lat_sum_ns += lat_sum_ns;
        i.lat_n += lat_n;
        self.complete(&mut s);
    }

    /// A job of the group ended: the group's intervals no longer wait for it.
    pub fn leave(&self) {
        let Ok(mut s) = self.state.lock() else {
            return;
        };
        s.running = s.running.saturating_sub(1);
        self.complete(&mut s);
    }

    /// Moves the intervals every running job has added to into the window, in order, and
    /// checks the criterion on each full window.
    fn complete(&self, s: &mut State) {
        let n = self.intervals();
        while let Some((&k, &i)) = s.pending.iter().next() {
            if i.jobs < s.running.max(1) {
                break;
            }
            s.pending.remove(&k);
            if self.attained() {
                continue;
            }
            let lat = if i.lat_n > 0 {
                i.lat_sum_ns / i.lat_n as f64
            } else {
                0.0
            };
            s.window.push_back((i.iops, i.bw, lat));
            while s.window.len() > n {
                s.window.pop_front();
            }
            if s.window.len() == n {
                let ys: Vec<f64> = s
                    .window
                    .iter()
                    .map(|&(iops, bw, lat)| match self.spec.criterion {
                        SteadyCriterion::Iops | SteadyCriterion::IopsSlope => iops,
                        SteadyCriterion::Bw | SteadyCriterion::BwSlope => bw,
                        SteadyCriterion::Lat => lat,
                    })
                    .collect();
                let e = evaluate(&self.spec, &ys);
                s.last = Some(e);
                if e.0 < self.spec.limit {
                    self.attained.store(true, Ordering::Release);
                }
            }
        }
    }

    /// The check as fio's JSON reports it (`steadystate`).
    pub fn report(&self) -> SteadyReport {
        let s = self
            .state
            .lock()
            .map(|s| (s.window.iter().copied().collect::<Vec<_>>(), s.last));
        let (mut window, last) = s.unwrap_or_default();
        // fio's arrays always hold the window's ss_dur / interval slots, the ones not yet
        // collected (a job that ended before the window filled) as zeros, oldest first; its
        // means are over all the slots.
        let slots = self.intervals().max(window.len());
        let unfilled = slots - window.len();
        window.splice(0..0, std::iter::repeat_n((0.0, 0.0, 0.0), unfilled));
        let (criterion, slope, deviation) = last.unwrap_or((0.0, 0.0, 0.0));
        let mean = |f: fn(&(f64, f64, f64)) -> f64| {
            if window.is_empty() {
                0
            } else {
                (window.iter().map(f).sum::<f64>() / window.len() as f64) as u64
            }
        };
        let spec = &self.spec;
        let lat = spec.criterion == SteadyCriterion::Lat;
        SteadyReport {
            ss: spec.describe(),
            duration: spec.dur.as_secs(),
            attained: u8::from(self.attained()),
            criterion: format!("{criterion:.6}{}", if spec.pct { "%" } else { "" }),
            max_deviation: deviation,
            slope,
            data: SteadyData {
                bw_mean: mean(|w| w.1),
                iops_mean: mean(|w| w.0),
                lat_mean: lat.then(|| mean(|w| w.2)),
                lat_ns: lat.then(|| window.iter().map(|w| w.2 as u64).collect()),
                iops: window.iter().map(|w| w.0 as u64).collect(),
                bw: window.iter().map(|w| w.1 as u64).collect(),
            },
        }
    }
}

/// fio's `steadystate` block of a job (or a `group_reporting` group).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SteadyReport {
    /// The criterion and limit, as fio prints them: "iops_slope:0.010000%".
    pub ss: String,
    /// ss_dur, seconds.
    pub duration: u64,
    /// 1 when the criterion fell below the limit (the jobs then stopped).
    pub attained: u8,
    /// Its last value over a full window ("0.000000%" before the window first filled).
    pub criterion: String,
    pub max_deviation: f64,
    pub slope: f64,
    pub data: SteadyData,
}

/// The window's samples: IOPS and bandwidth (bytes/s) per interval, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SteadyData {
    pub bw_mean: u64,
    pub iops_mean: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lat_mean: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lat_ns: Option<Vec<u64>>,
    pub iops: Vec<u64>,
    pub bw: Vec<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn spec(criterion: SteadyCriterion, limit: f64, pct: bool, intervals: u64) -> SteadyState {
        SteadyState {
            criterion,
            limit,
            pct,
            dur: Duration::from_secs(intervals),
            ramp: Duration::ZERO,
            interval: Duration::from_secs(1),
        }
    }

    #[test]
    fn slope_and_deviation_are_fios() {
        // y = 100 + 2x: slope 2, 2% of the mean 104 is 1.923%.
        let ys = [100.0, 102.0, 104.0, 106.0, 108.0];
        let (v, slope, dev) = evaluate(&spec(SteadyCriterion::IopsSlope, 1.0, true, 5), &ys);
        assert!((slope - 2.0).abs() < 1e-9);
        assert!((v - 200.0 / 104.0).abs() < 1e-9);
        assert!((dev - 4.0).abs() < 1e-9);
        let (v, ..) = evaluate(&spec(SteadyCriterion::Bw, 5.0, false, 5), &ys);
        assert!((v - 4.0).abs() < 1e-9, "absolute: the largest deviation");
        // A falling series: the slope's magnitude is compared.
        let down = [108.0, 106.0, 104.0, 102.0, 100.0];
        let (v, slope, _) = evaluate(&spec(SteadyCriterion::IopsSlope, 1.0, false, 5), &down);
        assert!((slope + 2.0).abs() < 1e-9 && (v - 2.0).abs() < 1e-9);
    }

    #[test]
    fn a_group_pools_its_jobs_and_stops_when_the_window_is_steady() {
        // Two jobs, a 4-interval window, deviation within 10% of the mean.
        let g = SteadyGroup::new(spec(SteadyCriterion::Iops, 10.0, true, 4), 2);
        let rising = [50.0, 80.0, 100.0, 100.0, 101.0, 99.0, 100.0];
        for (k, iops) in rising.iter().enumerate() {
            g.add(k as u64, *iops / 2.0, 4096.0 * iops / 2.0, 0.0, 0);
            assert!(!g.attained(), "interval {k} waits for the other job");
            g.add(k as u64, *iops / 2.0, 4096.0 * iops / 2.0, 0.0, 0);
            // The window [100, 100, 101, 99] (intervals 2..=5) is the first steady one.
            assert_eq!(g.attained(), k >= 5, "after interval {k}");
            if g.attained() {
                break;
            }
        }
        let r = g.report();
        assert_eq!(r.ss, "iops:10.000000%");
        assert_eq!((r.duration, r.attained), (4, 1));
        assert_eq!(r.data.iops, [100, 100, 101, 99]);
        assert_eq!(r.data.iops_mean, 100);
        assert_eq!(r.data.bw, [409600, 409600, 413696, 405504]);
        assert_eq!(r.criterion, "1.000000%");
        // A job that ends stops holding the group's intervals back.
        let g = SteadyGroup::new(spec(SteadyCriterion::IopsSlope, 1.0, true, 2), 2);
        g.add(0, 10.0, 0.0, 0.0, 0);
        g.add(1, 10.0, 0.0, 0.0, 0);
        assert!(!g.attained());
        g.leave();
        assert!(g.attained(), "flat: slope 0");
    }
}
