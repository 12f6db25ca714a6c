//! The loop's clock events, all in clock ticks: the end of the ramp, the deadline, the
//! series' intervals and progress publishing, checked together at most a few times a second.

use std::time::Duration;

use super::{Halt, Loop, workload};
use crate::engine::Engine;
use crate::plan::JobSpec;
use crate::stats::{Clock, CpuUsage, DirStats, Sample};

pub(super) struct Timeline {
    pub(super) measuring: bool,
    pub(super) measure_start: u64,
    pub(super) cpu_start: CpuUsage,
    ramp_end: u64,
    deadline: Option<u64>,
    next_publish: u64,
    next_tick: u64,
    pub(super) tick_index: u64,
    pub(super) last: [Sample; 3],
    /// The earliest of the events above: the loop looks at the others only from then.
    pub(super) event: u64,
    pub(super) depth_since: u64,
    publish_every: u64,
    tick: u64,
    /// fio's steady state: the next sample's time (never: u64::MAX), the sample's length, its
    /// number, and where the last one ended (time, I/Os, bytes, completion latency sum and
    /// count).
    next_ss: u64,
    ss_every: u64,
    ss_index: u64,
    ss_last: (u64, u64, u64, u128, u64),
    /// `ratemin`/`rate_iops_min`: the next check (never: u64::MAX), and where the last one
    /// was (time; bytes and I/Os per direction; none yet: the first check only records).
    pub(super) next_rate: u64,
    pub(super) rate_last: Option<(u64, [(u64, u64); 3])>,
    /// The job's I/Os at the last look at the floors (a look without a completion since
    /// waits for one).
    pub(super) rate_ios: u64,
}

impl Timeline {
    pub(super) fn new(job: &JobSpec, clock: &Clock, publish_every: Duration) -> Self {
        Timeline {
            measuring: job.timing.ramp.is_zero(),
            measure_start: 0,
            cpu_start: CpuUsage::thread(),
            ramp_end: 0,
            deadline: None,
            next_publish: 0,
            next_tick: 0,
            tick_index: 0,
            last: [Sample::default(); 3],
            event: 0,
            depth_since: 0,
            publish_every: clock.ticks(publish_every),
            tick: clock.ticks(Duration::from_millis(job.series_ms)),
            next_ss: u64::MAX,
            ss_every: job.steady.map_or(0, |s| clock.ticks(s.interval)),
            ss_index: 0,
            ss_last: (0, 0, 0, 0, 0),
            next_rate: u64::MAX,
            rate_last: None,
            rate_ios: 0,
        }
    }
}

impl<E: Engine> Loop<'_, '_, E> {
    pub(super) fn start(&mut self, start: u64) {
        let job = self.w.job;
        self.tl.measure_start = start;
        self.tl.depth_since = start;
        self.tl.cpu_start = CpuUsage::thread();
        self.tl.ramp_end = start + self.clock.ticks(job.timing.ramp);
        self.tl.deadline = job
            .timing
            .runtime
            .map(|r| self.tl.ramp_end + self.clock.ticks(r));
        self.tl.next_publish = start + self.tl.publish_every;
        self.tl.next_tick = start + self.tl.tick;
        if let Some(ss) = job.steady {
            // The first sample ends one interval after ss_ramp (fio's timing).
            let begin = start + self.clock.ticks(ss.ramp);
            self.tl.ss_last.0 = begin;
            self.tl.next_ss = begin + self.tl.ss_every;
        }
        if self.tl.measuring {
            self.arm_min_rate(start);
        }
        self.set_next_event();
    }

    /// Starts the measured time again at `now` (fio's reset of a job's statistics, as its
    /// latency target does once the depth is found): what was counted is dropped; the
    /// deadline stays.
    pub(super) fn restart_measurement(&mut self, now: u64) {
        let job = self.w.job;
        self.stats = crate::stats::JobStats::with_series_ms(job.series_ms);
        super::prio::track(&mut self.stats, job);
        self.tl.tick_index = 0;
        self.tl.last = [Sample::default(); 3];
        self.begin_measuring(now);
        self.set_next_event();
    }

    /// The measured time starts at `now` (the ramp's end, or a restart): its clock, CPU,
    /// depth and series intervals, and the rate floors' checks.
    fn begin_measuring(&mut self, now: u64) {
        self.tl.measuring = true;
        self.tl.measure_start = now;
        self.tl.depth_since = now;
        self.tl.cpu_start = CpuUsage::thread();
        self.tl.next_tick = now + self.tl.tick;
        self.arm_min_rate(now);
    }

