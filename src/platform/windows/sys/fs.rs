//! Files on Windows, as rustix's `fs` names the calls: open and create, status, directories,
//! removal, renames and links, flushes, sizes and allocation, locks, and extended attributes
//! as alternate data streams. See the parent module for how each POSIX notion maps.

use windows_sys::Win32::Foundation::{
    ERROR_CALL_NOT_IMPLEMENTED, ERROR_INVALID_PARAMETER, FALSE, GENERIC_READ, GENERIC_WRITE,
    HANDLE, INVALID_HANDLE_VALUE,
};
use windows_sys::Win32::Storage::FileSystem::{
    BY_HANDLE_FILE_INFORMATION, CREATE_ALWAYS, CREATE_NEW, CreateDirectoryW, CreateFileW,
    CreateHardLinkW, FILE_ALLOCATION_INFO, FILE_ATTRIBUTE_DIRECTORY, FILE_ATTRIBUTE_NORMAL,
    FILE_ATTRIBUTE_REPARSE_POINT, FILE_BEGIN, FILE_CURRENT, FILE_END, FILE_END_OF_FILE_INFO,
    FILE_FLAG_BACKUP_SEMANTICS, FILE_FLAG_NO_BUFFERING, FILE_FLAG_OPEN_REPARSE_POINT,
    FILE_FLAG_WRITE_THROUGH, FILE_READ_ATTRIBUTES, FILE_SHARE_DELETE, FILE_SHARE_READ,
    FILE_SHARE_WRITE, FILE_TYPE_CHAR, FILE_TYPE_DISK, FILE_TYPE_PIPE, FileAllocationInfo,
    FileEndOfFileInfo, FlushFileBuffers, GetFileAttributesW, GetFileInformationByHandle,
    GetFileType, INVALID_FILE_ATTRIBUTES, LOCKFILE_EXCLUSIVE_LOCK, LOCKFILE_FAIL_IMMEDIATELY,
    LockFileEx, MOVEFILE_REPLACE_EXISTING, MoveFileExW, OPEN_ALWAYS, OPEN_EXISTING,
    SetFileInformationByHandle, SetFilePointerEx, TRUNCATE_EXISTING,
};
use windows_sys::Win32::System::IO::OVERLAPPED;

use super::io::{Errno, Result, raw};
use super::path;
use crate::platform::fd::{AsFd, BorrowedFd, FromRawFd, OwnedFd};
use crate::platform::windows::wide::wide;

pub use super::dir::{Dir, DirEntry};
pub use super::kinds::*;

/// The current directory, for the *at calls.
// SAFETY: never used as a handle: `path::of` turns it into the current directory first.
pub const CWD: BorrowedFd<'static> =
    unsafe { BorrowedFd::borrow_raw(path::CWD_RAW as *mut std::ffi::c_void) };

