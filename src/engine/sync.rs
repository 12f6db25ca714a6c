//! `sync`: read(2)/write(2) at the file position, with lseek(2) only when the next offset is not
//! where the previous I/O left it — as fio's sync engine, and as applications that stream.

use std::io;
use std::os::fd::OwnedFd;

use super::Engine;
use crate::spec::workload::Dir;

pub struct Sync {
    files: Vec<OwnedFd>,
    /// Where each file's position is known to be (`None`: unknown, seek first).
    pos: Vec<Option<u64>>,
}

impl Sync {
    pub fn new(files: Vec<OwnedFd>) -> Self {
        let pos = vec![None; files.len()];
        Sync { files, pos }
    }
}

impl Engine for Sync {
    #[inline]
    fn submit(&mut self, dir: Dir, file: usize, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let fd = &self.files[file];
        if self.pos[file] != Some(offset) {
            self.pos[file] = None;
            rustix::fs::seek(fd, rustix::fs::SeekFrom::Start(offset))?;
        }
        let n = match dir {
            Dir::Read => rustix::io::read(fd, buf)?,
            Dir::Write => rustix::io::write(fd, buf)?,
        };
        self.pos[file] = Some(offset + n as u64);
        Ok(n)
    }

    fn fsync(&mut self, file: usize) -> io::Result<()> {
        Ok(rustix::fs::fsync(&self.files[file])?)
    }
}
