//! A recorded program's native AIO and io_uring, replayed as they were made: each io_submit
//! or io_uring_enter whose I/Os the trace holds submits them again at once, to a context or
//! ring of the replay's own standing for the recorded one (a native AIO context for a
//! context, an io_uring ring for a ring; shared by the threads, as the program's was), and
//! each io_getevents waits until the I/Os it reaped when recorded are complete. An I/O
//! completes when a replayed reap takes it; its latency is from the submission to then.
//! Where this system has no io_uring a ring's I/Os go through native AIO, and where it has
//! no native AIO either (Windows) they are done one by one inside the replayed call; the
//! report says which.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::ThreadResult;
use super::issue::Shared;
use crate::platform::aio::{AioContext, UringContext};
use crate::platform::fd::BorrowedFd;
use crate::platform::{AioOp, AioReaped, AioRequest};
use crate::trace::order::Dependencies;
use crate::trace::recording::{Event, Op, flag};

/// A read, write or sync an io_submit before it issued (the trace's `ASYNC` I/Os).
pub fn is_async_io(e: &Event) -> bool {
    e.is_async_io()
}

/// One recorded AIO context or io_uring ring, replayed: its stand-in here (or why none),
/// and how many of its I/Os are in flight.
pub struct Context {
    ctx: Result<Queue, String>,
    in_flight: AtomicUsize,
}

/// The replay's stand-in for a recorded context or ring.
enum Queue {
    Aio(AioContext),
    Uring(Box<UringContext>),
}

impl Queue {
    fn submit(&self, reqs: &[AioRequest<'_>]) -> std::io::Result<usize> {
        match self {
            Queue::Aio(c) => c.submit(reqs),
            Queue::Uring(c) => c.submit(reqs),
        }
    }

    fn reap(
        &self,
        min: usize,
        max: usize,
        timeout: Duration,
        out: &mut Vec<AioReaped>,
    ) -> std::io::Result<usize> {
        match self {
            Queue::Aio(c) => c.reap(min, max, timeout, out),
            Queue::Uring(c) => c.reap(min, max, timeout, out),
        }
    }
}

/// The stand-in for a recorded context (`uring`: a ring; `one_thread`: one thread of the
/// program used it) of `depth` I/Os in flight of up to `longest` bytes: an io_uring ring for
/// a ring where this system makes one, else a native AIO context; with why a ring went to
/// native AIO.
fn stand_in(
    (uring, one_thread): (bool, bool),
    depth: u32,
    longest: usize,
) -> (Result<Queue, String>, Option<String>) {
    let fill = super::issue::fill;
    let mut why = None;
    if uring {
        match UringContext::new(depth, longest, fill, one_thread) {
            Ok(c) => return (Ok(Queue::Uring(Box::new(c))), None),
            Err(e) => why = Some(e.to_string()),
        }
    }
    let ctx = AioContext::new(depth, longest, fill)
        .map(Queue::Aio)
        .map_err(|e| e.to_string());
    (ctx, why)
}

/// The replay's AIO: a context per recorded one (each with the buffer its I/Os move), and
/// each I/O's submission time (ns after the start, + 1).
pub struct Aio {
    contexts: HashMap<u64, Context>,
    issued: Vec<AtomicU64>,
    /// Per io_getevents (event index), the I/Os it reaped when recorded.
    reaps: HashMap<usize, Vec<usize>>,
    /// The I/Os a replayed submit issues that no recorded call waited for (a program that
    /// reaps from the completion ring in its own memory: SQPOLL, fio's `userspace_reap`):
    /// reaped here as later submits find them complete, and at their thread's end. Each
    /// with the context or ring it goes to.
    orphans: Vec<Option<u64>>,
    /// Why the recorded io_uring rings' I/Os went through native AIO (None: through io_uring,
    /// or the trace has none).
    rings_as_aio: Option<String>,
}

/// The most I/Os a replayed context holds in flight.
const DEPTH_MAX: usize = 4096;

impl Aio {
    /// Contexts for the recorded ones `events` submit to, sized to their I/Os.
    pub fn new(events: &[Event]) -> Aio {
        let longest = events
            .iter()
            .filter(|e| is_async_io(e))
            .map(|e| e.len)
            .max()
            .unwrap_or(0) as usize;
        // Per recorded context or ring: its I/Os, whether it is a ring, and the threads that
        // submitted to it; and the threads that waited for each.
        let mut ios: HashMap<u64, (usize, bool, HashSet<u32>)> = HashMap::new();
        let mut waiters: HashMap<u64, HashSet<u32>> = HashMap::new();
        for e in events.iter().filter(|e| e.flags & flag::ASYNC != 0) {
            match e.op {
                Op::AioSubmit | Op::UringEnter => {
                    let c = ios.entry(e.offset).or_default();
                    c.0 += e.len as usize;
                    c.1 |= e.op == Op::UringEnter;
                    c.2.insert(e.tid);
                }
                Op::AioGetevents => {
                    waiters.entry(e.offset).or_default().insert(e.tid);
                }
                _ => {}
            }
        }
        let mut rings_as_aio = None;
        let contexts = ios
            .into_iter()
            .map(|(id, (n, uring, mut threads))| {
                threads.extend(waiters.remove(&id).unwrap_or_default());
                let depth = n.clamp(1, DEPTH_MAX) as u32;
                let (ctx, why) = stand_in((uring, threads.len() == 1), depth, longest);
                rings_as_aio = rings_as_aio.take().or(why);
                let in_flight = AtomicUsize::new(0);
                (id, Context { ctx, in_flight })
            })
            .collect();
        let reaps = reaps(events);
        let orphans = orphans(events, &reaps);
        Aio {
            contexts,
            issued: events.iter().map(|_| AtomicU64::new(0)).collect(),
            reaps,
            orphans,
            rings_as_aio,
        }
    }

