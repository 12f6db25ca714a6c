//! Page faults are not replayed on Windows: a trace's faults are Linux's, on files mapped as
//! Linux maps them, and a replay here keeps their time as it was recorded.

use std::io;

use crate::platform::fd::BorrowedFd;

/// Why this system cannot replay page faults.
pub const NO_PAGE_FAULTS: Option<&str> = Some("page faults are not replayed on Windows");

/// Never made here (`new` says Unsupported).
pub struct Mapped(());

impl Mapped {
    pub fn new(_fd: BorrowedFd<'_>, _len: u64) -> io::Result<Mapped> {
        Err(io::ErrorKind::Unsupported.into())
    }

    pub fn fault_in(&self, _offset: u64) -> io::Result<()> {
        Err(io::ErrorKind::Unsupported.into())
    }

    pub fn advise(&self, _range: (u64, u64), _advice: u32) -> io::Result<()> {
        Err(io::ErrorKind::Unsupported.into())
    }
}

/// Never done here (Unsupported): a populated mapping's read stays in the replay as recorded.
pub fn populate(_fd: BorrowedFd<'_>, _offset: u64, _len: u64) -> io::Result<()> {
    Err(io::ErrorKind::Unsupported.into())
}
