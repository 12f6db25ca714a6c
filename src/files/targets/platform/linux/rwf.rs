//! The per-call flags a job asks for, checked against each of its files when it is opened,
//! before any I/O: `atomic` (RWF_ATOMIC) against the torn-write limits the kernel reports
//! (statx STATX_WRITE_ATOMIC: the sizes a file, its file system and its device take), and
//! `uncached` (RWF_DONTCACHE) by one one-byte read with the flag, since only the call says
//! whether the file system has it. Without this the first I/O would fail with EINVAL or
//! EOPNOTSUPP and the job would stop with a number that says nothing.

use crate::platform::fd::{AsFd, OwnedFd};
use std::path::Path;

use rustix::fs::{AtFlags, StatxFlags};
use rustix::io::ReadWriteFlags;

use crate::files::targets::{TargetError, io_err, usage};
use crate::plan::JobSpec;

/// statx's STATX_WRITE_ATOMIC (Linux 6.11).
const STATX_WRITE_ATOMIC: u32 = 0x0001_0000;

/// Refuses `fd` (the job's file `p`) when it cannot take the job's atomic writes or uncached
/// I/O. `readable`: a descriptor of the file open for reading, for the uncached probe.
pub fn check(
    job: &JobSpec,
    p: &Path,
    fd: &OwnedFd,
    readable: impl FnOnce() -> Result<OwnedFd, TargetError>,
) -> Result<(), TargetError> {
    if job.flags.atomic {
        atomic(job, p, fd)?;
    }
    if job.flags.uncached {
        let r = readable()?;
        let mut byte = [0u8; 1];
        let mut iov = [std::io::IoSliceMut::new(&mut byte)];
        let flags = ReadWriteFlags::from_bits_retain(libc::RWF_DONTCACHE as u32);
        match rustix::io::preadv2(r.as_fd(), &mut iov, 0, flags) {
            Ok(_) => {}
            Err(rustix::io::Errno::OPNOTSUPP | rustix::io::Errno::INVAL) => {
                return Err(usage(format!(
                    "{}: uncached buffered I/O (RWF_DONTCACHE) is not there for {}: its file \
                     system does not have it (Linux 6.14+ with ext4, xfs or btrfs has it; tmpfs \
                     does not); use direct=1, or another directory",
                    job.label("uncached"),
                    p.display()
                )));
            }
            Err(e) => return Err(io_err(p, "cannot probe RWF_DONTCACHE", e.into())),
        }
    }
    Ok(())
}

/// The atomic-write limits of `fd` against the job's one write size.
fn atomic(job: &JobSpec, p: &Path, fd: &OwnedFd) -> Result<(), TargetError> {
    let st = rustix::fs::statx(
        fd,
        c"",
        AtFlags::EMPTY_PATH,
        StatxFlags::from_bits_retain(STATX_WRITE_ATOMIC),
    )
    .map_err(|e| io_err(p, "statx", e.into()))?;
    let size = job.sizes[1].max();
    let (min, max) = (
        u64::from(st.stx_atomic_write_unit_min),
        u64::from(st.stx_atomic_write_unit_max),
    );
    let option = job.label("atomic");
    if st.stx_mask & STATX_WRITE_ATOMIC == 0 || max == 0 {
        return Err(usage(format!(
            "{option}: {} takes no atomic writes (statx reports no torn-write protection for \
             it: the device has none, or the file system does not offer it; XFS on Linux \
             6.16+ offers it in software)",
            p.display()
        )));
    }
    if size < min || size > max {
        return Err(usage(format!(
            "{option}: {} takes atomic writes of {} to {} (statx), not bs={}",
            p.display(),
            crate::units::human_bytes(min),
            crate::units::human_bytes(max),
            crate::units::human_bytes(size)
        )));
    }
    let segments = st.stx_atomic_write_segments_max;
    if job.numpages > segments.max(1) {
        return Err(usage(format!(
            "{option}: {} takes atomic writes of at most {segments} buffer(s) per call \
             (statx), not numpages={}",
            p.display(),
            job.numpages
        )));
    }
    Ok(())
}
