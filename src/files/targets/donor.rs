//! e4defrag's donor file (`donorname`): checked with the job's files, before anything is
//! created, as a file the run writes (a file iogauge did not make is refused without
//! `--allow-overwrite`: each move swaps blocks into it); created empty with the group,
//! opened for the job and, without `inplace`, allocated over the job's region then (fio's
//! engine does the same at its start); removed at the end with the run's other files.
//! Jobs may share one donor (numjobs clones do), never a file another job does I/O on.

use crate::platform::fd::OwnedFd;
use std::path::Path;

use crate::platform::sys::fs::{FallocateFlags, OFlags};

use super::check::{existing, option_of};
use super::{Kind, Need, Safety, TargetError, Targets, io_err, usage};
use crate::files::fsinfo::parent_dir;
use crate::plan::JobSpec;
use crate::plan::job::Fallocate;

impl Targets {
    /// Checks an e4defrag job's file systems (ext4 only) and its donor, and registers the
    /// donor as a file the run creates (or, one kept by an earlier run, writes).
    pub(super) fn check_donor(
        &mut self,
        gi: usize,
        job: &JobSpec,
        safety: Safety,
    ) -> Result<(), TargetError> {
        let paths = job.paths();
        for p in &paths {
            if let Some(d) = self.donors.iter().find(|d| *d == p) {
                return Err(usage(format!(
                    "{}: the donor file of an e4defrag job ({}); give the donor a name of \
                     its own",
                    option_of(job)(p),
                    d.display()
                )));
            }
        }
        let Some(donor) = job.donor.clone() else {
            return Ok(());
        };
        let label = || job.label_with("donorname", &crate::rawpath::display(&donor));
        let data = paths.contains(&donor) || self.needs.contains_key(&donor);
        if data && !self.donors.contains(&donor) {
            return Err(usage(format!(
                "{}: a file a job of this run does I/O on; the donor must be a file of its own",
                label()
            )));
        }
        for p in paths.iter().chain([&donor]) {
            ext4_only(job, p)?;
        }
        let named = |_: &Path| label();
        let found = existing(self, &donor, &named)?;
        if found.as_ref().is_some_and(|e| e.kind != Kind::Regular) {
            return Err(usage(format!("{}: not a regular file", label())));
        }
        let ours = match &found {
            Some(e) if e.busy => {
                return Err(usage(format!(
                    "{}: another process is writing this file (it holds iogauge's write lock)",
                    label()
                )));
            }
            Some(e) if !e.verdict.is_ours() && !safety.allow_overwrite => {
                return Err(usage(format!(
                    "{}: {}: each move swaps blocks into it; pass --allow-overwrite to use it \
                     anyway, or name a new file",
                    label(),
                    e.verdict.why_not_ours()
                )));
            }
            Some(e) => e.verdict.is_ours(),
            None if self.needs.contains_key(&donor) => false,
            None => {
                super::check::check_creatable(&donor, &named)?;
                false
            }
        };
        // Last: the other refusals name what the user can change. Once per donor (numjobs
        // clones share one): the trial fsyncs a file.
        if !self.donors.contains(&donor) {
            moves_here(job, &donor)?;
        }
        let extent = match job.flags.inplace {
            true => 0,
            false => job.offset.saturating_add(job.per_file_bytes()),
        };
        let entry = self.needs.entry(donor.clone()).or_insert(Need {
            kind: Kind::Regular,
            exists: found.is_some(),
            extent: 0,
            layout_from: None,
            first_group: gi,
            written: true,
            identity: found.as_ref().map(|e| e.identity),
            follow: found.as_ref().is_some_and(|e| e.follow),
            ours,
            fallocate: Fallocate::None,
            writers: Vec::new(),
            by_job: false,
            fill_from: None,
            after_fill: 0,
        });
        entry.extent = entry.extent.max(extent);
        entry.first_group = entry.first_group.min(gi);
        if !self.donors.contains(&donor) {
            self.donors.push(donor);
        }
        Ok(())
    }

    /// Opens an e4defrag job's donor for writing and, without `inplace`, allocates it over
    /// the job's region (unwritten blocks, the size set), as fio's engine does at its start.
    pub(super) fn open_donor(&self, job: &JobSpec) -> Result<Option<OwnedFd>, TargetError> {
        let Some(donor) = &job.donor else {
            return Ok(None);
        };
        let fd = self.reopen(donor, OFlags::RDWR, &job.label("direct"))?;
        if !job.flags.inplace {
            let len = job.per_file_bytes();
            crate::platform::sys::fs::fallocate(&fd, FallocateFlags::empty(), job.offset, len)
                .map_err(|e| io_err(donor, "cannot allocate the donor file", e.into()))?;
        }
        Ok(Some(fd))
    }
}

/// Whether the kernel moves extents where the donor goes: a trial move between two unnamed
/// files in its directory, before anything is created.
fn moves_here(job: &JobSpec, donor: &Path) -> Result<(), TargetError> {
    let dir = parent_dir(donor);
    crate::engine::platform::trial_move(dir).map_err(|e| {
        usage(format!(
            "{}: the kernel refuses EXT4_IOC_MOVE_EXT on the ext4 holding {}: {e}; it does \
             so on an ext4 mounted without a journal",
            job.label_with("ioengine", "e4defrag"),
            crate::rawpath::display(dir)
        ))
    })
}

/// EXT4_IOC_MOVE_EXT exists only on ext4: a job elsewhere is refused before anything runs.
fn ext4_only(job: &JobSpec, p: &Path) -> Result<(), TargetError> {
    let at = if p.exists() { p } else { parent_dir(p) };
    let fs =
        crate::platform::sys::fs::statfs(at).map_err(|e| io_err(at, "statfs failed", e.into()))?;
    if fs.f_type as i64 != crate::platform::abi::EXT4_SUPER_MAGIC {
        return Err(usage(format!(
            "{}: {} is not on ext4 (file system type {:#x}); EXT4_IOC_MOVE_EXT, which \
             e4defrag issues, exists only there",
            job.label_with("ioengine", "e4defrag"),
            crate::rawpath::display(p),
            fs.f_type
        )));
    }
    Ok(())
}
