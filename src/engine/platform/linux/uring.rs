//! `io_uring`: up to `iodepth` I/Os in flight per job through one ring. Units are queued as
//! SQEs whose `user_data` is their slab slot; `commit` submits them in one io_uring_enter(2)
//! (none with `sqthread_poll`, whose kernel thread picks them up); `reap` drains CQEs,
//! entering the kernel only to wait. Options: `fixedbufs` (READ/WRITE_FIXED over buffers
//! registered once), `registerfiles`, `sqthread_poll`, `hipri` (IORING_SETUP_IOPOLL) and
//! `nowait` (RWF_NOWAIT). [`probe`] checks the kernel for all of it before anything runs.

use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};

use io_uring::{IoUring, Probe, opcode, squeue, types};

use crate::engine::Config;
use crate::engine::Dir;
use crate::engine::trim::Trimmer;
use crate::engine::{Completion, Engine, IoUnit, OptionError, Queued};
use crate::engine::{FlushCall, flush_fd};

pub struct Uring {
    ring: IoUring,
    files: Vec<OwnedFd>,
    trims: Trimmer,
    fixed_files: bool,
    fixed_bufs: bool,
    /// Completions appear only when we enter the kernel (IOPOLL, or deferred task work).
    must_enter: bool,
    /// The RWF_* flags of reads and of writes ([`crate::engine::Flags::rwf`]).
    rw_flags: (i32, i32),
    /// `force_async`: every this many submissions goes straight to io_uring's workers
    /// (IOSQE_ASYNC) instead of being tried inline first (0: none).
    force_async: u32,
    submitted: u32,
}

/// Ring setup for `cfg`: the same in [`probe`] and [`Uring::new`]. Returns the ring and
/// whether task work is deferred to our own waits (completions then appear only when we
/// enter the kernel to reap).
fn build_ring(cfg: &Config) -> io::Result<(IoUring, bool)> {
    if !cfg.flags.sqthread_poll {
        // One thread issues and reaps, so the kernel can skip the interrupts that would tell
        // it about completions and run their task work when it reaps (Linux 6.1+). Without
        // this, every completion of I/O the kernel ran in a worker costs an IPI.
        let mut b = IoUring::builder();
        b.setup_coop_taskrun()
            .setup_taskrun_flag()
            .setup_single_issuer()
            .setup_defer_taskrun();
        if cfg.flags.hipri {
            b.setup_iopoll();
        }
        match b.build(cfg.queue.depth.next_power_of_two()) {
            Ok(r) => return Ok((r, true)),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {}
            Err(e) => return Err(e),
        }
    }
    let mut b = IoUring::builder();
    if cfg.flags.sqthread_poll {
        // 0: the kernel's default idle time (one second) before the poll thread sleeps.
        b.setup_sqpoll(0);
        if let Some(cpu) = cfg.flags.sqthread_poll_cpu {
            b.setup_sqpoll_cpu(cpu);
        }
    }
    if cfg.flags.hipri {
        b.setup_iopoll();
    }
    Ok((b.build(cfg.queue.depth.next_power_of_two())?, false))
}

fn explain_setup(cfg: &Config, e: io::Error) -> String {
    let what = match e.raw_os_error() {
        Some(libc::ENOSYS) => "this kernel has no io_uring (ENOSYS)".to_string(),
        Some(libc::EPERM) if cfg.flags.sqthread_poll => {
            "not permitted (EPERM): sqthread_poll needs CAP_SYS_NICE on kernels before 5.11, \
             and io_uring may be disabled (sysctl kernel.io_uring_disabled)"
                .to_string()
        }
        Some(libc::EPERM) => "not permitted (EPERM): io_uring is disabled for this process \
             (sysctl kernel.io_uring_disabled, or a seccomp policy)"
            .to_string(),
        Some(libc::ENOMEM) => format!(
            "out of memory for a ring of {} entries (ENOMEM): lower iodepth",
            cfg.queue.depth.next_power_of_two()
        ),
        _ => e.to_string(),
    };
    format!("cannot set up a ring: {what}")
}

