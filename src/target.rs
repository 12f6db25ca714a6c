//! Files and devices under test: checks a plan against the file system before anything is
//! created (existence, permissions, safety, alignment, free space), creates and lays out test
//! files (fully written, never sparse), opens them with the requested cache flags, drops their
//! cached pages, and removes what it created. It never writes to a file it did not create, or to
//! a block device, unless the user allowed it: files it creates carry an extended attribute
//! (`user.iogauge.created`), so a file kept by an earlier run (`--keep`, SASIOTEST's `-w`,
//! sqlio's test file) may be written again, and anything else needs `--allow-overwrite`. A run
//! that writes a file holds an exclusive `flock` on it, so a second writer is refused (as
//! SASIOTEST refuses one) while readers go on. It runs no workload and keeps no statistics.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::num::NonZeroU64;
use std::os::fd::OwnedFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use rand_core::{RngCore, SeedableRng};
use rustix::fs::{Advice, Mode, OFlags};

use crate::engine::AlignedBuf;
use crate::spec::{EngineKind, Fadvise, JobSpec, Plan, RwMode, SyncMode, TargetSpec};

/// What the user allowed.
#[derive(Debug, Clone, Copy, Default)]
pub struct Safety {
    /// Write to existing files and block devices.
    pub allow_overwrite: bool,
    /// Skip the free-space check (for file systems whose statvfs cannot be trusted).
    pub skip_space_check: bool,
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
    /// Some job of the run writes it (so the run holds its write lock).
    written: bool,
}

/// The checked plan's files, and what this run created.
#[derive(Debug, Default)]
pub struct Targets {
    needs: BTreeMap<PathBuf, Need>,
    created: Vec<PathBuf>,
    /// Open descriptors holding the write lock of every file the run writes.
    locks: Vec<OwnedFd>,
    pub warnings: Vec<String>,
}

/// The extended attribute that marks a file iogauge created.
pub const CREATED_MARK: &str = "user.iogauge.created";

/// Whether `p` carries iogauge's mark (it created the file in an earlier run).
pub fn created_by_iogauge(p: &Path) -> bool {
    let mut buf = [0u8; 16];
    rustix::fs::getxattr(p, CREATED_MARK, &mut buf[..]).is_ok()
}

/// Marks `p` as created by iogauge (best effort: some file systems have no user xattrs).
pub fn mark_created(p: &Path) {
    let _ = rustix::fs::setxattr(p, CREATED_MARK, b"1", rustix::fs::XattrFlags::empty());
}

