//! Reads, writes and errors on Windows, as rustix's `io` names them. An [`Errno`] holds a
//! Win32 error code (so an error's text is Windows' own), the codes that mean one POSIX error
//! folded into one (`ERROR_PATH_NOT_FOUND` is `NOENT` as `ERROR_FILE_NOT_FOUND` is).

use std::io;

use windows_sys::Win32::Foundation::{
    DUPLICATE_SAME_ACCESS, DuplicateHandle, ERROR_ACCESS_DENIED, ERROR_ALREADY_EXISTS,
    ERROR_BROKEN_PIPE, ERROR_BUSY, ERROR_CANT_RESOLVE_FILENAME, ERROR_DIR_NOT_EMPTY,
    ERROR_DIRECTORY, ERROR_DISK_FULL, ERROR_DISK_QUOTA_EXCEEDED, ERROR_FILE_EXISTS,
    ERROR_FILE_NOT_FOUND, ERROR_HANDLE_DISK_FULL, ERROR_HANDLE_EOF, ERROR_INVALID_PARAMETER,
    ERROR_IO_PENDING, ERROR_LOCK_VIOLATION, ERROR_MORE_DATA, ERROR_NO_DATA, ERROR_NOT_SUPPORTED,
    ERROR_OPERATION_ABORTED, ERROR_PATH_NOT_FOUND, ERROR_PIPE_NOT_CONNECTED,
    ERROR_SHARING_VIOLATION, FALSE, GetLastError, HANDLE,
};
use windows_sys::Win32::Storage::FileSystem::{ReadFile, WriteFile};
use windows_sys::Win32::System::IO::OVERLAPPED;
use windows_sys::Win32::System::Threading::GetCurrentProcess;

use crate::platform::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};

/// A failed call's error: a Win32 error code.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Errno(u32);

/// A call's outcome.
pub type Result<T> = std::result::Result<T, Errno>;

impl Errno {
    pub const PERM: Errno = Errno(ERROR_ACCESS_DENIED);
    pub const ACCESS: Errno = Errno(ERROR_ACCESS_DENIED);
    pub const NOENT: Errno = Errno(ERROR_FILE_NOT_FOUND);
    pub const EXIST: Errno = Errno(ERROR_FILE_EXISTS);
    /// A symbolic link or junction where none may be followed.
    pub const LOOP: Errno = Errno(ERROR_CANT_RESOLVE_FILENAME);
    pub const INVAL: Errno = Errno(ERROR_INVALID_PARAMETER);
    /// An I/O error of the device (ERROR_IO_DEVICE).
    pub const IO: Errno = Errno(1117);
    pub const INTR: Errno = Errno(ERROR_OPERATION_ABORTED);
    /// Would block: a lock held by another.
    pub const AGAIN: Errno = Errno(ERROR_LOCK_VIOLATION);
    pub const WOULDBLOCK: Errno = Errno(ERROR_LOCK_VIOLATION);
    /// A value too large for the buffer given.
    pub const RANGE: Errno = Errno(ERROR_MORE_DATA);
    pub const NOTDIR: Errno = Errno(ERROR_DIRECTORY);
    pub const NOTEMPTY: Errno = Errno(ERROR_DIR_NOT_EMPTY);
    pub const NOSPC: Errno = Errno(ERROR_DISK_FULL);
    pub const DQUOT: Errno = Errno(ERROR_DISK_QUOTA_EXCEEDED);
    pub const BUSY: Errno = Errno(ERROR_BUSY);
    pub const OPNOTSUPP: Errno = Errno(ERROR_NOT_SUPPORTED);
    pub const INPROGRESS: Errno = Errno(ERROR_IO_PENDING);
    pub const PIPE: Errno = Errno(ERROR_NO_DATA);
    /// A pipe with nothing at its other end (a FIFO without a reader, on Linux).
    pub const NXIO: Errno = Errno(ERROR_PIPE_NOT_CONNECTED);
    pub const CONNRESET: Errno = Errno(10054);

    /// The error the last Win32 call of this thread left, folded.
    pub fn last() -> Errno {
        // SAFETY: reads this thread's last-error value.
        Errno::from_win32(unsafe { GetLastError() })
    }

    /// A Win32 error code, the codes that mean one POSIX error folded into one.
    pub fn from_win32(code: u32) -> Errno {
        Errno(match code {
            ERROR_PATH_NOT_FOUND => ERROR_FILE_NOT_FOUND,
            ERROR_ALREADY_EXISTS => ERROR_FILE_EXISTS,
            ERROR_HANDLE_DISK_FULL => ERROR_DISK_FULL,
            ERROR_SHARING_VIOLATION => ERROR_BUSY,
            c => c,
        })
    }

    /// An error code as `io::Error::raw_os_error` gives it (a Win32 code).
    pub fn from_raw_os_error(code: i32) -> Errno {
        Errno::from_win32(code as u32)
    }

    pub fn raw_os_error(self) -> i32 {
        self.0 as i32
    }

