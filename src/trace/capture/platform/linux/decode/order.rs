//! The decoded events put in issue order at the end of the walk, with what refers to them by
//! index (the gaps between each thread's calls).

use crate::trace::recording::{Event, Gap};

/// The events in issue order (a stable sort: calls come in the order of their exits), the
/// gaps' event indices following them. In place: the events are the recorder's largest list
/// by then, and a sorted copy would double it.
pub(super) fn by_issue_time(events: &mut [Event], gaps: &mut [Gap]) {
    if gaps.is_empty() {
        events.sort_by_key(|e| e.t);
        return;
    }
    // `order[new]` is the event that goes to `new`.
    let mut order: Vec<u32> = (0..events.len() as u32).collect();
    order.sort_by_key(|&i| events[i as usize].t);
    let mut to = vec![0u32; events.len()];
    for (new, &old) in order.iter().enumerate() {
        to[old as usize] = new as u32;
    }
    for g in gaps.iter_mut() {
        g.event = u64::from(to[g.event as usize]);
    }
    drop(to);
    // Cycle by cycle, each event moved once; a place filled is marked as its own.
    for start in 0..events.len() {
        if order[start] as usize == start {
            continue;
        }
        let first = events[start];
        let mut at = start;
        loop {
            let from = order[at] as usize;
            order[at] = at as u32;
            if from == start {
                events[at] = first;
                break;
            }
            events[at] = events[from];
            at = from;
        }
    }
    gaps.sort_unstable_by_key(|g| g.event);
}