fn refused(option: &'static str, message: String) -> OptionError {
    OptionError { option, message }
}

/// Checks that this kernel can run `cfg` on io_uring (ring setup with its options and every
/// opcode it will use), without touching any file. The error names the option at fault.
pub fn probe(cfg: &Config) -> Result<(), OptionError> {
    let (ring, _) = build_ring(cfg).map_err(|e| refused("ioengine", explain_setup(cfg, e)))?;
    let mut p = Probe::new();
    if let Err(e) = ring.submitter().register_probe(&mut p) {
        // Kernels before 5.6 have no probe, and no READ/WRITE either.
        return Err(refused(
            "ioengine",
            format!(
                "this kernel's io_uring is too old (probe failed: {e}); iogauge needs Linux \
                 5.6 or later"
            ),
        ));
    }
    let needed: &[(u8, &str)] = if cfg.numpages > 1 {
        &[
            (opcode::Readv::CODE, "READV"),
            (opcode::Writev::CODE, "WRITEV"),
        ]
    } else if cfg.flags.fixedbufs {
        &[
            (opcode::ReadFixed::CODE, "READ_FIXED"),
            (opcode::WriteFixed::CODE, "WRITE_FIXED"),
        ]
    } else {
        &[(opcode::Read::CODE, "READ"), (opcode::Write::CODE, "WRITE")]
    };
    for (code, name) in needed {
        if !p.is_supported(*code) {
            return Err(refused(
                "ioengine",
                format!("this kernel's io_uring lacks IORING_OP_{name}"),
            ));
        }
    }
    if cfg.flags.fixedbufs {
        // One page, registered and released with the ring: proves the feature and the
        // locked-memory accounting work here before any file is created.
        let mut page = crate::engine::AlignedBuf::zeroed(crate::engine::buf::ALIGN);
        let iov = [libc::iovec {
            iov_base: page.as_mut_ptr().cast(),
            iov_len: page.len(),
        }];
        // SAFETY: `page` outlives `ring`, which is dropped (unregistering it) first.
        unsafe { ring.submitter().register_buffers(&iov) }.map_err(|e| {
            refused(
                "fixedbufs",
                format!("this kernel refused to register a buffer: {e}"),
            )
        })?;
        drop(ring);
        drop(page);
    }
    Ok(())
}

impl Uring {
    pub fn new(files: Vec<OwnedFd>, cfg: &Config) -> io::Result<Self> {
        let (ring, deferred) = build_ring(cfg)
            .map_err(|e| io::Error::other(format!("io_uring: {}", explain_setup(cfg, e))))?;
        if cfg.flags.registerfiles && !files.is_empty() {
            let fds: Vec<RawFd> = files.iter().map(|f| f.as_raw_fd()).collect();
            ring.submitter().register_files(&fds).map_err(|e| {
                io::Error::other(format!("registerfiles: registering the files failed: {e}"))
            })?;
        }
        Ok(Uring {
            ring,
            trims: Trimmer::new(files.len()),
            fixed_files: cfg.flags.registerfiles,
            fixed_bufs: cfg.flags.fixedbufs,
            must_enter: cfg.flags.hipri || deferred,
            rw_flags: cfg.flags.rwf(),
            force_async: cfg.flags.force_async,
            submitted: 0,
            files,
        })
    }

