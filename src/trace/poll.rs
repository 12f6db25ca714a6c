//! Polls: a thread that looks for a file again and again — opens it (or finds nothing there),
//! reads what it holds, closes it — until another thread of the program changes it: creates
//! it, writes what the looker waits to read, removes it. `pg_ctl start -w` looks at the
//! server's pid file every 100 ms until it says "ready"; `pg_ctl stop` until it is gone. How
//! many looks it takes depends on how fast the other thread gets there, so a replay must not
//! keep the recorded count: on faster storage the change comes before a look that missed it
//! when recorded, and the looks after it never happen; on slower storage the last look, which
//! saw the change, comes a period later for each period the change is late.
//!
//! A poll here is three or more looks of one path by one thread with nothing between them in
//! that thread but looks (of any path: a message catalogue looked for on the way), the last
//! seeing something other than the ones before it, which saw alike (found where they found
//! nothing, or the reverse, or other bytes), and a call of another thread that changed that
//! path between the last two looks — the latest such, whose completion the last look waited
//! for. A file read twice with another thread's write between is no poll: a replay that cut
//! it short would drop a read the program makes whatever the storage. A look that
//! a wake-up started (`anchored`: another task of the program woke the thread) is not on a
//! timer and is no poll's. Pure: a function of the events and the files' paths.

use std::collections::HashMap;

use crate::trace::recording::{Event, NO_FILE, Op, flag};

/// One poll: its looks and the change its last look saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Poll {
    /// Each look's first call (its open), in order; the last saw the change.
    pub looks: Vec<usize>,
    /// The other thread's call that made the change: the latest of those on the path that
    /// completed between the last two looks.
    pub change: usize,
    /// From the look before the last to the last, issue to issue, as recorded (ns): the
    /// thread's period.
    pub period_ns: u64,
}

/// A look: an open of a file and, where it found one, the thread's reads of it up to its
/// close, nothing else between.
#[derive(Debug, Clone, Copy)]
struct Look {
    first: usize,
    file: u32,
    found: bool,
    bytes: u64,
}

/// The polls of `events`; `paths` each file's path, `anchored` whether a call was started by a
/// wake-up from another task of the program.
pub fn polls(events: &[Event], paths: &[String], anchored: impl Fn(usize) -> bool) -> Vec<Poll> {
    let by_thread = super::anchor::by_thread(events, |_| true);
    let path = |f: u32| paths.get(f as usize).map(String::as_str);
    let mut out = Vec::new();
    let mut tids: Vec<u32> = by_thread.keys().copied().collect();
    tids.sort_unstable();
    for tid in tids {
        let mine = &by_thread[&tid];
        // Per path, the looks since its last change, in the current run of looks.
        let mut since: HashMap<&str, Vec<Look>> = HashMap::new();
        let mut k = 0;
        while k < mine.len() {
            let Some((look, next)) = look_at(events, mine, k) else {
                since.clear();
                k += 1;
                continue;
            };
            k = next;
            let Some(p) = path(look.file) else { continue };
            let list = since.entry(p).or_default();
            let Some(&before) = list.last() else {
                list.push(look);
                continue;
            };
            if (before.found, before.bytes) == (look.found, look.bytes) {
                list.push(look);
                continue;
            }
            let (from, to) = (events[before.first].t, events[look.first].t);
            let change = changed(events, (from, to), tid, |f| path(f) == Some(p));
            // Two alike before it at least: one earlier look is a file read twice, not a loop.
            if let Some(change) = change.filter(|_| list.len() >= 2 && !anchored(look.first)) {
                let mut looks: Vec<usize> = list.iter().map(|l| l.first).collect();
                looks.push(look.first);
                out.push(Poll {
                    looks,
                    change,
                    period_ns: to - from,
                });
            }
            *list = vec![look];
        }
    }
    out.sort_by_key(|p| p.looks[0]);
    out
}

/// The look that starts at the thread's `k`-th call, and where the thread's next call is.
fn look_at(events: &[Event], mine: &[usize], k: usize) -> Option<(Look, usize)> {
    let e = &events[mine[k]];
    if e.op != Op::Open || e.file == NO_FILE || e.flags & flag::CREATED != 0 {
        return None;
    }
    let mut look = Look {
        first: mine[k],
        file: e.file,
        found: e.result >= 0,
        bytes: 0,
    };
    if !look.found {
        return Some((look, k + 1));
    }
    for (n, &j) in mine.iter().enumerate().skip(k + 1) {
        let c = &events[j];
        match c.op {
            _ if c.file != e.file => return None,
            Op::Read => look.bytes = look.bytes.saturating_add(c.result.max(0) as u64),
            Op::Seek => {}
            Op::Close => return Some((look, n + 1)),
            _ => return None,
        }
    }
    None
}

/// How long before the earlier look a change may have been issued and still be found: the
/// search looks at calls issued from then on (events are in issue order).
const LONGEST_CHANGE_NS: u64 = 1_000_000_000;

