//! What a thread's calls start from besides its own previous call, for a closed-loop replay
//! and a prediction: the happened-before edges between threads that the program's creation
//! and waiting make, which the files' order (`trace::order`) does not show.
//!
//! - A thread's first call starts from the last call that had completed, before the thread
//!   was created, in its creator or in a thread its creator had created and that had ended
//!   (a shell runs `a; b`: `b` starts when `a` ended, however long `a` takes).
//! - A later call starts from the threads it created that ended in the gap before the call
//!   (the creator waited for them: a shell for its command, a process for its workers): when
//!   the last of them has ended — each its recorded tail after its last call — plus the
//!   recorded time from the last end to the call.
//!
//! Such a call is due then (instead of the recorded think time after its own previous call,
//! which held the wait), and not before its own previous call completed. Anchors are only calls that are replayed (`replayed`),
//! and always ones that completed before the call was issued: waiting on them cannot cycle.
//! Pure: a function of the events and the threads.

use std::collections::HashMap;

use crate::trace::recording::{Event, ThreadInfo};

/// A call this one starts from: it is due `after_ns` (recorded) after `event` completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Anchor {
    pub event: usize,
    pub after_ns: u64,
}

/// Per event that has any (most have none), the other threads' calls it starts from: it is
/// due at the latest of their completions plus their `after_ns`.
pub type Anchors = HashMap<usize, Vec<Anchor>>;

