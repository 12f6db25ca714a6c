//! A replay thread's wait before each call in closed mode: the recorded think time after its
//! previous call (or after the other thread's call it started from), and, where the trace says
//! when its thread was off its CPU between the two (`Footer::gaps`), split as it was spent:
//! the sleep slept, the computation made as that much of the thread's CPU time (so that it
//! waits for a CPU where the program's threads would have: its other threads, or other
//! programs, busy on them), the recorded waits for a CPU left out (the replay's own take their
//! place). The capture's own cost between the recorded calls is taken out of what ran
//! (`Capture`): the replay's thread thinks as the program's did untraced.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::Mode;
use super::issue::{Shared, completed_at, started_from};
use crate::trace::recording::{Event, Recording};
use crate::trace::replayed::ThinkFigures;

/// The capture's cost that lies in the recorded think times, which a closed replay takes out
/// of them (`Overhead::between_calls_ns`): before each replayed call its measured part
/// between two calls, and for each call the replay does not make since its thread's previous
/// one (an mmap, a seek, a poll's looks cut short) the whole cost of one: that call's time,
/// all of it, lies in the think time here. Recorded ns.
#[derive(Debug, Clone, Copy)]
pub struct Capture {
    pub between_ns: u64,
    pub per_call_ns: u64,
}

impl Capture {
    /// Where the trace measured it, in closed mode.
    pub fn of(r: &Recording, mode: Mode) -> Option<Capture> {
        let o = r
            .footer
            .overhead
            .as_ref()
            .filter(|_| mode == Mode::Closed)?;
        Some(Capture {
            between_ns: o.between_calls_ns?.max(0.0) as u64,
            per_call_ns: o.per_call_ns.max(0.0) as u64,
        })
    }

    /// Before a call, `skipped` calls not made since its thread's previous one.
    fn cost(self, skipped: u64) -> u64 {
        self.between_ns
            .saturating_add(skipped.saturating_mul(self.per_call_ns))
    }
}

/// A thread's previous replayed call and its completion (None: none yet).
pub(super) type Prev = Option<(usize, Instant)>;

/// A call's wait: when it was due, the call that decided it, the clock's last reading (None
/// where the thread did not wait just now), and the capture's cost taken out of its recorded
/// think time (scaled by the speed).
pub(super) struct Waited {
    pub due: Instant,
    pub binding: Option<usize>,
    pub seen: Option<Instant>,
    pub taken: Duration,
}

impl Waited {
    /// The same wait, for the look that replaces this one (a poll's: `polls::cut`), which
    /// waits no more.
    pub fn again(self) -> Waited {
        Waited { seen: None, ..self }
    }
}

/// `off` with event `i`'s time off the CPU before it added (asleep, waiting for a CPU).
pub(super) fn off(s: &Shared<'_>, i: usize, off: (u64, u64)) -> (u64, u64) {
    match s.gaps.and_then(|g| g.get(&i)) {
        Some(g) => (off.0 + g.0, off.1 + g.1),
        None => off,
    }
}

/// Waits until call `i` is due (`prev`: its thread's previous replayed call and its
/// completion; `off`: the thread's time off its CPU outside calls since; `skipped`: its calls
/// not made since `prev`; `faults`: its page faults, those since `prev` replayed), counting
/// into `think` what it made of the think time.
pub(super) fn wait_due(
    s: &Shared<'_>,
    start: Instant,
    (i, prev, off, skipped): (usize, Prev, (u64, u64), u64),
    faults: Option<&super::faults::Thread<'_>>,
    think: &mut ThinkFigures,
) -> Waited {
    let faults = |from_ns: u64| faults.map_or((0, 0, Duration::ZERO), |f| f.since(from_ns));
    let capture = s.capture.map_or(0, |c| c.cost(skipped));
    let (d, binding) = due(s, start, (i, prev, off, capture), faults);
    think.computed_ns += d.burn.as_nanos() as u64;
    think.left_out_ns += d.dropped.as_nanos() as u64;
    let (due, seen) = d.wait(s.stop, super::woken::cpu_waits);
    Waited {
        due,
        binding,
        seen: Some(seen),
        taken: d.taken,
    }
}

