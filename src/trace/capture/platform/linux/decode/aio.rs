//! Native AIO in a trace: io_submit and io_getevents stay the thread's calls (their time is
//! the submission's and the wait's), and each I/O the AIO probes saw submitted becomes an
//! event of its own, flagged `ASYNC`: its file, offset, length and operation from the iocb,
//! its issue time the io_submit's, its completion the return of the io_getevents that reaped
//! it, and the kernel's result. A submit or wait whose I/Os the trace holds is flagged
//! `ASYNC` too, with `len` the count of them; `offset` is the AIO context.

use super::super::aio::{Iocb, Seen};
use super::super::args::{io_flags, rwf_flags};
use super::super::perf::Raw;
use super::{Done, State};
use crate::platform::aio::{
    IOCB_CMD_FDSYNC, IOCB_CMD_FSYNC, IOCB_CMD_PREAD, IOCB_CMD_PREADV, IOCB_CMD_PWRITE,
    IOCB_CMD_PWRITEV,
};
use crate::trace::recording::{Event, NO_FILE, Op, flag};

impl State {
    /// Takes the AIO probes' records, per thread in time order, and the entry times of the
    /// threads that made them (`raw` sorted by time).
    pub(super) fn aio_records(&mut self, aio: Vec<Seen>, raw: &[Raw]) {
        for a in aio {
            match a {
                Seen::UringDone { t, req, res } => self.uring_done.push((t, req, res)),
                a => self.aio.entry(a.tid()).or_default().push_back(a),
            }
        }
        for q in self.aio.values_mut() {
            q.make_contiguous().sort_by_key(|a| a.time());
        }
        for r in raw {
            if let Some((t, tid)) = r.entry() {
                if self.aio.contains_key(&tid) {
                    self.aio_enters.entry(tid).or_default().push(t);
                }
            }
        }
    }

    /// The window of the thread's AIO records that belong to call `d`: after the thread's
    /// previous call started and before its next one did (a probe on the call's own
    /// tracepoint may run a little before or after the capture's records of its entry and
    /// exit); older records are dropped.
    pub(super) fn aio_window(&mut self, d: &Done) -> Option<u64> {
        let enters = self.aio_enters.get(&d.tid)?;
        let i = enters.partition_point(|&t| t < d.t);
        let prev = i.checked_sub(1).map_or(0, |j| enters[j] + 1);
        let next = enters
            .get(enters.partition_point(|&t| t <= d.t))
            .copied()
            .unwrap_or(u64::MAX);
        let q = self.aio.get_mut(&d.tid)?;
        while q.front().is_some_and(|s| s.time() < prev) {
            q.pop_front();
        }
        Some(next)
    }

    /// The AIO probes' record the thread made for call `d`, if any.
    pub(super) fn aio_record(&mut self, d: &Done) -> Option<Seen> {
        let next = self.aio_window(d)?;
        let q = self.aio.get_mut(&d.tid)?;
        q.front()
            .is_some_and(|s| s.time() < next)
            .then(|| q.pop_front())
            .flatten()
    }

    /// io_submit: the call, then each I/O it submitted that the probes saw.
    pub(super) fn aio_submit(&mut self, d: &Done) {
        let ios = match self.aio_record(d) {
            Some(Seen::Submit { ios, .. }) => ios,
            _ => Vec::new(),
        };
        let taken = d.ret.max(0) as usize;
        let at = self.out.events.len();
        self.emit(d, Op::AioSubmit, NO_FILE, (d.a[0], 0), d.a[1] as u32, 0);
        let held = ios
            .into_iter()
            .take(taken)
            .filter(|&(addr, cb)| self.aio_io(d, addr, cb))
            .count();
        self.out.aio_unseen += (taken - held) as u64;
        if held > 0 {
            let e = &mut self.out.events[at];
            e.flags |= flag::ASYNC;
            e.len = held as u64;
        }
    }

    /// One submitted I/O as an event, where its descriptor is a file of the trace and its
    /// operation one a trace holds; whether it is.
    fn aio_io(&mut self, d: &Done, addr: u64, cb: Iocb) -> bool {
        let (op, write, vectored) = match cb.opcode {
            IOCB_CMD_PREAD => (Op::Read, false, false),
            IOCB_CMD_PREADV => (Op::Read, false, true),
            IOCB_CMD_PWRITE => (Op::Write, true, false),
            IOCB_CMD_PWRITEV => (Op::Write, true, true),
            IOCB_CMD_FSYNC => (Op::Fsync, false, false),
            IOCB_CMD_FDSYNC => (Op::Fdatasync, false, false),
            _ => return false,
        };
        let Some((desc, file)) = self.storage(d.pid, cb.fd as i32) else {
            return false;
        };
        let mut flags = io_flags(self.descs[desc].flags) | rwf_flags(u64::from(cb.rw_flags));
        flags |= flag::ASYNC;
        let data = matches!(op, Op::Read | Op::Write);
        let (offset, len) = match (data, vectored) {
            (false, _) => (0, 0),
            // The vectors' total is known when the I/O completes.
            (true, true) => (cb.offset.max(0) as u64, 0),
            (true, false) => (cb.offset.max(0) as u64, cb.nbytes),
        };
        if data {
            flags |= flag::POSITIONAL | if vectored { flag::VECTORED } else { 0 };
        }
        self.in_flight.insert((d.pid, addr), self.out.events.len());
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
        if data {
            self.reach(file, offset + len, write);
        }
        true
    }

