//! The order a replay keeps across threads (as ARTC and ROOT do): a call waits for another
//! thread's call that the recording shows it depended on, one that touched the same file and
//! had completed before this one was issued, where at least one of the two changes what the
//! other sees. A read waits for an earlier completed write of an overlapping range; a write
//! for an earlier completed write of an overlapping range (their order decides the content)
//! or for the file's creation; a call on the whole file (sync, truncate, fallocate, unlink,
//! open, rename) for the last completed write or whole-file change, a rename for that of the
//! file whose name it takes too. Calls of one thread keep their own order
//! anyway. Pure: a function of the events.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};

use crate::trace::recording::{Event, NO_FILE, Op, flag};

/// Most overlapping writes looked at per call: a bound on the work, not on correctness of the
/// common cases (a read of one earlier write, a sync after many).
const SCAN: usize = 64;

/// For each event, the index of the event of another thread it must wait for (None: only its
/// own thread's order).
pub fn dependencies(events: &[Event]) -> Vec<Option<usize>> {
    let mut deps = vec![None; events.len()];
    // Per file: completed writes by start offset → (end, event); and the last completed
    // whole-file change (creation, truncate, unlink) or write, with its thread.
    let mut ranges: HashMap<u32, BTreeMap<u64, (u64, usize)>> = HashMap::new();
    let mut last_change: HashMap<u32, usize> = HashMap::new();
    // Writes issued but not yet complete at the current issue time: (completion, event).
    let mut pending: BinaryHeap<Reverse<(u64, usize)>> = BinaryHeap::new();
    for (i, e) in events.iter().enumerate() {
        while let Some(Reverse((done, j))) = pending.peek().copied() {
            if done > e.t {
                break;
            }
            pending.pop();
            let w = &events[j];
            last_change.insert(w.file, j);
            if matches!(w.op, Op::Write) && w.len > 0 {
                insert(
                    ranges.entry(w.file).or_default(),
                    w.offset,
                    w.offset.saturating_add(w.len),
                    j,
                );
            }
        }
        if e.file == NO_FILE {
            continue;
        }
        let other = |j: &usize| events[*j].tid != e.tid;
        deps[i] = match e.op {
            Op::Read | Op::Write if e.len > 0 => ranges
                .get(&e.file)
                .and_then(|m| latest_overlap(m, e.offset, e.offset.saturating_add(e.len), &other))
                .or_else(|| created_by_other(&last_change, events, e)),
            Op::Seek | Op::Mmap | Op::Close => None,
            // A rename waits for the last change of its file and of the file whose name it
            // takes (`arg`: that file plus one).
            Op::Rename => [Some(e.file), e.arg.checked_sub(1)]
                .into_iter()
                .flatten()
                .filter_map(|f| last_change.get(&f).copied())
                .filter(|j| other(j))
                .max(),
            _ => last_change.get(&e.file).copied().filter(|j| other(j)),
        };
        let changes = matches!(
            e.op,
            Op::Write | Op::Truncate | Op::Fallocate | Op::Unlink | Op::Rename
        ) || (e.op == Op::Open && e.flags & flag::CREATED != 0);
        if changes && e.result >= 0 {
            pending.push(Reverse((e.t.saturating_add(e.dur), i)));
        }
    }
    deps
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
        let d = dependencies(&events);
        assert_eq!(d, vec![None, None, Some(0), None, None, Some(0), Some(5)]);
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
        assert_eq!(dependencies(&events), vec![None, Some(0), Some(0)]);
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
        let d = dependencies(&events);
        // The first rename: file 0's last write (2) is later than file 1's (1); the open by
        // its new name waits for the second; the read for the write of what it reads.
        assert_eq!(
            d,
            vec![None, None, None, Some(2), Some(3), Some(4), Some(0)]
        );
        // A rename that failed changes nothing: the next waits for what came before it.
        let mut failed = events;
        failed[3].result = -17;
        assert_eq!(dependencies(&failed)[4], Some(2));
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
