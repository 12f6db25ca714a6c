//! fio's latency target in the loop: the deepest queue at which `latency_percentile` % of each
//! `latency_window`'s I/Os complete within `latency_target`, searched for as fio's
//! `lat_target_*` do (from depth 1, doubling until a window fails, then bisecting between the
//! last depth that held and the first that did not; a failure waits for the I/O in flight to
//! drain before the lower depth is tried). Once the depth stays the same, the statistics start
//! again and one more window is measured at it (unless `latency_run`); `max_latency` fails the
//! job on an I/O slower than it. Latency here is fio's: from submission to completion.

use super::{Halt, Loop};
use crate::engine::{Dir, Engine};
use crate::plan::job::LatencyTarget;
use crate::stats::Clock;

/// The search's state (fio's `latency_qd`, `_low`, `_high` and its window).
pub(super) struct Search {
    target_ns: u64,
    window: u64,
    percentile: f64,
    run: bool,
    /// `iodepth`: the most the search may use.
    most: u32,
    /// The depth in use now.
    pub(super) qd: u32,
    low: u32,
    high: u32,
    stable: u32,
    /// The window: its start (clock ticks), the I/Os completed in it and those over target.
    start: u64,
    ios: u64,
    failed: u64,
    /// The depth settled and the last window is being measured.
    end_run: bool,
    /// A lower depth was chosen: no new I/O until what is in flight has completed.
    quiesce: bool,
}

impl Search {
    pub(super) fn new(t: &LatencyTarget, clock: &Clock, most: u32) -> Search {
        Search {
            target_ns: t.target.as_nanos() as u64,
            window: clock.ticks(t.window),
            percentile: t.percentile,
            run: t.run,
            most,
            qd: 1,
            low: 1,
            high: most,
            stable: 0,
            start: 0,
            ios: 0,
            failed: 0,
            end_run: false,
            quiesce: false,
        }
    }

    /// The depth settled and the last window was measured at it.
    pub(super) fn settled(&self) -> bool {
        self.end_run
    }

    /// Whether no more I/O may be issued with `in_flight` already out (a drain ends here).
    #[inline]
    pub(super) fn full(&mut self, in_flight: usize) -> bool {
        if self.quiesce && in_flight == 0 {
            self.quiesce = false;
        }
        self.holds(in_flight)
    }

    /// Whether the depth in use (or a drain) holds back new I/O with `in_flight` out.
    #[inline]
    pub(super) fn holds(&self, in_flight: usize) -> bool {
        self.quiesce || in_flight >= self.qd as usize
    }

    fn new_window(&mut self, now: u64) {
        (self.start, self.ios, self.failed) = (now, 0, 0);
    }

    /// A window over the target: a lower depth, after a drain. False at depth 1, where fio
    /// gives up.
    fn ramp_down(&mut self, now: u64) -> bool {
        if self.qd == 1 {
            return false;
        }
        self.high = self.qd;
        if self.qd == self.low {
            self.low -= 1;
        }
        self.qd = (self.qd + self.low) / 2;
        self.stable = 0;
        self.quiesce = true;
        self.new_window(now);
        true
    }

    /// A window within the target: a higher depth. Returns what the loop must do.
    fn ramp_up(&mut self, now: u64) -> Settled {
        let was = self.qd;
        self.low = self.qd;
        if self.qd + 1 == self.high {
            // Bisection cannot go up from here: after three such windows, try one more.
            self.stable += 1;
            if self.stable >= 3 {
                self.high += 1;
                self.stable = 0;
            }
        }
        self.qd = match self.high != self.most {
            true => (self.qd + self.high) / 2,
            false => self.qd * 2,
        }
        .min(self.most);
        let mut settled = Settled::No;
        if !self.run && self.qd == was {
            if self.end_run {
                settled = Settled::Done;
            } else {
                self.end_run = true;
                self.quiesce = true;
                settled = Settled::Measure;
            }
        }
        self.new_window(now);
        settled
    }
}

/// What a window's end asks of the loop.
#[derive(Debug, PartialEq, Eq)]
enum Settled {
    No,
    /// The depth is found: start the statistics again and measure one window.
    Measure,
    /// That window is over: the job is done.
    Done,
}