/// Opens the NUL-terminated UTF-16 `path` as `flags` say.
fn open_wide(path: &[u16], flags: OFlags, attributes_only: bool) -> Result<OwnedFd> {
    let access = match (attributes_only, flags & OFlags::RWMODE) {
        (true, _) => FILE_READ_ATTRIBUTES,
        (false, OFlags::WRONLY) => GENERIC_WRITE | FILE_READ_ATTRIBUTES,
        (false, OFlags::RDWR) => GENERIC_READ | GENERIC_WRITE,
        _ => GENERIC_READ,
    };
    let create = flags.contains(OFlags::CREATE);
    let disposition = match (
        create,
        flags.contains(OFlags::EXCL),
        flags.contains(OFlags::TRUNC),
    ) {
        (true, true, _) => CREATE_NEW,
        (true, false, true) => CREATE_ALWAYS,
        (true, false, false) => OPEN_ALWAYS,
        (false, _, true) => TRUNCATE_EXISTING,
        (false, _, false) => OPEN_EXISTING,
    };
    // Backup semantics let a directory be opened; a reparse point is opened itself, so it can
    // be refused below rather than followed.
    let mut how = FILE_ATTRIBUTE_NORMAL | FILE_FLAG_BACKUP_SEMANTICS;
    if flags.contains(OFlags::DIRECT) {
        how |= FILE_FLAG_NO_BUFFERING;
    }
    if flags.intersects(OFlags::DSYNC | OFlags::SYNC) {
        how |= FILE_FLAG_WRITE_THROUGH;
    }
    if flags.contains(OFlags::NOFOLLOW) || create && flags.contains(OFlags::EXCL) {
        how |= FILE_FLAG_OPEN_REPARSE_POINT;
    }
    let share = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;
    // SAFETY: a NUL-terminated path; the other arguments are plain values.
    let h = unsafe {
        CreateFileW(
            path.as_ptr(),
            access,
            share,
            std::ptr::null(),
            disposition,
            how,
            std::ptr::null_mut(),
        )
    };
    if h == INVALID_HANDLE_VALUE {
        return Err(Errno::last());
    }
    // SAFETY: a handle CreateFileW just gave us, owned from here.
    let fd = unsafe { OwnedFd::from_raw_fd(h as _) };
    let st = fstat(&fd)?;
    let kind = FileType::from_raw_mode(st.st_mode);
    if kind == FileType::Symlink && flags.contains(OFlags::NOFOLLOW) {
        return Err(Errno::LOOP);
    }
    if flags.contains(OFlags::DIRECTORY) && kind != FileType::Directory {
        return Err(Errno::NOTDIR);
    }
    Ok(fd)
}

/// open(2).
pub fn open(path: impl super::PathArg, flags: OFlags, _mode: Mode) -> Result<OwnedFd> {
    open_wide(&wide(path.to_path().as_os_str()), flags, false)
}

/// openat(2): `name` in the directory `dir` is open to.
pub fn openat(
    dir: impl AsFd,
    name: impl super::PathArg,
    flags: OFlags,
    _mode: Mode,
) -> Result<OwnedFd> {
    open_wide(&path::at(dir, name)?, flags, false)
}

/// Windows' file time (100 ns since 1601) as Unix seconds and nanoseconds.
fn unix_time(low: u32, high: u32) -> (i64, u64) {
    let ticks = ((u64::from(high) << 32) | u64::from(low)) as i64 - 116_444_736_000_000_000;
    (
        ticks.div_euclid(10_000_000),
        ticks.rem_euclid(10_000_000) as u64 * 100,
    )
}

/// fstat(2): GetFileInformationByHandle, and GetFileType for what is not a disk file.
pub fn fstat(fd: impl AsFd) -> Result<Stat> {
    let h = raw(fd);
    // SAFETY: a handle we hold; the call only reads it.
    let kind = unsafe { GetFileType(h) };
    if kind != FILE_TYPE_DISK {
        // No file index: the console is one (every handle to it the same file); a pipe or
        // anything else is told apart by its handle, so two are never taken for one.
        let (mode, ino) = match kind {
            FILE_TYPE_CHAR => (S_IFCHR, 1),
            FILE_TYPE_PIPE => (S_IFIFO, h as u64),
            _ => (0, h as u64),
        };
        return Ok(Stat {
            st_mode: mode,
            st_ino: ino,
            st_nlink: 1,
            ..Stat::default()
        });
    }
    // SAFETY: BY_HANDLE_FILE_INFORMATION is plain data the call fills in.
    let mut i: BY_HANDLE_FILE_INFORMATION = unsafe { std::mem::zeroed() };
    // SAFETY: a handle we hold and a writable struct.
    if unsafe { GetFileInformationByHandle(h, &mut i) } == FALSE {
        return Err(Errno::last());
    }
    let a = i.dwFileAttributes;
    let mode = if a & FILE_ATTRIBUTE_REPARSE_POINT != 0 {
        S_IFLNK | 0o777
    } else if a & FILE_ATTRIBUTE_DIRECTORY != 0 {
        S_IFDIR | 0o755
    } else {
        S_IFREG | 0o644
    };
    let size = (u64::from(i.nFileSizeHigh) << 32) | u64::from(i.nFileSizeLow);
    let (mtime, nsec) = unix_time(
        i.ftLastWriteTime.dwLowDateTime,
        i.ftLastWriteTime.dwHighDateTime,
    );
    Ok(Stat {
        st_dev: u64::from(i.dwVolumeSerialNumber),
        st_ino: (u64::from(i.nFileIndexHigh) << 32) | u64::from(i.nFileIndexLow),
        st_mode: mode,
        st_nlink: u64::from(i.nNumberOfLinks),
        st_size: size as i64,
        st_blocks: size.div_ceil(512) as i64,
        st_rdev: 0,
        st_mtime: mtime,
        st_mtime_nsec: nsec,
    })
}

