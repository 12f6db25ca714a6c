//! io_uring in a trace: io_uring_enter stays its thread's call (the submission and the wait,
//! where it waited), and each request the submit probe saw prepared during it becomes an
//! event flagged `ASYNC`: its file, offset, length and operation from the request, its issue
//! time the call's, its completion the `io_uring_complete` record of the same request — the
//! kernel's completion, wherever and whenever the program read it — with its result. An
//! io_uring_enter whose requests the trace holds is flagged `ASYNC`, with `len` the count
//! of them and `offset` the ring. A request on a registered file is on the file its index
//! held when the program registered it.

use super::super::aio::Seen;
use super::super::args::{io_flags, rwf_flags};
use super::super::calls::Call;
use super::super::perf::Raw;
use super::super::uring::{
    FSYNC_DATASYNC, Files, OP_FSYNC, OP_READ, OP_READ_FIXED, OP_READV, OP_WRITE, OP_WRITE_FIXED,
    OP_WRITEV, REGISTER_FILES, REGISTER_FILES_SKIP, REGISTER_FILES2, REGISTER_USE_REGISTERED_RING,
    REQ_F_FIXED_FILE, Request, UNREGISTER_FILES,
};
use super::{Done, State};
use crate::trace::recording::{Event, NO_FILE, Op, flag};

/// A slot of a ring's file table: the descriptor and file of the trace it held, `None` where
/// it held something else (a socket, a pipe, nothing), `Unknown` past what the probe copied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in super::super) enum Registered {
    File(usize, u32),
    None,
    Unknown,
}

/// Requests a SQPOLL thread prepares less than this apart (ns) are one batch: one replayed
/// submission.
const SQPOLL_BATCH_NS: u64 = 2_000;

/// Requests a SQPOLL thread (`tid`, of process `pid`) prepared one after another: (when, the
/// request).
pub(in super::super) struct Batch {
    pid: u32,
    tid: u32,
    reqs: Vec<(u64, Request)>,
}

impl State {
    /// io_uring_register: the file table as the program registers, updates or drops it, kept
    /// by ring (the call itself is not an event: it moves no data).
    pub(super) fn uring_register(&mut self, d: &Done) {
        let (mut files, mut ring) = (None, None);
        if let Some(next) = self.aio_window(d) {
            let q = self.aio.get_mut(&d.tid).expect("a window has a queue");
            while q.front().is_some_and(|s| s.time() < next) {
                match q.pop_front() {
                    // A registration of many descriptors comes in records of a chunk each,
                    // in order; past one lost, the slots stay unknown.
                    Some(Seen::UringFiles { f, .. }) => match &mut files {
                        _ if f.first == 0 => files = Some(f),
                        Some(Files { fds, .. }) if f.first as usize == fds.len() => {
                            fds.extend(f.fds)
                        }
                        _ => {}
                    },
                    Some(Seen::UringRing { ring: r, .. }) => ring = Some(r),
                    _ => {}
                }
            }
        }
        let Some(ring) = ring.filter(|_| d.ret >= 0) else {
            return;
        };
        if d.a[1] as u32 & !REGISTER_USE_REGISTERED_RING == UNREGISTER_FILES {
            self.uring_files.remove(&ring);
            return;
        }
        let Some(Files {
            opcode,
            offset,
            count,
            fds,
            ..
        }) = files
        else {
            return;
        };
        let fresh = matches!(opcode, REGISTER_FILES | REGISTER_FILES2);
        let mut table = match fresh {
            true => vec![Registered::None; count as usize],
            false => self.uring_files.remove(&ring).unwrap_or_default(),
        };
        let end = (offset as usize).saturating_add(count as usize);
        if table.len() < end {
            table.resize(end, Registered::Unknown);
        }
        // An update's result is how many slots it changed, from the first.
        let changed = if fresh { count } else { d.ret as u32 };
        for i in 0..changed.min(count) as usize {
            let slot = &mut table[offset as usize + i];
            *slot = match fds.get(i) {
                Some(&REGISTER_FILES_SKIP) => continue,
                Some(&fd) if fd >= 0 => match self.slot(d.pid, fd) {
                    Some(s) => self.descs[s.desc]
                        .file
                        .map_or(Registered::None, |f| Registered::File(s.desc, f)),
                    None => Registered::Unknown,
                },
                Some(_) => Registered::None,
                None if fds.is_empty() && fresh => Registered::None,
                None => Registered::Unknown,
            };
        }
        self.uring_files.insert(ring, table);
    }

