//! Signals one task of the program sent another, from its kill, tkill, tgkill, sigqueue and
//! pidfd_send_signal calls (the last through a descriptor pidfd_open made for the process;
//! one that clone's CLONE_PIDFD made — Go's os/exec since 1.23 — names a process the trace
//! cannot tell, as the kernel writes it into the program's memory: such signals are counted,
//! `Kills::unfollowed`): kept as tells (`Footer::signals`), which `trace::anchor::ends`
//! follows. A signal to a process group (`kill 0`, `kill -PGID`: a script's trap that ends
//! its helpers) is a tell to each process of the group alive then, other than the sender's:
//! the groups are followed through setpgid, setsid and fork, the program's first one being
//! iogauge's own. What the
//! signals say beyond their tells — those to a group, and those that came after their target
//! had ended and been waited for (a trap's `kill $child` just too late) — is kept too
//! (`Footer::kills`).

use std::collections::HashMap;

use super::super::family::Kin;
use super::{Call, Done, State};
use crate::trace::recording::{Kills, Wake};

/// Process groups over the recording, the signals sent to one, and those that came late.
#[derive(Debug, Default)]
pub(super) struct Groups {
    /// Each group change that succeeded: (t, process, its group), ns from the start.
    changes: Vec<(u64, u32, u32)>,
    /// Each signal to a group: (t, the group — 0: the sender's —, sender's thread, process).
    sent: Vec<(u64, u32, u32, u32)>,
    /// Each signal to a process or thread that was gone (ESRCH), as a tell.
    late: Vec<Wake>,
    /// Signals sent through a descriptor the trace does not know as a pidfd.
    unfollowed: u64,
}

impl State {
    /// A signal sent (kill, tkill, tgkill, sigqueue), kept as a tell at the call's end: to a
    /// process or a thread by its id, or kept for [`State::group_signals`] where kill sent it
    /// to a process group — not to every process (`kill -1`), not to the sender's own thread
    /// or process (a fault's, SIGPIPE, `raise`), not SIGCHLD nor 0 (a look for the process),
    /// and only where it was sent — or where its target was gone (ESRCH), kept as late.
    pub(super) fn signal(&mut self, d: &Done) {
        let (target, sig, process) = match d.call {
            Call::Kill | Call::SigQueue => (d.a[0] as i32, d.a[1] as i32, true),
            Call::Tkill => (d.a[0] as i32, d.a[1] as i32, false),
            Call::PidfdSendSignal => {
                let pidfd = self
                    .slot(d.pid, d.a[0] as i32)
                    .map(|s| self.descs[s.desc].pidfd);
                match pidfd.flatten() {
                    Some(p) => (p as i32, d.a[1] as i32, true),
                    None => {
                        // Not one of pidfd_open's: clone's CLONE_PIDFD, or inherited.
                        if d.a[1] != 0 && (d.ret == 0 || d.ret == -i64::from(libc::ESRCH)) {
                            self.groups.unfollowed += 1;
                        }
                        return;
                    }
                }
            }
            _ => (d.a[1] as i32, d.a[2] as i32, false),
        };
        let own = target as u32 == d.tid || (process && target as u32 == d.pid);
        let t = (d.t + d.dur).saturating_sub(self.t0);
        let gone = d.ret == -i64::from(libc::ESRCH);
        if (d.ret != 0 && !gone) || sig == 0 || sig == libc::SIGCHLD || target == -1 {
            return;
        }
        if target <= 0 {
            // To a process group (kill's only: sigqueue's target is a process).
            if d.call == Call::Kill && !gone {
                let group = target.unsigned_abs();
                self.groups.sent.push((t, group, d.tid, d.pid));
            }
            return;
        }
        if own {
            return;
        }
        let tell = Wake {
            t,
            tid: target as u32,
            by: d.tid,
            asleep_ns: 0,
        };
        // Too late: kept where its target was a task of the program (`Kills::late`).
        match gone {
            true => self.groups.late.push(tell),
            false => self.out.signals.push(tell),
        }
    }

    /// pidfd_open: a descriptor (close-on-exec, as the kernel makes it) naming the process.
    pub(super) fn pidfd_open(&mut self, d: &Done) {
        if d.ret < 0 {
            return;
        }
        let desc = self.desc(None, None, libc::O_CLOEXEC as u64);
        self.descs[desc].pidfd = Some(d.a[0] as u32);
        let cloexec = true;
        self.set_fd(d.pid, d.ret as i32, super::Slot { desc, cloexec });
        self.out.other_calls += 1;
    }