/// fstatat(2): the status of `name` in `dir`, of a link itself with SYMLINK_NOFOLLOW.
pub fn statat(dir: impl AsFd, name: impl super::PathArg, flags: AtFlags) -> Result<Stat> {
    let p = path::at(dir, name)?;
    let how = match flags.contains(AtFlags::SYMLINK_NOFOLLOW) {
        true => OFlags::RDONLY | OFlags::NOFOLLOW,
        false => OFlags::RDONLY,
    };
    // Opened for its attributes alone; a reparse point is described, not refused.
    match open_wide(&p, how, true) {
        Ok(fd) => fstat(&fd),
        Err(Errno::LOOP) => Ok(Stat {
            st_mode: S_IFLNK | 0o777,
            st_nlink: 1,
            ..Stat::default()
        }),
        Err(e) => Err(e),
    }
}

/// stat(2).
pub fn stat(p: impl super::PathArg) -> Result<Stat> {
    statat(CWD, p, AtFlags::empty())
}

/// lstat(2).
pub fn lstat(p: impl super::PathArg) -> Result<Stat> {
    statat(CWD, p, AtFlags::SYMLINK_NOFOLLOW)
}

/// statx(2): not on Windows.
pub fn statx(
    _dir: impl AsFd,
    _name: impl super::PathArg,
    _f: AtFlags,
    _m: StatxFlags,
) -> Result<Stat> {
    Err(Errno::OPNOTSUPP)
}

/// statfs(2): not on Windows (no file system magic numbers).
pub fn statfs(_p: impl super::PathArg) -> Result<StatFs> {
    Err(Errno::OPNOTSUPP)
}

/// access(2): whether `p` exists, and for WRITE_OK that it is not read-only.
pub fn access(p: impl super::PathArg, how: Access) -> Result<()> {
    let w = wide(p.to_path().as_os_str());
    // SAFETY: a NUL-terminated path.
    let a = unsafe { GetFileAttributesW(w.as_ptr()) };
    if a == INVALID_FILE_ATTRIBUTES {
        return Err(Errno::last());
    }
    // FILE_ATTRIBUTE_READONLY (1) on a file; on a directory Windows ignores it for creation.
    if how.contains(Access::WRITE_OK) && a & 1 != 0 && a & FILE_ATTRIBUTE_DIRECTORY == 0 {
        return Err(Errno::ACCESS);
    }
    Ok(())
}

/// mkdirat(2).
pub fn mkdirat(dir: impl AsFd, name: impl super::PathArg, _mode: Mode) -> Result<()> {
    let p = path::at(dir, name)?;
    // SAFETY: a NUL-terminated path; no security attributes.
    match unsafe { CreateDirectoryW(p.as_ptr(), std::ptr::null()) } {
        FALSE => Err(Errno::last()),
        _ => Ok(()),
    }
}

