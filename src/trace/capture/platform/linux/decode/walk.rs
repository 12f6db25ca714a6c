//! The records in time order, one by one: calls paired (entry with exit, per thread), each
//! whole call (the eBPF ring's) entered at its entry's time and ended at its exit's, the
//! scheduler's switches (a list of their own, merged in), and the tasks' births, ends and
//! execs.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use super::super::calls::Call;
use super::super::perf::{Raw, Switch, Waking};
use super::{Done, Entered, State};
use crate::trace::recording::{Gap, ThreadInfo};

/// A whole call's exit, waiting for its time: (time, order of arrival, thread, number,
/// result); the order keeps exits of the same nanosecond in the order their calls came.
type Exit = Reverse<(u64, u64, u32, i32, i64)>;

pub(super) struct Walk {
    /// Each thread's call entered and not yet ended.
    pub(super) pending: HashMap<u32, Entered>,
    pub(super) threads: HashMap<u32, ThreadInfo>,
    /// Each task's creator, creation and end (ns from the start).
    pub(super) kin: HashMap<u32, super::super::family::Kin>,
    pub(super) sched: super::super::sched::Sched,
    exits: BinaryHeap<Exit>,
    arrived: u64,
    /// The switches and wake-ups not yet walked, latest first.
    switches: Vec<Switch>,
    wakings: Vec<Waking>,
    /// Where wake-ups are seen: each process the program started, by its creator. Its end
    /// wakes the creator (SIGCHLD, wait), which `sched_waking` cannot show: the exiting
    /// task's events are gone by then.
    forked: Option<HashMap<u32, u32>>,
}

impl Walk {
    /// A walk with the scheduler's records (None: the capture had none).
    pub(super) fn new(sched: Option<super::super::sched::Records>) -> Walk {
        let measured = sched.is_some();
        let super::super::sched::Records { switches, wakings } = sched.unwrap_or_default();
        let forked = wakings.is_some().then(HashMap::new);
        let mut switches = switches;
        let mut wakings = wakings.unwrap_or_default();
        // Each CPU's records came in its order: sorted (stable), then reversed to be taken
        // from the end.
        switches.sort_by_key(|w| w.t);
        switches.reverse();
        wakings.sort_by_key(|w| w.t);
        wakings.reverse();
        Walk {
            pending: HashMap::new(),
            threads: HashMap::new(),
            kin: HashMap::new(),
            sched: super::super::sched::Sched::new(measured),
            exits: BinaryHeap::new(),
            arrived: 0,
            switches,
            wakings,
            forked,
        }
    }

    /// The whole calls' exits at or before `t` and the scheduler's records before it, in time
    /// order (an exit before a switch of its nanosecond, a switch before a wake-up).
    pub(super) fn until(&mut self, s: &mut State, t: u64) {
        loop {
            let exit = self.exits.peek().map(|e| e.0.0).filter(|&at| at <= t);
            let switch = self.switches.last().map(|w| w.t).filter(|&at| at < t);
            let waking = self.wakings.last().map(|w| w.t).filter(|&at| at < t);
            let sched = match (switch, waking) {
                (Some(w), Some(k)) => Some(w.min(k)),
                (w, k) => w.or(k),
            };
            match (exit, sched) {
                (Some(e), Some(w)) if w < e => self.scheduled(switch == Some(w)),
                (Some(_), _) => {
                    let Some(Reverse((at, _, tid, nr, ret))) = self.exits.pop() else {
                        break;
                    };
                    s.uring_polled_until(at);
                    self.exit(s, (at, tid, nr, ret));
                }
                (None, Some(w)) => self.scheduled(switch == Some(w)),
                (None, None) => break,
            }
        }
    }

    /// The next switch (`switch`) or wake-up, its room given back as the records' is.
    fn scheduled(&mut self, switch: bool) {
        if switch {
            if let Some(w) = super::pop_giving_back(&mut self.switches) {
                self.sched.switch(w.t, w.tid, w.out, w.preempted);
            }
        } else if let Some(w) = super::pop_giving_back(&mut self.wakings) {
            self.sched.waking(w.t, w.by, w.tid);
        }
    }