/// When a call is due: at `at`, the last `burn` of the wait before it the thread's own
/// computation, replayed as that much of its CPU time (`think`); `dropped` the recorded waits
/// for a CPU left out of the wait (the replay's own take their place); `taken` the capture's
/// cost taken out of it.
struct Due {
    at: Instant,
    burn: Duration,
    dropped: Duration,
    taken: Duration,
}

impl Due {
    fn at(at: Instant) -> Due {
        Due {
            at,
            burn: Duration::ZERO,
            dropped: Duration::ZERO,
            taken: Duration::ZERO,
        }
    }

    /// Waits for it: until `at - burn`, then what is left of `burn` as the thread's CPU time
    /// (later than `at` where the thread waited for a CPU, as the program's would). The
    /// replay's own work since the previous call (its bookkeeping, and its lateness in
    /// getting here) stands for that much of the computation, as it stands for that much of
    /// the wait where the think time is waited out whole: were it added, a replay of tar's
    /// 47,000 calls took 1.32 times its recorded span, against 1.06 sleeping through them
    /// (`bench/results/2026-12-05-0957-vm-record-replay.md`). Its waits for a CPU since its
    /// previous call do not (`woken`: preempted after it, or woken from a sleep onto a busy
    /// CPU): the program's thread waited for a CPU there too, and then computed (`cpu_waits`:
    /// how long the thread waited so). When the call is due: where it computed, when it
    /// ended; else `at`.
    ///
    /// And the clock's last reading: each read is about 30 ns on this project's VM, and a
    /// program whose calls are a microsecond apart (`dd bs=1`) has few of them to spare.
    fn wait(&self, stop: &AtomicBool, cpu_waits: impl Fn() -> Duration) -> (Instant, Instant) {
        let from = self.at.checked_sub(self.burn).unwrap_or(self.at);
        let now = wait_until(from, stop);
        let over = now.saturating_duration_since(from);
        let ran = over - super::woken::waited_in(over, cpu_waits);
        match self.burn.checked_sub(ran).filter(|left| !left.is_zero()) {
            Some(left) => {
                let end = think(left, now, stop);
                (end, end)
            }
            None => (self.at, now),
        }
    }
}

/// The split of the recorded time before a call (`think`, ns: from its thread's previous
/// replayed call's completion, or the part after the other thread's call it started from), given
/// the time the thread was asleep and waiting for a CPU outside its calls (`off`; `gap` its
/// whole time between its calls where known): the wait (the sleep and the computation, the
/// waits for a CPU left out), the computation, and what was left out, ns.
fn split(think: u64, off: (u64, u64), gap: Option<u64>) -> (u64, u64, u64) {
    let (asleep, preempted) = off;
    // What ran: of the whole gap where known (the sleep and the waits may lie before the part
    // after an anchor: what ran is then at most that part), else of the part itself.
    let ran = gap.unwrap_or(think).saturating_sub(asleep + preempted);
    let burn = ran.min(think);
    let dropped = preempted.min(think - burn);
    (think - dropped, burn, dropped)
}

