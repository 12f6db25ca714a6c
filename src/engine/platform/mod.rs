//! The engines only one operating system has. Linux's half: vsync, pvsync and pvsync2
//! (readv, preadv, preadv2), io_uring, libaio (native AIO), posixaio, mmap, splice, e4defrag,
//! net and netsplice. Windows' half: windowsaio (overlapped ReadFile/WriteFile on an I/O
//! completion port, ReadFileScatter/WriteFileGather for `numpages`). A job that names another system's engine is
//! refused when its plan is made ([`has`]), naming the engines the build has. Both halves
//! offer the same four functions: [`has`], [`with_engine`], [`calls`] and [`probe`]; the
//! engines both systems have (psync, sync, the file operations, null, …) are the parent
//! module's.

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
pub use linux::*;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::*;

use super::Kind;

/// Linux's own engines.
pub const LINUX_KINDS: [Kind; 11] = [
    Kind::Vsync,
    Kind::Pvsync,
    Kind::Pvsync2,
    Kind::IoUring,
    Kind::Libaio,
    Kind::Posixaio,
    Kind::Mmap,
    Kind::Splice,
    Kind::E4defrag,
    Kind::Net,
    Kind::Netsplice,
];

/// What windowsaio does per I/O, in words (both builds describe it: a plan names it).
pub const WINDOWSAIO: &str = "ReadFile/WriteFile (overlapped, on an I/O completion port)";
/// The same with `numpages` above 1.
pub const WINDOWSAIO_SG: &str = "ReadFileScatter/WriteFileGather (overlapped, on an I/O \
                                 completion port), each page cut into whole system pages,";

/// Windows' own engines.
pub const WINDOWS_KINDS: [Kind; 1] = [Kind::Windowsaio];
