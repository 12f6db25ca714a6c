//! The check of a plan against the file system, before anything is created: every existing
//! path opened once and read through that descriptor (type, size, inode, iogauge's mark),
//! sizes taken from existing files, permissions, safety, alignment and free space. Nothing
//! here creates, writes or removes a file; it only opens, locks and (for a file the run will
//! write again) marks it as being written.

use crate::platform::fd::{AsFd, OwnedFd};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::platform::sys::fs::{FileType, OFlags, Stat};

use super::{
    Kind, Need, Safety, TargetError, Targets, Writer, io_err, lock_for_writing, try_lock, usage,
};
use crate::files::fsinfo::{logical_block_size_at, parent_dir};
use crate::files::named;
use crate::files::ownership::{self, Identity, MarkState, Verdict};
use crate::plan::{EngineKind, JobSpec, Plan, RwMode, TargetSpec};

/// An existing path as the check found it, through one descriptor.
#[derive(Debug)]
pub(super) struct Probe {
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

/// A path named as the user named it: `--filename=p`, `job.fio:3: filename=p`, `sqlio p`.
pub(super) type Named<'a> = dyn Fn(&Path) -> String + 'a;

/// How the job's files are named in messages (see [`Named`]).
pub(super) fn option_of(job: &JobSpec) -> impl Fn(&Path) -> String + use<> {
    // A replay's files are its log's (or the one it is redirected to).
    let replay = job.replay.as_ref().map(|r| match &r.redirect {
        Some(_) => (None, "replay_redirect"),
        None => (
            Some(job.label_with("read_iolog", &crate::rawpath::display(&r.log))),
            "read_iolog",
        ),
    });
    let option = match (&replay, &job.target) {
        (Some((_, o)), _) => *o,
        (None, TargetSpec::Files(_)) => "filename",
        (None, TargetSpec::Directory(_)) => "directory",
    };
    let log = replay.and_then(|r| r.0);
    // Owned, so the job stays free to be sized meanwhile.
    let origin = job.origins.get(option).cloned();
    let fallback = job.label(option);
    move |p: &Path| {
        let v = crate::rawpath::display(p);
        if let Some(log) = &log {
            return format!("{log}: {v}");
        }
        match &origin {
            Some(o) => o.label_with(option, &v),
            None => format!("{fallback}={v}"),
        }
    }
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
        let size = plan
            .groups
            .iter()
            .flat_map(|g| &g.jobs)
            .next()
            .map_or("--size".into(), |j| j.label("size"));
        super::space::check_space(&t, &size)?;
    }
    // Lock what the run writes; an abandoned file of a killed run is taken over.
    let probes = std::mem::take(&mut t.probes);
    for (p, probe) in probes {
        let n = t.needs.get_mut(&p).expect("probed paths are needed");
        if n.kind == Kind::BlockDevice && n.written {
            let claim = claim_device(&p, &probe)?;
            t.held.insert(p, claim);
            continue;
        }
        if n.kind != Kind::Regular || !(n.written || probe.abandoned) {
            t.held.insert(p, probe.fd);
            continue;
        }
        // Marked again as kept when the run ends.
        n.written = true;
        if probe.verdict == Verdict::OldMark && safety.allow_overwrite {
            // Written as the user allowed: from now on it carries a mark that can tell.
            n.ours = true;
        }
        if !probe.abandoned {
            lock_for_writing(&probe.fd, &p)?;
        }
        if probe.abandoned && probe.verdict == Verdict::Unfinished {
            t.warnings.push(format!(
                "{}: left by an iogauge run that did not finish (killed?); this run takes it \
                 over and removes it at the end unless kept",
                p.display()
            ));
            t.created.push(p.clone());
            let place = ownership::Place::of(&p)
                .ok()
                .map(|pl| pl.sharing(&mut t.dirs));
            ownership::watch(&p, Identity::of(&probe.st), place.as_ref());
            if let Some(place) = place {
                t.places.insert(p.clone(), place);
            }
        } else if probe.abandoned {
            t.warnings.push(format!(
                "{}: an iogauge run was writing it and did not finish (killed?)",
                p.display()
            ));
        }
        t.held.insert(p, probe.fd);
    }
    // Only now that every lock is held: until this run closes them, the marks of the kept
    // files it writes say they are being written (a leftover keeps its own).
    for (p, fd) in &t.held {
        let n = &t.needs[p];
        if n.kind == Kind::Regular && n.ours && n.written && !t.created.contains(p) {
            let _ = ownership::set_mark(fd.as_fd(), MarkState::Writing);
        }
    }
    Ok(t)
}

