//! The latency clock. Reading CLOCK_MONOTONIC costs ~25 ns in a VM; the CPU's time-stamp
//! counter ~10 ns, which matters when two reads bracket every I/O. The TSC is used only where
//! the kernel itself trusts it (it is the current clocksource, so it is invariant and synced
//! across CPUs) and is calibrated against CLOCK_MONOTONIC; everywhere else the monotonic clock
//! is used. Both give ticks that convert to nanoseconds; the report names the clock used.

use std::time::{Duration, Instant};

/// A calibrated tick source; `Copy`, so each worker holds its own.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    /// Nanoseconds per tick in 32.32 fixed point.
    ns_per_tick_q32: u64,
    tsc: bool,
    origin: Instant,
    /// The tick count at `origin` (TSC only), for the check against CLOCK_MONOTONIC.
    origin_tick: u64,
}

fn kernel_trusts_tsc() -> bool {
    let cs =
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            .unwrap_or_default();
    let cpu = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    cs.trim() == "tsc" && cpu.contains(" constant_tsc") && cpu.contains(" nonstop_tsc")
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn rdtsc() -> u64 {
    // SAFETY: RDTSC has no memory effects; it is available on every x86_64 CPU.
    unsafe { core::arch::x86_64::_rdtsc() }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn rdtsc() -> u64 {
    unreachable!("the TSC clock is only chosen on x86_64")
}

impl Clock {
    /// The best clock here: a calibrated TSC (about 20 ms of calibration) or the monotonic
    /// clock.
    pub fn new() -> Self {
        Self::tsc_asked().0
    }

    pub fn monotonic() -> Self {
        Clock {
            ns_per_tick_q32: 1 << 32,
            tsc: false,
            origin: Instant::now(),
            origin_tick: 0,
        }
    }

    /// fio's `clocksource=cpu`: the TSC, calibrated, where the kernel trusts it; elsewhere
    /// CLOCK_MONOTONIC and why (fio warns and uses the TSC anyway; a TSC that stops or drifts
    /// would time I/O wrongly).
    pub fn tsc_asked() -> (Self, Option<String>) {
        if cfg!(target_arch = "x86_64") && kernel_trusts_tsc() {
            return (Self::calibrated_tsc(Duration::from_millis(20)), None);
        }
        let why = "clocksource=cpu: the kernel does not use this CPU's time-stamp counter as \
                   its clock (not invariant, not synced across CPUs, or not x86_64), so the \
                   run is timed with CLOCK_MONOTONIC";
        (Self::monotonic(), Some(why.into()))
    }

    fn calibrated_tsc(span: Duration) -> Self {
        let (i0, c0) = (Instant::now(), rdtsc());
        // Asleep in between: only the two pairs of reads need to be close, and a spin would
        // cost every run 20 ms of CPU (its process_cpu, a bench's CPU per I/O).
        std::thread::sleep(span);
        let (c1, i1) = (rdtsc(), Instant::now());
        let ns = (i1 - i0).as_nanos() as f64;
        let ticks = c1.wrapping_sub(c0) as f64;
        if ticks <= 0.0 || ns <= 0.0 {
            return Self::monotonic();
        }
        let q = (ns / ticks * (1u64 << 32) as f64) as u64;
        let (origin, origin_tick) = (Instant::now(), rdtsc());
        Clock {
            ns_per_tick_q32: q,
            tsc: true,
            origin,
            origin_tick,
        }
    }

    /// The TSC checked against CLOCK_MONOTONIC over the time since calibration: how far the
    /// two disagree, as a fraction of the elapsed time (`None` for the monotonic clock, or
    /// before 100 ms have passed, when the comparison says little).
    pub fn drift(&self) -> Option<f64> {
        if !self.tsc {
            return None;
        }
        let (tick, mono) = (rdtsc(), self.origin.elapsed());
        if mono < Duration::from_millis(100) {
            return None;
        }
        let by_tsc = self.ns(tick.wrapping_sub(self.origin_tick)) as f64;
        let by_mono = mono.as_nanos() as f64;
        Some((by_tsc - by_mono) / by_mono)
    }

    /// The current time in ticks.
    #[inline(always)]
    pub fn now(&self) -> u64 {
        if self.tsc {
            rdtsc()
        } else {
            self.origin.elapsed().as_nanos() as u64
        }
    }

    /// Ticks → nanoseconds.
    #[inline(always)]
    pub fn ns(&self, ticks: u64) -> u64 {
        ((u128::from(ticks) * u128::from(self.ns_per_tick_q32)) >> 32) as u64
    }

    /// Nanoseconds → ticks (for deadlines).
    pub fn ticks(&self, d: Duration) -> u64 {
        ((d.as_nanos() << 32) / u128::from(self.ns_per_tick_q32.max(1))) as u64
    }

    /// What the report says about this clock.
    pub fn describe(&self) -> String {
        self.described("")
    }

    /// The clock's name; for the TSC its rate and how it was calibrated, then `checked`.
    fn described(&self, checked: &str) -> String {
        if self.tsc {
            let ghz = (1u64 << 32) as f64 / self.ns_per_tick_q32 as f64;
            format!("tsc ({ghz:.3} GHz, calibrated against CLOCK_MONOTONIC{checked})")
        } else {
            "CLOCK_MONOTONIC".into()
        }
    }

    /// What the report says at the end: the clock, and for the TSC how it compared with
    /// CLOCK_MONOTONIC over the run; a warning when they disagree by more than 0.1%.
    pub fn describe_checked(&self) -> (String, Option<String>) {
        let Some(d) = self.drift() else {
            return (self.describe(), None);
        };
        let pct = d * 100.0;
        let text = self.described(&format!(
            "; at the end within {:.3}% of CLOCK_MONOTONIC",
            pct.abs()
        ));
        let warn = (pct.abs() > 0.1).then(|| {
            format!(
                "the TSC ran {pct:+.3}% against CLOCK_MONOTONIC over the run: latencies and \
                 times are off by about that much (clocksource=clock_gettime avoids it)"
            )
        });
        (text, warn)
    }
}

impl Default for Clock {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_the_monotonic_clock() {
        for clock in [Clock::new(), Clock::monotonic()] {
            let (t0, i0) = (clock.now(), Instant::now());
            std::thread::sleep(Duration::from_millis(100));
            let (t1, i1) = (clock.now(), Instant::now());
            let got = clock.ns(t1 - t0) as f64;
            let want = (i1 - i0).as_nanos() as f64;
            assert!(
                (got - want).abs() / want < 0.01,
                "{}: {got} vs {want}",
                clock.describe()
            );
            let back = clock.ns(clock.ticks(Duration::from_secs(3)));
            assert!((back as i64 - 3_000_000_000i64).abs() < 1_000, "{back}");
        }
    }
}