    /// Builds the SQE for `u`'s remainder; `user_data` is the slab slot.
    fn entry(&self, slot: u32, u: &mut IoUnit) -> squeue::Entry {
        let (dir, offset, file, prio) = (u.dir, u.next_offset(), u.file, u.prio);
        let flags = match dir {
            Dir::Read => self.rw_flags.0,
            _ => self.rw_flags.1,
        };
        macro_rules! sqe {
            ($op:ident, $fd:expr, $($arg:expr),*) => {
                opcode::$op::new($fd, $($arg),*)
                    .offset(offset)
                    .rw_flags(flags)
                    .ioprio(prio)
                    .build()
            };
        }
        // The same opcodes over a raw or a registered descriptor (distinct types).
        macro_rules! build {
            ($fd:expr) => {{
                let fd = $fd;
                if u.npages() > 1 {
                    let iov = u.iovecs();
                    let (p, n) = (iov.as_ptr(), iov.len() as u32);
                    match dir {
                        Dir::Read => sqe!(Readv, fd, p, n),
                        _ => sqe!(Writev, fd, p, n),
                    }
                } else {
                    let (p, len) = u.rest_raw();
                    let len = len as u32;
                    // Registered buffer index = slab slot (one page per unit with fixedbufs).
                    let idx = slot as u16;
                    match (dir, self.fixed_bufs) {
                        (Dir::Read, false) => sqe!(Read, fd, p, len),
                        (_, false) => sqe!(Write, fd, p.cast_const(), len),
                        (Dir::Read, true) => sqe!(ReadFixed, fd, p, len, idx),
                        (_, true) => sqe!(WriteFixed, fd, p.cast_const(), len, idx),
                    }
                }
            }};
        }
        let e = if self.fixed_files {
            build!(types::Fixed(file as u32))
        } else {
            build!(types::Fd(self.files[file].as_raw_fd()))
        };
        e.user_data(u64::from(slot))
    }
}

/// Retries a ring syscall interrupted by a signal (Ctrl-C is handled through the stop flag).
fn retry<T>(mut f: impl FnMut() -> io::Result<T>) -> io::Result<T> {
    loop {
        match f() {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            r => return r,
        }
    }
}

impl Engine for Uring {
    const QUEUED: bool = true;

    #[inline]
    fn queue(&mut self, slot: u32, u: &mut IoUnit) -> Queued {
        if u.dir == Dir::Trim {
            // As fio's io_uring engine: a trim is done here, synchronously.
            return self.trims.unit(&self.files, u);
        }
        let mut e = self.entry(slot, u);
        if self.force_async > 0 {
            self.submitted += 1;
            if self.submitted >= self.force_async {
                self.submitted = 0;
                e = e.flags(io_uring::squeue::Flags::ASYNC);
            }
        }
        // The ring has at least iodepth entries and at most iodepth units exist, so the
        // submission queue cannot be full; commit and retry if a kernel ever disagrees.
        // SAFETY: the SQE points into `u`'s buffers and iovecs, which the slab keeps alive
        // and untouched until this slot's completion is reaped.
        while unsafe { self.ring.submission().push(&e) }.is_err() {
            if let Err(err) = self.commit() {
                return Queued::Done(Err(err));
            }
        }
        Queued::Queued
    }

    #[inline]
    fn commit(&mut self) -> io::Result<()> {
        if self.ring.submission().is_empty() {
            return Ok(());
        }
        retry(|| self.ring.submit()).map(drop)
    }

