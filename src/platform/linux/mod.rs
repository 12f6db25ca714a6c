//! Linux's half of the platform: /proc and /sys for the host's facts, getrusage for CPU time,
//! signal-hook for signals, and rustix's file and I/O calls for the file layer and the engines.

pub mod cpu;
pub mod host;
pub mod process;
pub mod signals;

/// The file and I/O calls the file layer and the shared engines make: rustix's, as they are.
pub mod sys {
    pub use rustix::{fs, io};

    // rustix 1.1's linux_raw backend defines `OFlags::DSYNC` as O_SYNC, which would silently
    // turn sync=dsync into full O_SYNC; take both from libc instead.
    /// open(2)'s O_DSYNC.
    pub const O_DSYNC: fs::OFlags = fs::OFlags::from_bits_retain(libc::O_DSYNC as u32);
    /// open(2)'s O_SYNC.
    pub const O_SYNC: fs::OFlags = fs::OFlags::from_bits_retain(libc::O_SYNC as u32);

    /// Makes `o` open without the page cache (O_DIRECT).
    pub fn direct(o: &mut std::fs::OpenOptions) {
        std::os::unix::fs::OpenOptionsExt::custom_flags(o, libc::O_DIRECT);
    }
}

/// Descriptors: a file descriptor on Linux.
pub mod fd {
    pub use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};
}

/// The device that discards what is written to it.
pub const NULL_DEVICE: &str = "/dev/null";

#[cfg(test)]
mod tests {
    use crate::platform::abi::{self, errno};

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
