//! Linux native AIO (io_setup, io_submit, io_getevents), as raw system calls: the ABI the
//! `libaio` engine fills in, and a context a replay shares between its threads to issue a
//! recorded program's asynchronous I/Os as it did.

use std::io;
use std::os::fd::AsRawFd;

use crate::platform::{AioOp, AioReaped, AioRequest};

pub use super::ring::UringContext;

/// The kernel's `struct iocb` (linux/aio_abi.h): 64 bytes.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct Iocb {
    pub data: u64,
    #[cfg(target_endian = "little")]
    pub key: u32,
    #[cfg(target_endian = "little")]
    pub rw_flags: i32,
    #[cfg(target_endian = "big")]
    pub rw_flags: i32,
    #[cfg(target_endian = "big")]
    pub key: u32,
    pub opcode: u16,
    pub reqprio: i16,
    pub fildes: u32,
    pub buf: u64,
    pub nbytes: u64,
    pub offset: i64,
    pub reserved2: u64,
    pub flags: u32,
    pub resfd: u32,
}

/// The kernel's `struct io_event`: the iocb's `data`, the iocb, and the result (bytes moved
/// or a negated errno).
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct IoEvent {
    pub data: u64,
    pub obj: u64,
    pub res: i64,
    pub res2: i64,
}

pub const IOCB_CMD_PREAD: u16 = 0;
pub const IOCB_CMD_PWRITE: u16 = 1;
pub const IOCB_CMD_FSYNC: u16 = 2;
pub const IOCB_CMD_FDSYNC: u16 = 3;
pub const IOCB_CMD_PREADV: u16 = 7;
pub const IOCB_CMD_PWRITEV: u16 = 8;
pub const IOCB_FLAG_IOPRIO: u32 = 1 << 1;

/// An AIO context of `nr` events (io_setup), or why not.
pub fn setup(nr: u32) -> io::Result<u64> {
    let mut ctx: u64 = 0;
    // SAFETY: io_setup writes the context's address into `ctx`, which outlives the call.
    let r = unsafe { libc::syscall(libc::SYS_io_setup, nr as libc::c_long, &mut ctx) };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(ctx)
}

/// Destroys a context (io_destroy waits for the I/Os still in flight).
pub fn destroy(ctx: u64) {
    // SAFETY: `ctx` came from io_setup and is destroyed once.
    unsafe { libc::syscall(libc::SYS_io_destroy, ctx) };
}

/// The alignment of a context's or ring's buffer (direct I/O's, on any device).
const ALIGN: usize = 4096;

/// The one buffer all of a context's or ring's I/Os move (their data is not looked at: reads
/// land there, writes come from it), aligned for direct I/O. Only the kernel touches it once
/// the I/Os run.
pub(super) struct IoBuffer {
    /// Allocated with ALIGN more than `len` bytes; the I/Os use `len` from `at`.
    buf: Vec<u8>,
    at: usize,
    len: usize,
}

impl IoBuffer {
    /// `len` bytes, those `fill` puts there.
    pub(super) fn new(len: usize, fill: impl FnOnce(&mut [u8])) -> IoBuffer {
        let mut buf = vec![0u8; len + ALIGN];
        let at = buf.as_ptr().align_offset(ALIGN);
        fill(&mut buf[at..at + len]);
        IoBuffer { buf, at, len }
    }

    /// The address the I/Os move their bytes at.
    pub(super) fn addr(&self) -> *mut u8 {
        self.buf.as_ptr().wrapping_add(self.at) as *mut u8
    }

    /// A request's length cut to the buffer's.
    pub(super) fn fit(&self, len: usize) -> usize {
        len.min(self.len)
    }

    /// Left allocated for good: I/Os into it could not be waited for.
    pub(super) fn leak(&mut self) {
        std::mem::forget(std::mem::take(&mut self.buf));
    }
}

/// A native AIO context that several threads may submit to and reap from, with the one
/// buffer all its I/Os move.
pub struct AioContext {
    ctx: u64,
    buf: IoBuffer,
}

impl AioContext {
    /// A context for `nr` I/Os in flight, of up to `len` bytes each, writing the bytes
    /// `fill` puts in its buffer.
    pub fn new(nr: u32, len: usize, fill: impl FnOnce(&mut [u8])) -> io::Result<AioContext> {
        let ctx = setup(nr.max(1))?;
        let buf = IoBuffer::new(len, fill);
        Ok(AioContext { ctx, buf })
    }

