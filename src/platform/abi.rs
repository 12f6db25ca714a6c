//! Linux's numbers that iogauge's data carries on every system: the errno names fio's
//! `ignore_error` takes, fallocate's modes in a trace, sync_file_range's flags in fio's
//! option, the RWF_* flags of the per-call options. They are values of the formats and
//! options, so a build for Windows reads and writes the same numbers; Linux's half checks
//! them against libc's.

/// errno values (asm-generic, as x86-64 and arm64 Linux number them).
pub mod errno {
    pub const EPERM: i32 = 1;
    pub const ENOENT: i32 = 2;
    pub const EINTR: i32 = 4;
    pub const EIO: i32 = 5;
    pub const ENXIO: i32 = 6;
    pub const EBADF: i32 = 9;
    pub const EAGAIN: i32 = 11;
    pub const EWOULDBLOCK: i32 = EAGAIN;
    pub const ENOMEM: i32 = 12;
    pub const EACCES: i32 = 13;
    pub const EFAULT: i32 = 14;
    pub const EBUSY: i32 = 16;
    pub const EEXIST: i32 = 17;
    pub const EXDEV: i32 = 18;
    pub const ENODEV: i32 = 19;
    pub const ENOTDIR: i32 = 20;
    pub const EINVAL: i32 = 22;
    pub const ENFILE: i32 = 23;
    pub const EMFILE: i32 = 24;
    pub const ENOTTY: i32 = 25;
    pub const EFBIG: i32 = 27;
    pub const ENOSPC: i32 = 28;
    pub const ESPIPE: i32 = 29;
    pub const EROFS: i32 = 30;
    pub const EPIPE: i32 = 32;
    pub const ERANGE: i32 = 34;
    pub const ENOTEMPTY: i32 = 39;
    pub const ELOOP: i32 = 40;
    pub const ENODATA: i32 = 61;
    pub const ETIME: i32 = 62;
    pub const ENOLINK: i32 = 67;
    pub const EBADMSG: i32 = 74;
    pub const EOVERFLOW: i32 = 75;
    pub const EILSEQ: i32 = 84;
    pub const EOPNOTSUPP: i32 = 95;
    pub const ENOTSUP: i32 = EOPNOTSUPP;
    pub const ETIMEDOUT: i32 = 110;
    pub const ECONNRESET: i32 = 104;
    pub const ESTALE: i32 = 116;
    pub const EREMOTEIO: i32 = 121;
    pub const EDQUOT: i32 = 122;
    pub const ECANCELED: i32 = 125;
    pub const ENOMEDIUM: i32 = 123;
    pub const EMEDIUMTYPE: i32 = 124;
}

/// fallocate(2)'s modes.
pub const FALLOC_FL_KEEP_SIZE: u32 = 0x01;
pub const FALLOC_FL_PUNCH_HOLE: u32 = 0x02;

/// sync_file_range(2)'s flags.
pub const SYNC_FILE_RANGE_WAIT_BEFORE: u32 = 1;
pub const SYNC_FILE_RANGE_WRITE: u32 = 2;
pub const SYNC_FILE_RANGE_WAIT_AFTER: u32 = 4;

/// preadv2/pwritev2's (and io_uring's, libaio's) per-call flags.
pub const RWF_HIPRI: i32 = 0x01;
pub const RWF_DSYNC: i32 = 0x02;
pub const RWF_SYNC: i32 = 0x04;
pub const RWF_NOWAIT: i32 = 0x08;
pub const RWF_ATOMIC: i32 = 0x40;
pub const RWF_DONTCACHE: i32 = 0x80;

/// statfs(2)'s f_type of ext4 (e4defrag's ioctl exists only there).
pub const EXT4_SUPER_MAGIC: i64 = 0xEF53;
