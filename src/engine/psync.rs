//! `psync`: one pread(2)/pwrite(2) per I/O, the file position untouched. fio's default engine
//! and ours.

use crate::platform::fd::{AsFd, OwnedFd};
use std::io;

use super::Dir;
use super::trim::Trimmer;
use super::{Engine, IoUnit, Queued, done};
use super::{FlushCall, flush_fd};

pub struct Psync {
    files: Vec<OwnedFd>,
    trims: Trimmer,
}

impl Psync {
    pub fn new(files: Vec<OwnedFd>) -> Self {
        let trims = Trimmer::new(files.len());
        Psync { files, trims }
    }
}

impl Engine for Psync {
    #[inline]
    fn queue(&mut self, _: u32, u: &mut IoUnit) -> Queued {
        let fd = &self.files[u.file];
        let offset = u.next_offset();
        done(match u.dir {
            Dir::Read => crate::platform::sys::io::pread(fd, u.rest_mut(), offset),
            Dir::Write => crate::platform::sys::io::pwrite(fd, u.rest_mut(), offset),
            Dir::Trim => return self.trims.unit(&self.files, u),
        })
    }

    fn descriptor(&self, file: usize) -> Option<crate::platform::fd::BorrowedFd<'_>> {
        self.files.get(file).map(|f| f.as_fd())
    }

    fn flush(&mut self, file: usize, call: FlushCall) -> io::Result<()> {
        flush_fd(self.files[file].as_fd(), call)
    }
}