/// unlinkat(2): removes a file (a link itself, never its target), or with REMOVEDIR an empty
/// directory. The name goes at once, as on Linux, even while the file is open elsewhere
/// (FileDispositionInfoEx with POSIX semantics, Windows 10 1709+); where that is not offered
/// (older systems, FAT, Wine) the file is marked for deletion and its name goes with its last
/// handle.
pub fn unlinkat(dir: impl AsFd, name: impl super::PathArg, flags: AtFlags) -> Result<()> {
    use windows_sys::Win32::Storage::FileSystem::{
        DELETE, FILE_DISPOSITION_INFO, FILE_DISPOSITION_INFO_EX, FileDispositionInfo,
        FileDispositionInfoEx,
    };
    const DELETE_POSIX: u32 = 0x1 | 0x2 | 0x10;
    let p = path::at(dir, name)?;
    let how = FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT;
    let share = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;
    // SAFETY: a NUL-terminated path; the other arguments are plain values.
    let h = unsafe {
        CreateFileW(
            p.as_ptr(),
            DELETE | FILE_READ_ATTRIBUTES,
            share,
            std::ptr::null(),
            OPEN_EXISTING,
            how,
            std::ptr::null_mut(),
        )
    };
    if h == INVALID_HANDLE_VALUE {
        return Err(Errno::last());
    }
    // SAFETY: a handle CreateFileW just gave us, owned from here.
    let fd = unsafe { OwnedFd::from_raw_fd(h as _) };
    let dir_now = FileType::from_raw_mode(fstat(&fd)?.st_mode) == FileType::Directory;
    match (dir_now, flags.contains(AtFlags::REMOVEDIR)) {
        (true, false) => return Err(Errno::from_win32(5)),
        (false, true) => return Err(Errno::NOTDIR),
        _ => {}
    }
    let posix = FILE_DISPOSITION_INFO_EX {
        Flags: DELETE_POSIX,
    };
    match set_info(&fd, FileDispositionInfoEx, &posix) {
        Ok(()) => Ok(()),
        Err(Errno::NOTEMPTY) => Err(Errno::NOTEMPTY),
        Err(_) => set_info(
            &fd,
            FileDispositionInfo,
            &FILE_DISPOSITION_INFO { DeleteFile: true },
        ),
    }
}

/// renameat2(2): NOREPLACE fails with EXIST where `new` is there.
pub fn renameat_with(
    old_dir: impl AsFd,
    old: impl super::PathArg,
    new_dir: impl AsFd,
    new: impl super::PathArg,
    flags: RenameFlags,
) -> Result<()> {
    let (from, to) = (path::at(old_dir, old)?, path::at(new_dir, new)?);
    let how = match flags.contains(RenameFlags::NOREPLACE) {
        true => 0,
        false => MOVEFILE_REPLACE_EXISTING,
    };
    // SAFETY: two NUL-terminated paths.
    match unsafe { MoveFileExW(from.as_ptr(), to.as_ptr(), how) } {
        FALSE => Err(Errno::last()),
        _ => Ok(()),
    }
}

/// linkat(2): a hard link `new` to `old`.
pub fn linkat(
    old_dir: impl AsFd,
    old: impl super::PathArg,
    new_dir: impl AsFd,
    new: impl super::PathArg,
    _flags: AtFlags,
) -> Result<()> {
    let (from, to) = (path::at(old_dir, old)?, path::at(new_dir, new)?);
    // SAFETY: two NUL-terminated paths; no security attributes.
    match unsafe { CreateHardLinkW(to.as_ptr(), from.as_ptr(), std::ptr::null()) } {
        FALSE => Err(Errno::last()),
        _ => Ok(()),
    }
}

/// fsync(2): FlushFileBuffers (data and metadata).
pub fn fsync(fd: impl AsFd) -> Result<()> {
    // SAFETY: a handle we hold.
    match unsafe { FlushFileBuffers(raw(fd)) } {
        FALSE => Err(Errno::last()),
        _ => Ok(()),
    }
}

/// fdatasync(2): FlushFileBuffers, which has no data-only form.
pub fn fdatasync(fd: impl AsFd) -> Result<()> {
    fsync(fd)
}

/// syncfs(2): Windows flushes a volume only through a handle to the volume itself, which
/// needs administrator rights; not done.
pub fn syncfs(_fd: impl AsFd) -> Result<()> {
    Err(Errno::OPNOTSUPP)
}

