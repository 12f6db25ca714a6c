//! fio's file-operation engines, whose measured operation is on a file's name, not its data:
//! `filecreate` creates each file (open with O_CREAT), `filestat` stats it (stat, lstat or
//! statx: fio's `stat_type`), `filedelete` unlinks it; `dircreate`, `dirstat` and
//! `dirdelete` do the same to directories (mkdir, stat, rmdir). Each I/O unit is one
//! operation on the unit's file, and counts its bytes as fio counts its one block per file.
//! The rate of these calls is what SAS WORK libraries and database temporary areas stress.
//!
//! What is not the operation is kept out of its time: [`Engine::prep`] checks, before the
//! clock starts, that a file about to be deleted is still the one the run created, and
//! [`Engine::settle`] takes the identity of a file just created after the clock stops
//! (opening a directory just made to hold it), and closes a file a later pass reopened.

use crate::platform::fd::{AsFd, AsRawFd, OwnedFd};
use std::ffi::CString;
use std::io;
use std::sync::Arc;

use crate::platform::sys::fs::{AtFlags, Mode, OFlags, StatxFlags};

use super::{Engine, FlushCall, IoUnit, Queued, flush_fd};

/// Which stat call `filestat` measures (fio's `stat_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StatCall {
    #[default]
    Stat,
    Lstat,
    /// statx(2) with STATX_ALL on the whole path.
    Statx,
}

impl StatCall {
    pub fn as_str(self) -> &'static str {
        match self {
            StatCall::Stat => "stat",
            StatCall::Lstat => "lstat",
            StatCall::Statx => "statx",
        }
    }
}

/// What the engine `kind` calls per I/O (`stat`: filestat's and dirstat's call), for the
/// report's engine line.
pub fn calls(kind: super::Kind, stat: StatCall) -> String {
    use super::Kind as K;
    match kind {
        K::Filecreate => "one open(O_CREAT|O_EXCL) per file per pass, timed alone (its close is \
                          not); a later pass opens the file the first made"
            .to_string(),
        K::Filestat | K::Dirstat => format!(
            "one {}(2) of each {}'s whole path per pass, no data",
            stat.as_str(),
            if kind == K::Filestat {
                "file"
            } else {
                "directory"
            }
        ),
        K::Filedelete => "one unlink per file, timed alone (the check that the name still holds \
                          the file this run created is not)"
            .to_string(),
        K::Dircreate => "one mkdir (mode 0700) per directory, timed alone (opening it to hold \
                         it afterwards is not)"
            .to_string(),
        _ => "one rmdir per directory, timed alone (the check that the name still holds the \
              directory this run created is not)"
            .to_string(),
    }
}

/// A file as these engines reach it: its directory (held open since the run checked it) and
/// its name there, and its whole path, which stat is given as fio gives it.
#[derive(Debug, Clone)]
pub struct Name {
    pub dir: Arc<OwnedFd>,
    pub name: CString,
    pub path: CString,
}

/// The operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Create,
    Stat(StatCall),
    Delete,
}

/// A file just created: its index and identity (device, inode), for the caller to put on the
/// emergency list, and the stretch that made it, which ends once it is there
/// (`crate::ending`).
pub type Made = (usize, (u64, u64), Option<crate::ending::Making>);

pub struct FileOps {
    op: Op,
    /// The names are directories (dircreate, dirstat, dirdelete).
    dirs: bool,
    names: Vec<Name>,
    /// Per file, held open: filestat's and filedelete's from before the run (the inode cannot
    /// be freed and its number reused meanwhile), filecreate's from its creation on.
    held: Vec<Option<OwnedFd>>,
    /// filedelete: each held file's device and inode, taken once.
    ids: Vec<Option<(u64, u64)>>,
    /// filedelete: what the prepared unit's file turned out to be, if not the one held.
    refused: Option<io::Error>,
    /// filecreate: the file the last operation created, or the descriptor a later pass
    /// opened (closed in `settle`, outside the time).
    created: Option<usize>,
    reopened: Option<OwnedFd>,
    /// filecreate, dircreate: the stretch the prepared unit's create runs in, begun before
    /// its clock; None when the process is ending (nothing is made then).
    making: Option<crate::ending::Making>,
}

impl FileOps {
    /// `held`: one entry per name (`None` for filecreate and dircreate, whose files do not
    /// exist yet). `dirs`: the names are directories.
    pub fn new(op: Op, dirs: bool, names: Vec<Name>, held: Vec<Option<OwnedFd>>) -> Self {
        debug_assert_eq!(names.len(), held.len());
        let ids = held
            .iter()
            .map(|h| {
                let st = crate::platform::sys::fs::fstat(h.as_ref()?).ok()?;
                Some((st.st_dev, st.st_ino))
            })
            .collect();
        if op == Op::Create {
            grow_fd_table(&names);
        }
        FileOps {
            op,
            dirs,
            names,
            held,
            ids,
            refused: None,
            created: None,
            reopened: None,
            making: None,
        }
    }

