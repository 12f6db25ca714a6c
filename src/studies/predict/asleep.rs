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

use std::collections::{HashMap, HashSet};

use crate::trace::recording::{Recording, ThreadInfo};
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
    let done = |i: usize| ev[i].done_ns();
    let threads: HashMap<u32, &ThreadInfo> = r.footer.threads.iter().map(|t| (t.tid, t)).collect();
    // The recorded spans the prediction keeps, each with the thread whose time it was.
    let mut spans: Vec<(u64, u32)> = Vec::new();
    // After the hinge: the rest of its thread's life (and of the threads it waited for).
    if let Some(d) = tl.done_ns.get(h).copied().flatten() {
        spans.push((pe.end.ns.saturating_sub(d), ev[h].tid));
    }
    // Back along the chain: each call due a recorded span after the one that decided it —
    // a child's tail where it waited for the child, its own think time otherwise.
    let mut at = h;
    for _ in 0..ev.len() {
        let Some(p) = tl.after.get(at).copied().flatten() else {
            break;
        };
        let (me, them) = (ev[at].tid, ev[p].tid);
        let child = me != them && threads.get(&them).and_then(|t| t.parent) == Some(me);
        spans.push((
            ev[at].t.saturating_sub(done(p)),
            if child { them } else { me },
        ));
        at = p;
    }
    let shares = asleep_shares(r, &threads, spans.iter().map(|s| s.1).collect());
    let mut per_thread: HashMap<u32, f64> = HashMap::new();
    for (span, tid) in spans {
        *per_thread.entry(tid).or_default() +=
            shares.get(&tid).copied().unwrap_or(0.0) * span as f64;
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

/// Per thread of `tids`: the share of its recorded time outside its calls that it slept,
/// less its waits for the threads it created (the part of each gap between its calls up to
/// the last child that ended in it) or, where more, its sleeps that other tasks of the
/// program ended, over its time outside calls less those waits. One pass over the calls for
/// all of them.
fn asleep_shares(
    r: &Recording,
    threads: &HashMap<u32, &ThreadInfo>,
    tids: HashSet<u32>,
) -> HashMap<u32, f64> {
    // Per thread: when its children ended, sorted.
    let mut kids: HashMap<u32, Vec<u64>> = HashMap::new();
    for c in &r.footer.threads {
        if let (Some(p), Some(end)) = (
            c.parent.filter(|&p| tids.contains(&p) && p != c.tid),
            c.ended_ns,
        ) {
            kids.entry(p).or_default().push(end);
        }
    }
    for k in kids.values_mut() {
        k.sort_unstable();
    }
    // Per thread: its sleeps that another task of the program ended (the replay follows
    // those to their waker: `trace::anchor`), where the trace knows who woke whom.
    let woken = crate::trace::stats::woken(r).unwrap_or_default();
    // Per thread: where its current gap outside calls began, its time outside calls and its
    // waits for children in them.
    #[derive(Default)]
    struct Gaps {
        from: u64,
        outside: u64,
        waited: u64,
    }
    let mut gaps: HashMap<u32, Gaps> = tids
        .iter()
        .filter_map(|&t| threads.get(&t))
        .map(|th| {
            let from = th.born_ns.unwrap_or(0);
            (
                th.tid,
                Gaps {
                    from,
                    ..Gaps::default()
                },
            )
        })
        .collect();
    let none = Vec::new();
    let close = |g: &mut Gaps, tid: u32, until: u64| {
        let (a, b) = (g.from, until.max(g.from));
        g.outside = g.outside.saturating_add(b - a);
        let k = kids.get(&tid).unwrap_or(&none);
        let n = k.partition_point(|&end| end <= b);
        if let Some(&last) = k[..n].last().filter(|&&end| end > a) {
            g.waited = g.waited.saturating_add(last - a);
        }
    };
    // The gaps: from its birth to its first call, between its calls, from its last call to
    // its end.
    for e in &r.events {
        if let Some(g) = gaps.get_mut(&e.tid) {
            close(g, e.tid, e.t);
            g.from = g.from.max(e.done_ns());
        }
    }
    gaps.into_iter()
        .map(|(tid, mut g)| {
            let th = threads[&tid];
            let end = th.ended_ns.unwrap_or(g.from);
            close(&mut g, tid, end);
            let own = g.outside.saturating_sub(g.waited);
            let asleep = th.off_cpu.map_or(0, |o| o.think_asleep_ns);
            // A child's end wakes its creator: its waits for children are among the sleeps
            // other tasks ended, where the trace has those.
            let followed = g.waited.max(woken.get(&tid).map_or(0, |w| w.asleep_ns));
            let share = if own == 0 {
                0.0
            } else {
                (asleep.saturating_sub(followed) as f64 / own as f64).min(1.0)
            };
            (tid, share)
        })
        .collect()
}