    #[inline]
    fn reap(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> io::Result<()> {
        let mut got = 0;
        let mut polled = false;
        loop {
            for cqe in self.ring.completion().take(max - got) {
                out.push(Completion {
                    slot: cqe.user_data() as u32,
                    res: cqe.result(),
                });
                got += 1;
            }
            // With IOPOLL or deferred task work, completions appear only when we enter the
            // kernel: do so once even when not asked to wait.
            if got >= min && (got > 0 || !self.must_enter || polled) {
                return Ok(());
            }
            polled = true;
            let want = min - got.min(min);
            retry(|| self.ring.submitter().submit_and_wait(want))?;
        }
    }

    fn register(&mut self, units: &mut [IoUnit]) -> io::Result<()> {
        if !self.fixed_bufs {
            return Ok(());
        }
        let iovs: Vec<libc::iovec> = units.iter().map(|u| u.page_iovec(0)).collect();
        // SAFETY: the buffers belong to the slab, which outlives the ring (the worker drops
        // the engine first) and never reallocates.
        unsafe { self.ring.submitter().register_buffers(&iovs) }.map_err(|e| {
            let hint = if e.raw_os_error() == Some(libc::ENOMEM) {
                ": the locked-memory limit is too low (ulimit -l) for registered buffers"
            } else {
                ""
            };
            io::Error::new(
                e.kind(),
                format!("fixedbufs: registering buffers failed: {e}{hint}"),
            )
        })
    }

    fn descriptor(&self, file: usize) -> Option<std::os::fd::BorrowedFd<'_>> {
        // Registered files are the kernel's table, not the descriptors.
        self.files
            .get(file)
            .filter(|_| !self.fixed_files)
            .map(|f| f.as_fd())
    }

    fn flush(&mut self, file: usize, call: FlushCall) -> io::Result<()> {
        flush_fd(self.files[file].as_fd(), call)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Flags, Kind, Queue, WriteThrough};
    use std::os::unix::fs::FileExt as _;

    fn config(flags: Flags) -> Config {
        let queue = Queue {
            depth: 1,
            batch_submit: 1,
            complete_min: 1,
            complete_max: 1,
            low: 1,
        };
        let write_through = WriteThrough::None;
        let (kind, numpages) = (Kind::IoUring, 1);
        Config {
            kind,
            numpages,
            queue,
            flags,
            write_through,
        }
    }

    /// One I/O of `dir` at offset 0 through a ring with `flags`: the completion's result.
    fn one(dir: Dir, flags: Flags, f: &std::fs::File) -> Option<i32> {
        let cfg = config(flags);
        if let Err(e) = probe(&cfg) {
            eprintln!("skipped: {}", e.message);
            return None;
        }
        let fd = OwnedFd::from(f.try_clone().unwrap());
        let mut e = Uring::new(vec![fd], &cfg).unwrap();
        let mut u = IoUnit::new(4096, 1);
        u.dir = dir;
        assert!(matches!(e.queue(0, &mut u), Queued::Queued));
        e.commit().unwrap();
        let mut out = Vec::new();
        while out.is_empty() {
            e.reap(1, 1, &mut out).unwrap();
        }
        Some(out[0].res)
    }

    /// The per-call flags reach the kernel in each SQE, per direction: RWF_ATOMIC goes on
    /// writes only (the kernel refuses it on a buffered write, and would on any read), and
    /// RWF_DONTCACHE on both, which tmpfs refuses.
    #[test]
    fn rw_flags_reach_the_kernel_per_direction() {
        let f = tempfile::tempfile().unwrap();
        f.write_all_at(&[7u8; 4096], 0).unwrap();
        let atomic = Flags {
            atomic: true,
            ..Flags::default()
        };
        let Some(read) = one(Dir::Read, atomic, &f) else {
            return;
        };
        assert_eq!(read, 4096);
        assert_eq!(one(Dir::Write, atomic, &f), Some(-libc::EOPNOTSUPP));
        assert_eq!(one(Dir::Write, Flags::default(), &f), Some(4096));
        let Ok(shm) = tempfile::tempfile_in("/dev/shm") else {
            eprintln!("skipped: no tmpfs at /dev/shm");
            return;
        };
        shm.write_all_at(&[7u8; 4096], 0).unwrap();
        let uncached = Flags {
            uncached: true,
            ..Flags::default()
        };
        assert_eq!(one(Dir::Read, uncached, &shm), Some(-libc::EOPNOTSUPP));
        assert_eq!(one(Dir::Write, uncached, &shm), Some(-libc::EOPNOTSUPP));
        assert_eq!(one(Dir::Read, Flags::default(), &shm), Some(4096));
    }
}
