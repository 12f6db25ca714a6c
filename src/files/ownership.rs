//! What iogauge owns on disk, and how it proves it before writing or removing anything.
//!
//! A file iogauge creates carries the extended attribute `user.iogauge.created`, whose value
//! binds the mark to the file's identity:
//!
//! - `iogauge:new ino=N`: created by a run that has not finished with it yet;
//! - `iogauge:writing ino=N`: a kept file a run is writing again;
//! - `iogauge:kept ino=N size=BYTES mtime=SECS.NANOS`: what the file was when iogauge last
//!   closed it.
//!
//! A file is iogauge's to write or remove only while its mark matches what it is now: the
//! same inode, and for a kept file the same size and modification time. `cat data > file`
//! changes the time, `cp --preserve=all` the inode; either makes the file the user's again.
//!
//! Every open here is by descriptor and never blocks on a FIFO; a symbolic link in the last
//! component is followed only where the caller says the user named one. A path is reopened
//! only to the inode that was checked (device and inode compared on the descriptor), new files
//! are created with `O_CREAT|O_EXCL|O_NOFOLLOW`, and a path is unlinked only while it still
//! names the inode that was created. Report files, logs and results follow one rule: created
//! anew, or replacing a file iogauge wrote, never through a symbolic link, and anything else
//! only when the user said so. Input files (job, parameter, batch files, saved reports) are
//! read only when they are regular files of a bounded size. Nothing here prints or measures.

use crate::platform::fd::{AsFd, BorrowedFd, OwnedFd};
use std::fmt;
use std::io;
use std::path::Path;

use crate::platform::sys::fs::{AtFlags, FileType, Mode, OFlags, Stat, XattrFlags};

/// The extended attribute that marks a file iogauge created.
pub const CREATED_MARK: &str = "user.iogauge.created";

pub use super::emergency::{ending, remove_watched, unwatch, watch};

/// A file's identity: what a path named when it was checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    pub dev: u64,
    pub ino: u64,
}

impl Identity {
    pub fn of(st: &Stat) -> Self {
        Identity {
            dev: st.st_dev,
            ino: st.st_ino,
        }
    }
}

/// What a file's mark says about it now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// No mark: not iogauge's.
    Foreign,
    /// Closed by iogauge and unchanged since.
    Kept,
    /// Created by a run that never finished with it (still running, or killed).
    Unfinished,
    /// A run was writing this kept file again and never closed it (still running, or killed).
    Rewriting,
    /// Marked by iogauge, but the file is not what iogauge left: why.
    Changed(String),
    /// The mark of an iogauge before marks named the file's inode (`1`): it cannot tell
    /// whether the file changed. A write the user allows (`--allow-overwrite`) marks it anew.
    OldMark,
}

impl Verdict {
    /// The mark matches the file: iogauge may write it again (given the write lock).
    pub fn is_ours(&self) -> bool {
        matches!(
            self,
            Verdict::Kept | Verdict::Unfinished | Verdict::Rewriting
        )
    }

    /// Why a file that is not ours may not be written, for an error message.
    pub fn why_not_ours(&self) -> String {
        match self {
            Verdict::Changed(why) => format!("changed since iogauge wrote it ({why})"),
            Verdict::OldMark => "its mark is from an iogauge before marks named the file's \
                                 inode, so whether it changed since cannot be told (writing it \
                                 once with --allow-overwrite marks it anew)"
                .into(),
            _ => "exists and iogauge did not create it".into(),
        }
    }
}

/// Reads the mark of the file open as `fd`, described by `st`, and judges it.
pub fn verdict(fd: BorrowedFd<'_>, st: &Stat) -> Verdict {
    let mut buf = [0u8; 128];
    let n = match crate::platform::sys::fs::fgetxattr(fd, CREATED_MARK, &mut buf[..]) {
        Ok(n) => n,
        Err(crate::platform::sys::io::Errno::RANGE) => {
            return Verdict::Changed("its mark is not one iogauge writes".into());
        }
        Err(_) => return Verdict::Foreign,
    };
    judge(&String::from_utf8_lossy(&buf[..n]), st)
}

