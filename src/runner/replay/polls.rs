//! Polls replayed (`trace::poll`): a thread that looked for a file on a timer until another
//! thread changed it looks here until the change is made here. At a look before the last,
//! where the change is already made, the looks after it (and what the thread did between
//! them) are not made: the poll's last look is made in its place. At the last look, where
//! the change is not yet made, the look waits for it and then for the thread's next turn —
//! the look before it plus a whole number of recorded periods.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::trace::anchor::Anchors;
use crate::trace::poll::Poll;
use crate::trace::recording::Recording;
use crate::trace::replayed::{Mode, PollFigures};

use super::ThreadResult;
use super::issue::{Shared, completed_at, mark, wait_for};

/// The trace's polls, and each look's part in them.
#[derive(Default)]
pub struct Polls {
    list: Vec<Poll>,
    /// Per look's first call: (poll, the look's place in it).
    roles: HashMap<usize, Vec<(usize, usize)>>,
}

impl Polls {
    pub fn new(list: Vec<Poll>) -> Polls {
        let mut roles: HashMap<usize, Vec<(usize, usize)>> = HashMap::new();
        for (p, poll) in list.iter().enumerate() {
            for (n, &i) in poll.looks.iter().enumerate() {
                roles.entry(i).or_default().push((p, n));
            }
        }
        Polls { list, roles }
    }

    /// The polls of `r` where `mode` replays them (closed); `anchors` the calls a wake-up
    /// started, which are no poll's last look.
    pub fn of(r: &Recording, mode: Mode, anchors: &Anchors) -> Polls {
        if mode != Mode::Closed {
            return Polls::default();
        }
        let paths: Vec<String> = r.footer.files.iter().map(|f| f.path.clone()).collect();
        Polls::new(crate::trace::poll::polls(&r.events, &paths, |i| {
            anchors.contains_key(&i)
        }))
    }

    /// The replay's figures of them, from its threads'.
    pub fn figures(&self, threads: &[ThreadResult]) -> PollFigures {
        PollFigures {
            found: self.list.len() as u64,
            ended_sooner: threads.iter().map(|t| t.polls_cut).sum(),
            ended_later: threads.iter().map(|t| t.polls_held).sum(),
        }
    }

    fn roles(&self, i: usize) -> impl Iterator<Item = (&Poll, usize)> {
        // Most traces have none: no hashing on each call then.
        (!self.list.is_empty())
            .then(|| self.roles.get(&i))
            .flatten()
            .into_iter()
            .flatten()
            .map(|&(p, n)| (&self.list[p], n))
    }
}

/// At the thread's call `rest[0]`, due now: where it is a look before a poll's last and that
/// poll's change is made, the poll's last look is made instead — the calls from this one to
/// it are not (marked so, and complete for any that waits on them). How many that is (0:
/// the call is made).
pub fn cut(s: &Shared<'_>, start: Instant, rest: &[usize]) -> usize {
    let Some(last) = s
        .polls
        .roles(rest[0])
        .find(|(p, n)| n + 1 < p.looks.len() && s.done[p.change].load(Ordering::Acquire) != 0)
        .map(|(p, _)| *p.looks.last().expect("two looks or more"))
    else {
        return 0;
    };
    let n = rest.iter().position(|&j| j == last).unwrap_or(0);
    for &j in &rest[..n] {
        s.timing[j].skipped.store(true, Ordering::Relaxed);
        mark(s, start, j);
    }
    n
}

/// At call `i`: where it is a poll's last look and the change it saw is made here later than
/// the look before it plus one period, the thread's first turn after the change (and the
/// change); None where the look is due as it is. Waits for the change.
pub fn held(s: &Shared<'_>, start: Instant, i: usize) -> Option<(Instant, usize)> {
    let (p, _) = s.polls.roles(i).find(|(p, n)| n + 1 == p.looks.len())?;
    let before = p.looks[p.looks.len() - 2];
    let issued = s.timing[before].issued_ns.load(Ordering::Acquire);
    if issued == 0 {
        // The look before was not made (the poll was cut short): this one replaced it.
        return None;
    }
    let base = start + Duration::from_nanos(issued - 1);
    let period = s.scaled(p.period_ns).max(Duration::from_micros(1));
    wait_for(s, p.change);
    let made = completed_at(s, start, p.change);
    if made <= base + period {
        return None;
    }
    let turns = (made - base).as_nanos().div_ceil(period.as_nanos());
    let wait = Duration::from_nanos((period.as_nanos() * turns).min(u64::MAX as u128) as u64);
    Some((base + wait, p.change))
}