    /// The descriptor and file a request names: its descriptor's, or for a registered file
    /// the one its slot in the ring's table held (counted where neither).
    fn uring_file(&mut self, pid: u32, r: &Request) -> Option<(usize, u32)> {
        if r.req_flags & REQ_F_FIXED_FILE == 0 {
            return self.storage(pid, r.fd);
        }
        let slot = self
            .uring_files
            .get(&r.ring)
            .and_then(|t| t.get(r.fd as u32 as usize))
            .copied();
        match slot {
            Some(Registered::File(desc, file)) => Some((desc, file)),
            Some(Registered::None) => {
                self.out.other_calls += 1;
                None
            }
            Some(Registered::Unknown) | None => {
                self.out.unknown_fd_calls += 1;
                None
            }
        }
    }

    /// Requests a SQPOLL kernel thread submitted: the thread is a task of the program that
    /// makes no system call (the capture saw it start, `raw` has no call of it), so no
    /// io_uring_enter holds them. Its records are taken from the probes' queues and grouped
    /// into batches, decoded in time order as the calls are ([`State::uring_polled_until`]).
    pub(super) fn uring_sqpoll(&mut self, raw: &[Raw]) {
        let mut tasks = std::collections::HashMap::new();
        let mut callers = std::collections::HashSet::new();
        for r in raw {
            match *r {
                Raw::Fork { pid, tid, .. } => {
                    tasks.insert(tid, pid);
                }
                Raw::Enter { tid, .. } | Raw::Call { tid, .. } => {
                    callers.insert(tid);
                }
                _ => {}
            }
        }
        let pollers: Vec<u32> = self
            .aio
            .keys()
            .copied()
            .filter(|tid| tasks.contains_key(tid) && !callers.contains(tid))
            .collect();
        let mut batches = Vec::new();
        for tid in pollers {
            let pid = tasks[&tid];
            self.uring_polled.insert(pid);
            let reqs: Vec<(u64, Request)> = self
                .aio
                .remove(&tid)
                .unwrap_or_default()
                .into_iter()
                .filter_map(|s| match s {
                    Seen::UringSubmit { t, r, .. } => Some((t, r)),
                    _ => None,
                })
                .collect();
            let same = |a: &(u64, Request), b: &(u64, Request)| {
                b.0 - a.0 < SQPOLL_BATCH_NS && a.1.ring == b.1.ring
            };
            for batch in reqs.chunk_by(same) {
                batches.push(Batch {
                    pid,
                    tid,
                    reqs: batch.to_vec(),
                });
            }
        }
        batches.sort_by_key(|b| (b.reqs[0].0, b.tid));
        self.uring_batches = batches.into();
    }

    /// Decodes the SQPOLL batches that began before `t`: each an io_uring_enter of its
    /// thread, flagged `ASYNC` and `SQPOLL`, at its first request's preparation, holding its
    /// requests as an enter does.
    pub(super) fn uring_polled_until(&mut self, t: u64) {
        while self.uring_batches.front().is_some_and(|b| b.reqs[0].0 < t) {
            let Some(Batch { pid, tid, reqs }) = self.uring_batches.pop_front() else {
                break;
            };
            let d = Done {
                call: Call::IoUringEnter,
                t: reqs[0].0,
                dur: 0,
                pid,
                tid,
                a: [0; 6],
                ret: reqs.len() as i64,
                slept: false,
            };
            self.uring_batch(&d, reqs, flag::SQPOLL);
        }
    }

    /// io_uring_enter: the call, then each request it submitted that the probe saw.
    pub(super) fn uring_enter(&mut self, d: &Done) {
        let mut reqs = Vec::new();
        if let Some(next) = self.aio_window(d) {
            let q = self.aio.get_mut(&d.tid).expect("a window has a queue");
            while q.front().is_some_and(|s| s.time() < next) {
                if let Some(Seen::UringSubmit { t, r, .. }) = q.pop_front() {
                    reqs.push((t, r));
                }
            }
        }
        let start = d.t.saturating_sub(self.t0);
        self.uring_enters.push((
            d.pid,
            start,
            start.saturating_add(d.dur),
            self.out.events.len(),
        ));
        self.uring_batch(d, reqs, 0);
    }

