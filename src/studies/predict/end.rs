//! When the recorded program would end, from one replay's timeline: each thread ends the
//! recorded time after its last replayed call (its last CPU, its exit), or — where threads it
//! created ended after that call (it waited for them) — the recorded time after the last of
//! them ended, at the latest of their predicted ends, or — where another task of the program
//! woke it from its last sleep (a server's helper told to exit) — the recorded time after
//! what woke it (`trace::anchor::ends`); the program ends when its last thread does (as
//! `trace::anchor` starts a call after a wait). A thread that made no replayed call and
//! waited for none that did says nothing of the target: it does not decide the end. The
//! thread that decides it, and the call its end hangs on, come with it.

use std::collections::HashMap;

use crate::trace::anchor::Anchor;
use crate::trace::recording::{Recording, ThreadInfo};
use crate::trace::replayed::Timeline;

/// A thread's predicted end, ns from the start, and the replayed call it hangs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct End {
    pub ns: u64,
    pub hinge: Option<usize>,
}

/// The program's predicted end, each thread's, and the thread that decides it.
#[derive(Debug, Clone)]
pub struct ProgramEnd {
    pub end: End,
    pub critical_tid: Option<u32>,
    pub threads: HashMap<u32, End>,
}

/// The predicted end of `r`'s program given what a replay measured.
pub fn program_end(r: &Recording, tl: &Timeline) -> ProgramEnd {
    let ev = &r.events;
    let done = |i: usize| ev[i].done_ns();
    // Each thread's last replayed (and reached) call.
    let mut last: HashMap<u32, usize> = HashMap::new();
    for (i, e) in ev.iter().enumerate() {
        if tl.done_ns.get(i).copied().flatten().is_some() {
            last.insert(e.tid, i);
        }
    }
    let ended = |t: &ThreadInfo| {
        t.ended_ns
            .unwrap_or_else(|| last.get(&t.tid).map_or(t.last_ns, |&i| done(i)))
    };
    let tails = crate::trace::anchor::ends(
        ev,
        (&r.footer.threads, &r.footer.wakes),
        crate::runner::replay::replayed,
    );
    let mut memo: HashMap<u32, End> = HashMap::new();
    // Children end before their parents: resolve in order of end.
    let mut order: Vec<&ThreadInfo> = r.footer.threads.iter().collect();
    order.sort_by_key(|t| ended(t));
    for t in &order {
        let te = ended(t);
        let basis = last
            .get(&t.tid)
            .map(|&i| (done(i), tl.done_ns[i].unwrap_or(0), i));
        let after = basis.map_or(0, |b| b.0);
        // Threads it created that ended after its last call: it waited for them, and went on
        // the recorded time after the last of them ended.
        let kids: Vec<&ThreadInfo> = r
            .footer
            .threads
            .iter()
            .filter(|c| c.parent == Some(t.tid) && c.tid != t.tid && ended(c) > after)
            .filter(|c| memo.contains_key(&c.tid))
            .collect();
        let last_kid = kids.iter().map(|c| ended(c)).max().unwrap_or(0);
        let waited = kids.iter().map(|c| {
            let e = memo[&c.tid];
            End {
                ns: e.ns.saturating_add(te.saturating_sub(last_kid)),
                hinge: e.hinge,
            }
        });
        let end = if kids.is_empty() {
            // Where a task of the program ended its last sleep, the end follows that task
            // (`trace::anchor::ends`): the latest of what it starts from.
            let woken = tails.get(&t.tid).and_then(|v| latest(v, tl));
            match (woken, basis) {
                (Some(e), _) => e,
                (None, Some((c, c2, i))) => End {
                    ns: c2.saturating_add(te.saturating_sub(c)),
                    hinge: Some(i),
                },
                // A thread that made no replayed call: nothing of its time can be read off
                // the replay; it does not decide the end (a helper ends after the others).
                (None, None) => continue,
            }
        } else {
            let floor = basis.map(|(_, c2, i)| End {
                ns: c2,
                hinge: Some(i),
            });
            waited.chain(floor).max_by_key(|e| e.ns).expect("not empty")
        };
        memo.insert(t.tid, end);
    }
    // The recording ends a little after its last task (the tracer's own wake-up).
    let last_end = order.iter().map(|t| ended(t)).max().unwrap_or(0);
    let slack = r.footer.duration_ns.saturating_sub(last_end);
    let (critical_tid, end) = memo
        .iter()
        .max_by_key(|(tid, e)| (e.ns, std::cmp::Reverse(**tid)))
        .map(|(tid, e)| {
            let owner = e.hinge.map_or(*tid, |h| ev[h].tid);
            (
                Some(owner),
                End {
                    ns: e.ns + slack,
                    hinge: e.hinge,
                },
            )
        })
        .unwrap_or((
            None,
            End {
                ns: r.footer.duration_ns,
                hinge: None,
            },
        ));
    ProgramEnd {
        end,
        critical_tid,
        threads: memo,
    }
}

/// The latest of what a thread's end starts from in a replay, as the replay takes a call's
/// anchors: a soft one only where its call was issued by the time the others made it due.
fn latest(anchors: &[Anchor], tl: &Timeline) -> Option<End> {
    let at = |a: &Anchor| {
        let d = tl.done_ns.get(a.event).copied().flatten()?;
        Some(End {
            ns: d.saturating_add(a.after_ns),
            hinge: Some(a.event),
        })
    };
    let hard = anchors
        .iter()
        .filter(|a| !a.soft)
        .filter_map(at)
        .max_by_key(|e| e.ns);
    let issued = |a: &Anchor| {
        let d = tl.done_ns.get(a.event).copied().flatten();
        let took = tl.took_ns.get(a.event).copied().unwrap_or(0);
        d.is_some_and(|d| hard.is_none_or(|h| d.saturating_sub(took) <= h.ns))
    };
    let soft = anchors
        .iter()
        .filter(|a| a.soft && issued(a))
        .filter_map(at);
    hard.into_iter().chain(soft).max_by_key(|e| e.ns)
}
