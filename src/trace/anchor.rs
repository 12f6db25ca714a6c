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
//! - A call after a sleep that another task of the program ended (the scheduler's record of
//!   who woke whom: a backend woken by the one that flushed the log it waited for, a client
//!   by its server's reply) starts from the waker's last replayed call before the wake-up —
//!   or, where the waker had itself slept since that call, from what woke it, and so on up
//!   to [`MAX_CHAIN`] tasks back (a client that makes no file calls between two servers) —
//!   plus the recorded time from that call to this one; and from its own previous call plus
//!   the recorded think time less the sleep: the wait follows what it waited for.
//!
//! Such a call is due then (instead of the recorded think time after its own previous call,
//! which held the wait), and not before its own previous call completed. Anchors are only calls that are replayed (`replayed`),
//! and always ones that completed before the call was issued: waiting on them cannot cycle.
//! Pure: a function of the events, the threads and the wake-ups.

use std::collections::HashMap;

use crate::trace::recording::{Event, Gap, ThreadInfo, Wake};

/// How many tasks back a wake-up is followed to a replayed call.
pub const MAX_CHAIN: usize = 4;

/// A call this one starts from: it is due `after_ns` (recorded) after `event` completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Anchor {
    pub event: usize,
    pub after_ns: u64,
    /// A thread's own call before a sleep that another task ended, where what woke it is
    /// followed too: it counts only where it was issued before the others made this one due.
    /// A server's helper flushes on a timer, sleeps, and exits when the server tells it to;
    /// on faster storage the server tells it sooner, before its next timer, and it exits
    /// without that flush — a replay that waited for it would keep the recorded timer.
    pub soft: bool,
}

/// Per event that has any (most have none), the other threads' calls it starts from: it is
/// due at the latest of their completions plus their `after_ns`.
pub type Anchors = super::ids::IdMap<usize, Vec<Anchor>>;