/// Judges a mark's text against the file's status.
fn judge(mark: &str, st: &Stat) -> Verdict {
    let mut words = mark.split_whitespace();
    let state = words.next().unwrap_or("");
    let field = |name: &str| -> Option<String> {
        words
            .clone()
            .find_map(|w| w.strip_prefix(name)?.strip_prefix('=').map(str::to_string))
    };
    let ino = field("ino").and_then(|v| v.parse::<u64>().ok());
    let size = field("size").and_then(|v| v.parse::<i64>().ok());
    let mtime = field("mtime");
    if state == "1" {
        return Verdict::OldMark;
    }
    let Some(ino) = ino else {
        return Verdict::Changed("its mark is not one iogauge writes".into());
    };
    if ino != st.st_ino {
        return Verdict::Changed(format!(
            "the mark names inode {ino}, the file is inode {}: a copy or a replacement",
            st.st_ino
        ));
    }
    match state {
        "iogauge:new" => Verdict::Unfinished,
        "iogauge:writing" => Verdict::Rewriting,
        "iogauge:kept" => {
            let now = mtime_text(st);
            if size != Some(st.st_size) {
                Verdict::Changed(format!(
                    "iogauge left {} bytes, it now has {}",
                    size.map_or("?".into(), |s| s.to_string()),
                    st.st_size
                ))
            } else if mtime.as_deref() != Some(now.as_str()) {
                Verdict::Changed(format!(
                    "modified at {now}, after iogauge closed it at {}",
                    mtime.as_deref().unwrap_or("?")
                ))
            } else {
                Verdict::Kept
            }
        }
        _ => Verdict::Changed("its mark is not one iogauge writes".into()),
    }
}

fn mtime_text(st: &Stat) -> String {
    format!("{}.{:09}", st.st_mtime, st.st_mtime_nsec)
}

/// The states a run writes into the mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkState {
    New,
    Writing,
    Kept,
}

/// Writes the mark for the file open as `fd` in `state`, bound to what it is now. A file
/// system without user xattrs leaves the file unmarked (a later run then needs
/// `--allow-overwrite`); that is the error returned.
pub fn set_mark(fd: BorrowedFd<'_>, state: MarkState) -> io::Result<()> {
    let st = crate::platform::sys::fs::fstat(fd)?;
    let text = match state {
        MarkState::New => format!("iogauge:new ino={}", st.st_ino),
        MarkState::Writing => format!("iogauge:writing ino={}", st.st_ino),
        MarkState::Kept => format!(
            "iogauge:kept ino={} size={} mtime={}",
            st.st_ino,
            st.st_size,
            mtime_text(&st)
        ),
    };
    crate::platform::sys::fs::fsetxattr(fd, CREATED_MARK, text.as_bytes(), XattrFlags::empty())?;
    Ok(())
}

/// The safety net under `rawpath`: a path that still carries a byte as a character names
/// another file than the user's, so it is never opened, created or removed.
pub(crate) fn decoded(path: &Path) -> io::Result<()> {
    if crate::rawpath::undecoded(path) {
        return Err(io::Error::other(
            "internal error: this path reached the file system without its raw bytes \
             restored; refusing it (please report)",
        ));
    }
    Ok(())
}