fn set_info<T>(fd: impl AsFd, class: i32, info: &T) -> Result<()> {
    // SAFETY: `info` is the struct `class` names, readable for its size.
    let ok = unsafe {
        SetFileInformationByHandle(
            raw(fd),
            class,
            (info as *const T).cast(),
            std::mem::size_of::<T>() as u32,
        )
    };
    match ok {
        FALSE => Err(Errno::last()),
        _ => Ok(()),
    }
}

/// ftruncate(2): the end of file set to `len`.
pub fn ftruncate(fd: impl AsFd, len: u64) -> Result<()> {
    set_info(
        fd,
        FileEndOfFileInfo,
        &FILE_END_OF_FILE_INFO {
            EndOfFile: len as i64,
        },
    )
}

/// fallocate(2): space reserved for `offset + len` bytes (the allocation size), the file grown
/// to that size unless KEEP_SIZE; a hole cannot be punched.
pub fn fallocate(fd: impl AsFd, flags: FallocateFlags, offset: u64, len: u64) -> Result<()> {
    if flags.contains(FallocateFlags::PUNCH_HOLE) {
        return Err(Errno::OPNOTSUPP);
    }
    let fd = fd.as_fd();
    let end = offset.saturating_add(len);
    let now = fstat(fd)?.st_size as u64;
    if end <= now {
        return Ok(());
    }
    let reserved = set_info(
        fd,
        FileAllocationInfo,
        &FILE_ALLOCATION_INFO {
            AllocationSize: end as i64,
        },
    );
    match (reserved, flags.contains(FallocateFlags::KEEP_SIZE)) {
        (Ok(()), true) => Ok(()),
        // Growing the file allocates its clusters too (NTFS keeps what was never written
        // reading as zeros): where the reservation alone is not offered (Wine), that is
        // the allocation.
        (_, false) => ftruncate(fd, end),
        (Err(e), true) => Err(match e.raw_os_error() as u32 {
            ERROR_CALL_NOT_IMPLEMENTED | ERROR_INVALID_PARAMETER => Errno::OPNOTSUPP,
            _ => e,
        }),
    }
}

/// posix_fadvise(2): Windows takes no advice on an open file (its caching is chosen when the
/// file is opened), so this says so.
pub fn fadvise(
    _fd: impl AsFd,
    _offset: u64,
    _len: Option<std::num::NonZeroU64>,
    _a: Advice,
) -> Result<()> {
    Err(Errno::OPNOTSUPP)
}

/// The byte locked to stand for the whole file: Windows' locks are mandatory, so locking the
/// data would stop iogauge's own other handles; a byte no file reaches is locked instead, and
/// only another iogauge asks for it (flock's meaning: advisory).
const LOCK_BYTE: u64 = u64::MAX - 1;

/// flock(2), as an exclusive or shared lock of [`LOCK_BYTE`].
pub fn flock(fd: impl AsFd, op: FlockOperation) -> Result<()> {
    use windows_sys::Win32::Storage::FileSystem::UnlockFileEx;
    // SAFETY: OVERLAPPED is plain data; zero then the offset of the locked byte.
    let mut o: OVERLAPPED = unsafe { std::mem::zeroed() };
    o.Anonymous.Anonymous.Offset = LOCK_BYTE as u32;
    o.Anonymous.Anonymous.OffsetHigh = (LOCK_BYTE >> 32) as u32;
    let h = raw(fd);
    let flags = match op {
        FlockOperation::LockShared => 0,
        FlockOperation::LockExclusive => LOCKFILE_EXCLUSIVE_LOCK,
        FlockOperation::NonBlockingLockShared => LOCKFILE_FAIL_IMMEDIATELY,
        FlockOperation::NonBlockingLockExclusive => {
            LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY
        }
        FlockOperation::Unlock | FlockOperation::NonBlockingUnlock => {
            // SAFETY: a handle we hold and the OVERLAPPED naming the locked byte.
            return match unsafe { UnlockFileEx(h, 0, 1, 0, &mut o) } {
                FALSE => Err(Errno::last()),
                _ => Ok(()),
            };
        }
    };
    // SAFETY: a handle we hold (opened for synchronous I/O) and the OVERLAPPED naming the byte.
    match unsafe { LockFileEx(h, flags, 0, 1, 0, &mut o) } {
        FALSE => Err(Errno::last()),
        _ => Ok(()),
    }
}

