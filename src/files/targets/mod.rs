//! Files and devices under test: checks a plan against the file system before anything is
//! created (existence, permissions, safety, alignment, free space), creates and lays out test
//! files (fully written, never sparse), opens them with the requested cache flags, drops their
//! cached pages, and removes what it created. It never writes to a file it did not create, or to
//! a block device, unless the user allowed it: files it creates carry iogauge's mark, bound to
//! the file's identity (see `ownership`), so a file kept by an earlier run (`--keep`,
//! SASIOTEST's `-w`, sqlio's test file) and unchanged since may be written again, and anything
//! else needs `--allow-overwrite`. Every path is checked once, by descriptor; later opens reach
//! only the inode that was checked or created, and removal only the inode this run created. A
//! run that writes or creates a file holds an exclusive `flock` on it, so a second writer is
//! refused (as SASIOTEST refuses one) while readers go on. It runs no workload and keeps no
//! statistics. The check before anything is created lives in `check.rs`; this file holds
//! what happens to the files while and after the run.

use crate::plan::job::Fallocate;
use crate::platform::fd::{AsFd, OwnedFd};
use crate::platform::sys::{O_DSYNC, O_SYNC};
use crate::units::human_bytes;
use std::collections::BTreeMap;
use std::io;
use std::num::NonZeroU64;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::platform::sys::fs::OFlags;
use rand_core::{RngCore, SeedableRng};

use crate::engine::AlignedBuf;
use crate::files::ownership::{self, Identity, MarkState, ReopenError, Verdict};
use crate::plan::{EngineKind, JobSpec, SyncMode};

mod advice;
mod check;
mod donor;
mod fill;
mod names;
mod net;
mod platform;
mod preread;
mod renew;
mod space;
use check::Probe;
pub use check::check;
pub use preread::pre_read;

/// What the user allowed.
#[derive(Debug, Clone, Copy, Default)]
pub struct Safety {
    /// Write to existing files and block devices.
    pub allow_overwrite: bool,
    /// Skip the free-space check (for file systems whose statvfs cannot be trusted).
    pub skip_space_check: bool,
    /// Replace report, log and results files iogauge did not write (`--overwrite-output`).
    pub overwrite_output: bool,
    /// The memory the run may use (`--max-memory`; default: what the machine has).
    pub max_memory: Option<u64>,
}

/// Why targets could not be used.
#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    /// The configuration cannot work here (exit 2).
    #[error("{0}")]
    Usage(String),
    /// The system failed while preparing (exit 1).
    #[error("{0}")]
    Io(String),
    /// Preparing stopped because the run was interrupted.
    #[error("interrupted while laying out the test files")]
    Interrupted,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Regular,
    BlockDevice,
    /// A directory a dir… engine (dircreate, dirstat, dirdelete) works on.
    Directory,
}

/// What the plan needs of one path.
#[derive(Debug, Clone)]
struct Need {
    kind: Kind,
    exists: bool,
    /// Bytes the file must hold (largest offset + region of any job using it).
    extent: u64,
    /// The first group with a job that reads it or writes it out of order, so it must be
    /// fully written before that group runs (a group that only writes it sequentially gets
    /// a new, empty file: what a SAS DATA step writing a data set sees).
    layout_from: Option<usize>,
    /// First group that uses it (it is created just before that group runs).
    first_group: usize,
    /// Some job of the run writes it, or iogauge extends it (so the run holds its write lock).
    written: bool,
    /// The inode the path named when checked, or that this run created there.
    identity: Option<Identity>,
    /// The user named a symbolic link: it was followed once, when checked.
    follow: bool,
    /// It carries iogauge's mark, matching what the file is (an earlier run's, unchanged).
    ours: bool,
    /// How it is allocated if this run creates it (the first job's `fallocate`).
    fallocate: Fallocate,
    /// The jobs that write it.
    writers: Vec<Writer>,
    /// Its job creates it as its measured operation (filecreate): not created before.
    by_job: bool,
    /// The first group with a fill_device job on it: that group writes it (or lays it out)
    /// until the file system is full; later groups find it as that left it.
    fill_from: Option<usize>,
    /// The largest extent that jobs after the filling ask for with sizes of their own (laid
    /// out then, if the filling left less).
    after_fill: u64,
}

