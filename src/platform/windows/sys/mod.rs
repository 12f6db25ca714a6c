//! The file and I/O calls the file layer and the shared engines make, on Windows: the subset
//! of rustix's `fs` and `io` that iogauge uses (the names, types and meanings Linux's half
//! re-exports), made of Win32 calls. Where Windows has no such thing the call says so
//! (`Errno::OPNOTSUPP`) rather than pretending: no fadvise, no fallocate's hole punching.
//!
//! How the POSIX notions map: a descriptor is a HANDLE; `O_DIRECT` is FILE_FLAG_NO_BUFFERING,
//! `O_DSYNC`/`O_SYNC` FILE_FLAG_WRITE_THROUGH; `O_NOFOLLOW` opens a reparse point (symbolic
//! link, junction) itself and refuses it (`ELOOP`); a directory descriptor is a handle opened
//! with backup semantics, and `*at` calls resolve the name against its final path; an inode
//! is the NTFS file index, a device the volume's serial number; extended attributes are
//! alternate data streams (`file:name`).

#[macro_use]
mod flags;
pub mod fs;
pub mod io;
mod path;

/// open(2)'s O_DSYNC: FILE_FLAG_WRITE_THROUGH.
pub const O_DSYNC: fs::OFlags = fs::OFlags::DSYNC;
/// open(2)'s O_SYNC: FILE_FLAG_WRITE_THROUGH too (Windows has one kind).
pub const O_SYNC: fs::OFlags = fs::OFlags::SYNC;

/// Makes `o` open without the file cache (FILE_FLAG_NO_BUFFERING).
pub fn direct(o: &mut std::fs::OpenOptions) {
    use std::os::windows::fs::OpenOptionsExt;
    o.custom_flags(windows_sys::Win32::Storage::FileSystem::FILE_FLAG_NO_BUFFERING);
}
