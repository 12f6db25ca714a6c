//! `sync`: read(2)/write(2) at the file position, with lseek(2) only when the next offset is not
//! where the previous I/O left it — as fio's sync engine, and as applications that stream.

use std::io;
use std::os::fd::{AsFd, OwnedFd};

use super::Dir;
use super::trim::Trimmer;
use super::{Engine, IoUnit, Queued};
use super::{FlushCall, flush_fd};

pub struct Sync {
    files: Vec<OwnedFd>,
    /// Where each file's position is known to be (`None`: unknown, seek first).
    pos: Vec<Option<u64>>,
    trims: Trimmer,
}

impl Sync {
    pub fn new(files: Vec<OwnedFd>) -> Self {
        let pos = vec![None; files.len()];
        let trims = Trimmer::new(files.len());
        Sync { files, pos, trims }
    }

    fn io(&mut self, u: &mut IoUnit) -> io::Result<usize> {
        let (file, offset) = (u.file, u.next_offset());
        let fd = &self.files[file];
        if self.pos[file] != Some(offset) {
            self.pos[file] = None;
            rustix::fs::seek(fd, rustix::fs::SeekFrom::Start(offset))?;
        }
        let n = match u.dir {
            Dir::Read => rustix::io::read(fd, u.rest_mut())?,
            Dir::Write => rustix::io::write(fd, u.rest_mut())?,
            Dir::Trim => unreachable!("trims are issued by queue"),
        };
        self.pos[file] = Some(offset + n as u64);
        Ok(n)
    }
}

impl Engine for Sync {
    #[inline]
    fn queue(&mut self, _: u32, u: &mut IoUnit) -> Queued {
        if u.dir == Dir::Trim {
            // A trim leaves the file position where it was.
            return self.trims.unit(&self.files, u);
        }
        Queued::Done(self.io(u))
    }

    fn flush(&mut self, file: usize, call: FlushCall) -> io::Result<()> {
        flush_fd(self.files[file].as_fd(), call)
    }
}
