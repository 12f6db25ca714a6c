//! The one writer of everything iogauge writes besides the test files: reports, logs, sweep
//! points and indexes, verify state journals.
//!
//! A file is written whole or not at all, and never anywhere but where it was named:
//!
//! - its directory is opened once and held ([`OutDir`]); every later step is relative to that
//!   descriptor, so a directory renamed or replaced meanwhile redirects nothing;
//! - the bytes go to a new file of a random name in that directory, created with
//!   `O_CREAT|O_EXCL|O_NOFOLLOW` (a planted link or file at that name fails the create: it is
//!   never opened), written, marked as iogauge's and flushed with `fsync`;
//! - the destination is checked just before the rename: absent, or a regular file that
//!   iogauge wrote and nobody changed since (its mark, see `ownership`), or any regular file
//!   when the user said `--overwrite-output`; never a link, a directory or a device;
//! - then renamed over it (`RENAME_NOREPLACE` where it was absent, so a file that appears in
//!   between is not replaced; a link that appears is replaced as a link, never followed), and
//!   the directory flushed.
//!
//! Any failure removes the temporary file. A process that rewrites its own output (a sweep's
//! index after each point) knows what it wrote even where the file system keeps no marks.
//!
//! A process killed while it writes (SIGKILL, the OOM killer, a power cut) cannot remove its
//! temporary file, which may be as large as a trace. So the file is locked (`flock`) from its
//! making and then marked new; the first write into a directory looks there for temporary
//! names marked new whose lock nobody holds, and removes them ([`take_removed`] says which).
//! Nothing here prints.

use crate::platform::fd::{AsFd, OwnedFd};
use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::platform::sys::fs::{AtFlags, FileType, Mode, OFlags, RenameFlags, Stat};

use crate::files::ownership::{self, Identity, MarkState, Verdict};

/// What this process wrote: identity, size and modification time at the rename.
static WRITTEN: Mutex<Vec<(Identity, i64, i64, i64)>> = Mutex::new(Vec::new());

fn remember(st: &Stat) {
    let mut w = WRITTEN.lock().unwrap_or_else(|e| e.into_inner());
    w.retain(|(id, ..)| *id != Identity::of(st));
    w.push((
        Identity::of(st),
        st.st_size,
        st.st_mtime,
        st.st_mtime_nsec as i64,
    ));
}

fn written_here(st: &Stat) -> bool {
    let w = WRITTEN.lock().unwrap_or_else(|e| e.into_inner());
    w.iter().any(|&(id, size, s, ns)| {
        id == Identity::of(st)
            && size == st.st_size
            && s == st.st_mtime
            && ns == st.st_mtime_nsec as i64
    })
}

/// Why an output may not be written there.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    /// Not iogauge's to replace (a link, a directory, a device, a file it did not write or
    /// that was changed since): what is there, for a message.
    #[error("{0}")]
    NotOurs(String),
    #[error(transparent)]
    Io(#[from] io::Error),
}

impl From<Refusal> for io::Error {
    fn from(r: Refusal) -> Self {
        match r {
            Refusal::Io(e) => e,
            Refusal::NotOurs(why) => io::Error::other(why),
        }
    }
}

/// A directory outputs are written into, held open from the first write to the last.
#[derive(Debug)]
pub struct OutDir {
    fd: OwnedFd,
    /// As the user named it, for messages.
    shown: PathBuf,
}