/// The anchors of `events`; `replayed` says which calls a replay issues (only those anchor).
pub fn anchors(
    events: &[Event],
    (threads, wakes, gaps): (&[ThreadInfo], &[Wake], Option<&[Gap]>),
    replayed: impl Fn(&Event) -> bool,
) -> Anchors {
    let mut out = Anchors::default();
    let mine = by_thread(events, replayed);
    let done = |i: usize| events[i].done_ns();
    let woken = Woken::new(events, &mine, wakes).asleep(threads, gaps);
    // What `tid` at `at` started from (its last call, and what woke it since), each due
    // `then` more after `at`.
    let reached = |tid: u32, at: u64, then: u64| -> Vec<Anchor> {
        let mut v = Vec::new();
        woken.chain(tid, at, at, 0, &mut v);
        for a in &mut v {
            a.after_ns = a.after_ns.saturating_add(then);
        }
        v
    };
    let ended = ended_children(threads, &mine);
    // The children of `tid` that ended in (after, until], other than `not`.
    let ended_in = |tid: u32, after: u64, until: u64, not: u32| -> Vec<(u64, u32, usize)> {
        ended.get(&tid).map_or(Vec::new(), |list| {
            let lo = list.partition_point(|c| c.0 <= after);
            let hi = list.partition_point(|c| c.0 <= until);
            list[lo..hi.max(lo)]
                .iter()
                .filter(|c| c.1 != not)
                .copied()
                .collect()
        })
    };
    // Waiting for `kids` (their end, thread, last call) then going on to a call at `t`: each
    // child's last call, its recorded tail (less its sleeps that other tasks ended, which
    // follow those: `reached`), and the time from the last end to `t`.
    let waited = |kids: &[(u64, u32, usize)], t: u64| -> Vec<Anchor> {
        let last_end = kids.iter().map(|k| k.0).max().unwrap_or(0);
        kids.iter()
            .flat_map(|&(end, tid, l)| {
                let then = t.saturating_sub(last_end);
                let v = reached(tid, end, then);
                match v.is_empty() {
                    true => vec![Anchor {
                        event: l,
                        after_ns: end.saturating_sub(done(l)) + then,
                        soft: false,
                    }],
                    false => v,
                }
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
            let mut v = Vec::new();
            let first = woken.before_first(th.tid, born, first, &mut v);
            let kids = ended_in(p, a.map_or(0, done), born, th.tid);
            v.extend(waited(&kids, first));
            match (a, kids.is_empty()) {
                // Waiting for children: not before the creator's call.
                (Some(a), false) => v.push(Anchor {
                    event: a,
                    after_ns: 0,
                    soft: false,
                }),
                // Else the creator's gap, less its sleeps that other tasks ended — and where
                // it made no call yet, what woke it.
                (_, true) => v.extend(reached(p, born, first.saturating_sub(born))),
                (None, false) => {}
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
    woken.later_calls(&mut out);
    backward_only(&mut out);
    out
}

/// A call starts only from calls issued before it, as the trace's times say of a real
/// program; a footer whose times disagree with its events (a damaged or hand-made trace) can
/// say otherwise, and a replay's threads would then wait for each other for ever: such
/// anchors are dropped.
fn backward_only(anchors: &mut Anchors) {
    anchors.retain(|&i, v| {
        v.retain(|a| a.event < i);
        !v.is_empty()
    });
}

/// A thread's end after a sleep that another task of the program ended: when it was woken,
/// by whom, and what its end starts from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Told {
    pub at: u64,
    pub by: u32,
    pub anchors: Vec<Anchor>,
}

/// Per thread whose end followed a tell from another task of the program, not one of its
/// children — a wake-up that ended its sleep, or a signal (`Footer::tells`): a server's helper
/// told to exit by the server, a reader at the end of its pipe —, what its end starts from, as
/// a call there would: its last replayed call plus its recorded tail less the sleeps followed
/// (soft), and the teller's last replayed call before the tell (or what woke that one, up to
/// [`MAX_CHAIN`] tasks back) plus the recorded time from there to the end. A child's end
/// that woke it after the tell (a helper's trap that killed the child it waited for) does not
/// hide the tell: the children it waited for are `predict::end`'s to weigh. A thread whose
/// tail no such tell began, one that made replayed calls after it (but the one a signal found
/// it in or entering), or one the chain could not follow to a call of another thread, has
/// none: its tail stays as recorded.
pub fn ends(
    events: &[Event],
    (threads, wakes, gaps): (&[ThreadInfo], &[Wake], Option<&[Gap]>),
    replayed: impl Fn(&Event) -> bool,
) -> HashMap<u32, Told> {
    let mine = by_thread(events, replayed);
    let woken = Woken::new(events, &mine, wakes).asleep(threads, gaps);
    let parent: HashMap<u32, u32> = threads
        .iter()
        .filter_map(|t| t.parent.map(|p| (t.tid, p)))
        .collect();
    let mut out = HashMap::new();
    for th in threads {
        let Some(end) = th.ended_ns else {
            continue;
        };
        let Some(w) = woken.last_tell(th.tid, end, |by| parent.get(&by) != Some(&th.tid)) else {
            continue;
        };
        // Calls of its own that ended after the tell: those follow it (`later_calls`), and
        // the thread's end follows them. After a wake-up, any such call: one it was in when
        // woken went on from there (a lock released to it). After a signal (a tell after no
        // sleep), all but one: a signal is taken at the thread's next return to user space,
        // so the call it was in, or the one it entered just after the signal was sent (a
        // thread running in user space on another CPU, before the signal's interrupt reached
        // it), is the last it makes — a monitor killed in its `echo` by a script's `kill 0`.
        let mine_calls = mine.get(&th.tid).map_or(&[][..], Vec::as_slice);
        let after = mine_calls
            .iter()
            .rev()
            .take_while(|&&j| woken.done(j) >= w.t)
            .count();
        if after > usize::from(w.asleep_ns == 0) {
            continue;
        }
        let mut v = Vec::new();
        woken.chain_to(th.tid, (w.t.saturating_add(1), end), end, 0, &mut v);
        if v.iter().any(|a| events[a.event].tid != th.tid) {
            out.insert(
                th.tid,
                Told {
                    at: w.t,
                    by: w.by,
                    anchors: v,
                },
            );
        }
    }
    out
}

/// Each thread's calls that `replayed` keeps, in order (their completions rise: one thread's
/// calls do not overlap).
pub(super) fn by_thread(
    events: &[Event],
    replayed: impl Fn(&Event) -> bool,
) -> HashMap<u32, Vec<usize>> {
    let mut mine: HashMap<u32, Vec<usize>> = HashMap::new();
    for (i, e) in events.iter().enumerate() {
        if replayed(e) {
            mine.entry(e.tid).or_default().push(i);
        }
    }
    mine
}

/// Each thread's children that ended, by their end, with their last replayed call.
fn ended_children(
    threads: &[ThreadInfo],
    mine: &HashMap<u32, Vec<usize>>,
) -> HashMap<u32, Vec<(u64, u32, usize)>> {
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
    ended
}

/// The replayed calls and the wake-ups of each thread, to follow a wake-up back to a call.
struct Woken<'a> {
    events: &'a [Event],
    mine: &'a HashMap<u32, Vec<usize>>,
    /// Per thread: its wake-ups in time order, and the sum of the sleeps before each (one
    /// more than the wake-ups: the sum over any run of them is a difference).
    wakes: HashMap<u32, (Vec<&'a Wake>, Vec<u64>)>,
    /// Where the trace splits the time between calls (`Footer::gaps`), per thread: its
    /// events' times with its time asleep outside calls up to each (the gap before it
    /// included), and when it ended with its whole time asleep outside calls.
    asleep: HashMap<u32, Asleep>,
}

/// One thread's time asleep outside its calls, as it grew: (event time, the sum to it), and
/// (its end, the whole sum).
#[derive(Default)]
struct Asleep {
    upto: Vec<(u64, u64)>,
    end: Option<(u64, u64)>,
}

impl Asleep {
    /// The sum to `at`: up to the last event at or before it (a gap that spans `at` is not
    /// counted), or the whole at its end.
    fn at(&self, at: u64) -> u64 {
        if let Some((_, all)) = self.end.filter(|&(end, _)| at >= end) {
            return all;
        }
        let n = self.upto.partition_point(|&(t, _)| t <= at);
        n.checked_sub(1).map_or(0, |k| self.upto[k].1)
    }
}

impl<'a> Woken<'a> {
    fn new(events: &'a [Event], mine: &'a HashMap<u32, Vec<usize>>, all: &'a [Wake]) -> Self {
        let mut lists: HashMap<u32, Vec<&Wake>> = HashMap::new();
        for w in all {
            lists.entry(w.tid).or_default().push(w);
        }
        let wakes = lists
            .into_iter()
            .map(|(tid, mut list)| {
                list.sort_by_key(|w| w.t);
                let mut sums = Vec::with_capacity(list.len() + 1);
                sums.push(0u64);
                for w in &list {
                    sums.push(sums[sums.len() - 1].saturating_add(w.asleep_ns));
                }
                (tid, (list, sums))
            })
            .collect();
        Woken {
            events,
            mine,
            wakes,
            asleep: HashMap::new(),
        }
    }

    /// With each thread's time asleep outside its calls where the trace splits it.
    fn asleep(mut self, threads: &[ThreadInfo], gaps: Option<&[Gap]>) -> Self {
        let Some(gaps) = gaps else {
            return self;
        };
        for g in gaps {
            let Some(e) = self.events.get(g.event as usize) else {
                continue;
            };
            let a = self.asleep.entry(e.tid).or_default();
            let sum = a.upto.last().map_or(0, |l| l.1).saturating_add(g.asleep_ns);
            a.upto.push((e.t, sum));
        }
        for th in threads {
            if let (Some(end), Some(off)) = (th.ended_ns, th.off_cpu) {
                self.asleep.entry(th.tid).or_default().end = Some((end, off.think_asleep_ns));
            }
        }
        self
    }

    /// How long `tid` was asleep outside its calls in (`lo`, `hi`], where the trace says.
    fn asleep_in(&self, tid: u32, lo: u64, hi: u64) -> Option<u64> {
        let a = self.asleep.get(&tid)?;
        Some(a.at(hi).saturating_sub(a.at(lo)))
    }

    fn done(&self, i: usize) -> u64 {
        self.events[i].done_ns()
    }

    /// What woke `tid` itself between its creation (`born`) and its first call at `first`
    /// (a subshell that waited on a pipe), into `out`; the call's time less those sleeps
    /// where that led to a call.
    fn before_first(&self, tid: u32, born: u64, first: u64, out: &mut Vec<Anchor>) -> u64 {
        match self.chain(tid, first, first, 0, out) {
            true => first.saturating_sub(self.slept(tid, born, first)),
            false => first,
        }
    }

    /// `tid`'s last wake-up by another task before `at`.
    fn last_wake(&self, tid: u32, at: u64) -> Option<&'a Wake> {
        self.wakes.get(&tid).and_then(|(list, _)| {
            let n = list.partition_point(|w| w.t < at);
            n.checked_sub(1).map(|k| list[k])
        })
    }

    /// `tid`'s last wake-up or signal before `at` from a task `from` accepts.
    fn last_tell(&self, tid: u32, at: u64, from: impl Fn(u32) -> bool) -> Option<&'a Wake> {
        self.wakes.get(&tid).and_then(|(list, _)| {
            let n = list.partition_point(|w| w.t < at);
            list[..n].iter().rev().find(|w| from(w.by)).copied()
        })
    }

    /// How long `tid` slept in (`lo`, `hi`) in sleeps other tasks ended.
    fn slept(&self, tid: u32, lo: u64, hi: u64) -> u64 {
        self.wakes.get(&tid).map_or(0, |(list, sums)| {
            let a = list.partition_point(|w| w.t <= lo);
            let b = list.partition_point(|w| w.t < hi).max(a);
            sums[b] - sums[a]
        })
    }

    /// Each thread's later calls: from what woke the thread since its previous call.
    fn later_calls(&self, out: &mut Anchors) {
        for list in self.mine.values() {
            for &i in list.iter().skip(1) {
                let (tid, t) = (self.events[i].tid, self.events[i].t);
                let mut v = Vec::new();
                self.chain(tid, t, t, 0, &mut v);
                // Its own previous call alone (no wake-up followed) is its think time.
                if v.len() > 1 {
                    out.entry(i).or_default().extend(v);
                }
            }
        }
    }

    /// What `tid` at `at` started from, for a call at `t`: its last replayed call completed
    /// before `at`, and what woke it last since then (that task at its wake-up, `depth` tasks
    /// back so far). The thread's own call is due the recorded time to `t` less every sleep
    /// since it that another task ended (each such wait follows its waker, and the bound is
    /// the thread's own work) — all but the last where that one leads to no call; where that
    /// one leads to a call, the thread's own call is soft. Returns whether any call was found.
    fn chain(&self, tid: u32, at: u64, t: u64, depth: usize, out: &mut Vec<Anchor>) -> bool {
        self.chain_to(tid, (at, at), t, depth, out)
    }

    /// `chain`, with the wake-up followed the last before `at` and the thread's sleeps counted
    /// to `upto` (a told thread's end: the tell, and its sleeps to its end).
    fn chain_to(
        &self,
        tid: u32,
        (at, upto): (u64, u64),
        t: u64,
        depth: usize,
        out: &mut Vec<Anchor>,
    ) -> bool {
        let last = self.mine.get(&tid).and_then(|l| {
            let n = l.partition_point(|&k| self.done(k) < at);
            // Asynchronous I/Os overlap: the one found must have completed before `at` (no
            // anchor on a later call, so no cycle).
            n.checked_sub(1)
                .map(|k| l[k])
                .filter(|&j| self.done(j) < at)
        });
        let since = last.map_or(0, |j| self.done(j));
        // Its wake-ups after that call and before `at`.
        let woken = self.last_wake(tid, at).filter(|w| w.t > since);
        let slept = self.slept(tid, since, upto);
        // Whether the last wake-up led to a call (past MAX_CHAIN it is not followed, and
        // the calls nearer make the bound); where it leads to none, its sleep waited for
        // something the trace does not hold, and stays as recorded.
        let (followed, kept) = match woken {
            Some(w) if depth < MAX_CHAIN => {
                let f = self.chain(w.by, w.t, t, depth + 1, out);
                (f, if f { 0 } else { w.asleep_ns })
            }
            _ => (false, 0),
        };
        // A thread whose wake-up is followed is due after its own work since its call: where
        // the trace says when it slept, none of its sleeps (a timer's, as a server's helper
        // sleeps between its rounds, ends early when the helper is told).
        let own = match followed {
            true => self
                .asleep_in(tid, since, upto)
                .map_or(slept, |a| a.max(slept)),
            false => slept - kept,
        };
        if let Some(j) = last {
            out.push(Anchor {
                event: j,
                after_ns: t.saturating_sub(since).saturating_sub(own),
                soft: followed,
            });
        }
        followed || last.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(t: u64, dur: u64, tid: u32) -> Event {
        Event::test(t, dur, tid, crate::trace::recording::Op::Write)
    }

    fn at(event: usize, after_ns: u64) -> Anchor {
        Anchor {
            event,
            after_ns,
            soft: false,
        }
    }

    fn soft(event: usize, after_ns: u64) -> Anchor {
        Anchor {
            event,
            after_ns,
            soft: true,
        }
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
        let a = anchors(&events, (&threads, &[], None), |_| true);
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
        let a = anchors(&events, (&threads, &[], None), |_| true);
        assert_eq!(a[&1], vec![at(0, 90)]);
        assert_eq!(a[&2], vec![at(0, 110)]);
        // Both workers' last calls, each with its own tail, then 300 from the last end.
        assert_eq!(a[&3], vec![at(1, 50 + 300), at(2, 80 + 300)]);
    }

    #[test]
    fn a_call_never_starts_from_a_call_issued_after_it() {
        // A damaged footer says thread 2 was born at 400, after its own first call (100..110)
        // and after its creator's second call (300..310): the creator's side at the birth
        // would be that later call, and a replay's two threads would wait for each other.
        let events = [ev(0, 10, 1), ev(100, 10, 2), ev(300, 10, 1)];
        let threads = [th(1, None, None, 1000), th(2, Some(1), Some(400), 500)];
        let a = anchors(&events, (&threads, &[], None), |_| true);
        assert!(
            a.iter().all(|(&i, v)| v.iter().all(|x| x.event < i)),
            "{a:?}"
        );
        assert_eq!(a.get(&1), None);
        // Born before it, as a real trace says: its creator's first call.
        let threads = [th(1, None, None, 1000), th(2, Some(1), Some(50), 500)];
        let a = anchors(&events, (&threads, &[], None), |_| true);
        assert_eq!(a[&1], vec![at(0, 90)]);
    }

    fn wake(t: u64, tid: u32, by: u32, asleep_ns: u64) -> Wake {
        Wake {
            t,
            tid,
            by,
            asleep_ns,
        }
    }

    #[test]
    fn a_call_after_a_sleep_another_thread_ended_starts_from_that_threads_call() {
        // Backend 1 writes its log record (0..10), sleeps from 20 on a lock that backend 2
        // holds while it syncs the log (5..990), is woken by 2 at 1000 and goes on at 1050.
        // Then it waits for its client 3, which makes no file call: 2's next call ends at
        // 1800, 2 wakes 3 at 1850 (its reply), 3 wakes 1 at 1900 (the next query); 1 calls at
        // 2000.
        let mut events = vec![
            ev(0, 10, 1),
            ev(5, 985, 2),
            ev(1050, 10, 1),
            ev(1700, 100, 2),
            ev(2000, 10, 1),
        ];
        events[1].op = crate::trace::recording::Op::Fdatasync;
        let threads = [
            th(1, None, None, 3000),
            th(2, None, None, 3000),
            th(3, None, None, 3000),
        ];
        let wakes = [
            wake(1000, 1, 2, 980),
            wake(1850, 3, 2, 500),
            wake(1900, 1, 3, 800),
        ];
        let a = anchors(&events, (&threads, &wakes, None), |_| true);
        // Due 60 after 2's sync, and 60 after its own write (the 1040 between them less
        // the 980 asleep).
        assert_eq!(a[&2], vec![at(1, 60), soft(0, 60)]);
        // Through the client: 200 after 2's call; its own think time less the 800 asleep.
        assert_eq!(a[&4], vec![at(3, 200), soft(2, 2000 - 1060 - 800)]);
        // Backend 2's calls slept on no one: think time, no anchors.
        assert_eq!(a.len(), 2, "{a:?}");
        // Without the wake-ups, none.
        assert!(anchors(&events, (&threads, &[], None), |_| true).is_empty());
    }

    #[test]
    fn a_thread_made_by_one_that_waited_on_a_pipe_starts_from_what_it_waited_for() {
        // Shell 1 reads its script (0..10) and sleeps until reader 2 (not its child) wakes
        // it at 650, after 2's read of the disk (100..600). Subshell 3, which makes no
        // replayed call, sleeps on a pipe until the shell wakes it at 700, and at 720 makes
        // 4, whose first call is at 750.
        let mut events = vec![ev(0, 10, 1), ev(100, 500, 2), ev(30, 1, 3), ev(750, 10, 4)];
        events[2].op = crate::trace::recording::Op::Seek;
        let threads = [
            th(1, None, None, 1000),
            th(2, None, None, 1000),
            th(3, Some(1), Some(20), 1000),
            th(4, Some(3), Some(720), 1000),
        ];
        let wakes = [wake(650, 1, 2, 600), wake(700, 3, 1, 670)];
        let replayed = |e: &Event| e.op != crate::trace::recording::Op::Seek;
        let a = anchors(&events, (&threads, &wakes, None), replayed);
        // The recorded 150 from 2's read to the call, and from the shell's read the 740
        // less the shell's 600 asleep.
        assert_eq!(a[&3], vec![at(1, 150), soft(0, 140)]);
        // Without the wake-ups, 4's first call has nothing to start from but its recorded
        // time.
        assert!(!anchors(&events, (&threads, &[], None), replayed).contains_key(&3));
        // A subshell that is itself the one to wait (a shell's `( read l < f; dd … )` execs
        // dd in it): 3, made at 20, its first call at 750 after the shell woke it at 700.
        let events = vec![ev(0, 10, 1), ev(100, 500, 2), ev(750, 10, 3)];
        let threads = [
            th(1, None, None, 1000),
            th(2, None, None, 1000),
            th(3, Some(1), Some(20), 1000),
        ];
        let a = anchors(&events, (&threads, &wakes, None), |_| true);
        // What woke it, back to 2's read; and the shell's read, 10 before the creation plus
        // the subshell's 730 less its 670 asleep.
        assert_eq!(a[&2], vec![at(1, 150), soft(0, 140), at(0, 10 + 60)]);
        assert_eq!(
            anchors(&events, (&threads, &[], None), |_| true)[&2],
            vec![at(0, 740)]
        );
    }

    #[test]
    fn a_chain_of_wake_ups_is_followed_so_far_and_never_to_a_later_call() {
        // 1 is woken by 2, 2 by 3, … by 7 at ever earlier times; only 7 made a call.
        let events = vec![ev(0, 10, 1), ev(0, 50, 7), ev(1000, 10, 1)];
        let threads: Vec<ThreadInfo> = (1..=7).map(|t| th(t, None, None, 3000)).collect();
        let wakes: Vec<Wake> = (1..7)
            .map(|t| wake(900 - 10 * t as u64, t, t + 1, 5))
            .collect();
        // 7 is six tasks back, past MAX_CHAIN: 1 waits its own think time.
        assert!(anchors(&events, (&threads, &wakes, None), |_| true).is_empty());
        // 3 woken by 7 directly: three back, within reach.
        let mut near: Vec<Wake> = wakes[..2].to_vec();
        near.push(wake(870, 3, 7, 5));
        let a = anchors(&events, (&threads, &near, None), |_| true);
        assert_eq!(a[&2], vec![at(1, 950), soft(0, 1000 - 10 - 5)]);
        // A waker whose only call completed after the wake-up gives no anchor.
        let late = vec![ev(0, 10, 1), ev(880, 200, 2), ev(1000, 10, 1)];
        let a = anchors(&late, (&threads, &[wake(900, 1, 2, 100)], None), |_| true);
        assert!(a.is_empty(), "{a:?}");
    }

    #[test]
    fn concurrent_threads_and_calls_not_replayed_are_no_anchors() {
        // Worker 2 is still running when 1's second call comes: no wait is implied; and an
        // anchor must be a replayed call.
        let mut events = vec![ev(0, 10, 1), ev(100, 300, 2), ev(200, 10, 1)];
        events[0].op = crate::trace::recording::Op::Seek;
        let threads = [th(1, None, None, 2000), th(2, Some(1), Some(20), 1500)];
        let a = anchors(&events, (&threads, &[], None), |e| {
            e.op != crate::trace::recording::Op::Seek
        });
        assert!(a.is_empty(), "{a:?}");
    }

    #[test]
    fn a_told_thread_ends_after_its_own_work_not_its_timer_sleeps_where_the_trace_says() {
        // Helper 2 calls at 100..110, runs to 120, sleeps on a timer to 890 (no task of the
        // program woke it), runs to 895, sleeps, is told by 1 at 900 (1's call at 880..890
        // before that), and ends at 910: 25 ns of its own work after its call.
        let events = [ev(0, 10, 1), ev(100, 10, 2), ev(880, 10, 1)];
        let mut threads = [th(1, None, None, 1000), th(2, Some(1), Some(50), 910)];
        threads[1].off_cpu = Some(crate::trace::recording::OffCpu {
            think_asleep_ns: 775,
            think_sleeps: 2,
            ..Default::default()
        });
        let wakes = [wake(900, 2, 1, 5)];
        let told = |gaps: Option<&[Gap]>| ends(&events, (&threads, &wakes, gaps), |_| true);
        // Without the split, its own call is due all the recorded time to its end less the
        // sleep that 1 ended: the timer's 770 ns kept.
        let without = told(None);
        assert_eq!(without[&2].at, 900);
        assert_eq!(without[&2].anchors, [at(2, 20), soft(1, 795)]);
        // With it (the gap before its call, none asleep), the timer's sleep is not its work.
        let gaps = [Gap {
            event: 1,
            asleep_ns: 0,
            preempted_ns: 10,
        }];
        assert_eq!(told(Some(&gaps))[&2].anchors, [at(2, 20), soft(1, 25)]);
        // A thread whose sleeps no task of the program ended keeps its time as it was.
        assert!(!told(Some(&gaps)).contains_key(&1));
    }

    #[test]
    fn a_thread_signalled_while_it_ran_ends_after_the_sender() {
        // Helper 2 calls at 100..110 and computes on (never asleep) until 1, whose call ran
        // 880..890, signals it at 900 (`Footer::signals`: a tell after no sleep); it ends at
        // 910. Its end follows 1's call, 20 after it; its own call is soft.
        let events = [ev(0, 10, 1), ev(100, 10, 2), ev(880, 10, 1)];
        let threads = [th(1, None, None, 1000), th(2, Some(1), Some(50), 910)];
        let signal = [wake(900, 2, 1, 0)];
        let told = ends(&events, (&threads, &signal, None), |_| true);
        assert_eq!(told[&2].at, 900);
        assert_eq!(told[&2].by, 1);
        assert_eq!(told[&2].anchors, [at(2, 20), soft(1, 800)]);
        // Without it, nothing told the helper: its end stays as recorded.
        assert!(ends(&events, (&threads, &[], None), |_| true).is_empty());
        // Told, it killed its child 3, whose end woke it at 905 after 3 ns asleep: the tell
        // is still what its end follows (the 3 ns are not its own work).
        let kin = [
            threads[0].clone(),
            threads[1].clone(),
            th(3, Some(2), Some(120), 905),
        ];
        let tells = [signal[0], wake(905, 2, 3, 3)];
        let told = ends(&events, (&kin, &tells, None), |_| true);
        assert_eq!((told[&2].at, told[&2].by), (900, 1));
        assert_eq!(told[&2].anchors, [at(2, 20), soft(1, 797)]);
        // Calls of its own after the tell (a trap that went on): its end follows them, not
        // the tell.
        let mut later = events.to_vec();
        later.extend([ev(902, 2, 2), ev(905, 2, 2)]);
        assert!(!ends(&later, (&threads, &signal, None), |_| true).contains_key(&2));
        // One alone, entered just after the signal was sent, and ended with (taken at that
        // call's return): the signal told it — under load a monitor's `close`, entered
        // before the signal's interrupt reached its CPU; its end follows 1's call as above.
        later.pop();
        let told = ends(&later, (&threads, &signal, None), |_| true);
        assert_eq!((told[&2].at, told[&2].by), (900, 1));
        assert_eq!(told[&2].anchors, [at(2, 20), soft(1, 800)]);
        // One it was in when the signal came (895..905), and ended with: the signal told it
        // all the same (a monitor killed in its write by a script's `kill 0`), its end
        // following 1's call as above; not so a wake-up that came during that call (a lock
        // released to it: the call went on from there).
        let mut during = events.to_vec();
        during.push(ev(895, 10, 2));
        let told = ends(&during, (&threads, &signal, None), |_| true);
        assert_eq!((told[&2].at, told[&2].by), (900, 1));
        assert_eq!(told[&2].anchors, [at(2, 20), soft(1, 800)]);
        let woke = [wake(900, 2, 1, 5)];
        assert!(!ends(&during, (&threads, &woke, None), |_| true).contains_key(&2));
    }
}
