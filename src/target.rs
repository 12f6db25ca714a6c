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
//! statistics.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::num::NonZeroU64;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use rand_core::{RngCore, SeedableRng};
use rustix::fs::{Advice, FileType, OFlags, Stat};

use crate::engine::AlignedBuf;
use crate::ownership::{self, Identity, MarkState, ReopenError, Verdict};
use crate::spec::{EngineKind, Fadvise, JobSpec, Plan, RwMode, SyncMode, TargetSpec};

/// What the user allowed.
#[derive(Debug, Clone, Copy, Default)]
pub struct Safety {
    /// Write to existing files and block devices.
    pub allow_overwrite: bool,
    /// Skip the free-space check (for file systems whose statvfs cannot be trusted).
    pub skip_space_check: bool,
    /// Replace report, log and results files iogauge did not write (`--overwrite-output`).
    pub overwrite_output: bool,
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
}

/// An existing path as the check found it, through one descriptor.
#[derive(Debug)]
struct Probe {
    fd: OwnedFd,
    st: Stat,
    follow: bool,
    verdict: Verdict,
    /// Its mark says an iogauge run never finished with it, and no run holds it now.
    abandoned: bool,
}

impl Probe {
    fn kind(&self) -> Kind {
        if FileType::from_raw_mode(self.st.st_mode) == FileType::BlockDevice {
            Kind::BlockDevice
        } else {
            Kind::Regular
        }
    }
}

