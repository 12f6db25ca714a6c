//! CPU cost of a thread or the whole process, from getrusage(2): user and system time and
//! context switches. A snapshot is taken at the start and end of a measurement and subtracted.

use std::time::Duration;

/// Resource usage at one instant.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuUsage {
    pub user: Duration,
    pub system: Duration,
    pub voluntary_ctx: u64,
    pub involuntary_ctx: u64,
    pub minor_faults: u64,
    pub major_faults: u64,
}

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

impl CpuUsage {
    /// Usage of the calling thread (RUSAGE_THREAD).
    pub fn thread() -> Self {
        usage(libc::RUSAGE_THREAD)
    }

    /// Usage of the whole process.
    pub fn process() -> Self {
        usage(libc::RUSAGE_SELF)
    }

    /// What was used between `earlier` and `self`.
    pub fn since(&self, earlier: &CpuUsage) -> CpuUsage {
        CpuUsage {
            user: self.user.saturating_sub(earlier.user),
            system: self.system.saturating_sub(earlier.system),
            voluntary_ctx: self.voluntary_ctx.saturating_sub(earlier.voluntary_ctx),
            involuntary_ctx: self.involuntary_ctx.saturating_sub(earlier.involuntary_ctx),
            minor_faults: self.minor_faults.saturating_sub(earlier.minor_faults),
            major_faults: self.major_faults.saturating_sub(earlier.major_faults),
        }
    }
}

impl std::ops::AddAssign<&CpuUsage> for CpuUsage {
    fn add_assign(&mut self, o: &CpuUsage) {
        self.user += o.user;
        self.system += o.system;
        self.voluntary_ctx += o.voluntary_ctx;
        self.involuntary_ctx += o.involuntary_ctx;
        self.minor_faults += o.minor_faults;
        self.major_faults += o.major_faults;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_usage_grows_with_work() {
        let a = CpuUsage::thread();
        let start = std::time::Instant::now();
        let mut x = 0u64;
        while start.elapsed() < Duration::from_millis(50) {
            x = x.wrapping_mul(31).wrapping_add(std::hint::black_box(7));
        }
        std::hint::black_box(x);
        let d = CpuUsage::thread().since(&a);
        assert!(d.user + d.system >= Duration::from_millis(20), "{d:?}");
    }
}
