//! The order a replay keeps across threads (as ARTC and ROOT do): a call waits for other
//! threads' calls that the recording shows it depended on, ones that touched the same file and
//! had completed before this one was issued, where at least one of the two changes what the
//! other sees. A read waits for an earlier completed write of an overlapping range; a write
//! for an earlier completed write of an overlapping range (their order decides the content)
//! or for the file's creation; an open, sync or other call on the whole file for the last
//! completed write or whole-file change. A whole-file change (truncate, fallocate, unlink,
//! rename) waits for the last change too, and for every other thread's last completed use of
//! the file since (an open, read or close it would otherwise pull the file from under); a
//! rename for those of the file whose name it takes as well. Calls of one thread keep their
//! own order anyway. Pure: a function of the events.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};

use crate::trace::recording::{Event, NO_FILE, Op, flag};

/// Most overlapping writes looked at per call: a bound on the work, not on correctness of the
/// common cases (a read of one earlier write, a sync after many).
const SCAN: usize = 64;

/// Each event's calls of other threads to wait for, in one flat list (most calls have none
/// or one; a whole-file change one per thread that used the file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dependencies {
    /// Where event `i`'s list starts in `on`; one more entry than events.
    first: Vec<usize>,
    on: Vec<usize>,
}

impl Dependencies {
    pub fn with_capacity(events: usize) -> Dependencies {
        let mut first = Vec::with_capacity(events + 1);
        first.push(0);
        Dependencies {
            first,
            on: Vec::new(),
        }
    }

    /// Adds the next event's list (duplicates dropped).
    pub fn push(&mut self, deps: impl IntoIterator<Item = usize>) {
        let from = *self.first.last().expect("starts with 0");
        self.on.extend(deps);
        self.on[from..].sort_unstable();
        let mut kept = from;
        for k in from..self.on.len() {
            if kept == from || self.on[kept - 1] != self.on[k] {
                self.on[kept] = self.on[k];
                kept += 1;
            }
        }
        self.on.truncate(kept);
        self.first.push(kept);
    }

    /// The calls event `i` waits for (ascending).
    pub fn of(&self, i: usize) -> &[usize] {
        &self.on[self.first[i]..self.first[i + 1]]
    }

    pub fn len(&self) -> usize {
        self.first.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every event's list (for tests).
    #[cfg(test)]
    pub fn lists(&self) -> Vec<Vec<usize>> {
        (0..self.len()).map(|i| self.of(i).to_vec()).collect()
    }
}

/// What is known of the file calls completed before the current call's issue.
#[derive(Default)]
struct Seen {
    /// Per file: completed writes by start offset → (end, event).
    ranges: HashMap<u32, BTreeMap<u64, (u64, usize)>>,
    /// Per file: the last completed change (a write or a whole-file change).
    last_change: HashMap<u32, usize>,
    /// Per file, per thread: its last completed call on the file not yet ordered before a
    /// whole-file change, with its completion time.
    uses: HashMap<u32, HashMap<u32, (usize, u64)>>,
}

/// For each event, the events of other threads it must wait for (none: only its own
/// thread's order).
pub fn dependencies(events: &[Event]) -> Dependencies {
    let mut deps = Dependencies::with_capacity(events.len());
    let mut seen = Seen::default();
    // Calls on files issued but not complete at the current issue time: (completion, event).
    let mut pending: BinaryHeap<Reverse<(u64, usize)>> = BinaryHeap::new();
    let mut list = Vec::new();
    for (i, e) in events.iter().enumerate() {
        while let Some(Reverse((done, j))) = pending.peek().copied() {
            if done > e.t {
                break;
            }
            pending.pop();
            seen.completed(events, j, done);
        }
        list.clear();
        // A look that found nothing depends on nothing having been made yet: it neither waits
        // (waiting for the file's creation would make it find the file) nor holds anyone.
        if e.file != NO_FILE && !(e.op == Op::Open && e.result < 0) {
            seen.waits(events, e, &mut list);
            pending.push(Reverse((e.done_ns(), i)));
        }
        deps.push(list.iter().copied());
    }
    deps
}

/// Whether `e` changes its whole file (and so waits for every use of it before).
fn whole_file_change(e: &Event) -> bool {
    e.result >= 0 && matches!(e.op, Op::Truncate | Op::Fallocate | Op::Unlink | Op::Rename)
}

/// Whether `e` changes what other calls on its file see: a whole-file change, a write, the
/// open that created the file.
fn changes(e: &Event) -> bool {
    whole_file_change(e)
        || (e.result >= 0
            && (e.op == Op::Write || (e.op == Op::Open && e.flags & flag::CREATED != 0)))
}

/// The files a call names: its own and, for a rename, the one whose name it takes.
fn files(e: &Event) -> impl Iterator<Item = u32> {
    let taken = (e.op == Op::Rename).then(|| e.arg.checked_sub(1)).flatten();
    std::iter::once(e.file).chain(taken)
}

impl Seen {
    /// Event `j` completed at `done`.
    fn completed(&mut self, events: &[Event], j: usize, done: u64) {
        let w = &events[j];
        if whole_file_change(w) {
            // The uses it waited for (completed before its issue) are behind it now.
            for f in files(w) {
                if let Some(u) = self.uses.get_mut(&f) {
                    u.retain(|_, (_, at)| *at > w.t);
                }
            }
        }
        for f in files(w) {
            let u = self.uses.entry(f).or_default();
            let last = u.entry(w.tid).or_insert((j, done));
            if last.0 < j {
                *last = (j, done);
            }
        }
        if !changes(w) {
            return;
        }
        self.last_change.insert(w.file, j);
        if w.op == Op::Write && w.len > 0 {
            insert(
                self.ranges.entry(w.file).or_default(),
                w.offset,
                w.offset.saturating_add(w.len),
                j,
            );
        }
    }

