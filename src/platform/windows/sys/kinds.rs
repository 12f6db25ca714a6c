//! The types and flags of the file calls (`fs`), as rustix names them: open's, the *at calls',
//! fallocate's, the xattr and rename flags; a file's mode bits, type and status.

flag_set! {
    /// open(2)'s flags, with Linux's values; those Windows has no use for are accepted and
    /// ignored (CLOEXEC: handles are not inherited unless asked; NONBLOCK: no FIFO can sit
    /// where a file was checked).
    OFlags: u32 {
        RDONLY = 0;
        WRONLY = 0o1;
        RDWR = 0o2;
        RWMODE = 0o3;
        CREATE = 0o100;
        EXCL = 0o200;
        TRUNC = 0o1000;
        APPEND = 0o2000;
        NONBLOCK = 0o4000;
        /// FILE_FLAG_WRITE_THROUGH.
        DSYNC = 0o10000;
        /// FILE_FLAG_NO_BUFFERING.
        DIRECT = 0o40000;
        DIRECTORY = 0o200000;
        /// The last component is opened itself if it is a reparse point, and refused.
        NOFOLLOW = 0o400000;
        CLOEXEC = 0o2000000;
        /// FILE_FLAG_WRITE_THROUGH, as DSYNC.
        SYNC = 0o4010000;
        PATH = 0o10000000;
    }
}

flag_set! {
    /// The *at calls' flags.
    AtFlags: u32 {
        SYMLINK_NOFOLLOW = 0x100;
        REMOVEDIR = 0x200;
        EMPTY_PATH = 0x1000;
    }
}

flag_set! {
    /// fallocate(2)'s modes: KEEP_SIZE reserves without growing the file; PUNCH_HOLE has no
    /// counterpart here.
    FallocateFlags: u32 {
        KEEP_SIZE = 0x1;
        PUNCH_HOLE = 0x2;
    }
}

flag_set! {
    /// setxattr(2)'s flags.
    XattrFlags: u32 {
        CREATE = 0x1;
        REPLACE = 0x2;
    }
}

flag_set! {
    /// renameat2(2)'s flags.
    RenameFlags: u32 {
        NOREPLACE = 0x1;
    }
}

flag_set! {
    /// access(2)'s modes.
    Access: u32 {
        EXISTS = 0;
        EXEC_OK = 0x1;
        WRITE_OK = 0x2;
        READ_OK = 0x4;
    }
}

flag_set! {
    /// statx(2)'s masks: no statx here.
    StatxFlags: u32 {
        ALL = 0xfff;
    }
}

/// Permission bits: Windows has none; kept for the callers' sake.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Mode(u32);

impl Mode {
    pub const fn empty() -> Mode {
        Mode(0)
    }
    pub const fn from_raw_mode(m: u32) -> Mode {
        Mode(m)
    }
    pub const fn as_raw_mode(self) -> u32 {
        self.0
    }
}

pub(super) const S_IFMT: u32 = 0o170000;
pub(super) const S_IFIFO: u32 = 0o010000;
pub(super) const S_IFCHR: u32 = 0o020000;
pub(super) const S_IFDIR: u32 = 0o040000;
pub(super) const S_IFBLK: u32 = 0o060000;
pub(super) const S_IFREG: u32 = 0o100000;
pub(super) const S_IFLNK: u32 = 0o120000;

/// What a file is, from its mode's type bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileType {
    RegularFile,
    Directory,
    Symlink,
    Fifo,
    Socket,
    CharacterDevice,
    BlockDevice,
    Unknown,
}

impl FileType {
    pub fn from_raw_mode(mode: u32) -> FileType {
        match mode & S_IFMT {
            S_IFREG => FileType::RegularFile,
            S_IFDIR => FileType::Directory,
            S_IFLNK => FileType::Symlink,
            S_IFIFO => FileType::Fifo,
            S_IFCHR => FileType::CharacterDevice,
            S_IFBLK => FileType::BlockDevice,
            _ => FileType::Unknown,
        }
    }
}

/// A file's status: the volume's serial number as its device, the NTFS file index as its
/// inode, the type bits made from its attributes.
#[derive(Debug, Clone, Copy, Default)]
pub struct Stat {
    pub st_dev: u64,
    pub st_ino: u64,
    pub st_mode: u32,
    pub st_nlink: u64,
    pub st_size: i64,
    pub st_blocks: i64,
    pub st_rdev: u64,
    pub st_mtime: i64,
    /// Unsigned, as rustix's on Linux.
    pub st_mtime_nsec: u64,
}

/// statfs(2)'s answer: Windows has no file system magic numbers.
#[derive(Debug, Clone, Copy, Default)]
pub struct StatFs {
    pub f_type: i64,
}

/// posix_fadvise(2)'s advice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Advice {
    Normal,
    Sequential,
    Random,
    NoReuse,
    WillNeed,
    DontNeed,
}

/// flock(2)'s operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlockOperation {
    LockShared,
    LockExclusive,
    Unlock,
    NonBlockingLockShared,
    NonBlockingLockExclusive,
    NonBlockingUnlock,
}

/// lseek(2)'s whence and offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeekFrom {
    Start(u64),
    End(i64),
    Current(i64),
}