    fn call(&mut self, file: usize) -> io::Result<()> {
        let n = &self.names[file];
        if self.op == Op::Create && self.held[file].is_none() && self.making.is_none() {
            return Err(io::Error::new(
                io::ErrorKind::Interrupted,
                "not made: iogauge is stopping at once",
            ));
        }
        match self.op {
            Op::Create if self.dirs => {
                // Never through a link: mkdir fails on any name that is taken.
                crate::platform::sys::fs::mkdirat(
                    &*n.dir,
                    n.name.as_c_str(),
                    Mode::from_raw_mode(0o700),
                )?;
                self.created = Some(file);
            }
            Op::Create if self.held[file].is_none() => {
                // New, never through a link: a file that appeared meanwhile is an error.
                let fd = crate::platform::sys::fs::openat(
                    &*n.dir,
                    n.name.as_c_str(),
                    OFlags::RDWR | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW,
                    Mode::from_raw_mode(0o600),
                )?;
                self.held[file] = Some(fd);
                self.created = Some(file);
            }
            Op::Create => {
                // A later pass: fio's open(O_CREAT) finds the file the first pass made.
                let fd = crate::platform::sys::fs::openat(
                    &*n.dir,
                    n.name.as_c_str(),
                    OFlags::RDWR | OFlags::NOFOLLOW,
                    Mode::empty(),
                )?;
                self.reopened = Some(fd);
            }
            Op::Stat(StatCall::Stat) => {
                crate::platform::sys::fs::stat(n.path.as_c_str())?;
            }
            Op::Stat(StatCall::Lstat) => {
                crate::platform::sys::fs::lstat(n.path.as_c_str())?;
            }
            Op::Stat(StatCall::Statx) => {
                crate::platform::sys::fs::statx(
                    crate::platform::sys::fs::CWD,
                    n.path.as_c_str(),
                    AtFlags::empty(),
                    StatxFlags::ALL,
                )?;
            }
            Op::Delete => {
                if let Some(e) = self.refused.take() {
                    return Err(e);
                }
                let how = match self.dirs {
                    true => AtFlags::REMOVEDIR,
                    false => AtFlags::empty(),
                };
                crate::platform::sys::fs::unlinkat(&*n.dir, n.name.as_c_str(), how)?;
            }
        }
        Ok(())
    }
}

/// Makes the process's descriptor table as large as filecreate's held files need before the
/// clock starts: the kernel grows it by doubling, and in a process with several threads each
/// growth waits for an RCU grace period (milliseconds), which would land in a create's time.
fn grow_fd_table(names: &[Name]) {
    let Some(first) = names.first() else { return };
    let Ok(lowest) = crate::platform::sys::io::fcntl_dupfd_cloexec(&*first.dir, 0) else {
        return;
    };
    let want = lowest.as_raw_fd() as usize + names.len();
    let most = crate::platform::process::open_file_limits()
        .0
        .unwrap_or(u64::MAX) as usize;
    // Only the growth matters: the descriptor is closed at once, the table stays.
    let _ = crate::platform::sys::io::fcntl_dupfd_cloexec(
        &*first.dir,
        want.min(most.saturating_sub(1)) as i32,
    );
}

/// Whether the file named `n` is still the inode `id` (device, inode).
fn same_file(n: &Name, id: (u64, u64)) -> io::Result<bool> {
    let now =
        crate::platform::sys::fs::statat(&*n.dir, n.name.as_c_str(), AtFlags::SYMLINK_NOFOLLOW)?;
    Ok((now.st_dev, now.st_ino) == id)
}

impl Engine for FileOps {
    fn prep(&mut self, u: &IoUnit) {
        if self.op == Op::Create && self.held[u.file].is_none() {
            self.making = crate::ending::Making::begin();
        }
        if self.op != Op::Delete {
            return;
        }
        let n = &self.names[u.file];
        // The held descriptor keeps the inode alive: its number cannot name another file.
        self.refused = match self.ids[u.file].map(|id| same_file(n, id)) {
            Some(Ok(true)) => None,
            Some(Ok(false)) => Some(io::Error::other(
                "it is no longer the file this run created (replaced meanwhile); not deleted",
            )),
            Some(Err(e)) => Some(e),
            None => Some(io::Error::other("not a file this run created; not deleted")),
        };
    }

    #[inline]
    fn queue(&mut self, _: u32, u: &mut IoUnit) -> Queued {
        let len = u.len() - u.done;
        Queued::Done(self.call(u.file).map(|()| len))
    }

