//! What the unit tests ask of the system, the same on both halves: links, a file's identity,
//! allocation and mode.

use std::io;
use std::path::Path;

/// A symbolic link `link` to `target`.
pub fn symlink(target: impl AsRef<Path>, link: impl AsRef<Path>) -> io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

/// Whether a removed name goes at once while the file is open elsewhere: on Linux, always.
pub fn deletes_at_once() -> bool {
    true
}

/// Whether a directory held open is still found by its descriptor once renamed: on Linux,
/// always.
pub fn renames_followed() -> bool {
    true
}

/// The file at `p` (through links): (device, inode).
pub fn dev_ino(p: &Path) -> (u64, u64) {
    let st = rustix::fs::stat(p).expect("stat");
    (st.st_dev, st.st_ino)
}

/// The 512-byte blocks allocated to the file at `p`.
pub fn blocks(p: &Path) -> u64 {
    rustix::fs::stat(p).expect("stat").st_blocks as u64
}

/// The permission bits of what `p` names (not following a link).
pub fn mode(p: &Path) -> u32 {
    rustix::fs::lstat(p).expect("lstat").st_mode & 0o7777
}

/// Whether a path can hold any bytes (Linux) rather than only text (Windows' UTF-16).
pub const ANY_BYTES_IN_PATHS: bool = true;

/// Whether files carry POSIX permission bits (Linux) or none (Windows).
pub const POSIX_MODES: bool = true;

/// The CPU the calling thread runs on now.
pub fn current_cpu() -> Option<usize> {
    // SAFETY: sched_getcpu takes nothing and returns a CPU number or -1.
    usize::try_from(unsafe { libc::sched_getcpu() }).ok()
}

/// Makes the calling thread real-time (SCHED_FIFO, the lowest priority): no ordinary thread
/// preempts it on its CPU.
pub fn realtime_thread() -> io::Result<()> {
    let param = libc::sched_param { sched_priority: 1 };
    // SAFETY: the calling thread (0), a valid policy and its parameter.
    match unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) } {
        0 => Ok(()),
        _ => Err(io::Error::last_os_error()),
    }
}
