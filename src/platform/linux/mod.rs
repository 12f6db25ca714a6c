//! Linux's half of the platform: /proc and /sys for the host's facts, getrusage for CPU time,
//! signal-hook for signals, and rustix's file and I/O calls for the file layer and the engines.

pub mod aio;
pub mod code;
pub mod cpu;
pub mod disks;
pub mod host;
pub mod pages;
pub mod process;
mod ring;
pub mod signals;
#[cfg(test)]
pub mod testing;

/// The file and I/O calls the file layer and the shared engines make: rustix's, as they are.
pub mod sys {
    pub use rustix::{fs, io};

    // rustix 1.1's linux_raw backend defines `OFlags::DSYNC` as O_SYNC, which would silently
    // turn sync=dsync into full O_SYNC; take both from libc instead.
    /// open(2)'s O_DSYNC.
    pub const O_DSYNC: fs::OFlags = fs::OFlags::from_bits_retain(libc::O_DSYNC as u32);
    /// open(2)'s O_SYNC.
    pub const O_SYNC: fs::OFlags = fs::OFlags::from_bits_retain(libc::O_SYNC as u32);

    /// Whether a file's cache takes advice (posix_fadvise: `invalidate`, `fadvise_hint`).
    pub const CACHE_ADVICE: bool = true;

    /// Short names of direct I/O, of write-through (`sync=dsync`) and of both, for tables.
    pub const CACHE_FLAG_NAMES: (&str, &str, &str) = ("O_DIRECT", "O_DSYNC", "O_DIRECT+DSYNC");

    /// The calls that give a new file its size, as a report names them.
    pub const LAYOUT_CALLS: crate::platform::LayoutCalls = crate::platform::LayoutCalls {
        native: "fallocate(2) of {size}",
        keep: "fallocate(2) KEEP_SIZE of {size}, size 0",
        posix: "posix_fallocate(3) of {size}",
        truncate: "ftruncate(2) to {size}, sparse",
    };

    /// The open(2) flags in `f` that decide access and caching, by their names here.
    pub fn open_flag_names(f: fs::OFlags) -> Vec<&'static str> {
        let mut v = vec![match f & fs::OFlags::RWMODE {
            fs::OFlags::WRONLY => "O_WRONLY",
            fs::OFlags::RDWR => "O_RDWR",
            _ => "O_RDONLY",
        }];
        if f.contains(fs::OFlags::DIRECT) {
            v.push("O_DIRECT");
        }
        // O_SYNC includes the O_DSYNC bit; name the stronger one only.
        if f.contains(O_SYNC) {
            v.push("O_SYNC");
        } else if f.contains(O_DSYNC) {
            v.push("O_DSYNC");
        }
        v
    }

    /// The bytes that separate a path's components.
    pub const SEPARATORS: &[u8] = b"/";

    /// The name of a directory entry.
    pub fn entry_name(e: &fs::DirEntry) -> std::ffi::OsString {
        use std::os::unix::ffi::OsStrExt;
        std::ffi::OsStr::from_bytes(e.file_name().to_bytes()).to_owned()
    }

    /// Makes `held`'s descriptor number refer to the file `new` is open to (dup3): the engine
    /// holding that number goes on with it (unlink_each_loop's renewal).
    pub fn redirect(
        new: std::os::fd::BorrowedFd<'_>,
        held: std::os::fd::BorrowedFd<'_>,
    ) -> std::io::Result<()> {
        use std::os::fd::AsRawFd;
        // SAFETY: both numbers are open descriptors; dup3 atomically makes `held`'s number
        // refer to the new file (the old one is closed through it), which the caller owns.
        let r = unsafe { libc::dup3(new.as_raw_fd(), held.as_raw_fd(), libc::O_CLOEXEC) };
        if r < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    /// posix_fallocate(3) of the first `len` bytes.
    pub fn posix_fallocate(fd: std::os::fd::BorrowedFd<'_>, len: u64) -> io::Result<()> {
        use std::os::fd::AsRawFd;
        // SAFETY: a plain library call on a descriptor the caller keeps open.
        match unsafe { libc::posix_fallocate(fd.as_raw_fd(), 0, len as libc::off_t) } {
            0 => Ok(()),
            e => Err(io::Errno::from_raw_os_error(e)),
        }
    }

    /// Makes `o` open without the page cache (O_DIRECT).
    pub fn direct(o: &mut std::fs::OpenOptions) {
        std::os::unix::fs::OpenOptionsExt::custom_flags(o, libc::O_DIRECT);
    }
}

/// The errno an OS error code stands for: on Linux, itself.
pub fn errno_from_os(code: i32) -> i32 {
    code
}

/// An OS error that stands for `errno` (Linux's numbering): on Linux, that errno itself.
pub fn os_error(errno: i32) -> std::io::Error {
    std::io::Error::from_raw_os_error(errno)
}

/// Descriptors: a file descriptor on Linux.
pub mod fd {
    pub use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};
}

/// Whether paths start with drive letters (`C:\`), as the Windows tools' command lines name them.
pub const DRIVE_LETTERS: bool = false;