/// The anchors of `events`; `replayed` says which calls a replay issues (only those anchor).
pub fn anchors(
    events: &[Event],
    threads: &[ThreadInfo],
    replayed: impl Fn(&Event) -> bool,
) -> Anchors {
    let mut out = Anchors::new();
    // Each thread's replayed calls, in order (their completions rise: one thread's calls do
    // not overlap).
    let mut mine: HashMap<u32, Vec<usize>> = HashMap::new();
    for (i, e) in events.iter().enumerate() {
        if replayed(e) {
            mine.entry(e.tid).or_default().push(i);
        }
    }
    let done = |i: usize| events[i].t.saturating_add(events[i].dur);
    // Each thread's children that ended, by their end, with their last replayed call.
    let mut ended: HashMap<u32, Vec<(u64, u32, usize)>> = HashMap::new();
    for c in threads {
        let last = mine.get(&c.tid).and_then(|l| l.last().copied());
        if let (Some(p), Some(e), Some(l)) = (c.parent, c.ended_ns, last) {
            ended.entry(p).or_default().push((e, c.tid, l));
        }
    }
    for list in ended.values_mut() {
        list.sort_unstable();
    }
    // The children of `tid` that ended in (after, until], other than `not`.
    let ended_in = |tid: u32, after: u64, until: u64, not: u32| -> Vec<(u64, usize)> {
        ended.get(&tid).map_or(Vec::new(), |list| {
            let lo = list.partition_point(|c| c.0 <= after);
            let hi = list.partition_point(|c| c.0 <= until);
            list[lo..hi.max(lo)]
                .iter()
                .filter(|c| c.1 != not)
                .map(|c| (c.0, c.2))
                .collect()
        })
    };
    // Waiting for `kids` (their end, their last call) then going on to a call at `t`: each
    // child's last call, its recorded tail, and the time from the last end to `t`.
    let waited = |kids: &[(u64, usize)], t: u64| -> Vec<Anchor> {
        let last_end = kids.iter().map(|k| k.0).max().unwrap_or(0);
        kids.iter()
            .map(|&(end, l)| Anchor {
                event: l,
                after_ns: end.saturating_sub(done(l)) + t.saturating_sub(last_end),
            })
            .collect()
    };
    for th in threads {
        let Some(list) = mine.get(&th.tid) else {
            continue;
        };
        // The first call: from the creator's side at the creation.
        if let (Some(p), Some(born)) = (th.parent, th.born_ns) {
            let first = events[list[0]].t;
            let a = mine.get(&p).and_then(|l| {
                let n = l.partition_point(|&i| done(i) <= born);
                n.checked_sub(1).map(|k| l[k])
            });
            let kids = ended_in(p, a.map_or(0, done), born, th.tid);
            let mut v = waited(&kids, first);
            if let Some(a) = a {
                // Waiting for children: not before the creator's call; else its gap.
                let gap = if kids.is_empty() {
                    first.saturating_sub(done(a))
                } else {
                    0
                };
                v.push(Anchor {
                    event: a,
                    after_ns: gap,
                });
            }
            if !v.is_empty() {
                out.insert(list[0], v);
            }
        }
        // Later calls: from the threads it created that ended in the gap before them.
        for w in list.windows(2) {
            let kids = ended_in(th.tid, done(w[0]), events[w[1]].t, th.tid);
            if !kids.is_empty() {
                out.insert(w[1], waited(&kids, events[w[1]].t));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(t: u64, dur: u64, tid: u32) -> Event {
        Event::test(t, dur, tid, crate::trace::recording::Op::Write)
    }

    fn at(event: usize, after_ns: u64) -> Anchor {
        Anchor { event, after_ns }
    }

    fn th(tid: u32, parent: Option<u32>, born: Option<u64>, ended: u64) -> ThreadInfo {
        ThreadInfo {
            tid,
            pid: tid,
            first_ns: 0,
            last_ns: 0,
            parent,
            born_ns: born,
            ended_ns: Some(ended),
            off_cpu: None,
        }
    }

    #[test]
    fn a_shells_second_command_starts_from_the_end_of_its_first() {
        // Shell 1 reads its script (0..10), runs `a` (2: 100..200, 300..400, ends 450),
        // then `b` (3, created at 500, first call at 600).
        let events = [
            ev(0, 10, 1),
            ev(100, 100, 2),
            ev(300, 100, 2),
            ev(600, 50, 3),
        ];
        let threads = [
            th(1, None, None, 1000),
            th(2, Some(1), Some(50), 450),
            th(3, Some(1), Some(500), 700),
        ];
        let a = anchors(&events, &threads, |_| true);
        // `a` starts 90 after the script read; `b` 200 after `a`'s last call (50 of `a`'s
        // tail, 150 from its end to `b`'s call), and not before the script read.
        assert_eq!(a.len(), 2);
        assert_eq!(a[&1], vec![at(0, 90)]);
        assert_eq!(a[&3], vec![at(2, 200), at(0, 0)]);
    }

    #[test]
    fn a_call_after_its_workers_end_starts_from_the_last_of_them() {
        // Process 1 writes (0..10), starts workers 2 and 3, then writes (1000..1010) after
        // both ended; worker 3 ended last.
        let events = [
            ev(0, 10, 1),
            ev(100, 300, 2),
            ev(120, 500, 3),
            ev(1000, 10, 1),
        ];
        let threads = [
            th(1, None, None, 2000),
            th(2, Some(1), Some(20), 450),
            th(3, Some(1), Some(30), 700),
        ];
        let a = anchors(&events, &threads, |_| true);
        assert_eq!(a[&1], vec![at(0, 90)]);
        assert_eq!(a[&2], vec![at(0, 110)]);
        // Both workers' last calls, each with its own tail, then 300 from the last end.
        assert_eq!(a[&3], vec![at(1, 50 + 300), at(2, 80 + 300)]);
    }

    #[test]
    fn concurrent_threads_and_calls_not_replayed_are_no_anchors() {
        // Worker 2 is still running when 1's second call comes: no wait is implied; and an
        // anchor must be a replayed call.
        let mut events = vec![ev(0, 10, 1), ev(100, 300, 2), ev(200, 10, 1)];
        events[0].op = crate::trace::recording::Op::Seek;
        let threads = [th(1, None, None, 2000), th(2, Some(1), Some(20), 1500)];
        let a = anchors(&events, &threads, |e| {
            e.op != crate::trace::recording::Op::Seek
        });
        assert!(a.is_empty(), "{a:?}");
    }
}
