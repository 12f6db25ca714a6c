//! Pacing: rate caps per direction (`rate`, `rate_iops`, optionally Poisson-spaced) and
//! `thinktime` pauses. While an I/O is held back, queued I/O keeps completing.

use std::time::Duration;

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::{Halt, Loop};
use crate::engine::{Dir, Engine};
use crate::plan::JobSpec;

pub(super) struct Pacer {
    /// Per direction, the clock tick before which the next I/O must not start.
    due: [u64; 2],
    /// I/Os issued since the last thinktime pause.
    since_think: u32,
    /// Whether I/O is paced at all (rate, rate_iops or thinktime).
    pub(super) on: bool,
    rng: Xoshiro256PlusPlus,
}

impl Pacer {
    pub(super) fn new(job: &JobSpec) -> Self {
        Pacer {
            due: [0, 0],
            since_think: 0,
            on: job.pacing.rate_bps != [0, 0]
                || job.pacing.rate_iops != [0, 0]
                || !job.pacing.thinktime.is_zero(),
            rng: Xoshiro256PlusPlus::seed_from_u64(job.random.seed ^ 0x7A7E),
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
        if until <= now {
            return;
        }
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
