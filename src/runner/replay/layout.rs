//! Where a replay's files live: a directory of its own, made new under the user's
//! `--directory` (never the recorded paths), holding one file per file of the trace. Files
//! that existed when the program first opened them are laid out before the replay: data
//! written up to the furthest byte the trace touches, then the file extended (sparse) to its
//! recorded size, then its cached pages dropped so the replay starts cold — unless the
//! program's reads of it looked served from memory (`trace::stats::read_from_memory`: a
//! library, a file it had just written), which stays cached as it was. Files the program
//! created are created by the replay, at the call that created them. Everything in the
//! directory, and the directory, is removed at the end (and by a second Ctrl-C).

use crate::platform::fd::{AsFd, OwnedFd};
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

use crate::platform::sys::fs::{AtFlags, Mode, OFlags};

use crate::files::ownership;
use crate::trace::recording::Recording;

/// The replay's directory, held open, and its files' names there.
pub struct Layout {
    pub path: PathBuf,
    pub dir: OwnedFd,
    /// Per file of the trace: its name in the directory (a replayed rename changes it).
    names: std::sync::Mutex<Vec<OsString>>,
    /// Per file: the name it was laid out under (its own: no other file's is the same).
    laid_out_as: Vec<OsString>,
    /// Bytes written to lay the files out.
    pub laid_out: u64,
    /// Per file: the inode on the emergency removal list under its name, if any, and whether
    /// the replay marked it (one it made).
    watched: std::sync::Mutex<Vec<Option<(ownership::Identity, bool)>>>,
}

/// How much a layout writes, and the free space it needs.
pub fn bytes_needed(r: &Recording) -> u64 {
    r.footer
        .files
        .iter()
        .filter_map(|f| f.size_at_open.map(|s| data_end(s, f.extent)))
        .fold(0, u64::saturating_add)
}

/// Data is written up to the furthest byte touched (rounded up to 1 MiB), never past the size.
fn data_end(size: u64, extent: u64) -> u64 {
    size.min(extent.div_ceil(1 << 20) << 20)
}

/// Makes the directory `parent/name` (which must not exist) and lays out the trace's files
/// there. On an error, what was made is removed.
/// `stop` turning true ends the layout (Interrupted), what was made removed.
pub fn make(
    parent: &Path,
    name: &str,
    r: &Recording,
    stop: &std::sync::atomic::AtomicBool,
) -> io::Result<Layout> {
    let making = crate::ending::Making::begin_or_refuse()?;
    let (path, (dir, id, place)) = new_dir(parent, name)?;
    ownership::watch(&path, id, Some(&place));
    drop(making);
    let names: Vec<OsString> = r
        .footer
        .files
        .iter()
        .enumerate()
        .map(|(i, f)| OsString::from(crate::trace::export::replay_name(i, &f.path)))
        .collect();
    let mut layout = Layout {
        path,
        dir,
        watched: std::sync::Mutex::new(vec![None; names.len()]),
        laid_out_as: names.clone(),
        names: std::sync::Mutex::new(names),
        laid_out: 0,
    };
    let chunk = vec![0x5au8; 1 << 20];
    let warm = crate::trace::stats::read_from_memory(r);
    for (i, f) in r.footer.files.iter().enumerate() {
        let Some(size) = f.size_at_open else { continue };
        let data = data_end(size, f.extent);
        if let Err(e) = lay_out(&layout, i, (size, data), warm[i], (&chunk, stop)) {
            let _ = layout.remove();
            return Err(e);
        }
        layout.laid_out += data_end(size, f.extent);
    }
    Ok(layout)
}

/// The directories in `parent` that earlier replays made and left (killed before their end:
/// SIGKILL, the OOM killer, a lost machine), removed here, each with what became of it. A
/// replay's directory is named `iogauge-….replay`, marked as iogauge's and locked while the
/// replay runs ([`ownership::create_dir_new`]); only such a directory whose lock is free is
/// touched, and in it only the files a replay made (`ownership::remove_abandoned_dir`).
pub fn leftovers(parent: &Path) -> Vec<(PathBuf, ownership::Abandoned)> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let Ok(dir) = crate::platform::sys::fs::open(parent, flags, Mode::empty()) else {
        return Vec::new();
    };
    let Ok(names) = crate::files::fsinfo::names_in(&dir) else {
        return Vec::new();
    };
    let names: Vec<OsString> = names
        .into_iter()
        .filter(|n| {
            let b = n.as_encoded_bytes();
            b.starts_with(b"iogauge-") && b.ends_with(b".replay")
        })
        .collect();
    names
        .into_iter()
        .filter_map(|n| {
            let found = ownership::remove_abandoned_dir(dir.as_fd(), &n)?;
            Some((parent.join(n), found))
        })
        .collect()
}

