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

/// e4defrag is Linux's: nothing to try here (its jobs are refused by [`has`]).
pub fn trial_move(_dir: &std::path::Path) -> io::Result<()> {
    Ok(())
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

/// What the engine `cfg` names does per I/O where Windows' calls are not the ones the shared
/// description names (pread, lseek, fallocate, open, unlink: Linux's); `None` where it holds.
pub fn calls(cfg: &Config) -> Option<&'static str> {
    Some(match cfg.kind {
        Kind::Psync => "ReadFile/WriteFile at an offset (synchronous, the offset in an OVERLAPPED)",
        Kind::Sync => {
            "ReadFile/WriteFile at the file's position (SetFilePointerEx when not \
                       sequential)"
        }
        Kind::Falloc => {
            "SetFileInformationByHandle, no data (a read: FileAllocationInfo, reserving \
             clusters; a write: extending with FileEndOfFileInfo; a trim: refused, Windows \
             punches no holes)"
        }
        Kind::Ftruncate => {
            "SetFileInformationByHandle(FileEndOfFileInfo) to each write's offset, no data"
        }
        Kind::Filecreate => {
            "one CreateFile(CREATE_NEW) per file per pass, timed alone (its CloseHandle is \
             not); a later pass opens the file the first made"
        }
        Kind::Filestat => {
            "one CreateFile (attributes only) and GetFileInformationByHandle of each file's \
             whole path per pass, no data"
        }
        Kind::Dirstat => {
            "one CreateFile (attributes only) and GetFileInformationByHandle of each \
             directory's whole path per pass, no data"
        }
        Kind::Filedelete => {
            "one delete per file (SetFileInformationByHandle's disposition, POSIX semantics \
             where offered), timed alone (the check that the name still holds the file this \
             run created is not)"
        }
        Kind::Dircreate => {
            "one CreateDirectory per directory, timed alone (opening it to hold it afterwards \
             is not)"
        }
        Kind::Dirdelete => {
            "one delete per directory (SetFileInformationByHandle's disposition), timed alone \
             (the check that the name still holds the directory this run created is not)"
        }
        _ => return None,
    })
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
