//! Windows' half of the platform: the Win32 API (windows-sys) for the host's facts, thread
//! and process times, console control events, and the file and I/O calls (`sys`) the file
//! layer and the engines make, under the names Linux's half gives them.

pub mod cpu;
pub mod host;
pub mod process;
pub mod signals;
pub mod sys;
mod wide;

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

/// The device that discards what is written to it.
pub const NULL_DEVICE: &str = "NUL";
