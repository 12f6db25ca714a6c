//! An io_uring ring that several threads submit to and reap from, with the one buffer all its
//! I/Os move: a replay's stand-in for a ring a recorded program made, so that its I/Os go
//! through io_uring as the program's did (not through native AIO, whose io_submit does
//! buffered I/O inline and so blocks where io_uring does not). The same calls as
//! `aio::AioContext`: `submit` and `reap`.
//!
//! A ring several threads use is plain (no single issuer, no deferred or cooperative task
//! work): the thread that reaps an I/O is not always the one that submitted it, and a
//! completion must not wait for its submitter to enter the kernel. A ring one thread uses is
//! made as fio and liburing's users make theirs (single issuer, deferred task work), disabled
//! until that thread's first call. One lock covers the submission queue (filling it and the
//! io_uring_enter that submits it), another the completion queue's reading; a wait for
//! completions enters the kernel with neither held and submits nothing, so that it never
//! takes another thread's requests before their submit does.

use std::io;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Mutex, Once};
use std::time::{Duration, Instant};

use io_uring::{IoUring, opcode, squeue, types};

use super::aio::IoBuffer;
use crate::platform::{AioOp, AioReaped, AioRequest};

/// io_uring_enter(2)'s flags: wait for completions, with a timeout in an argument.
const ENTER_GETEVENTS: u32 = 1;
const ENTER_EXT_ARG: u32 = 8;

/// The most submission queue entries a ring is made with.
const ENTRIES_MAX: u32 = 4096;

pub struct UringContext {
    ring: IoUring,
    /// Held while the submission queue is filled and submitted.
    sq: Mutex<()>,
    /// Held while completions are read off the completion queue.
    cq: Mutex<()>,
    /// I/Os submitted and not yet reaped (below 0 for a moment, where another thread reaps
    /// an I/O before its submit counts it).
    flying: AtomicI64,
    /// Set when the kernel would not take what was queued: the ring submits no more.
    broken: AtomicBool,
    /// Made disabled for one task: the first to use it enables it, and is its one task.
    disabled: bool,
    enabled: Once,
    buf: IoBuffer,
}