/// fcntl(F_GETFL): the flags that tell how the file is cached (FILE_NO_INTERMEDIATE_BUFFERING
/// as DIRECT, FILE_WRITE_THROUGH as DSYNC), read back from the kernel; the access mode is not
/// kept by Windows in a form to read and is given as RDWR.
pub fn fcntl_getfl(fd: impl AsFd) -> Result<OFlags> {
    let mode = file_mode(raw(fd))?;
    let mut f = OFlags::RDWR;
    if mode & FILE_NO_INTERMEDIATE_BUFFERING != 0 {
        f |= OFlags::DIRECT;
    }
    if mode & FILE_WRITE_THROUGH != 0 {
        f |= OFlags::DSYNC;
    }
    Ok(f)
}

/// fcntl(F_SETFL): only NONBLOCK can be changed on Linux, and it means nothing here.
pub fn fcntl_setfl(_fd: impl AsFd, _flags: OFlags) -> Result<()> {
    Ok(())
}

const FILE_WRITE_THROUGH: u32 = 0x2;
const FILE_NO_INTERMEDIATE_BUFFERING: u32 = 0x8;

/// FileModeInformation (NtQueryInformationFile): how the handle was opened.
fn file_mode(h: HANDLE) -> Result<u32> {
    use windows_sys::Wdk::Storage::FileSystem::NtQueryInformationFile;
    use windows_sys::Win32::System::IO::IO_STATUS_BLOCK;
    const FILE_MODE_INFORMATION: i32 = 16;
    let mut mode = 0u32;
    // SAFETY: IO_STATUS_BLOCK is plain data the call fills in.
    let mut status: IO_STATUS_BLOCK = unsafe { std::mem::zeroed() };
    // SAFETY: a handle we hold; `mode` is the 4-byte FILE_MODE_INFORMATION the class names.
    let rc = unsafe {
        NtQueryInformationFile(
            h,
            &mut status,
            (&mut mode as *mut u32).cast(),
            4,
            FILE_MODE_INFORMATION,
        )
    };
    match rc {
        0 => Ok(mode),
        _ => Err(Errno::INVAL),
    }
}

/// lseek(2): SetFilePointerEx.
pub fn seek(fd: impl AsFd, pos: SeekFrom) -> Result<u64> {
    let (distance, how) = match pos {
        SeekFrom::Start(n) => (n as i64, FILE_BEGIN),
        SeekFrom::End(n) => (n, FILE_END),
        SeekFrom::Current(n) => (n, FILE_CURRENT),
    };
    let mut now = 0i64;
    // SAFETY: a handle we hold; `now` receives the new position.
    match unsafe { SetFilePointerEx(raw(fd), distance, &mut now, how) } {
        FALSE => Err(Errno::last()),
        _ => Ok(now as u64),
    }
}

/// The major and minor numbers of a device number: Windows has none; the volume serial
/// number (`st_dev`) is given whole as the major.
pub fn major(dev: u64) -> u32 {
    dev as u32
}

/// See [`major`]: 0.
pub fn minor(_dev: u64) -> u32 {
    0
}

/// The stream that holds extended attribute `name` of the file `fd` is open to.
fn stream(fd: BorrowedFd<'_>, name: &str) -> Result<Vec<u16>> {
    let mut p = path::of(fd)?.into_os_string();
    p.push(":");
    p.push(name.replace([':', '\\', '/'], "_"));
    Ok(wide(&p))
}