    pub(super) fn set_next_event(&mut self) {
        let mut e = self
            .tl
            .next_publish
            .min(self.tl.next_tick)
            .min(self.tl.next_ss)
            .min(self.tl.next_rate);
        if !self.tl.measuring {
            e = e.min(self.tl.ramp_end);
        }
        self.tl.event = self.tl.deadline.map_or(e, |d| e.min(d));
    }

    /// Ramp end, series ticks, progress, deadline: at most a few times a second.
    pub(super) fn housekeeping(&mut self, now: u64) {
        let job = self.w.job;
        if !self.tl.measuring && now >= self.tl.ramp_end {
            self.tl.deadline = job.timing.runtime.map(|r| now + self.clock.ticks(r));
            // The measured part covers the full size, whatever the ramp did; I/O still in
            // flight from the ramp is not counted.
            self.wl = workload(job, job.random.seed.wrapping_add(1));
            self.exhausted = false;
            self.begin_measuring(now);
        }
        if self.tl.measuring {
            while now >= self.tl.next_tick {
                for (d, l) in self.stats.dirs.iter_mut().zip(self.tl.last.iter_mut()) {
                    close_interval(d, l, self.tl.tick_index);
                }
                self.tl.tick_index += 1;
                self.tl.next_tick += self.tl.tick;
            }
        }
        if now >= self.tl.next_publish {
            self.w.progress.publish(&self.stats);
            self.tl.next_publish = now + self.tl.publish_every;
        }
        if now >= self.tl.next_ss {
            self.steady_sample(now);
        }
        if now >= self.tl.next_rate {
            self.check_min_rate(now);
        }
        let attained = self.w.steady.is_some_and(|g| g.attained());
        let ended = self.tl.deadline.is_some_and(|d| now >= d) || self.w.exited() || attained;
        if ended && self.halt == Halt::No {
            self.halt = Halt::Done;
        }
        self.set_next_event();
    }
}

impl<E: Engine> Loop<'_, '_, E> {
    /// fio's steady state: what the job did since the last sample, as rates over the time it
    /// took, added to its group's interval. I/O of the ramp (not counted) adds nothing.
    fn steady_sample(&mut self, now: u64) {
        let Some(g) = self.w.steady else {
            self.tl.next_ss = u64::MAX;
            return;
        };
        let (mut ios, mut bytes, mut lat_sum, mut lat_n) = (0, 0, 0u128, 0u64);
        for d in &self.stats.dirs {
            ios += d.ios;
            bytes += d.bytes;
            // Completion latency, as fio's lat criterion (the whole I/O for a synchronous
            // engine, which has no other).
            let l = if E::QUEUED { &d.clat } else { &d.lat };
            lat_sum += l.sum_ns;
            lat_n += l.hist.count();
        }
        let (t0, ios0, bytes0, sum0, n0) = self.tl.ss_last;
        let secs = self.clock.ns(now.saturating_sub(t0)) as f64 / 1e9;
        if secs > 0.0 && self.tl.measuring {
            g.add(
                self.tl.ss_index,
                (ios - ios0) as f64 / secs,
                (bytes - bytes0) as f64 / secs,
                (lat_sum - sum0) as f64,
                lat_n - n0,
            );
            self.tl.ss_index += 1;
        }
        self.tl.ss_last = (now, ios, bytes, lat_sum, lat_n);
        // Late by more than an interval (a long stall): the next sample ends an interval from
        // now, not at a boundary already past.
        self.tl.next_ss = (self.tl.next_ss + self.tl.ss_every).max(now + 1);
    }
}

/// Pushes what direction `d` did since `last` as interval `index` of its series.
pub(super) fn close_interval(d: &mut DirStats, last: &mut Sample, index: u64) {
    let now = Sample {
        bytes: d.bytes,
        ios: d.ios,
        lat_sum_ns: d.lat.sum_ns as u64,
        slat_sum_ns: d.slat.sum_ns as u64,
        clat_sum_ns: d.clat.sum_ns as u64,
    };
    let delta = Sample {
        bytes: now.bytes - last.bytes,
        ios: now.ios - last.ios,
        lat_sum_ns: now.lat_sum_ns - last.lat_sum_ns,
        slat_sum_ns: now.slat_sum_ns - last.slat_sum_ns,
        clat_sum_ns: now.clat_sum_ns - last.clat_sum_ns,
    };
    d.series.push_base(delta, index);
    *last = now;
}