/// Claims a block device the run writes exclusively (`O_EXCL`) for the whole run: refused
/// while it is mounted or in use (RAID, LVM, swap), and nothing can mount it meanwhile. The
/// claim must reach the device that was checked.
fn claim_device(p: &Path, probe: &Probe) -> Result<OwnedFd, TargetError> {
    let mut flags = OFlags::RDONLY | OFlags::EXCL | OFlags::CLOEXEC;
    if !probe.follow {
        flags |= OFlags::NOFOLLOW;
    }
    let claim = crate::platform::sys::fs::open(p, flags, crate::platform::sys::fs::Mode::empty())
        .map_err(|e| match e {
        crate::platform::sys::io::Errno::BUSY => usage(format!(
            "{}: the device is in use (mounted, swap, or part of a RAID or LVM volume); \
             iogauge never writes a device in use",
            p.display()
        )),
        e => usage(format!(
            "{}: cannot open exclusively: {}",
            p.display(),
            io::Error::from(e)
        )),
    })?;
    let st =
        crate::platform::sys::fs::fstat(&claim).map_err(|e| io_err(p, "cannot stat", e.into()))?;
    if Identity::of(&st) != Identity::of(&probe.st) {
        return Err(TargetError::Io(format!(
            "{}: it is no longer the device iogauge checked; refusing to write it",
            p.display()
        )));
    }
    Ok(claim)
}