    fn settle(&mut self) -> Option<Made> {
        self.reopened = None;
        let making = self.making.take();
        let file = self.created.take()?;
        if self.dirs {
            // Held from now on, as filecreate holds the files it opens: the run marks it and
            // removes only this inode, and only while it is empty.
            let n = &self.names[file];
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let fd =
                crate::platform::sys::fs::openat(&*n.dir, n.name.as_c_str(), flags, Mode::empty())
                    .ok()?;
            self.held[file] = Some(fd);
        }
        let st = crate::platform::sys::fs::fstat(self.held[file].as_ref()?).ok()?;
        Some((file, (st.st_dev, st.st_ino), making))
    }

    fn take_made(&mut self) -> Vec<(usize, OwnedFd)> {
        if self.op != Op::Create {
            return Vec::new();
        }
        let held = std::mem::take(&mut self.held);
        held.into_iter()
            .enumerate()
            .filter_map(|(i, fd)| fd.map(|fd| (i, fd)))
            .collect()
    }

    fn flush(&mut self, file: usize, call: FlushCall) -> io::Result<()> {
        match self.held.get(file).and_then(Option::as_ref) {
            Some(fd) => flush_fd(fd.as_fd(), call),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Dir;
    use crate::platform::abi::errno;
    use std::path::Path;

    fn name(dir: &Path, file: &str) -> Name {
        let d =
            crate::platform::sys::fs::open(dir, OFlags::PATH | OFlags::DIRECTORY, Mode::empty())
                .unwrap();
        let path = dir.join(file);
        Name {
            dir: Arc::new(d),
            name: CString::new(file).unwrap(),
            path: CString::new(path.as_os_str().as_encoded_bytes()).unwrap(),
        }
    }

    fn unit(file: usize) -> IoUnit {
        let mut u = IoUnit::new(4096, 1);
        (u.dir, u.file, u.offset, u.done) = (Dir::Read, file, 0, 0);
        u.set_len(4096);
        u
    }

    fn run(e: &mut FileOps, file: usize) -> io::Result<usize> {
        let mut u = unit(file);
        e.prep(&u);
        e.queue(0, &mut u).result()
    }

    #[test]
    fn filecreate_creates_each_file_once_and_a_later_pass_reopens_it() {
        let dir = tempfile::tempdir().unwrap();
        let names = vec![name(dir.path(), "a"), name(dir.path(), "b")];
        let mut e = FileOps::new(Op::Create, false, names, vec![None, None]);
        assert_eq!(run(&mut e, 1).unwrap(), 4096);
        let (file, id, making) = e.settle().expect("b was created");
        assert!(making.is_some(), "made in a stretch");
        let st = std::fs::metadata(dir.path().join("b")).unwrap();
        assert_eq!(
            (file, id),
            (1, crate::platform::testing::dev_ino(&dir.path().join("b")))
        );
        assert_eq!(st.len(), 0, "created empty, as fio's filecreate");
        assert!(!dir.path().join("a").exists());
        // The second pass opens what the first made, and creates nothing.
        run(&mut e, 1).unwrap();
        assert!(e.settle().is_none());
        let taken = e.take_made();
        assert_eq!(taken.len(), 1);
        assert_eq!(taken[0].0, 1);
    }

    #[test]
    fn filecreate_refuses_a_file_that_appeared_and_never_follows_a_link() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("x"), b"user data").unwrap();
        if let Err(e) =
            crate::platform::testing::symlink(dir.path().join("x"), dir.path().join("l"))
        {
            eprintln!("skipped: {e}");
            return;
        }
        let names = vec![name(dir.path(), "x"), name(dir.path(), "l")];
        let mut e = FileOps::new(Op::Create, false, names, vec![None, None]);
        let err = run(&mut e, 0).unwrap_err();
        assert_eq!(crate::engine::errno(&err), Some(errno::EEXIST));
        let err = run(&mut e, 1).unwrap_err();
        assert_eq!(crate::engine::errno(&err), Some(errno::EEXIST));
        assert_eq!(std::fs::read(dir.path().join("x")).unwrap(), b"user data");
        assert!(e.take_made().is_empty());
    }

