//! A directory's names on Windows (FindFirstFile/FindNextFile), as rustix's `Dir` reads them.

use std::ffi::OsString;

use windows_sys::Win32::Foundation::{FALSE, INVALID_HANDLE_VALUE};
use windows_sys::Win32::Storage::FileSystem::{
    FindClose, FindFirstFileW, FindNextFileW, WIN32_FIND_DATAW,
};

use super::io::{Errno, Result};
use super::path;
use crate::platform::fd::AsFd;
use crate::platform::windows::wide::wide;

/// A directory's entries (FindFirstFile/FindNextFile over `dir\*`).
pub struct Dir {
    names: std::vec::IntoIter<OsString>,
}

/// One entry of a [`Dir`].
pub struct DirEntry {
    name: OsString,
}

impl DirEntry {
    /// The entry's name.
    pub fn file_name(&self) -> &std::ffi::OsStr {
        &self.name
    }
}

impl Dir {
    /// Reads the names in the directory `fd` is open to.
    pub fn read_from(fd: impl AsFd) -> Result<Dir> {
        let mut pattern = path::of(fd.as_fd())?.into_os_string();
        pattern.push("\\*");
        let w = wide(&pattern);
        // SAFETY: WIN32_FIND_DATAW is plain data the calls fill in.
        let mut data: WIN32_FIND_DATAW = unsafe { std::mem::zeroed() };
        // SAFETY: a NUL-terminated pattern and a writable find-data struct.
        let h = unsafe { FindFirstFileW(w.as_ptr(), &mut data) };
        if h == INVALID_HANDLE_VALUE {
            return Err(Errno::last());
        }
        let mut names = Vec::new();
        loop {
            let n = data.cFileName;
            let end = n.iter().position(|&c| c == 0).unwrap_or(n.len());
            names.push(std::os::windows::ffi::OsStringExt::from_wide(&n[..end]));
            // SAFETY: the search handle FindFirstFileW gave and a writable struct.
            if unsafe { FindNextFileW(h, &mut data) } == FALSE {
                break;
            }
        }
        // SAFETY: the search handle, closed once.
        unsafe { FindClose(h) };
        Ok(Dir {
            names: names.into_iter(),
        })
    }
}

impl Iterator for Dir {
    type Item = Result<DirEntry>;
    fn next(&mut self) -> Option<Result<DirEntry>> {
        self.names.next().map(|name| Ok(DirEntry { name }))
    }
}
