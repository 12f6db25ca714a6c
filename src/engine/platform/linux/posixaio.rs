//! `posixaio`: POSIX asynchronous I/O through the C library (aio_read(3), aio_write(3),
//! aio_error(3), aio_return(3), aio_suspend(3)), as fio's posixaio engine and the programs
//! that use it: glibc hands the requests to helper threads, which do pread/pwrite, and serves
//! those of one file descriptor mostly in turn: on one file, the device sees far less depth
//! than `iodepth` (see docs/fio-mode.md), not the kernel's queue. `queue` fills the slot's control block, `commit` starts the batch,
//! `reap` collects what has finished, waiting in aio_suspend for the first when it must.
//! Trims are done in `queue`, synchronously, as fio's. Dropped with requests in flight (a job
//! stopped by an error), it cancels them and waits: their buffers are the job's.

use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};

use crate::engine::trim::Trimmer;
use crate::engine::{Completion, Dir, Engine, FlushCall, IoUnit, Queued, flush_fd};

pub const CALLS: &str = "aio_read/aio_write (the C library's POSIX AIO: helper threads do \
                         them as pread/pwrite, one file's mostly in turn), aio_suspend to wait, \
                         aio_error/aio_return to reap";

// SAFETY: the C library's POSIX AIO calls, as aio(7) declares them (glibc 2.34 and later and
// musl have them in libc itself); each call site says why its arguments are valid.
unsafe extern "C" {
    fn aio_read(cb: *mut libc::aiocb) -> libc::c_int;
    fn aio_write(cb: *mut libc::aiocb) -> libc::c_int;
    fn aio_error(cb: *const libc::aiocb) -> libc::c_int;
    fn aio_return(cb: *mut libc::aiocb) -> libc::ssize_t;
    fn aio_suspend(
        list: *const *const libc::aiocb,
        n: libc::c_int,
        timeout: *const libc::timespec,
    ) -> libc::c_int;
    fn aio_cancel(fd: libc::c_int, cb: *mut libc::aiocb) -> libc::c_int;
}

pub struct Posixaio {
    files: Vec<OwnedFd>,
    trims: Trimmer,
    /// One control block per slot, never moved while its request is in flight.
    cbs: Box<[libc::aiocb]>,
    /// Queued slots, and whether each is a write.
    batch: Vec<(u32, bool)>,
    /// Started, not yet reaped.
    in_flight: Vec<u32>,
    /// aio_suspend's list (kept to reuse its allocation).
    waiting: Vec<*const libc::aiocb>,
}

// SAFETY: the raw pointers in `cbs` and `waiting` point into buffers and blocks owned by the
// job's thread, which alone uses the engine; glibc's helper threads touch only the blocks of
// requests in flight, which `Drop` waits for.
unsafe impl Send for Posixaio {}

impl Posixaio {
    pub fn new(files: Vec<OwnedFd>, depth: u32) -> Self {
        // SAFETY: aiocb is plain data, all zeros a valid empty block (SIGEV_NONE is 1, set
        // per request).
        let blank: libc::aiocb = unsafe { std::mem::zeroed() };
        Posixaio {
            trims: Trimmer::new(files.len()),
            files,
            cbs: vec![blank; depth.max(1) as usize].into_boxed_slice(),
            batch: Vec::with_capacity(depth as usize),
            in_flight: Vec::with_capacity(depth as usize),
            waiting: Vec::with_capacity(depth as usize),
        }
    }

    /// Moves finished requests from `in_flight` to `out`, at most `max`; how many.
    fn collect(&mut self, max: usize, out: &mut Vec<Completion>) -> usize {
        let mut got = 0;
        let mut i = 0;
        while i < self.in_flight.len() && got < max {
            let slot = self.in_flight[i];
            let cb = &mut self.cbs[slot as usize];
            // SAFETY: the block is one this engine started and has not reaped.
            let err = unsafe { aio_error(cb) };
            if err == libc::EINPROGRESS {
                i += 1;
                continue;
            }
            // SAFETY: the request has finished; aio_return is called once for it.
            let ret = unsafe { aio_return(cb) };
            let res = match err {
                0 => ret.clamp(0, i32::MAX as isize) as i32,
                e => -e,
            };
            out.push(Completion { slot, res });
            self.in_flight.swap_remove(i);
            got += 1;
        }
        got
    }
}

impl Engine for Posixaio {
    const QUEUED: bool = true;

    #[inline]
    fn queue(&mut self, slot: u32, u: &mut IoUnit) -> Queued {
        if u.dir == Dir::Trim {
            return self.trims.unit(&self.files, u);
        }
        let Some(cb) = self.cbs.get_mut(slot as usize) else {
            return Queued::Done(Err(io::Error::other(format!(
                "posixaio: slot {slot} beyond the job's {} control blocks",
                self.cbs.len()
            ))));
        };
        let (buf, len) = u.rest_raw();
        // SAFETY: as in `new`: all zeros is a valid block, filled in below.
        *cb = unsafe { std::mem::zeroed() };
        cb.aio_fildes = self.files[u.file].as_raw_fd();
        cb.aio_buf = buf.cast();
        cb.aio_nbytes = len;
        cb.aio_offset = u.next_offset() as libc::off_t;
        cb.aio_sigevent.sigev_notify = libc::SIGEV_NONE;
        self.batch.push((slot, u.dir == Dir::Write));
        Queued::Queued
    }