    #[test]
    fn filestat_stats_with_each_call_and_fails_on_a_missing_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f"), b"x").unwrap();
        for call in [StatCall::Stat, StatCall::Lstat, StatCall::Statx] {
            let names = vec![name(dir.path(), "f"), name(dir.path(), "missing")];
            let mut e = FileOps::new(Op::Stat(call), false, names, vec![None, None]);
            match run(&mut e, 0) {
                Err(e) if crate::engine::errno(&e) == Some(errno::EOPNOTSUPP) => {
                    eprintln!("skipped {call:?}: not on this system ({e})");
                    continue;
                }
                got => assert_eq!(got.unwrap(), 4096, "{call:?}"),
            }
            let err = run(&mut e, 1).unwrap_err();
            assert_eq!(crate::engine::errno(&err), Some(errno::ENOENT), "{call:?}");
        }
    }

    #[test]
    fn filedelete_deletes_only_the_file_it_holds() {
        let dir = tempfile::tempdir().unwrap();
        let open = |f: &str| {
            std::fs::write(dir.path().join(f), b"ours").unwrap();
            OwnedFd::from(std::fs::File::open(dir.path().join(f)).unwrap())
        };
        let held = vec![Some(open("a")), Some(open("b"))];
        let names = vec![name(dir.path(), "a"), name(dir.path(), "b")];
        let mut e = FileOps::new(Op::Delete, false, names, held);
        run(&mut e, 0).unwrap();
        if !crate::platform::testing::deletes_at_once() {
            eprintln!("skipped: a name stays while its file is open on this system");
            return;
        }
        assert!(!dir.path().join("a").exists());
        // b replaced by another file of the same name: left alone.
        std::fs::remove_file(dir.path().join("b")).unwrap();
        std::fs::write(dir.path().join("b"), b"theirs").unwrap();
        let err = run(&mut e, 1).unwrap_err();
        assert!(err.to_string().contains("no longer the file"), "{err}");
        assert_eq!(std::fs::read(dir.path().join("b")).unwrap(), b"theirs");
        // Deleting again what is gone fails as fio's does.
        let err = run(&mut e, 0).unwrap_err();
        assert_eq!(crate::engine::errno(&err), Some(errno::ENOENT));
    }

    #[test]
    fn dircreate_dirstat_dirdelete_make_stat_and_remove_only_their_directories() {
        let dir = tempfile::tempdir().unwrap();
        let names = || vec![name(dir.path(), "d0"), name(dir.path(), "d1")];
        let mut e = FileOps::new(Op::Create, true, names(), vec![None, None]);
        assert_eq!(run(&mut e, 0).unwrap(), 4096);
        let made = e.settle().expect("d0 was made");
        let st = std::fs::symlink_metadata(dir.path().join("d0")).unwrap();
        assert!(st.is_dir());
        let d0 = dir.path().join("d0");
        if crate::platform::testing::POSIX_MODES {
            assert_eq!(
                crate::platform::testing::mode(&d0) & 0o777,
                0o700,
                "fio's mode"
            );
        }
        assert_eq!(
            (made.0, made.1),
            (0, crate::platform::testing::dev_ino(&d0))
        );
        // A taken name fails as mkdir fails, whatever is there (a link is never followed).
        let link = dir.path().join("d1");
        if let Err(e) = crate::platform::testing::symlink(dir.path().join("nonexistent"), &link) {
            eprintln!("a plain file takes the name instead of a link: {e}");
            std::fs::write(&link, b"").unwrap();
        }
        let err = run(&mut e, 1).unwrap_err();
        assert_eq!(crate::engine::errno(&err), Some(errno::EEXIST));
        assert!(e.settle().is_none());
        std::fs::remove_file(dir.path().join("d1")).unwrap();
        let held = e.take_made();
        assert_eq!(held.len(), 1);
        for call in [StatCall::Stat, StatCall::Lstat, StatCall::Statx] {
            let mut s = FileOps::new(Op::Stat(call), true, names(), vec![None, None]);
            match run(&mut s, 0) {
                Err(e) if crate::engine::errno(&e) == Some(errno::EOPNOTSUPP) => continue,
                got => assert_eq!(got.unwrap(), 4096, "{call:?}"),
            }
            let err = run(&mut s, 1).unwrap_err();
            assert_eq!(crate::engine::errno(&err), Some(errno::ENOENT));
        }
        // rmdir of the held directory; a non-empty one (someone's files put there) stays.
        std::fs::create_dir(dir.path().join("d1")).unwrap();
        std::fs::write(dir.path().join("d1/theirs"), b"x").unwrap();
        let d1 = crate::platform::sys::fs::open(
            dir.path().join("d1"),
            OFlags::RDONLY | OFlags::DIRECTORY,
            Mode::empty(),
        )
        .unwrap();
        let mut d = FileOps::new(
            Op::Delete,
            true,
            names(),
            vec![Some(held.into_iter().next().unwrap().1), Some(d1)],
        );
        run(&mut d, 0).unwrap();
        if !crate::platform::testing::deletes_at_once() {
            eprintln!("skipped the rest: a name stays while it is open on this system");
            return;
        }
        assert!(!dir.path().join("d0").exists());
        let err = run(&mut d, 1).unwrap_err();
        assert_eq!(crate::engine::errno(&err), Some(errno::ENOTEMPTY));
        assert_eq!(std::fs::read(dir.path().join("d1/theirs")).unwrap(), b"x");
    }
}
