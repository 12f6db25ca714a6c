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
mod dir;
pub mod fs;
pub mod io;
mod kinds;
mod path;

/// What the calls take as a path: a path, or a C string of UTF-8 (as the file operation
/// engines keep their names).
pub trait PathArg {
    fn to_path(&self) -> std::borrow::Cow<'_, std::path::Path>;
}

macro_rules! path_arg_by_ref {
    ($($t:ty),*) => {$(
        impl PathArg for $t {
            fn to_path(&self) -> std::borrow::Cow<'_, std::path::Path> {
                std::borrow::Cow::Borrowed(std::path::Path::new(self))
            }
        }
    )*};
}

path_arg_by_ref!(
    std::path::Path,
    std::path::PathBuf,
    std::ffi::OsStr,
    std::ffi::OsString,
    str,
    String
);

impl PathArg for std::ffi::CStr {
    fn to_path(&self) -> std::borrow::Cow<'_, std::path::Path> {
        let text = self.to_string_lossy().into_owned();
        std::borrow::Cow::Owned(std::path::PathBuf::from(text))
    }
}

impl PathArg for std::ffi::CString {
    fn to_path(&self) -> std::borrow::Cow<'_, std::path::Path> {
        self.as_c_str().to_path()
    }
}

impl<T: PathArg + ?Sized> PathArg for &T {
    fn to_path(&self) -> std::borrow::Cow<'_, std::path::Path> {
        (**self).to_path()
    }
}

/// unlink_each_loop's renewal points an engine's descriptor number at a new file (dup3);
/// Windows handles are not numbers that can be re-pointed, so it is refused.
pub fn redirect(
    _new: crate::platform::fd::BorrowedFd<'_>,
    _held: crate::platform::fd::BorrowedFd<'_>,
) -> std::io::Result<()> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "unlink_each_loop: Linux only (a held handle cannot be pointed at a new file)",
    ))
}

/// posix_fallocate(3): the file grown to `len` with its space allocated (as fallocate).
pub fn posix_fallocate(fd: crate::platform::fd::BorrowedFd<'_>, len: u64) -> io::Result<()> {
    fs::fallocate(fd, fs::FallocateFlags::empty(), 0, len)
}

/// Short names of direct I/O, of write-through (`sync=dsync`) and of both, for tables: the
/// CreateFile flags that do them.
pub const CACHE_FLAG_NAMES: (&str, &str, &str) = (
    "NO_BUFFERING",
    "WRITE_THROUGH",
    "NO_BUFFERING+WRITE_THROUGH",
);

/// The calls that give a new file its size, as a report names them: NTFS allocates the
/// clusters up to a file's end (it reads zeros there), so a file made long is not sparse.
pub const LAYOUT_CALLS: crate::platform::LayoutCalls = crate::platform::LayoutCalls {
    native: "SetFileInformationByHandle: FileAllocationInfo and FileEndOfFileInfo of {size}",
    keep: "SetFileInformationByHandle: FileAllocationInfo of {size}, size 0",
    posix: "SetFileInformationByHandle: FileAllocationInfo and FileEndOfFileInfo of {size}",
    truncate: "SetFileInformationByHandle: FileEndOfFileInfo to {size}, its clusters allocated \
               and never written",
};

/// Whether a file's cache takes advice: Windows has no posix_fadvise (caching is chosen when a
/// file is opened), so `invalidate` and `fadvise_hint` cannot be done.
pub const CACHE_ADVICE: bool = false;

/// The bytes that separate a path's components, or a file from its streams (`:`).
pub const SEPARATORS: &[u8] = b"/\\:";

/// The name of a directory entry.
pub fn entry_name(e: &fs::DirEntry) -> std::ffi::OsString {
    e.file_name().to_owned()
}

/// The access and the flags CreateFile was given for open(2)'s flags `f` (what `fs::open`
/// passes), by Windows' names: what a report says the files were opened with.
pub fn open_flag_names(f: fs::OFlags) -> Vec<&'static str> {
    let mut v = match f & fs::OFlags::RWMODE {
        fs::OFlags::WRONLY => vec!["GENERIC_WRITE"],
        fs::OFlags::RDWR => vec!["GENERIC_READ", "GENERIC_WRITE"],
        _ => vec!["GENERIC_READ"],
    };
    if f.contains(fs::OFlags::DIRECT) {
        v.push("FILE_FLAG_NO_BUFFERING");
    }
    if f.intersects(O_DSYNC | O_SYNC) {
        v.push("FILE_FLAG_WRITE_THROUGH");
    }
    v
}

/// open(2)'s O_DSYNC: FILE_FLAG_WRITE_THROUGH.
pub const O_DSYNC: fs::OFlags = fs::OFlags::DSYNC;
/// open(2)'s O_SYNC: FILE_FLAG_WRITE_THROUGH too (Windows has one kind).
pub const O_SYNC: fs::OFlags = fs::OFlags::SYNC;

/// Makes `o` open without the file cache (FILE_FLAG_NO_BUFFERING).
pub fn direct(o: &mut std::fs::OpenOptions) {
    use std::os::windows::fs::OpenOptionsExt;
    o.custom_flags(windows_sys::Win32::Storage::FileSystem::FILE_FLAG_NO_BUFFERING);
}

#[cfg(test)]
mod tests {
    use super::fs::OFlags;
    use super::*;

    #[test]
    fn open_flag_names_are_what_createfile_was_given() {
        assert_eq!(
            open_flag_names(OFlags::RDWR | O_DSYNC),
            ["GENERIC_READ", "GENERIC_WRITE", "FILE_FLAG_WRITE_THROUGH"]
        );
        assert_eq!(
            open_flag_names(OFlags::WRONLY | O_SYNC | OFlags::DIRECT),
            [
                "GENERIC_WRITE",
                "FILE_FLAG_NO_BUFFERING",
                "FILE_FLAG_WRITE_THROUGH"
            ]
        );
        assert_eq!(open_flag_names(OFlags::RDONLY), ["GENERIC_READ"]);
    }
}
