//! fio's `pre_read`: a job's files read once before it starts, untimed and before the
//! group's device counters are taken, so its reads find them in the page cache. The report
//! says so beside each file, and the device checks then flag the job's reads as served from
//! memory, which they are.

use crate::platform::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, Ordering};

use super::{OpenedFile, TargetError};
use crate::engine::AlignedBuf;
use crate::plan::JobSpec;

/// Bytes per read of the pre-read (aligned, so a direct=1 descriptor takes them too).
const CHUNK: usize = 1 << 20;

/// Reads each of the job's files over its region (`offset` for `per_file_bytes`), noting
/// it in the file's layout line. Stops at a signal; a read error names the file.
pub fn pre_read(
    fds: &[OwnedFd],
    opened: &mut [OpenedFile],
    job: &JobSpec,
    interrupt: &AtomicBool,
) -> Result<(), TargetError> {
    let region = job.per_file_bytes();
    let mut buf = AlignedBuf::zeroed(CHUNK.min(region.max(1) as usize).next_multiple_of(4096));
    for (fd, file) in fds.iter().zip(opened.iter_mut()) {
        let (mut at, end) = (job.offset, job.offset.saturating_add(region));
        while at < end {
            if interrupt.load(Ordering::Relaxed) {
                return Err(TargetError::Interrupted);
            }
            let want = buf.len().min((end - at) as usize);
            match crate::platform::sys::io::pread(fd, &mut buf[..want], at) {
                Ok(0) => break,
                Ok(n) => at += n as u64,
                Err(crate::platform::sys::io::Errno::INTR) => {}
                Err(e) => {
                    return Err(TargetError::Io(format!(
                        "{}: cannot pre-read {} at byte {at}: {}",
                        job.label("pre_read"),
                        crate::rawpath::display(&file.path),
                        std::io::Error::from(e)
                    )));
                }
            }
        }
        let said = format!(
            "pre-read ({} from byte {}) before the job, untimed (pre_read=1)",
            crate::units::human_bytes(at - job.offset),
            job.offset
        );
        file.layout = Some(match file.layout.take() {
            Some(l) => format!("{l}; {said}"),
            None => said,
        });
    }
    Ok(())
}
