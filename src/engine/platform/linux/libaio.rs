//! `libaio`: Linux native AIO, as databases use it (Oracle, InnoDB, PostgreSQL's
//! `io_method`): one context of `iodepth` events per job (io_setup(2)); `queue` fills the
//! slot's iocb, `commit` hands the batch to io_submit(2), `reap` takes events with
//! io_getevents(2) or, with `userspace_reap` and nothing to wait for, from the completion ring
//! the kernel maps into the process. The raw system calls, no library: what runs is what
//! the kernel does with them. Buffered I/O (direct=0) is where native AIO is not asynchronous:
//! the kernel does the transfer inside io_submit, so for a buffered file [`Engine::ready`]
//! hands back the events already in the ring when io_submit returns, and the achieved depth
//! shows it; direct I/O is reaped as fio's libaio reaps it. Options:
//! `userspace_reap`, `nowait` (RWF_NOWAIT), per-command priorities (IOCB_FLAG_IOPRIO).

use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::engine::trim::Trimmer;
use crate::engine::{
    Completion, Config, Dir, Engine, FlushCall, IoUnit, OptionError, Queued, flush_fd,
};

use crate::platform::aio::{
    IOCB_CMD_PREAD, IOCB_CMD_PREADV, IOCB_CMD_PWRITE, IOCB_CMD_PWRITEV, IOCB_FLAG_IOPRIO, IoEvent,
    Iocb, destroy, setup,
};

/// The head of the completion ring the context maps into the process (`struct aio_ring` in
/// fs/aio.c); its events follow it.
#[repr(C)]
struct AioRing {
    id: u32,
    nr: u32,
    head: AtomicU32,
    tail: AtomicU32,
    magic: u32,
    compat_features: u32,
    incompat_features: u32,
    header_length: u32,
}

const AIO_RING_MAGIC: u32 = 0xa10a_10a1;

fn explain_setup(nr: u32, e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::ENOSYS) => {
            "this kernel has no native AIO (ENOSYS: built without CONFIG_AIO)".to_string()
        }
        Some(libc::EAGAIN) => format!(
            "cannot set up an AIO context of {nr} events (EAGAIN): the system-wide limit \
             (/proc/sys/fs/aio-max-nr, in use: /proc/sys/fs/aio-nr) is reached; lower iodepth \
             or numjobs, or raise the limit"
        ),
        _ => format!("cannot set up an AIO context of {nr} events: {e}"),
    }
}

/// Checks that this kernel has native AIO and a context of the job's depth, before any file.
pub fn probe(cfg: &Config) -> Result<(), OptionError> {
    let ctx = setup(cfg.queue.depth).map_err(|e| OptionError {
        option: "ioengine",
        message: explain_setup(cfg.queue.depth, &e),
    })?;
    destroy(ctx);
    Ok(())
}

pub struct Libaio {
    ctx: u64,
    files: Vec<OwnedFd>,
    trims: Trimmer,
    /// One iocb per slab slot, filled by `queue`; the kernel copies it at io_submit.
    iocbs: Vec<Iocb>,
    /// The queued iocbs, in order, until `commit` submits them.
    batch: Vec<*mut Iocb>,
    events: Vec<IoEvent>,
    userspace_reap: bool,
    /// The RWF_* flags of reads and of writes ([`crate::engine::Flags::rwf`]).
    rw_flags: (i32, i32),
    /// The files are buffered (no O_DIRECT): io_submit does each transfer before it
    /// returns, so what is in the ring then was done inside it.
    buffered: bool,
}

// SAFETY: the raw pointers in `batch` point into `iocbs`, owned by the engine, and are only
// used by the one thread that runs it.
unsafe impl Send for Libaio {}

impl Drop for Libaio {
    fn drop(&mut self) {
        destroy(self.ctx);
    }
}

