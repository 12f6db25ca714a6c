//! fio's `splice` engine: data moved through a pipe with splice(2) and vmsplice(2) instead of
//! read/write, in 64 KiB steps as fio's (a pipe's default capacity). A read splices the
//! file's pages into the pipe, then vmsplices them from the pipe into the unit's buffer; a
//! write vmsplices the buffer into the pipe, then splices the pipe into the file. The pipe is
//! drained at the end of every step, so nothing of one I/O is left for the next.

use std::io;
use std::os::fd::{AsFd, OwnedFd};

use rustix::pipe::{IoSliceRaw, SpliceFlags};

use crate::engine::trim::Trimmer;
use crate::engine::{Dir, Engine, FlushCall, IoUnit, Queued, flush_fd};

/// What each I/O is, for the report's engine line.
pub const CALLS: &str = "splice(2) between the file and a pipe, vmsplice(2) between the pipe and the buffer, 64 KiB \
     a step";

/// Bytes per splice step (fio's SPLICE_DEF_SIZE, a pipe's default capacity).
const STEP: usize = 64 << 10;

pub struct Splice {
    files: Vec<OwnedFd>,
    trims: Trimmer,
    /// (read end, write end).
    pipe: (OwnedFd, OwnedFd),
}

impl Splice {
    pub fn new(files: Vec<OwnedFd>) -> io::Result<Self> {
        let trims = Trimmer::new(files.len());
        Ok(Splice {
            files,
            trims,
            pipe: rustix::pipe::pipe()?,
        })
    }

    /// The file's bytes at `offset` into `buf` through the pipe: bytes moved (fewer at the
    /// file's end).
    fn read(&mut self, file: usize, mut offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let (r, w) = &self.pipe;
        let fd = &self.files[file];
        let mut done = 0;
        while done < buf.len() {
            let step = (buf.len() - done).min(STEP);
            let more = if done + step < buf.len() {
                SpliceFlags::MORE
            } else {
                SpliceFlags::empty()
            };
            let n = rustix::pipe::splice(fd, Some(&mut offset), w, None, step, more)?;
            if n == 0 {
                break;
            }
            let mut left = n;
            while left > 0 {
                let to = &mut buf[done..done + left];
                // SAFETY: `r` is the pipe's read end: vmsplice copies from the pipe into
                // `to`, the unit's own buffer, which nothing else uses meanwhile.
                let got = unsafe {
                    rustix::pipe::vmsplice(
                        r,
                        &[IoSliceRaw::from_slice_mut(to)],
                        SpliceFlags::empty(),
                    )
                }?;
                if got == 0 {
                    return Err(io::Error::from_raw_os_error(libc::ENODATA));
                }
                done += got;
                left -= got;
            }
        }
        Ok(done)
    }

    /// `buf` into the file at `offset` through the pipe.
    fn write(&mut self, file: usize, mut offset: u64, buf: &[u8]) -> io::Result<usize> {
        let (r, w) = &self.pipe;
        let fd = &self.files[file];
        let mut done = 0;
        while done < buf.len() {
            let step = (buf.len() - done).min(STEP);
            let from = &buf[done..done + step];
            // SAFETY: `w` is the pipe's write end: vmsplice only reads `from`, which stays
            // unchanged until the splice below has drained the pipe into the file.
            let n = unsafe {
                rustix::pipe::vmsplice(w, &[IoSliceRaw::from_slice(from)], SpliceFlags::NONBLOCK)
            }?;
            let mut left = n;
            while left > 0 {
                let m = rustix::pipe::splice(
                    r,
                    None,
                    fd,
                    Some(&mut offset),
                    left,
                    SpliceFlags::empty(),
                )?;
                if m == 0 {
                    return Err(io::Error::from_raw_os_error(libc::EIO));
                }
                left -= m;
            }
            done += n;
        }
        Ok(done)
    }
}

impl Engine for Splice {
    fn queue(&mut self, _: u32, u: &mut IoUnit) -> Queued {
        let (dir, file, offset) = (u.dir, u.file, u.next_offset());
        let r = match dir {
            Dir::Read => self.read(file, offset, u.rest_mut()),
            Dir::Write => {
                let buf = u.rest_mut();
                self.write(file, offset, buf)
            }
            Dir::Trim => return self.trims.unit(&self.files, u),
        };
        Queued::Done(r.map_err(|e| match e.raw_os_error() {
            Some(libc::EINVAL) => io::Error::new(
                e.kind(),
                format!("{e}: splice does not work on this file system (fio says so too)"),
            ),
            _ => e,
        }))
    }

    fn descriptor(&self, file: usize) -> Option<std::os::fd::BorrowedFd<'_>> {
        self.files.get(file).map(|f| f.as_fd())
    }

    fn flush(&mut self, file: usize, call: FlushCall) -> io::Result<()> {
        flush_fd(self.files[file].as_fd(), call)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(dir: Dir, offset: u64, len: usize) -> IoUnit {
        IoUnit::one(dir, offset, len)
    }

    #[test]
    fn reads_and_writes_go_through_the_pipe() {
        let data: Vec<u8> = (0..(1u32 << 20)).map(|i| (i % 249) as u8).collect();
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), &data).unwrap();
        let fd: OwnedFd = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(f.path())
            .unwrap()
            .into();
        let mut e = Splice::new(vec![fd]).unwrap();
        // 192 KiB: three steps through the pipe.
        let mut u = unit(Dir::Read, 4096, 192 << 10);
        assert!(matches!(e.queue(0, &mut u), Queued::Done(Ok(n)) if n == 192 << 10));
        assert_eq!(u.rest_mut(), &data[4096..4096 + (192 << 10)]);
        let mut w = unit(Dir::Write, 65536, 100_000);
        w.rest_mut().fill(0x5A);
        assert!(matches!(e.queue(0, &mut w), Queued::Done(Ok(100_000))));
        let back = std::fs::read(f.path()).unwrap();
        assert!(back[65536..165_536].iter().all(|&b| b == 0x5A));
        assert_eq!(back[..65536], data[..65536]);
        assert_eq!(back[165_536..], data[165_536..]);
        // At the end of the file: what is there.
        let mut u = unit(Dir::Read, (1 << 20) - 1000, 4096);
        assert!(matches!(e.queue(0, &mut u), Queued::Done(Ok(1000))));
    }
}
