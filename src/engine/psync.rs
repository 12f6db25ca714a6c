//! `psync`: one pread(2)/pwrite(2) per I/O, the file position untouched. fio's default engine
//! and ours.

use std::io;
use std::os::fd::OwnedFd;

use super::Engine;
use crate::spec::workload::Dir;

pub struct Psync {
    files: Vec<OwnedFd>,
}

impl Psync {
    pub fn new(files: Vec<OwnedFd>) -> Self {
        Psync { files }
    }
}

impl Engine for Psync {
    #[inline]
    fn submit(&mut self, dir: Dir, file: usize, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let fd = &self.files[file];
        let n = match dir {
            Dir::Read => rustix::io::pread(fd, buf, offset)?,
            Dir::Write => rustix::io::pwrite(fd, buf, offset)?,
        };
        Ok(n)
    }

    fn fsync(&mut self, file: usize) -> io::Result<()> {
        Ok(rustix::fs::fsync(&self.files[file])?)
    }
}