/// The checked plan's files, and what this run created.
#[derive(Debug, Default)]
pub struct Targets {
    needs: BTreeMap<PathBuf, Need>,
    /// Existing paths as checked; emptied when the check ends.
    probes: BTreeMap<PathBuf, Probe>,
    /// Files this run created (or took over from a killed run), in creation order.
    created: Vec<(PathBuf, Identity)>,
    /// A descriptor of every file the run uses, held from the check (or its creation) to the
    /// end: its inode cannot be freed and its number reused meanwhile, so comparing
    /// identities is exact. Those of files the run writes hold the write lock, and the mark is
    /// written through them when the run ends.
    held: BTreeMap<PathBuf, OwnedFd>,
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
    use rustix::fs::FlockOperation;
    match rustix::fs::flock(fd, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(true),
        Err(rustix::io::Errno::WOULDBLOCK) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// The directory holding `p` (`.` for a bare file name).
pub fn parent_dir(p: &Path) -> &Path {
    p.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

fn usage(msg: String) -> TargetError {
    TargetError::Usage(msg)
}

/// Region bytes per file for a job whose size is known.
pub fn per_file_bytes(job: &JobSpec) -> u64 {
    let nfiles = job.paths().len() as u64;
    (job.size.unwrap_or(0) / nfiles) / job.xfer() * job.xfer()
}

fn option_of(job: &JobSpec) -> &'static str {
    match job.target {
        TargetSpec::Files(_) => "--filename",
        TargetSpec::Directory(_) => "--directory",
    }
}

/// The logical block size of the device `dev` (a block device's rdev, or the device
/// holding a file), from sysfs.
fn logical_block_size(dev: u64) -> Option<u64> {
    let (major, minor) = (rustix::fs::major(dev), rustix::fs::minor(dev));
    let base = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
    // A partition has no queue/ of its own: its parent disk's applies.
    [
        base.join("queue/logical_block_size"),
        base.join("../queue/logical_block_size"),
    ]
    .iter()
    .find_map(|p| fs::read_to_string(p).ok()?.trim().parse().ok())
}

fn block_dev_of(meta: &fs::Metadata) -> u64 {
    if meta.file_type().is_block_device() {
        meta.rdev()
    } else {
        meta.dev()
    }
}

/// The logical block size of the device holding `p` (or, when `p` does not exist, its
/// directory); `None` where there is no block device (tmpfs).
pub fn logical_block_size_at(p: &Path) -> Option<u64> {
    let meta = fs::metadata(p)
        .or_else(|_| fs::metadata(parent_dir(p)))
        .ok()?;
    logical_block_size(block_dev_of(&meta))
}

/// Checks the whole plan before anything is created; fills in sizes taken from existing files.
/// Every existing path is opened once here, and what it is (type, size, inode, mark) read
/// from that descriptor.
pub fn check(plan: &mut Plan, safety: Safety) -> Result<Targets, TargetError> {
    let mut t = Targets::default();
    for (gi, group) in plan.groups.iter_mut().enumerate() {
        for job in &mut group.jobs {
            check_job(&mut t, gi, job, safety)?;
        }
    }
    if !safety.skip_space_check {
        check_space(&t)?;
    }
    // Lock what the run writes; an abandoned file of a killed run is taken over.
    let probes = std::mem::take(&mut t.probes);
    for (p, probe) in probes {
        let n = t.needs.get_mut(&p).expect("probed paths are needed");
        if n.kind == Kind::BlockDevice && n.written {
            // Claimed exclusively for the whole run: refused while mounted or in use (RAID,
            // LVM, swap), and nothing can mount it meanwhile.
            let claim = rustix::fs::open(
                &p,
                OFlags::RDONLY | OFlags::EXCL | OFlags::CLOEXEC,
                rustix::fs::Mode::empty(),
            )
            .map_err(|e| match e {
                rustix::io::Errno::BUSY => usage(format!(
                    "{}: the device is in use (mounted, swap, or part of a RAID or LVM \
                     volume); iogauge never writes a device in use",
                    p.display()
                )),
                e => usage(format!(
                    "{}: cannot open exclusively: {}",
                    p.display(),
                    io::Error::from(e)
                )),
            })?;
            t.held.insert(p, claim);
            continue;
        }
        if n.kind != Kind::Regular || !(n.written || probe.abandoned) {
            t.held.insert(p, probe.fd);
            continue;
        }
        // Marked again as kept when the run ends.
        n.written = true;
        if !probe.abandoned {
            lock_for_writing(&probe.fd, &p)?;
        }
        if probe.abandoned && probe.verdict == Verdict::Unfinished {
            t.warnings.push(format!(
                "{}: left by an iogauge run that did not finish (killed?); this run takes it \
                 over and removes it at the end unless kept",
                p.display()
            ));
            t.created.push((p.clone(), Identity::of(&probe.st)));
        } else if probe.abandoned {
            t.warnings.push(format!(
                "{}: an iogauge run was writing it and did not finish (killed?)",
                p.display()
            ));
        }
        if n.ours {
            // Until this run closes it, the mark says it is being written.
            let _ = ownership::set_mark(probe.fd.as_fd(), MarkState::Writing);
        }
        t.held.insert(p, probe.fd);
    }
    Ok(t)
}

/// Opens `p` if it exists (once per run; later jobs reuse the probe) and reads what it is.
fn probe<'t>(t: &'t mut Targets, p: &Path, opt: &str) -> Result<Option<&'t Probe>, TargetError> {
    if !t.probes.contains_key(p) {
        let link = match fs::symlink_metadata(p) {
            Ok(m) => m.file_type().is_symlink(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(usage(format!("{opt}={}: {e}", p.display()))),
        };
        // Types are checked before opening: opening a tape or a FIFO has effects of its own.
        let meta = match fs::metadata(p) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound && link => {
                return Err(usage(format!(
                    "{opt}={}: a symbolic link to nothing; name the file itself",
                    p.display()
                )));
            }
            Err(e) => return Err(usage(format!("{opt}={}: {e}", p.display()))),
        };
        let not_file = || {
            usage(format!(
                "{opt}={}: not a regular file or block device",
                p.display()
            ))
        };
        if !(meta.is_file() || meta.file_type().is_block_device()) {
            return Err(not_file());
        }
        let (fd, st) = ownership::open_existing(p, OFlags::RDONLY, link)
            .map_err(|e| usage(format!("{opt}={}: cannot open: {e}", p.display())))?;
        let ft = FileType::from_raw_mode(st.st_mode);
        if !matches!(ft, FileType::RegularFile | FileType::BlockDevice) {
            return Err(not_file());
        }
        let verdict = if ft == FileType::RegularFile {
            ownership::verdict(fd.as_fd(), &st)
        } else {
            Verdict::Foreign
        };
        let abandoned = matches!(verdict, Verdict::Unfinished | Verdict::Rewriting)
            && try_lock(&fd).map_err(|e| io_err(p, "cannot lock", e))?;
        let probe = Probe {
            fd,
            st,
            follow: link,
            verdict,
            abandoned,
        };
        t.probes.insert(p.to_path_buf(), probe);
    }
    Ok(t.probes.get(p))
}