/// Opens an existing `path` with `flags` without blocking (a FIFO put in its place cannot
/// hang the run) and without following a symbolic link in its last component unless
/// `follow`. Returns the descriptor, blocking again, and its status.
pub fn open_existing(path: &Path, flags: OFlags, follow: bool) -> io::Result<(OwnedFd, Stat)> {
    decoded(path)?;
    let mut f = flags | OFlags::CLOEXEC | OFlags::NONBLOCK;
    if !follow {
        f |= OFlags::NOFOLLOW;
    }
    let fd = crate::platform::sys::fs::open(path, f, Mode::empty()).map_err(|e| match e {
        crate::platform::sys::io::Errno::LOOP if !follow => io::Error::other(
            "is a symbolic link; iogauge does not follow one it did not find when it checked \
             the job",
        ),
        e => e.into(),
    })?;
    let st = crate::platform::sys::fs::fstat(&fd)?;
    if matches!(
        FileType::from_raw_mode(st.st_mode),
        FileType::RegularFile | FileType::BlockDevice
    ) {
        // Blocking again: io_uring must not see O_NONBLOCK on a file it reads.
        let now = crate::platform::sys::fs::fcntl_getfl(&fd)?;
        crate::platform::sys::fs::fcntl_setfl(&fd, now - OFlags::NONBLOCK)?;
    }
    Ok((fd, st))
}

/// Why a path could not be reopened to the file that was checked.
#[derive(Debug)]
pub enum ReopenError {
    Io(io::Error),
    /// The path names another file now (replaced, renamed, or a link put in its place).
    Replaced,
}

impl fmt::Display for ReopenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReopenError::Io(e) => write!(f, "{e}"),
            ReopenError::Replaced => f.write_str(
                "it is no longer the file iogauge checked (replaced or renamed meanwhile); \
                 refusing to touch what is there now",
            ),
        }
    }
}

/// Opens `path` again, only if it still names `expected`.
pub fn reopen(
    path: &Path,
    flags: OFlags,
    follow: bool,
    expected: Identity,
) -> Result<OwnedFd, ReopenError> {
    let (fd, st) = open_existing(path, flags, follow).map_err(ReopenError::Io)?;
    if Identity::of(&st) != expected {
        return Err(ReopenError::Replaced);
    }
    Ok(fd)
}

/// Creates `path`, which must not exist (not even as a dangling link), marks it new and
/// returns it open for writing with its identity and its place (the directory held open).
pub fn create_new(path: &Path) -> io::Result<(OwnedFd, Identity, Place)> {
    let place = Place::of(path)?;
    let fd = crate::platform::sys::fs::openat(
        &*place.dir,
        &place.name,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o644),
    )?;
    let st = crate::platform::sys::fs::fstat(&fd)?;
    // Best effort: without user xattrs the file stays unmarked.
    let _ = set_mark(fd.as_fd(), MarkState::New);
    Ok((fd, Identity::of(&st), place))
}

/// Makes the directory `path` (mode 0700, as fio's directory engines make theirs), which must
/// not exist, marks it new and returns it open (read-only) with its identity and its place.
pub fn create_dir_new(path: &Path) -> io::Result<(OwnedFd, Identity, Place)> {
    let place = Place::of(path)?;
    crate::platform::sys::fs::mkdirat(&*place.dir, &place.name, Mode::from_raw_mode(0o700))?;
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = crate::platform::sys::fs::openat(&*place.dir, &place.name, flags, Mode::empty())?;
    let st = crate::platform::sys::fs::fstat(&fd)?;
    // Locked before it is marked, and while it is held open: a later run that finds it marked
    // takes it for one a killed run left only where it can take the lock
    // ([`remove_abandoned_dir`]). Best effort: a directory that cannot be locked (Windows) is
    // never taken for one.
    let _ = crate::platform::sys::fs::flock(
        &fd,
        crate::platform::sys::fs::FlockOperation::NonBlockingLockExclusive,
    );
    let _ = set_mark(fd.as_fd(), MarkState::New);
    Ok((fd, Identity::of(&st), place))
}

/// A directory a run made and never removed (it was killed first), as a later run found it:
/// what that run removed of it, and why it left the rest.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Abandoned {
    /// The files removed, and their sizes together.
    pub removed: u64,
    pub bytes: u64,
    /// Why the directory is still there (something in it is not a file a run made); None:
    /// it is gone.
    pub left: Option<String>,
}