    /// A process's group changed (setpgid: the caller or a child of its, 0 for the caller,
    /// into the group named or one of its own; setsid: the caller, into a group of its own).
    pub(super) fn group_change(&mut self, d: &Done) {
        let (process, group) = match d.call {
            Call::Setpgid if d.ret == 0 => {
                let p = (d.a[0] as i32).max(0) as u32;
                let p = if p == 0 { d.pid } else { p };
                let g = (d.a[1] as i32).max(0) as u32;
                (p, if g == 0 { p } else { g })
            }
            Call::Setsid if d.ret > 0 => (d.pid, d.pid),
            _ => return,
        };
        let t = (d.t + d.dur).saturating_sub(self.t0);
        self.groups.changes.push((t, process, group));
    }

    /// The signals to a process group as tells to each of its processes that was alive then
    /// (its main thread), but the sender's own; where there were any, the signals and each
    /// process's group at its end (`Kills`), with the signals that came late. A task's group
    /// at a time is its last change before then, else its creator's when it was made (`kin`,
    /// walked up), else — the program's first process — iogauge's own group, which it started
    /// in.
    fn group_signals(&mut self, kin: &HashMap<u32, Kin>, first_group: u32) {
        let sent = std::mem::take(&mut self.groups.sent);
        let changes = &self.groups.changes;
        let group_at = |mut task: u32, mut t: u64| {
            // Bounded: a task table read out of order cannot loop.
            for _ in 0..=kin.len() {
                let changed = changes.iter().rev().find(|c| c.1 == task && c.0 <= t);
                if let Some(&(_, _, g)) = changed {
                    return g;
                }
                match kin.get(&task) {
                    Some(&(Some(creator), born, _)) => (task, t) = (creator, born),
                    _ => break,
                }
            }
            first_group
        };
        // The processes, by their main threads.
        let processes: Vec<u32> = self
            .out
            .threads
            .iter()
            .filter(|p| p.tid == p.pid)
            .map(|p| p.tid)
            .collect();
        let mut tells = Vec::new();
        let mut to_groups = Vec::new();
        for (t, group, by, by_pid) in sent {
            let group = if group == 0 { group_at(by, t) } else { group };
            to_groups.push((t, by, group));
            for &p in processes.iter().filter(|&&p| p != by_pid) {
                let (born, ended) = kin.get(&p).map_or((0, None), |k| (k.1, k.2));
                if born <= t && ended.is_none_or(|e| e >= t) && group_at(p, t) == group {
                    tells.push(Wake {
                        t,
                        tid: p,
                        by,
                        asleep_ns: 0,
                    });
                }
            }
        }
        self.out.signals.extend(tells);
        let groups = match to_groups.is_empty() {
            true => Vec::new(),
            false => processes
                .iter()
                .map(|&p| {
                    let end = kin.get(&p).and_then(|k| k.2).unwrap_or(u64::MAX);
                    (p, group_at(p, end))
                })
                .collect(),
        };
        // A signal that came late to a task of the program: to one that had ended by then.
        let mut late = std::mem::take(&mut self.groups.late);
        late.retain(|w| {
            kin.get(&w.tid)
                .is_some_and(|k| k.2.is_some_and(|e| e <= w.t))
        });
        let unfollowed = self.groups.unfollowed;
        if !to_groups.is_empty() || !late.is_empty() || unfollowed > 0 {
            self.out.kills = Some(Kills {
                to_groups,
                groups,
                late,
                unfollowed,
            });
        }
    }

