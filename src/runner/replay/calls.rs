//! The system call a replayed event makes on its descriptor: the read, write, sync,
//! allocation, truncation, advice or populated mapping the program made on its file, made on
//! the replay's copy.

use crate::platform::fd::{AsFd, BorrowedFd};
use crate::platform::sys::io::{Errno, Result};
use crate::trace::recording::{Event, Op};

/// Makes event `e`'s call on `fd` (`buf`: the thread's buffer, as large as its largest
/// call): what it moved, or 0.
pub(super) fn on_descriptor(e: &Event, fd: BorrowedFd<'_>, buf: &mut [u8]) -> Result<i64> {
    let len = (e.len as usize).min(buf.len());
    match e.op {
        Op::Read => {
            crate::platform::sys::io::pread(fd, &mut buf[..len], e.offset).map(|n| n as i64)
        }
        Op::Write => crate::platform::sys::io::pwrite(fd, &buf[..len], e.offset).map(|n| n as i64),
        Op::Fsync => crate::platform::sys::fs::fsync(fd).map(|_| 0),
        Op::Fdatasync => crate::platform::sys::fs::fdatasync(fd).map(|_| 0),
        Op::SyncFileRange => sync_file_range(fd, e.offset, e.len, e.arg),
        Op::Syncfs => syncfs(fd).map(|_| 0),
        Op::Fallocate => crate::platform::sys::fs::fallocate(
            fd,
            crate::platform::sys::fs::FallocateFlags::from_bits_retain(e.arg),
            e.offset,
            e.len,
        )
        .map(|_| 0),
        Op::Truncate => crate::platform::sys::fs::ftruncate(fd, e.len).map(|_| 0),
        Op::Fadvise => fadvise(fd, e.offset, e.len, e.arg),
        // Read in through a mapping of the copy, as the program's read its file.
        Op::Mmap => crate::platform::pages::populate(fd, e.offset, e.len)
            .map(|_| 0)
            .map_err(|e| Errno::from_io_error(&e).unwrap_or(Errno::INVAL)),
        _ => Ok(0),
    }
}

/// syncfs(2) of `fd`'s file system; where the platform cannot sync a whole file system
/// (Windows: only through a handle to the volume, an administrator's), the flush of `fd`'s
/// own file or directory stands for it.
pub(super) fn syncfs(fd: impl AsFd) -> Result<()> {
    use crate::platform::sys::fs;
    let fd = fd.as_fd();
    match fs::syncfs(fd) {
        Err(e) if e == Errno::OPNOTSUPP => fs::fsync(fd),
        r => r,
    }
}

/// sync_file_range(2) as recorded: a length of 0 means "to the end of the file" there.
fn sync_file_range(fd: BorrowedFd<'_>, offset: u64, len: u64, flags: u32) -> Result<i64> {
    let len = if len == 0 {
        i64::MAX as u64 - offset
    } else {
        len
    };
    crate::engine::flush_fd(fd, crate::engine::FlushCall::Range { offset, len, flags })
        .map(|_| 0)
        .map_err(|e| Errno::from_io_error(&e).unwrap_or(Errno::IO))
}

/// posix_fadvise(2) as recorded (advice by its number: DONTNEED drops the cached pages a
/// program, fio among them, drops before it reads).
fn fadvise(fd: BorrowedFd<'_>, offset: u64, len: u64, advice: u32) -> Result<i64> {
    use crate::platform::sys::fs::Advice;
    let advice = match advice {
        1 => Advice::Random,
        2 => Advice::Sequential,
        3 => Advice::WillNeed,
        4 => Advice::DontNeed,
        5 => Advice::NoReuse,
        _ => Advice::Normal,
    };
    crate::platform::sys::fs::fadvise(fd, offset, std::num::NonZeroU64::new(len), advice).map(|_| 0)
}