/// Removes the directory `name` in `parent` where a run made it and left it: a directory
/// (never a link) marked as made by a run that never finished with it (`iogauge:new`, its own
/// inode), whose lock no run holds. A run holds its directory's lock from its making
/// ([`create_dir_new`]) to its end, so a directory in use is never touched. Every file in it
/// marked the same way is removed; anything else (a file someone put there, a link, a
/// directory, a device) is left, and the directory with it. None: `name` is no such
/// directory.
pub fn remove_abandoned_dir(parent: BorrowedFd<'_>, name: &std::ffi::OsStr) -> Option<Abandoned> {
    use crate::platform::sys::fs::{FlockOperation, flock, fstat, openat, statat, unlinkat};
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let dir = openat(parent, name, flags, Mode::empty()).ok()?;
    let st = fstat(&dir).ok()?;
    if verdict(dir.as_fd(), &st) != Verdict::Unfinished
        || flock(&dir, FlockOperation::NonBlockingLockExclusive).is_err()
    {
        return None;
    }
    let mut a = Abandoned::default();
    let names = match crate::files::fsinfo::names_in(&dir) {
        Ok(names) => names,
        Err(e) => {
            a.left = Some(format!("cannot list it: {e}"));
            return Some(a);
        }
    };
    let mut others = Vec::new();
    for n in &names {
        match remove_abandoned_file(dir.as_fd(), n) {
            Ok(size) => {
                a.removed += 1;
                a.bytes = a.bytes.saturating_add(size);
            }
            Err(why) => others.push(why.to_string()),
        }
    }
    if !others.is_empty() {
        a.left = Some(others.join("; "));
        return Some(a);
    }
    let still_it = statat(parent, name, AtFlags::SYMLINK_NOFOLLOW)
        .is_ok_and(|now| Identity::of(&now) == Identity::of(&st));
    if !still_it {
        a.left = Some("it was renamed or replaced while it was emptied".into());
    } else if let Err(e) = unlinkat(parent, name, AtFlags::REMOVEDIR) {
        a.left = Some(format!("cannot remove it: {e}"));
    }
    Some(a)
}

/// Removes `name` in `dir` where it is a regular file a run made and left (marked new, its
/// own inode, and no process holds its lock: one being written is locked from its making, see
/// the writer), and gives its size; the error says what it is instead. Nothing else is
/// opened: a FIFO or a device is never opened to read its mark.
pub(crate) fn remove_abandoned_file(
    dir: BorrowedFd<'_>,
    name: &std::ffi::OsStr,
) -> io::Result<u64> {
    use crate::platform::sys::fs::{FlockOperation, flock, fstat, openat, statat, unlinkat};
    let shown = name.to_string_lossy();
    let said = |e: crate::platform::sys::io::Errno| io::Error::other(format!("{shown}: {e}"));
    let not_ours = || io::Error::other(format!("{shown} is not a file a run of iogauge made"));
    let st = statat(dir, name, AtFlags::SYMLINK_NOFOLLOW).map_err(said)?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return Err(not_ours());
    }
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd = openat(dir, name, flags, Mode::empty()).map_err(said)?;
    let now = fstat(&fd).map_err(said)?;
    if Identity::of(&now) != Identity::of(&st) || verdict(fd.as_fd(), &now) != Verdict::Unfinished {
        return Err(not_ours());
    }
    if flock(&fd, FlockOperation::NonBlockingLockExclusive).is_err() {
        return Err(io::Error::other(format!(
            "{shown} is in use (a running iogauge holds its lock)"
        )));
    }
    // Still the file judged: a name taken over meanwhile names another file now.
    let there = statat(dir, name, AtFlags::SYMLINK_NOFOLLOW).map_err(said)?;
    if Identity::of(&there) != Identity::of(&now) {
        return Err(not_ours());
    }
    unlinkat(dir, name, AtFlags::empty()).map_err(said)?;
    Ok(now.st_size as u64)
}