/// Takes the exclusive write lock on `fd` without waiting.
fn lock_for_writing(fd: &OwnedFd, p: &Path) -> Result<(), TargetError> {
    use rustix::fs::FlockOperation;
    match rustix::fs::flock(fd, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(()),
        Err(rustix::io::Errno::WOULDBLOCK) => Err(usage(format!(
            "{}: another process is writing this file (it holds iogauge's write lock); one \
             writer per file at a time, readers may share it",
            p.display()
        ))),
        Err(e) => Err(io_err(p, "cannot lock for writing", e.into())),
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

/// The device's logical block size for `meta` (of a file or a block device), from sysfs.
fn logical_block_size(meta: &fs::Metadata) -> Option<u64> {
    let dev = if meta.file_type().is_block_device() {
        meta.rdev()
    } else {
        meta.dev()
    };
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

/// The logical block size of the device holding `p` (or, when `p` does not exist, its
/// directory); `None` where there is no block device (tmpfs).
pub fn logical_block_size_at(p: &Path) -> Option<u64> {
    let meta = fs::metadata(p)
        .or_else(|_| fs::metadata(parent_dir(p)))
        .ok()?;
    logical_block_size(&meta)
}

/// Checks the whole plan before anything is created; fills in sizes taken from existing files.
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
    let written: Vec<PathBuf> = t
        .needs
        .iter()
        .filter(|(_, n)| n.written && n.exists && n.kind == Kind::Regular)
        .map(|(p, _)| p.clone())
        .collect();
    for p in written {
        let fd =
            rustix::fs::open(&p, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty()).map_err(|e| {
                usage(format!(
                    "{}: cannot open: {}",
                    p.display(),
                    io::Error::from(e)
                ))
            })?;
        lock_for_writing(&fd, &p)?;
        t.locks.push(fd);
    }
    Ok(t)
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
    let mut metas = Vec::new();
    for p in &paths {
        let meta = match fs::metadata(p) {
            Ok(m) => Some(m),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(usage(format!("{opt}={}: {e}", p.display()))),
        };
        if let Some(m) = &meta {
            if !(m.is_file() || m.file_type().is_block_device()) {
                return Err(usage(format!(
                    "{opt}={}: not a regular file or block device",
                    p.display()
                )));
            }
        }
        metas.push(meta);
    }
    if job.size_pct.is_some() || job.offset_pct.is_some() {
        // N% of what is there: the smallest of the job's files or devices.
        let mut smallest: Option<u64> = None;
        for (p, m) in paths.iter().zip(&metas) {
            let Some(m) = m else {
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
            let len = if m.file_type().is_block_device() {
                device_size(p)?
            } else {
                m.len()
            };
            smallest = Some(smallest.map_or(len, |s| s.min(len)));
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
        for (p, m) in paths.iter().zip(&metas) {
            let Some(m) = m else {
                return Err(usage(format!(
                    "--size: required, because {} does not exist yet",
                    p.display()
                )));
            };
            let len = if m.file_type().is_block_device() {
                device_size(p)?
            } else {
                m.len()
            };
            let avail = len.saturating_sub(job.offset);
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

    for (p, meta) in paths.iter().zip(&metas) {
        let known = t.needs.get(p).cloned();
        let created_here = known.as_ref().is_some_and(|n| !n.exists);
        let kind = match meta {
            Some(m) if m.file_type().is_block_device() => Kind::BlockDevice,
            _ => Kind::Regular,
        };
        if let Some(m) = meta {
            let len = if kind == Kind::BlockDevice {
                device_size(p)?
            } else {
                m.len()
            };
            if job.rw.writes()
                && !safety.allow_overwrite
                && !(kind == Kind::Regular && created_by_iogauge(p))
            {
                let what = if kind == Kind::BlockDevice {
                    "is a block device: writing destroys whatever it holds"
                } else {
                    "exists and iogauge did not create it: writing would overwrite its data"
                };
                return Err(usage(format!(
                    "{opt}={}: {what}; pass --allow-overwrite to write anyway, or name a new file",
                    p.display()
                )));
            }
            if len < extent && !(kind == Kind::Regular && created_by_iogauge(p)) {
                if kind == Kind::BlockDevice {
                    return Err(usage(format!(
                        "--size: {} is {len} bytes, the job needs offset + size = {extent} bytes",
                        p.display()
                    )));
                }
                if !safety.allow_overwrite {
                    return Err(usage(format!(
                        "--size: {} is {len} bytes, the job needs offset + size = {extent}; use a \
                         smaller --size, or --allow-overwrite to let iogauge extend the file",
                        p.display()
                    )));
                }
            }
            if kind == Kind::Regular && job.rw.reads() && m.blocks() * 512 < m.len() {
                t.warnings.push(format!(
                    "{} is sparse ({} of {} bytes allocated): reading its holes never touches \
                     the device, so read results overstate it",
                    p.display(),
                    m.blocks() * 512,
                    m.len()
                ));
            }
        } else if !created_here {
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
        }
        if job.direct {
            let probe = meta.clone().or_else(|| fs::metadata(parent_dir(p)).ok());
            if let Some(lbs) = probe.as_ref().and_then(logical_block_size) {
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
            exists: meta.is_some(),
            extent: 0,
            layout_from: None,
            first_group: gi,
            written: false,
        });
        entry.extent = entry.extent.max(extent);
        entry.written |= job.rw.writes();
        if needs_layout && entry.layout_from.is_none() {
            entry.layout_from = Some(gi);
        }
    }
    Ok(())
}

fn device_size(p: &Path) -> Result<u64, TargetError> {
    let fd = rustix::fs::open(p, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty()).map_err(|e| {
        usage(format!(
            "{}: cannot open: {}",
            p.display(),
            io::Error::from(e)
        ))
    })?;
    rustix::fs::seek(&fd, rustix::fs::SeekFrom::End(0)).map_err(|e| {
        usage(format!(
            "{}: cannot size: {}",
            p.display(),
            io::Error::from(e)
        ))
    })
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
    /// Creates and lays out the files group `gi` uses (called just before it runs).
    pub fn prepare_group(&mut self, gi: usize, seed: u64) -> Result<(), TargetError> {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
        let paths: Vec<PathBuf> = self.needs.keys().cloned().collect();
        for p in paths {
            let n = self.needs[&p].clone();
            if n.kind == Kind::BlockDevice || n.first_group > gi {
                continue;
            }
            let fresh = !n.exists && !self.created.contains(&p);
            if fresh {
                let fd = rustix::fs::open(
                    &p,
                    OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::CLOEXEC,
                    Mode::from_raw_mode(0o644),
                )
                .map_err(|e| io_err(&p, "cannot create", e.into()))?;
                self.created.push(p.clone());
                // Best effort: a file system without user xattrs leaves the file unmarked, and
                // a later run needs --allow-overwrite to write it.
                let _ =
                    rustix::fs::fsetxattr(&fd, CREATED_MARK, b"1", rustix::fs::XattrFlags::empty());
                if n.written {
                    lock_for_writing(&fd, &p)?;
                    self.locks.push(fd);
                }
            }
            let len = fs::metadata(&p)
                .map_err(|e| io_err(&p, "cannot stat", e))?
                .len();
            if n.layout_from.is_some_and(|g| g <= gi) && len < n.extent {
                lay_out(&p, len, n.extent, &mut rng)?;
            }
        }
        Ok(())
    }

    /// Files this run created, in creation order.
    pub fn created(&self) -> &[PathBuf] {
        &self.created
    }

    /// Paths under test.
    pub fn paths(&self) -> impl Iterator<Item = &PathBuf> {
        self.needs.keys()
    }

    /// Removes every file this run created; returns the ones that could not be removed.
    /// Removes the files among `paths` that iogauge created, in this run or an earlier one
    /// (a job's `unlink`); never anything else. A later group that uses one creates it again.
    pub fn unlink(&mut self, paths: &[PathBuf]) -> Vec<(PathBuf, io::Error)> {
        let mut failed = Vec::new();
        for p in paths {
            match self.created.iter().position(|c| c == p) {
                Some(i) => {
                    self.created.remove(i);
                }
                None => {
                    let ours =
                        fs::symlink_metadata(p).is_ok_and(|m| m.is_file()) && created_by_iogauge(p);
                    if !ours {
                        continue;
                    }
                }
            }
            if let Some(n) = self.needs.get_mut(p) {
                n.exists = false;
            }
            if let Err(e) = fs::remove_file(p) {
                if e.kind() != io::ErrorKind::NotFound {
                    failed.push((p.clone(), e));
                }
            }
        }
        failed
    }

    pub fn remove_created(&mut self) -> Vec<(PathBuf, io::Error)> {
        let mut failed = Vec::new();
        for p in self.created.drain(..) {
            if let Err(e) = fs::remove_file(&p) {
                if e.kind() != io::ErrorKind::NotFound {
                    failed.push((p, e));
                }
            }
        }
        failed
    }
}

fn io_err(p: &Path, what: &str, e: io::Error) -> TargetError {
    TargetError::Io(format!("{}: {what}: {e}", p.display()))
}

/// Writes random bytes from `from` to `to`, then flushes: the file is fully allocated and its
/// pages clean, so invalidation can really drop them.
fn lay_out(p: &Path, from: u64, to: u64, rng: &mut impl RngCore) -> Result<(), TargetError> {
    let fd = rustix::fs::open(p, OFlags::WRONLY | OFlags::CLOEXEC, Mode::empty())
        .map_err(|e| io_err(p, "cannot open to lay out", e.into()))?;
    let mut buf = AlignedBuf::zeroed(1 << 20);
    rng.fill_bytes(&mut buf);
    let mut off = from;
    while off < to {
        let n = ((to - off) as usize).min(buf.len());
        // Vary each chunk so the file does not deduplicate.
        buf[..8].copy_from_slice(&off.to_le_bytes());
        let w = rustix::io::pwrite(&fd, &buf[..n], off)
            .map_err(|e| io_err(p, &format!("laying out at offset {off}"), e.into()))?;
        off += w as u64;
    }
    rustix::fs::fsync(&fd).map_err(|e| io_err(p, "fsync after lay-out", e.into()))
}

/// A file opened for a job, with the flags the kernel reports it really has.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct OpenedFile {
    pub path: PathBuf,
    pub open_flags: Vec<std::borrow::Cow<'static, str>>,
}

/// Opens a job's files with its cache flags, applies the fadvise hint, and drops cached pages
/// when `invalidate` is set. Files are never created here.
pub fn open_job(job: &JobSpec) -> Result<(Vec<OwnedFd>, Vec<OpenedFile>), TargetError> {
    if job.engine == EngineKind::Null {
        return Ok((Vec::new(), Vec::new()));
    }
    let mut flags = match (job.rw.reads(), job.rw.writes()) {
        (true, true) => OFlags::RDWR,
        (false, true) => OFlags::WRONLY,
        _ => OFlags::RDONLY,
    } | OFlags::CLOEXEC;
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
        let fd = rustix::fs::open(&p, flags, Mode::empty()).map_err(|e| {
            let e = io::Error::from(e);
            if job.direct && e.raw_os_error() == Some(libc::EINVAL) {
                usage(format!(
                    "--direct=1: the file system holding {} does not support O_DIRECT",
                    p.display()
                ))
            } else {
                io_err(&p, "cannot open", e)
            }
        })?;
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
        t.prepare_group(0, 1).unwrap();
        assert_eq!(fs::metadata(d.path().join("f")).unwrap().len(), 0);
        t.prepare_group(1, 1).unwrap();
        let m = fs::metadata(d.path().join("f")).unwrap();
        assert_eq!(m.len(), 1 << 20);
        assert!(m.blocks() * 512 >= 1 << 20, "laid out, not sparse");
        assert_eq!(t.remove_created().len(), 0);
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