    /// The error of `e`, if it came from the system.
    pub fn from_io_error(e: &io::Error) -> Option<Errno> {
        e.raw_os_error().map(Errno::from_raw_os_error)
    }
}

impl std::fmt::Debug for Errno {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Errno({}: {})", self.0, io::Error::from(*self))
    }
}

impl std::fmt::Display for Errno {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        io::Error::from(*self).fmt(f)
    }
}

impl std::error::Error for Errno {}

impl From<Errno> for io::Error {
    fn from(e: Errno) -> io::Error {
        io::Error::from_raw_os_error(e.0 as i32)
    }
}

/// A handle's raw value, as the Win32 calls take it.
pub(crate) fn raw(fd: impl AsFd) -> HANDLE {
    fd.as_fd().as_raw_fd() as HANDLE
}

fn at(offset: u64) -> OVERLAPPED {
    // SAFETY: OVERLAPPED is plain data; zero is its documented initial state.
    let mut o: OVERLAPPED = unsafe { std::mem::zeroed() };
    o.Anonymous.Anonymous.Offset = offset as u32;
    o.Anonymous.Anonymous.OffsetHigh = (offset >> 32) as u32;
    o
}

/// Reads into `buf` at `offset` (ReadFile with the offset in its OVERLAPPED, on a handle
/// opened for synchronous I/O); 0 at the end of the file.
pub fn pread(fd: impl AsFd, buf: &mut [u8], offset: u64) -> Result<usize> {
    let mut o = at(offset);
    let len = buf.len().min(u32::MAX as usize) as u32;
    let mut n = 0u32;
    // SAFETY: `buf` is writable for `len` bytes and outlives the synchronous call.
    let ok = unsafe { ReadFile(raw(fd), buf.as_mut_ptr(), len, &mut n, &mut o) };
    match ok {
        FALSE => match Errno::last() {
            Errno(ERROR_HANDLE_EOF) => Ok(0),
            e => Err(e),
        },
        _ => Ok(n as usize),
    }
}

/// Writes `buf` at `offset` (WriteFile with the offset in its OVERLAPPED).
pub fn pwrite(fd: impl AsFd, buf: &[u8], offset: u64) -> Result<usize> {
    let mut o = at(offset);
    let len = buf.len().min(u32::MAX as usize) as u32;
    let mut n = 0u32;
    // SAFETY: `buf` is readable for `len` bytes and outlives the synchronous call.
    match unsafe { WriteFile(raw(fd), buf.as_ptr(), len, &mut n, &mut o) } {
        FALSE => Err(Errno::last()),
        _ => Ok(n as usize),
    }
}

/// Reads into `buf` at the file's position; 0 at its end (or a pipe's writer gone).
pub fn read(fd: impl AsFd, buf: &mut [u8]) -> Result<usize> {
    let len = buf.len().min(u32::MAX as usize) as u32;
    let mut n = 0u32;
    // SAFETY: `buf` is writable for `len` bytes; no OVERLAPPED: the file's position is used.
    let ok = unsafe { ReadFile(raw(fd), buf.as_mut_ptr(), len, &mut n, std::ptr::null_mut()) };
    match ok {
        FALSE => match Errno::last() {
            Errno(ERROR_HANDLE_EOF | ERROR_BROKEN_PIPE) => Ok(0),
            e => Err(e),
        },
        _ => Ok(n as usize),
    }
}

/// Writes `buf` at the file's position.
pub fn write(fd: impl AsFd, buf: &[u8]) -> Result<usize> {
    let len = buf.len().min(u32::MAX as usize) as u32;
    let mut n = 0u32;
    // SAFETY: `buf` is readable for `len` bytes; no OVERLAPPED: the file's position is used.
    match unsafe { WriteFile(raw(fd), buf.as_ptr(), len, &mut n, std::ptr::null_mut()) } {
        FALSE => Err(Errno::last()),
        _ => Ok(n as usize),
    }
}

/// A second handle to what `fd` is open to (DuplicateHandle). Windows has no descriptor
/// numbers, so `_min` means nothing here.
pub fn fcntl_dupfd_cloexec(fd: impl AsFd, _min: i32) -> Result<OwnedFd> {
    let mut new: HANDLE = std::ptr::null_mut();
    // SAFETY: duplicates a handle this process holds into this process; `new` receives it.
    let ok = unsafe {
        let me = GetCurrentProcess();
        DuplicateHandle(me, raw(fd), me, &mut new, 0, FALSE, DUPLICATE_SAME_ACCESS)
    };
    match ok {
        FALSE => Err(Errno::last()),
        // SAFETY: a new handle of our own, closed by the OwnedFd.
        _ => Ok(unsafe { OwnedFd::from_raw_fd(new as _) }),
    }
}

flag_set! {
    /// preadv2/pwritev2's per-call flags: none exists on Windows; the type is here so the
    /// probes that ask for one compile and answer "not supported".
    ReadWriteFlags: u32 {}
}