    /// Submits `reqs` in one io_submit; how many the kernel took (the rest are not in
    /// flight). A request's length is cut to the buffer's.
    pub fn submit(&self, reqs: &[AioRequest<'_>]) -> io::Result<usize> {
        let base = self.buf.addr() as u64;
        let mut iocbs: Vec<Iocb> = reqs
            .iter()
            .map(|r| Iocb {
                data: r.data,
                opcode: match r.op {
                    AioOp::Read => IOCB_CMD_PREAD,
                    AioOp::Write => IOCB_CMD_PWRITE,
                    AioOp::Fsync => IOCB_CMD_FSYNC,
                    AioOp::Fdatasync => IOCB_CMD_FDSYNC,
                },
                fildes: r.fd.as_raw_fd() as u32,
                buf: base,
                nbytes: self.buf.fit(r.len) as u64,
                offset: r.offset as i64,
                ..Iocb::default()
            })
            .collect();
        let mut ptrs: Vec<*mut Iocb> = iocbs.iter_mut().map(|i| i as *mut Iocb).collect();
        loop {
            // SAFETY: the pointers are to `iocbs`, alive for the call (the kernel copies
            // them); each names `len` bytes or fewer of the context's buffer, which lives
            // until the context is destroyed (io_destroy waits for the I/Os in flight).
            let r = unsafe {
                libc::syscall(
                    libc::SYS_io_submit,
                    self.ctx,
                    ptrs.len() as libc::c_long,
                    ptrs.as_mut_ptr(),
                )
            };
            if r >= 0 {
                return Ok(r as usize);
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }

    /// Waits up to `timeout` for at least `min` completions (up to `max`), appending them.
    pub fn reap(
        &self,
        min: usize,
        max: usize,
        timeout: std::time::Duration,
        out: &mut Vec<AioReaped>,
    ) -> io::Result<usize> {
        let mut events = vec![IoEvent::default(); max.max(1)];
        let ts = libc::timespec {
            tv_sec: timeout.as_secs() as libc::time_t,
            tv_nsec: timeout.subsec_nanos() as libc::c_long,
        };
        // SAFETY: `events` holds `max` entries for the kernel to fill; `ts` outlives the call.
        let r = unsafe {
            libc::syscall(
                libc::SYS_io_getevents,
                self.ctx,
                min.min(events.len()) as libc::c_long,
                events.len() as libc::c_long,
                events.as_mut_ptr(),
                &ts,
            )
        };
        if r < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::Interrupted => Ok(0),
                _ => Err(e),
            };
        }
        out.extend(events[..r as usize].iter().map(|e| AioReaped {
            data: e.data,
            result: e.res,
        }));
        Ok(r as usize)
    }
}

impl Drop for AioContext {
    fn drop(&mut self) {
        // Before the buffer goes: io_destroy waits for the I/Os still in flight.
        destroy(self.ctx);
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn the_kernel_abi_sizes() {
        assert_eq!(std::mem::size_of::<Iocb>(), 64);
        assert_eq!(std::mem::size_of::<IoEvent>(), 32);
    }

    /// (Native AIO's data sync is not on every file system: not on the tmpfs /tmp may be.)
    #[test]
    fn two_writes_and_two_reads_come_back_with_their_results() {
        let ctx = AioContext::new(4, 8192, |b| b.fill(7)).unwrap();
        writes_then_two_more(
            &|r| ctx.submit(r),
            &|min, max, t, out| ctx.reap(min, max, t, out),
            false,
        );
    }

    /// A context or ring's `reap`.
    pub(in crate::platform) type Reap<'a> =
        &'a dyn Fn(usize, usize, std::time::Duration, &mut Vec<AioReaped>) -> io::Result<usize>;

    /// Two 4 KiB writes of the buffer's bytes (7s) to a new file, then a data sync (`sync`;
    /// else a read) and a read, through a context or ring's `submit` and `reap`: each comes
    /// back with its result, and the file holds the bytes.
    pub(in crate::platform) fn writes_then_two_more(
        submit: &dyn Fn(&[AioRequest<'_>]) -> io::Result<usize>,
        reap: Reap<'_>,
        sync: bool,
    ) {
        let f = tempfile::tempfile().unwrap();
        let req = |op, offset, data| AioRequest {
            fd: f.as_fd(),
            op,
            offset,
            len: 4096,
            data,
        };
        let done = |data, result| AioReaped { data, result };
        let both = |reqs: &[AioRequest<'_>]| {
            assert_eq!(submit(reqs).unwrap(), 2);
            let mut got = Vec::new();
            while got.len() < 2 {
                reap(1, 2, std::time::Duration::from_secs(5), &mut got).unwrap();
            }
            got.sort_by_key(|x| x.data);
            got
        };
        let got = both(&[req(AioOp::Write, 0, 10), req(AioOp::Write, 4096, 11)]);
        assert_eq!(got, [done(10, 4096), done(11, 4096)]);
        assert_eq!(f.metadata().unwrap().len(), 8192);
        let mut back = vec![0u8; 8192];
        std::os::unix::fs::FileExt::read_exact_at(&f, &mut back, 0).unwrap();
        assert!(
            back.iter().all(|&b| b == 7),
            "the buffer's bytes were written"
        );
        let (first, result) = match sync {
            true => (AioOp::Fdatasync, 0),
            false => (AioOp::Read, 4096),
        };
        let got = both(&[req(first, 0, 12), req(AioOp::Read, 4096, 13)]);
        assert_eq!(got, [done(12, result), done(13, 4096)]);
    }

    #[test]
    fn a_request_past_the_buffer_moves_only_the_buffers_bytes() {
        let f = tempfile::tempfile().unwrap();
        let ctx = AioContext::new(1, 512, |b| b.fill(1)).unwrap();
        let w = AioRequest {
            fd: f.as_fd(),
            op: AioOp::Write,
            offset: 0,
            len: 1 << 20,
            data: 1,
        };
        assert_eq!(ctx.submit(&[w]).unwrap(), 1);
        let mut got = Vec::new();
        ctx.reap(1, 1, std::time::Duration::from_secs(5), &mut got)
            .unwrap();
        assert_eq!(
            got,
            [AioReaped {
                data: 1,
                result: 512
            }]
        );
    }
}
