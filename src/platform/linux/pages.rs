//! A file mapped read-only whose pages are read in as a program's page faults read them: what
//! a replay does for the major page faults a trace holds (I/O through mappings, which no call
//! shows).

use std::io;

use crate::platform::fd::{AsRawFd, BorrowedFd};

/// Why a system cannot replay page faults (None: it can, where the kernel has
/// MADV_POPULATE_READ, Linux 5.14).
pub const NO_PAGE_FAULTS: Option<&str> = None;

/// `len` bytes of a file mapped read-only and shared, from its start (unmapped when dropped).
pub struct Mapped {
    addr: *mut libc::c_void,
    len: usize,
}

impl Mapped {
    /// Maps `len` bytes (at least a page) of `fd`'s file, which may reach past its end (a page
    /// there is not read in: `fault_in` says EFAULT).
    pub fn new(fd: BorrowedFd<'_>, len: u64) -> io::Result<Mapped> {
        Mapped::map(fd, (0, len), 0)
    }

    /// Maps `len` bytes (at least a page) of `fd`'s file from `offset` (a multiple of the
    /// page size), read-only and shared, with mmap's `flags` added.
    fn map(
        fd: BorrowedFd<'_>,
        (offset, len): (u64, u64),
        flags: libc::c_int,
    ) -> io::Result<Mapped> {
        let invalid = |_| io::Error::from(io::ErrorKind::InvalidInput);
        let len = usize::try_from(len.max(1)).map_err(invalid)?;
        let offset = libc::off_t::try_from(offset).map_err(invalid)?;
        // SAFETY: a new shared read-only mapping of an open descriptor, at an address the
        // kernel picks; checked below.
        let addr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED | flags,
                fd.as_raw_fd(),
                offset,
            )
        };
        if addr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Mapped { addr, len })
    }

    /// Reads in the page holding byte `offset` of the file, as a read fault on it does
    /// (MADV_POPULATE_READ: the kernel's fault path, its read-around of the pages near it
    /// included, and no signal where the page lies past the file's end). Errors: EFAULT past
    /// the file's end or past the mapping, EINVAL where the kernel has no MADV_POPULATE_READ
    /// (before 5.14).
    pub fn fault_in(&self, offset: u64) -> io::Result<()> {
        let page = page_size() as u64;
        let at = offset - offset % page;
        if at >= self.len as u64 {
            return Err(io::Error::from_raw_os_error(libc::EFAULT));
        }
        // SAFETY: a page-aligned page inside the mapping, which lives as long as `self`;
        // the advice reads it in and changes nothing the program holds.
        let rc = unsafe {
            libc::madvise(
                self.addr.cast::<u8>().add(at as usize).cast(),
                page as usize,
                libc::MADV_POPULATE_READ,
            )
        };
        checked(rc)
    }

    /// Gives the mapping's pages holding bytes `[offset, offset + len)` of the file madvise's
    /// `advice` (its number: 0 normal, 1 random, 2 sequential — how the kernel reads around a
    /// fault there —, 3 willneed: read them ahead at once); the part past the mapping is left
    /// out.
    pub fn advise(&self, (offset, len): (u64, u64), advice: u32) -> io::Result<()> {
        let page = page_size() as u64;
        let at = offset - offset % page;
        let end = offset.saturating_add(len).min(self.len as u64);
        if at >= end {
            return Ok(());
        }
        // SAFETY: a page-aligned range inside the mapping, which lives as long as `self`;
        // advice on how to read it around changes nothing the program holds.
        let rc = unsafe {
            libc::madvise(
                self.addr.cast::<u8>().add(at as usize).cast(),
                (end - at) as usize,
                advice as libc::c_int,
            )
        };
        checked(rc)
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        // SAFETY: the mapping `new` made, unmapped once.
        unsafe { libc::munmap(self.addr, self.len) };
    }
}

/// Maps `len` bytes of `fd`'s file from `offset` (a multiple of the page size) read-only with
/// MAP_POPULATE, which reads them in before the call returns — as a program's populated
/// mapping did — and unmaps them. A range past the file's end reads what lies within it.
pub fn populate(fd: BorrowedFd<'_>, offset: u64, len: u64) -> io::Result<()> {
    Mapped::map(fd, (offset, len), libc::MAP_POPULATE).map(drop)
}

/// madvise's result.
fn checked(rc: libc::c_int) -> io::Result<()> {
    match rc {
        0 => Ok(()),
        _ => Err(io::Error::last_os_error()),
    }
}

/// The system's page size.
fn page_size() -> usize {
    rustix::param::page_size()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::fd::AsFd;

    #[test]
    fn a_page_is_read_in_and_one_past_the_end_is_an_error_not_a_signal() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![7u8; 3 * 4096]).unwrap();
        let f = std::fs::File::open(&path).unwrap();
        // Mapped past the end: the fourth page lies outside the file.
        let m = Mapped::new(f.as_fd(), 8 * 4096).unwrap();
        match m.fault_in(2 * 4096 + 100) {
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                eprintln!("skipped: this kernel has no MADV_POPULATE_READ");
                return;
            }
            r => r.unwrap(),
        }
        let past = m.fault_in(3 * 4096).unwrap_err();
        assert_eq!(past.raw_os_error(), Some(libc::EFAULT));
        let outside = m.fault_in(8 * 4096).unwrap_err();
        assert_eq!(outside.raw_os_error(), Some(libc::EFAULT));
    }
}
