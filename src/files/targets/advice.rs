//! A job's advice on its files' cache: `invalidate` (the cached pages dropped before the job),
//! `fadvise_hint` and a writer's `write_hint`, given on each file as it is opened; and, where
//! the system takes no such advice (Windows), said once per job when its files are checked,
//! so buffered reads are not taken for the device's.

use std::num::NonZeroU64;
use std::path::Path;

use super::{TargetError, Targets, io_err, write_hint};
use crate::plan::{Fadvise, JobSpec};
use crate::platform::fd::OwnedFd;
use crate::platform::sys::fs::Advice;

/// Where this system takes no advice on a file's cache (Windows has no fadvise): `invalidate`
/// cannot drop the cached pages and `fadvise_hint` goes unheard, and the report says so rather
/// than letting buffered reads pass for the device's.
pub(super) fn check(t: &mut Targets, job: &JobSpec) {
    if crate::platform::sys::CACHE_ADVICE || job.direct {
        return;
    }
    if job.cache.invalidate && job.rw.reads() {
        t.warnings.push(format!(
            "{}: {} cannot drop a file's cached pages, so buffered reads may come from the \
             cache, not the device; use direct=1 to measure the device",
            job.label("invalidate"),
            std::env::consts::OS
        ));
    }
    if job.origins.contains_key("fadvise_hint") && job.cache.fadvise != Fadvise::None {
        t.warnings.push(format!(
            "{}: {} takes no such advice on an open file; it was not given",
            job.label("fadvise_hint"),
            std::env::consts::OS
        ));
    }
}

/// The job's cache hints on one opened file: its cached pages dropped (`invalidate`), the
/// fadvise hint, and a writer's `write_hint`.
pub(super) fn give(
    job: &JobSpec,
    fd: &OwnedFd,
    p: &Path,
    region: Option<NonZeroU64>,
) -> Result<(), TargetError> {
    if !crate::platform::sys::CACHE_ADVICE {
        // Said once per job when its files were checked ([`check`]).
    } else if job.cache.invalidate {
        // Flush first: fadvise only drops clean pages.
        let _ = crate::platform::sys::fs::fdatasync(fd);
        crate::platform::sys::fs::fadvise(fd, job.offset, region, Advice::DontNeed)
            .map_err(|e| io_err(p, "cannot drop cached pages", e.into()))?;
    }
    let advice = match job.cache.fadvise {
        Fadvise::None => None,
        Fadvise::Sequential => Some(Advice::Sequential),
        Fadvise::Random => Some(Advice::Random),
    };
    if let Some(a) = advice.filter(|_| crate::platform::sys::CACHE_ADVICE) {
        crate::platform::sys::fs::fadvise(fd, job.offset, region, a)
            .map_err(|e| io_err(p, "fadvise failed", e.into()))?;
    }
    if let Some(hint) = job.write_hint.filter(|_| job.rw.modifies()) {
        write_hint(fd, p, hint)?;
    }
    Ok(())
}
