//! Pacing: rate caps per direction (`rate`, `rate_iops`, optionally Poisson-spaced) and
//! floors (`ratemin`, `rate_iops_min`), `thinktime` pauses, and fio's flow control between
//! jobs (`flow`, `flow_id`). While an I/O is held back, queued I/O keeps completing.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::{Halt, Loop};
use crate::engine::{Dir, Engine};
use crate::plan::JobSpec;

/// One flow of fio's flow control, shared by the running jobs of a `flow_id`: the I/Os they
/// issued (counted from 1, as fio's) and the sum of their weights. A job may issue its next
/// I/O while its share of the flow's I/Os is no more than its share of the weights.
#[derive(Debug)]
pub struct Flow {
    ios: AtomicU64,
    weight: AtomicU64,
}

impl Default for Flow {
    fn default() -> Flow {
        Flow {
            ios: AtomicU64::new(1),
            weight: AtomicU64::new(0),
        }
    }
}

impl Flow {
    /// A job of `weight` starts.
    pub(super) fn join(&self, weight: u32) {
        self.weight.fetch_add(u64::from(weight), Ordering::Relaxed);
    }

    /// Whether a job of `weight` that has issued `*own` I/Os may issue another now; if so it
    /// is counted.
    fn admit(&self, own: &mut u64, weight: u32) -> bool {
        let ios = self.ios.load(Ordering::Relaxed).max(1);
        let total = self.weight.load(Ordering::Relaxed).max(1);
        if *own as f64 / ios as f64 > f64::from(weight) / total as f64 {
            return false;
        }
        self.ios.fetch_add(1, Ordering::Relaxed);
        *own += 1;
        true
    }

    /// A job of `weight` that issued `own` I/Os ends: the others' shares no longer count it.
    pub(super) fn leave(&self, own: u64, weight: u32) {
        self.ios.fetch_sub(own, Ordering::Relaxed);
        self.weight.fetch_sub(u64::from(weight), Ordering::Relaxed);
    }
}

pub(super) struct Pacer {
    /// Per direction, the clock tick before which the next I/O must not start.
    due: [u64; 3],
    /// I/Os issued since the last thinktime pause.
    since_think: u32,
    /// Whether I/O is paced at all (rate, rate_iops, thinktime or a flow).
    pub(super) on: bool,
    rng: Xoshiro256PlusPlus,
    /// I/Os this job issued in its flow.
    pub(super) flow_ios: u64,
}

impl Pacer {
    pub(super) fn new(job: &JobSpec) -> Self {
        Pacer {
            due: [0; 3],
            since_think: 0,
            on: job.pacing.rate_bps != [0; 3]
                || job.pacing.rate_iops != [0; 3]
                || !job.pacing.thinktime.is_zero()
                || job.pacing.flow.is_some(),
            rng: Xoshiro256PlusPlus::seed_from_u64(job.random.seed ^ 0x7A7E),
            flow_ios: 0,
        }
    }
}