    /// Why the recorded rings' I/Os went through native AIO (None: through io_uring, or
    /// there are none).
    pub fn rings_as_aio(&self) -> Option<String> {
        self.rings_as_aio.clone()
    }

    /// Why the I/Os were done one by one (None: natively asynchronous, or none).
    pub fn unavailable(&self) -> Option<String> {
        self.contexts
            .values()
            .find_map(|c| c.ctx.as_ref().err().cloned())
    }
}

/// Per event: for an I/O a replayed submit issues that no call in `reaps` waits for, the
/// context or ring it goes to.
fn orphans(events: &[Event], reaps: &HashMap<usize, Vec<usize>>) -> Vec<Option<u64>> {
    let mut orphans: Vec<Option<u64>> = issued_by_a_submit(events)
        .into_iter()
        .map(|i| i.map(|(ring, _)| ring))
        .collect();
    for &j in reaps.values().flatten() {
        orphans[j] = None;
    }
    orphans
}

/// Per event, for the I/Os a replayed submit issues (the `len` after it in its thread): the
/// context or ring, and whether it is io_uring's.
fn issued_by_a_submit(events: &[Event]) -> Vec<Option<(u64, bool)>> {
    let mut owed: HashMap<u32, (u64, u64, bool)> = HashMap::new();
    let mut issued: Vec<Option<(u64, bool)>> = vec![None; events.len()];
    for (j, e) in events.iter().enumerate() {
        if matches!(e.op, Op::AioSubmit | Op::UringEnter) && e.flags & flag::ASYNC != 0 {
            owed.insert(e.tid, (e.len, e.offset, e.op == Op::UringEnter));
        } else if is_async_io(e) {
            if let Some((n, ring, uring)) = owed.get_mut(&e.tid).filter(|o| o.0 > 0) {
                *n -= 1;
                issued[j] = Some((*ring, *uring));
            }
        }
    }
    issued
}

/// Per io_getevents or io_uring_enter whose I/Os the trace holds, the I/Os it waited for
/// when recorded: those an io_getevents reaped (completed at its return: a trace gives a
/// reaped I/O its reaping call's end), and those of its ring that io_uring completed while
/// an io_uring_enter ran (the kernel posts completions as the program enters it).
fn reaps(events: &[Event]) -> HashMap<usize, Vec<usize>> {
    // Only the I/Os a replayed submit issues are waited for: one that none issues would
    // never complete.
    let issued = issued_by_a_submit(events);
    let mut by_end: HashMap<u64, usize> = HashMap::new();
    let mut enters: HashMap<u64, Vec<(u64, u64, usize)>> = HashMap::new();
    for (g, e) in events.iter().enumerate() {
        if e.flags & flag::ASYNC == 0 {
            continue;
        }
        let end = e.done_ns();
        match e.op {
            Op::AioGetevents => {
                by_end.insert(end, g);
            }
            Op::UringEnter => enters.entry(e.offset).or_default().push((e.t, end, g)),
            _ => {}
        }
    }
    let mut out: HashMap<usize, Vec<usize>> = HashMap::new();
    for (j, e) in events.iter().enumerate() {
        let (Some((ring, uring)), true) = (issued[j], e.dur > 0) else {
            continue;
        };
        let end = e.done_ns();
        let waited = match uring {
            false => by_end.get(&end).copied(),
            true => enters.get(&ring).and_then(|list| {
                let i = list.partition_point(|w| w.0 <= end);
                list[..i]
                    .iter()
                    .rev()
                    .take(64)
                    .find(|w| w.1 >= end)
                    .map(|w| w.2)
            }),
        };
        if let Some(g) = waited {
            out.entry(g).or_default().push(j);
        }
    }
    out
}

/// The other threads' calls each call waits for (`trace::order`), with a wait for an
/// asynchronous I/O turned into a wait for the call that waited for it when recorded (the
/// io_getevents that reaped it, the io_uring_enter it completed during: the replay's reaps
/// take any I/Os of the context, as the program's did, so which call reaps a given one here
/// is not known; that call always completes) — or dropped, where no call waited for it or it
/// is the waiting call's own thread's.
pub fn dependencies(events: &[Event]) -> Dependencies {
    let order = crate::trace::order::dependencies(events);
    if !events.iter().any(Event::is_async_io) {
        return order;
    }
    let waited_by: HashMap<usize, usize> = reaps(events)
        .into_iter()
        .flat_map(|(g, ios)| ios.into_iter().map(move |j| (j, g)))
        .collect();
    let mut deps = Dependencies::with_capacity(events.len());
    for (i, e) in events.iter().enumerate() {
        deps.push(order.of(i).iter().filter_map(|&j| {
            if !events[j].is_async_io() {
                return Some(j);
            }
            waited_by
                .get(&j)
                .copied()
                .filter(|&g| events[g].tid != e.tid)
        }));
    }
    deps
}

/// Replays io_submit `e`: its I/Os `ios` (after the other threads' calls each depends on),
/// on their descriptors `fds` (`buf`: the thread's, where they are done one by one); the
/// count submitted, or a negated errno.
pub fn submit(
    s: &Shared<'_>,
    start: Instant,
    (e, ios): (&Event, &[usize]),
    fds: &[BorrowedFd<'_>],
    buf: &mut [u8],
    r: &mut ThreadResult,
) -> i64 {
    let Some(c) = s.aio.contexts.get(&e.offset) else {
        return fail(
            s,
            start,
            ios,
            -i64::from(crate::platform::abi::errno::EINVAL),
            r,
        );
    };
    for &j in ios {
        for &d in s.deps.of(j) {
            super::issue::wait_for(s, d);
        }
    }
    let now = start.elapsed().as_nanos() as u64 + 1;
    for &j in ios {
        s.aio.issued[j].store(now, Ordering::Relaxed);
    }
    let ctx = match &c.ctx {
        Ok(ctx) => ctx,
        Err(_) => return one_by_one(s, start, ios, fds, buf, r),
    };
    let reqs: Vec<AioRequest<'_>> = ios
        .iter()
        .zip(fds)
        .map(|(&j, &fd)| request(s, j, fd))
        .collect();
    if ios.iter().any(|&j| s.aio.orphans[j].is_some()) {
        reap_ready(s, start, c, r);
    }
    match ctx.submit(&reqs) {
        Ok(n) => {
            c.in_flight.fetch_add(n, Ordering::AcqRel);
            for &j in &ios[n..] {
                complete(
                    s,
                    start,
                    j,
                    -i64::from(crate::platform::abi::errno::EAGAIN),
                    r,
                );
            }
            n as i64
        }
        Err(err) => {
            let errno = -i64::from(crate::engine::errno(&err).unwrap_or(5));
            for &j in ios {
                complete(s, start, j, errno, r);
            }
            errno
        }
    }
}

fn request<'f>(s: &Shared<'_>, j: usize, fd: BorrowedFd<'f>) -> AioRequest<'f> {
    let io = &s.events[j];
    AioRequest {
        fd,
        op: match io.op {
            Op::Read => AioOp::Read,
            Op::Write => AioOp::Write,
            Op::Fsync => AioOp::Fsync,
            _ => AioOp::Fdatasync,
        },
        offset: io.offset,
        len: io.len as usize,
        data: j as u64,
    }
}

/// Without native AIO: each I/O done in turn, complete when the call returns.
fn one_by_one(
    s: &Shared<'_>,
    start: Instant,
    ios: &[usize],
    fds: &[BorrowedFd<'_>],
    buf: &mut [u8],
    r: &mut ThreadResult,
) -> i64 {
    use crate::platform::sys::{fs, io};
    for (&j, &fd) in ios.iter().zip(fds) {
        let req = request(s, j, fd);
        let n = req.len.min(buf.len());
        let buf = &mut buf[..n];
        let res = match req.op {
            AioOp::Read => io::pread(req.fd, buf, req.offset).map(|n| n as i64),
            AioOp::Write => io::pwrite(req.fd, buf, req.offset).map(|n| n as i64),
            AioOp::Fsync => fs::fsync(req.fd).map(|_| 0),
            AioOp::Fdatasync => fs::fdatasync(req.fd).map(|_| 0),
        };
        complete(
            s,
            start,
            j,
            res.unwrap_or_else(|e| -(e.raw_os_error() as i64)),
            r,
        );
    }
    ios.len() as i64
}

/// Replays io_getevents `g` (an event index): waits until the I/Os it reaped when recorded
/// are complete here — submitted first, by whichever thread submitted them (a program may
/// reap on threads of its own), and reaped by this call or another (a reap takes any of the
/// context's I/Os, as the program's did); the count it reaped itself.
pub fn wait(s: &Shared<'_>, start: Instant, g: usize, r: &mut ThreadResult) -> i64 {
    let e = &s.events[g];
    let Some(Context {
        ctx: Ok(ctx),
        in_flight,
    }) = s.aio.contexts.get(&e.offset)
    else {
        return e.len as i64;
    };
    let set = s.aio.reaps.get(&g).map_or(&[][..], Vec::as_slice);
    let (mut got, mut out) = (0, Vec::<AioReaped>::with_capacity(set.len()));
    let pending = || set.iter().any(|&j| s.done[j].load(Ordering::Acquire) == 0);
    while !s.stop.load(Ordering::Relaxed) && pending() {
        let flying = in_flight.load(Ordering::Acquire);
        if flying == 0 {
            // Not yet submitted: another thread's io_submit to come, which wakes this one as
            // it completes (asleep meanwhile, `board`: the I/Os are the submitting thread's).
            let submitter = set.first().map_or(e.tid, |&j| s.events[j].tid);
            s.board.wait(submitter, || {
                in_flight.load(Ordering::Acquire) != 0
                    || !pending()
                    || s.stop.load(Ordering::Relaxed)
            });
            continue;
        }
        out.clear();
        let max = flying.min(set.len().max(1));
        if ctx
            .reap(1, max, Duration::from_millis(20), &mut out)
            .is_err()
        {
            break;
        }
        reaped(s, start, in_flight, &out, r);
        got += out.len();
    }
    got as i64
}

/// Reaps what of context `c` is complete, without waiting (its I/Os no call waits for
/// would otherwise fill it).
fn reap_ready(s: &Shared<'_>, start: Instant, c: &Context, r: &mut ThreadResult) {
    let (Ok(ctx), flying) = (&c.ctx, c.in_flight.load(Ordering::Acquire)) else {
        return;
    };
    let mut out = Vec::new();
    if flying > 0 && ctx.reap(0, flying, Duration::ZERO, &mut out).is_ok() {
        reaped(s, start, &c.in_flight, &out, r);
    }
}

/// At a thread's end: waits until the I/Os it submitted that no call waits for are
/// complete, reaping them (and whatever else of their contexts completes).
pub fn drain(s: &Shared<'_>, start: Instant, mine: &[usize], r: &mut ThreadResult) {
    let pending = |j: usize| {
        s.aio.orphans[j].is_some()
            && s.aio.issued[j].load(Ordering::Relaxed) != 0
            && s.done[j].load(Ordering::Acquire) == 0
    };
    let (mut at, mut out) = (0, Vec::new());
    loop {
        // Once complete an I/O stays so: the first still pending only moves on.
        while at < mine.len() && !pending(mine[at]) {
            at += 1;
        }
        let Some(&j) = mine.get(at).filter(|_| !s.stop.load(Ordering::Relaxed)) else {
            return;
        };
        let ring = s.aio.orphans[j].expect("pending is an orphan");
        let Some(Context {
            ctx: Ok(ctx),
            in_flight,
        }) = s.aio.contexts.get(&ring)
        else {
            return;
        };
        out.clear();
        let flying = in_flight.load(Ordering::Acquire).max(1);
        if ctx
            .reap(1, flying, Duration::from_millis(20), &mut out)
            .is_err()
        {
            return;
        }
        reaped(s, start, in_flight, &out, r);
    }
}

/// I/Os that could not be submitted (their file would not open): each complete with
/// `errno`, so that nothing waits for them; returns it.
pub fn fail(
    s: &Shared<'_>,
    start: Instant,
    ios: &[usize],
    errno: i64,
    r: &mut ThreadResult,
) -> i64 {
    let now = start.elapsed().as_nanos() as u64 + 1;
    for &j in ios {
        s.aio.issued[j].store(now, Ordering::Relaxed);
        complete(s, start, j, errno, r);
    }
    errno
}

/// I/Os a reap of a context took (`in_flight`: its count in flight), each complete.
fn reaped(
    s: &Shared<'_>,
    start: Instant,
    in_flight: &AtomicUsize,
    out: &[AioReaped],
    r: &mut ThreadResult,
) {
    in_flight.fetch_sub(out.len(), Ordering::AcqRel);
    for ev in out {
        complete(s, start, ev.data as usize, ev.result, r);
    }
}

/// An asynchronous I/O done: its latency from its submission, its completion marked.
fn complete(s: &Shared<'_>, start: Instant, j: usize, result: i64, r: &mut ThreadResult) {
    let now = start.elapsed().as_nanos() as u64;
    let issued = s.aio.issued[j].load(Ordering::Relaxed).saturating_sub(1);
    let took = now.saturating_sub(issued);
    s.timing[j].took_ns.store(took, Ordering::Relaxed);
    s.done[j].store(now + 1, Ordering::Release);
    s.board.wake(s.events[j].tid);
    r.record_async(&s.events[j], result, Duration::from_nanos(took));
    super::issue::storage_failed(s, j, result);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(t: u64, dur: u64, tid: u32, op: Op, flags: u16) -> Event {
        Event {
            flags,
            ..Event::test(t, dur, tid, op)
        }
    }

    /// Thread 1 submits a write and a read, thread 2 reaps both; thread 3 reads what the
    /// write wrote after that; an I/O no submit issues (past its submit's count) is waited for
    /// by nothing.
    #[test]
    fn a_wait_is_for_the_ios_it_reaped_and_a_dependency_on_one_is_on_that_wait() {
        let a = flag::ASYNC;
        let mut submit = ev(100, 10, 1, Op::AioSubmit, a);
        submit.len = 2;
        let mut wait = ev(200, 100, 2, Op::AioGetevents, a);
        wait.len = 2;
        let events = [
            submit,
            ev(100, 200, 1, Op::Write, a),
            ev(100, 200, 1, Op::Read, a),
            ev(100, 200, 1, Op::Read, a),
            wait,
            ev(400, 10, 3, Op::Read, 0),
        ];
        let r = reaps(&events);
        assert_eq!(r.len(), 1);
        assert_eq!(r[&4], vec![1, 2], "not 3: no submit issues it");
        let deps = dependencies(&events);
        assert_eq!(
            deps.of(5),
            [4],
            "the read waits for the reaping call, not the write"
        );
        assert_eq!(crate::trace::order::dependencies(&events).of(5), [1]);
    }

    /// A SQPOLL thread's batch of two I/Os that no recorded call reaped (the program read
    /// its completion ring itself), beside a submit whose I/O a wait reaped: only the batch's
    /// two are orphans, reaped by the replay itself.
    #[test]
    fn ios_no_call_waited_for_are_the_replays_to_reap() {
        let a = flag::ASYNC;
        let mut batch = ev(100, 0, 7, Op::UringEnter, a | flag::SQPOLL);
        batch.len = 2;
        let mut submit = ev(150, 10, 1, Op::AioSubmit, a);
        submit.len = 1;
        let mut wait = ev(300, 100, 1, Op::AioGetevents, a);
        wait.len = 1;
        submit.offset = 9;
        wait.offset = 9;
        let events = [
            batch,
            ev(100, 200, 7, Op::Read, a),
            ev(100, 250, 7, Op::Read, a),
            submit,
            ev(150, 250, 1, Op::Write, a),
            wait,
        ];
        let r = reaps(&events);
        assert_eq!(r[&5], vec![4]);
        assert_eq!(
            orphans(&events, &r),
            [None, Some(0), Some(0), None, None, None]
        );
    }
}
