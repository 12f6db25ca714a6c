//! fio's space engines, which move no data but the file system's allocation, as fio's:
//! `falloc` makes each I/O a fallocate(2) of its range (a read: allocate, keeping the size; a
//! write: allocate, extending the file; a trim: punch a hole), and `ftruncate` makes each
//! write an ftruncate(2) to its offset (a read is EINVAL, as fio's). Each counts its I/O's
//! bytes as moved, as fio counts them: what is measured is the allocator, not a transfer.

use crate::platform::fd::{AsFd, OwnedFd};
use std::io;

use crate::platform::sys::fs::FallocateFlags;

use super::{Dir, Engine, FlushCall, IoUnit, Queued, flush_fd};

/// `falloc` (`TRUNCATE` false) or `ftruncate` (true).
pub struct Space<const TRUNCATE: bool> {
    files: Vec<OwnedFd>,
}

impl<const TRUNCATE: bool> Space<TRUNCATE> {
    pub fn new(files: Vec<OwnedFd>) -> Self {
        Space { files }
    }

    fn call(&self, u: &IoUnit) -> io::Result<usize> {
        let fd = &self.files[u.file];
        let (offset, len) = (u.next_offset(), (u.len() - u.done) as u64);
        if TRUNCATE {
            if u.dir != Dir::Write {
                return Err(crate::platform::os_error(
                    crate::platform::abi::errno::EINVAL,
                ));
            }
            crate::platform::sys::fs::ftruncate(fd, offset)?;
        } else {
            let flags = match u.dir {
                Dir::Read => FallocateFlags::KEEP_SIZE,
                Dir::Write => FallocateFlags::empty(),
                Dir::Trim => FallocateFlags::PUNCH_HOLE | FallocateFlags::KEEP_SIZE,
            };
            crate::platform::sys::fs::fallocate(fd, flags, offset, len)?;
        }
        Ok(len as usize)
    }
}

impl<const TRUNCATE: bool> Engine for Space<TRUNCATE> {
    #[inline]
    fn queue(&mut self, _: u32, u: &mut IoUnit) -> Queued {
        Queued::Done(self.call(u))
    }

    fn descriptor(&self, file: usize) -> Option<crate::platform::fd::BorrowedFd<'_>> {
        self.files.get(file).map(|f| f.as_fd())
    }

    fn flush(&mut self, file: usize, call: FlushCall) -> io::Result<()> {
        flush_fd(self.files[file].as_fd(), call)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// falloc: a write allocates and extends, a read allocates without extending, a trim
    /// punches the hole; ftruncate: a write sets the size to its offset, a read is EINVAL.
    #[test]
    fn each_direction_does_what_fio_makes_it_do() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        let f = std::fs::File::create(&p).unwrap();
        let mut e = Space::<false>::new(vec![OwnedFd::from(f)]);
        let meta = || std::fs::metadata(&p).unwrap();
        let blocks = || crate::platform::testing::blocks(&p);
        assert_eq!(
            e.queue(0, &mut IoUnit::one(Dir::Write, 0, 65536))
                .result()
                .unwrap(),
            65536
        );
        assert_eq!(meta().len(), 65536);
        if blocks() == 0 {
            eprintln!("skipped: this file system does not allocate on fallocate");
            return;
        }
        assert!(blocks() * 512 >= 65536);
        match e
            .queue(0, &mut IoUnit::one(Dir::Read, 1 << 20, 65536))
            .result()
        {
            Err(e) if crate::engine::errno(&e) == Some(crate::platform::abi::errno::EOPNOTSUPP) => {
                eprintln!("skipped: this system cannot reserve space without growing a file ({e})");
                return;
            }
            got => assert_eq!(got.unwrap(), 65536),
        }
        assert_eq!(meta().len(), 65536, "KEEP_SIZE");
        let before = blocks();
        e.queue(0, &mut IoUnit::one(Dir::Trim, 0, 65536))
            .result()
            .unwrap();
        assert!(blocks() < before, "hole punched");

        let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
        let mut t = Space::<true>::new(vec![OwnedFd::from(f)]);
        assert_eq!(
            t.queue(0, &mut IoUnit::one(Dir::Write, 12288, 4096))
                .result()
                .unwrap(),
            4096
        );
        assert_eq!(meta().len(), 12288);
        let err = t
            .queue(0, &mut IoUnit::one(Dir::Read, 0, 4096))
            .result()
            .unwrap_err();
        assert_eq!(
            crate::engine::errno(&err),
            Some(crate::platform::abi::errno::EINVAL)
        );
    }
}
