//! When the recorded program would end, from one replay's timeline: each thread ends the
//! recorded time after its last replayed call (its last CPU, its exit), or — where threads it
//! created ended after that call (it waited for them) — the recorded time after the last of
//! them ended, at the latest of their predicted ends, or — where another task of the program
//! woke it from its last sleep (a server's helper told to exit) — the recorded time after
//! what woke it (`trace::anchor::ends`), waiting then only for the threads it created that
//! ended after it was told and had started by then here (the rest, and what they created, it
//! would not have made: they do not decide the end), and, where the child it was running
//! when told was killed then, ending the ones running then here as that one ended (where it
//! was told by a signal to its process group, those of the group below it as well); the
//! program ends when its last thread does (as `trace::anchor` starts a call after a wait). A
//! thread that made no replayed call and waited for none that did says nothing of the target:
//! it does not decide the end. The thread that decides it, and the call its end hangs on,
//! come with it.

use std::collections::{HashMap, HashSet};

use crate::trace::anchor::{Anchor, Told};
use crate::trace::recording::{Recording, ThreadInfo, Wake};
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
    let fam = Family::new(r, tl);
    let mut gone: HashSet<u32> = HashSet::new();
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
        // Where a task of the program, not one of its children, ended its last sleep (a
        // helper told to exit), the end follows that task (`trace::anchor::ends`).
        let told = fam
            .told
            .get(&t.tid)
            .filter(|w| fam.parent.get(&w.by).is_none_or(|&p| p != t.tid));
        let told_at = told.and_then(|w| hard(&w.anchors, tl));
        // The ones it made after it was told here, it would not have made, nor what they made;
        // the ones running then end as its running child did when it was told (a trap that
        // kills what it waits for).
        if let (Some(w), Some(h)) = (told, told_at) {
            fam.not_made(t.tid, h.ns, &mut gone);
            fam.killed_when_told(r, (t.tid, te), w, h, &mut memo);
        }
        let woken = told.and_then(|w| latest(&w.anchors, tl, told_at));
        // Threads it created that ended after its last call: it waited for them, and went on
        // the recorded time after the last of them ended. Once told, only those that ended
        // after it was, and had started by the time it was told here (the ones it made on
        // a timer since, it would not have made).
        let kids: Vec<&ThreadInfo> = r
            .footer
            .threads
            .iter()
            .filter(|c| c.parent == Some(t.tid) && c.tid != t.tid && ended(c) > after)
            .filter(|c| memo.contains_key(&c.tid))
            .filter(|c| {
                told.is_none_or(|w| {
                    ended(c) > w.at
                        && fam
                            .first_issue
                            .get(&c.tid)
                            .is_none_or(|&f| told_at.is_none_or(|h| f <= h.ns))
                })
            })
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
            waited
                .chain(floor)
                .chain(woken)
                .max_by_key(|e| e.ns)
                .expect("not empty")
        };
        memo.insert(t.tid, end);
    }
    // The recording ends a little after its last task (the tracer's own wake-up).
    let last_end = order.iter().map(|t| ended(t)).max().unwrap_or(0);
    let slack = r.footer.duration_ns.saturating_sub(last_end);
    // Nor does what a thread would not have made here.
    memo.retain(|tid, _| !gone.contains(tid));
    decide(r, memo, slack)
}

