//! The system calls the recorder watches, by this architecture's numbers: what each is (for
//! the decoder) and which carry a path (those stop under ptrace, so the path is read while it
//! is still in the program's memory).

/// A watched system call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Call {
    Open,
    Creat,
    Openat,
    Openat2,
    Close,
    CloseRange,
    Dup,
    Dup2,
    Dup3,
    Fcntl,
    Read,
    Write,
    Pread,
    Pwrite,
    Readv,
    Writev,
    Preadv,
    Pwritev,
    Preadv2,
    Pwritev2,
    Lseek,
    Fsync,
    Fdatasync,
    SyncFileRange,
    /// sync(2): every file system's dirty data written (no descriptor), and syncfs(2): the
    /// file system of a descriptor's file.
    Sync,
    Syncfs,
    Fallocate,
    Fadvise,
    Ftruncate,
    Truncate,
    Mmap,
    /// Advice on a mapping (`Footer::advice`): how the kernel reads around its faults.
    Madvise,
    Unlink,
    Unlinkat,
    Rename,
    Renameat,
    Renameat2,
    Chdir,
    Fchdir,
    Sendfile,
    CopyFileRange,
    IoSubmit,
    IoGetevents,
    IoPgetevents,
    IoUringEnter,
    IoUringRegister,
    /// Signals one task sends another: a tell (`Footer::signals`).
    Kill,
    Tkill,
    Tgkill,
    SigQueue,
    TgSigQueue,
    /// A descriptor that names a process (pidfd_open's), and a signal sent through one.
    PidfdOpen,
    PidfdSendSignal,
    /// Process groups, which a signal to a group (`kill 0`) reaches.
    Setpgid,
    Setsid,
}

/// libc's call numbers, and io_pgetevents', which it lacks.
#[allow(non_upper_case_globals)]
mod nr {
    pub use libc::*;
    #[cfg(target_arch = "x86_64")]
    pub const SYS_io_pgetevents: libc::c_long = 333;
    #[cfg(target_arch = "aarch64")]
    pub const SYS_io_pgetevents: libc::c_long = 292;
}

macro_rules! table {
    ($($call:ident = $nr:ident),* $(,)?) => {
        const TABLE: &[(Call, libc::c_long)] = &[$((Call::$call, nr::$nr)),*];
    };
}

#[cfg(target_arch = "x86_64")]
table!(
    Open = SYS_open,
    Creat = SYS_creat,
    Openat = SYS_openat,
    Openat2 = SYS_openat2,
    Close = SYS_close,
    CloseRange = SYS_close_range,
    Dup = SYS_dup,
    Dup2 = SYS_dup2,
    Dup3 = SYS_dup3,
    Fcntl = SYS_fcntl,
    Read = SYS_read,
    Write = SYS_write,
    Pread = SYS_pread64,
    Pwrite = SYS_pwrite64,
    Readv = SYS_readv,
    Writev = SYS_writev,
    Preadv = SYS_preadv,
    Pwritev = SYS_pwritev,
    Preadv2 = SYS_preadv2,
    Pwritev2 = SYS_pwritev2,
    Lseek = SYS_lseek,
    Fsync = SYS_fsync,
    Fdatasync = SYS_fdatasync,
    SyncFileRange = SYS_sync_file_range,
    Sync = SYS_sync,
    Syncfs = SYS_syncfs,
    Fallocate = SYS_fallocate,
    Fadvise = SYS_fadvise64,
    Ftruncate = SYS_ftruncate,
    Truncate = SYS_truncate,
    Mmap = SYS_mmap,
    Madvise = SYS_madvise,
    Unlink = SYS_unlink,
    Unlinkat = SYS_unlinkat,
    Rename = SYS_rename,
    Renameat = SYS_renameat,
    Renameat2 = SYS_renameat2,
    Chdir = SYS_chdir,
    Fchdir = SYS_fchdir,
    Sendfile = SYS_sendfile,
    CopyFileRange = SYS_copy_file_range,
    IoSubmit = SYS_io_submit,
    IoGetevents = SYS_io_getevents,
    IoPgetevents = SYS_io_pgetevents,
    IoUringEnter = SYS_io_uring_enter,
    IoUringRegister = SYS_io_uring_register,
    Kill = SYS_kill,
    Tkill = SYS_tkill,
    Tgkill = SYS_tgkill,
    SigQueue = SYS_rt_sigqueueinfo,
    TgSigQueue = SYS_rt_tgsigqueueinfo,
    PidfdOpen = SYS_pidfd_open,
    PidfdSendSignal = SYS_pidfd_send_signal,
    Setpgid = SYS_setpgid,
    Setsid = SYS_setsid,
);