impl<E: Engine> Loop<'_, '_, E> {
    /// Holds the next I/O of `dir` (`len` bytes) back for its rate cap and thinktime. Queued
    /// I/O keeps completing meanwhile: the wait polls the ring every few microseconds, so
    /// latencies are not stretched by the pause.
    pub(super) fn pace(&mut self, dir: Dir, len: u64) {
        let job = self.w.job;
        let d = dir as usize;
        let now = self.clock.now();
        let mut until = now;
        let mut gap_ns = 0.0f64;
        if job.pacing.rate_bps[d] > 0 {
            gap_ns = gap_ns.max(len as f64 * 1e9 / job.pacing.rate_bps[d] as f64);
        }
        if job.pacing.rate_iops[d] > 0 {
            gap_ns = gap_ns.max(1e9 / job.pacing.rate_iops[d] as f64);
        }
        if gap_ns > 0.0 {
            if job.pacing.rate_poisson {
                let u = (self.pace.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                gap_ns *= -(1.0 - u).ln();
            }
            // A late start may catch up by at most this much, not in one burst.
            let slack = self.clock.ticks(Duration::from_millis(50));
            let due = self.pace.due[d].max(now.saturating_sub(slack));
            until = until.max(due);
            self.pace.due[d] = due + self.clock.ticks(Duration::from_nanos(gap_ns as u64));
        }
        if !job.pacing.thinktime.is_zero() {
            if self.pace.since_think >= job.pacing.thinktime_blocks {
                until = until.max(now + self.clock.ticks(job.pacing.thinktime));
                self.pace.since_think = 0;
            }
            self.pace.since_think += 1;
        }
        if until > now {
            self.wait_until(until);
        }
        if let (Some(flow), Some(spec)) = (self.w.flow, job.pacing.flow) {
            self.wait_for_flow(flow, spec);
        }
    }

    /// fio's flow control: while this job is ahead of its share of the flow, wait
    /// `flow_sleep` (or check again at once), queued I/O completing meanwhile.
    fn wait_for_flow(&mut self, flow: &Flow, spec: crate::plan::FlowSpec) {
        while !flow.admit(&mut self.pace.flow_ios, spec.weight) {
            if self.check_stop() {
                return;
            }
            let now = self.clock.now();
            if now >= self.tl.event {
                self.housekeeping(now);
                if self.halt != Halt::No {
                    return;
                }
            }
            if E::QUEUED && !self.pending.is_empty() {
                self.commit();
            }
            if E::QUEUED && self.in_kernel > 0 {
                self.poll();
            }
            if spec.sleep.is_zero() {
                std::thread::yield_now();
            } else {
                std::thread::sleep(spec.sleep);
            }
        }
    }

    /// Waits until the clock reaches `until`, queued I/O completing meanwhile.
    pub(super) fn wait_until(&mut self, until: u64) {
        if E::QUEUED && !self.pending.is_empty() {
            self.commit();
        }
        loop {
            let now = self.clock.now();
            if now >= until || self.check_stop() {
                return;
            }
            if now >= self.tl.event {
                self.housekeeping(now);
                if self.halt != Halt::No {
                    return;
                }
            }
            let left = Duration::from_nanos(self.clock.ns(until - now));
            if E::QUEUED && self.in_kernel > 0 {
                self.poll();
                std::thread::sleep(left.min(Duration::from_micros(20)));
            } else {
                std::thread::sleep(left.min(Duration::from_millis(10)));
            }
        }
    }
}

/// fio lets a job settle this long before its rate floors apply.
const MIN_RATE_SETTLE: Duration = Duration::from_secs(2);

impl<E: Engine> Loop<'_, '_, E> {
    /// With a floor, the first check comes when the measured time starts plus fio's settle.
    pub(super) fn arm_min_rate(&mut self, measure_start: u64) {
        let p = &self.w.job.pacing;
        if p.rate_min_bps != [0; 3] || p.rate_min_iops != [0; 3] {
            self.tl.next_rate = measure_start + self.clock.ticks(MIN_RATE_SETTLE);
            self.tl.rate_last = None;
            self.tl.rate_ios = 0;
        }
    }

    /// fio's check_min_rate: per direction, the bytes and I/Os over the last `ratecycle`
    /// against the floors; below one, the job fails (naming the floor and what it got).
    pub(super) fn check_min_rate(&mut self, now: u64) {
        let p = &self.w.job.pacing;
        let moved: [(u64, u64); 3] =
            std::array::from_fn(|d| (self.stats.dirs[d].bytes, self.stats.dirs[d].ios));
        // fio checks its floors as an I/O completes: with none since the last look (a paced
        // job waiting seconds for its next I/O), the check stays due until one does, and its
        // window then spans the wait, as fio's does.
        let ios = moved.iter().map(|m| m.1).sum();
        if std::mem::replace(&mut self.tl.rate_ios, ios) == ios {
            return;
        }
        self.tl.next_rate = now + self.clock.ticks(p.rate_cycle);
        let Some((then, before)) = self.tl.rate_last.replace((now, moved)) else {
            return;
        };
        let secs = self.clock.ns(now.saturating_sub(then)) as f64 / 1e9;
        if secs <= 0.0 {
            return;
        }
        let rw = self.w.job.rw;
        for d in 0..3 {
            // Only the directions the job does (a single floor is every direction's).
            if ![rw.reads(), rw.writes(), rw.trims()][d] {
                continue;
            }
            let bps = (moved[d].0 - before[d].0) as f64 / secs;
            let iops = (moved[d].1 - before[d].1) as f64 / secs;
            let (min_b, min_i) = (p.rate_min_bps[d], p.rate_min_iops[d]);
            let missed = if min_b > 0 && bps < min_b as f64 {
                Some(("ratemin", format!("{min_b} B/s"), format!("{bps:.0} B/s")))
            } else if min_i > 0 && iops < min_i as f64 {
                Some((
                    "rate_iops_min",
                    format!("{min_i} IOPS"),
                    format!("{iops:.0} IOPS"),
                ))
            } else {
                None
            };
            if let Some((opt, floor, got)) = missed {
                let job = self.w.job;
                let given = job.options.get(opt).map_or("", String::as_str);
                let message = format!(
                    "{}: the {} floor of {floor} was not met: {got} over the last {:.0} ms",
                    job.label_with(opt, given),
                    Dir::ALL[d].name(),
                    secs * 1e3
                );
                if self.error.is_none() {
                    self.error = Some(crate::stats::JobError {
                        file: None,
                        offset: None,
                        direction: None,
                        errno: None,
                        message,
                    });
                }
                self.halt = Halt::Abort;
                self.w.stop_others();
                return;
            }
        }
    }
}