impl Libaio {
    pub fn new(files: Vec<OwnedFd>, cfg: &Config) -> io::Result<Self> {
        let depth = cfg.queue.depth.max(1);
        let ctx = setup(depth)
            .map_err(|e| io::Error::other(format!("libaio: {}", explain_setup(depth, &e))))?;
        let buffered = files.iter().any(|f| {
            rustix::fs::fcntl_getfl(f).is_ok_and(|fl| !fl.contains(rustix::fs::OFlags::DIRECT))
        });
        Ok(Libaio {
            ctx,
            buffered,
            trims: Trimmer::new(files.len()),
            files,
            iocbs: vec![Iocb::default(); depth as usize],
            batch: Vec::with_capacity(depth as usize),
            events: vec![IoEvent::default(); depth as usize],
            userspace_reap: cfg.flags.userspace_reap,
            rw_flags: cfg.flags.rwf(),
        })
    }

    /// The completion ring the kernel maps at the context's address, where it is one this
    /// code knows (the magic checked; None: only io_getevents can reap).
    fn ring(&self) -> Option<&AioRing> {
        // SAFETY: the context's address is the mapped ring header for as long as the context
        // lives (fs/aio.c); its fields are read, and head/tail through atomics.
        let ring = unsafe { &*(self.ctx as *const AioRing) };
        (ring.magic == AIO_RING_MAGIC && ring.incompat_features == 0).then_some(ring)
    }

    /// Up to `max` events already in the ring, without a system call (fio's userspace_reap).
    fn take_from_ring(&mut self, max: usize, out: &mut Vec<Completion>) -> usize {
        let Some(ring) = self.ring() else {
            return 0;
        };
        let (nr, len) = (ring.nr, ring.header_length as usize);
        let mut head = ring.head.load(Ordering::Acquire);
        let tail = ring.tail.load(Ordering::Acquire);
        let mut got = 0;
        while head != tail && got < max {
            // SAFETY: `head` < `nr`, and the ring holds `nr` events after its header; the
            // Acquire load of `tail` orders this read after the kernel's write of the event.
            let ev = unsafe {
                let base = (self.ctx as *const u8).add(len) as *const IoEvent;
                *base.add(head as usize)
            };
            out.push(completion(&ev));
            head = (head + 1) % nr;
            got += 1;
        }
        ring.head.store(head, Ordering::Release);
        got
    }
}

fn completion(ev: &IoEvent) -> Completion {
    Completion {
        slot: ev.data as u32,
        res: ev.res.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32,
    }
}

impl Engine for Libaio {
    const QUEUED: bool = true;
    const COMPLETES_IN_SUBMIT: bool = true;

    #[inline]
    fn queue(&mut self, slot: u32, u: &mut IoUnit) -> Queued {
        if u.dir == Dir::Trim {
            // As fio's libaio engine: a trim is done here, synchronously.
            return self.trims.unit(&self.files, u);
        }
        let i = slot as usize;
        if i >= self.iocbs.len() {
            // The slab has `iodepth` units; growing `iocbs` here would move the ones queued.
            return Queued::Done(Err(io::Error::other(format!(
                "libaio: slot {i} beyond the context's {} iocbs",
                self.iocbs.len()
            ))));
        }
        let write = u.dir != Dir::Read;
        let (opcode, buf, nbytes) = if u.npages() > 1 {
            let iov = u.iovecs();
            let op = if write {
                IOCB_CMD_PWRITEV
            } else {
                IOCB_CMD_PREADV
            };
            (op, iov.as_ptr() as u64, iov.len() as u64)
        } else {
            let (p, len) = u.rest_raw();
            let op = if write {
                IOCB_CMD_PWRITE
            } else {
                IOCB_CMD_PREAD
            };
            (op, p as u64, len as u64)
        };
        self.iocbs[i] = Iocb {
            data: u64::from(slot),
            rw_flags: match write {
                true => self.rw_flags.1,
                false => self.rw_flags.0,
            },
            opcode,
            reqprio: u.prio as i16,
            fildes: self.files[u.file].as_raw_fd() as u32,
            buf,
            nbytes,
            offset: u.next_offset() as i64,
            flags: if u.prio != 0 { IOCB_FLAG_IOPRIO } else { 0 },
            ..Iocb::default()
        };
        self.batch.push(&mut self.iocbs[i]);
        Queued::Queued
    }