/// A job that writes a file: its group, name, the verification it seals with, and the region
/// it writes (offset and end).
type Writer = (usize, String, Option<crate::plan::Verify>, u64, u64);

/// The checked plan's files, and what this run created.
#[derive(Debug, Default)]
pub struct Targets {
    needs: BTreeMap<PathBuf, Need>,
    /// Existing paths as checked; emptied when the check ends.
    probes: BTreeMap<PathBuf, Probe>,
    /// Files this run created (or took over from a killed run), in creation order.
    created: Vec<PathBuf>,
    /// A descriptor of every file the run uses, held from the check (or its creation) to the
    /// end: its inode cannot be freed and its number reused meanwhile, so comparing
    /// identities is exact. Those of files the run writes hold the write lock, and the mark is
    /// written through them when the run ends.
    held: BTreeMap<PathBuf, OwnedFd>,
    /// How each file was laid out before the job that uses it, for the report.
    layouts: BTreeMap<PathBuf, String>,
    /// Where each file this run created is: its directory held open, so removal follows a
    /// directory renamed meanwhile.
    places: BTreeMap<PathBuf, ownership::Place>,
    /// The directories `places` hold, one descriptor each.
    dirs: Vec<(Identity, std::sync::Arc<OwnedFd>)>,
    /// The e4defrag jobs' donor files (each also a need).
    donors: Vec<PathBuf>,
    pub warnings: Vec<String>,
}

/// Takes the exclusive write lock on `fd` without waiting.
fn lock_for_writing(fd: &OwnedFd, p: &Path) -> Result<(), TargetError> {
    match try_lock(fd) {
        Ok(true) => Ok(()),
        Ok(false) => Err(usage(format!(
            "{}: another process is writing this file (it holds iogauge's write lock); one \
             writer per file at a time, readers may share it",
            p.display()
        ))),
        Err(e) => Err(io_err(p, "cannot lock for writing", e)),
    }
}