/// When the call is due, and the call that decided it (None: the recorded start). `off`:
/// the time its thread was off its CPU outside calls since its previous replayed call;
/// `capture`: the capture's cost in the recorded time before it (`Capture::cost`), taken out
/// of what ran; `faults(t)`: of its page faults replayed since then, those recorded after
/// `t`: their recorded sleep and their CPU time (ns), taken out of the think time — the sleep
/// out of the time asleep, the CPU time out of the computation —, and their time here, added
/// to it.
fn due(
    s: &Shared<'_>,
    start: Instant,
    (i, prev, off, capture): (usize, Prev, (u64, u64), u64),
    faults: impl Fn(u64) -> (u64, u64, Duration),
) -> (Due, Option<usize>) {
    let e = &s.events[i];
    let scaled = |ns: u64| s.scaled(ns);
    let think = |p: &Event| e.t.saturating_sub(p.done_ns());
    // From `from` (recorded: `from_ns`), `ns` of recorded time: split into what ran and what
    // slept where the trace says it, the faults' sleeps replaced by their time here.
    let after = |from: Instant, (from_ns, ns): (u64, u64), gap: Option<u64>| {
        let (asleep, cpu, took) = faults(from_ns);
        let (ns, from) = (ns.saturating_sub(asleep + cpu), from + took);
        match s.gaps {
            None => {
                let taken = capture.min(ns);
                Due {
                    taken: scaled(taken),
                    ..Due::at(from + scaled(ns - taken))
                }
            }
            Some(_) => {
                let off = (off.0.saturating_sub(asleep), off.1);
                let gap = gap.map(|g| g.saturating_sub(asleep + cpu));
                // The capture's cost is CPU time: out of what ran, never more.
                let ran = gap.unwrap_or(ns).saturating_sub(off.0 + off.1);
                let taken = capture.min(ran).min(ns);
                let (wait, burn, dropped) = split(ns - taken, off, gap.map(|g| g - taken));
                Due {
                    at: from + scaled(wait),
                    burn: scaled(burn),
                    dropped: scaled(dropped),
                    taken: scaled(taken),
                }
            }
        }
    };
    match (s.mode, prev) {
        // No think time, but what the threads waited for kept (a shell's `a; b`: `b`'s first
        // call after `a`'s last): due now, after those.
        (Mode::Afap, _) => {
            let from = started_from(s, start, i, |_| Duration::ZERO);
            let now = Due::at(Instant::now());
            match (prev, from) {
                (Some((p, done)), Some((at, _))) if done > at => (now, Some(p)),
                (_, Some((_, f))) => (now, Some(f)),
                (_, None) => (now, prev.map(|p| p.0)),
            }
        }
        (Mode::Open, _) => (Due::at(start + scaled(e.t)), None),
        (Mode::Closed, _) => {
            // A call that starts from another thread's (it waited for it) is due the recorded
            // time after that one completed, and not before its own thread's previous call
            // completed; the others the recorded think time after their previous call.
            let gap = prev.map(|(p, _)| think(&s.events[p]));
            match (prev, started_from(s, start, i, scaled)) {
                (Some((p, done)), Some((at, _))) if done > at => {
                    (Due::at(done + faults(s.events[p].done_ns()).2), Some(p))
                }
                (_, Some((at, f))) => {
                    // The recorded time after the call it starts from.
                    let from = completed_at(s, start, f);
                    let ns =
                        (at.saturating_duration_since(from).as_nanos() as f64 * s.speed) as u64;
                    (after(from, (s.events[f].done_ns(), ns), gap), Some(f))
                }
                (Some((p, done)), None) => {
                    let recorded = (s.events[p].done_ns(), gap.unwrap_or(0));
                    (after(done, recorded, gap), Some(p))
                }
                (None, None) => {
                    let (asleep, cpu, took) = faults(0);
                    let ns = e.t.saturating_sub(asleep + cpu);
                    (Due::at(start + took + scaled(ns)), None)
                }
            }
        }
    }
}

/// Below this a computation spins for its wall time: reading the thread's CPU clock is a
/// system call (about 0.4 µs on this project's VM), and reading it twice for each of tar's
/// 47,000 short think times made its replay 1.19 times its recorded span, against 1.05
/// sleeping through them (1.05 and 1.02 since); a wait for a CPU inside so short a spin is
/// rare.
const CLOCKED: Duration = Duration::from_micros(20);

