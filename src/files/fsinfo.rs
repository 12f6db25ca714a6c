//! Questions to the file system that change nothing: the directory holding a path, the size of
//! a file or block device, and the logical block size of the device below a path. Used by the
//! check, the personalities' parsers, the host description and the device counters alike, so
//! none of them reaches into another's module for it.

use std::fs;
use std::path::{Path, PathBuf};

use crate::platform::sys::fs::{FileType, OFlags, stat};

pub use crate::rawpath::parent_dir;

/// The size in bytes of the file or block device at `p` (a device's from the device itself,
/// where a file's status says 0); `None` when it cannot be opened.
pub fn size_of(p: &Path) -> Option<u64> {
    let st = stat(p).ok()?;
    if FileType::from_raw_mode(st.st_mode) != FileType::BlockDevice {
        return Some(st.st_size as u64);
    }
    let fd = crate::platform::sys::fs::open(
        p,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC,
        crate::platform::sys::fs::Mode::empty(),
    )
    .ok()?;
    crate::platform::sys::fs::seek(&fd, crate::platform::sys::fs::SeekFrom::End(0)).ok()
}

/// The names in the directory open as `dir` (`.` and `..` aside), read through a descriptor
/// of their own so `dir`'s is left as it was.
pub fn names_in(dir: impl crate::platform::fd::AsFd) -> std::io::Result<Vec<std::ffi::OsString>> {
    let fd = crate::platform::sys::fs::openat(
        dir,
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        crate::platform::sys::fs::Mode::empty(),
    )?;
    let mut names = Vec::new();
    for e in crate::platform::sys::fs::Dir::read_from(&fd)? {
        let n = crate::platform::sys::entry_name(&e?);
        if n != "." && n != ".." {
            names.push(n);
        }
    }
    Ok(names)
}

/// Whether `p` is a block device (through links).
pub fn is_block_device(p: &Path) -> bool {
    stat(p).is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::BlockDevice)
}

/// A loop device's backing file and how much of it is allocated, in bytes: `(path, size,
/// allocated)`. `None` for any other device (or where sysfs does not say).
pub fn loop_backing(dev: u64) -> Option<(PathBuf, u64, u64)> {
    let (major, minor) = (
        crate::platform::sys::fs::major(dev),
        crate::platform::sys::fs::minor(dev),
    );
    let name =
        fs::read_to_string(format!("/sys/dev/block/{major}:{minor}/loop/backing_file")).ok()?;
    // The kernel appends " (deleted)" to a backing file removed since.
    let path = PathBuf::from(name.trim_end_matches('\n'));
    let st = stat(&path).ok()?;
    Some((path, st.st_size as u64, st.st_blocks as u64 * 512))
}

/// The logical block size of the device holding `p` (or, when `p` does not exist, its
/// directory) — what direct I/O's offsets and sizes must be multiples of; `None` where there
/// is no block device (tmpfs). The platform's to read: sysfs on Linux, the volume's storage
/// properties on Windows.
pub use crate::platform::host::logical_block_size_at;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parent_dir_of_a_bare_name_is_here() {
        assert_eq!(parent_dir(Path::new("f")), Path::new("."));
        assert_eq!(parent_dir(Path::new("/d/f")), Path::new("/d"));
        assert_eq!(parent_dir(Path::new("/")), Path::new("."));
    }

    #[test]
    fn size_of_a_file_and_of_nothing() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("f");
        std::fs::write(&f, vec![0u8; 5000]).unwrap();
        assert_eq!(size_of(&f), Some(5000));
        assert_eq!(size_of(&d.path().join("nothing")), None);
    }
}