    /// One record, at its time (the whole calls' earlier exits taken first).
    pub(super) fn record(&mut self, s: &mut State, r: Raw) {
        match r {
            Raw::Enter {
                t,
                pid,
                tid,
                nr,
                args,
            } => self.enter(s, tid, Entered { t, pid, nr, args }),
            Raw::Call {
                t,
                exit,
                pid,
                tid,
                nr,
                args,
                ret,
            } => {
                self.enter(s, tid, Entered { t, pid, nr, args });
                self.arrived += 1;
                self.exits
                    .push(Reverse((exit.max(t), self.arrived, tid, nr, ret)));
            }
            Raw::Exit { t, tid, nr, ret } => self.exit(s, (t, tid, nr, ret)),
            Raw::Fault { t, pid, tid, addr } => {
                let asleep = self.sched.fault(tid, t);
                s.fault((t, pid, tid), addr, asleep);
            }
            task => {
                if let Some(forked) = &mut self.forked {
                    match task {
                        Raw::Fork {
                            pid,
                            ppid,
                            tid,
                            ptid,
                            ..
                        } if pid != ppid && tid == pid => {
                            forked.insert(tid, ptid);
                        }
                        Raw::End { t, tid } => {
                            if let Some(creator) = forked.remove(&tid) {
                                self.sched.waking(t, tid, creator);
                            }
                        }
                        _ => {}
                    }
                }
                s.task(task, &mut self.kin)
            }
        }
    }

    fn enter(&mut self, s: &mut State, tid: u32, e: Entered) {
        if self.pending.insert(tid, e).is_some() {
            s.out.unmatched += 1;
        }
        self.sched.enter(tid);
    }

