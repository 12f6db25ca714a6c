//! The scheduler's view of the recorded threads, from perf's context-switch records: which
//! recorded calls slept (gave up their CPU to wait for the device, a lock, a page) and, outside
//! the calls the trace holds, how long each thread was asleep (page faults, calls not watched
//! or on pipes and sockets, waits for other threads and processes) or ready to run but waiting
//! for a CPU. It only keeps counts; the decoder asks it
//! at each call's entry and exit.

use std::collections::HashMap;

use super::perf::{Switch, Waking};
use crate::trace::recording::{OffCpu, Wake};

/// What the scheduler said of the program's tasks: their switches, and who woke whom among
/// them (None: the capture could not ask).
#[derive(Debug, Default)]
pub struct Records {
    pub switches: Vec<Switch>,
    pub wakings: Option<Vec<Waking>>,
}

#[derive(Default)]
struct Task {
    /// When it left its CPU, and whether it was preempted (still runnable).
    left: Option<(u64, bool)>,
    in_call: bool,
    call_slept: bool,
    /// Time asleep in the call under way (or the last one).
    call_asleep: u64,
    off: OffCpu,
    /// The sleep under way was ended by another task of the program.
    woken: bool,
    /// `off`'s time asleep and waiting for a CPU outside calls when its last gap was taken.
    gapped: (u64, u64),
    /// Its last sleep outside calls since its last call's entry, where no task of the
    /// program ended it: when it left, when it was back (for a page fault that ends just
    /// after).
    last_sleep: Option<(u64, u64)>,
}

/// The longest a page fault's report follows the end of its sleep: the fault maps the page
/// it waited for and returns (microseconds), or waits for a CPU first.
const FAULT_AFTER_SLEEP_NS: u64 = 1_000_000;

/// Per thread, what the switch records said (`measured`: the capture asked for them).
#[derive(Default)]
pub struct Sched {
    measured: bool,
    tasks: HashMap<u32, Task>,
    /// Each sleep that another of the program's tasks ended, in time order (the capture's
    /// clock: `t0` is not taken away yet).
    pub wakes: Vec<Wake>,
}

impl Sched {
    pub fn new(measured: bool) -> Sched {
        Sched {
            measured,
            tasks: HashMap::new(),
            wakes: Vec::new(),
        }
    }

    /// A switch record: `tid` left its CPU (`out`) or came back to one.
    pub fn switch(&mut self, t: u64, tid: u32, out: bool, preempted: bool) {
        let k = self.tasks.entry(tid).or_default();
        if out {
            k.left = Some((t, preempted));
            k.woken = false;
            return;
        }
        let Some((left, preempted)) = k.left.take() else {
            return;
        };
        if k.in_call {
            k.call_slept |= !preempted;
            if !preempted {
                k.call_asleep += t.saturating_sub(left);
            }
        } else if preempted {
            k.off.think_preempted_ns += t.saturating_sub(left);
        } else {
            k.off.think_asleep_ns += t.saturating_sub(left);
            k.off.think_sleeps += 1;
            // A sleep another task of the program ended (a lock, a pipe, a child) waited for
            // that task, not for a page: no fault's.
            k.last_sleep = (!k.woken).then_some((left, t));
        }
    }

    /// A major page fault of `tid` reported at `t`, as it ended: the time it slept in it (the
    /// sleep outside calls that ended just before, unless a task of the program ended it; 0
    /// where none did, or nothing was measured).
    /// That sleep stays in the thread's think time asleep: the fault's is part of it.
    pub fn fault(&mut self, tid: u32, t: u64) -> u64 {
        let Some(k) = self.tasks.get_mut(&tid) else {
            return 0;
        };
        match k.last_sleep.take() {
            Some((left, back)) if t.saturating_sub(back) <= FAULT_AFTER_SLEEP_NS && back <= t => {
                back - left
            }
            _ => 0,
        }
    }

    /// `by` woke `tid` at `t`: where `tid` was asleep (not preempted) and this is the first
    /// wake-up of that sleep, it is kept — the sleep waited for `by`.
    pub fn waking(&mut self, t: u64, by: u32, tid: u32) {
        let Some(k) = self.tasks.get_mut(&tid) else {
            return;
        };
        if let (Some((left, false)), false) = (k.left, k.woken) {
            k.woken = true;
            self.wakes.push(Wake {
                t,
                tid,
                by,
                asleep_ns: t.saturating_sub(left),
            });
        }
    }