    /// Once the walk knows the program's tasks (`kin`: who made whom, when): the signals to a
    /// group as their members', and only the signals to them (one to another program tells
    /// the trace nothing), in time order.
    pub(super) fn signals_to_known_tasks(&mut self, kin: &HashMap<u32, Kin>) {
        let first_group = rustix::process::getpgrp().as_raw_pid() as u32;
        self.group_signals(kin, first_group);
        let known: std::collections::HashSet<u32> =
            self.out.threads.iter().map(|t| t.tid).collect();
        self.out.signals.retain(|w| known.contains(&w.tid));
        self.out.signals.sort_by_key(|w| w.t);
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::perf::Raw;
    use super::super::{FileKind, Inherited, decode};
    use crate::trace::recording::Wake;

    const P: u32 = 4_000;

    /// Process `pid`'s call `nr` (one thread each) at `t`, 10 ns long.
    fn call(pid: u32, nr: i64, t: u64, args: [u64; 6], ret: i64) -> Raw {
        Raw::Call {
            t,
            exit: t + 10,
            pid,
            tid: pid,
            nr: nr as i32,
            args,
            ret,
        }
    }

    /// `raw` decoded, P's first task with descriptor 5 on a file of 1 MiB, read and written.
    fn decoded(raw: Vec<Raw>) -> super::super::Decoded {
        let inherited = [Inherited {
            fd: 5,
            path: b"/data/f".to_vec(),
            kind: FileKind::Regular,
            size: 1 << 20,
            flags: libc::O_RDWR as u64,
            pos: 0,
        }];
        decode(
            raw,
            (Vec::new(), Vec::new()),
            P,
            &inherited,
            (0, b"/".to_vec()),
            None,
        )
    }

    fn fork(t: u64, child: u32) -> Raw {
        Raw::Fork {
            t,
            pid: child,
            ppid: P,
            tid: child,
            ptid: P,
        }
    }

    #[test]
    fn a_signal_to_a_process_group_tells_each_of_its_processes_alive_then() {
        // The program (P) starts A, B and C; C moves into a group of its own; B ends; then
        // P signals its own group (kill 0), C's (kill -C), every process (kill -1), and A
        // looks for its group (signal 0). Each child reads descriptor 5 once.
        let (a, b, c) = (P + 1, P + 2, P + 3);
        let read = |pid, t| call(pid, libc::SYS_pread64, t, [5, 0x7000, 4096, 0, 0, 0], 4096);
        let kill = |pid, t, target: i64, sig| {
            call(pid, libc::SYS_kill, t, [target as u64, sig, 0, 0, 0, 0], 0)
        };
        let raw = vec![
            fork(100, a),
            fork(110, b),
            fork(120, c),
            call(c, libc::SYS_setpgid, 130, [0, 0, 0, 0, 0, 0], 0),
            read(a, 150),
            read(b, 160),
            read(c, 170),
            Raw::End { t: 300, tid: b },
            kill(P, 400, 0, 15),
            kill(P, 450, -i64::from(c), 15),
            kill(P, 460, -1, 15),
            kill(a, 470, 0, 0),
            // Too late: B had ended (and been waited for); no task of the program is 99.
            call(P, libc::SYS_kill, 480, [u64::from(b), 15, 0, 0, 0, 0], -3),
            call(P, libc::SYS_kill, 490, [99, 15, 0, 0, 0, 0], -3),
        ];
        let d = decoded(raw);
        let tell = |t, tid| Wake {
            t,
            tid,
            by: P,
            asleep_ns: 0,
        };
        // kill 0 reached A (B had ended, C had left the group, P sent it); kill -C reached C.
        assert_eq!(d.signals, vec![tell(410, a), tell(460, c)]);
        // Both signals to a group are kept with the group they reached, and each process's
        // group at its end: P's (iogauge's own) but C's, its own since it moved.
        let own = rustix::process::getpgrp().as_raw_pid() as u32;
        let mut kills = d.kills.expect("two signals to a group");
        assert_eq!(kills.to_groups, vec![(410, P, own), (460, P, c)]);
        kills.groups.sort_unstable();
        assert_eq!(kills.groups, vec![(P, own), (a, own), (b, own), (c, c)]);
        // The kill of B after its end is kept as one that came late.
        assert_eq!(kills.late, vec![tell(490, b)]);
    }

    #[test]
    fn a_signal_through_a_pidfd_tells_the_process_it_names_where_the_trace_knows_which() {
        // P opens a pidfd for A (fd 7), dups it (fd 8), signals A through the copy, closes
        // both; A's child B inherits nothing of it. Then P signals through descriptor 9 (one
        // clone's CLONE_PIDFD made: its number is in P's memory, not the trace) and through
        // 7 again after its close: both counted, neither a tell. A signal 0 (a look) through
        // 9 is not counted. Each of A and B reads descriptor 5 once.
        let (a, b) = (P + 1, P + 2);
        let read = |pid, t| call(pid, libc::SYS_pread64, t, [5, 0x7000, 4096, 0, 0, 0], 4096);
        let send =
            |t, fd: u64, sig| call(P, libc::SYS_pidfd_send_signal, t, [fd, sig, 0, 0, 0, 0], 0);
        let raw = vec![
            fork(100, a),
            fork(110, b),
            read(a, 150),
            read(b, 160),
            call(
                P,
                libc::SYS_pidfd_open,
                200,
                [u64::from(a), 0, 0, 0, 0, 0],
                7,
            ),
            call(P, libc::SYS_dup, 210, [7, 0, 0, 0, 0, 0], 8),
            send(300, 8, 15),
            call(P, libc::SYS_close, 310, [7, 0, 0, 0, 0, 0], 0),
            call(P, libc::SYS_close, 320, [8, 0, 0, 0, 0, 0], 0),
            send(400, 9, 15),
            send(410, 9, 0),
            send(420, 7, 15),
        ];
        let d = decoded(raw);
        let tell = Wake {
            t: 310,
            tid: a,
            by: P,
            asleep_ns: 0,
        };
        assert_eq!(d.signals, vec![tell]);
        let kills = d.kills.expect("signals the trace cannot follow");
        assert_eq!(kills.unfollowed, 2);
        assert!(kills.to_groups.is_empty() && kills.late.is_empty());
    }
}