/// The size in bytes of the file or block device at `p` (a device's from the device itself,
/// where a file's status says 0); `None` when it cannot be opened.
pub fn size_of(p: &Path) -> Option<u64> {
    let meta = fs::metadata(p).ok()?;
    if !meta.file_type().is_block_device() {
        return Some(meta.len());
    }
    let (fd, _) = ownership::open_existing(p, OFlags::RDONLY, true).ok()?;
    rustix::fs::seek(&fd, rustix::fs::SeekFrom::End(0)).ok()
}

/// The size of an existing target: a block device's from the device, a file's from its status.
fn probed_len(p: &Path, pr: &Probe) -> Result<u64, TargetError> {
    if pr.kind() == Kind::BlockDevice {
        rustix::fs::seek(&pr.fd, rustix::fs::SeekFrom::End(0)).map_err(|e| {
            usage(format!(
                "{}: cannot size: {}",
                p.display(),
                io::Error::from(e)
            ))
        })
    } else {
        Ok(pr.st.st_size as u64)
    }
}

/// What check_job needs of an existing target, copied out of its probe.
#[derive(Debug, Clone)]
struct Existing {
    kind: Kind,
    len: u64,
    allocated: u64,
    dev: u64,
    identity: Identity,
    follow: bool,
    verdict: Verdict,
    /// Another iogauge run is writing it now (it holds the write lock).
    busy: bool,
}

fn existing(t: &mut Targets, p: &Path, opt: &str) -> Result<Option<Existing>, TargetError> {
    let Some(pr) = probe(t, p, opt)? else {
        return Ok(None);
    };
    let kind = pr.kind();
    Ok(Some(Existing {
        kind,
        len: probed_len(p, pr)?,
        allocated: pr.st.st_blocks as u64 * 512,
        dev: if kind == Kind::BlockDevice {
            pr.st.st_rdev
        } else {
            pr.st.st_dev
        },
        identity: Identity::of(&pr.st),
        follow: pr.follow,
        verdict: pr.verdict.clone(),
        busy: !pr.abandoned && matches!(pr.verdict, Verdict::Unfinished | Verdict::Rewriting),
    }))
}

