//! fio's `fill_device`: a job that writes until its file system is full. Without a size, a
//! file's region is what the file system can still take (fio's size of -1, bounded here by
//! what is free when the run is checked), the free-space check leaves it out, nothing is
//! preallocated, and ENOSPC or EDQUOT ends the job (the worker's part). A later job that
//! reads the file without a size of its own reads what the filling left, measured when its
//! group starts, as fio sizes a file when its job starts.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use super::check::Existing;
use super::{Kind, TargetError, Targets, usage};
use crate::files::fsinfo::parent_dir;
use crate::plan::JobSpec;

/// fill_device without a size: each file's region is the free space of its file system
/// plus what the file already holds, in whole I/Os; the job ends at ENOSPC at or before it.
/// Block devices keep their own size (taken from the device, as without fill_device).
pub(super) fn size_to_fill(
    job: &mut JobSpec,
    paths: &[PathBuf],
    found: &[Option<Existing>],
) -> Result<(), TargetError> {
    if !job.fill_device || job.size.is_some() || job.size_pct.is_some() {
        return Ok(());
    }
    if found.iter().flatten().any(|e| e.kind == Kind::BlockDevice) {
        return Ok(());
    }
    let mut smallest: Option<u64> = None;
    for (p, e) in paths.iter().zip(found) {
        let room = free_bytes(p)?.saturating_add(e.as_ref().map_or(0, |e| e.len));
        let room = room.saturating_sub(job.offset);
        smallest = Some(smallest.map_or(room, |s| s.min(room)));
    }
    let per_file = smallest.unwrap_or(0) / job.xfer() * job.xfer();
    if per_file == 0 {
        return Err(usage(format!(
            "{}: the file system of {} has no room for one {}-byte I/O",
            job.label("fill_device"),
            paths
                .first()
                .map_or(Path::new("?"), |p| p.as_path())
                .display(),
            job.xfer()
        )));
    }
    job.size = Some(per_file.saturating_mul(paths.len() as u64));
    Ok(())
}

/// Bytes an unprivileged writer may still allocate on the file system holding `p`.
fn free_bytes(p: &Path) -> Result<u64, TargetError> {
    let dir = parent_dir(p);
    let space = crate::host::space(dir).map_err(|e| {
        usage(format!(
            "{}: cannot read its free space: {e}",
            dir.display()
        ))
    })?;
    Ok(space.avail_bytes)
}

impl Targets {
    /// A file a fill_device job of an earlier group filled: its extent is now its length (or
    /// what a later job with a size of its own asks for, laid out if more).
    pub(super) fn after_filling(&mut self, p: &Path, asked: u64) -> Result<u64, TargetError> {
        let len = self.held_len(p)?.ok_or_else(|| {
            TargetError::Io(format!("{}: not held after the filling", p.display()))
        })?;
        let extent = len.max(asked);
        self.needs.get_mut(p).expect("known path").extent = extent;
        Ok(extent)
    }

    /// The length of `p` now, through the descriptor the run holds (`None`: not held).
    fn held_len(&self, p: &Path) -> Result<Option<u64>, TargetError> {
        let Some(fd) = self.held.get(p) else {
            return Ok(None);
        };
        let st = crate::platform::sys::fs::fstat(fd).map_err(|e| {
            TargetError::Io(format!(
                "{}: cannot stat: {}",
                p.display(),
                std::io::Error::from(e)
            ))
        })?;
        Ok(Some(st.st_size as u64))
    }

    /// The group's jobs as they run: a job sized from a file that a fill_device job filled
    /// reads what is there now (the file's length when the group starts, in whole I/Os),
    /// never past its end. Borrowed unchanged when no job of the group is sized that way.
    pub fn sized_after_fill<'j>(
        &self,
        jobs: &'j [JobSpec],
    ) -> Result<Cow<'j, [JobSpec]>, TargetError> {
        if !jobs.iter().any(|j| j.size_from_fill) {
            return Ok(Cow::Borrowed(jobs));
        }
        let mut jobs = jobs.to_vec();
        for job in jobs.iter_mut().filter(|j| j.size_from_fill) {
            let paths = job.paths();
            let mut smallest: Option<(u64, &PathBuf)> = None;
            for p in &paths {
                let Some(len) = self.held_len(p)? else {
                    continue;
                };
                let len = len.saturating_sub(job.offset);
                if smallest.is_none_or(|(s, _)| len < s) {
                    smallest = Some((len, p));
                }
            }
            let Some((len, p)) = smallest else { continue };
            let per_file = len / job.xfer() * job.xfer();
            if per_file == 0 {
                return Err(TargetError::Io(format!(
                    "{}: the fill_device job before left {len} bytes after offset {}, less \
                     than one {}-byte I/O for job {}",
                    p.display(),
                    job.offset,
                    job.xfer(),
                    job.name
                )));
            }
            let size = per_file.saturating_mul(paths.len() as u64);
            job.size = Some(job.size.map_or(size, |s| s.min(size)));
        }
        Ok(Cow::Owned(jobs))
    }
}