    /// Puts in `out` the other threads' calls `e` waits for.
    fn waits(&self, events: &[Event], e: &Event, out: &mut Vec<usize>) {
        let other = |j: &usize| events[*j].tid != e.tid;
        match e.op {
            Op::Read | Op::Write if e.len > 0 => out.extend(
                self.ranges
                    .get(&e.file)
                    .and_then(|m| {
                        latest_overlap(m, e.offset, e.offset.saturating_add(e.len), &other)
                    })
                    .or_else(|| created_by_other(&self.last_change, events, e)),
            ),
            Op::Seek | Op::Mmap | Op::Close => {}
            _ if whole_file_change(e) => {
                for f in files(e) {
                    out.extend(self.last_change.get(&f).copied().filter(other));
                    if let Some(u) = self.uses.get(&f) {
                        out.extend(u.values().map(|(j, _)| *j).filter(other));
                    }
                }
            }
            _ => out.extend(self.last_change.get(&e.file).copied().filter(other)),
        }
    }
}

/// The file's creation, truncation or removal by another thread, for a call that overlaps
/// no earlier write.
fn created_by_other(last: &HashMap<u32, usize>, events: &[Event], e: &Event) -> Option<usize> {
    let j = *last.get(&e.file)?;
    let c = &events[j];
    (c.tid != e.tid && c.op != Op::Write).then_some(j)
}

/// The latest (highest index) write overlapping `[a, b)` that passes `keep`.
fn latest_overlap(
    m: &BTreeMap<u64, (u64, usize)>,
    a: u64,
    b: u64,
    keep: &dyn Fn(&usize) -> bool,
) -> Option<usize> {
    m.range(..b)
        .rev()
        .take(SCAN)
        .filter(|(_, (end, _))| *end > a)
        .map(|(_, (_, j))| *j)
        .filter(keep)
        .max()
}

/// Records a completed write of `[a, b)`, replacing what it covers whole (keeping the map
/// as small as the file's distinct recent writes).
fn insert(m: &mut BTreeMap<u64, (u64, usize)>, a: u64, b: u64, j: usize) {
    let covered: Vec<u64> = m
        .range(a..b)
        .filter(|(_, (end, _))| *end <= b)
        .map(|(s, _)| *s)
        .collect();
    for s in covered {
        m.remove(&s);
    }
    m.insert(a, (b, j));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(t: u64, dur: u64, tid: u32, op: Op, offset: u64, len: u64) -> Event {
        Event {
            t,
            dur,
            offset,
            len,
            result: len as i64,
            tid,
            file: 0,
            arg: 0,
            op,
            flags: 0,
        }
    }

    #[test]
    fn a_read_waits_for_the_other_threads_completed_write_of_its_range() {
        let events = [
            ev(0, 10, 1, Op::Write, 0, 4096),
            ev(5, 10, 2, Op::Read, 0, 4096), // issued before the write completed: concurrent
            ev(20, 10, 2, Op::Read, 1024, 512),
            ev(30, 10, 2, Op::Read, 8192, 4096), // another range
            ev(40, 10, 1, Op::Read, 0, 4096),    // its own thread's write: program order
            ev(50, 5, 2, Op::Write, 2048, 4096),
            ev(60, 5, 1, Op::Fsync, 0, 0),
        ];
        let d = dependencies(&events).lists();
        assert_eq!(
            d,
            [vec![], vec![], vec![0], vec![], vec![], vec![0], vec![5]]
        );
    }

    #[test]
    fn a_call_on_a_file_another_thread_created_waits_for_the_creation() {
        let mut create = ev(0, 10, 1, Op::Open, 0, 0);
        create.flags = flag::CREATED;
        create.result = 3;
        let events = [
            create,
            ev(20, 1, 2, Op::Read, 0, 100),
            ev(30, 1, 2, Op::Write, 0, 100),
        ];
        assert_eq!(dependencies(&events).lists(), [vec![], vec![0], vec![0]]);
    }

    #[test]
    fn a_rename_waits_for_both_files_and_later_calls_wait_for_it() {
        // Thread 1 writes file 0 aside; thread 2 wrote file 1, whose name thread 3 renames
        // file 0 onto; thread 4 then renames file 0 again and thread 5 opens and reads it.
        let mut over = ev(40, 5, 3, Op::Rename, 0, 0);
        over.arg = 2;
        over.result = 0;
        let mut again = ev(60, 5, 4, Op::Rename, 0, 0);
        again.result = 0;
        let mut other = ev(10, 5, 2, Op::Write, 0, 100);
        other.file = 1;
        let events = [
            ev(0, 5, 1, Op::Write, 0, 100),
            other,
            ev(20, 5, 1, Op::Write, 100, 100),
            over,
            again,
            ev(75, 2, 5, Op::Open, 0, 0),
            ev(80, 5, 5, Op::Read, 0, 100),
        ];
        let d = dependencies(&events).lists();
        // The first rename: file 0's last write (2) and file 1's (1); the second rename only
        // the first (thread 1's writes are behind it); the open by its new name waits for
        // the second; the read for the write of what it reads.
        assert_eq!(
            d,
            [
                vec![],
                vec![],
                vec![],
                vec![1, 2],
                vec![3],
                vec![4],
                vec![0]
            ]
        );
        // A rename that failed changes nothing: the next waits for what came before it (and
        // for the failed one as another thread's use of the file), the open for the second.
        let mut failed = events;
        failed[3].result = -17;
        let d = dependencies(&failed);
        assert_eq!(d.of(4), [2, 3]);
        assert_eq!(d.of(5), [4]);
    }

    /// `cat ds; mv ds.lck ds` as two processes: the rename must not pull the data set from
    /// under the reader, so it waits for the reader's last call on it (its close); an unlink
    /// after two readers waits for both, and a read concurrent with a rename is still waited
    /// for by the next whole-file change.
    #[test]
    fn a_whole_file_change_waits_for_every_other_threads_use_of_the_file() {
        let on = |mut e: Event, file: u32| {
            e.file = file;
            e
        };
        let mut open = ev(0, 2, 1, Op::Open, 0, 0);
        open.result = 3;
        let mut close = ev(20, 1, 1, Op::Close, 0, 0);
        close.result = 0;
        let mut mv = ev(30, 5, 2, Op::Rename, 0, 0);
        mv.file = 1;
        mv.arg = 1;
        mv.result = 0;
        let mut unlink = ev(100, 5, 5, Op::Unlink, 0, 0);
        unlink.file = 1;
        unlink.result = 0;
        let events = [
            open,
            ev(5, 10, 1, Op::Read, 0, 100),
            close,
            mv,
            on(ev(31, 2, 3, Op::Read, 0, 100), 1), // concurrent with the rename
            on(ev(50, 2, 4, Op::Read, 0, 100), 1),
            unlink,
        ];
        let d = dependencies(&events).lists();
        assert_eq!(d[3], [2], "the rename waits for the reader's close");
        assert_eq!(
            d[4],
            Vec::<usize>::new(),
            "issued before the rename completed"
        );
        assert_eq!(d[5], [3], "the read by the new name waits for the rename");
        assert_eq!(
            d[6],
            [3, 4, 5],
            "the unlink waits for the rename and both readers"
        );
    }

    #[test]
    fn a_list_drops_duplicates() {
        let mut d = Dependencies::with_capacity(2);
        d.push([5, 2, 5, 2]);
        d.push([]);
        assert_eq!(d.lists(), [vec![2, 5], vec![]]);
        assert_eq!(d.len(), 2);
    }

    #[test]
    fn later_writes_replace_the_ranges_they_cover() {
        let mut m = BTreeMap::new();
        insert(&mut m, 0, 100, 1);
        insert(&mut m, 100, 200, 2);
        insert(&mut m, 0, 200, 3);
        assert_eq!(m.len(), 1);
        assert_eq!(latest_overlap(&m, 50, 60, &|_| true), Some(3));
    }
}
