//! Waits the replay keeps as they were recorded. Along the chain of calls that decided the
//! program's end, each call was due a recorded span after the call before it (its thread's
//! think time, or a child's tail and the wait for it: `trace::anchor`), and the end a
//! recorded span after the last of them. Where the thread of such a span slept through it
//! outside its calls, and not waiting for threads it created (those waits the replay makes),
//! it waited for something the trace does not hold — another process through a socket or a
//! pipe (pgbench's clients and PostgreSQL's backends), a lock, a timer — and the prediction
//! keeps that wait whatever the target does to what it waited for.
//!
//! The scheduler's records say how long each thread slept outside its calls over its life,
//! not when: each span counts its thread's share of such sleep in its time outside calls.

use std::collections::HashMap;

use crate::trace::recording::Recording;
use crate::trace::replayed::Timeline;

use super::end::ProgramEnd;

/// Recorded time the prediction keeps on the deciding chain that its threads spent asleep
/// outside their calls, not waiting for their children (estimated), and the thread with
/// the most of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeptWaits {
    pub asleep_ns: u64,
    pub tid: u32,
}

/// The kept waits of the chain that decided `pe`'s end (None: no chain, or the trace does
/// not know its threads' sleeps).
pub fn kept_waits(r: &Recording, tl: &Timeline, pe: &ProgramEnd) -> Option<KeptWaits> {
    let h = pe.end.hinge?;
    if !r.footer.knows_sleeps() {
        return None;
    }
    let ev = &r.events;
    let done = |i: usize| ev[i].t.saturating_add(ev[i].dur);
    let mut shares: HashMap<u32, f64> = HashMap::new();
    let mut per_thread: HashMap<u32, f64> = HashMap::new();
    let mut count = |span: u64, tid: u32| {
        let share = *shares.entry(tid).or_insert_with(|| asleep_share(r, tid));
        *per_thread.entry(tid).or_default() += share * span as f64;
    };
    // After the hinge: the rest of its thread's life (and of the threads it waited for).
    if let Some(d) = tl.done_ns.get(h).copied().flatten() {
        count(pe.end.ns.saturating_sub(d), ev[h].tid);
    }
    // Back along the chain: each call due a recorded span after the one that decided it —
    // a child's tail where it waited for the child, its own think time otherwise.
    let parent = |tid: u32| {
        r.footer
            .threads
            .iter()
            .find(|t| t.tid == tid)
            .and_then(|t| t.parent)
    };
    let mut at = h;
    for _ in 0..ev.len() {
        let Some(p) = tl.after.get(at).copied().flatten() else {
            break;
        };
        let (me, them) = (ev[at].tid, ev[p].tid);
        let owner = if me != them && parent(them) == Some(me) {
            them
        } else {
            me
        };
        count(ev[at].t.saturating_sub(done(p)), owner);
        at = p;
    }
    let total = per_thread.values().sum::<f64>() as u64;
    per_thread
        .into_iter()
        .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))
        .map(|(tid, _)| KeptWaits {
            asleep_ns: total,
            tid,
        })
}

/// The share of `tid`'s recorded time outside its calls that it slept, less its waits for
/// the threads it created (the part of each gap between its calls up to the last child that
/// ended in it), over its time outside calls less those waits.
fn asleep_share(r: &Recording, tid: u32) -> f64 {
    let Some(th) = r.footer.threads.iter().find(|t| t.tid == tid) else {
        return 0.0;
    };
    let Some(off) = th.off_cpu else {
        return 0.0;
    };
    let mut kids: Vec<u64> = r
        .footer
        .threads
        .iter()
        .filter(|c| c.parent == Some(tid) && c.tid != tid)
        .filter_map(|c| c.ended_ns)
        .collect();
    kids.sort_unstable();
    // The gaps outside its calls: from its birth to its first call, between its calls, from
    // its last call to its end.
    let mut gaps = Vec::new();
    let mut from = th.born_ns.unwrap_or(0);
    for e in r.events.iter().filter(|e| e.tid == tid) {
        gaps.push((from, e.t.max(from)));
        from = from.max(e.t.saturating_add(e.dur));
    }
    gaps.push((from, th.ended_ns.unwrap_or(from).max(from)));
    let (mut outside, mut waited) = (0u64, 0u64);
    for (a, b) in gaps {
        outside += b - a;
        let n = kids.partition_point(|&k| k <= b);
        if let Some(&last) = kids[..n].last().filter(|&&k| k > a) {
            waited += last - a;
        }
    }
    let own = outside.saturating_sub(waited);
    if own == 0 {
        return 0.0;
    }
    (off.think_asleep_ns.saturating_sub(waited) as f64 / own as f64).min(1.0)
}