/// Why a target has no device whose counters iogauge reads (/proc/diskstats), as a warning
/// says it, and in short for the report's device line.
pub const NO_DEVICE_WHY: &str =
    "on a file system with no block device below it (tmpfs or a network file system)";
pub const NO_DEVICE_SHORT: &str = "none below the file system";

/// The device that discards what is written to it.
pub const NULL_DEVICE: &str = "/dev/null";

#[cfg(test)]
mod tests {
    use crate::platform::abi::{self, errno};

    #[test]
    fn open_flag_names_distinguish_dsync_from_sync() {
        use super::sys::{O_DSYNC, O_SYNC, fs::OFlags, open_flag_names};
        assert_eq!(
            open_flag_names(OFlags::RDWR | O_DSYNC),
            ["O_RDWR", "O_DSYNC"]
        );
        assert_eq!(
            open_flag_names(OFlags::WRONLY | O_SYNC | OFlags::DIRECT),
            ["O_WRONLY", "O_DIRECT", "O_SYNC"]
        );
    }

    #[test]
    fn the_carried_numbers_are_linux_own() {
        let pairs = [
            (errno::EPERM, libc::EPERM),
            (errno::ENOENT, libc::ENOENT),
            (errno::EINTR, libc::EINTR),
            (errno::EIO, libc::EIO),
            (errno::ENXIO, libc::ENXIO),
            (errno::EBADF, libc::EBADF),
            (errno::EAGAIN, libc::EAGAIN),
            (errno::EWOULDBLOCK, libc::EWOULDBLOCK),
            (errno::ENOMEM, libc::ENOMEM),
            (errno::EACCES, libc::EACCES),
            (errno::EFAULT, libc::EFAULT),
            (errno::EBUSY, libc::EBUSY),
            (errno::EEXIST, libc::EEXIST),
            (errno::EXDEV, libc::EXDEV),
            (errno::ENOTDIR, libc::ENOTDIR),
            (errno::ENOTEMPTY, libc::ENOTEMPTY),
            (errno::ELOOP, libc::ELOOP),
            (errno::ENODEV, libc::ENODEV),
            (errno::EINVAL, libc::EINVAL),
            (errno::ENFILE, libc::ENFILE),
            (errno::EMFILE, libc::EMFILE),
            (errno::ENOTTY, libc::ENOTTY),
            (errno::EFBIG, libc::EFBIG),
            (errno::ENOSPC, libc::ENOSPC),
            (errno::ESPIPE, libc::ESPIPE),
            (errno::EROFS, libc::EROFS),
            (errno::EPIPE, libc::EPIPE),
            (errno::ERANGE, libc::ERANGE),
            (errno::ENODATA, libc::ENODATA),
            (errno::ETIME, libc::ETIME),
            (errno::ENOLINK, libc::ENOLINK),
            (errno::EBADMSG, libc::EBADMSG),
            (errno::EOVERFLOW, libc::EOVERFLOW),
            (errno::EILSEQ, libc::EILSEQ),
            (errno::EOPNOTSUPP, libc::EOPNOTSUPP),
            (errno::ENOTSUP, libc::ENOTSUP),
            (errno::ETIMEDOUT, libc::ETIMEDOUT),
            (errno::ECONNRESET, libc::ECONNRESET),
            (errno::ESTALE, libc::ESTALE),
            (errno::EREMOTEIO, libc::EREMOTEIO),
            (errno::EDQUOT, libc::EDQUOT),
            (errno::ECANCELED, libc::ECANCELED),
            (errno::ENOMEDIUM, libc::ENOMEDIUM),
            (errno::EMEDIUMTYPE, libc::EMEDIUMTYPE),
            (abi::FALLOC_FL_KEEP_SIZE as i32, libc::FALLOC_FL_KEEP_SIZE),
            (abi::FALLOC_FL_PUNCH_HOLE as i32, libc::FALLOC_FL_PUNCH_HOLE),
            (
                abi::SYNC_FILE_RANGE_WAIT_BEFORE as i32,
                libc::SYNC_FILE_RANGE_WAIT_BEFORE as i32,
            ),
            (
                abi::SYNC_FILE_RANGE_WRITE as i32,
                libc::SYNC_FILE_RANGE_WRITE as i32,
            ),
            (
                abi::SYNC_FILE_RANGE_WAIT_AFTER as i32,
                libc::SYNC_FILE_RANGE_WAIT_AFTER as i32,
            ),
            (abi::RWF_HIPRI, libc::RWF_HIPRI),
            (abi::RWF_DSYNC, libc::RWF_DSYNC),
            (abi::RWF_SYNC, libc::RWF_SYNC),
            (abi::RWF_NOWAIT, libc::RWF_NOWAIT),
            (abi::RWF_ATOMIC, libc::RWF_ATOMIC),
            (abi::RWF_DONTCACHE, libc::RWF_DONTCACHE),
        ];
        for (i, (ours, theirs)) in pairs.iter().enumerate() {
            assert_eq!(ours, theirs, "pair {i}");
        }
    }
}