/// The replay's directory, made new in `parent` as `name`, or where another run made that
/// (two replays started in the same second), `name` with `-2`, `-3`… before its extension.
fn new_dir(
    parent: &Path,
    name: &str,
) -> io::Result<(PathBuf, (OwnedFd, ownership::Identity, ownership::Place))> {
    let (stem, ext) = name.rsplit_once('.').unwrap_or((name, ""));
    let mut k = 1;
    loop {
        let path = match k {
            1 => parent.join(name),
            _ => parent.join(format!("{stem}-{k}.{ext}").trim_end_matches('.')),
        };
        match ownership::create_dir_new(&path) {
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && k < 1000 => k += 1,
            made => return made.map(|m| (path, m)),
        }
    }
}

/// Lays file `i` out: `data` bytes written, extended to `size`, synced; its pages dropped
/// from the cache unless `warm` (the program read it from memory).
fn lay_out(
    l: &Layout,
    i: usize,
    (size, data): (u64, u64),
    warm: bool,
    (chunk, stop): (&[u8], &std::sync::atomic::AtomicBool),
) -> io::Result<()> {
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let making = crate::ending::Making::begin_or_refuse()?;
    let fd =
        crate::platform::sys::fs::openat(&l.dir, l.name(i), flags, Mode::from_raw_mode(0o644))?;
    let _ = ownership::set_mark(fd.as_fd(), ownership::MarkState::New);
    l.watch_as(i, &fd, true);
    drop(making);
    let mut at = 0;
    while at < data {
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(io::ErrorKind::Interrupted.into());
        }
        let n = (data - at).min(chunk.len() as u64) as usize;
        let w = crate::platform::sys::io::pwrite(&fd, &chunk[..n], at)?;
        at += w as u64;
    }
    crate::platform::sys::fs::ftruncate(&fd, size)?;
    crate::platform::sys::fs::fdatasync(&fd)?;
    if !warm {
        let _ = crate::platform::sys::fs::fadvise(
            &fd,
            0,
            None,
            crate::platform::sys::fs::Advice::DontNeed,
        );
    }
    Ok(())
}

/// The name of its own a file laid out as `base` takes, now named `from`, when the program
/// renamed it to a name no file of the trace had: `base~renamed`, or `base` again where it is
/// at `base~renamed` — one of two names however often it is renamed so (a name that grew at
/// each rename would pass the longest a directory takes).
fn away(base: &OsString, from: &OsString) -> OsString {
    let mut aside = base.clone();
    aside.push("~renamed");
    if *from == aside { base.clone() } else { aside }
}

impl Layout {
    fn names(&self) -> std::sync::MutexGuard<'_, Vec<OsString>> {
        self.names.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// File `i`'s name here now.
    pub fn name(&self, i: usize) -> OsString {
        self.names()[i].clone()
    }

    /// Opens file `i` of the trace here (`O_CREAT` when `create`), never through a link. An
    /// open that may have created the file is followed by [`Layout::made`], outside the
    /// call's clock. Nothing is created once the process is ending at once (a second Ctrl-C,
    /// a bug): a thread still replaying would make a file after its removal (EINTR).
    pub fn open(&self, i: usize, flags: OFlags, create: bool) -> io::Result<OwnedFd> {
        let mut f = flags | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        if create {
            // The caller's stretch (`crate::ending::Making`) began, so this is a backstop.
            if ownership::ending() {
                return Err(io::ErrorKind::Interrupted.into());
            }
            f |= OFlags::CREATE;
        }
        Ok(crate::platform::sys::fs::openat(
            &self.dir,
            self.name(i),
            f,
            Mode::from_raw_mode(0o644),
        )?)
    }

    /// File `i`, open as `fd` after an open that may have created it: a file the replay made
    /// (one the program created, or a laid-out one it made again after the program's
    /// unlink), each new inode, is marked as iogauge's and put on the emergency list under
    /// its name in place of the one before — a second Ctrl-C removes it, and a later replay
    /// does with the directory if this one is killed.
    pub fn made(&self, i: usize, fd: &OwnedFd) {
        let Ok(st) = crate::platform::sys::fs::fstat(fd) else {
            return;
        };
        let id = ownership::Identity::of(&st);
        let mut w = self.watched.lock().unwrap_or_else(|e| e.into_inner());
        match w[i] {
            Some((had, marked)) if had == id => {
                if marked {
                    return;
                }
            }
            before => {
                let path = self.path.join(self.name(i));
                if before.is_some() {
                    ownership::unwatch(&path);
                }
                ownership::watch(&path, id, None);
            }
        }
        let _ = ownership::set_mark(fd.as_fd(), ownership::MarkState::New);
        w[i] = Some((id, true));
    }

