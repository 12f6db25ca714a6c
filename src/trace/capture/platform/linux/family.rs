//! Who created whom among the recorded program's tasks, when each was created and when it
//! ended (the perf or ptrace task records), made into each recorded thread's parent, birth and
//! end — what a closed-loop replay and a prediction need to start a thread's calls after its
//! creator's and a waiting creator's after its children's (`trace::anchor`).

use std::collections::{HashMap, HashSet};

use crate::trace::recording::ThreadInfo;

/// A task's creator, its creation and its end, ns from the start.
pub type Kin = (Option<u32>, u64, Option<u64>);

/// Each recorded thread's creation, end and parent: the nearest task above it that made
/// recorded calls (a shell between a program and its children has none).
pub fn relate(threads: &mut [ThreadInfo], kin: &HashMap<u32, Kin>) {
    let recorded: HashSet<u32> = threads.iter().map(|t| t.tid).collect();
    for t in threads.iter_mut() {
        let Some(&(creator, born, ended)) = kin.get(&t.tid) else {
            continue;
        };
        t.born_ns = creator.map(|_| born);
        t.ended_ns = ended;
        let mut up = creator;
        // Bounded: a task table read out of order cannot loop.
        for _ in 0..kin.len() + 1 {
            match up {
                Some(p) if recorded.contains(&p) => break,
                Some(p) => up = kin.get(&p).and_then(|k| k.0),
                None => break,
            }
        }
        t.parent = up.filter(|p| recorded.contains(p) && *p != t.tid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn th(tid: u32) -> ThreadInfo {
        ThreadInfo {
            tid,
            pid: tid,
            first_ns: 0,
            last_ns: 0,
            parent: None,
            born_ns: None,
            ended_ns: None,
            off_cpu: None,
        }
    }

    #[test]
    fn a_thread_is_the_child_of_the_nearest_task_above_it_that_made_calls() {
        // 1 (the program, calls) made 2 (a shell, no calls), which made 3 (calls); 1 made 4.
        let kin: HashMap<u32, Kin> = HashMap::from([
            (1, (None, 0, Some(900))),
            (2, (Some(1), 10, Some(800))),
            (3, (Some(2), 20, Some(700))),
            (4, (Some(1), 30, None)),
        ]);
        let mut threads = vec![th(1), th(3), th(4), th(5)];
        relate(&mut threads, &kin);
        let got: Vec<_> = threads
            .iter()
            .map(|t| (t.tid, t.parent, t.born_ns, t.ended_ns))
            .collect();
        assert_eq!(
            got,
            vec![
                (1, None, None, Some(900)),
                (3, Some(1), Some(20), Some(700)),
                (4, Some(1), Some(30), None),
                // A task the records never showed being made: nothing known.
                (5, None, None, None),
            ]
        );
    }

    #[test]
    fn a_loop_in_a_task_table_read_out_of_order_ends() {
        let kin: HashMap<u32, Kin> =
            HashMap::from([(2, (Some(3), 5, None)), (3, (Some(2), 6, None))]);
        let mut threads = vec![th(1), th(2)];
        relate(&mut threads, &kin);
        assert_eq!(threads[1].parent, None);
    }
}