    fn commit(&mut self) -> io::Result<()> {
        let mut from = 0;
        while from < self.batch.len() {
            let n = self.batch.len() - from;
            // SAFETY: every pointer is to an iocb in `self.iocbs` (never resized: `queue`
            // refuses a slot beyond it) describing buffers the slab keeps
            // alive until the slot is reaped; the kernel copies the iocbs during the call.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_io_submit,
                    self.ctx,
                    n as libc::c_long,
                    self.batch.as_mut_ptr().add(from),
                )
            };
            match r {
                r if r > 0 => from += r as usize,
                0 => return Err(io::Error::other("io_submit took none of the queued I/Os")),
                _ => {
                    let e = io::Error::last_os_error();
                    if e.kind() == io::ErrorKind::Interrupted {
                        continue;
                    }
                    // What was not taken is not in flight; the caller stops the job.
                    self.batch.clear();
                    return Err(io::Error::new(e.kind(), format!("io_submit: {e}")));
                }
            }
        }
        self.batch.clear();
        Ok(())
    }

    /// Buffered files only: direct I/O is in flight when io_submit returns, and is reaped
    /// as fio's libaio does (when the queue is full), so the queue stays as deep.
    #[inline]
    fn ready(&mut self, out: &mut Vec<Completion>) {
        if self.buffered {
            let max = self.iocbs.len();
            self.take_from_ring(max, out);
        }
    }

    fn reap(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> io::Result<()> {
        let max = max.min(self.events.len()).max(1);
        if min == 0 && self.userspace_reap {
            self.take_from_ring(max, out);
            return Ok(());
        }
        // Nothing to wait for: a zero timeout (a poll); else wait for `min`.
        let zero = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        let timeout: *const libc::timespec = if min == 0 { &zero } else { std::ptr::null() };
        loop {
            // SAFETY: `events` holds at least `max` entries for the kernel to fill.
            let r = unsafe {
                libc::syscall(
                    libc::SYS_io_getevents,
                    self.ctx,
                    min as libc::c_long,
                    max as libc::c_long,
                    self.events.as_mut_ptr(),
                    timeout,
                )
            };
            if r < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(io::Error::new(e.kind(), format!("io_getevents: {e}")));
            }
            out.extend(self.events[..r as usize].iter().map(completion));
            return Ok(());
        }
    }

    fn descriptor(&self, file: usize) -> Option<std::os::fd::BorrowedFd<'_>> {
        self.files.get(file).map(|f| f.as_fd())
    }

    fn flush(&mut self, file: usize, call: FlushCall) -> io::Result<()> {
        flush_fd(self.files[file].as_fd(), call)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Flags, Queue};
    use std::os::unix::fs::FileExt as _;

    fn config(depth: u32, userspace_reap: bool) -> Config {
        Config {
            kind: crate::engine::Kind::Libaio,
            numpages: 1,
            queue: Queue {
                depth,
                batch_submit: depth,
                complete_min: 1,
                complete_max: depth,
                low: depth,
            },
            flags: Flags {
                userspace_reap,
                ..Flags::default()
            },
            write_through: crate::engine::WriteThrough::None,
        }
    }

    fn file(len: usize) -> (tempfile::NamedTempFile, OwnedFd) {
        let f = tempfile::NamedTempFile::new().unwrap();
        let data: Vec<u8> = (0..len).map(|i| (i / 4096) as u8).collect();
        f.as_file().write_all_at(&data, 0).unwrap();
        let fd = OwnedFd::from(f.reopen().unwrap());
        (f, fd)
    }

    #[test]
    fn the_kernel_abi_sizes() {
        assert_eq!(std::mem::size_of::<AioRing>(), 32);
    }

    /// Four reads queued, submitted in one io_submit, reaped (by io_getevents, then from
    /// the ring): each slot gets its own block's bytes.
    #[test]
    fn reads_four_blocks_at_once_and_reaps_them() {
        for userspace in [false, true] {
            let (_keep, fd) = file(4 * 4096);
            let cfg = config(4, userspace);
            if let Err(e) = probe(&cfg) {
                eprintln!("skipped: {}", e.message);
                return;
            }
            let mut e = Libaio::new(vec![fd], &cfg).unwrap();
            let mut units: Vec<IoUnit> = (0..4).map(|_| IoUnit::new(4096, 1)).collect();
            for (i, u) in units.iter_mut().enumerate() {
                u.dir = Dir::Read;
                u.offset = (3 - i as u64) * 4096;
                assert!(matches!(e.queue(i as u32, u), Queued::Queued));
            }
            e.commit().unwrap();
            let mut out = Vec::new();
            e.ready(&mut out);
            while out.len() < 4 {
                let min = if userspace { 0 } else { 4 - out.len() };
                e.reap(min, 4, &mut out).unwrap();
            }
            out.sort_by_key(|c| c.slot);
            for (i, c) in out.iter().enumerate() {
                assert_eq!((c.slot, c.res), (i as u32, 4096));
                let want = (3 - i) as u8;
                assert!(units[i].rest_mut().iter().all(|&b| b == want), "slot {i}");
            }
        }
    }

    /// A buffered write completes inside io_submit: its event is in the ring when the call
    /// returns, and the bytes are in the file.
    #[test]
    fn a_buffered_write_is_done_when_io_submit_returns() {
        let (keep, fd) = file(4096);
        let cfg = config(1, false);
        if let Err(e) = probe(&cfg) {
            eprintln!("skipped: {}", e.message);
            return;
        }
        let mut e = Libaio::new(vec![fd], &cfg).unwrap();
        let mut u = IoUnit::new(4096, 1);
        u.dir = Dir::Write;
        u.rest_mut().fill(0xab);
        assert!(matches!(e.queue(0, &mut u), Queued::Queued));
        e.commit().unwrap();
        let mut out = Vec::new();
        e.ready(&mut out);
        assert_eq!(out.len(), 1, "completed inside io_submit");
        assert_eq!(out[0].res, 4096);
        let mut back = [0u8; 4096];
        keep.as_file().read_exact_at(&mut back, 0).unwrap();
        assert!(back.iter().all(|&b| b == 0xab));
    }

    /// A read past the end of the file: the event carries 0 bytes, as pread would.
    #[test]
    fn errors_come_back_as_the_kernel_gives_them() {
        let (_keep, fd) = file(4096);
        let cfg = config(1, false);
        if probe(&cfg).is_err() {
            return;
        }
        let mut e = Libaio::new(vec![fd], &cfg).unwrap();
        let mut u = IoUnit::new(4096, 1);
        u.dir = Dir::Read;
        u.offset = 1 << 20;
        e.queue(0, &mut u);
        e.commit().unwrap();
        let mut out = Vec::new();
        e.reap(1, 1, &mut out).unwrap();
        assert_eq!(out[0].res, 0);
    }

    /// The per-call flags reach the kernel, per direction: RWF_ATOMIC on a buffered write is
    /// refused by io_submit (the kernel takes it on direct writes only), while a read of the
    /// same engine, which does not carry it, goes through.
    #[test]
    fn atomic_goes_on_writes_only_and_the_kernel_sees_it() {
        let (_keep, fd) = file(4096);
        let mut cfg = config(1, false);
        cfg.flags.atomic = true;
        if probe(&cfg).is_err() {
            return;
        }
        let mut e = Libaio::new(vec![fd], &cfg).unwrap();
        let mut u = IoUnit::new(4096, 1);
        u.dir = Dir::Read;
        e.queue(0, &mut u);
        e.commit().unwrap();
        let mut out = Vec::new();
        e.reap(1, 1, &mut out).unwrap();
        assert_eq!(out[0].res, 4096);
        u.dir = Dir::Write;
        e.queue(0, &mut u);
        let err = e.commit().unwrap_err();
        assert_eq!(err.raw_os_error(), None, "{err}");
        assert!(err.to_string().contains("not supported"), "{err}");
    }
}
