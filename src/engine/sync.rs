//! `sync`: read(2)/write(2) at the file position, with lseek(2) only when the next offset is not
//! where the previous I/O left it — as fio's sync engine, and as applications that stream.
//! `vsync`: the same with readv(2)/writev(2) over the unit's page buffers (fio's vsync, one
//! call per I/O: fio's coalescing of adjacent queued I/Os is not done, iodepth being 1).

use crate::platform::fd::{AsFd, OwnedFd};
use std::io;

use super::Dir;
use super::trim::Trimmer;
use super::{Engine, IoUnit, Queued};
use super::{FlushCall, flush_fd};

/// `VECTORED`: readv/writev over every page buffer (vsync) instead of read/write (sync).
pub struct Sync<const VECTORED: bool> {
    files: Vec<OwnedFd>,
    /// Where each file's position is known to be (`None`: unknown, seek first).
    pos: Vec<Option<u64>>,
    trims: Trimmer,
}

impl<const VECTORED: bool> Sync<VECTORED> {
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
            crate::platform::sys::fs::seek(fd, crate::platform::sys::fs::SeekFrom::Start(offset))?;
        }
        let n = match u.dir {
            _ if VECTORED => {
                let read = u.dir == Dir::Read;
                super::platform::readv_writev(fd.as_fd(), read, u.iovecs())?
            }
            Dir::Read => crate::platform::sys::io::read(fd, u.rest_mut())?,
            Dir::Write => crate::platform::sys::io::write(fd, u.rest_mut())?,
            Dir::Trim => unreachable!("trims are issued by queue"),
        };
        self.pos[file] = Some(offset + n as u64);
        Ok(n)
    }
}

impl<const VECTORED: bool> Engine for Sync<VECTORED> {
    #[inline]
    fn queue(&mut self, _: u32, u: &mut IoUnit) -> Queued {
        if u.dir == Dir::Trim {
            // A trim leaves the file position where it was.
            return self.trims.unit(&self.files, u);
        }
        Queued::Done(self.io(u))
    }

    fn descriptor(&self, file: usize) -> Option<crate::platform::fd::BorrowedFd<'_>> {
        self.files.get(file).map(|f| f.as_fd())
    }

    fn flush(&mut self, file: usize, call: FlushCall) -> io::Result<()> {
        flush_fd(self.files[file].as_fd(), call)
    }
}
