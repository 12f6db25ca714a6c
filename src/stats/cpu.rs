//! CPU cost of a thread or the whole process: user and system time, context switches and page
//! faults, as the platform counts them (getrusage on Linux; thread and process times on
//! Windows, which count no context switches). A snapshot is taken at the start and end of a measurement and subtracted.

pub use crate::platform::CpuUsage;

impl CpuUsage {
    /// Usage of the calling thread.
    pub fn thread() -> Self {
        crate::platform::cpu::thread()
    }

    /// Usage of the whole process.
    pub fn process() -> Self {
        crate::platform::cpu::process()
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
    use std::time::Duration;

    #[test]
    fn thread_usage_grows_with_work() {
        let a = CpuUsage::thread();
        // Work until the thread has had 20 ms of CPU (a loaded machine gives it less than its
        // wall time), within 5 s: the count must grow with the work.
        let start = std::time::Instant::now();
        let mut x = 0u64;
        let mut d = CpuUsage::thread().since(&a);
        while d.user + d.system < Duration::from_millis(20) && start.elapsed().as_secs() < 5 {
            for _ in 0..100_000 {
                x = x.wrapping_mul(31).wrapping_add(std::hint::black_box(7));
            }
            d = CpuUsage::thread().since(&a);
        }
        std::hint::black_box(x);
        assert!(d.user + d.system >= Duration::from_millis(20), "{d:?}");
    }
}