/// How a file of mode `mode` is removed: rmdir for a directory (which fails while anything is
/// in it, so nothing put there is lost), unlink for anything else.
pub(super) fn removal(mode: u32) -> AtFlags {
    match FileType::from_raw_mode(mode) {
        FileType::Directory => AtFlags::REMOVEDIR,
        _ => AtFlags::empty(),
    }
}

/// Where a file is: its directory, held open, and its name there. Removal through it follows
/// the directory if it is renamed while the run goes on. Places in one directory share one
/// descriptor ([`Place::sharing`]): a run of many files holds one per directory, not per file.
#[derive(Debug, Clone)]
pub struct Place {
    pub(super) dir: std::sync::Arc<OwnedFd>,
    pub(super) name: std::ffi::OsString,
}

impl Place {
    /// The file `name` in the directory held open as `dir`.
    pub fn within(dir: std::sync::Arc<OwnedFd>, name: std::ffi::OsString) -> Place {
        Place { dir, name }
    }

    /// The place `path` names now.
    pub fn of(path: &Path) -> io::Result<Place> {
        let (dir, name) = dir_and_name(path)?;
        Ok(Place {
            dir: std::sync::Arc::new(dir),
            name: name.to_owned(),
        })
    }

    /// The directory, held open.
    pub fn dir(&self) -> std::sync::Arc<OwnedFd> {
        std::sync::Arc::clone(&self.dir)
    }

    /// The file's name in the directory.
    pub fn name(&self) -> &std::ffi::OsStr {
        &self.name
    }

    /// This place, holding the descriptor of an equal directory among `dirs` instead of its
    /// own when there is one (else its own joins `dirs`).
    pub fn sharing(mut self, dirs: &mut Vec<(Identity, std::sync::Arc<OwnedFd>)>) -> Place {
        if let Ok(st) = crate::platform::sys::fs::fstat(&*self.dir) {
            let id = Identity::of(&st);
            match dirs.iter().find(|(d, _)| *d == id) {
                Some((_, fd)) => self.dir = std::sync::Arc::clone(fd),
                None => dirs.push((id, std::sync::Arc::clone(&self.dir))),
            }
        }
        self
    }
}

/// Splits `path` into its directory, opened without following its last component's link,
/// and its last component.
pub(super) fn dir_and_name(path: &Path) -> io::Result<(OwnedFd, &std::ffi::OsStr)> {
    decoded(path)?;
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::other("names no file"))?;
    let dir = crate::files::fsinfo::parent_dir(path);
    let dfd = crate::platform::sys::fs::open(
        dir,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    Ok((dfd, name))
}

/// Removes `path` only while it names the file open as `held`. Holding the descriptor keeps
/// that inode alive, so its number cannot have been reused by a replacement. A path that is
/// gone is fine; one that names another file now is left alone, with an error saying so.
pub fn remove_if_same(path: &Path, held: BorrowedFd<'_>) -> io::Result<()> {
    remove_in_place(&Place::of(path)?, held)
}