/// Uses `d` of the calling thread's CPU time, spinning: the program's computation between
/// two calls, which takes longer where the thread waits for a CPU (its other threads, or
/// other programs, busy on them), as the program's did. Where the platform has no thread CPU
/// clock (Windows), and below CLOCKED, `d` of wall time from `now` (then a wait for a CPU
/// counts in it). When it ended.
fn think(d: Duration, now: Instant, stop: &AtomicBool) -> Instant {
    let clock = match d >= CLOCKED {
        true => crate::platform::cpu::thread_cpu_ns(),
        false => None,
    };
    let Some(t0) = clock else {
        let until = now + d;
        loop {
            let now = Instant::now();
            if now >= until || stop.load(Ordering::Relaxed) {
                return now;
            }
            std::hint::spin_loop();
        }
    };
    let until = t0.saturating_add(d.as_nanos() as u64);
    while !stop.load(Ordering::Relaxed) {
        for _ in 0..32 {
            std::hint::spin_loop();
        }
        if crate::platform::cpu::thread_cpu_ns().is_none_or(|now| now >= until) {
            break;
        }
    }
    Instant::now()
}

/// The shortest sleep a replay thread takes: a wait shorter than this past its margin is spun.
pub(super) const SHORTEST_NAP: Duration = Duration::from_micros(20);
/// The sleep whose lateness sets the margin.
const NAP: Duration = Duration::from_micros(50);

std::thread_local! {
    /// How long before a due time the calling thread stops sleeping and spins (`ready_sleeps`).
    static MARGIN: std::cell::Cell<Duration> =
        const { std::cell::Cell::new(Duration::from_micros(100)) };
}

/// Readies the calling replay thread's sleeps: precise (no timer slack), and its margin — how
/// late its sleeps end here, measured: the upper quartile of 16 sleeps of 50 µs plus 5 µs,
/// between 5 and 200 µs (about 1 ms, before the replay's start). A fixed 100 µs margin, with
/// the kernel's default 50 µs slack, spun up to 150 µs before each due time: CPU time the
/// program, asleep there, did not take, which where the replay's threads outnumber the CPUs
/// the ones computing waited behind.
pub(super) fn ready_sleeps() {
    crate::platform::cpu::precise_sleeps();
    let mut late: Vec<Duration> = (0..16)
        .map(|_| {
            let t = Instant::now();
            std::thread::sleep(NAP);
            t.elapsed().saturating_sub(NAP)
        })
        .collect();
    late.sort_unstable();
    let margin = (late[12] + Duration::from_micros(5))
        .clamp(Duration::from_micros(5), Duration::from_micros(200));
    MARGIN.with(|m| m.set(margin));
}

