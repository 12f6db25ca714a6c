//! What the unit tests ask of the system, the same on both halves: links, a file's identity,
//! allocation and mode.

use std::io;
use std::path::Path;

/// A symbolic link `link` to `target` (a directory link where the target is a directory).
/// Wine's CreateSymbolicLink says it made the link and makes nothing: that is an error here,
/// so a test of links skips (printing why) rather than passing on nothing.
pub fn symlink(target: impl AsRef<Path>, link: impl AsRef<Path>) -> io::Result<()> {
    let (target, link) = (target.as_ref(), link.as_ref());
    match target.is_dir() {
        true => std::os::windows::fs::symlink_dir(target, link)?,
        false => std::os::windows::fs::symlink_file(target, link)?,
    }
    match std::fs::symlink_metadata(link) {
        Ok(m) if m.file_type().is_symlink() => Ok(()),
        _ => Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "this system reported a symbolic link made and made none (Wine)",
        )),
    }
}

/// Whether a removed name goes at once while the file is open elsewhere (POSIX semantics, as
/// Windows 10 1709+ on NTFS), rather than when its last handle closes (Wine, FAT): the tests
/// that put a new file in a removed one's place need the former.
pub fn deletes_at_once() -> bool {
    let d = std::env::temp_dir().join(format!("iogauge-delete-probe-{}", std::process::id()));
    let Ok(held) = std::fs::File::create(&d) else {
        return false;
    };
    let _ = super::sys::fs::unlinkat(super::sys::fs::CWD, &d, super::sys::fs::AtFlags::empty());
    let gone = !d.exists();
    drop(held);
    let _ = std::fs::remove_file(&d);
    gone
}

/// The file at `p` (through links): (volume serial, file index).
pub fn dev_ino(p: &Path) -> (u64, u64) {
    let st = super::sys::fs::stat(p).expect("stat");
    (st.st_dev, st.st_ino)
}

/// The 512-byte blocks allocated to the file at `p`.
pub fn blocks(p: &Path) -> u64 {
    super::sys::fs::stat(p).expect("stat").st_blocks as u64
}

/// The permission bits of what `p` names: Windows keeps none (see `sys::fs::Stat`).
pub fn mode(p: &Path) -> u32 {
    super::sys::fs::lstat(p).expect("lstat").st_mode & 0o7777
}

/// Whether a path can hold any bytes (Linux) rather than only text (Windows' UTF-16).
pub const ANY_BYTES_IN_PATHS: bool = false;

/// Whether files carry POSIX permission bits (Linux) or none (Windows).
pub const POSIX_MODES: bool = false;

/// Whether a directory held open is still found by its handle once renamed (Windows answers
/// a handle's current path; Wine the one it was opened at): the tests of a renamed output
/// directory need it.
pub fn renames_followed() -> bool {
    use super::sys::fs::{AtFlags, Mode, OFlags, open, statat};
    let base = std::env::temp_dir().join(format!("iogauge-rename-probe-{}", std::process::id()));
    let (a, b) = (base.join("a"), base.join("b"));
    let _ = std::fs::remove_dir_all(&base);
    if std::fs::create_dir_all(&a).is_err() {
        return false;
    }
    let followed = match open(&a, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()) {
        Ok(d) => std::fs::rename(&a, &b).is_ok() && statat(&d, ".", AtFlags::empty()).is_ok(),
        Err(_) => false,
    };
    let _ = std::fs::remove_dir_all(&base);
    followed
}

/// The CPU the calling thread runs on now: not asked here.
pub fn current_cpu() -> Option<usize> {
    None
}

/// A real-time thread: not made here.
pub fn realtime_thread() -> io::Result<()> {
    Err(io::ErrorKind::Unsupported.into())
}
