//! Windows' half of the files layer's own calls: no per-call flags.

/// The per-call flags (`atomic`, `uncached`): Linux's preadv2/pwritev2 and io_uring flags.
pub mod rwf {
    use std::path::Path;

    use crate::files::targets::{TargetError, usage};
    use crate::plan::JobSpec;
    use crate::platform::fd::OwnedFd;

    /// Refuses a job that asks for RWF_ATOMIC or RWF_DONTCACHE: Windows has neither.
    pub fn check(
        job: &JobSpec,
        _p: &Path,
        _fd: &OwnedFd,
        _readable: impl FnOnce() -> Result<OwnedFd, TargetError>,
    ) -> Result<(), TargetError> {
        let option = match (job.flags.atomic, job.flags.uncached) {
            (true, _) => "atomic",
            (_, true) => "uncached",
            _ => return Ok(()),
        };
        Err(usage(format!(
            "{}: Linux only (RWF_ATOMIC, RWF_DONTCACHE)",
            job.label(option)
        )))
    }
}