    /// A watched call's entry.
    pub fn enter(&mut self, tid: u32) {
        if self.measured {
            let k = self.tasks.entry(tid).or_default();
            k.in_call = true;
            k.call_slept = false;
            k.call_asleep = 0;
            k.last_sleep = None;
        }
    }

    /// A watched call's exit: whether it slept.
    pub fn exit(&mut self, tid: u32) -> bool {
        let Some(k) = self.tasks.get_mut(&tid) else {
            return false;
        };
        k.in_call = false;
        if k.call_slept {
            k.off.calls_slept += 1;
        }
        std::mem::take(&mut k.call_slept)
    }

    /// The call that just exited is not in the trace (on a pipe, a socket, a terminal; one the
    /// decoder does not keep): what it slept was outside the trace's calls — a wait for
    /// another process, as often as not — and counts as such.
    pub fn untraced(&mut self, tid: u32) {
        let Some(k) = self.tasks.get_mut(&tid) else {
            return;
        };
        if k.call_asleep > 0 {
            k.off.think_asleep_ns += std::mem::take(&mut k.call_asleep);
            k.off.think_sleeps += 1;
        }
    }

    /// The time `tid` was asleep and waiting for a CPU outside its calls since the last time
    /// this was asked (a kept call's exit asks: the gap before that call, and before the calls
    /// not kept since the last kept one). None: not measured.
    pub fn gap(&mut self, tid: u32) -> Option<(u64, u64)> {
        if !self.measured {
            return None;
        }
        let k = self.tasks.entry(tid).or_default();
        let now = (k.off.think_asleep_ns, k.off.think_preempted_ns);
        let was = std::mem::replace(&mut k.gapped, now);
        Some((now.0 - was.0, now.1 - was.1))
    }

    /// A thread's time off its CPU (None: not measured).
    pub fn off_cpu(&self, tid: u32) -> Option<OffCpu> {
        self.measured
            .then(|| self.tasks.get(&tid).map(|k| k.off).unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleeps_in_calls_mark_the_call_and_the_rest_is_think_asleep_or_preempted() {
        let mut s = Sched::new(true);
        s.enter(7);
        s.switch(100, 7, true, false);
        s.switch(900, 7, false, false);
        assert!(s.exit(7));
        // Preempted in a call: the call did not sleep.
        s.enter(7);
        s.switch(1_000, 7, true, true);
        s.switch(1_300, 7, false, false);
        assert!(!s.exit(7));
        // Outside calls: asleep 500 ns once, preempted 200 ns.
        s.switch(2_000, 7, true, false);
        s.switch(2_500, 7, false, false);
        s.switch(3_000, 7, true, true);
        s.switch(3_200, 7, false, false);
        assert_eq!(
            s.off_cpu(7),
            Some(OffCpu {
                calls_slept: 1,
                think_asleep_ns: 500,
                think_sleeps: 1,
                think_preempted_ns: 200,
            })
        );
        assert_eq!(s.off_cpu(8), Some(OffCpu::default()));
        // The gap before the next call: all of it so far; then only what came since.
        assert_eq!(s.gap(7), Some((500, 200)));
        assert_eq!(s.gap(7), Some((0, 0)));
        // A call the trace does not keep (a read of a pipe) slept 4,000 ns: outside the
        // trace's calls. One that did not sleep adds nothing there.
        s.enter(7);
        s.switch(4_000, 7, true, false);
        s.switch(8_000, 7, false, false);
        assert!(s.exit(7));
        s.untraced(7);
        s.enter(7);
        assert!(!s.exit(7));
        s.untraced(7);
        let off = s.off_cpu(7).unwrap();
        assert_eq!(
            (off.calls_slept, off.think_asleep_ns, off.think_sleeps),
            (2, 4_500, 2)
        );
        assert_eq!(s.gap(7), Some((4_000, 0)));
        assert_eq!(Sched::new(false).off_cpu(7), None);
        assert_eq!(Sched::new(false).gap(7), None);
    }
}