    /// A call's exit: paired with its thread's entry of the same call, decoded.
    fn exit(&mut self, s: &mut State, (t, tid, nr, ret): (u64, u32, i32, i64)) {
        let slept = self.sched.exit(tid);
        let Some(e) = self.pending.remove(&tid).filter(|e| e.nr == nr) else {
            s.out.unmatched += 1;
            self.sched.untraced(tid);
            return;
        };
        let Some(call) = Call::of(nr.into()) else {
            self.sched.untraced(tid);
            return;
        };
        let kept = s.out.events.len();
        let rel = e.t.saturating_sub(s.t0);
        let th = self.threads.entry(tid).or_insert(ThreadInfo {
            tid,
            pid: e.pid,
            first_ns: rel,
            last_ns: rel,
            parent: None,
            born_ns: None,
            ended_ns: None,
            off_cpu: None,
        });
        th.last_ns = rel;
        s.handle(Done {
            call,
            t: e.t,
            dur: t.saturating_sub(e.t),
            pid: e.pid,
            tid,
            a: e.args,
            ret,
            slept,
        });
        if s.out.events.len() == kept {
            self.sched.untraced(tid);
            return;
        }
        // The time off the CPU before the call goes with its own event (not the I/Os an
        // io_submit issued), where it was measured and there was some.
        let own = (kept..s.out.events.len()).find(|&i| !s.out.events[i].is_async_io());
        if let Some(i) = own
            && let Some((asleep_ns, preempted_ns)) = self.sched.gap(tid)
            && asleep_ns + preempted_ns > 0
            && let Some(gaps) = &mut s.out.gaps
        {
            gaps.push(Gap {
                event: i as u64,
                asleep_ns,
                preempted_ns,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::sched::Records;
    use super::super::fixture::PID;
    use super::super::{Decoded, decode};
    use super::*;
    use crate::trace::recording::{Op, Wake, flag};

    /// A call of thread `tid` of process PID: (tid, number, entry time, duration, arguments,
    /// result).
    type Made = (u32, i64, u64, u64, [u64; 6], i64);

    /// The call as an entry and an exit (perf's and ptrace's records).
    fn split((tid, nr, t, dur, args, ret): Made) -> [Raw; 2] {
        let (pid, nr) = (PID, nr as i32);
        [
            Raw::Enter {
                t,
                pid,
                tid,
                nr,
                args,
            },
            Raw::Exit {
                t: t + dur,
                tid,
                nr,
                ret,
            },
        ]
    }

    /// The call as one record (the eBPF ring's).
    fn whole((tid, nr, t, dur, args, ret): Made) -> Raw {
        let (pid, exit, nr) = (PID, t + dur, nr as i32);
        Raw::Call {
            t,
            exit,
            pid,
            tid,
            nr,
            args,
            ret,
        }
    }

    /// Two threads writing and reading descriptor 5 (/data/f), their calls overlapping, one
    /// of them asleep in its read.
    fn program() -> Vec<Made> {
        let b = 0x7000;
        vec![
            (
                PID,
                libc::SYS_pread64,
                1_000,
                500,
                [5, b, 4096, 8192, 0, 0],
                4096,
            ),
            (
                PID + 1,
                libc::SYS_pwrite64,
                1_200,
                2_000,
                [5, b, 4096, 0, 0, 0],
                4096,
            ),
            (PID, libc::SYS_read, 2_000, 300, [5, b, 4096, 0, 0, 0], 4096),
            (PID, libc::SYS_read, 2_400, 100, [5, b, 4096, 0, 0, 0], 4096),
            (PID + 1, libc::SYS_fsync, 4_000, 100, [5, 0, 0, 0, 0, 0], 0),
            // Signals: the second thread's SIGTERM to the first (kept); to a process group,
            // to itself, a look for a process (signal 0), SIGCHLD, one that failed, and one
            // to a task the trace does not know (left out).
            (
                PID + 1,
                libc::SYS_tgkill,
                4_200,
                10,
                [PID as u64, PID as u64, 15, 0, 0, 0],
                0,
            ),
            (PID + 1, libc::SYS_kill, 4_300, 10, [0, 15, 0, 0, 0, 0], 0),
            (
                PID + 1,
                libc::SYS_tkill,
                4_310,
                10,
                [PID as u64 + 1, 15, 0, 0, 0, 0],
                0,
            ),
            (
                PID + 1,
                libc::SYS_kill,
                4_320,
                10,
                [PID as u64, 0, 0, 0, 0, 0],
                0,
            ),
            (
                PID + 1,
                libc::SYS_kill,
                4_330,
                10,
                [PID as u64, 17, 0, 0, 0, 0],
                0,
            ),
            (
                PID + 1,
                libc::SYS_kill,
                4_340,
                10,
                [PID as u64, 15, 0, 0, 0, 0],
                -3,
            ),
            (
                PID + 1,
                libc::SYS_kill,
                4_350,
                10,
                [PID as u64 + 9, 15, 0, 0, 0, 0],
                0,
            ),
        ]
    }

    fn decoded(raw: Vec<Raw>) -> Decoded {
        let inherited = super::super::fixture::data_file(libc::O_RDWR);
        // The first read sleeps from 2,100 to 2,250 ns (the switch back in listed first, as
        // another CPU's record can come); between it and the next read, at 2,320 to 2,380,
        // the thread sleeps outside any call.
        let switch = |t, out| Switch {
            t,
            tid: PID,
            out,
            preempted: false,
        };
        let waking = |t| Waking {
            t,
            by: PID + 1,
            tid: PID,
        };
        decode(
            raw,
            (Vec::new(), Vec::new()),
            PID,
            &inherited,
            (0, b"/".to_vec()),
            Some(Records {
                switches: vec![
                    switch(2_250, false),
                    switch(2_100, true),
                    switch(2_380, false),
                    switch(2_320, true),
                    // The other thread waits for a CPU before its fsync.
                    Switch {
                        t: 3_700,
                        tid: PID + 1,
                        out: false,
                        preempted: false,
                    },
                    Switch {
                        t: 3_500,
                        tid: PID + 1,
                        out: true,
                        preempted: true,
                    },
                ],
                // The other thread wakes the first while it runs (nothing to keep), then
                // during its sleep outside calls (kept), then again in that sleep (not kept).
                wakings: Some(vec![waking(2_360), waking(2_350), waking(1_500)]),
            }),
        )
    }

    #[test]
    fn a_process_ending_wakes_its_creator_asleep_then_where_wake_ups_are_seen() {
        // PID makes process PID + 5 at 100, falls asleep at 200, and the child ends at 500.
        let raw = vec![
            Raw::Fork {
                t: 100,
                pid: PID + 5,
                ppid: PID,
                tid: PID + 5,
                ptid: PID,
            },
            Raw::End {
                t: 500,
                tid: PID + 5,
            },
        ];
        let switch = |t, out| Switch {
            t,
            tid: PID,
            out,
            preempted: false,
        };
        let decoded = |wakings: Option<Vec<Waking>>| {
            decode(
                raw.clone(),
                (Vec::new(), Vec::new()),
                PID,
                &[],
                (0, b"/".to_vec()),
                Some(Records {
                    switches: vec![switch(200, true), switch(600, false)],
                    wakings,
                }),
            )
        };
        let d = decoded(Some(Vec::new()));
        assert!(d.wakes_seen);
        assert_eq!(
            d.wakes,
            [Wake {
                t: 500,
                tid: PID,
                by: PID + 5,
                asleep_ns: 300,
            }]
        );
        let d = decoded(None);
        assert!(!d.wakes_seen && d.wakes.is_empty());
    }

    #[test]
    fn whole_calls_decode_as_their_entries_and_exits_do() {
        let split = decoded(program().into_iter().flat_map(split).collect());
        let whole = decoded(program().into_iter().map(whole).collect());
        // What the split records decode to, checked, then the same from the whole calls.
        let seen: Vec<(u64, u64, u32, Op, u64, bool)> = split
            .events
            .iter()
            .map(|e| {
                (
                    e.t,
                    e.dur,
                    e.tid,
                    e.op,
                    e.offset,
                    e.flags & flag::SLEPT != 0,
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                (1_000, 500, PID, Op::Read, 8192, false),
                (1_200, 2_000, PID + 1, Op::Write, 0, false),
                (2_000, 300, PID, Op::Read, 0, true),
                (2_400, 100, PID, Op::Read, 4096, false),
                (4_000, 100, PID + 1, Op::Fsync, 0, false),
            ]
        );
        let main = split.threads.iter().find(|t| t.tid == PID).unwrap();
        let off = main.off_cpu.unwrap();
        assert_eq!(
            (off.calls_slept, off.think_sleeps, off.think_asleep_ns),
            (1, 1, 60)
        );
        let wakes = [Wake {
            t: 2_350,
            tid: PID,
            by: PID + 1,
            asleep_ns: 30,
        }];
        assert!(split.wakes_seen);
        assert_eq!(split.wakes, wakes);
        // The sleep outside calls goes with the read after it, the wait for a CPU with the
        // fsync: events 3 and 4 in issue order (the read was the third call to end, before
        // the other thread's write, which was issued before it).
        let gaps = vec![
            Gap {
                event: 3,
                asleep_ns: 60,
                preempted_ns: 0,
            },
            Gap {
                event: 4,
                asleep_ns: 0,
                preempted_ns: 200,
            },
        ];
        assert_eq!(split.gaps.as_ref(), Some(&gaps));
        assert_eq!(whole.gaps.as_ref(), Some(&gaps));
        assert_eq!(whole.wakes, wakes);
        let told = [Wake {
            t: 4_210,
            tid: PID,
            by: PID + 1,
            asleep_ns: 0,
        }];
        assert_eq!(
            (&split.signals[..], &whole.signals[..]),
            (&told[..], &told[..])
        );
        assert_eq!((split.unmatched, whole.unmatched), (0, 0));
        assert_eq!(whole.events, split.events);
        assert_eq!(whole.threads, split.threads);
        assert_eq!(whole.files, split.files);
    }
}