impl OutDir {
    /// Opens `dir` (a link the user named as the directory is followed: they chose it).
    pub fn open(dir: &Path) -> io::Result<OutDir> {
        ownership::decoded(dir)?;
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        let fd = crate::platform::sys::fs::open(
            dir,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok(OutDir {
            fd,
            shown: dir.to_path_buf(),
        })
    }

    /// The directory as named, for messages.
    pub fn shown(&self) -> &Path {
        &self.shown
    }

    /// The subdirectory `name`, created if missing; a link there is refused, not followed.
    pub fn sub(&self, name: &str) -> io::Result<OutDir> {
        let name = plain_name(OsStr::new(name))?;
        match crate::platform::sys::fs::mkdirat(&self.fd, name, Mode::from_raw_mode(0o755)) {
            Ok(()) | Err(crate::platform::sys::io::Errno::EXIST) => {}
            Err(e) => return Err(e.into()),
        }
        let fd = crate::platform::sys::fs::openat(
            &self.fd,
            name,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| match e {
            crate::platform::sys::io::Errno::LOOP | crate::platform::sys::io::Errno::NOTDIR => {
                io::Error::other(format!(
                    "{}: is not a directory (a link or a file is there); iogauge writes only into \
                 a directory of its own",
                    self.shown.join(name).display()
                ))
            }
            e => e.into(),
        })?;
        Ok(OutDir {
            fd,
            shown: self.shown.join(name),
        })
    }

    /// Whether `name` may be written: absent, or a regular file iogauge wrote and nobody
    /// changed since, or (with `replace`) any regular file. `Ok(true)` when it exists.
    pub fn check(&self, name: &OsStr, replace: bool) -> Result<bool, Refusal> {
        let name = plain_name(name)?;
        let st = match crate::platform::sys::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => st,
            Err(crate::platform::sys::io::Errno::NOENT) => return Ok(false),
            Err(e) => return Err(Refusal::Io(e.into())),
        };
        match FileType::from_raw_mode(st.st_mode) {
            FileType::RegularFile => {}
            FileType::Symlink => {
                return Err(Refusal::NotOurs(
                    "is a symbolic link; iogauge never writes through one or replaces it \
                     (name the file itself)"
                        .into(),
                ));
            }
            FileType::Directory => return Err(Refusal::NotOurs("is a directory".into())),
            _ => return Err(Refusal::NotOurs("exists and is not a regular file".into())),
        }
        if replace || written_here(&st) {
            return Ok(true);
        }
        let fd = crate::platform::sys::fs::openat(
            &self.fd,
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| Refusal::Io(e.into()))?;
        let now = crate::platform::sys::fs::fstat(&fd).map_err(|e| Refusal::Io(e.into()))?;
        if Identity::of(&now) != Identity::of(&st) {
            return Err(Refusal::NotOurs(
                "was replaced while iogauge looked at it".into(),
            ));
        }
        match ownership::verdict(fd.as_fd(), &now) {
            Verdict::Kept => Ok(true),
            v => Err(Refusal::NotOurs(format!(
                "{}; pass --overwrite-output to replace it, or choose another name",
                v.why_not_ours()
            ))),
        }
    }

    /// Writes `bytes` as `name` (see the module's rules).
    pub fn write(&self, name: &OsStr, bytes: &[u8], replace: bool) -> Result<(), Refusal> {
        self.write_open(name, bytes, replace).map(drop)
    }

    /// [`OutDir::write`], returning the file open for appending more (a journal): later
    /// appends reach the inode written here, whatever its name comes to name.
    pub fn write_open(
        &self,
        name: &OsStr,
        bytes: &[u8],
        replace: bool,
    ) -> Result<std::fs::File, Refusal> {
        let name = plain_name(name)?;
        self.check(name, replace)?;
        self.clear_abandoned();
        let making = crate::ending::Making::begin_or_refuse()?;
        let (tmp, fd) = self.create_temp(name)?;
        let watched = self.watch_temp(&tmp, &fd);
        drop(making);
        let done = self.fill_and_rename(&tmp, fd, name, bytes, replace);
        if done.is_err() {
            let _ = crate::platform::sys::fs::unlinkat(&self.fd, &tmp, AtFlags::empty());
        }
        if let Some(key) = watched {
            ownership::unwatch(&key);
        }
        done
    }

    /// Puts the temporary file `tmp`, open as `fd`, on the emergency list while it is written
    /// (a large trace to a slow disk takes a while): a second Ctrl-C meanwhile removes it
    /// rather than leave it hidden beside the output. The list's key, to take it off after.
    fn watch_temp(&self, tmp: &OsStr, fd: &OwnedFd) -> Option<PathBuf> {
        let st = crate::platform::sys::fs::fstat(fd).ok()?;
        let dir = std::sync::Arc::new(self.fd.try_clone().ok()?);
        let key = self.shown.join(tmp);
        let place = ownership::Place::within(dir, tmp.to_os_string());
        ownership::watch(&key, Identity::of(&st), Some(&place));
        Some(key)
    }