    /// An io_uring_enter (`d`: a call, or a SQPOLL thread's batch) as an event with `flags`,
    /// then each request it submitted that the trace holds.
    fn uring_batch(&mut self, d: &Done, reqs: Vec<(u64, Request)>, flags: u16) {
        let at = self.out.events.len();
        let ring = reqs.first().map_or(0, |(_, r)| r.ring);
        self.emit(d, Op::UringEnter, NO_FILE, (ring, 0), d.a[1] as u32, flags);
        let seen = reqs.len();
        let held = reqs
            .into_iter()
            .filter(|&(t, r)| self.uring_request(d, t, r))
            .count();
        // Submitted (the call's result, when it was asked to submit) but not held. On a
        // SQPOLL ring the call's result is the count asked whatever the kernel thread took:
        // in a process with a SQPOLL thread, only what the probe saw counts.
        let asked = match d.a[1] > 0 && !self.uring_polled.contains(&d.pid) {
            true => d.ret.max(0) as usize,
            false => 0,
        };
        self.out.aio_unseen += (asked.max(seen) - held) as u64;
        if held > 0 {
            let e = &mut self.out.events[at];
            e.flags |= flag::ASYNC;
            e.len = held as u64;
        }
    }

    /// One request as an event, where it is a read, write or sync on a file of the trace
    /// named by a descriptor (not a registered file's index); whether it is.
    fn uring_request(&mut self, d: &Done, t: u64, r: Request) -> bool {
        let (op, write, vectored) = match r.opcode {
            OP_READ | OP_READ_FIXED => (Op::Read, false, false),
            OP_READV => (Op::Read, false, true),
            OP_WRITE | OP_WRITE_FIXED => (Op::Write, true, false),
            OP_WRITEV => (Op::Write, true, true),
            OP_FSYNC if r.sync_flags & FSYNC_DATASYNC != 0 => (Op::Fdatasync, false, false),
            OP_FSYNC => (Op::Fsync, false, false),
            _ => return false,
        };
        let Some((desc, file)) = self.uring_file(d.pid, &r) else {
            return false;
        };
        let mut flags = io_flags(self.descs[desc].flags) | rwf_flags(u64::from(r.rw_flags));
        flags |= flag::ASYNC;
        let data = matches!(op, Op::Read | Op::Write);
        // An offset of -1 is the descriptor's position, which the trace does not follow
        // through io_uring.
        let known = r.pos >= 0;
        let (offset, len) = match (data, vectored) {
            (false, _) => (0, 0),
            (true, true) => (r.pos.max(0) as u64, 0),
            (true, false) => (r.pos.max(0) as u64, u64::from(r.len)),
        };
        if data {
            flags |= match known {
                true => flag::POSITIONAL,
                false => flag::OFFSET_UNKNOWN,
            };
            flags |= if vectored { flag::VECTORED } else { 0 };
        }
        self.uring_sent.push((t, r.req, self.out.events.len()));
        self.uring_ring.insert(self.out.events.len(), r.ring);
        self.uring_pid.insert(self.out.events.len(), d.pid);
        self.out.events.push(Event {
            t: d.t.saturating_sub(self.t0),
            dur: 0,
            offset,
            len,
            result: len as i64,
            tid: d.tid,
            file,
            arg: 0,
            op,
            flags,
        });
        if data && known {
            self.reach(file, offset + len, write);
        }
        true
    }