/// Opens `p` if it exists (once per run; later jobs reuse the probe) and reads what it is.
fn probe<'t>(
    t: &'t mut Targets,
    p: &Path,
    opt: &Named<'_>,
) -> Result<Option<&'t Probe>, TargetError> {
    if !t.probes.contains_key(p) {
        if let Some(why) = crate::platform::host::unsupported_target(p) {
            return Err(usage(format!("{}: {why}", opt(p))));
        }
        let link = match fs::symlink_metadata(p) {
            Ok(m) => m.file_type().is_symlink(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(usage(format!("{}: {e}", opt(p)))),
        };
        // Types are checked before opening: opening a tape or a FIFO has effects of its own.
        let meta = match fs::metadata(p) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound && link => {
                return Err(usage(format!(
                    "{}: a symbolic link to nothing; name the file itself",
                    opt(p)
                )));
            }
            Err(e) => return Err(usage(format!("{}: {e}", opt(p)))),
        };
        let not_file = || usage(format!("{}: not a regular file or block device", opt(p)));
        if !(meta.is_file() || crate::files::fsinfo::is_block_device(p)) {
            return Err(not_file());
        }
        let (fd, st) = ownership::open_existing(p, OFlags::RDONLY, link)
            .map_err(|e| usage(format!("{}: cannot open: {e}", opt(p))))?;
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

/// The size of an existing target: a block device's from the device, a file's from its status.
fn probed_len(p: &Path, pr: &Probe) -> Result<u64, TargetError> {
    if pr.kind() == Kind::BlockDevice {
        crate::platform::sys::fs::seek(&pr.fd, crate::platform::sys::fs::SeekFrom::End(0)).map_err(
            |e| {
                usage(format!(
                    "{}: cannot size: {}",
                    p.display(),
                    io::Error::from(e)
                ))
            },
        )
    } else {
        Ok(pr.st.st_size as u64)
    }
}

/// What check_job needs of an existing target, copied out of its probe.
#[derive(Debug, Clone)]
pub(super) struct Existing {
    pub(super) kind: Kind,
    pub(super) len: u64,
    allocated: u64,
    dev: u64,
    pub(super) identity: Identity,
    pub(super) follow: bool,
    pub(super) verdict: Verdict,
    /// Another iogauge run is writing it now (it holds the write lock).
    pub(super) busy: bool,
}

pub(super) fn existing(
    t: &mut Targets,
    p: &Path,
    opt: &Named<'_>,
) -> Result<Option<Existing>, TargetError> {
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
    let opt: &Named<'_> = &opt;
    if !check_engine(job)? {
        return Ok(());
    }
    if job.engine.file_op() {
        return super::names::check_job(t, gi, job);
    }
    check_directory(job)?;
    t.check_donor(gi, job, safety)?;
    super::advice::check(t, job);
    let paths = job.paths();
    // Existing files first: they may set the size.
    let mut found = Vec::new();
    for p in &paths {
        found.push(existing(t, p, opt)?);
    }
    super::fill::size_to_fill(job, &paths, &found)?;
    size_from_existing(t, job, &paths, &found)?;
    let extent = job.offset.saturating_add(job.per_file_bytes());
    check_journal(job)?;
    check_data_to_verify(t, (gi, &*job), &paths, &found, extent)?;
    // e4defrag moves blocks that must be there, as fio's layout leaves them.
    let needs_layout =
        job.rw != RwMode::Write || job.overwrite || job.engine == EngineKind::E4defrag;
    // A filling job that lays its files out first reads what the lay-out could write.
    if job.fill_device && needs_layout {
        job.size_from_fill = true;
    }

    for (i, (p, found)) in paths.iter().zip(&found).enumerate() {
        let extent = job.extent(i);
        let (kind, ours, extends) = check_path(t, job, p, found.as_ref(), extent, safety)?;
        if job.direct {
            check_alignment(job, p)?;
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
            fallocate: job.fallocate,
            writers: Vec::new(),
            by_job: false,
            fill_from: None,
            after_fill: 0,
        });
        // e4defrag moves blocks and leaves the data: no clash with jobs verifying it.
        if job.rw.modifies() && job.engine != EngineKind::E4defrag {
            let me = format!("{}.{}", job.name, job.clone);
            // Jobs writing one file at once all seal their blocks alike, or none verifies.
            let clash = writer_clash(&entry.writers, (gi, &me), job, p, extent);
            if let Some(why) = clash {
                return Err(usage(format!("{}: {why}", job.label("verify"))));
            }
            entry.writers.push((gi, me, job.verify, job.offset, extent));
        }
        if job.fill_device {
            entry.fill_from.get_or_insert(gi);
        }
        if entry.fill_from.is_some_and(|g| g < gi) && !job.size_from_fill {
            entry.after_fill = entry.after_fill.max(extent);
        }
        entry.extent = entry.extent.max(extent);
        entry.written |= job.rw.modifies() || (extends && needs_layout);
        if needs_layout && entry.layout_from.is_none() {
            entry.layout_from = Some(gi);
        }
    }
    Ok(())
}

/// The engine can run the job here (io_uring's features, libaio's context probed); `false`:
/// ioengine=null,
/// which has no file to check (its size given).
fn check_engine(job: &JobSpec) -> Result<bool, TargetError> {
    if matches!(job.engine, EngineKind::IoUring | EngineKind::Libaio) {
        let cfg = job.engine_config();
        crate::engine::platform::probe(&cfg).map_err(|e| {
            let named = if e.option == "ioengine" {
                job.label_with("ioengine", job.engine.as_str())
            } else {
                job.label(e.option)
            };
            usage(format!("{named}: {}", e.message))
        })?;
    }
    if let Err((option, e)) = crate::engine::exec::outputs_free(&job.output_files()) {
        return Err(usage(format!("{}: {e}", job.label(option))));
    }
    super::net::check(job)?;
    if matches!(job.engine, EngineKind::Cpuio | EngineKind::Exec) || job.engine.network() {
        return Ok(false);
    }
    if job.engine == EngineKind::Null {
        if job.size.is_none() {
            return Err(usage(format!(
                "{}: required with ioengine=null (no file to size it)",
                job.label("size")
            )));
        }
        return Ok(false);
    }
    Ok(true)
}