    /// Removes the temporary files an earlier process left in this directory when it was
    /// killed while it wrote an output: a name this writer draws, a regular file marked new
    /// with its own inode, whose lock no process holds (one being written is locked from its
    /// making). Looked for once per directory per process: a sweep writing a file per point
    /// reads its directory once.
    fn clear_abandoned(&self) {
        let Ok(st) = crate::platform::sys::fs::fstat(&self.fd) else {
            return;
        };
        {
            let mut seen = CLEARED.lock().unwrap_or_else(|e| e.into_inner());
            if seen.iter().any(|(id, _)| *id == Identity::of(&st)) {
                return;
            }
            // Held open, so that no directory made later can have its number.
            if let Ok(held) = self.fd.try_clone() {
                seen.push((Identity::of(&st), held));
            }
        }
        let Ok(names) = self.names() else {
            return;
        };
        for n in names {
            let Some(output) = output_of_temp(&n) else {
                continue;
            };
            if let Ok(bytes) = ownership::remove_abandoned_file(self.fd.as_fd(), &n) {
                let mut r = REMOVED.lock().unwrap_or_else(|e| e.into_inner());
                r.push(Removed {
                    path: self.shown.join(&n),
                    output,
                    bytes,
                });
            }
        }
    }

    /// A new file of a random name beside `name`, locked and marked new (see
    /// [`OutDir::clear_abandoned`]).
    fn create_temp(&self, name: &OsStr) -> io::Result<(OsString, OwnedFd)> {
        for _ in 0..16 {
            let mut tmp = OsString::from(".");
            // Kept short: a name near NAME_MAX still has room for the suffix.
            let stem = &name.as_encoded_bytes()[..name.len().min(200)];
            tmp.push(crate::rawpath::os_from_bytes(stem.to_vec()));
            tmp.push(format!(".iogauge-{:016x}", random_u64()));
            match crate::platform::sys::fs::openat(
                &self.fd,
                &tmp,
                OFlags::RDWR | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::from_raw_mode(0o644),
            ) {
                Ok(fd) => {
                    // Locked before it is marked: a file marked new and unlocked is one whose
                    // writer is gone. Best effort, as the mark: without either it is never
                    // taken for an abandoned one.
                    let locked = crate::platform::sys::fs::flock(
                        &fd,
                        crate::platform::sys::fs::FlockOperation::NonBlockingLockExclusive,
                    );
                    if locked.is_ok() {
                        let _ = ownership::set_mark(fd.as_fd(), MarkState::New);
                    }
                    return Ok((tmp, fd));
                }
                Err(crate::platform::sys::io::Errno::EXIST) => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Err(io::Error::other(
            "could not find a free temporary name in 16 tries",
        ))
    }

    fn fill_and_rename(
        &self,
        tmp: &OsStr,
        fd: OwnedFd,
        name: &OsStr,
        bytes: &[u8],
        replace: bool,
    ) -> Result<std::fs::File, Refusal> {
        let mut off = 0;
        while off < bytes.len() {
            off += crate::platform::sys::io::pwrite(&fd, &bytes[off..], off as u64)
                .map_err(io::Error::from)?;
        }
        // Best effort: without user xattrs the file stays unmarked (this process still knows
        // it wrote it).
        let _ = ownership::set_mark(fd.as_fd(), MarkState::Kept);
        crate::platform::sys::fs::fsync(&fd).map_err(io::Error::from)?;
        for _ in 0..4 {
            let exists = self.check(name, replace)?;
            let flags = if exists {
                RenameFlags::empty()
            } else {
                RenameFlags::NOREPLACE
            };
            match crate::platform::sys::fs::renameat_with(&self.fd, tmp, &self.fd, name, flags) {
                Ok(()) => return self.placed(fd),
                // Created meanwhile: judge what is there now.
                Err(crate::platform::sys::io::Errno::EXIST) => continue,
                Err(crate::platform::sys::io::Errno::INVAL) if !exists => {
                    // No RENAME_NOREPLACE here (an old kernel or file system): link(2) never
                    // replaces, then the temporary name goes.
                    crate::platform::sys::fs::linkat(
                        &self.fd,
                        tmp,
                        &self.fd,
                        name,
                        AtFlags::empty(),
                    )
                    .map_err(io::Error::from)?;
                    let _ = crate::platform::sys::fs::unlinkat(&self.fd, tmp, AtFlags::empty());
                    return self.placed(fd);
                }
                Err(e) => return Err(Refusal::Io(e.into())),
            }
        }
        Err(Refusal::NotOurs(
            "kept being created by another process while iogauge wrote it; left alone".into(),
        ))
    }

    /// The file now in place: remembered as this process's, its directory flushed, and
    /// returned open at its end for appending.
    fn placed(&self, fd: OwnedFd) -> Result<std::fs::File, Refusal> {
        let st = crate::platform::sys::fs::fstat(&fd).map_err(io::Error::from)?;
        remember(&st);
        let _ = crate::platform::sys::fs::fsync(&self.fd);
        let mut f = std::fs::File::from(fd);
        std::io::Seek::seek(&mut f, std::io::SeekFrom::End(0))?;
        Ok(f)
    }

    /// Reads `name`, a regular file (never through a link) of at most `max` bytes.
    pub fn read(&self, name: &OsStr, max: u64) -> io::Result<Vec<u8>> {
        use std::io::Read;
        let name = plain_name(name)?;
        let fd = crate::platform::sys::fs::openat(
            &self.fd,
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let st = crate::platform::sys::fs::fstat(&fd)?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err(io::Error::other("not a regular file"));
        }
        if st.st_size as u64 > max {
            return Err(io::Error::other(format!("larger than {} MiB", max >> 20)));
        }
        let mut bytes = Vec::new();
        std::fs::File::from(fd).take(max).read_to_end(&mut bytes)?;
        Ok(bytes)
    }

    /// The names in this directory (`.` and `..` aside).
    pub fn names(&self) -> io::Result<Vec<OsString>> {
        crate::files::fsinfo::names_in(&self.fd)
    }
}

/// A last path component: no separator (`/`; on Windows `\\` and `:` too), not empty, not `.`
/// or `..`.
fn plain_name(name: &OsStr) -> io::Result<&OsStr> {
    let b = name.as_encoded_bytes();
    let separator = b
        .iter()
        .any(|c| crate::platform::sys::SEPARATORS.contains(c));
    if b.is_empty() || b == b"." || b == b".." || separator || b.contains(&0) {
        return Err(io::Error::other(format!(
            "{:?} is not a file name",
            name.to_string_lossy()
        )));
    }
    Ok(name)
}

/// The output a temporary file of this writer's naming (`.NAME.iogauge-` and 16 hex digits)
/// was to become: NAME. None for any other name.
fn output_of_temp(name: &OsStr) -> Option<OsString> {
    let b = name.as_encoded_bytes().strip_prefix(b".")?;
    let (stem, hex) = b.split_at_checked(b.len().checked_sub(16)?)?;
    let stem = stem.strip_suffix(b".iogauge-")?;
    let lower_hex = |c: &u8| c.is_ascii_digit() || (b'a'..=b'f').contains(c);
    if stem.is_empty() || !hex.iter().all(lower_hex) {
        return None;
    }
    Some(crate::rawpath::os_from_bytes(stem.to_vec()))
}

/// A temporary file an earlier process left (killed while it wrote `output`), removed here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removed {
    pub path: PathBuf,
    pub output: OsString,
    pub bytes: u64,
}

/// The directories this process has cleared of abandoned temporary files, each held open (a
/// descriptor per directory written into: a directory removed meanwhile keeps its inode, whose
/// number a new one would otherwise take and be passed over).
static CLEARED: Mutex<Vec<(Identity, OwnedFd)>> = Mutex::new(Vec::new());
static REMOVED: Mutex<Vec<Removed>> = Mutex::new(Vec::new());

/// The abandoned temporary files this process removed since the last call, for the door to
/// report.
pub fn take_removed() -> Vec<Removed> {
    std::mem::take(&mut *REMOVED.lock().unwrap_or_else(|e| e.into_inner()))
}

/// 64 random bits: the standard library's hash keys (drawn from the system's random source
/// once per thread, then stepped) over the clock and the process id, so two names drawn in a
/// row differ and two processes' differ.
fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    h.write_u128(t);
    h.write_u32(std::process::id());
    h.finish()
}

