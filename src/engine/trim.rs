//! Trims: what fio's `rw=trim` family issues. On a block device a discard (BLKDISCARD, as
//! fio); on a regular file, where fio's BLKDISCARD fails with ENOTTY, a punched hole
//! (fallocate PUNCH_HOLE|KEEP_SIZE): the file system's own way of giving the blocks back,
//! which it passes on to the device as discards when mounted to.

use crate::platform::fd::{AsFd, BorrowedFd, OwnedFd};
use std::io;

use crate::platform::sys::fs::{FallocateFlags, FileType};

/// What each file is, learnt at its first trim (one fstat per file, not per trim).
#[derive(Debug, Default)]
pub struct Trimmer {
    block: Vec<Option<bool>>,
}

impl Trimmer {
    pub fn new(files: usize) -> Self {
        Trimmer {
            block: vec![None; files],
        }
    }

    /// Trims the rest of `u` (a trim) on its file in `files`: done inside the call, for every
    /// engine (fio's io_uring engine does its trims the same way).
    #[cold]
    pub fn unit(&mut self, files: &[OwnedFd], u: &super::IoUnit) -> super::Queued {
        let fd = files[u.file].as_fd();
        super::Queued::Done(self.trim(u.file, fd, u.next_offset(), u.len() - u.done))
    }

    /// Trims `len` bytes of file `file` (open as `fd`) at `offset`; the bytes trimmed.
    pub fn trim(
        &mut self,
        file: usize,
        fd: BorrowedFd<'_>,
        offset: u64,
        len: usize,
    ) -> io::Result<usize> {
        let block = match self.block[file] {
            Some(b) => b,
            None => {
                let st = crate::platform::sys::fs::fstat(fd)?;
                let b = FileType::from_raw_mode(st.st_mode) == FileType::BlockDevice;
                self.block[file] = Some(b);
                b
            }
        };
        if block {
            super::platform::discard(fd, offset, len as u64)?;
        } else {
            let flags = FallocateFlags::PUNCH_HOLE | FallocateFlags::KEEP_SIZE;
            crate::platform::sys::fs::fallocate(fd, flags, offset, len as u64)?;
        }
        Ok(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_trim_of_a_file_punches_a_hole_of_exactly_its_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let mut f = std::fs::File::create(&path).unwrap();
        f.write_all(&vec![0xA5u8; 256 * 1024]).unwrap();
        f.sync_all().unwrap();
        let before = crate::platform::testing::blocks(&path);
        let mut t = Trimmer::new(1);
        match t.trim(0, f.as_fd(), 64 * 1024, 128 * 1024) {
            Ok(n) => assert_eq!(n, 128 * 1024),
            Err(e) if crate::engine::errno(&e) == Some(crate::platform::abi::errno::EOPNOTSUPP) => {
                eprintln!("skipped: the temp dir's file system cannot punch holes ({e})");
                return;
            }
            Err(e) => panic!("trim: {e}"),
        }
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(meta.len(), 256 * 1024, "KEEP_SIZE: the length stays");
        assert_eq!(
            before - crate::platform::testing::blocks(&path),
            128 * 1024 / 512,
            "the hole's blocks are freed"
        );
        let data = std::fs::read(&path).unwrap();
        assert!(data[..64 * 1024].iter().all(|&b| b == 0xA5));
        assert!(data[64 * 1024..192 * 1024].iter().all(|&b| b == 0));
        assert!(data[192 * 1024..].iter().all(|&b| b == 0xA5));
    }
}
