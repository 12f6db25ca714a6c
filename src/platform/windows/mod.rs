//! Windows' half of the platform: the Win32 API (windows-sys) for the host's facts, thread
//! and process times, console control events, and the file and I/O calls (`sys`) the file
//! layer and the engines make, under the names Linux's half gives them.

pub mod aio;
pub mod code;
pub mod cpu;
pub mod disks;
pub mod host;
pub mod pages;
pub mod process;
pub mod signals;
pub mod sys;
#[cfg(test)]
pub mod testing;
mod volume;
mod wide;

/// The errno (Linux's numbering, `platform::abi::errno`) a Win32 error code stands for, so
/// fio's error names (`ignore_error`, `continue_on_error`) and iogauge's own handling of
/// ENOSPC, EINVAL and the like mean the same on both systems; a code with no counterpart is
/// kept as it is.
pub fn errno_from_os(code: i32) -> i32 {
    use crate::platform::abi::errno::*;
    match code as u32 {
        1 | 50 => EOPNOTSUPP,
        2 | 3 | 15 | 161 => ENOENT,
        5 | 32 | 33 | 1224 => EACCES,
        6 => EBADF,
        8 | 14 => ENOMEM,
        17 => EXDEV,
        19 => EROFS,
        23 | 1117 | 483 => EIO,
        38 | 1129 => ENXIO,
        80 | 183 => EEXIST,
        87 | 1784 => EINVAL,
        109 | 232 => EPIPE,
        112 | 39 => ENOSPC,
        121 | 1460 => ETIMEDOUT,
        170 => EBUSY,
        267 => ENOTDIR,
        145 => ENOTEMPTY,
        995 => ECANCELED,
        1295 => EDQUOT,
        1921 => ELOOP,
        c => c as i32,
    }
}

/// An OS error that stands for `errno` (Linux's numbering): the Win32 code
/// [`errno_from_os`] takes back to it, so the message is Windows' own and the errno is kept.
pub fn os_error(errno: i32) -> std::io::Error {
    use crate::platform::abi::errno::*;
    let code = match errno {
        ENOENT => 2,
        EACCES | EPERM => 5,
        EBADF => 6,
        ENOMEM => 8,
        EIO => 1117,
        EEXIST => 80,
        EINVAL => 87,
        ENOSPC => 112,
        EBUSY => 170,
        ETIMEDOUT => 1460,
        ECANCELED => 995,
        EDQUOT => 1295,
        EOPNOTSUPP => 50,
        e => return std::io::Error::other(format!("errno {e}")),
    };
    std::io::Error::from_raw_os_error(code)
}

/// Descriptors: a HANDLE on Windows, under the names Linux's half gives its file descriptors,
/// so the file layer and the engines name one type on both.
pub mod fd {
    use std::os::windows::io::{AsHandle, AsRawHandle, FromRawHandle, IntoRawHandle};
    pub use std::os::windows::io::{
        BorrowedHandle as BorrowedFd, OwnedHandle as OwnedFd, RawHandle as RawFd,
    };

    /// A handle borrowed from what holds it (`AsFd` on Linux).
    pub trait AsFd {
        fn as_fd(&self) -> BorrowedFd<'_>;
    }

    impl<T: AsHandle + ?Sized> AsFd for T {
        fn as_fd(&self) -> BorrowedFd<'_> {
            self.as_handle()
        }
    }

    /// A handle's raw value.
    pub trait AsRawFd {
        fn as_raw_fd(&self) -> RawFd;
    }

    impl<T: AsRawHandle + ?Sized> AsRawFd for T {
        fn as_raw_fd(&self) -> RawFd {
            self.as_raw_handle()
        }
    }

    /// Owning a raw handle.
    pub trait FromRawFd {
        /// # Safety
        /// `fd` must be an open handle that nothing else will close.
        // SAFETY: the contract above is the caller's.
        unsafe fn from_raw_fd(fd: RawFd) -> Self;
    }

    impl<T: FromRawHandle> FromRawFd for T {
        // SAFETY: the trait's contract, the caller's.
        unsafe fn from_raw_fd(fd: RawFd) -> Self {
            // SAFETY: the caller's promise, passed on.
            unsafe { T::from_raw_handle(fd) }
        }
    }

    /// Giving up ownership of a handle.
    pub trait IntoRawFd {
        fn into_raw_fd(self) -> RawFd;
    }

    impl<T: IntoRawHandle> IntoRawFd for T {
        fn into_raw_fd(self) -> RawFd {
            self.into_raw_handle()
        }
    }
}

/// Whether paths start with drive letters (`C:\`), as the Windows tools' command lines name them.
pub const DRIVE_LETTERS: bool = true;

/// Why a target has no device whose counters iogauge reads (IOCTL_DISK_PERFORMANCE), as a
/// warning says it, and in short for the report's device line.
pub const NO_DEVICE_WHY: &str = "on a volume whose I/O counters cannot be read (a network share, \
     or a volume whose driver keeps none)";
pub const NO_DEVICE_SHORT: &str = "no counters for its volume";

/// The device that discards what is written to it.
pub const NULL_DEVICE: &str = "NUL";