/// The latest call of a thread other than `tid` that changed a file `on` and completed in
/// `(from, to]` (ns).
fn changed(
    events: &[Event],
    (from, to): (u64, u64),
    tid: u32,
    on: impl Fn(u32) -> bool,
) -> Option<usize> {
    let lo = events.partition_point(|e| e.t < from.saturating_sub(LONGEST_CHANGE_NS));
    let hi = events.partition_point(|e| e.t <= to);
    (lo..hi.max(lo))
        .filter(|&i| {
            let e = &events[i];
            e.tid != tid && e.result >= 0 && e.file != NO_FILE && on(e.file)
        })
        .filter(|&i| {
            let e = &events[i];
            matches!(e.op, Op::Write | Op::Truncate | Op::Unlink | Op::Rename)
                || (e.op == Op::Open && e.flags & flag::CREATED != 0)
        })
        .filter(|&i| (from + 1..=to).contains(&events[i].done_ns()))
        .max_by_key(|&i| events[i].done_ns())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(t: u64, tid: u32, op: Op, file: u32, result: i64) -> Event {
        Event {
            t,
            dur: 10,
            offset: 0,
            len: result.max(0) as u64,
            result,
            tid,
            file,
            arg: 0,
            op,
            flags: 0,
        }
    }

    /// A look of thread 1 at `t` that found `file` and read `bytes` of it: open, read, close.
    fn found(t: u64, file: u32, bytes: i64) -> [Event; 3] {
        [
            ev(t, 1, Op::Open, file, 3),
            ev(t + 1, 1, Op::Read, file, bytes),
            ev(t + 2, 1, Op::Close, file, 0),
        ]
    }

    fn paths(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("/f{i}")).collect()
    }

    #[test]
    fn looks_that_find_nothing_until_another_thread_creates_the_file_are_a_poll() {
        let mut create = ev(150, 2, Op::Open, 0, 3);
        create.flags = flag::CREATED;
        let events = [
            [
                ev(0, 1, Op::Open, 0, -2),
                ev(100, 1, Op::Open, 0, -2),
                create,
                ev(160, 2, Op::Write, 0, 84),
            ]
            .as_slice(),
            &found(200, 0, 84),
        ]
        .concat();
        let p = polls(&events, &paths(1), |_| false);
        assert_eq!(
            p,
            vec![Poll {
                looks: vec![0, 1, 4],
                change: 3,
                period_ns: 100
            }]
        );
    }

    #[test]
    fn a_look_that_finds_the_file_gone_after_another_thread_removed_it_ends_a_poll() {
        // The file removed, then looked for under a second entry of the same path.
        let mut p = paths(1);
        p.push("/f0".into());
        let events = [
            found(0, 0, 10).as_slice(),
            &found(20, 0, 10),
            &[ev(50, 2, Op::Unlink, 0, 0), ev(100, 1, Op::Open, 1, -2)],
        ]
        .concat();
        let found = polls(&events, &p, |_| false);
        assert_eq!(found.len(), 1);
        assert_eq!(
            (found[0].looks.clone(), found[0].change, found[0].period_ns),
            (vec![0, 3, 7], 6, 80)
        );
    }

    #[test]
    fn no_poll_without_a_change_by_another_thread_or_with_other_calls_between() {
        // The same outcome every time: no change seen.
        let same = [ev(0, 1, Op::Open, 0, -2), ev(100, 1, Op::Open, 0, -2)];
        assert!(polls(&same, &paths(1), |_| false).is_empty());
        // Changed by nobody the trace holds (a process outside the program).
        let outside = [
            ev(0, 1, Op::Open, 0, -2),
            ev(100, 1, Op::Open, 0, 3),
            ev(105, 1, Op::Close, 0, 0),
        ];
        assert!(polls(&outside, &paths(1), |_| false).is_empty());
        // A write of the thread's own between the looks: not a poll.
        let mut create = ev(50, 2, Op::Open, 0, 3);
        create.flags = flag::CREATED;
        let busy = [
            ev(0, 1, Op::Open, 0, -2),
            create,
            ev(60, 1, Op::Write, 1, 10),
            ev(100, 1, Op::Open, 0, 3),
            ev(105, 1, Op::Close, 0, 0),
        ];
        assert!(polls(&busy, &paths(2), |_| false).is_empty());
        // One look before the change: a file read twice, not a loop.
        let twice = [
            ev(0, 1, Op::Open, 0, -2),
            create,
            ev(100, 1, Op::Open, 0, 3),
            ev(105, 1, Op::Close, 0, 0),
        ];
        assert!(polls(&twice, &paths(1), |_| false).is_empty());
        // Woken to look by another task: not on a timer.
        let woken = [
            ev(0, 1, Op::Open, 0, -2),
            ev(30, 1, Op::Open, 0, -2),
            create,
            ev(100, 1, Op::Open, 0, 3),
            ev(105, 1, Op::Close, 0, 0),
        ];
        assert!(polls(&woken, &paths(1), |i| i == 3).is_empty());
        assert_eq!(polls(&woken, &paths(1), |_| false).len(), 1);
    }

    #[test]
    fn other_looks_on_the_way_do_not_break_a_poll_and_a_content_change_ends_one() {
        let events = [
            found(0, 0, 62).as_slice(),
            &found(10, 0, 62),
            &[
                ev(40, 2, Op::Write, 0, 84),
                ev(99, 1, Op::Open, 1, -2), // a catalogue looked for on the way
            ],
            &found(100, 0, 84),
        ]
        .concat();
        let p = polls(&events, &paths(2), |_| false);
        assert_eq!(p.len(), 1);
        assert_eq!(
            (p[0].looks.clone(), p[0].change, p[0].period_ns),
            (vec![0, 3, 8], 6, 90)
        );
    }
}
