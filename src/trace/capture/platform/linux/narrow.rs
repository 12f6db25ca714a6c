//! 32-bit programs (i386 or x32 on x86_64, arm on aarch64): their calls have another ABI's
//! numbers and arguments — i386's `read` is x86_64's `close` —, which this build does not
//! decode. The tracer notes when each process runs one (from its exec of it, or its fork
//! from a process that ran one, to its next exec of a 64-bit program or its end); their
//! calls are taken out of the trace before it is decoded, and the trace counts the
//! processes and says it is incomplete.

use std::collections::{HashMap, HashSet};
use std::io::Read;

use super::perf::Raw;

/// Processes running a 32-bit program: since when, and the runs that ended.
#[derive(Debug, Default)]
pub struct Narrow {
    open: HashMap<u32, u64>,
    runs: Vec<Run>,
}

/// A process that ran a 32-bit program, from `from` to `to` (ns, CLOCK_MONOTONIC).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    pub pid: u32,
    pub from: u64,
    pub to: u64,
}

impl Narrow {
    /// Whether a process runs a 32-bit program now.
    pub fn any(&self) -> bool {
        !self.open.is_empty()
    }

    /// Process `pid` replaced its program at `t` (stopped at its exec, so its new program is
    /// the one /proc names).
    pub fn exec(&mut self, pid: u32, t: u64) {
        match (is_32bit(pid), self.open.contains_key(&pid)) {
            (true, false) => {
                self.open.insert(pid, t);
            }
            (false, true) => self.end(pid, t),
            _ => {}
        }
    }

    /// A new process `child` of `parent`: it runs its parent's program, from the parent's
    /// start of it (the child may have run, and made calls, before the tracer saw the fork:
    /// before it was made, its id had no process of the program's).
    pub fn fork(&mut self, parent: u32, child: u32) {
        if let Some(&from) = self.open.get(&parent) {
            self.open.insert(child, from);
        }
    }

    /// Process `pid` ended (or left its 32-bit program) at `t`.
    pub fn end(&mut self, pid: u32, t: u64) {
        if let Some(from) = self.open.remove(&pid) {
            self.runs.push(Run { pid, from, to: t });
        }
    }

    /// Every run, those still going at the trace's end open-ended.
    pub fn finish(mut self) -> Vec<Run> {
        let open = std::mem::take(&mut self.open);
        self.runs.extend(open.into_iter().map(|(pid, from)| Run {
            pid,
            from,
            to: u64::MAX,
        }));
        self.runs
    }
}

/// Whether the program process `pid` runs is a 32-bit ELF file (ELFCLASS32).
fn is_32bit(pid: u32) -> bool {
    let mut head = [0u8; 5];
    std::fs::File::open(format!("/proc/{pid}/exe"))
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| head[..4] == *b"\x7fELF" && head[4] == 1)
}

/// Takes the calls `runs` made out of `raw` (in time order): a whole call, or an entry and
/// its exit.
pub fn drop_calls(raw: &mut Vec<Raw>, runs: &[Run]) {
    if runs.is_empty() {
        return;
    }
    let mut by_pid: HashMap<u32, Vec<(u64, u64)>> = HashMap::new();
    for r in runs {
        by_pid.entry(r.pid).or_default().push((r.from, r.to));
    }
    let narrow = |pid: u32, t: u64| {
        by_pid
            .get(&pid)
            .is_some_and(|v| v.iter().any(|&(from, to)| from <= t && t <= to))
    };
    let mut entered = HashSet::new();
    raw.retain(|r| match *r {
        Raw::Call { t, pid, .. } => !narrow(pid, t),
        Raw::Enter { t, pid, tid, .. } => !(narrow(pid, t) && entered.insert(tid)),
        Raw::Exit { tid, .. } => !entered.remove(&tid),
        // A 32-bit program's faults stay: its mappings are not known, so they count as
        // outside every mapping.
        Raw::Fork { .. } | Raw::End { .. } | Raw::Exec { .. } | Raw::Fault { .. } => true,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A process runs a 32-bit program from 100 to 500: its calls then go (an entry's exit
    /// with it), its calls before and after stay, as do other processes' and task records.
    #[test]
    fn a_32_bit_programs_calls_are_taken_out() {
        let call = |t, pid| Raw::Call {
            t,
            exit: t + 5,
            pid,
            tid: pid,
            nr: 0,
            args: [0; 6],
            ret: 0,
        };
        let enter = |t, tid| Raw::Enter {
            t,
            pid: 7,
            tid,
            nr: 0,
            args: [0; 6],
        };
        let exit = |t, tid| Raw::Exit {
            t,
            tid,
            nr: 0,
            ret: 0,
        };
        let mut raw = vec![
            call(50, 7),
            Raw::Exec { t: 100, pid: 7 },
            call(150, 7),
            call(160, 8),
            enter(200, 9),
            exit(210, 9),
            enter(300, 7),
            exit(310, 7),
            call(600, 7),
        ];
        let runs = [Run {
            pid: 7,
            from: 100,
            to: 500,
        }];
        drop_calls(&mut raw, &runs);
        let left: Vec<u64> = raw.iter().map(Raw::time).collect();
        assert_eq!(left, [50, 100, 160, 600]);
    }

    /// Forked from a 32-bit process, a child runs it too (from its parent's start of it)
    /// until its own exec or end.
    #[test]
    fn a_child_of_a_32_bit_process_runs_it_until_it_ends() {
        let mut n = Narrow::default();
        n.open.insert(7, 100);
        n.fork(7, 8);
        n.fork(9, 10);
        n.end(8, 400);
        assert!(n.any());
        let mut runs = n.finish();
        runs.sort_by_key(|r| r.pid);
        assert_eq!(
            runs,
            [
                Run {
                    pid: 7,
                    from: 100,
                    to: u64::MAX
                },
                Run {
                    pid: 8,
                    from: 100,
                    to: 400
                }
            ]
        );
    }
}
