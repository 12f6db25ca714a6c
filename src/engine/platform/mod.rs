//! The engines only one operating system has. Linux's half: vsync, pvsync and pvsync2
//! (readv, preadv, preadv2), io_uring, libaio (native AIO), posixaio, mmap, splice, e4defrag,
//! net and netsplice. Windows' half has none of these: a job that names one
//! is refused when its plan is made ([`has`]), naming the engines the build has. Both halves
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

/// The engines this module decides about: only one operating system has each.
pub const PLATFORM_KINDS: [Kind; 11] = [
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
