//! Replay threads waiting for another thread's call: after a few microseconds' spin, parked
//! until that call completes, and woken by the thread that completes it — as the program's
//! threads were woken by each other (a reply on a socket, a lock released). Polling instead
//! (100 yields, then 20 µs sleeps, until 2026-12-05) kept pgbench's replays to tmpfs 2–5%
//! longer, its waits ending up to a sleep's length and its timer's wake-up late.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering, fence};
use std::thread::Thread;
use std::time::{Duration, Instant};

/// How long a waiter spins before it parks: a wait this short is over before a wake-up would
/// have come.
const SPIN: Duration = Duration::from_micros(3);
/// A parked waiter looks again after this, woken or not: it sees a stop (Ctrl-C) within it.
/// Its wake-up comes from the completion, not from this.
const LOOK_AGAIN: Duration = Duration::from_millis(100);

/// The threads parked, each with the call it waits for.
#[derive(Default)]
pub struct Parked {
    waiting: Mutex<Vec<(usize, Thread)>>,
    count: AtomicUsize,
}

impl Parked {
    /// Waits until call `j` has completed (`done` set) or the replay is stopped.
    pub fn wait(&self, done: &AtomicU64, j: usize, stop: &AtomicBool) {
        let over = |d: &AtomicU64| d.load(Ordering::Acquire) != 0 || stop.load(Ordering::Relaxed);
        let t0 = Instant::now();
        while t0.elapsed() < SPIN {
            if over(done) {
                return;
            }
            std::hint::spin_loop();
        }
        while !over(done) {
            {
                let mut w = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
                w.push((j, std::thread::current()));
                self.count.store(w.len(), Ordering::SeqCst);
            }
            // Looked at after the waiter is listed: a completion before this is seen here, one
            // after it finds the waiter listed (`completed` fences before it counts).
            if done.load(Ordering::SeqCst) == 0 && !stop.load(Ordering::Relaxed) {
                std::thread::park_timeout(LOOK_AGAIN);
            }
            let me = std::thread::current().id();
            let mut w = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
            w.retain(|(k, t)| *k != j || t.id() != me);
            self.count.store(w.len(), Ordering::SeqCst);
        }
    }

    /// Call `j` has completed (its `done` is set): its waiters are woken.
    pub fn completed(&self, j: usize) {
        fence(Ordering::SeqCst);
        if self.count.load(Ordering::SeqCst) == 0 {
            return;
        }
        let mut w = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        w.retain(|(k, t)| {
            if *k == j {
                t.unpark();
            }
            *k != j
        });
        self.count.store(w.len(), Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_waiter_is_woken_by_the_completion_it_waits_for_and_not_before() {
        let parked = Parked::default();
        let (done, other) = (AtomicU64::new(0), AtomicU64::new(0));
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            let waiter = s.spawn(|| {
                let t0 = Instant::now();
                parked.wait(&done, 7, &stop);
                t0.elapsed()
            });
            std::thread::sleep(Duration::from_millis(20));
            // Another call's completion wakes no one waiting for call 7.
            other.store(1, Ordering::Release);
            parked.completed(8);
            std::thread::sleep(Duration::from_millis(20));
            assert!(!waiter.is_finished());
            done.store(1, Ordering::Release);
            let completed = Instant::now();
            parked.completed(7);
            let waited = waiter.join().unwrap();
            assert!(waited >= Duration::from_millis(40));
            // Woken by the completion, not by its own look again (100 ms after it parked).
            assert!(completed.elapsed() < Duration::from_millis(50));
        });
        assert_eq!(parked.count.load(Ordering::SeqCst), 0);
        // A stop ends a wait for a call that never completes.
        let never = AtomicU64::new(0);
        stop.store(true, Ordering::Relaxed);
        parked.wait(&never, 9, &stop);
    }
}