/// Writes `path` through its directory's [`OutDir`].
pub fn write_path(path: &Path, bytes: &[u8], replace: bool) -> Result<(), Refusal> {
    write_path_open(path, bytes, replace).map(drop)
}

/// [`write_path`], returning the file open for appending.
pub fn write_path_open(path: &Path, bytes: &[u8], replace: bool) -> Result<std::fs::File, Refusal> {
    let (dir, name) = split(path)?;
    dir.write_open(name, bytes, replace)
}

/// Checks that `path` may be written (see [`OutDir::check`]).
pub fn check_path(path: &Path, replace: bool) -> Result<bool, Refusal> {
    let (dir, name) = split(path)?;
    dir.check(name, replace)
}

fn split(path: &Path) -> io::Result<(OutDir, &OsStr)> {
    if path.is_dir() {
        return Err(io::Error::other("is a directory"));
    }
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::other("names no file"))?;
    let last = path.as_os_str().as_encoded_bytes().last();
    if last.is_some_and(|c| crate::platform::sys::SEPARATORS.contains(c) && *c != b':') {
        return Err(io::Error::other("names a directory, not a file"));
    }
    Ok((OutDir::open(crate::files::fsinfo::parent_dir(path))?, name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::testing::symlink;

    #[test]
    fn writes_whole_and_replaces_only_its_own() {
        let d = tempfile::tempdir().unwrap();
        let out = OutDir::open(d.path()).unwrap();
        out.write(OsStr::new("r.json"), b"one", false).unwrap();
        assert_eq!(std::fs::read(d.path().join("r.json")).unwrap(), b"one");
        let (fd, st) =
            crate::files::ownership::open_existing(&d.path().join("r.json"), OFlags::RDONLY, false)
                .unwrap();
        if crate::files::ownership::verdict(fd.as_fd(), &st)
            == crate::files::ownership::Verdict::Foreign
        {
            eprintln!("skipped: no user xattrs here, so no output carries iogauge's mark");
            return;
        }
        out.write(OsStr::new("r.json"), b"two!", false).unwrap();
        assert_eq!(std::fs::read(d.path().join("r.json")).unwrap(), b"two!");
        // Edited by the user: no longer ours.
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(d.path().join("r.json"), b"mine").unwrap();
        let e = out.write(OsStr::new("r.json"), b"three", false);
        assert!(matches!(e, Err(Refusal::NotOurs(_))), "{e:?}");
        assert_eq!(std::fs::read(d.path().join("r.json")).unwrap(), b"mine");
        out.write(OsStr::new("r.json"), b"three", true).unwrap();
        assert_eq!(std::fs::read(d.path().join("r.json")).unwrap(), b"three");
        // No temporary file is left.
        assert_eq!(out.names().unwrap(), vec![OsString::from("r.json")]);
    }

    #[test]
    fn a_link_is_never_followed_or_replaced() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        if let Err(e) = symlink(&victim, d.path().join("out.txt")) {
            eprintln!("skipped: {e}");
            return;
        }
        let out = OutDir::open(d.path()).unwrap();
        for replace in [false, true] {
            assert!(out.write(OsStr::new("out.txt"), b"x", replace).is_err());
        }
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert!(
            std::fs::symlink_metadata(d.path().join("out.txt"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
        // A link in a subdirectory's place is refused too.
        if let Err(e) = symlink(d.path(), d.path().join("points")) {
            eprintln!("skipped: {e}");
            return;
        }
        assert!(out.sub("points").is_err());
    }

    #[test]
    fn the_held_directory_is_followed_when_renamed() {
        if !crate::platform::testing::renames_followed() {
            eprintln!("skipped: a held directory is not followed through a rename here (Wine)");
            return;
        }
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("a")).unwrap();
        let out = OutDir::open(&d.path().join("a")).unwrap();
        std::fs::rename(d.path().join("a"), d.path().join("b")).unwrap();
        std::fs::create_dir(d.path().join("a")).unwrap();
        out.write(OsStr::new("f"), b"x", false).unwrap();
        assert!(d.path().join("b/f").is_file());
        assert!(!d.path().join("a/f").exists());
    }

    #[test]
    fn a_killed_writers_temporary_file_goes_at_the_next_write_there_and_nothing_else() {
        let d = tempfile::tempdir().unwrap();
        let out = OutDir::open(d.path()).unwrap();
        // Written by a process that was killed: its descriptor (and lock) gone.
        let (left, fd) = out.create_temp(OsStr::new("t.iogtrace")).unwrap();
        crate::platform::sys::io::pwrite(&fd, &[7u8; 5000], 0).unwrap();
        let st = crate::platform::sys::fs::fstat(&fd).unwrap();
        if ownership::verdict(fd.as_fd(), &st) != Verdict::Unfinished {
            eprintln!("skipped: no user xattrs here, so no temporary file carries a mark");
            return;
        }
        drop(fd);
        // Being written by a live process: locked.
        let (busy, held) = out.create_temp(OsStr::new("r.json")).unwrap();
        // Not this writer's: a user's file of such a name, a link, a name almost like it.
        let user = ".u.iogauge-0123456789abcdef";
        std::fs::write(d.path().join(user), b"mine").unwrap();
        std::fs::write(d.path().join("victim"), b"precious").unwrap();
        let link = ".l.iogauge-0123456789abcdef";
        if let Err(e) = symlink(d.path().join("victim"), d.path().join(link)) {
            eprintln!("skipped: {e}");
            return;
        }
        let (near, near_fd) = out.create_temp(OsStr::new("n")).unwrap();
        drop(near_fd);
        let near_name = format!("{}x", near.to_string_lossy());
        std::fs::rename(d.path().join(&near), d.path().join(&near_name)).unwrap();

        OutDir::open(d.path())
            .unwrap()
            .write(OsStr::new("r.json"), b"{}", false)
            .unwrap();
        let mut names = out.names().unwrap();
        names.sort();
        let mut want: Vec<OsString> = [&*busy, OsStr::new(link), OsStr::new(&near_name)]
            .into_iter()
            .chain([OsStr::new(user), OsStr::new("r.json"), OsStr::new("victim")])
            .map(OsStr::to_os_string)
            .collect();
        want.sort();
        assert_eq!(names, want);
        let removed: Vec<_> = take_removed()
            .into_iter()
            .filter(|r| r.path.starts_with(d.path()))
            .collect();
        assert_eq!(
            removed,
            vec![Removed {
                path: d.path().join(&left),
                output: "t.iogtrace".into(),
                bytes: 5000
            }]
        );
        drop(held);
    }

    #[test]
    fn temporary_names_are_told_from_others() {
        let of = |n: &str| output_of_temp(OsStr::new(n)).map(|o| o.into_string().unwrap());
        assert_eq!(
            of(".r.json.iogauge-0123456789abcdef").as_deref(),
            Some("r.json")
        );
        assert_eq!(of("..iogauge-0123456789abcdef"), None);
        assert_eq!(of(".r.iogauge-0123456789ABCDEF"), None);
        assert_eq!(of(".r.iogauge-0123456789abcde"), None);
        assert_eq!(of("r.iogauge-0123456789abcdef"), None);
        assert_eq!(of(".r.iogauge0123456789abcdef"), None);
        assert_eq!(of(".r"), None);
    }

    #[test]
    fn a_journal_appends_to_the_file_written() {
        use std::io::Write;
        let d = tempfile::tempdir().unwrap();
        let out = OutDir::open(d.path()).unwrap();
        let mut f = out.write_open(OsStr::new("j"), b"head", false).unwrap();
        f.write_all(b"+rec").unwrap();
        assert_eq!(std::fs::read(d.path().join("j")).unwrap(), b"head+rec");
    }
}