/// fgetxattr(2): the alternate data stream `name` of the file, read into `value`; RANGE when
/// it holds more than `value` takes, and NODATA-like NOENT when there is none.
pub fn fgetxattr(fd: impl AsFd, name: &str, value: &mut [u8]) -> Result<usize> {
    let fd = fd.as_fd();
    if !named_streams(fd) {
        return Err(Errno::OPNOTSUPP);
    }
    let s = open_wide(&stream(fd, name)?, OFlags::RDONLY, false)?;
    let size = fstat(&s)?.st_size as usize;
    if size > value.len() {
        return Err(Errno::RANGE);
    }
    let mut got = 0;
    while got < size {
        match super::io::pread(&s, &mut value[got..size], got as u64)? {
            0 => break,
            n => got += n,
        }
    }
    Ok(got)
}

/// fsetxattr(2): the alternate data stream `name` of the file made to hold `value`. A volume
/// without named streams (FAT) answers OPNOTSUPP, as a Linux file system without user xattrs
/// does.
pub fn fsetxattr(fd: impl AsFd, name: &str, value: &[u8], _flags: XattrFlags) -> Result<()> {
    let fd = fd.as_fd();
    if !named_streams(fd) {
        return Err(Errno::OPNOTSUPP);
    }
    let s = open_wide(
        &stream(fd, name)?,
        OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC,
        false,
    )?;
    let mut put = 0;
    while put < value.len() {
        put += super::io::pwrite(&s, &value[put..], put as u64)?;
    }
    Ok(())
}