    /// Each held request's completion: the first `io_uring_complete` of its address after it
    /// was prepared (an address is reused only once its request is done). The
    /// io_uring_enter of its process during which it completed (the kernel posts a completion
    /// as the program enters it, where the ring is set up so) is flagged `ASYNC` with the
    /// ring: a replay waits there for the requests that completed during it.
    pub(super) fn uring_completions(&mut self) {
        let mut enters = std::mem::take(&mut self.uring_enters);
        enters.sort_by_key(|e| e.1);
        let mut sent = std::mem::take(&mut self.uring_sent);
        let mut done = std::mem::take(&mut self.uring_done);
        sent.sort_by_key(|s| s.0);
        done.sort_by_key(|d| d.0);
        let mut waiting = std::collections::HashMap::new();
        let mut next = sent.iter().peekable();
        for (t, req, res) in done {
            while let Some(&&(_, r, i)) = next.peek().filter(|s| s.0 <= t) {
                waiting.insert(r, i);
                next.next();
            }
            let Some(i) = waiting.remove(&req) else {
                continue;
            };
            let ring = self.uring_ring[&i];
            let e = &mut self.out.events[i];
            let end = t.saturating_sub(self.t0);
            e.dur = end.saturating_sub(e.t);
            e.result = i64::from(res);
            let pid = self.uring_pid[&i];
            if let Some(g) = during(&enters, pid, end) {
                let w = &mut self.out.events[g];
                w.flags |= flag::ASYNC;
                w.offset = ring;
            }
            let e = &mut self.out.events[i];
            if e.flags & flag::VECTORED != 0 && res > 0 {
                e.len = res as u64;
                let (file, reach, write) = (e.file, e.offset + e.len, e.op == Op::Write);
                if e.flags & flag::OFFSET_UNKNOWN == 0 {
                    self.reach(file, reach, write);
                }
            }
        }
        self.out.aio_unreaped += (waiting.len() + next.count()) as u64;
    }
}

/// The io_uring_enter of process `pid` that was under way at `t` (`enters` by start).
fn during(enters: &[(u32, u64, u64, usize)], pid: u32, t: u64) -> Option<usize> {
    let i = enters.partition_point(|e| e.1 <= t);
    enters[..i]
        .iter()
        .rev()
        .take(64)
        .find(|e| e.0 == pid && e.2 >= t)
        .map(|e| e.3)
}

#[cfg(test)]
mod tests {
    use super::super::super::aio::Seen;
    use super::super::super::perf::Raw;
    use super::super::super::uring::{OP_READ, OP_WRITE, Request};
    use super::super::fixture::{PID, decoded, syscall};
    use crate::trace::recording::{Op, flag};

    /// io_uring_enter on ring descriptor 3, asked to submit `to_submit`.
    fn call(t: u64, dur: u64, to_submit: u64, ret: i64) -> [Raw; 2] {
        syscall(
            libc::SYS_io_uring_enter,
            t,
            dur,
            [3, to_submit, 1, 1, 0, 0],
            ret,
        )
    }

    fn req(req: u64, opcode: u8, pos: i64, req_flags: u32) -> Request {
        Request {
            ring: 0x5000,
            req,
            opcode,
            fd: 5,
            len: 4096,
            pos,
            rw_flags: 0,
            req_flags,
            sync_flags: 0,
        }
    }

    /// An enter submits three requests (one on a registered file); one completes while the
    /// enter runs, one during a later enter that only waits, none for the third: each held
    /// request is an event from its submission to its completion, and each enter during
    /// which one completed is flagged with its ring.
    #[test]
    fn each_request_runs_from_its_enter_to_its_completion() {
        let mut raw = Vec::new();
        raw.extend(call(1_000, 2_000, 3, 3));
        raw.extend(call(10_000, 5_000, 0, 1));
        let sub = |t, r| Seen::UringSubmit { t, tid: PID, r };
        let aio = vec![
            sub(1_100, req(0xa0, OP_READ, 8192, 0)),
            sub(1_200, req(0xb0, OP_WRITE, 0, 0)),
            sub(1_300, req(0xc0, OP_READ, 0, super::REQ_F_FIXED_FILE)),
            Seen::UringDone {
                t: 2_500,
                req: 0xb0,
                res: 4096,
            },
            Seen::UringDone {
                t: 14_000,
                req: 0xa0,
                res: -5,
            },
        ];
        let d = decoded(raw, aio);
        let ev: Vec<_> = d
            .events
            .iter()
            .map(|e| (e.op, e.t, e.dur, e.result))
            .collect();
        assert_eq!(
            ev,
            [
                (Op::UringEnter, 1_000, 2_000, 3),
                (Op::Read, 1_000, 13_000, -5),
                (Op::Write, 1_000, 1_500, 4096),
                (Op::UringEnter, 10_000, 5_000, 1),
            ]
        );
        let [submit, read, write, wait] = &d.events[..] else {
            unreachable!()
        };
        assert_eq!((submit.len, submit.offset), (2, 0x5000));
        assert_eq!((wait.len, wait.offset), (0, 0x5000));
        for e in [submit, wait] {
            assert_ne!(e.flags & flag::ASYNC, 0, "{e:?}");
        }
        assert_eq!((read.offset, write.offset), (8192, 0));
        assert_eq!(read.flags, flag::ASYNC | flag::DIRECT | flag::POSITIONAL);
        assert_eq!(
            (d.aio_unseen, d.aio_unreaped, d.unknown_fd_calls),
            (1, 0, 1)
        );
    }

