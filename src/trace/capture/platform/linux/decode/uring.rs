//! io_uring in a trace: io_uring_enter stays its thread's call (the submission and the wait,
//! where it waited), and each request the submit probe saw prepared during it becomes an
//! event flagged `ASYNC`: its file, offset, length and operation from the request, its issue
//! time the call's, its completion the `io_uring_complete` record of the same request — the
//! kernel's completion, wherever and whenever the program read it — with its result. An
//! io_uring_enter whose requests the trace holds is flagged `ASYNC`, with `len` the count
//! of them and `offset` the ring.

use super::super::aio::Seen;
use super::super::args::{io_flags, rwf_flags};
use super::super::uring::{
    FSYNC_DATASYNC, OP_FSYNC, OP_READ, OP_READ_FIXED, OP_READV, OP_WRITE, OP_WRITE_FIXED,
    OP_WRITEV, REQ_F_FIXED_FILE, Request,
};
use super::{Done, State};
use crate::trace::recording::{Event, NO_FILE, Op, flag};

impl State {
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
        let at = self.out.events.len();
        let ring = reqs.first().map_or(0, |(_, r)| r.ring);
        self.emit(d, Op::UringEnter, NO_FILE, (ring, 0), d.a[1] as u32, 0);
        let start = d.t.saturating_sub(self.t0);
        self.uring_enters
            .push((d.pid, start, start.saturating_add(d.dur), at));
        let seen = reqs.len();
        let held = reqs
            .into_iter()
            .filter(|&(t, r)| self.uring_request(d, t, r))
            .count();
        // Submitted (the call's result, when it was asked to submit) but not held.
        let submitted = if d.a[1] > 0 { d.ret.max(0) as usize } else { 0 };
        self.out.aio_unseen += (submitted.max(seen) - held) as u64;
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
        if r.req_flags & REQ_F_FIXED_FILE != 0 {
            self.out.unknown_fd_calls += 1;
            return false;
        }
        let Some((desc, file)) = self.storage(d.pid, r.fd) else {
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
    use super::super::{Inherited, decode};
    use crate::trace::recording::{Op, flag};

    const PID: u32 = 100;

    fn call(t: u64, dur: u64, to_submit: u64, ret: i64) -> [Raw; 2] {
        let nr = libc::SYS_io_uring_enter;
        [
            Raw::Enter {
                t,
                pid: PID,
                tid: PID,
                nr,
                args: [3, to_submit, 1, 1, 0, 0],
            },
            Raw::Exit {
                t: t + dur,
                tid: PID,
                nr,
                ret,
            },
        ]
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
        let inherited = [Inherited {
            fd: 5,
            path: b"/data/f".to_vec(),
            kind: super::super::FileKind::Regular,
            size: 1 << 20,
            flags: libc::O_DIRECT as u64,
            pos: 0,
        }];
        let d = decode(
            raw,
            (Vec::new(), aio),
            PID,
            &inherited,
            (0, b"/".to_vec()),
            false,
        );
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
}
