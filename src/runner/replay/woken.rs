//! A replay thread's waits for a CPU once woken. Asleep before a call — until its due time,
//! or parked until another thread's call completes — a thread that wakes where the CPUs are
//! busy waits for one before it runs, as the program's thread did after the sleep or the
//! wake-up that ended its own wait (a timer, a lock, a pipe, a socket). That wait is neither
//! the thread's computation (a late start does not shorten it) nor the replay's own delay
//! (`predict` does not take it away): the recorded waits for a CPU are left out of the think
//! times (`think::split`), and these take their place. Each sleep is bracketed by two reads of
//! the thread's run delay (`platform::cpu::thread_run_delay_ns`, about a microsecond each).
//! Where the platform keeps no run delay (Windows) nothing is counted.

use std::cell::Cell;
use std::time::{Duration, Instant};

std::thread_local! {
    /// For the calling thread's current call: its waits for a CPU after its sleeps, and when
    /// the last of those sleeps ended (it ran again).
    static WOKEN: Cell<(Duration, Option<Instant>)> = const { Cell::new((Duration::ZERO, None)) };
}

/// The calling replay thread begins waiting for its next call.
pub fn next_call() {
    WOKEN.with(|w| w.set((Duration::ZERO, None)));
}

/// Runs `sleep` (a sleep or a park), counting the wait for a CPU that ended it.
pub fn asleep<R>(sleep: impl FnOnce() -> R) -> R {
    let before = crate::platform::cpu::thread_run_delay_ns();
    let r = sleep();
    if let Some(waited) = before
        .zip(crate::platform::cpu::thread_run_delay_ns())
        .map(|(a, b)| Duration::from_nanos(b.saturating_sub(a)))
    {
        WOKEN.with(|w| {
            let (sum, _) = w.get();
            w.set((sum + waited, Some(Instant::now())));
        });
    }
    r
}

/// How much of the time since `t` the calling thread spent waiting for a CPU after its sleeps
/// for its current call: at most those waits, and at most the time from `t` to the end of
/// the last sleep (a wait that ended before `t` is not in it).
pub fn cpu_waits_since(t: Instant) -> Duration {
    let (sum, last) = WOKEN.with(Cell::get);
    last.map_or(Duration::ZERO, |end| {
        sum.min(end.saturating_duration_since(t))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_count_from_the_time_asked_about_up_to_the_last_wake_up() {
        next_call();
        assert_eq!(cpu_waits_since(Instant::now()), Duration::ZERO);
        let t0 = Instant::now();
        WOKEN.with(|w| {
            w.set((
                Duration::from_millis(3),
                Some(t0 + Duration::from_millis(10)),
            ))
        });
        // Asked from well before: all 3 ms.
        assert_eq!(cpu_waits_since(t0), Duration::from_millis(3));
        // From 1 ms before the wake-up: at most that 1 ms lay after it.
        assert_eq!(
            cpu_waits_since(t0 + Duration::from_millis(9)),
            Duration::from_millis(1)
        );
        // From after the wake-up: none.
        assert_eq!(
            cpu_waits_since(t0 + Duration::from_millis(11)),
            Duration::ZERO
        );
        next_call();
        assert_eq!(cpu_waits_since(t0), Duration::ZERO);
    }
}
