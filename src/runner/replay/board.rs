//! Where a replay thread waits for another thread's call to complete: asleep, not polling. A
//! wait that polls (yields, 20 µs sleeps in turn) takes CPU time the recorded program never
//! took — its threads slept on a lock, a pipe or a socket until woken — and where the replay's
//! threads outnumber the CPUs, the ones computing wait for a CPU behind the ones polling: a
//! replay of pgbench (about 20 tasks, 2 CPUs) spent 11% of its CPU time in sched_yield and
//! another 15% in its short sleeps, and its threads waited 2.9 s for a CPU (0.8 s parked,
//! with `think`'s precise sleeps; docs/trace.md). Each recorded thread
//! has a slot; a thread waiting for one of that thread's calls registers in the slot and
//! parks, and whoever marks one of its calls complete (the thread itself, or the reaper of its
//! asynchronous I/O) wakes the slot's waiters, where there are any. A thread waiting to learn
//! whether a call is issued by a time (`issue::issued_by`) waits in the same slot, until then
//! at most: a call that is issued is waited for to complete next.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering, fence};
use std::thread::Thread;
use std::time::{Duration, Instant};

use crate::trace::recording::Event;

/// How long a parked waiter sleeps before it looks again on its own (a stop, a wake-up lost
/// to nothing: every wait is a loop on its condition).
const LOOK_AGAIN: Duration = Duration::from_millis(50);
/// Looks at the condition before parking: a call that completes within a microsecond or so
/// costs no sleep.
const SPINS: u32 = 64;
/// A wait with an end spins its last stretch.
const SPUN: Duration = Duration::from_micros(50);

#[derive(Default)]
struct Slot {
    /// Waiters registered since the last wake-up (read without the lock by the waker).
    waiting: AtomicUsize,
    parked: Mutex<Vec<Thread>>,
}