fn check_job(
    t: &mut Targets,
    gi: usize,
    job: &mut JobSpec,
    safety: Safety,
) -> Result<(), TargetError> {
    let opt = option_of(job);
    if job.engine == EngineKind::IoUring {
        crate::engine::uring::probe(job).map_err(usage)?;
    }
    if job.engine == EngineKind::Null {
        if job.size.is_none() {
            return Err(usage(
                "--size: required with --ioengine=null (no file to size it)".into(),
            ));
        }
        return Ok(());
    }
    if let TargetSpec::Directory(dir) = &job.target {
        match fs::metadata(dir) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(usage(format!(
                    "--directory={}: not a directory",
                    dir.display()
                )));
            }
            Err(_) => {
                return Err(usage(format!(
                    "--directory={}: no such directory",
                    dir.display()
                )));
            }
        }
    }
    let paths = job.paths();
    let nfiles = paths.len() as u64;
    // Existing files first: they may set the size.
    let mut found = Vec::new();
    for p in &paths {
        found.push(existing(t, p, opt)?);
    }
    if job.size_pct.is_some() || job.offset_pct.is_some() {
        // N% of what is there: the smallest of the job's files or devices.
        let mut smallest: Option<u64> = None;
        for (p, e) in paths.iter().zip(&found) {
            let Some(e) = e else {
                let what = if job.size_pct.is_some() {
                    "--size"
                } else {
                    "--offset"
                };
                return Err(usage(format!(
                    "{what}: a percentage needs an existing file or device, and {} does not \
                     exist yet",
                    p.display()
                )));
            };
            smallest = Some(smallest.map_or(e.len, |s| s.min(e.len)));
        }
        let len = smallest.unwrap_or(0);
        if let Some(pct) = job.offset_pct {
            job.offset = len * u64::from(pct) / 100 / job.bs * job.bs;
        }
        if let Some(pct) = job.size_pct {
            let per_file = len.saturating_sub(job.offset) * u64::from(pct) / 100;
            job.size = Some(per_file / job.xfer() * job.xfer() * nfiles);
        }
    }
    if job.size.is_none() {
        let mut smallest: Option<u64> = None;
        for (p, e) in paths.iter().zip(&found) {
            let Some(e) = e else {
                return Err(usage(format!(
                    "--size: required, because {} does not exist yet",
                    p.display()
                )));
            };
            let avail = e.len.saturating_sub(job.offset);
            smallest = Some(smallest.map_or(avail, |s| s.min(avail)));
        }
        let size = smallest.unwrap_or(0) * nfiles;
        if size / nfiles < job.max_xfer() {
            let what = if job.numpages > 1 {
                format!("bs x numpages = {}", job.xfer())
            } else {
                "larger than".into()
            };
            return Err(usage(format!(
                "--bs={}: {what} the {} bytes available in {} after offset {}",
                job.bs,
                size / nfiles,
                paths[0].display(),
                job.offset
            )));
        }
        let per_file = size / nfiles;
        if job.numpages > 1 && per_file % job.xfer() != 0 {
            t.warnings.push(format!(
                "{}: {per_file} bytes after offset {} are not a multiple of bs x numpages \
                 ({} bytes): the last {} bytes are not read or written (no short calls)",
                paths[0].display(),
                job.offset,
                job.xfer(),
                per_file % job.xfer()
            ));
        }
        job.size = Some(size);
    }
    let extent = job.offset + per_file_bytes(job);
    let needs_layout = job.rw != RwMode::Write || job.overwrite;

    for (p, found) in paths.iter().zip(&found) {
        let known = t.needs.get(p).cloned();
        let created_here = known.as_ref().is_some_and(|n| !n.exists);
        let kind = found.as_ref().map_or(Kind::Regular, |e| e.kind);
        let ours = found
            .as_ref()
            .is_some_and(|e| e.kind == Kind::Regular && e.verdict.is_ours() && !e.busy);
        let mut extends = false;
        if let Some(e) = found {
            if job.rw.writes() && e.busy {
                return Err(usage(format!(
                    "{}: another process is writing this file (it holds iogauge's write lock); \
                     one writer per file at a time, readers may share it",
                    p.display()
                )));
            }
            if job.rw.writes() && !safety.allow_overwrite && !ours {
                let what = if kind == Kind::BlockDevice {
                    "is a block device: writing destroys whatever it holds".to_string()
                } else {
                    format!(
                        "{}: writing would overwrite its data",
                        e.verdict.why_not_ours()
                    )
                };
                return Err(usage(format!(
                    "{opt}={}: {what}; pass --allow-overwrite to write anyway, or name a new file",
                    p.display()
                )));
            }
            if e.len < extent {
                if kind == Kind::BlockDevice {
                    return Err(usage(format!(
                        "--size: {} is {} bytes, the job needs offset + size = {extent} bytes",
                        p.display(),
                        e.len
                    )));
                }
                if !ours && !safety.allow_overwrite {
                    return Err(usage(format!(
                        "--size: {} is {} bytes, the job needs offset + size = {extent}; use a \
                         smaller --size, or --allow-overwrite to let iogauge extend the file",
                        p.display(),
                        e.len
                    )));
                }
                extends = true;
            }
            if kind == Kind::Regular && job.rw.reads() && e.allocated < e.len {
                t.warnings.push(format!(
                    "{} is sparse ({} of {} bytes allocated): reading its holes never touches \
                     the device, so read results overstate it",
                    p.display(),
                    e.allocated,
                    e.len
                ));
            }
        } else if !created_here {
            check_creatable(p, opt)?;
        }
        if job.direct {
            let dev = match found {
                Some(e) => Some(e.dev),
                None => fs::metadata(parent_dir(p)).ok().map(|m| block_dev_of(&m)),
            };
            if let Some(lbs) = dev.and_then(logical_block_size) {
                let sizes: Vec<u64> = job.used_sizes().flat_map(|s| s.alignment_sizes()).collect();
                let checks = sizes
                    .into_iter()
                    .map(|b| ("--bs", b))
                    .chain([("--offset", job.offset)]);
                for (name, v) in checks {
                    if v % lbs != 0 {
                        return Err(usage(format!(
                            "{name}={v}: with --direct it must be a multiple of the logical block \
                             size of the device under {} ({lbs} bytes)",
                            p.display()
                        )));
                    }
                }
            }
        }
        let entry = t.needs.entry(p.clone()).or_insert(Need {
            kind,
            exists: found.is_some(),
            extent: 0,
            layout_from: None,
            first_group: gi,
            written: false,
            identity: found.as_ref().map(|e| e.identity),
            follow: found.as_ref().is_some_and(|e| e.follow),
            ours,
        });
        entry.extent = entry.extent.max(extent);
        entry.written |= job.rw.writes() || (extends && needs_layout);
        if needs_layout && entry.layout_from.is_none() {
            entry.layout_from = Some(gi);
        }
    }
    Ok(())
}

