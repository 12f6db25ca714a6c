//! Linux's calls that shared engines and the runner make beyond reads and writes: a range's
//! writeback, a thread's I/O priority and memory policy, a file's write lifetime hint.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

/// sync_file_range(2) over `len` bytes from `offset` with `flags` (SYNC_FILE_RANGE_*).
pub fn sync_range(fd: BorrowedFd<'_>, offset: u64, len: u64, flags: u32) -> io::Result<()> {
    // SAFETY: a plain system call on a descriptor the caller keeps open.
    let r = unsafe { libc::sync_file_range(fd.as_raw_fd(), offset as i64, len as i64, flags) };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// ioprio_set(2) for the calling thread.
pub fn set_thread_ioprio(ioprio: u16) -> io::Result<()> {
    const IOPRIO_WHO_PROCESS: libc::c_int = 1;
    // SAFETY: a plain system call with integer arguments; `who` 0 is the calling thread.
    let r = unsafe {
        libc::syscall(
            libc::SYS_ioprio_set,
            IOPRIO_WHO_PROCESS,
            0,
            libc::c_int::from(ioprio),
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// set_mempolicy(2) for the calling thread: `mode` (MPOL_*) over `nodes`.
pub fn set_thread_mempolicy(mode: i32, nodes: &[usize]) -> io::Result<()> {
    let mut mask = [0u64; 16];
    for &n in nodes.iter().filter(|&&n| n < 1024) {
        mask[n / 64] |= 1 << (n % 64);
    }
    let maxnode = (mask.len() * 64) as libc::c_ulong;
    let ptr = if nodes.is_empty() {
        std::ptr::null()
    } else {
        mask.as_ptr()
    };
    // SAFETY: the mask outlives the call and holds `maxnode` bits.
    let r = unsafe { libc::syscall(libc::SYS_set_mempolicy, mode, ptr, maxnode) };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// fcntl(F_SET_RW_HINT) on the file `fd` opens.
pub fn set_write_hint(fd: BorrowedFd<'_>, hint: u64) -> io::Result<()> {
    /// F_LINUX_SPECIFIC_BASE (1024) + 12.
    const F_SET_RW_HINT: libc::c_int = 1036;
    // SAFETY: fcntl reads the u64 the pointer names, which lives across the call.
    let r = unsafe { libc::fcntl(fd.as_raw_fd(), F_SET_RW_HINT, &hint as *const u64) };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