/// Takes the exclusive lock if nobody holds it: `Ok(false)` when another process does.
fn try_lock(fd: &OwnedFd) -> io::Result<bool> {
    use crate::platform::sys::fs::FlockOperation;
    match crate::platform::sys::fs::flock(fd, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(true),
        Err(crate::platform::sys::io::Errno::WOULDBLOCK) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

fn usage(msg: String) -> TargetError {
    TargetError::Usage(msg)
}

impl Targets {
    /// Creates and lays out the files group `gi` uses (called just before it runs). Stops
    /// within one 1 MiB write of `interrupt` being set; what it created is removed by
    /// [`Targets::finish`].
    pub fn prepare_group(
        &mut self,
        gi: usize,
        seed: u64,
        interrupt: &AtomicBool,
    ) -> Result<(), TargetError> {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
        let paths: Vec<PathBuf> = self.needs.keys().cloned().collect();
        for p in paths {
            let mut n = self.needs[&p].clone();
            if n.kind == Kind::BlockDevice || n.first_group > gi || (n.by_job && !n.exists) {
                continue;
            }
            if n.fill_from.is_some_and(|g| g < gi) && n.exists {
                n.extent = self.after_filling(&p, n.after_fill)?;
            }
            if n.kind == Kind::Directory {
                if !n.exists {
                    self.make_dir(&p)?;
                }
                continue;
            }
            let filling = n.fill_from == Some(gi);
            let created_now = !n.exists;
            if created_now {
                let id = self.create(&p, false)?;
                let fd = &self.held[&p];
                lock_for_writing(fd, &p)?;
                // A file a later group reads is laid out then, from what the writers before
                // it left: allocated-but-unwritten blocks would read as zeros, not data.
                let layout = if filling && n.layout_from == Some(gi) {
                    "created".into()
                } else if filling {
                    "created empty; fill_device writes it until the file system is full".into()
                } else if n.layout_from.is_some_and(|g| g > gi) {
                    "created; not preallocated, because a later group reads it and iogauge \
                     lays out whatever the writers before it leave"
                        .to_string()
                } else {
                    preallocate(fd, &p, n.fallocate, n.extent)?
                };
                self.layouts.insert(p.clone(), layout);
                let need = self.needs.get_mut(&p).expect("known path");
                need.exists = true;
                need.identity = Some(id);
                need.ours = true;
                need.written = true;
            }
            if n.layout_from.is_some_and(|g| g <= gi) {
                let fd = self.reopen(&p, OFlags::WRONLY, "direct")?;
                // A file created now holds no data, whatever size preallocation gave it.
                let len = match created_now {
                    true => 0,
                    false => {
                        crate::platform::sys::fs::fstat(&fd)
                            .map_err(|e| io_err(&p, "cannot stat", e.into()))?
                            .st_size as u64
                    }
                };
                if len < n.extent {
                    let end = lay_out(&fd, &p, (len, n.extent, filling), &mut rng, interrupt)?;
                    let what = match end < n.extent {
                        true => format!(
                            "laid out with random data from byte {len} until the file system \
                             was full, at {} (fill_device)",
                            human_bytes(end)
                        ),
                        false => format!(
                            "laid out with random data from byte {len} to {}",
                            human_bytes(n.extent)
                        ),
                    };
                    self.needs.get_mut(&p).expect("known path").extent = end;
                    let before = match created_now {
                        true => self.layouts[&p].clone(),
                        false => "existing".into(),
                    };
                    self.layouts.insert(p.clone(), format!("{before}; {what}"));
                    continue;
                }
            }
            // Reports read this when the group opens the file: a file an earlier group made
            // is, for this one, an existing file.
            if !created_now {
                let used = "existing, used as it is (no lay-out needed)".to_string();
                self.layouts.insert(p.clone(), used);
            }
        }
        Ok(())
    }

    /// How `p` was laid out for this run (see `prepare_group`).
    pub fn layout(&self, p: &Path) -> Option<&str> {
        self.layouts.get(p).map(String::as_str)
    }

    /// Opens `p` again, only if it is still the inode that was checked or created.
    /// `direct`: how the user named the direct option, for the error when O_DIRECT is refused.
    fn reopen(&self, p: &Path, flags: OFlags, direct: &str) -> Result<OwnedFd, TargetError> {
        let n = self
            .needs
            .get(p)
            .ok_or_else(|| TargetError::Io(format!("{}: not a checked target", p.display())))?;
        let id = n.identity.ok_or_else(|| {
            TargetError::Io(format!("{}: opened before it was created", p.display()))
        })?;
        ownership::reopen(p, flags, n.follow, id).map_err(|e| match e {
            ReopenError::Replaced => TargetError::Io(format!("{}: {e}", p.display())),
            ReopenError::Io(e)
                if flags.contains(OFlags::DIRECT)
                    && crate::engine::errno(&e) == Some(crate::platform::abi::errno::EINVAL) =>
            {
                usage(format!(
                    "{direct}: the file system holding {} does not support O_DIRECT (direct \
                     I/O)",
                    p.display()
                ))
            }
            ReopenError::Io(e) => setup_err(p, "cannot open", e, "it changed after the check"),
        })
    }

    /// Paths under test.
    pub fn paths(&self) -> impl Iterator<Item = &PathBuf> {
        self.needs.keys()
    }

    /// A job's `unlink`: removes the files among `paths` that this run created, or that an
    /// earlier run created and nobody changed since; never anything else. Returns what it
    /// left and why. A later group that uses one creates it again.
    pub fn unlink(&mut self, paths: &[PathBuf]) -> Vec<String> {
        let mut notes = Vec::new();
        for p in paths {
            let Some(n) = self.needs.get(p).cloned() else {
                continue;
            };
            if !n.exists || n.kind == Kind::BlockDevice {
                continue;
            }
            let Some(fd) = self.held.get(p) else {
                continue;
            };
            let created = self.created.iter().position(|c| c == p);
            if created.is_none() {
                // Still ours now? Its mark must match what the file is at this moment.
                let verdict = crate::platform::sys::fs::fstat(fd)
                    .map(|st| ownership::verdict(fd.as_fd(), &st))
                    .unwrap_or(Verdict::Foreign);
                if !(n.ours && verdict.is_ours()) {
                    notes.push(format!(
                        "{}: not removed (unlink): {}",
                        p.display(),
                        verdict.why_not_ours()
                    ));
                    continue;
                }
            }
            if n.follow {
                notes.push(format!(
                    "{}: not removed (unlink): it was named through a symbolic link",
                    p.display()
                ));
                continue;
            }
            if let Err(e) = self.remove(p, fd.as_fd()) {
                notes.push(format!("{}: cannot remove: {e}", p.display()));
                continue;
            }
            self.places.remove(p);
            ownership::unwatch(p);
            if let Some(i) = created {
                self.created.remove(i);
            }
            self.held.remove(p);
            let need = self.needs.get_mut(p).expect("known path");
            need.exists = false;
            need.identity = None;
        }
        notes
    }

    /// Removes `p` (open as `held`) through the directory held since it was created.
    fn remove(&self, p: &Path, held: crate::platform::fd::BorrowedFd<'_>) -> io::Result<()> {
        match self.places.get(p) {
            Some(place) => ownership::remove_in_place(place, held),
            None => ownership::remove_if_same(p, held),
        }
    }

    /// Ends the run's hold on its files: removes what it created when `remove` (only while
    /// each path still names the file it created), except `evidence` (files whose data failed
    /// verification: always kept, for the user to look at), marks every file it wrote and
    /// keeps as iogauge's as it is now, and releases the write locks. Returns what it could
    /// not do, and a line for each file kept as evidence.
    pub fn finish(&mut self, remove: bool, evidence: &[PathBuf]) -> Vec<String> {
        let mut failed = Vec::new();
        // Only files this run created are said to be kept: the others were never removed.
        let kept_evidence: Vec<&PathBuf> = evidence
            .iter()
            .filter(|p| self.created.contains(p))
            .collect();
        for p in &kept_evidence {
            failed.push(format!(
                "{}: kept: its data failed verification (the evidence; remove it when done)",
                p.display()
            ));
        }
        if remove {
            for p in std::mem::take(&mut self.created).into_iter().rev() {
                if evidence.contains(&p) {
                    // Kept: `self.created` no longer lists it, and it is marked below.
                    continue;
                }
                let Some(fd) = self.held.remove(&p) else {
                    continue;
                };
                if let Err(e) = self.remove(&p, fd.as_fd()) {
                    failed.push(format!("could not remove {}: {e}", p.display()));
                }
                self.places.remove(&p);
                ownership::unwatch(&p);
            }
        }
        for p in evidence {
            ownership::unwatch(p);
        }
        for (p, fd) in std::mem::take(&mut self.held) {
            if self.needs.get(&p).is_some_and(|n| n.ours && n.written) {
                if let Err(e) = ownership::set_mark(fd.as_fd(), MarkState::Kept) {
                    failed.push(format!(
                        "{}: kept, but cannot mark it as iogauge's ({e}): a later run needs \
                         --allow-overwrite to write it",
                        p.display()
                    ));
                }
            }
        }
        // What is left was kept on purpose (newest first: see `ownership::unwatch`).
        for p in self.created.drain(..).rev() {
            ownership::unwatch(&p);
        }
        self.places.clear();
        self.dirs.clear();
        failed
    }
}

/// `write_hint` on a writing job's regular file; a device's inode is every writer's, so a
/// hint there is refused.
fn write_hint(fd: &OwnedFd, p: &Path, hint: u64) -> Result<(), TargetError> {
    let st = crate::platform::sys::fs::fstat(fd).map_err(|e| io_err(p, "fstat", e.into()))?;
    if crate::platform::sys::fs::FileType::from_raw_mode(st.st_mode)
        != crate::platform::sys::fs::FileType::RegularFile
    {
        return Err(TargetError::Usage(format!(
            "{}: write_hint: not a regular file: a device's hint would be every writer's",
            p.display()
        )));
    }
    crate::engine::set_write_hint(fd.as_fd(), hint)
        .map_err(|e| io_err(p, "cannot set the write hint (write_hint)", e))
}

fn io_err(p: &Path, what: &str, e: io::Error) -> TargetError {
    TargetError::Io(format!("{}: {what}: {e}", p.display()))
}

/// An open or create that failed before any I/O: permissions, a read-only file system or a
/// path that changed are the user's to fix (exit 2); anything else is the system's (exit 1).
impl Targets {
    /// Creates `p`, a new file (a directory when `dir`): on the emergency list at once (the
    /// stretch from the create to there is a `crate::ending::Making`), held and placed for its
    /// removal. Its identity.
    pub(super) fn create(
        &mut self,
        p: &Path,
        dir: bool,
    ) -> Result<ownership::Identity, TargetError> {
        let what = match dir {
            true => "cannot make the directory",
            false => "cannot create",
        };
        let making =
            crate::ending::Making::begin_or_refuse().map_err(|e| setup_err(p, what, e, ""))?;
        let made = match dir {
            true => ownership::create_dir_new(p),
            false => ownership::create_new(p),
        };
        let (fd, id, place) =
            made.map_err(|e| setup_err(p, what, e, "it appeared after the check"))?;
        let place = place.sharing(&mut self.dirs);
        self.created.push(p.to_path_buf());
        ownership::watch(p, id, Some(&place));
        drop(making);
        self.places.insert(p.to_path_buf(), place);
        // Held before anything can fail: removal at the end compares with it.
        self.held.insert(p.to_path_buf(), fd);
        Ok(id)
    }
}

fn setup_err(p: &Path, what: &str, e: io::Error, exists: &str) -> TargetError {
    use crate::platform::abi::errno::{EACCES, EEXIST, EPERM, EROFS};
    match crate::engine::errno(&e) {
        Some(EACCES | EPERM | EROFS) => usage(format!("{}: {what}: {e}", p.display())),
        Some(EEXIST) => usage(format!("{}: {what}: {exists}", p.display())),
        _ => io_err(p, what, e),
    }
}

/// Allocates a file this run just created, as fio's `fallocate` says, and says what it did.
/// fio's `native` falls back to nothing where the file system has no fallocate; so does this.
fn preallocate(fd: &OwnedFd, p: &Path, how: Fallocate, len: u64) -> Result<String, TargetError> {
    use crate::platform::sys::fs::FallocateFlags;
    let size = human_bytes(len);
    let done = match how {
        Fallocate::None => return Ok("created empty; the job's writes extend it".into()),
        _ if len == 0 => return Ok("created empty".into()),
        Fallocate::Native => {
            crate::platform::sys::fs::fallocate(fd, FallocateFlags::empty(), 0, len)
        }
        Fallocate::Keep => {
            crate::platform::sys::fs::fallocate(fd, FallocateFlags::KEEP_SIZE, 0, len)
        }
        Fallocate::Truncate => crate::platform::sys::fs::ftruncate(fd, len),
        Fallocate::Posix => crate::platform::sys::posix_fallocate(fd.as_fd(), len),
    };
    match done {
        Ok(()) => {
            let calls = crate::platform::sys::LAYOUT_CALLS;
            let (call, option) = match how {
                Fallocate::Native => (calls.native, " (fallocate=native)"),
                Fallocate::Posix => (calls.posix, ""),
                Fallocate::Keep => (calls.keep, ""),
                _ => (calls.truncate, " (fallocate=truncate)"),
            };
            Ok(format!(
                "created; {}{option}",
                call.replace("{size}", &size)
            ))
        }
        Err(crate::platform::sys::io::Errno::OPNOTSUPP) if how == Fallocate::Native => Ok(
            "created empty: this file system has no fallocate, so the job's writes extend it \
             (fio's native falls back the same way)"
                .into(),
        ),
        Err(e) => Err(io_err(
            p,
            &format!("fallocate={} of {size}", how.as_str()),
            e.into(),
        )),
    }
}

/// How much layout writes per call: also how soon an interrupt is noticed.
const LAYOUT_CHUNK: usize = 1 << 20;
/// Lay-out flushes what it wrote every so often, so that no single flush (which cannot be
/// interrupted) takes long, and the last one, after the whole file, is short too.
const LAYOUT_FLUSH_EVERY: u64 = 64 << 20;

/// Writes random bytes from `from` to `to` through `fd`, then flushes: the file is fully
/// allocated and its pages clean, so invalidation can really drop them. With `fill`, a full
/// file system (ENOSPC, EDQUOT) ends it early (fill_device). Returns where the data ends.
fn lay_out(
    fd: &OwnedFd,
    p: &Path,
    (from, to, fill): (u64, u64, bool),
    rng: &mut impl RngCore,
    interrupt: &AtomicBool,
) -> Result<u64, TargetError> {
    let mut buf = AlignedBuf::zeroed(LAYOUT_CHUNK);
    rng.fill_bytes(&mut buf);
    let mut off = from;
    while off < to {
        if interrupt.load(Ordering::Relaxed) {
            return Err(TargetError::Interrupted);
        }
        let n = ((to - off) as usize).min(buf.len());
        // Vary each chunk so the file does not deduplicate.
        buf[..8].copy_from_slice(&off.to_le_bytes());
        let w = match crate::platform::sys::io::pwrite(fd, &buf[..n], off) {
            Ok(w) => w,
            Err(
                crate::platform::sys::io::Errno::NOSPC | crate::platform::sys::io::Errno::DQUOT,
            ) if fill => break,
            Err(e) => return Err(io_err(p, &format!("laying out at offset {off}"), e.into())),
        };
        off += w as u64;
        if (off - from) % LAYOUT_FLUSH_EVERY < w as u64 && off < to {
            crate::platform::sys::fs::fdatasync(fd)
                .map_err(|e| io_err(p, "flush during lay-out", e.into()))?;
        }
    }
    crate::platform::sys::fs::fsync(fd).map_err(|e| io_err(p, "fsync after lay-out", e.into()))?;
    Ok(off)
}

/// A file opened for a job, with the flags the kernel reports it really has.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct OpenedFile {
    #[serde(with = "crate::rawpath::serde_path")]
    pub path: PathBuf,
    pub open_flags: Vec<std::borrow::Cow<'static, str>>,
    /// How the file was laid out before the job: created and preallocated (fio's
    /// `fallocate`), laid out with data, or an existing file used as it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<String>,
}

impl Targets {
    /// Opens a job's files with its cache flags, applies the fadvise hint, and drops cached
    /// pages when `invalidate` is set. Files are never created here, and a path is opened only
    /// if it still names the file that was checked or created.
    pub fn open_job(
        &self,
        job: &JobSpec,
    ) -> Result<(crate::engine::Files, Vec<OpenedFile>), TargetError> {
        if job.engine.fileless() {
            let files = crate::engine::Files {
                program: job.program.clone(),
                net: match job.engine.network() {
                    true => Some(net::open(job)?),
                    false => None,
                },
                ..Default::default()
            };
            return Ok((files, Vec::new()));
        }
        if job.engine.file_op() {
            return self.open_names(job);
        }
        // A verifying writer reads its blocks back through the same descriptors; a shared
        // writable mapping (mmap) needs the file open for reading too.
        // So does EXT4_IOC_MOVE_EXT (e4defrag).
        let reads = job.rw.reads()
            || job.verify.is_some()
            || matches!(job.engine, EngineKind::Mmap | EngineKind::E4defrag);
        let mut flags = match (reads, job.rw.modifies()) {
            (true, true) => OFlags::RDWR,
            (false, true) => OFlags::WRONLY,
            _ => OFlags::RDONLY,
        };
        if job.direct {
            flags |= OFlags::DIRECT;
        }
        // pvsync2 asks for write-through per call (RWF_DSYNC/RWF_SYNC) instead.
        match job.sync.mode {
            _ if job.engine.per_call_sync() => {}
            SyncMode::None => {}
            SyncMode::Dsync => flags |= O_DSYNC,
            SyncMode::Sync => flags |= O_SYNC,
        }
        let region = NonZeroU64::new(job.per_file_bytes());
        let donor = self.open_donor(job)?;
        let mut fds = Vec::new();
        let mut opened = Vec::new();
        let own = job.paths();
        for (i, own_path) in own.into_iter().enumerate() {
            let (p, fd, layout) = match &job.read_from {
                Some(from) => {
                    let p = from.paths[i].clone();
                    let fd = open_borrowed(&p, flags, job, from)?;
                    let layout = format!(
                        "rank {}'s file (on {}), read as that rank left it (--rank-read-shift); \
                         this rank laid out its own {} for another",
                        from.rank,
                        from.host,
                        crate::rawpath::display(&own_path)
                    );
                    (p, fd, Some(layout))
                }
                None => {
                    if job.unlink_each_loop {
                        self.renewable(&own_path)?;
                    }
                    let fd = self.reopen(&own_path, flags, &job.label("direct"))?;
                    platform::rwf::check(job, &own_path, &fd, || {
                        self.reopen(&own_path, OFlags::RDONLY, &job.label("direct"))
                    })?;
                    let layout = self.layout(&own_path).map(str::to_string);
                    (own_path, fd, layout)
                }
            };
            advice::give(job, &fd, &p, region)?;
            let got = crate::platform::sys::fs::fcntl_getfl(&fd)
                .map_err(|e| io_err(&p, "fcntl", e.into()))?;
            opened.push(OpenedFile {
                layout,
                path: p,
                open_flags: flag_names(got).into_iter().map(Into::into).collect(),
            });
            fds.push(fd);
        }
        let files = crate::engine::Files {
            fds,
            donor,
            ..Default::default()
        };
        Ok((files, opened))
    }
}

/// Opens another rank's file for a job that reads it (`--rank-read-shift`): read-only, as that
/// rank left it, never created, extended or locked here. It must be a regular file holding the
/// job's whole region.
fn open_borrowed(
    p: &Path,
    flags: OFlags,
    job: &JobSpec,
    from: &crate::plan::ReadFrom,
) -> Result<OwnedFd, TargetError> {
    let whose = format!("rank {}'s file (on {})", from.rank, from.host);
    debug_assert_eq!(flags & OFlags::RWMODE, OFlags::RDONLY);
    let (fd, st) = ownership::open_existing(p, flags, false).map_err(|e| {
        if flags.contains(OFlags::DIRECT)
            && crate::engine::errno(&e) == Some(crate::platform::abi::errno::EINVAL)
        {
            return usage(format!(
                "{}: the file system holding {} does not support O_DIRECT (direct I/O)",
                job.label("direct"),
                p.display()
            ));
        }
        TargetError::Io(format!(
            "{}: cannot open {whose} to read it (--rank-read-shift): {e}",
            crate::rawpath::display(p)
        ))
    })?;
    if crate::platform::sys::fs::FileType::from_raw_mode(st.st_mode)
        != crate::platform::sys::fs::FileType::RegularFile
    {
        return Err(TargetError::Io(format!(
            "{}: {whose} is not a regular file; --rank-read-shift reads only files",
            crate::rawpath::display(p)
        )));
    }
    let end = job.offset + job.per_file_bytes();
    if (st.st_size as u64) < end {
        return Err(TargetError::Io(format!(
            "{}: {whose} holds {} bytes; this job reads to byte {end} (--rank-read-shift)",
            crate::rawpath::display(p),
            st.st_size
        )));
    }
    Ok(fd)
}

/// Names of the access mode and the cache-relevant flags in `f`, as the system calls them
/// (`O_RDWR|O_DIRECT` on Linux, `GENERIC_READ|GENERIC_WRITE|FILE_FLAG_NO_BUFFERING` on
/// Windows).
pub use crate::platform::sys::open_flag_names as flag_names;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Origin, Plan, Section, resolve};
    use std::fs;

    fn plan(dir: &Path, groups: &[&str]) -> Plan {
        let f = dir.join("f");
        let sections: Vec<Section> = groups
            .iter()
            .map(|rw| {
                let mut s = Section::new(*rw);
                // fio's filename separates names with ':' (a drive's is escaped, `C\:`).
                let name = f.to_str().unwrap().replace(':', "\\:");
                s.set("filename", &name, Origin::Cli)
                    .set("rw", rw, Origin::Cli)
                    .set("size", "1m", Origin::Cli);
                s
            })
            .collect();
        resolve(&sections, true).unwrap()
    }

    #[test]
    fn a_sequential_writer_gets_a_new_file_and_a_later_reader_a_full_one() {
        let d = tempfile::tempdir().unwrap();
        let mut p = plan(d.path(), &["write", "read"]);
        let mut t = check(&mut p, Safety::default()).unwrap();
        assert!(!d.path().join("f").exists(), "check creates nothing");
        t.prepare_group(0, 1, &AtomicBool::new(false)).unwrap();
        assert_eq!(fs::metadata(d.path().join("f")).unwrap().len(), 0);
        t.prepare_group(1, 1, &AtomicBool::new(false)).unwrap();
        let m = fs::metadata(d.path().join("f")).unwrap();
        assert_eq!(m.len(), 1 << 20);
        let blocks = crate::platform::testing::blocks(&d.path().join("f"));
        assert!(blocks * 512 >= 1 << 20, "laid out, not sparse");
        assert_eq!(t.finish(true, &[]).len(), 0);
        assert!(!d.path().join("f").exists());
    }
}