/// A file the run will create: its directory must exist and take new files.
fn check_creatable(p: &Path, opt: &str) -> Result<(), TargetError> {
    let parent = parent_dir(p);
    match fs::metadata(parent) {
        Ok(d) if d.is_dir() => {}
        _ => {
            return Err(usage(format!(
                "{opt}={}: directory {} does not exist",
                p.display(),
                parent.display()
            )));
        }
    }
    if let Err(e) = rustix::fs::access(parent, rustix::fs::Access::WRITE_OK) {
        return Err(usage(format!(
            "{opt}={}: cannot create files in {}: {}",
            p.display(),
            parent.display(),
            io::Error::from(e)
        )));
    }
    Ok(())
}

/// Refuses when the files to be created or extended do not fit in the free space.
fn check_space(t: &Targets) -> Result<(), TargetError> {
    let mut per_fs: BTreeMap<u64, (u64, PathBuf)> = BTreeMap::new();
    for (p, n) in &t.needs {
        if n.kind == Kind::BlockDevice {
            continue;
        }
        let have = fs::metadata(p).map(|m| m.blocks() * 512).unwrap_or(0);
        let grow = n.extent.saturating_sub(have);
        let dir = parent_dir(p);
        let dev = fs::metadata(dir).map(|m| m.dev()).unwrap_or(0);
        let e = per_fs.entry(dev).or_insert((0, dir.to_path_buf()));
        e.0 += grow;
    }
    for (need, dir) in per_fs.values() {
        if *need == 0 {
            continue;
        }
        let vfs = rustix::fs::statvfs(dir).map_err(|e| {
            usage(format!(
                "{}: statvfs failed: {}",
                dir.display(),
                io::Error::from(e)
            ))
        })?;
        let free = vfs.f_bavail * vfs.f_frsize;
        if *need > free {
            return Err(usage(format!(
                "--size: the test files need {} more on the file system of {}, which has {} free; \
                 use a smaller --size or another directory",
                crate::report::human_bytes(*need),
                dir.display(),
                crate::report::human_bytes(free)
            )));
        }
    }
    Ok(())
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
            let n = self.needs[&p].clone();
            if n.kind == Kind::BlockDevice || n.first_group > gi {
                continue;
            }
            if !n.exists {
                let (fd, id) = ownership::create_new(&p).map_err(|e| {
                    setup_err(&p, "cannot create", e, "it appeared after the check")
                })?;
                self.created.push((p.clone(), id));
                lock_for_writing(&fd, &p)?;
                self.held.insert(p.clone(), fd);
                let need = self.needs.get_mut(&p).expect("known path");
                need.exists = true;
                need.identity = Some(id);
                need.ours = true;
                need.written = true;
            }
            if n.layout_from.is_some_and(|g| g <= gi) {
                let fd = self.reopen(&p, OFlags::WRONLY)?;
                let len = rustix::fs::fstat(&fd)
                    .map_err(|e| io_err(&p, "cannot stat", e.into()))?
                    .st_size as u64;
                if len < n.extent {
                    lay_out(&fd, &p, len, n.extent, &mut rng, interrupt)?;
                }
            }
        }
        Ok(())
    }

    /// Opens `p` again, only if it is still the inode that was checked or created.
    fn reopen(&self, p: &Path, flags: OFlags) -> Result<OwnedFd, TargetError> {
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
                if flags.contains(OFlags::DIRECT) && e.raw_os_error() == Some(libc::EINVAL) =>
            {
                usage(format!(
                    "--direct=1: the file system holding {} does not support O_DIRECT",
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
            if !n.exists || n.kind != Kind::Regular {
                continue;
            }
            let Some(fd) = self.held.get(p) else {
                continue;
            };
            let created = self.created.iter().position(|(c, _)| c == p);
            if created.is_none() {
                // Still ours now? Its mark must match what the file is at this moment.
                let verdict = rustix::fs::fstat(fd)
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
            if let Err(e) = ownership::remove_if_same(p, fd.as_fd()) {
                notes.push(format!("{}: cannot remove: {e}", p.display()));
                continue;
            }
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

    /// Ends the run's hold on its files: removes what it created when `remove` (only while
    /// each path still names the file it created), marks every file it wrote and keeps as
    /// iogauge's as it is now, and releases the write locks. Returns what it could not do.
    pub fn finish(&mut self, remove: bool) -> Vec<String> {
        let mut failed = Vec::new();
        if remove {
            for (p, _) in std::mem::take(&mut self.created).into_iter().rev() {
                let Some(fd) = self.held.remove(&p) else {
                    continue;
                };
                if let Err(e) = ownership::remove_if_same(&p, fd.as_fd()) {
                    failed.push(format!("could not remove {}: {e}", p.display()));
                }
            }
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
        self.created.clear();
        failed
    }
}

fn io_err(p: &Path, what: &str, e: io::Error) -> TargetError {
    TargetError::Io(format!("{}: {what}: {e}", p.display()))
}

/// An open or create that failed before any I/O: permissions, a read-only file system or a
/// path that changed are the user's to fix (exit 2); anything else is the system's (exit 1).
fn setup_err(p: &Path, what: &str, e: io::Error, exists: &str) -> TargetError {
    match e.raw_os_error() {
        Some(libc::EACCES | libc::EPERM | libc::EROFS) => {
            usage(format!("{}: {what}: {e}", p.display()))
        }
        Some(libc::EEXIST) => usage(format!("{}: {what}: {exists}", p.display())),
        _ => io_err(p, what, e),
    }
}

/// How much layout writes per call: also how soon an interrupt is noticed.
const LAYOUT_CHUNK: usize = 1 << 20;
/// Lay-out flushes what it wrote every so often, so that no single flush (which cannot be
/// interrupted) takes long, and the last one, after the whole file, is short too.
const LAYOUT_FLUSH_EVERY: u64 = 64 << 20;

/// Writes random bytes from `from` to `to` through `fd`, then flushes: the file is fully
/// allocated and its pages clean, so invalidation can really drop them.
fn lay_out(
    fd: &OwnedFd,
    p: &Path,
    from: u64,
    to: u64,
    rng: &mut impl RngCore,
    interrupt: &AtomicBool,
) -> Result<(), TargetError> {
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
        let w = rustix::io::pwrite(fd, &buf[..n], off)
            .map_err(|e| io_err(p, &format!("laying out at offset {off}"), e.into()))?;
        off += w as u64;
        if (off - from) % LAYOUT_FLUSH_EVERY < w as u64 && off < to {
            rustix::fs::fdatasync(fd).map_err(|e| io_err(p, "flush during lay-out", e.into()))?;
        }
    }
    rustix::fs::fsync(fd).map_err(|e| io_err(p, "fsync after lay-out", e.into()))
}

/// A file opened for a job, with the flags the kernel reports it really has.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct OpenedFile {
    pub path: PathBuf,
    pub open_flags: Vec<std::borrow::Cow<'static, str>>,
}

impl Targets {
    /// Opens a job's files with its cache flags, applies the fadvise hint, and drops cached
    /// pages when `invalidate` is set. Files are never created here, and a path is opened only
    /// if it still names the file that was checked or created.
    pub fn open_job(&self, job: &JobSpec) -> Result<(Vec<OwnedFd>, Vec<OpenedFile>), TargetError> {
        if job.engine == EngineKind::Null {
            return Ok((Vec::new(), Vec::new()));
        }
        let mut flags = match (job.rw.reads(), job.rw.writes()) {
            (true, true) => OFlags::RDWR,
            (false, true) => OFlags::WRONLY,
            _ => OFlags::RDONLY,
        };
        if job.direct {
            flags |= OFlags::DIRECT;
        }
        // pvsync2 asks for write-through per call (RWF_DSYNC/RWF_SYNC) instead.
        match job.sync {
            _ if job.engine.per_call_sync() => {}
            SyncMode::None => {}
            SyncMode::Dsync => flags |= O_DSYNC,
            SyncMode::Sync => flags |= O_SYNC,
        }
        let region = NonZeroU64::new(per_file_bytes(job));
        let mut fds = Vec::new();
        let mut opened = Vec::new();
        for p in job.paths() {
            let fd = self.reopen(&p, flags)?;
            if job.invalidate {
                // Flush first: fadvise only drops clean pages.
                let _ = rustix::fs::fdatasync(&fd);
                rustix::fs::fadvise(&fd, job.offset, region, Advice::DontNeed)
                    .map_err(|e| io_err(&p, "cannot drop cached pages", e.into()))?;
            }
            let advice = match job.fadvise {
                Fadvise::None => None,
                Fadvise::Sequential => Some(Advice::Sequential),
                Fadvise::Random => Some(Advice::Random),
            };
            if let Some(a) = advice {
                rustix::fs::fadvise(&fd, job.offset, region, a)
                    .map_err(|e| io_err(&p, "fadvise failed", e.into()))?;
            }
            let got = rustix::fs::fcntl_getfl(&fd).map_err(|e| io_err(&p, "fcntl", e.into()))?;
            opened.push(OpenedFile {
                path: p,
                open_flags: flag_names(got).into_iter().map(Into::into).collect(),
            });
            fds.push(fd);
        }
        Ok((fds, opened))
    }
}

// rustix 1.1's linux_raw backend defines `OFlags::DSYNC` as O_SYNC, which would silently turn
// sync=dsync into full O_SYNC; take both from libc instead.
const O_DSYNC: OFlags = OFlags::from_bits_retain(libc::O_DSYNC as u32);
const O_SYNC: OFlags = OFlags::from_bits_retain(libc::O_SYNC as u32);

/// Names of the access mode and the cache-relevant flags in `f`.
pub fn flag_names(f: OFlags) -> Vec<&'static str> {
    let mut v = vec![match f & OFlags::RWMODE {
        OFlags::WRONLY => "O_WRONLY",
        OFlags::RDWR => "O_RDWR",
        _ => "O_RDONLY",
    }];
    if f.contains(OFlags::DIRECT) {
        v.push("O_DIRECT");
    }
    // O_SYNC includes the O_DSYNC bit; name the stronger one only.
    if f.contains(O_SYNC) {
        v.push("O_SYNC");
    } else if f.contains(O_DSYNC) {
        v.push("O_DSYNC");
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{Origin, Section, resolve};

    fn plan(dir: &Path, groups: &[&str]) -> Plan {
        let f = dir.join("f");
        let sections: Vec<Section> = groups
            .iter()
            .map(|rw| {
                let mut s = Section::new(*rw);
                s.set("filename", f.to_str().unwrap(), Origin::Cli)
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
        assert!(m.blocks() * 512 >= 1 << 20, "laid out, not sparse");
        assert_eq!(t.finish(true).len(), 0);
        assert!(!d.path().join("f").exists());
    }

    #[test]
    fn flag_names_distinguish_dsync_from_sync() {
        assert_eq!(flag_names(OFlags::RDWR | O_DSYNC), ["O_RDWR", "O_DSYNC"]);
        assert_eq!(
            flag_names(OFlags::WRONLY | O_SYNC | OFlags::DIRECT),
            ["O_WRONLY", "O_DIRECT", "O_SYNC"]
        );
    }
}
