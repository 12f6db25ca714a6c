//! Windows' own engine, windowsaio (`windowsaio.rs`: overlapped I/O on a completion port,
//! scatter/gather for `numpages`). Windows has none of Linux's own engines (vsync, pvsync,
//! pvsync2, io_uring, libaio, posixaio, mmap, splice, e4defrag, net, netsplice): a job naming
//! one is refused as its plan is made, with the engines this build has.

mod windowsaio;

use std::io;
use std::os::windows::io::BorrowedHandle as BorrowedFd;

use crate::engine::{Config, EngineUser, Files, Kind, OptionError};

/// The engine SASIOTEST's `-sgio` runs on: ReadFileScatter/WriteFileGather of `numpages`
/// pages per call, as SASIOTEST itself.
pub const SGIO_ENGINE: &str = "windowsaio";

/// This build's queued engine, whose options fio's hardware engines share (iodepth).
pub const QUEUED_ENGINE: &str = "windowsaio";

/// Whether this build has the engine `kind`: not Linux's own.
pub fn has(kind: Kind) -> bool {
    !super::LINUX_KINDS.contains(&kind)
}

/// Builds windowsaio over `files` and hands it to `f`; Linux's engines cannot be built here
/// (the plan refuses them first, so that answers only a caller that skipped [`has`]).
pub fn with_engine<R>(cfg: &Config, files: Files, f: impl EngineUser<R>) -> R {
    match cfg.kind {
        Kind::Windowsaio => match windowsaio::WindowsAio::new(files.fds, cfg) {
            Ok(e) => f.run(e),
            Err(e) => f.setup_failed(e),
        },
        k => f.setup_failed(io::Error::new(
            io::ErrorKind::Unsupported,
            format!("ioengine={}: Linux only", k.as_str()),
        )),
    }
}

/// One buffer of a vectored call, laid out as Linux's iovec.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct IoVec {
    pub iov_base: *mut std::ffi::c_void,
    pub iov_len: usize,
}

/// A device's discard (TRIM): not issued on Windows yet.
pub fn discard(_fd: BorrowedFd<'_>, _offset: u64, _len: u64) -> io::Result<()> {
    Err(linux_only("a trim of a raw device (BLKDISCARD)"))
}

/// readv(2)/writev(2): vsync is Linux's (the plan refuses it here).
pub fn readv_writev(_fd: BorrowedFd<'_>, _read: bool, _iov: &[IoVec]) -> io::Result<usize> {
    Err(linux_only("vsync (readv/writev)"))
}

/// An error for what only Linux has.
fn linux_only(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::Unsupported, format!("{what}: Linux only"))
}

/// sync_file_range(2): Linux only.
pub fn sync_range(_fd: BorrowedFd<'_>, _offset: u64, _len: u64, _flags: u32) -> io::Result<()> {
    Err(linux_only("sync_file_range"))
}

/// ioprio_set(2): Linux only.
pub fn set_thread_ioprio(_ioprio: u16) -> io::Result<()> {
    Err(linux_only("prio/prioclass (ioprio_set)"))
}

/// set_mempolicy(2): Linux only.
pub fn set_thread_mempolicy(_mode: i32, _nodes: &[usize]) -> io::Result<()> {
    Err(linux_only("numa_mem_policy (set_mempolicy)"))
}

/// fcntl(F_SET_RW_HINT): Linux only.
pub fn set_write_hint(_fd: BorrowedFd<'_>, _hint: u64) -> io::Result<()> {
    Err(linux_only("write_hint (F_SET_RW_HINT)"))
}

/// Sockets for net and netsplice: Linux's (the plan refuses them here).
pub mod net {
    use std::io;

    use crate::engine::net::Endpoint;

    /// A socket made before its group starts: none on Windows.
    #[derive(Debug)]
    pub enum Prepared {}

    impl Prepared {
        pub fn is_listener(&self) -> bool {
            match *self {}
        }
    }

    /// Refuses: net's engines are Linux's.
    pub fn prepare(_ep: &Endpoint) -> io::Result<Prepared> {
        Err(super::linux_only("ioengine=net"))
    }

    /// Never: no socket is made here.
    pub fn refused_address(_e: &io::Error) -> bool {
        false
    }
}

/// No engine of this half describes its own calls.
pub fn calls(_cfg: &Config) -> Option<&'static str> {
    None
}

/// No engine of this half needs a probe.
pub fn probe(_cfg: &Config) -> Result<(), OptionError> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linux_engines_are_not_in_the_windows_build() {
        for k in super::super::LINUX_KINDS {
            assert!(!has(k), "{k:?}");
        }
        assert!(has(Kind::Psync) && has(Kind::Sync) && has(Kind::Windowsaio) && has(Kind::Null));
    }
}