/// Whether the volume of the file `fd` is open to keeps named streams
/// (GetVolumeInformationByHandle's FILE_NAMED_STREAMS).
fn named_streams(fd: BorrowedFd<'_>) -> bool {
    use windows_sys::Win32::Storage::FileSystem::GetVolumeInformationByHandleW;
    const FILE_NAMED_STREAMS: u32 = 0x0004_0000;
    let mut flags = 0u32;
    // SAFETY: a handle we hold; every buffer is null with length 0 but the flags.
    let ok = unsafe {
        GetVolumeInformationByHandleW(
            raw(fd),
            std::ptr::null_mut(),
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            &mut flags,
            std::ptr::null_mut(),
            0,
        )
    };
    ok != FALSE && flags & FILE_NAMED_STREAMS != 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::fd::AsFd;
    use crate::platform::windows::sys::io::{pread, pwrite};

    fn scratch(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("iogauge-sys-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn create_new_refuses_what_exists_and_reads_back_what_it_wrote() {
        let d = scratch("create");
        let dir = open(&d, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()).unwrap();
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW;
        let fd = openat(&dir, "f.dat", flags, Mode::empty()).unwrap();
        assert_eq!(pwrite(&fd, b"iogauge", 4096).unwrap(), 7);
        let st = fstat(&fd).unwrap();
        assert_eq!(
            (st.st_size, FileType::from_raw_mode(st.st_mode)),
            (4103, FileType::RegularFile)
        );
        assert_eq!(
            openat(&dir, "f.dat", flags, Mode::empty()).unwrap_err(),
            Errno::EXIST
        );
        let again = openat(&dir, "f.dat", OFlags::RDONLY, Mode::empty()).unwrap();
        assert_eq!(fstat(&again).unwrap().st_ino, st.st_ino);
        let mut buf = [0u8; 16];
        assert_eq!(pread(&again, &mut buf, 4096).unwrap(), 7);
        assert_eq!(&buf[..7], b"iogauge");
        assert_eq!(pread(&again, &mut buf, 1 << 20).unwrap(), 0);
        assert_eq!(
            statat(&dir, "f.dat", AtFlags::SYMLINK_NOFOLLOW)
                .unwrap()
                .st_size,
            4103
        );
        assert_eq!(
            statat(&dir, "nothing", AtFlags::empty()).unwrap_err(),
            Errno::NOENT
        );
        drop((fd, again));
        unlinkat(&dir, "f.dat", AtFlags::empty()).unwrap();
        assert_eq!(lstat(d.join("f.dat")).unwrap_err(), Errno::NOENT);
        drop(dir);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn sizes_directories_renames_and_links() {
        let d = scratch("dirs");
        let dir = open(&d, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()).unwrap();
        mkdirat(&dir, "sub", Mode::from_raw_mode(0o700)).unwrap();
        let sub = statat(&dir, "sub", AtFlags::empty()).unwrap();
        assert_eq!(FileType::from_raw_mode(sub.st_mode), FileType::Directory);
        let file = OFlags::RDWR | OFlags::CREATE | OFlags::EXCL;
        let fd = openat(&dir, "a", file, Mode::empty()).unwrap();
        fallocate(&fd, FallocateFlags::empty(), 0, 65536).unwrap();
        assert_eq!(fstat(&fd).unwrap().st_size, 65536);
        ftruncate(&fd, 100).unwrap();
        assert_eq!(fstat(&fd).unwrap().st_size, 100);
        assert_eq!(
            fallocate(
                &fd,
                FallocateFlags::PUNCH_HOLE | FallocateFlags::KEEP_SIZE,
                0,
                10
            ),
            Err(Errno::OPNOTSUPP)
        );
        assert_eq!(seek(&fd, SeekFrom::End(0)).unwrap(), 100);
        fsync(&fd).unwrap();
        drop(fd);
        renameat_with(&dir, "a", &dir, "b", RenameFlags::NOREPLACE).unwrap();
        let other = openat(&dir, "c", file, Mode::empty()).unwrap();
        drop(other);
        let refused = renameat_with(&dir, "b", &dir, "c", RenameFlags::NOREPLACE);
        assert_eq!(refused, Err(Errno::EXIST));
        let mut names: Vec<_> = Dir::read_from(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != "." && n != "..")
            .collect();
        names.sort();
        assert_eq!(names, ["b", "c", "sub"]);
        assert_eq!(unlinkat(&dir, "sub", AtFlags::REMOVEDIR), Ok(()));
        drop(dir);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_second_lock_is_refused_and_the_data_stays_writable() {
        let d = scratch("lock");
        let p = d.join("locked");
        let a = open(&p, OFlags::RDWR | OFlags::CREATE, Mode::empty()).unwrap();
        let b = open(&p, OFlags::RDWR, Mode::empty()).unwrap();
        flock(&a, FlockOperation::NonBlockingLockExclusive).unwrap();
        let second = flock(&b, FlockOperation::NonBlockingLockExclusive);
        assert_eq!(second, Err(Errno::WOULDBLOCK));
        assert_eq!(pwrite(&b, b"still writable", 0).unwrap(), 14);
        flock(&a, FlockOperation::Unlock).unwrap();
        flock(&b, FlockOperation::NonBlockingLockExclusive).unwrap();
        drop((a, b));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn marks_live_in_a_named_stream_where_the_volume_keeps_them() {
        let d = scratch("mark");
        let p = d.join("marked");
        let fd = open(
            &p,
            OFlags::RDWR | OFlags::CREATE | OFlags::EXCL,
            Mode::empty(),
        )
        .unwrap();
        let mut buf = [0u8; 64];
        match fsetxattr(
            &fd,
            "user.iogauge.created",
            b"iogauge:new ino=1",
            XattrFlags::empty(),
        ) {
            Ok(()) => {
                let n = fgetxattr(fd.as_fd(), "user.iogauge.created", &mut buf).unwrap();
                assert_eq!(&buf[..n], b"iogauge:new ino=1");
                assert_eq!(
                    fgetxattr(&fd, "user.iogauge.created", &mut buf[..4]),
                    Err(Errno::RANGE)
                );
                assert_eq!(
                    fstat(&fd).unwrap().st_size,
                    0,
                    "the stream is not the file's data"
                );
            }
            Err(e) => {
                assert_eq!(e, Errno::OPNOTSUPP);
                eprintln!("skipped: this volume keeps no named streams (Wine keeps none)");
            }
        }
        drop(fd);
        std::fs::remove_dir_all(&d).unwrap();
    }
}