/// The program's end from its threads' (`threads`): the latest, `slack` after it (the
/// recording's end after its last task), and the thread whose call decided it.
fn decide(r: &Recording, threads: HashMap<u32, End>, slack: u64) -> ProgramEnd {
    let (critical_tid, end) = threads
        .iter()
        .max_by_key(|(tid, e)| (e.ns, std::cmp::Reverse(**tid)))
        .map(|(tid, e)| {
            let owner = e.hinge.map_or(*tid, |h| r.events[h].tid);
            (
                Some(owner),
                End {
                    ns: e.ns.saturating_add(slack),
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
        threads,
    }
}

/// The latest of the hard ones of `anchors` in a replay.
fn hard(anchors: &[Anchor], tl: &Timeline) -> Option<End> {
    anchors
        .iter()
        .filter(|a| !a.soft)
        .filter_map(|a| at(a, tl))
        .max_by_key(|e| e.ns)
}

/// When `a` makes a thread end in a replay.
fn at(a: &Anchor, tl: &Timeline) -> Option<End> {
    let d = tl.done_ns.get(a.event).copied().flatten()?;
    Some(End {
        ns: d.saturating_add(a.after_ns),
        hinge: Some(a.event),
    })
}

/// The latest of what a thread's end starts from in a replay, as the replay takes a call's
/// anchors (`hard`, the latest of the hard ones): a soft one only where its call was issued
/// by the time the others made it due.
fn latest(anchors: &[Anchor], tl: &Timeline, hard: Option<End>) -> Option<End> {
    let soft = anchors
        .iter()
        .filter(|a| a.soft && issued(tl, a.event).is_some_and(|i| hard.is_none_or(|h| i <= h.ns)))
        .filter_map(|a| at(a, tl));
    hard.into_iter().chain(soft).max_by_key(|e| e.ns)
}

/// When call `i` was issued in a replay (None: not replayed or not reached).
fn issued(tl: &Timeline, i: usize) -> Option<u64> {
    let d = tl.done_ns.get(i).copied().flatten()?;
    Some(d.saturating_sub(tl.took_ns.get(i).copied().unwrap_or(0)))
}

/// Who made whom, who told whom to end (`trace::anchor::ends`), and when each thread's first
/// replayed call was issued in a replay.
struct Family {
    parent: HashMap<u32, u32>,
    told: HashMap<u32, Told>,
    made: HashMap<u32, Vec<u32>>,
    first_issue: HashMap<u32, u64>,
    /// The signals to a process group (`[t, by, group]`), each thread's group, by its
    /// process's, and the signals that came late (`Footer::kills`).
    to_groups: Vec<(u64, u32, u32)>,
    group_of: HashMap<u32, u32>,
    late: Vec<Wake>,
    /// Each thread's recorded end, where the capture saw it.
    ended: HashMap<u32, u64>,
}

impl Family {
    fn new(r: &Recording, tl: &Timeline) -> Family {
        let parent: HashMap<u32, u32> = r
            .footer
            .threads
            .iter()
            .filter_map(|t| t.parent.filter(|&p| p != t.tid).map(|p| (t.tid, p)))
            .collect();
        let mut made: HashMap<u32, Vec<u32>> = HashMap::new();
        for (&c, &p) in &parent {
            made.entry(p).or_default().push(c);
        }
        let mut first_issue: HashMap<u32, u64> = HashMap::new();
        for (i, e) in r.events.iter().enumerate() {
            if let Some(issued) = issued(tl, i) {
                let f = first_issue.entry(e.tid).or_insert(issued);
                *f = (*f).min(issued);
            }
        }
        let kills = r.footer.kills.clone().unwrap_or_default();
        let of: HashMap<u32, u32> = kills.groups.iter().copied().collect();
        let threads = r.footer.threads.iter();
        let group_of = threads
            .filter_map(|t| Some((t.tid, *of.get(&t.pid)?)))
            .collect();
        Family {
            parent,
            told: crate::trace::anchor::ends(
                &r.events,
                (
                    &r.footer.threads,
                    &r.footer.tells(),
                    r.footer.gaps.as_deref(),
                ),
                crate::runner::replay::replayed,
            ),
            made,
            first_issue,
            to_groups: kills.to_groups,
            group_of,
            late: kills.late,
            ended: (r.footer.threads.iter())
                .filter_map(|t| Some((t.tid, t.ended_ns?)))
                .collect(),
        }
    }

    /// Where a child of `tid` (ending at `te` when recorded) that was still running when
    /// `tid` was told to end (`w`) was signalled then and ended — by `tid` (a shell's trap
    /// that kills the `sleep` or `dd` it waits for) or by whoever told it (a script's `kill 0`,
    /// to the helper and its child alike) — its children that had started here by the time it
    /// was told and would run on past it end as that child did: its predicted end (`end`) less
    /// the recorded time from the child's end to its own. The ones that ran to their own ends
    /// when recorded, because the tell came later there, would otherwise decide the end here.
    /// So do they where the child signalled then had ended just before (the trap's `kill`
    /// came too late, or reached a child not yet waited for): at the signal, here when it was
    /// told. Where no child was signalled (it let them finish), its children keep their own
    /// ends. Where the tell was a signal to `tid`'s process group (a script's `kill 0`), so do
    /// the ones of its group below it that had ended before that signal when recorded, started
    /// here by the time it was told and would run on past it: the signal reaches every process
    /// of the group, and ends them with it — as it ended `tid`'s killed child, or at once where
    /// none was running then when recorded (a helper between two sleeps).
    fn killed_when_told(
        &self,
        r: &Recording,
        (tid, te): (u32, u64),
        w: &Told,
        end: End,
        memo: &mut HashMap<u32, End>,
    ) {
        let ended = |c: u32| self.ended.get(&c).copied();
        let mine = |s: &&Wake| s.t >= w.at && self.parent.get(&s.tid) == Some(&tid);
        let killed = r
            .footer
            .signals
            .iter()
            .filter(mine)
            .filter_map(|s| ended(s.tid).filter(|&e| e >= s.t))
            .max();
        // Or one it signalled after it was told that had ended just before (a trap's `kill
        // $child` that came too late): it ended its running child when told, here at once.
        let meant = (self.late.iter().chain(&r.footer.signals))
            .filter(|s| mine(s) && s.t <= te && (s.by == tid || s.by == w.by))
            .filter(|s| ended(s.tid).is_some_and(|e| e <= s.t))
            .map(|s| s.t)
            .max();
        // A signal to its group from the one that told it, between the tell and its end.
        let group = self.group_of.get(&tid).and_then(|&g| {
            let sent =
                |&&(t, by, to): &&(u64, u32, u32)| by == w.by && to == g && t >= w.at && t <= te;
            self.to_groups.iter().find(sent).map(|&(t, _, _)| (t, g))
        });
        let Some(killed_end) = killed.or(meant).or(group.map(|_| w.at)) else {
            return;
        };
        let told_here = end.ns.saturating_sub(te.saturating_sub(w.at));
        let capped = End {
            ns: end.ns.saturating_sub(te.saturating_sub(killed_end)),
            hinge: end.hinge,
        };
        let started = |c: &u32| self.first_issue.get(c).is_some_and(|&f| f <= told_here);
        let mut cap = |c: &u32| {
            if let Some(e) = memo.get_mut(c).filter(|e| started(c) && e.ns > capped.ns) {
                *e = capped;
            }
        };
        let children = self.made.get(&tid).into_iter().flatten();
        if killed.or(meant).is_some() {
            children.clone().for_each(&mut cap);
        }
        let Some((sent, g)) = group else {
            return;
        };
        // Its group's processes below it, their threads with them; a process that left the
        // group, and what it made, the signal did not reach.
        let mut stack: Vec<u32> = children.copied().collect();
        let mut seen: HashSet<u32> = HashSet::new();
        while let Some(c) = stack.pop() {
            if !seen.insert(c) || self.group_of.get(&c) != Some(&g) {
                continue;
            }
            if ended(c).is_some_and(|e| e < sent) {
                cap(&c);
            }
            stack.extend(self.made.get(&c).into_iter().flatten());
        }
    }

    /// Into `gone`: the threads `tid` made whose first call was issued after `told_ns`, and
    /// every thread they made.
    fn not_made(&self, tid: u32, told_ns: u64, gone: &mut HashSet<u32>) {
        let mut stack: Vec<u32> = self
            .made
            .get(&tid)
            .into_iter()
            .flatten()
            .copied()
            .filter(|c| self.first_issue.get(c).is_some_and(|&f| f > told_ns))
            .collect();
        while let Some(c) = stack.pop() {
            if gone.insert(c) {
                stack.extend(self.made.get(&c).into_iter().flatten().copied());
            }
        }
    }
}
