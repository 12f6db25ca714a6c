//! Calls that sleep on one storage and not on the other. A call that waits for the device
//! puts its thread to sleep; when it wakes, the work after it runs on cold caches, slower than
//! the same work warm (`stats::cold` measures by how much on this machine, for data and for
//! code). The recording's think times carry that for the calls that slept there; the replay
//! shows which calls sleep on the target. Along the chain of calls that decided the program's
//! end, each call that slept when recorded and not in the replay may take off what the think
//! time after it (to its thread's next call that sleeps in either run) can lose warm — over
//! the working sets measured, its cold share, capped by that set's refill — and each call
//! that sleeps only in the replay may add what that much warm work can gain cold. How much of
//! that range the program sees depends on its working set, which a trace does not show: the
//! prediction takes the middle and the bound half the range.

use serde::Serialize;

use crate::stats::cold::ColdStart;
use crate::trace::recording::{Recording, flag};
use crate::trace::replayed::Timeline;

/// What a change of sleeping may do to the run time, along the deciding chain.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Wakes {
    /// Calls that slept when recorded and not in the replay, and the most their wake-ups
    /// may have added to the recorded think time, ns.
    pub fewer: u64,
    pub shrink_ns: u64,
    /// Calls that sleep in the replay and did not when recorded, and the most their
    /// wake-ups may add, ns.
    pub more: u64,
    pub grow_ns: u64,
}

impl Wakes {
    /// The middle of the range: what the prediction adds (negative: takes away), ns.
    pub fn shift_ns(&self) -> i64 {
        ((i128::from(self.grow_ns) - i128::from(self.shrink_ns)) / 2) as i64
    }

    /// Half the range: the bound's part, ns.
    pub fn half_ns(&self) -> u64 {
        self.grow_ns.saturating_add(self.shrink_ns) / 2
    }
}

/// The change along the chain that ends at `hinge`.
pub fn wakes(r: &Recording, tl: &Timeline, hinge: Option<usize>, cold: &ColdStart) -> Wakes {
    let mut w = Wakes::default();
    let Some(h) = hinge.filter(|_| r.footer.knows_sleeps()) else {
        return w;
    };
    let ev = &r.events;
    let recorded = |i: usize| ev[i].flags & flag::SLEPT != 0;
    let replayed = |i: usize| match tl.done_ns.get(i).copied().flatten() {
        Some(_) => tl.slept.get(i).copied().unwrap_or(false),
        None => recorded(i),
    };
    let after = think_to_next_sleep(r, |i| recorded(i) || replayed(i));
    let mut at = Some(h);
    // Bounded: a timeline whose links loop cannot hang the walk.
    for _ in 0..ev.len() {
        let Some(i) = at else { break };
        if tl.done_ns.get(i).copied().flatten().is_some() {
            match (recorded(i), replayed(i)) {
                (true, false) => {
                    w.fewer += 1;
                    w.shrink_ns = w.shrink_ns.saturating_add(cold.at_most(after[i]));
                }
                (false, true) => {
                    w.more += 1;
                    w.grow_ns = w.grow_ns.saturating_add(cold.added_at_most(after[i]));
                }
                _ => {}
            }
        }
        at = tl.after.get(i).copied().flatten();
    }
    w
}

/// Per event: the recorded think time after it in its thread, up to the thread's next call
/// that `sleeps` (or its end).
fn think_to_next_sleep(r: &Recording, sleeps: impl Fn(usize) -> bool) -> Vec<u64> {
    let ev = &r.events;
    let mut out = vec![0u64; ev.len()];
    // Each thread's next event, walking backwards.
    let mut next: std::collections::HashMap<u32, usize> = Default::default();
    for i in (0..ev.len()).rev() {
        let e = &ev[i];
        let done = e.done_ns();
        out[i] = match next.get(&e.tid) {
            Some(&j) => {
                let gap = ev[j].t.saturating_sub(done);
                gap.saturating_add(if sleeps(j) { 0 } else { out[j] })
            }
            None => r
                .footer
                .threads
                .iter()
                .find(|t| t.tid == e.tid)
                .and_then(|t| t.ended_ns)
                .map_or(0, |end| end.saturating_sub(done)),
        };
        next.insert(e.tid, i);
    }
    out
}