    /// Registered files: a table of three (a file, an unknown descriptor, an empty slot), an
    /// update of slots 1–2 that puts the file in 1 and skips 2; requests on slots 0, 1, 2 and
    /// 7; the table dropped, then a request on slot 0 again. The requests on the file's
    /// slots are its I/Os; the empty slot's is not storage, the others are unknown.
    #[test]
    fn registered_files_are_followed_through_the_rings_table() {
        use super::super::super::uring::{
            Files, REGISTER_FILES, REGISTER_FILES_SKIP, REGISTER_FILES_UPDATE, UNREGISTER_FILES,
        };
        let register = |t: u64, opcode: u32, count: u64, ret: i64| {
            let args = [3, u64::from(opcode), 0x7000, count, 0, 0];
            syscall(libc::SYS_io_uring_register, t, 500, args, ret)
        };
        let files = |t, opcode, offset, fds: Vec<i32>| Seen::UringFiles {
            t,
            tid: PID,
            f: Files {
                opcode,
                offset,
                count: fds.len() as u32,
                first: 0,
                fds,
            },
        };
        let mut raw = Vec::new();
        raw.extend(register(1_000, REGISTER_FILES, 3, 0));
        raw.extend(register(2_000, REGISTER_FILES_UPDATE, 2, 2));
        raw.extend(call(3_000, 1_000, 4, 4));
        raw.extend(register(5_000, UNREGISTER_FILES, 0, 0));
        raw.extend(call(6_000, 1_000, 1, 1));
        let fixed = |t, r, slot: i64| {
            let mut q = req(r, OP_READ, 4096 * slot, super::REQ_F_FIXED_FILE);
            q.fd = slot as i32;
            Seen::UringSubmit { t, tid: PID, r: q }
        };
        let done = |t, req| Seen::UringDone { t, req, res: 4096 };
        let ring = |t| Seen::UringRing {
            t,
            tid: PID,
            ring: 0x5000,
        };
        let aio = vec![
            files(1_050, REGISTER_FILES, 0, vec![5, 9, -1]),
            ring(1_400),
            files(
                2_050,
                REGISTER_FILES_UPDATE,
                1,
                vec![5, REGISTER_FILES_SKIP],
            ),
            ring(2_400),
            fixed(3_100, 0xa0, 0),
            fixed(3_200, 0xb0, 1),
            fixed(3_300, 0xc0, 2),
            fixed(3_400, 0xd0, 7),
            done(3_800, 0xa0),
            done(3_900, 0xb0),
            ring(5_400),
            fixed(6_100, 0xe0, 0),
        ];
        let d = decoded(raw, aio);
        let ev: Vec<_> = d
            .events
            .iter()
            .map(|e| (e.op, e.t, e.offset, e.dur))
            .collect();
        assert_eq!(
            ev,
            [
                (Op::UringEnter, 3_000, 0x5000, 1_000),
                (Op::Read, 3_000, 0, 800),
                (Op::Read, 3_000, 4096, 900),
                (Op::UringEnter, 6_000, 0x5000, 1_000),
            ]
        );
        assert_eq!(d.events[1].file, d.events[2].file);
        assert_ne!(
            d.events[1].flags & flag::DIRECT,
            0,
            "the descriptor's flags"
        );
        assert_eq!((d.aio_unseen, d.unknown_fd_calls, d.other_calls), (3, 2, 1));
    }

