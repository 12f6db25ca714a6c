//! `pvsync` and `pvsync2`: one preadv(2)/pwritev(2) (or preadv2/pwritev2) per I/O over the
//! unit's page buffers — a real `numpages`-entry iovec, as SAS SGIO moves BUFNO pages of
//! BUFSIZE bytes in one call. `pvsync2` adds per-call flags: RWF_HIPRI (polled completion),
//! RWF_NOWAIT (fail with EAGAIN instead of blocking) and RWF_DSYNC/RWF_SYNC (write-through per
//! call instead of at open).

use crate::platform::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::io;

use crate::engine::trim::Trimmer;
use crate::engine::{Config, Dir, rw_flags};
use crate::engine::{Engine, IoUnit, Queued};
use crate::engine::{FlushCall, flush_fd};

pub struct Pvsync {
    files: Vec<OwnedFd>,
    trims: Trimmer,
}

impl Pvsync {
    pub fn new(files: Vec<OwnedFd>) -> Self {
        let trims = Trimmer::new(files.len());
        Pvsync { files, trims }
    }
}

/// One vectored call for the rest of `u`: `call(fd, dir, iovecs, count, offset)` is the raw
/// syscall, given iovecs that point into the unit's own page buffers.
#[inline]
fn vectored(
    files: &[OwnedFd],
    u: &mut IoUnit,
    call: impl FnOnce(RawFd, Dir, *const libc::iovec, libc::c_int, libc::off_t) -> isize,
) -> Queued {
    let fd = files[u.file].as_raw_fd();
    let (dir, offset) = (u.dir, u.next_offset() as libc::off_t);
    let iov = u.iovecs();
    let n = call(fd, dir, iov.as_ptr(), iov.len() as libc::c_int, offset);
    Queued::Done(if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    })
}

impl Engine for Pvsync {
    #[inline]
    fn queue(&mut self, _: u32, u: &mut IoUnit) -> Queued {
        if u.dir == Dir::Trim {
            return self.trims.unit(&self.files, u);
        }
        // SAFETY: the iovecs point into the unit's own page buffers, valid and exclusively
        // ours for the duration of the call; fd is open.
        vectored(&self.files, u, |fd, dir, iov, n, off| unsafe {
            match dir {
                Dir::Read => libc::preadv(fd, iov, n, off),
                _ => libc::pwritev(fd, iov, n, off),
            }
        })
    }

    fn descriptor(&self, file: usize) -> Option<crate::platform::fd::BorrowedFd<'_>> {
        self.files.get(file).map(|f| f.as_fd())
    }

    fn flush(&mut self, file: usize, call: FlushCall) -> io::Result<()> {
        flush_fd(self.files[file].as_fd(), call)
    }
}

pub struct Pvsync2 {
    files: Vec<OwnedFd>,
    read_flags: libc::c_int,
    write_flags: libc::c_int,
    trims: Trimmer,
}

impl Pvsync2 {
    pub fn new(files: Vec<OwnedFd>, cfg: &Config) -> Self {
        let (read_flags, write_flags) = rw_flags(cfg);
        Pvsync2 {
            trims: Trimmer::new(files.len()),
            files,
            read_flags,
            write_flags,
        }
    }
}

impl Engine for Pvsync2 {
    #[inline]
    fn queue(&mut self, _: u32, u: &mut IoUnit) -> Queued {
        if u.dir == Dir::Trim {
            return self.trims.unit(&self.files, u);
        }
        let (rf, wf) = (self.read_flags, self.write_flags);
        // SAFETY: as in Pvsync::queue.
        vectored(&self.files, u, |fd, dir, iov, n, off| unsafe {
            match dir {
                Dir::Read => libc::preadv2(fd, iov, n, off, rf),
                _ => libc::pwritev2(fd, iov, n, off, wf),
            }
        })
    }

    fn descriptor(&self, file: usize) -> Option<crate::platform::fd::BorrowedFd<'_>> {
        self.files.get(file).map(|f| f.as_fd())
    }

    fn flush(&mut self, file: usize, call: FlushCall) -> io::Result<()> {
        flush_fd(self.files[file].as_fd(), call)
    }
}