impl UringContext {
    /// A ring for `nr` I/Os in flight, of up to `len` bytes each, writing the bytes `fill`
    /// puts in its buffer; an error where this kernel has no io_uring, or none that waits
    /// with a timeout (Linux 5.11+). `one_task`: one thread alone submits to it and reaps it
    /// (the first to call `submit` or `reap`), so that its completions' work can wait for
    /// that thread's reaps as a ring set up the way liburing's users and fio set theirs up
    /// (single issuer, deferred task work: Linux 6.1+; a plain ring where the kernel has none).
    pub fn new(
        nr: u32,
        len: usize,
        fill: impl FnOnce(&mut [u8]),
        one_task: bool,
    ) -> io::Result<UringContext> {
        let entries = nr.clamp(1, ENTRIES_MAX).next_power_of_two();
        let single = one_task
            .then(|| {
                IoUring::builder()
                    .setup_cqsize(entries * 2)
                    .setup_r_disabled()
                    .setup_single_issuer()
                    .setup_defer_taskrun()
                    .setup_coop_taskrun()
                    .build(entries)
                    .ok()
            })
            .flatten();
        let disabled = single.is_some();
        let ring = match single {
            Some(r) => r,
            None => IoUring::builder()
                .setup_cqsize(entries * 2)
                .build(entries)?,
        };
        if !ring.params().is_feature_ext_arg() {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "this kernel's io_uring cannot wait with a timeout (IORING_FEAT_EXT_ARG, Linux 5.11)",
            ));
        }
        let buf = IoBuffer::new(len, fill);
        Ok(UringContext {
            ring,
            sq: Mutex::new(()),
            cq: Mutex::new(()),
            flying: AtomicI64::new(0),
            broken: AtomicBool::new(false),
            disabled,
            enabled: Once::new(),
            buf,
        })
    }

    fn entry(&self, r: &AioRequest<'_>) -> squeue::Entry {
        let fd = types::Fd(r.fd.as_raw_fd());
        let ptr = self.buf.addr();
        let n = self.buf.fit(r.len) as u32;
        let e = match r.op {
            AioOp::Read => opcode::Read::new(fd, ptr, n).offset(r.offset).build(),
            AioOp::Write => opcode::Write::new(fd, ptr, n).offset(r.offset).build(),
            AioOp::Fsync => opcode::Fsync::new(fd).build(),
            AioOp::Fdatasync => opcode::Fsync::new(fd)
                .flags(types::FsyncFlags::DATASYNC)
                .build(),
        };
        e.user_data(r.data)
    }

    /// Submits `reqs` (in io_uring_enter calls of as many as the queue holds); how many the
    /// kernel took (the rest are not in flight). A request's length is cut to the buffer's.
    /// Where the kernel will not take what is queued (out of memory for good), the ring
    /// stops submitting: what it left queued is never submitted, and later submits fail.
    pub fn submit(&self, reqs: &[AioRequest<'_>]) -> io::Result<usize> {
        self.enable();
        let _held = self.sq.lock().unwrap_or_else(|p| p.into_inner());
        if self.broken.load(Ordering::Relaxed) {
            return Err(io::Error::other(
                "the replay's io_uring ring stopped taking requests",
            ));
        }
        let mut taken = 0;
        while taken < reqs.len() {
            let mut left = self.queue(&reqs[taken..]);
            while left > 0 {
                match retry(|| self.ring.submit()) {
                    Ok(n) if n > 0 => {
                        self.flying.fetch_add(n as i64, Ordering::AcqRel);
                        taken += n;
                        left = left.saturating_sub(n);
                    }
                    r => {
                        self.broken.store(true, Ordering::Relaxed);
                        return match r {
                            Err(e) if taken == 0 => Err(e),
                            _ => Ok(taken),
                        };
                    }
                }
            }
        }
        Ok(taken)
    }

    /// Pushes as many of `reqs` as the submission queue has room for; how many.
    fn queue(&self, reqs: &[AioRequest<'_>]) -> usize {
        // SAFETY: the caller holds `sq`: no other view of the submission queue exists. Each
        // entry names `len` bytes or fewer of the ring's buffer, which lives until every
        // I/O in flight is reaped (`Drop`).
        let mut q = unsafe { self.ring.submission_shared() };
        let mut queued = 0;
        for r in reqs {
            // SAFETY: as above.
            if unsafe { q.push(&self.entry(r)) }.is_err() {
                break;
            }
            queued += 1;
        }
        queued
    }

    /// Waits up to `timeout` for at least `min` completions (up to `max`), appending them.
    pub fn reap(
        &self,
        min: usize,
        max: usize,
        timeout: Duration,
        out: &mut Vec<AioReaped>,
    ) -> io::Result<usize> {
        self.enable();
        let max = max.max(1);
        let until = Instant::now() + timeout;
        let mut got = 0;
        loop {
            got += self.take(max - got, out);
            let left = until.saturating_duration_since(Instant::now());
            if got >= min.min(max) || left.is_zero() {
                return Ok(got);
            }
            let ts = types::Timespec::new()
                .sec(left.as_secs())
                .nsec(left.subsec_nanos());
            let args = types::SubmitArgs::new().timespec(&ts);
            // SAFETY: `args` is the kernel's io_uring_getevents_arg (the type is transparent
            // over it), alive for the call; nothing is submitted (other threads' entries
            // stay queued for their own submit).
            let r = unsafe {
                self.ring.submitter().enter(
                    0,
                    (min - got) as u32,
                    ENTER_GETEVENTS | ENTER_EXT_ARG,
                    Some(&args),
                )
            };
            match r {
                Ok(_) => {}
                Err(e) if matches!(e.raw_os_error(), Some(libc::ETIME | libc::EINTR)) => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// A ring made for one task: enabled by the first call, whose thread it then is (a
    /// failure shows in that call's io_uring_enter).
    fn enable(&self) {
        if self.disabled {
            self.enabled.call_once(|| {
                let _ = self.ring.submitter().register_enable_rings();
            });
        }
    }

    /// Takes up to `max` completions off the queue, appending them; how many.
    fn take(&self, max: usize, out: &mut Vec<AioReaped>) -> usize {
        let _held = self.cq.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: `cq` is held: no other view of the completion queue exists.
        let q = unsafe { self.ring.completion_shared() };
        let before = out.len();
        out.extend(q.take(max).map(|c| AioReaped {
            data: c.user_data(),
            result: i64::from(c.result()),
        }));
        let n = out.len() - before;
        self.flying.fetch_sub(n as i64, Ordering::AcqRel);
        n
    }
}

/// `f` again while the kernel is interrupted, or for up to 50 ms while it is short of memory
/// or its completion queue is full (other threads reap it).
fn retry<T>(mut f: impl FnMut() -> io::Result<T>) -> io::Result<T> {
    let mut tries = 0;
    loop {
        match f() {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e)
                if matches!(e.raw_os_error(), Some(libc::EAGAIN | libc::EBUSY)) && tries < 1000 =>
            {
                tries += 1;
                std::thread::sleep(Duration::from_micros(50));
            }
            r => return r,
        }
    }
}

impl Drop for UringContext {
    fn drop(&mut self) {
        // Before the buffer goes: a ring's descriptor closed does not wait for its I/Os, which
        // would move bytes into memory no longer the buffer's. Where they cannot be reaped,
        // the buffer is left allocated.
        let mut out = Vec::new();
        while self.flying.load(Ordering::Acquire) > 0 {
            out.clear();
            if self
                .reap(
                    1,
                    2 * ENTRIES_MAX as usize,
                    Duration::from_millis(100),
                    &mut out,
                )
                .is_err()
            {
                self.buf.leak();
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    fn ring(nr: u32, len: usize, byte: u8) -> Option<UringContext> {
        ring_for(nr, len, byte, false)
    }

    fn ring_for(nr: u32, len: usize, byte: u8, one_task: bool) -> Option<UringContext> {
        match UringContext::new(nr, len, |b| b.fill(byte), one_task) {
            Ok(r) => Some(r),
            Err(e) => {
                eprintln!("SKIP: no io_uring here: {e}");
                None
            }
        }
    }

    #[test]
    fn two_writes_a_sync_and_a_read_come_back_with_their_results() {
        if let Some(r) = ring(4, 8192, 7) {
            writes_a_sync_and_a_read(&r);
        }
    }

    /// A ring of one task (made disabled, enabled by its first use, its completions' work
    /// deferred to its waits), made on one thread and used on another, as a replay's are.
    #[test]
    fn a_ring_of_one_task_is_that_of_the_thread_that_uses_it_first() {
        if let Some(r) = ring_for(4, 8192, 7, true) {
            if !r.disabled {
                eprintln!("SKIP: this kernel makes no ring of one task (Linux 6.1+)");
                return;
            }
            std::thread::scope(|s| s.spawn(|| writes_a_sync_and_a_read(&r)).join().unwrap());
        }
    }

    fn writes_a_sync_and_a_read(r: &UringContext) {
        crate::platform::linux::aio::tests::writes_then_two_more(
            &|reqs| r.submit(reqs),
            &|min, max, t, out| r.reap(min, max, t, out),
            true,
        );
    }

    #[test]
    fn a_wait_with_nothing_in_flight_ends_at_its_timeout() {
        let Some(r) = ring(1, 512, 0) else { return };
        let t = Instant::now();
        let mut got = Vec::new();
        assert_eq!(
            r.reap(1, 1, Duration::from_millis(30), &mut got).unwrap(),
            0
        );
        assert!(
            t.elapsed() >= Duration::from_millis(30),
            "{:?}",
            t.elapsed()
        );
        assert!(got.is_empty());
    }

    /// More requests than the queue holds go in several submits, all of them taken.
    #[test]
    fn a_batch_larger_than_the_queue_is_taken_whole() {
        let f = tempfile::tempfile().unwrap();
        let Some(r) = ring(2, 512, 3) else { return };
        let reqs: Vec<AioRequest<'_>> = (0..10u64)
            .map(|i| AioRequest {
                fd: f.as_fd(),
                op: AioOp::Write,
                offset: i * 512,
                len: 512,
                data: i,
            })
            .collect();
        assert_eq!(r.submit(&reqs).unwrap(), 10);
        let mut got = Vec::new();
        while got.len() < 10 {
            r.reap(1, 10, Duration::from_secs(5), &mut got).unwrap();
        }
        assert!(got.iter().all(|x| x.result == 512), "{got:?}");
        assert_eq!(f.metadata().unwrap().len(), 5120);
    }
}