    /// Renames file `i` (the program's rename, replayed): onto file `over`'s name where the
    /// program's replaced a file of the trace (that file is gone, as it was), else to a name
    /// of its own here. The file keeps its place in the trace; its later opens use the new
    /// name, and the end's removal finds it there. From the rename until the emergency list
    /// has the file under its new name is a stretch an ending waits for (`ending::Making`):
    /// removed in it, the list's old name would find nothing, and the file and the replay's
    /// directory would stay.
    pub fn rename(&self, i: usize, over: Option<usize>) -> io::Result<()> {
        let _renaming = crate::ending::Making::begin_or_refuse()?;
        let mut names = self.names();
        let from = names[i].clone();
        let onto = over.filter(|&g| g != i && g < names.len());
        let to = match onto {
            Some(g) => names[g].clone(),
            None => away(&self.laid_out_as[i], &from),
        };
        crate::platform::sys::fs::renameat_with(
            &self.dir,
            &from,
            &self.dir,
            &to,
            crate::platform::sys::fs::RenameFlags::empty(),
        )?;
        ownership::unwatch(&self.path.join(&from));
        if onto.is_some() {
            // The replaced file's entry: a path is on the list once.
            ownership::unwatch(&self.path.join(&to));
        }
        if let Ok(st) = crate::platform::sys::fs::statat(&self.dir, &to, AtFlags::SYMLINK_NOFOLLOW)
        {
            ownership::watch(&self.path.join(&to), ownership::Identity::of(&st), None);
        }
        names[i] = to;
        Ok(())
    }

    /// Puts file `i`, open as `fd`, on the list a second Ctrl-C removes from (once).
    pub fn watch(&self, i: usize, fd: &OwnedFd) {
        self.watch_as(i, fd, false);
    }

    /// [`Layout::watch`], saying whether the file is marked as iogauge's already.
    fn watch_as(&self, i: usize, fd: &OwnedFd, marked: bool) {
        let mut w = self.watched.lock().unwrap_or_else(|e| e.into_inner());
        if w[i].is_some() {
            return;
        }
        if let Ok(st) = crate::platform::sys::fs::fstat(fd) {
            let id = ownership::Identity::of(&st);
            ownership::watch(&self.path.join(self.name(i)), id, None);
            w[i] = Some((id, marked));
        }
    }

    /// Removes file `i` (the program's unlink, replayed).
    pub fn unlink(&self, i: usize) -> io::Result<()> {
        Ok(crate::platform::sys::fs::unlinkat(
            &self.dir,
            self.name(i),
            AtFlags::empty(),
        )?)
    }

    /// Removes every file of the directory this replay made, then the directory; the first
    /// error that left something there (a file system turned read-only: nothing can go).
    pub fn remove(&self) -> Option<io::Error> {
        let mut first: Option<io::Error> = None;
        for n in self.names().iter() {
            match crate::platform::sys::fs::unlinkat(&self.dir, n, AtFlags::empty()) {
                // A file the program had not made yet, or had unlinked itself.
                Ok(()) | Err(crate::platform::sys::io::Errno::NOENT) => {}
                Err(e) => {
                    first.get_or_insert(e.into());
                }
            }
            ownership::unwatch(&self.path.join(n));
        }
        if let Err(e) = ownership::remove_if_same(&self.path, self.dir.as_fd()) {
            first.get_or_insert(e);
        }
        ownership::unwatch(&self.path);
        first
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_renamed_away_again_and_again_takes_one_of_two_names() {
        let base = OsString::from("f3-log");
        let aside = OsString::from("f3-log~renamed");
        assert_eq!(away(&base, &base), aside);
        assert_eq!(away(&base, &aside), base);
        // Renamed onto another file's name first, then away: its own aside name.
        assert_eq!(away(&base, &OsString::from("f7-data")), aside);
        let mut at = base.clone();
        for _ in 0..1000 {
            at = away(&base, &at);
        }
        assert_eq!(at, base);
    }

    #[test]
    fn two_replays_started_in_the_same_second_take_two_directories() {
        let parent = tempfile::tempdir().unwrap();
        let name = "iogauge-20261207-082028.replay";
        let (first, _) = new_dir(parent.path(), name).unwrap();
        let (second, _) = new_dir(parent.path(), name).unwrap();
        let (third, _) = new_dir(parent.path(), name).unwrap();
        assert_eq!(first, parent.path().join(name));
        assert_eq!(
            second,
            parent.path().join("iogauge-20261207-082028-2.replay")
        );
        assert_eq!(
            third,
            parent.path().join("iogauge-20261207-082028-3.replay")
        );
        assert!(first.is_dir() && second.is_dir() && third.is_dir());
        // Not a directory in the way, nor one that cannot be made: the error, no new name.
        let file = parent.path().join("plain");
        std::fs::write(&file, b"x").unwrap();
        let e = new_dir(&file, name).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotADirectory, "{e}");
    }
}
