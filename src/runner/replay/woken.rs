//! A replay thread's waits for a CPU between its calls. Where the CPUs are busy (the
//! replay's other threads, other programs), a thread waits for one — preempted after a call,
//! or woken from its sleep until a call's time or by another thread's call — as the program's
//! thread did in the same places. Those waits are neither the thread's computation (a late
//! start does not shorten it) nor the replay's own delay (`predict` does not take them away):
//! the recorded waits for a CPU are left out of the think times (`think::split`), and these
//! take their place. The thread's run delay (`platform::cpu::thread_run_delay_ns`, about a
//! microsecond a read) is read when each call completes, and again where the next is late —
//! only where the replay's threads outnumber the CPUs (`count`), where they take the CPU from
//! each other: a microsecond or three a call is more than some programs think between their
//! calls (tar's replay took 1.5 times its recorded span with them, against 0.93). Elsewhere,
//! and where the platform keeps no run delay (Windows), nothing is counted: a wait for a CPU
//! there (another program's) is the replay's own delay, as before.

use std::cell::Cell;
use std::time::{Duration, Instant};

std::thread_local! {
    /// Whether the calling thread counts its waits (`count`).
    static COUNTS: Cell<bool> = const { Cell::new(false) };
    /// The calling thread's run delay when its previous call completed (or it started).
    static SINCE: Cell<Option<u64>> = const { Cell::new(None) };
}

/// Whether the calling replay thread counts its waits for a CPU: where `threads`, the
/// replay's, outnumber this machine's CPUs.
pub fn count(threads: usize) {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    COUNTS.with(|c| c.set(threads > cpus));
    SINCE.with(|s| s.set(None));
}

/// The calling replay thread's call completed (or it starts its calls): its waits for a CPU
/// count from here.
pub fn call_done() {
    if COUNTS.with(Cell::get) {
        SINCE.with(|s| s.set(crate::platform::cpu::thread_run_delay_ns()));
    }
}

/// How long the calling thread has waited for a CPU since its previous call completed.
pub fn cpu_waits() -> Duration {
    if !COUNTS.with(Cell::get) {
        return Duration::ZERO;
    }
    SINCE
        .with(Cell::get)
        .zip(crate::platform::cpu::thread_run_delay_ns())
        .map_or(Duration::ZERO, |(a, b)| {
            Duration::from_nanos(b.saturating_sub(a))
        })
}

/// Of `late` (how long after some moment the thread is), the part it spent waiting for a CPU
/// since its previous call (`cpu_waits`, read only where it is late: at most all of `late`).
pub fn waited_in(late: Duration, cpu_waits: impl Fn() -> Duration) -> Duration {
    if late.is_zero() {
        return late;
    }
    cpu_waits().min(late)
}

/// How long the calling thread waited for a CPU since its previous call and after `t` (at
/// most the time since `t`); nothing read, not even the clock, where it does not count.
pub fn waited_since(t: Instant) -> Duration {
    match COUNTS.with(Cell::get) {
        true => waited_in(t.elapsed(), cpu_waits),
        false => Duration::ZERO,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lateness_holds_at_most_all_of_the_waits_and_none_is_read_when_not_late() {
        let ms = Duration::from_millis;
        assert_eq!(waited_in(ms(5), || ms(2)), ms(2));
        assert_eq!(waited_in(ms(5), || ms(9)), ms(5));
        assert_eq!(
            waited_in(Duration::ZERO, || panic!("read when not late")),
            Duration::ZERO
        );
    }

    /// Measured from the call's completion: a thread kept from its CPU counts that wait, and
    /// after its next call's completion counts none of it; a thread that does not count
    /// (fewer replay threads than CPUs) counts none.
    #[test]
    fn waits_count_from_the_last_call_done() {
        if crate::platform::cpu::thread_run_delay_ns().is_none() {
            println!("SKIP waits for a CPU: no run delay here (/proc/thread-self/schedstat)");
            return;
        }
        let measured = std::thread::spawn(|| {
            // A real-time rival on this thread's CPU from 5 ms to 55 ms.
            let ms = Duration::from_millis;
            let rival = crate::platform::rival::Rival::beside_me(ms(5), ms(50), true)?;
            count(usize::MAX);
            call_done();
            // Sleeps while the rival takes its CPU, then waits for it to stop.
            std::thread::sleep(ms(10));
            let waited = cpu_waits();
            call_done();
            let after = cpu_waits();
            drop(rival);
            count(1);
            call_done();
            std::thread::sleep(ms(1));
            Ok::<_, std::io::Error>((waited, after, cpu_waits()))
        });
        let (waited, after, not_counting) = match measured.join().unwrap() {
            Ok(r) => r,
            Err(e) => {
                println!("SKIP waits for a CPU: no real-time rival on this CPU here ({e})");
                return;
            }
        };
        assert!(waited >= Duration::from_millis(20), "waited {waited:?}");
        assert!(
            after < Duration::from_millis(5),
            "after the call: {after:?}"
        );
        assert_eq!(not_counting, Duration::ZERO);
    }
}