impl<E: Engine> Loop<'_, '_, E> {
    /// One completed I/O's latency (`lat_ns`, submission to completion) against
    /// `max_latency` and the latency target.
    #[cold]
    pub(super) fn latency_seen(
        &mut self,
        (dir, file, offset): (Dir, usize, u64),
        lat_ns: u64,
        now: u64,
    ) {
        let max = self.w.job.pacing.max_latency[dir as usize].as_nanos() as u64;
        if max > 0 && lat_ns > max {
            let why = format!(
                "{} took {} µs, over max_latency={} µs",
                super::end::dir_name(dir),
                lat_ns / 1000,
                max / 1000
            );
            return self.timed_out((dir, file, offset), why);
        }
        let Some(s) = self.lat.as_mut() else { return };
        if s.start == 0 {
            s.new_window(now);
        }
        s.ios += 1;
        if lat_ns > s.target_ns {
            if s.percentile >= 100.0 {
                // Every I/O must meet it: one that does not lowers the depth at once.
                if !s.ramp_down(now) {
                    return self.target_missed((dir, file, offset), lat_ns);
                }
                return;
            }
            s.failed += 1;
        }
        if now.saturating_sub(s.start) < s.window {
            return;
        }
        let ok = 100.0 * (s.ios - s.failed) as f64 / s.ios as f64 >= s.percentile;
        if !ok {
            if !s.ramp_down(now) {
                return self.target_missed((dir, file, offset), lat_ns);
            }
            return;
        }
        match s.ramp_up(now) {
            Settled::No => {}
            Settled::Measure => self.restart_measurement(now),
            Settled::Done => {
                if self.halt == Halt::No {
                    self.halt = Halt::Done;
                }
            }
        }
    }

    /// Even at depth 1 the target is not met: the job fails, as fio's does.
    fn target_missed(&mut self, at: (Dir, usize, u64), lat_ns: u64) {
        let t = self
            .w
            .job
            .pacing
            .latency
            .map_or(0, |l| l.target.as_micros());
        let why = format!(
            "latency_target={t} µs is not met even at queue depth 1 (an I/O took {} µs)",
            lat_ns / 1000
        );
        self.timed_out(at, why);
    }

    /// The job fails with ETIMEDOUT (fio's errno for a latency failure) and `why`.
    fn timed_out(&mut self, (dir, file, offset): (Dir, usize, u64), why: String) {
        let e = crate::platform::os_error(crate::platform::abi::errno::ETIMEDOUT);
        self.io_error(dir, file, offset, e);
        if let Some(err) = self.error.as_mut() {
            if err.errno == Some(crate::platform::abi::errno::ETIMEDOUT) {
                err.message = format!("{why} (ETIMEDOUT, as fio's)");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn search(most: u32, run: bool) -> Search {
        let t = LatencyTarget {
            target: Duration::from_micros(500),
            window: Duration::from_millis(100),
            percentile: 99.0,
            run,
        };
        Search::new(&t, &Clock::new(), most)
    }

    /// Windows that hold at depths up to `limit` and fail above it, as a device would: the
    /// depths tried, until the search settles (or 40 windows).
    fn walk(s: &mut Search, limit: u32) -> (Vec<u32>, Settled) {
        let mut tried = vec![s.qd];
        for w in 1..40u64 {
            let settled = if s.qd <= limit {
                s.ramp_up(w)
            } else {
                assert!(s.ramp_down(w), "depth 1 always holds here");
                Settled::No
            };
            tried.push(s.qd);
            if settled != Settled::No {
                return (tried, settled);
            }
        }
        (tried, Settled::No)
    }

    #[test]
    fn the_search_doubles_to_iodepth_when_every_depth_holds() {
        let mut s = search(16, false);
        let (tried, settled) = walk(&mut s, 64);
        assert_eq!(tried, [1, 2, 4, 8, 16, 16]);
        // Settled: the statistics start again, and the next window at 16 ends the job.
        assert_eq!(settled, Settled::Measure);
        assert!(s.settled() && s.quiesce);
        assert_eq!(s.ramp_up(99), Settled::Done);
    }

    #[test]
    fn the_search_bisects_between_the_last_depth_that_held_and_the_first_that_did_not() {
        let mut s = search(64, false);
        let (tried, settled) = walk(&mut s, 11);
        // 1, 2, 4, 8 hold; 16 fails (back to 12), 12 fails (10); 10 holds (11); 11 holds, then
        // 11 again: stable at the deepest depth that holds.
        assert_eq!(tried, [1, 2, 4, 8, 16, 12, 10, 11, 11]);
        assert_eq!(settled, Settled::Measure);
        assert_eq!(s.qd, 11);
    }

    #[test]
    fn depth_one_failing_is_the_end_and_latency_run_never_settles() {
        let mut s = search(8, false);
        assert!(!s.ramp_down(1), "fio gives up at depth 1");
        let mut s = search(8, true);
        let (tried, settled) = walk(&mut s, 64);
        assert_eq!(settled, Settled::No);
        assert!(tried.iter().all(|&d| d <= 8) && *tried.last().unwrap() == 8);
    }

    #[test]
    fn a_drain_holds_new_io_until_nothing_is_in_flight() {
        let mut s = search(16, false);
        walk(&mut s, 64);
        assert!(s.quiesce);
        assert!(s.full(3), "draining");
        assert!(!s.full(0), "drained: the depth applies again");
        assert!(!s.full(15) && s.full(16));
    }
}