/// verify_state_save's journal may be written (before anything runs: one in the way that is
/// not iogauge's own is refused); verify_state_load's is there.
fn check_journal(job: &JobSpec) -> Result<(), TargetError> {
    if job.verify.is_some_and(|v| v.state_save) {
        // Found before anything runs: a journal in the way that is not iogauge's own.
        let state = crate::verify::state_path(&job.name, job.clone);
        crate::files::named::check_output(&state, false).map_err(|e| {
            usage(format!(
                "{}: {}: {e}",
                job.label("verify_state_save"),
                crate::rawpath::display(&state)
            ))
        })?;
    }
    if job.verify.is_some_and(|v| v.state_load) {
        let state = crate::verify::state_path(&job.name, job.clone);
        if !state.is_file() {
            return Err(usage(format!(
                "{}: {} is not there: no journal of durable writes to check against (the \
                 run with verify_state_save=1 writes it in its current directory)",
                job.label("verify_state_load"),
                crate::rawpath::display(&state)
            )));
        }
    }
    Ok(())
}

/// A check of existing data (verify_only, verify on a reader): each file exists and holds
/// the job's region, or an earlier job of this run writes it. Nothing is laid out for such a
/// check: plain layout data has no headers to check.
fn check_data_to_verify(
    t: &Targets,
    (gi, job): (usize, &JobSpec),
    paths: &[PathBuf],
    found: &[Option<Existing>],
    extent: u64,
) -> Result<(), TargetError> {
    if !job.verify.is_some_and(|v| v.only || v.inline) {
        return Ok(());
    }
    // Nothing is laid out for a check of what an earlier run left (or an earlier group of
    // this run writes): plain layout data has no headers to check.
    for (p, f) in paths.iter().zip(found) {
        let shown = crate::rawpath::display(p);
        let written_before = t
            .needs
            .get(p)
            .is_some_and(|n| n.writers.iter().any(|w| w.0 < gi) && n.extent >= extent);
        if written_before {
            continue;
        }
        match f {
            None => {
                return Err(usage(format!(
                    "{}: {shown} does not exist and no earlier job of this run writes it: \
                     nothing to verify",
                    job.label(verify_option(job))
                )));
            }
            Some(e) if e.len < extent => {
                return Err(usage(format!(
                    "{}: {shown} holds {} bytes; the job's region ends at byte {extent}",
                    job.label(verify_option(job)),
                    e.len
                )));
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// Jobs of one group writing one file's same bytes at once must all seal their blocks alike,
/// or none may verify: why `job` (`me`) may not join `writers`, if it may not. Jobs whose
/// regions of the file are apart check their own, whatever the other writes (fio's t0003).
fn writer_clash(
    writers: &[Writer],
    (gi, me): (usize, &str),
    job: &JobSpec,
    p: &Path,
    extent: u64,
) -> Option<String> {
    writers.iter().find_map(|(g, other, v, offset, end)| {
        let overlaps = *offset < extent && job.offset < *end;
        if *g != gi {
            return None;
        }
        match (v, job.verify) {
            (None, None) => None,
            (Some(a), Some(b)) if a.state_save || b.state_save => Some(format!(
                "jobs {other} and {me} both write {} at once: verify_state_save \
                 journals one job's writes of a file, not several jobs' (give each \
                 job its own file)",
                crate::rawpath::display(p)
            )),
            // Regions apart: each job seals and checks its own, as if alone in the file.
            _ if !overlaps => None,
            (Some(a), Some(b)) if a.interval != b.interval => Some(format!(
                "jobs {other} and {me} both write {} at once, sealing blocks of {} and \
                 {} bytes: give them one verify_interval",
                crate::rawpath::display(p),
                a.interval,
                b.interval
            )),
            (Some(a), Some(_)) if offset % a.interval != job.offset % a.interval => Some(format!(
                "jobs {other} and {me} both write {} at once from offsets that are \
                     not whole verify_interval blocks ({} bytes) apart: their blocks \
                     would overlap",
                crate::rawpath::display(p),
                a.interval
            )),
            (Some(a), Some(b)) if a.backlog > 0 || b.backlog > 0 => Some(format!(
                "jobs {other} and {me} both write bytes {}..{} of {} at once: \
                     verify_backlog checks a job's blocks while it runs, and the other \
                     job's writes to the same blocks race with those checks (give each \
                     job its own file or region (offset_increment), or leave \
                     verify_backlog out and let the check come after the writes)",
                job.offset.max(*offset),
                extent.min(*end),
                crate::rawpath::display(p)
            )),
            (Some(_), Some(_)) => None,
            _ => Some(format!(
                "jobs {other} and {me} both write {} at once and only one verifies: \
                 the other's unsealed writes would fail the check (give both verify= \
                 or neither)",
                crate::rawpath::display(p)
            )),
        }
    })
}

/// The option that made a job check existing data: verify_only, or verify on a reader.
fn verify_option(job: &JobSpec) -> &'static str {
    if job.verify.is_some_and(|v| v.only) {
        "verify_only"
    } else {
        "verify"
    }
}

/// A directory job's directory must be there.
pub(super) fn check_directory(job: &JobSpec) -> Result<(), TargetError> {
    if let TargetSpec::Directory(dir) = &job.target {
        match fs::metadata(dir) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(usage(format!(
                    "{}={}: not a directory",
                    job.label("directory"),
                    dir.display()
                )));
            }
            Err(_) => {
                return Err(usage(format!(
                    "{}={}: no such directory",
                    job.label("directory"),
                    dir.display()
                )));
            }
        }
    }
    Ok(())
}

/// Sizes and offsets given as a share of what is there (`size=50%`), or taken from the files
/// when no size is given.
fn size_from_existing(
    t: &mut Targets,
    job: &mut JobSpec,
    paths: &[PathBuf],
    found: &[Option<Existing>],
) -> Result<(), TargetError> {
    let nfiles = paths.len() as u64;
    if job.size_pct.is_some() || job.offset_pct.is_some() {
        // N% of what is there: the smallest of the job's files or devices.
        let mut smallest: Option<u64> = None;
        for (p, e) in paths.iter().zip(found) {
            let Some(e) = e else {
                let what = job.label(if job.size_pct.is_some() {
                    "size"
                } else {
                    "offset"
                });
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
        for (p, e) in paths.iter().zip(found) {
            // A file an earlier job writes holds what that job leaves, as fio finds it when
            // this job starts: the earlier jobs' extent, or (fill_device) what the filling
            // leaves, measured when this job's group starts.
            let earlier = t
                .needs
                .get(p)
                .filter(|n| n.extent > 0 || n.fill_from.is_some());
            if earlier.is_some_and(|n| n.fill_from.is_some()) {
                job.size_from_fill = true;
            }
            let len = match (e, earlier) {
                (_, Some(n)) => n.extent.max(e.as_ref().map_or(0, |e| e.len)),
                (Some(e), None) => e.len,
                (None, None) => {
                    return Err(usage(format!(
                        "{}: required, because {} does not exist yet",
                        job.label("size"),
                        p.display()
                    )));
                }
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
                "{}={}: {what} the {} bytes available in {} after offset {}",
                job.label("bs"),
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
    Ok(())
}

/// What one path allows this job: refuses writing what is not iogauge's (without
/// `--allow-overwrite`), a file another run writes, or a device too small; warns of a sparse
/// file. Returns the path's kind, whether it is iogauge's, and whether the job extends it.
fn check_path(
    t: &mut Targets,
    job: &JobSpec,
    p: &Path,
    found: Option<&Existing>,
    extent: u64,
    safety: Safety,
) -> Result<(Kind, bool, bool), TargetError> {
    let opt = option_of(job);
    // An earlier group's job creates it.
    let created_here = t.needs.get(p).is_some_and(|n| !n.exists);
    let kind = found.map_or(Kind::Regular, |e| e.kind);
    let ours = found.is_some_and(|e| e.kind == Kind::Regular && e.verdict.is_ours() && !e.busy);
    let mut extends = false;
    if let Some(e) = found {
        if job.rw.modifies() && e.busy {
            return Err(usage(format!(
                "{}: another process is writing this file (it holds iogauge's write lock); \
                 one writer per file at a time, readers may share it",
                p.display()
            )));
        }
        if job.rw.modifies() && !safety.allow_overwrite && !ours {
            let (doing, effect) = if job.rw.writes() {
                ("writing", "overwrite")
            } else {
                ("trimming", "discard")
            };
            let what = if kind == Kind::BlockDevice {
                format!("is a block device: {doing} destroys whatever it holds")
            } else {
                format!(
                    "{}: {doing} would {effect} its data",
                    e.verdict.why_not_ours()
                )
            };
            return Err(usage(format!(
                "{}: {what}; pass --allow-overwrite to write anyway, or name a new file",
                opt(p)
            )));
        }
        if e.len < extent {
            if kind == Kind::BlockDevice {
                return Err(usage(format!(
                    "{}: {} is {} bytes, the job needs offset + size = {extent} bytes",
                    job.label("size"),
                    p.display(),
                    e.len
                )));
            }
            if !ours && !safety.allow_overwrite {
                return Err(usage(format!(
                    "{}: {} is {} bytes, the job needs offset + size = {extent}; use a \
                     smaller size, or --allow-overwrite to let iogauge extend the file",
                    job.label("size"),
                    p.display(),
                    e.len
                )));
            }
            extends = true;
        }
        let sparse_below = (kind == Kind::BlockDevice && job.rw.reads())
            .then(|| crate::files::fsinfo::loop_backing(e.dev))
            .flatten()
            .filter(|(_, size, allocated)| allocated < size);
        if let Some((backing, size, allocated)) = sparse_below {
            t.warnings.push(format!(
                "{} is a loop device over {}, which is sparse ({allocated} of {size} bytes \
                 allocated): reading its holes never touches a disk, so read results overstate \
                 it",
                p.display(),
                backing.display()
            ));
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
    } else if !created_here && !job.allow_create {
        return Err(usage(format!(
            "{}: does not exist, and {} forbids creating it",
            opt(p),
            job.label_with("allow_file_create", "0")
        )));
    } else if !created_here {
        check_creatable(p, &opt)?;
    }
    Ok((kind, ours, extends))
}

/// With O_DIRECT, every size and the offset must be multiples of the device's logical block.
fn check_alignment(job: &JobSpec, p: &Path) -> Result<(), TargetError> {
    if let Some(lbs) = logical_block_size_at(p) {
        let sizes: Vec<u64> = job.used_sizes().flat_map(|s| s.alignment_sizes()).collect();
        let checks = sizes
            .into_iter()
            .map(|b| ("bs", b))
            .chain([("offset", job.offset)]);
        for (name, v) in checks {
            if v % lbs != 0 {
                return Err(usage(format!(
                    "{}={v}: with direct I/O it must be a multiple of the logical block \
                     size of the device under {} ({lbs} bytes)",
                    job.label(name),
                    p.display()
                )));
            }
        }
    }
    Ok(())
}

/// A file the run will create: its directory must exist and take new files.
pub(super) fn check_creatable(p: &Path, opt: &Named<'_>) -> Result<(), TargetError> {
    named::check_dir(parent_dir(p)).map_err(|e| usage(format!("{}: {e}", opt(p))))
}