/// [`remove_if_same`] through the directory held since the file was created: a directory
/// renamed meanwhile is followed. A file that is no longer in its directory but still linked
/// somewhere (moved away while the run went on) is an error that says so.
pub fn remove_in_place(place: &Place, held: BorrowedFd<'_>) -> io::Result<()> {
    let now = crate::platform::sys::fs::fstat(held)?;
    let id = Identity::of(&now);
    let found =
        crate::platform::sys::fs::statat(&*place.dir, &place.name, AtFlags::SYMLINK_NOFOLLOW);
    let st = match found {
        Ok(st) => st,
        Err(crate::platform::sys::io::Errno::NOENT) => {
            // Gone from its directory: removed, or moved away.
            let links = crate::platform::sys::fs::fstat(held).map_or(0, |st| st.st_nlink);
            if links > 0 {
                return Err(io::Error::other(format!(
                    "it was moved away while the run went on ({links} link(s) to it remain \
                     elsewhere, inode {}); left there",
                    id.ino
                )));
            }
            return Ok(());
        }
        Err(e) => return Err(e.into()),
    };
    if Identity::of(&st) != id {
        return Err(io::Error::other(
            "it is no longer the file this run created (removed and replaced meanwhile); left \
             in place",
        ));
    }
    crate::platform::sys::fs::unlinkat(&*place.dir, &place.name, removal(st.st_mode))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_mark_stops_matching_when_the_file_changes() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        let (fd, _, _) = create_new(&p).unwrap();
        crate::platform::sys::io::pwrite(&fd, b"iogauge", 0).unwrap();
        let st = crate::platform::sys::fs::fstat(&fd).unwrap();
        if verdict(fd.as_fd(), &st) == Verdict::Foreign {
            skip_test!("{} has no user xattrs", d.path().display());
            return;
        }
        assert_eq!(verdict(fd.as_fd(), &st), Verdict::Unfinished);
        set_mark(fd.as_fd(), MarkState::Kept).unwrap();
        let st = crate::platform::sys::fs::fstat(&fd).unwrap();
        assert_eq!(verdict(fd.as_fd(), &st), Verdict::Kept);
        // Another size with the same time, another time with the same size, another inode.
        let mut other = st;
        other.st_size += 1;
        assert!(matches!(verdict(fd.as_fd(), &other), Verdict::Changed(w) if w.contains("bytes")));
        let mut other = st;
        other.st_mtime_nsec = (other.st_mtime_nsec + 1) % 1_000_000_000;
        assert!(
            matches!(verdict(fd.as_fd(), &other), Verdict::Changed(w) if w.contains("modified"))
        );
        let mut other = st;
        other.st_ino += 1;
        assert!(matches!(verdict(fd.as_fd(), &other), Verdict::Changed(w) if w.contains("inode")));
    }

    #[test]
    fn old_and_strange_marks_are_not_ours() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        std::fs::write(&p, b"x").unwrap();
        let (fd, st) = open_existing(&p, OFlags::RDONLY, false).unwrap();
        assert_eq!(verdict(fd.as_fd(), &st), Verdict::Foreign);
        for mark in ["1", "iogauge:kept", "iogauge:sideways ino=1", "garbage"] {
            let text = if mark.contains("ino") {
                format!("iogauge:sideways ino={}", st.st_ino)
            } else {
                mark.to_string()
            };
            if crate::platform::sys::fs::fsetxattr(
                &fd,
                CREATED_MARK,
                text.as_bytes(),
                XattrFlags::empty(),
            )
            .is_err()
            {
                skip_test!("no user xattrs here");
                return;
            }
            let v = verdict(fd.as_fd(), &st);
            assert!(
                matches!(v, Verdict::Changed(_)) || (mark == "1" && v == Verdict::OldMark),
                "{mark}: {v:?}"
            );
            assert!(!v.is_ours());
        }
    }

    #[test]
    fn a_path_with_undecoded_bytes_is_never_touched() {
        let d = tempfile::tempdir().unwrap();
        let carried = crate::rawpath::from_bytes(b"t\xe9").unwrap();
        let wrong = d.path().join(&carried);
        assert!(create_new(&wrong).is_err());
        assert!(crate::files::named::write_output(&wrong, b"x", true).is_err());
        assert!(crate::files::named::check_output(&wrong, true).is_err());
        assert!(std::fs::read_dir(d.path()).unwrap().next().is_none());
        let right = d.path().join(crate::rawpath::path(&carried));
        create_new(&right).unwrap();
        assert!(right.exists());
    }

    #[test]
    fn an_abandoned_directory_is_taken_only_unlocked_and_only_what_a_run_made_in_it() {
        let d = tempfile::tempdir().unwrap();
        let parent = crate::platform::sys::fs::open(
            d.path(),
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .unwrap();
        let name = std::ffi::OsStr::new("run.dir");
        let path = d.path().join(name);
        let (held, ..) = create_dir_new(&path).unwrap();
        let st = crate::platform::sys::fs::fstat(&held).unwrap();
        if verdict(held.as_fd(), &st) != Verdict::Unfinished {
            skip_test!("no user xattrs here");
            return;
        }
        let (_f, ..) = create_new(&path.join("made")).unwrap();
        std::fs::write(path.join("made"), b"12345").unwrap();
        // In use (its lock held): never touched.
        assert_eq!(remove_abandoned_dir(parent.as_fd(), name), None);
        assert!(path.join("made").exists());
        // Its run gone: what it made is removed, then the directory.
        drop(held);
        let removed = remove_abandoned_dir(parent.as_fd(), name).unwrap();
        assert_eq!((removed.removed, removed.bytes, removed.left), (1, 5, None));
        assert!(!path.exists());
        // A directory nobody marked, and one holding a file of someone's.
        std::fs::create_dir(&path).unwrap();
        assert_eq!(remove_abandoned_dir(parent.as_fd(), name), None);
        std::fs::remove_dir(&path).unwrap();
        drop(create_dir_new(&path).unwrap());
        std::fs::write(path.join("theirs"), b"keep").unwrap();
        let (_m, ..) = create_new(&path.join("made")).unwrap();
        let found = remove_abandoned_dir(parent.as_fd(), name).unwrap();
        assert_eq!(found.removed, 1);
        assert!(
            found
                .left
                .unwrap()
                .contains("theirs is not a file a run of iogauge made")
        );
        assert_eq!(std::fs::read(path.join("theirs")).unwrap(), b"keep");
        assert!(!path.join("made").exists());
    }

    #[test]
    fn create_new_refuses_an_existing_path_and_a_dangling_link() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        std::fs::write(&p, b"theirs").unwrap();
        assert_eq!(
            create_new(&p).unwrap_err().kind(),
            io::ErrorKind::AlreadyExists
        );
        let link = d.path().join("l");
        if let Err(e) = crate::platform::testing::symlink(d.path().join("nowhere"), &link) {
            eprintln!("skipped: {e}");
            return;
        }
        assert_eq!(
            create_new(&link).unwrap_err().kind(),
            io::ErrorKind::AlreadyExists
        );
        assert!(!d.path().join("nowhere").exists());
    }

    #[test]
    fn reopen_refuses_a_link_or_another_inode_in_the_checked_place() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        let (_, id, _) = create_new(&p).unwrap();
        assert!(reopen(&p, OFlags::RDWR, false, id).is_ok());
        let foreign = d.path().join("foreign");
        std::fs::write(&foreign, b"precious").unwrap();
        std::fs::remove_file(&p).unwrap();
        if let Err(e) = crate::platform::testing::symlink(&foreign, &p) {
            eprintln!("skipped: {e}");
            return;
        }
        assert!(matches!(
            reopen(&p, OFlags::RDWR, false, id),
            Err(ReopenError::Io(_))
        ));
        // Following the link (the user named one) reaches another inode: refused too.
        assert!(matches!(
            reopen(&p, OFlags::RDWR, true, id),
            Err(ReopenError::Replaced)
        ));
        assert_eq!(std::fs::read(&foreign).unwrap(), b"precious");
    }

    #[test]
    fn remove_if_same_leaves_a_replacement_alone() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        let (held, _, _) = create_new(&p).unwrap();
        if !crate::platform::testing::deletes_at_once() {
            skip_test!("a name stays while its file is open on this system");
            return;
        }
        std::fs::remove_file(&p).unwrap();
        std::fs::write(&p, b"theirs").unwrap();
        assert!(remove_if_same(&p, held.as_fd()).is_err());
        assert_eq!(std::fs::read(&p).unwrap(), b"theirs");
        let g = d.path().join("g");
        let (held, _, _) = create_new(&g).unwrap();
        remove_if_same(&g, held.as_fd()).unwrap();
        assert!(!g.exists());
        // Gone already: fine.
        remove_if_same(&g, held.as_fd()).unwrap();
    }
}