std::thread_local! {
    static PARKS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many times the calling thread parked in [`Board::wait`]: a replay thread that parked
/// since it last read its context switches reads them again before its next call.
pub fn parks() -> u64 {
    PARKS.with(|p| p.get())
}

/// The slots, one per recorded thread.
pub struct Board {
    slots: HashMap<u32, Slot>,
    look_again: Duration,
}

impl Board {
    pub fn new(events: &[Event]) -> Board {
        let mut slots = HashMap::new();
        for e in events {
            slots.entry(e.tid).or_insert_with(Slot::default);
        }
        Board {
            slots,
            look_again: LOOK_AGAIN,
        }
    }

    /// How many recorded threads (the replay's threads).
    pub fn threads(&self) -> usize {
        self.slots.len()
    }

    /// Wakes whoever waits for a call of `tid`; after that call's completion is stored.
    pub fn wake(&self, tid: u32) {
        let Some(slot) = self.slots.get(&tid) else {
            return;
        };
        // Against the waiter's fence: either it sees the completion, or this sees it waiting.
        fence(Ordering::SeqCst);
        if slot.waiting.load(Ordering::Relaxed) == 0 {
            return;
        }
        let parked = {
            let mut list = slot.parked.lock().unwrap_or_else(|e| e.into_inner());
            slot.waiting.store(0, Ordering::Relaxed);
            std::mem::take(&mut *list)
        };
        for t in parked {
            t.unpark();
        }
    }

    /// Waits until `ready()`, looked at again at each wake-up from a call of `tid` and every
    /// [`LOOK_AGAIN`]. A waiter is registered at most once; its registration may outlive its
    /// wait (its call came before it parked): the wake-up it gets later only makes a later
    /// park look once more.
    pub fn wait(&self, tid: u32, ready: impl Fn() -> bool) {
        self.wait_by(tid, ready, None);
    }

    /// As [`Board::wait`], but no later than `by` where there is one (the last stretch, under
    /// [`SPUN`], spun: a park may end tens of microseconds late).
    pub fn wait_by(&self, tid: u32, ready: impl Fn() -> bool, by: Option<Instant>) {
        let left = || by.map(|by| by.saturating_duration_since(Instant::now()));
        let done = || ready() || left().is_some_and(|l| l.is_zero());
        for _ in 0..SPINS {
            if done() {
                return;
            }
            std::hint::spin_loop();
        }
        let Some(slot) = self.slots.get(&tid) else {
            while !done() {
                std::thread::sleep(Duration::from_micros(100));
            }
            return;
        };
        let me = std::thread::current();
        loop {
            {
                // Once: a park that ended on its own (its look, or spuriously) leaves the
                // registration in place, and so may a wait that ended before it parked.
                let mut list = slot.parked.lock().unwrap_or_else(|e| e.into_inner());
                if !list.iter().any(|t| t.id() == me.id()) {
                    list.push(me.clone());
                    slot.waiting.fetch_add(1, Ordering::Relaxed);
                }
            }
            fence(Ordering::SeqCst);
            if done() {
                return;
            }
            match left() {
                Some(l) if l < SPUN => {
                    while !done() {
                        std::hint::spin_loop();
                    }
                    return;
                }
                l => {
                    PARKS.with(|p| p.set(p.get() + 1));
                    std::thread::park_timeout(
                        l.map_or(self.look_again, |l| (l - SPUN).min(self.look_again)),
                    );
                }
            }
            if done() {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::time::Instant;

    fn events(tids: &[u32]) -> Vec<Event> {
        tids.iter()
            .map(|&tid| Event::test(0, 0, tid, crate::trace::recording::Op::Read))
            .collect()
    }

    /// A board whose waiters look again on their own only after `look_again`.
    fn board(tids: &[u32], look_again: Duration) -> Board {
        Board {
            look_again,
            ..Board::new(&events(tids))
        }
    }

    /// Until `tid`'s slot has a waiter registered.
    fn until_waiting(b: &Board, tid: u32) {
        while b.slots[&tid].waiting.load(Ordering::Relaxed) == 0 {
            std::thread::yield_now();
        }
    }

    #[test]
    fn a_waiter_sleeps_until_the_call_it_waits_for_is_marked_and_takes_no_cpu_meanwhile() {
        // Its own looks 10 s apart: only the mark's wake-up can end the wait in time.
        let board = board(&[1, 2], Duration::from_secs(10));
        let done = AtomicBool::new(false);
        std::thread::scope(|sc| {
            let waiter = sc.spawn(|| {
                let cpu0 = crate::platform::cpu::thread_cpu_ns();
                board.wait(2, || done.load(Ordering::Acquire));
                crate::platform::cpu::thread_cpu_ns()
                    .zip(cpu0)
                    .map(|(b, a)| b - a)
            });
            until_waiting(&board, 2);
            let t = Instant::now();
            std::thread::sleep(Duration::from_millis(30));
            done.store(true, Ordering::Release);
            board.wake(2);
            let cpu = waiter.join().unwrap();
            assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
            // Asleep for the 30 ms: a polling wait would have run for much of them.
            match cpu {
                Some(cpu) => assert!(cpu < 5_000_000, "the wait took {cpu} ns of CPU"),
                None => println!("SKIP the wait's CPU time: no thread CPU clock here"),
            }
        });
    }

    #[test]
    fn a_call_of_another_thread_wakes_no_one_waiting_for_this_one() {
        let board = board(&[1, 2], Duration::from_secs(10));
        let done = AtomicBool::new(false);
        let waiting = |tid: u32| {
            let slot = &board.slots[&tid];
            let parked = slot.parked.lock().unwrap().len();
            (slot.waiting.load(Ordering::Relaxed), parked)
        };
        std::thread::scope(|sc| {
            let waiter = sc.spawn(|| board.wait(2, || done.load(Ordering::Acquire)));
            until_waiting(&board, 2);
            // Thread 1's call: the waiter stays registered, unwoken, and once (were its park
            // to return on its own, as a park may, it would not register again).
            board.wake(1);
            assert_eq!(waiting(2), (1, 1));
            done.store(true, Ordering::Release);
            board.wake(2);
            waiter.join().unwrap();
            assert_eq!(waiting(2), (0, 0));
        });
    }

    /// A wait with an end (`issue::issued_by`) ends then, not at its next look of its own,
    /// and sooner where the call it waits for is marked.
    #[test]
    fn a_wait_with_an_end_ends_by_then_or_when_woken() {
        let board = board(&[1], Duration::from_secs(10));
        let t = Instant::now();
        board.wait_by(1, || false, Some(t + Duration::from_millis(20)));
        let took = t.elapsed();
        assert!(
            took >= Duration::from_millis(20) && took < Duration::from_secs(2),
            "{took:?}"
        );
        let done = AtomicBool::new(false);
        std::thread::scope(|sc| {
            let t = Instant::now();
            let waiter = sc.spawn(|| {
                let end = Instant::now() + Duration::from_secs(5);
                board.wait_by(1, || done.load(Ordering::Acquire), Some(end));
            });
            until_waiting(&board, 1);
            done.store(true, Ordering::Release);
            board.wake(1);
            waiter.join().unwrap();
            assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
        });
    }

    #[test]
    fn a_call_marked_before_the_wait_is_not_waited_for() {
        let board = Board::new(&events(&[7]));
        let t = Instant::now();
        board.wait(7, || true);
        // And a thread the board does not know (no slot) still waits on its condition.
        board.wait(99, || true);
        assert!(t.elapsed() < Duration::from_millis(5));
    }
}
