//! CPU time of a thread or the process on Linux: getrusage(2), which also counts context
//! switches and page faults.

use std::time::Duration;

use crate::platform::CpuUsage;

fn timeval(tv: libc::timeval) -> Duration {
    Duration::new(tv.tv_sec as u64, tv.tv_usec as u32 * 1000)
}

fn usage(who: libc::c_int) -> CpuUsage {
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `ru` is a valid, writable rusage; getrusage only writes into it.
    let rc = unsafe { libc::getrusage(who, ru.as_mut_ptr()) };
    if rc != 0 {
        return CpuUsage::default();
    }
    // SAFETY: zero-initialised and filled by a successful getrusage.
    let ru = unsafe { ru.assume_init() };
    CpuUsage {
        user: timeval(ru.ru_utime),
        system: timeval(ru.ru_stime),
        voluntary_ctx: ru.ru_nvcsw as u64,
        involuntary_ctx: ru.ru_nivcsw as u64,
        minor_faults: ru.ru_minflt as u64,
        major_faults: ru.ru_majflt as u64,
    }
}

/// Whether context switches are counted (getrusage's nvcsw and nivcsw).
pub const COUNTS_CONTEXT_SWITCHES: bool = true;
/// Whether a thread's page faults are counted (RUSAGE_THREAD's minflt and majflt).
pub const COUNTS_THREAD_FAULTS: bool = true;

/// Usage of the calling thread (RUSAGE_THREAD).
pub fn thread() -> CpuUsage {
    usage(libc::RUSAGE_THREAD)
}

/// Usage of the whole process.
pub fn process() -> CpuUsage {
    usage(libc::RUSAGE_SELF)
}