#[cfg(target_arch = "aarch64")]
table!(
    Openat = SYS_openat,
    Openat2 = SYS_openat2,
    Close = SYS_close,
    CloseRange = SYS_close_range,
    Dup = SYS_dup,
    Dup3 = SYS_dup3,
    Fcntl = SYS_fcntl,
    Read = SYS_read,
    Write = SYS_write,
    Pread = SYS_pread64,
    Pwrite = SYS_pwrite64,
    Readv = SYS_readv,
    Writev = SYS_writev,
    Preadv = SYS_preadv,
    Pwritev = SYS_pwritev,
    Preadv2 = SYS_preadv2,
    Pwritev2 = SYS_pwritev2,
    Lseek = SYS_lseek,
    Fsync = SYS_fsync,
    Fdatasync = SYS_fdatasync,
    SyncFileRange = SYS_sync_file_range,
    Sync = SYS_sync,
    Syncfs = SYS_syncfs,
    Fallocate = SYS_fallocate,
    Fadvise = SYS_fadvise64,
    Ftruncate = SYS_ftruncate,
    Truncate = SYS_truncate,
    Mmap = SYS_mmap,
    Madvise = SYS_madvise,
    Unlinkat = SYS_unlinkat,
    Renameat = SYS_renameat,
    Renameat2 = SYS_renameat2,
    Chdir = SYS_chdir,
    Fchdir = SYS_fchdir,
    Sendfile = SYS_sendfile,
    CopyFileRange = SYS_copy_file_range,
    IoSubmit = SYS_io_submit,
    IoGetevents = SYS_io_getevents,
    IoPgetevents = SYS_io_pgetevents,
    IoUringEnter = SYS_io_uring_enter,
    IoUringRegister = SYS_io_uring_register,
    Kill = SYS_kill,
    Tkill = SYS_tkill,
    Tgkill = SYS_tgkill,
    SigQueue = SYS_rt_sigqueueinfo,
    TgSigQueue = SYS_rt_tgsigqueueinfo,
    PidfdOpen = SYS_pidfd_open,
    PidfdSendSignal = SYS_pidfd_send_signal,
    Setpgid = SYS_setpgid,
    Setsid = SYS_setsid,
);

/// The seccomp audit architecture of this build (`AUDIT_ARCH_*`).
#[cfg(target_arch = "x86_64")]
pub const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
pub const AUDIT_ARCH: u32 = 0xC000_00B7;

impl Call {
    /// The call a system call number is, if watched.
    pub fn of(nr: i64) -> Option<Call> {
        TABLE.iter().find(|(_, n)| *n == nr).map(|(c, _)| *c)
    }

    /// Every watched call's number.
    pub fn numbers() -> impl Iterator<Item = i64> {
        TABLE.iter().map(|(_, n)| *n)
    }

    /// This call's number.
    pub fn number(self) -> Option<i64> {
        TABLE.iter().find(|(c, _)| *c == self).map(|(_, n)| *n)
    }

    /// Calls that name a file by path: the path is read as the call is made (in the kernel, or
    /// at a ptrace stop).
    pub fn has_path(self) -> bool {
        matches!(
            self,
            Call::Open
                | Call::Creat
                | Call::Openat
                | Call::Openat2
                | Call::Truncate
                | Call::Unlink
                | Call::Unlinkat
                | Call::Rename
                | Call::Renameat
                | Call::Renameat2
                | Call::Chdir
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_round_trip_and_are_distinct() {
        let mut seen = std::collections::HashSet::new();
        for n in Call::numbers() {
            assert!(seen.insert(n), "{n} twice");
            let c = Call::of(n).unwrap();
            assert_eq!(c.number(), Some(n));
        }
        assert_eq!(Call::of(libc::SYS_pread64), Some(Call::Pread));
        assert_eq!(Call::of(libc::SYS_getpid), None);
    }
}