/// Sleeps until the thread's margin before `t` (waking every 50 ms to see a stop), then
/// spins until it. The recorded think time is the program's own work, which keeps its CPU
/// until the scheduler takes it; a yield would give the CPU to any thread waiting for one, for
/// that thread's time slice — milliseconds beside a busy program, or the replay's other
/// threads where they outnumber the CPUs — which the program never did (a replay of four
/// processes on two CPUs was late by a slice at a time, and its prediction 25–44% short on
/// tmpfs).
///
/// The clock's last reading (past `t` unless stopped).
pub(super) fn wait_until(t: Instant, stop: &AtomicBool) -> Instant {
    let margin = MARGIN.with(std::cell::Cell::get);
    loop {
        let now = Instant::now();
        if now >= t || stop.load(Ordering::Relaxed) {
            return now;
        }
        let left = t - now;
        if left >= margin + SHORTEST_NAP {
            std::thread::sleep((left - margin).min(Duration::from_millis(50)));
        } else {
            std::hint::spin_loop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A thread that got to a computation late: the lateness stands for that much of it where
    /// the thread was at work (the replay's bookkeeping), not where it waited for a CPU — then
    /// the computation is all still to do.
    #[test]
    fn a_late_start_shortens_the_computation_unless_the_thread_waited_for_a_cpu() {
        let stop = AtomicBool::new(false);
        let burn = Duration::from_millis(20);
        let due = || Due {
            // Its computation was to begin 30 ms ago.
            at: Instant::now() - Duration::from_millis(10),
            burn,
            dropped: Duration::ZERO,
            taken: Duration::ZERO,
        };
        // Late by more than the computation, at work: due when it was, nothing computed.
        let d = due();
        let t = Instant::now();
        let (due_at, seen) = d.wait(&stop, || Duration::ZERO);
        assert_eq!(due_at, d.at);
        assert!(seen >= t, "the clock's reading is the wait's own");
        assert!(t.elapsed() < Duration::from_millis(10), "{:?}", t.elapsed());
        // Late as long, every bit of it waiting for a CPU: the whole computation now.
        let t = Instant::now();
        let (until, seen) = due().wait(&stop, || Duration::from_millis(30));
        assert_eq!(
            seen, until,
            "a computation's end is the clock's last reading"
        );
        assert!(
            t.elapsed() >= burn,
            "computed {:?} of {burn:?}",
            t.elapsed()
        );
        assert!(until >= t + burn);
        // 25 of its 30 ms waiting: 5 ms at work, 15 ms of the computation left.
        let t = Instant::now();
        due().wait(&stop, || Duration::from_millis(25));
        let took = t.elapsed();
        assert!(took >= Duration::from_millis(15), "{took:?}");
    }

    #[test]
    fn a_think_time_splits_into_its_sleep_its_computation_and_its_waits_left_out() {
        // 1,000 ns between two calls: 300 asleep, 200 waiting for a CPU, 500 ran. The replay
        // waits 800 (the sleep, then the computation: its last 500 as CPU time), 200 left out.
        assert_eq!(split(1_000, (300, 200), Some(1_000)), (800, 500, 200));
        // The 400 after the call it started from (another thread's): at most that ran there,
        // and nothing is left to leave out.
        assert_eq!(split(400, (300, 200), Some(1_000)), (400, 400, 0));
        // 600 after it: 500 ran, and 100 of the waits for a CPU were there.
        assert_eq!(split(600, (300, 200), Some(1_000)), (500, 500, 100));
        // A thread's first call (no call before it to measure from): of the part itself.
        assert_eq!(split(600, (100, 50), None), (550, 450, 50));
        // Nothing off the CPU: all of it ran.
        assert_eq!(split(700, (0, 0), Some(700)), (700, 700, 0));
    }

    /// Below CLOCKED a computation spins its wall time, counted from the clock reading it is
    /// given (the wait's own: no second read), and ends at its last reading.
    #[test]
    fn a_short_computation_spins_from_the_reading_it_is_given() {
        let stop = AtomicBool::new(false);
        let t = Instant::now();
        let d = Duration::from_micros(5);
        let end = think(d, t, &stop);
        assert!(end >= t + d, "ended {:?} after its start", end - t);
        assert!(end <= Instant::now());
        // Given a reading long past, it is over at once: nothing is spun again.
        let long_ago = Instant::now() - Duration::from_millis(1);
        let t = Instant::now();
        think(d, long_ago, &stop);
        assert!(
            t.elapsed() < Duration::from_micros(500),
            "{:?}",
            t.elapsed()
        );
    }

    #[test]
    fn a_computation_uses_the_threads_cpu_time_and_a_stop_ends_it() {
        let Some(before) = crate::platform::cpu::thread_cpu_ns() else {
            eprintln!("SKIP: no thread CPU clock on this platform (a computation spins its time)");
            return;
        };
        let t = Instant::now();
        let end = think(Duration::from_millis(20), t, &AtomicBool::new(false));
        assert!(
            end >= t + Duration::from_millis(20),
            "ended {:?} in",
            end - t
        );
        let used = crate::platform::cpu::thread_cpu_ns().unwrap() - before;
        assert!(used >= 20_000_000, "{used} ns of CPU");
        let t0 = Instant::now();
        think(Duration::from_secs(60), t0, &AtomicBool::new(true));
        assert!(t0.elapsed() < Duration::from_secs(1));
    }
}
