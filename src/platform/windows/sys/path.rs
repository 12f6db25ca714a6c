//! Paths for the `*at` calls: a directory handle's final path with a name joined to it, as
//! the UTF-16 the `W` calls take.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use windows_sys::Win32::Storage::FileSystem::{FILE_NAME_NORMALIZED, GetFinalPathNameByHandleW};

use super::io::{Errno, Result, raw};
use crate::platform::fd::{AsFd, AsRawFd, BorrowedFd};
use crate::platform::windows::wide::wide;

/// The raw value standing for "the current directory" (Linux's AT_FDCWD): never a handle.
pub(super) const CWD_RAW: isize = -100;

/// The path `fd` is open to (GetFinalPathNameByHandle: `\\?\C:\dir\file`); the current
/// directory for [`super::fs::CWD`].
pub(super) fn of(fd: BorrowedFd<'_>) -> Result<PathBuf> {
    if fd.as_raw_fd() as isize == CWD_RAW {
        return std::env::current_dir()
            .map_err(|e| Errno::from_io_error(&e).unwrap_or(Errno::INVAL));
    }
    let mut buf = vec![0u16; 1024];
    loop {
        // SAFETY: `buf` holds `len` UTF-16 units; the call writes at most that many.
        let n = unsafe {
            GetFinalPathNameByHandleW(
                raw(fd),
                buf.as_mut_ptr(),
                buf.len() as u32,
                FILE_NAME_NORMALIZED,
            )
        } as usize;
        match n {
            0 => return Err(Errno::last()),
            n if n >= buf.len() => buf.resize(n + 1, 0),
            n => {
                use std::os::windows::ffi::OsStringExt;
                return Ok(PathBuf::from(std::ffi::OsString::from_wide(&buf[..n])));
            }
        }
    }
}

/// `name` in the directory `dir` is open to, as a NUL-terminated UTF-16 path. An absolute
/// `name` stands alone, as with openat.
pub(super) fn at(dir: impl AsFd, name: impl super::PathArg) -> Result<Vec<u16>> {
    let name = name.to_path();
    let name: &Path = &name;
    if name.is_absolute() {
        return Ok(wide(name.as_os_str()));
    }
    let base = of(dir.as_fd())?;
    let joined = match name.as_os_str() == OsStr::new(".") {
        true => base,
        false => base.join(name),
    };
    Ok(wide(joined.as_os_str()))
}
