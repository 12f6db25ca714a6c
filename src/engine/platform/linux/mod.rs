//! Linux's own engines: pvsync and pvsync2 (preadv/preadv2), io_uring, libaio, posixaio, mmap
//! (with its SIGBUS handling), splice and e4defrag; and the vectored calls of vsync.

mod calls;
pub mod defrag;
pub mod libaio;
pub mod mmap;
pub mod net;
pub mod posixaio;
mod sigbus;
pub mod splice;
pub mod uring;
pub mod vectored;

pub use calls::{set_thread_ioprio, set_thread_mempolicy, set_write_hint, sync_range};
pub use defrag::trial_move;

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

/// One buffer of a vectored call: Linux's iovec.
pub use libc::iovec as IoVec;

/// Discards `len` bytes at `offset` of the block device `fd` is open to (BLKDISCARD, as
/// fio's trims).
pub fn discard(fd: BorrowedFd<'_>, offset: u64, len: u64) -> io::Result<()> {
    /// `BLKDISCARD`, `_IO(0x12, 119)`: the kernel's ioctl number (libc does not name it).
    const BLKDISCARD: libc::Ioctl = 0x1277;
    let range: [u64; 2] = [offset, len];
    // SAFETY: BLKDISCARD reads two u64s (start, length) from the pointer, which points at
    // `range`, alive for the call; the descriptor is open for the call.
    let r = unsafe { libc::ioctl(fd.as_raw_fd(), BLKDISCARD, range.as_ptr()) };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// readv(2) (`read`) or writev(2) over `iov` at the file's position (vsync).
pub fn readv_writev(fd: BorrowedFd<'_>, read: bool, iov: &[IoVec]) -> io::Result<usize> {
    let (raw, p, n) = (fd.as_raw_fd(), iov.as_ptr(), iov.len() as libc::c_int);
    // SAFETY: the caller's iovecs point into buffers valid and exclusively its own for the
    // duration of the call; fd is open.
    let r = unsafe {
        match read {
            true => libc::readv(raw, p, n),
            false => libc::writev(raw, p, n),
        }
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(r as usize)
}

use crate::engine::{Config, EngineUser, Files, Kind, OptionError};

/// The engine SASIOTEST's `-sgio` runs on: one preadv/pwritev of `numpages` pages per call.
pub const SGIO_ENGINE: &str = "pvsync";

/// This build's queued engine, whose options fio's hardware engines share (iodepth).
pub const QUEUED_ENGINE: &str = "io_uring";

/// Whether this build has the engine `kind`: on Linux, all but Windows' own.
pub fn has(kind: Kind) -> bool {
    !super::WINDOWS_KINDS.contains(&kind)
}

/// Builds the engine `cfg` names — one of [`super::LINUX_KINDS`] — over `files` (e4defrag's
/// donor, net's socket) and hands it to `f`.
pub fn with_engine<R>(cfg: &Config, files: Files, f: impl EngineUser<R>) -> R {
    let Files {
        fds: files,
        donor,
        net,
        ..
    } = files;
    match cfg.kind {
        Kind::Vsync => f.run(crate::engine::sync::Sync::<true>::new(files)),
        Kind::Net | Kind::Netsplice => match net {
            Some(n) => match net::Net::new(n.endpoint, n.prepared, n.guard) {
                Ok(e) => f.run(e),
                Err(e) => f.setup_failed(e),
            },
            None => f.setup_failed(io::Error::other("ioengine=net: no socket")),
        },
        Kind::Pvsync => f.run(vectored::Pvsync::new(files)),
        Kind::Pvsync2 => f.run(vectored::Pvsync2::new(files, cfg)),
        Kind::IoUring => match uring::Uring::new(files, cfg) {
            Ok(e) => f.run(e),
            Err(e) => f.setup_failed(e),
        },
        Kind::Libaio => match libaio::Libaio::new(files, cfg) {
            Ok(e) => f.run(e),
            Err(e) => f.setup_failed(e),
        },
        Kind::Posixaio => f.run(posixaio::Posixaio::new(files, cfg.queue.depth)),
        Kind::Mmap => f.run(mmap::Mmap::new(files, cfg.flags.thp)),
        Kind::Splice => match splice::Splice::new(files) {
            Ok(e) => f.run(e),
            Err(e) => f.setup_failed(e),
        },
        Kind::E4defrag => match donor.map(|d| defrag::Defrag::new(files, d, cfg.flags.inplace)) {
            Some(Ok(e)) => f.run(e),
            Some(Err(e)) => f.setup_failed(e),
            None => f.setup_failed(io::Error::other("ioengine=e4defrag: no donor file")),
        },
        other => f.setup_failed(io::Error::other(format!(
            "ioengine={}: not one of the platform's own engines",
            other.as_str()
        ))),
    }
}

/// What the engine `cfg` names does per I/O, for those whose calls are described by their own
/// module (posixaio, mmap, splice, e4defrag); `None` for the others, whose shared description
/// names Linux's calls already.
pub fn calls(cfg: &Config) -> Option<&'static str> {
    Some(match cfg.kind {
        Kind::Posixaio => posixaio::CALLS,
        Kind::Mmap if cfg.flags.thp => mmap::CALLS_THP,
        Kind::Mmap => mmap::CALLS,
        Kind::Splice => splice::CALLS,
        Kind::E4defrag => defrag::CALLS,
        _ => return None,
    })
}

/// Whether the kernel can run the queued engine `cfg` names with its options (io_uring's
/// features, libaio's context); the other engines need no probe.
pub fn probe(cfg: &Config) -> Result<(), OptionError> {
    match cfg.kind {
        Kind::IoUring => uring::probe(cfg),
        Kind::Libaio => libaio::probe(cfg),
        _ => Ok(()),
    }
}