    /// A registration of 130 slots comes as three records (64, 64 and 2 descriptors), put
    /// together in order: requests on slots 0, 100 and 129 are on the file. With the middle
    /// record lost, the slots past the first 64 are unknown, the last record's too.
    #[test]
    fn a_registration_of_many_slots_is_put_together_from_its_records() {
        use super::super::super::uring::{Files, REGISTER_FILES};
        for lost in [false, true] {
            let args = [3, u64::from(REGISTER_FILES), 0x7000, 130, 0, 0];
            let mut raw: Vec<_> = syscall(libc::SYS_io_uring_register, 1_000, 500, args, 0)
                .into_iter()
                .collect();
            raw.extend(call(3_000, 1_000, 3, 3));
            let part = |first: u32, n: usize| Seen::UringFiles {
                t: 1_050 + u64::from(first),
                tid: PID,
                f: Files {
                    opcode: REGISTER_FILES,
                    offset: 0,
                    count: 130,
                    first,
                    fds: vec![5; n],
                },
            };
            let mut aio = vec![part(0, 64)];
            if !lost {
                aio.push(part(64, 64));
            }
            aio.push(part(128, 2));
            aio.push(Seen::UringRing {
                t: 1_400,
                tid: PID,
                ring: 0x5000,
            });
            for (i, slot) in [0u64, 100, 129].into_iter().enumerate() {
                let mut q = req(0xa0 + i as u64, OP_READ, 0, super::REQ_F_FIXED_FILE);
                q.fd = slot as i32;
                aio.push(Seen::UringSubmit {
                    t: 3_100 + i as u64,
                    tid: PID,
                    r: q,
                });
            }
            let d = decoded(raw, aio);
            let reads = d.events.iter().filter(|e| e.op == Op::Read).count();
            let want = if lost { (1, 2) } else { (3, 0) };
            assert_eq!((reads, d.unknown_fd_calls), want, "lost: {lost}");
        }
    }

    /// A SQPOLL thread of the program (a task it started that makes no call) prepares three
    /// requests, two of them 500 ns apart: two batches, each an io_uring_enter of that
    /// thread flagged `SQPOLL`, holding its requests — on the file their descriptor named
    /// then, though the program closes it before its end. A task the capture did not see
    /// start (another program's) is not the program's.
    #[test]
    fn a_sqpoll_threads_requests_are_held_in_batches() {
        const SQ: u32 = 101;
        let mut raw = vec![Raw::Fork {
            t: 500,
            pid: PID,
            ppid: PID,
            tid: SQ,
            ptid: PID,
        }];
        raw.extend(syscall(libc::SYS_close, 20_000, 100, [5, 0, 0, 0, 0, 0], 0));
        let sub = |t, tid, r| Seen::UringSubmit { t, tid, r };
        let done = |t, req| Seen::UringDone { t, req, res: 4096 };
        let aio = vec![
            sub(1_000, SQ, req(0xa0, OP_READ, 0, 0)),
            sub(1_500, SQ, req(0xb0, OP_READ, 4096, 0)),
            sub(9_000, SQ, req(0xc0, OP_WRITE, 8192, 0)),
            sub(9_100, 555, req(0xd0, OP_READ, 0, 0)),
            done(2_000, 0xa0),
            done(2_500, 0xb0),
            done(9_900, 0xc0),
        ];
        let d = decoded(raw, aio);
        let ev: Vec<_> = d
            .events
            .iter()
            .map(|e| {
                let flags = e.flags & !(flag::POSITIONAL | flag::DIRECT);
                (e.op, e.tid, e.t, e.dur, e.len, flags)
            })
            .collect();
        let batch = flag::ASYNC | flag::SQPOLL;
        assert_eq!(
            ev,
            [
                (Op::UringEnter, SQ, 1_000, 0, 2, batch),
                (Op::Read, SQ, 1_000, 1_000, 4096, flag::ASYNC),
                (Op::Read, SQ, 1_000, 1_500, 4096, flag::ASYNC),
                (Op::UringEnter, SQ, 9_000, 0, 1, batch),
                (Op::Write, SQ, 9_000, 900, 4096, flag::ASYNC),
                (Op::Close, PID, 20_000, 100, 0, 0),
            ]
        );
        assert_eq!(d.aio_unseen, 0);
    }
}