    fn commit(&mut self) -> io::Result<()> {
        for k in 0..self.batch.len() {
            let (slot, write) = self.batch[k];
            let cb: *mut libc::aiocb = &mut self.cbs[slot as usize];
            // SAFETY: the block describes a buffer of the slab, which outlives the request
            // (the worker reaps it, or `Drop` waits for it); the block is not moved or
            // reused until reaped.
            let r = unsafe { if write { aio_write(cb) } else { aio_read(cb) } };
            if r != 0 {
                let e = io::Error::last_os_error();
                self.batch.drain(..=k);
                return Err(e);
            }
            self.in_flight.push(slot);
        }
        self.batch.clear();
        Ok(())
    }

    fn reap(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> io::Result<()> {
        let mut got = self.collect(max, out);
        while got < min && !self.in_flight.is_empty() {
            self.waiting.clear();
            let cbs = &self.cbs;
            self.waiting
                .extend(self.in_flight.iter().map(|&s| &cbs[s as usize] as *const _));
            // SAFETY: every pointer is to a block of a request in flight, alive in `cbs`.
            let r = unsafe {
                aio_suspend(
                    self.waiting.as_ptr(),
                    self.waiting.len() as libc::c_int,
                    std::ptr::null(),
                )
            };
            if r != 0 {
                let e = io::Error::last_os_error();
                if e.raw_os_error() != Some(libc::EINTR) {
                    return Err(e);
                }
            }
            got += self.collect(max - got, out);
        }
        Ok(())
    }

    fn descriptor(&self, file: usize) -> Option<std::os::fd::BorrowedFd<'_>> {
        self.files.get(file).map(|f| f.as_fd())
    }

    fn flush(&mut self, file: usize, call: FlushCall) -> io::Result<()> {
        flush_fd(self.files[file].as_fd(), call)
    }
}

impl Drop for Posixaio {
    fn drop(&mut self) {
        for &slot in &self.in_flight {
            let cb: *mut libc::aiocb = &mut self.cbs[slot as usize];
            // SAFETY: a request this engine started; cancelling it is allowed at any time.
            unsafe { aio_cancel((*cb).aio_fildes, cb) };
        }
        let mut out = Vec::new();
        while !self.in_flight.is_empty() {
            let n = self.in_flight.len();
            if self.reap(n.min(1), n, &mut out).is_err() {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            out.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileExt as _;

    /// Four reads in flight at once, then four writes: each slot gets its own block, and the
    /// writes land where they were asked; a dropped engine waits for what it started.
    #[test]
    fn reads_and_writes_four_at_once() {
        let f = tempfile::NamedTempFile::new().unwrap();
        let data: Vec<u8> = (0..4 * 4096).map(|i| (i / 4096) as u8).collect();
        f.as_file().write_all_at(&data, 0).unwrap();
        let fd = OwnedFd::from(f.reopen().unwrap());
        let mut e = Posixaio::new(vec![fd], 4);
        let mut units: Vec<IoUnit> = (0..4).map(|_| IoUnit::new(4096, 1)).collect();
        for (i, u) in units.iter_mut().enumerate() {
            (u.dir, u.offset) = (Dir::Read, (3 - i as u64) * 4096);
            assert!(matches!(e.queue(i as u32, u), Queued::Queued));
        }
        e.commit().unwrap();
        let mut out = Vec::new();
        while out.len() < 4 {
            e.reap(1, 4, &mut out).unwrap();
        }
        out.sort_by_key(|c| c.slot);
        for (i, c) in out.iter().enumerate() {
            assert_eq!((c.slot, c.res), (i as u32, 4096));
            assert!(units[i].rest_mut().iter().all(|&b| b == (3 - i) as u8));
        }
        for (i, u) in units.iter_mut().enumerate() {
            u.rest_mut().fill(0xA0 + i as u8);
            (u.dir, u.offset) = (Dir::Write, i as u64 * 4096);
            assert!(matches!(e.queue(i as u32, u), Queued::Queued));
        }
        e.commit().unwrap();
        out.clear();
        while out.len() < 4 {
            e.reap(4 - out.len(), 4, &mut out).unwrap();
        }
        assert!(out.iter().all(|c| c.res == 4096));
        let mut back = vec![0u8; 4 * 4096];
        f.as_file().read_exact_at(&mut back, 0).unwrap();
        for i in 0..4 {
            assert!(
                back[i * 4096..(i + 1) * 4096]
                    .iter()
                    .all(|&b| b == 0xA0 + i as u8)
            );
        }
        // Requests left in flight: Drop waits for them before the buffers go.
        for (i, u) in units.iter_mut().enumerate() {
            (u.dir, u.offset) = (Dir::Read, i as u64 * 4096);
            let _ = e.queue(i as u32, u);
        }
        e.commit().unwrap();
        drop(e);
    }
}