    /// io_getevents: the call; each I/O it reaped that the trace holds completes at its
    /// return, with the result the kernel gave.
    pub(super) fn aio_getevents(&mut self, d: &Done) {
        let events = match self.aio_record(d) {
            Some(Seen::Reaped { events, .. }) => events,
            _ => Vec::new(),
        };
        let at = self.out.events.len();
        self.emit(d, Op::AioGetevents, NO_FILE, (d.a[0], 0), d.a[1] as u32, 0);
        let end = d.t.saturating_add(d.dur).saturating_sub(self.t0);
        let mut matched = 0u64;
        for (addr, res) in events {
            let Some(i) = self.in_flight.remove(&(d.pid, addr)) else {
                continue;
            };
            let e = &mut self.out.events[i];
            e.dur = end.saturating_sub(e.t);
            e.result = res;
            if e.flags & flag::VECTORED != 0 && res > 0 {
                e.len = res as u64;
                let (file, reach, write) = (e.file, e.offset + e.len, e.op == Op::Write);
                self.reach(file, reach, write);
            }
            matched += 1;
        }
        if matched > 0 {
            let e = &mut self.out.events[at];
            e.flags |= flag::ASYNC;
            e.len = matched;
        }
    }

    /// At the end: the I/Os no io_getevents was seen to reap keep no completion time.
    pub(super) fn aio_unreaped(&mut self) {
        self.out.aio_unreaped += self.in_flight.drain().count() as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::aio::{Iocb, Seen};
    use super::super::decode;
    use super::super::fixture::{PID, decoded, syscall as call};
    use crate::trace::recording::{Op, flag};

    fn iocb(opcode: u16, offset: i64) -> Iocb {
        Iocb {
            opcode,
            fd: 5,
            nbytes: 4096,
            offset,
            rw_flags: 0,
        }
    }

    /// Two I/Os submitted in one call and reaped in another; the probes' records made a
    /// little before the submit's entry and a little after the wait's exit (a probe on the
    /// call's own tracepoint may run on either side of the capture's records).
    #[test]
    fn each_submitted_io_is_an_event_from_its_submit_to_the_wait_that_reaped_it() {
        let (ctx, cbs) = (0x7000, 0x9000);
        let mut raw = Vec::new();
        raw.extend(call(
            libc::SYS_io_submit,
            1_000,
            500,
            [ctx, 2, cbs, 0, 0, 0],
            2,
        ));
        raw.extend(call(
            libc::SYS_io_getevents,
            3_000,
            7_000,
            [ctx, 2, 8, 0, 0, 0],
            2,
        ));
        raw.extend(call(
            libc::SYS_io_submit,
            20_000,
            400,
            [ctx, 1, cbs, 0, 0, 0],
            1,
        ));
        let aio = vec![
            Seen::Submit {
                t: 999,
                tid: PID,
                ios: vec![(0xa0, iocb(0, 8192)), (0xb0, iocb(1, 0))],
            },
            Seen::Reaped {
                t: 10_050,
                tid: PID,
                events: vec![(0xb0, 4096), (0xa0, -5)],
            },
            Seen::Submit {
                t: 20_010,
                tid: PID,
                ios: vec![(0xa0, iocb(3, 0))],
            },
        ];
        let d = decoded(raw, aio);
        let ev: Vec<_> = d.events.iter().map(|e| (e.op, e.t, e.dur)).collect();
        assert_eq!(
            ev,
            [
                (Op::AioSubmit, 1_000, 500),
                (Op::Read, 1_000, 9_000),
                (Op::Write, 1_000, 9_000),
                (Op::AioGetevents, 3_000, 7_000),
                (Op::AioSubmit, 20_000, 400),
                (Op::Fdatasync, 20_000, 0),
            ]
        );
        let [submit, read, write, wait, _, sync] = &d.events[..] else {
            unreachable!()
        };
        assert_eq!((submit.len, submit.offset, submit.result), (2, ctx, 2));
        assert_ne!(submit.flags & flag::ASYNC, 0);
        assert_eq!((read.offset, read.len, read.result), (8192, 4096, -5));
        assert_eq!((write.offset, write.len, write.result), (0, 4096, 4096));
        for io in [read, write] {
            assert_eq!(io.flags, flag::ASYNC | flag::DIRECT | flag::POSITIONAL);
        }
        assert_eq!((wait.len, wait.result), (2, 2));
        assert_eq!((sync.flags & flag::ASYNC, sync.dur), (flag::ASYNC, 0));
        assert_eq!((d.aio_unseen, d.aio_unreaped), (0, 1));
    }

    /// Without the probes' records, the calls stay calls and their I/Os are counted unseen.
    #[test]
    fn without_records_the_ios_are_counted_not_held() {
        let raw = call(libc::SYS_io_submit, 1_000, 500, [1, 3, 2, 0, 0, 0], 3).to_vec();
        let d = decode(
            raw,
            (Vec::new(), Vec::new()),
            PID,
            &[],
            (0, b"/".to_vec()),
            None,
        );
        assert_eq!(d.events.len(), 1);
        assert_eq!(d.events[0].flags & flag::ASYNC, 0);
        assert!(d.events[0].io_unseen());
        assert_eq!(d.aio_unseen, 3);
    }
}
