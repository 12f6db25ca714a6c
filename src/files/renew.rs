//! unlink_each_loop's renewal of one file: the file a job holds open is removed (only while
//! its path still names that file: the same proof every removal here takes) and created anew
//! at the same path with the same open flags, and the job's descriptor number is pointed at
//! the new file, so the engine goes on with the number it has. The new file is marked and
//! watched as every file iogauge creates; the run takes it over when the job ends
//! (`Targets::adopt`). Which files may be renewed at all (ones iogauge created or keeps as its
//! own) is checked when the job's files are opened.

use crate::platform::fd::{AsFd, BorrowedFd, OwnedFd};
use std::io;
use std::path::Path;

use crate::platform::sys::fs::{FlockOperation, Mode, OFlags};

use super::ownership::{self, Identity, MarkState, Place};

/// Removes the file `path` names, which must be the one open as `held`, creates a new empty
/// one there with `held`'s flags, and makes `held`'s number refer to it. Returns the new
/// file's own descriptor (for the run to hold, mark and remove) and its identity.
pub fn recreate(path: &Path, held: BorrowedFd<'_>) -> io::Result<(OwnedFd, Identity)> {
    let place = Place::of(path)?;
    let flags = crate::platform::sys::fs::fcntl_getfl(held)?;
    ownership::remove_in_place(&place, held)?;
    // Gone: off the emergency list (its newest entry for this path is the removed file).
    ownership::unwatch(path);
    let making = crate::ending::Making::begin_or_refuse()?;
    let new = crate::platform::sys::fs::openat(
        &*place.dir(),
        place.name(),
        flags | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o644),
    )?;
    let id = Identity::of(&crate::platform::sys::fs::fstat(&new)?);
    ownership::watch(path, id, Some(&place));
    drop(making);
    // Best effort, as for every file iogauge creates: without user xattrs it stays unmarked.
    let _ = ownership::set_mark(new.as_fd(), MarkState::New);
    // A new inode: no one else can hold its write lock yet.
    let _ = crate::platform::sys::fs::flock(&new, FlockOperation::NonBlockingLockExclusive);
    crate::platform::sys::redirect(new.as_fd(), held)?;
    Ok((new, id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_held_number_writes_the_new_file_and_the_old_one_is_gone() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        let (fd, first, _) = ownership::create_new(&p).unwrap();
        crate::platform::sys::io::write(&fd, b"first loop").unwrap();
        if !crate::platform::testing::deletes_at_once() {
            eprintln!("skipped: a name stays while its file is open on this system");
            ownership::unwatch(&p);
            return;
        }
        let (new, id) = match recreate(&p, fd.as_fd()) {
            Err(e) if e.kind() == std::io::ErrorKind::Unsupported => {
                eprintln!("skipped: {e}");
                ownership::unwatch(&p);
                return;
            }
            r => r.unwrap(),
        };
        assert_ne!(id, first, "a new inode");
        // The path names the new, empty file, marked as iogauge's; the held number is it.
        let meta = std::fs::metadata(&p).unwrap();
        assert_eq!(
            (crate::platform::testing::dev_ino(&p).1, meta.len()),
            (id.ino, 0)
        );
        assert_eq!(
            Identity::of(&crate::platform::sys::fs::fstat(&fd).unwrap()),
            id
        );
        let st = crate::platform::sys::fs::fstat(&new).unwrap();
        assert!(ownership::verdict(new.as_fd(), &st).is_ours());
        crate::platform::sys::io::write(&fd, b"second").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"second");
        ownership::unwatch(&p);
    }

    #[test]
    fn a_path_that_names_another_file_now_is_left_alone() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        let (fd, _, _) = ownership::create_new(&p).unwrap();
        // Replaced meanwhile by someone else's file: never removed, nothing created.
        std::fs::remove_file(&p).unwrap();
        std::fs::write(&p, b"someone else's").unwrap();
        assert!(recreate(&p, fd.as_fd()).is_err());
        assert_eq!(std::fs::read(&p).unwrap(), b"someone else's");
        ownership::unwatch(&p);
    }
}
