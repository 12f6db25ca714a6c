//! CPU time of a thread or the process on Windows: GetThreadTimes and GetProcessTimes (user
//! and kernel time in 100 ns units). Windows counts no context switches per thread or process
//! through these calls, so those stay 0, as in fio's Windows build; the process's page faults
//! (GetProcessMemoryInfo) count soft and hard faults together and are given as minor faults.

use std::time::Duration;

use windows_sys::Win32::Foundation::FILETIME;
use windows_sys::Win32::System::ProcessStatus::{K32GetProcessMemoryInfo, PROCESS_MEMORY_COUNTERS};
use windows_sys::Win32::System::Threading::{
    GetCurrentProcess, GetCurrentThread, GetProcessTimes, GetThreadTimes,
};

use crate::platform::CpuUsage;

fn duration(t: FILETIME) -> Duration {
    let ticks = (u64::from(t.dwHighDateTime) << 32) | u64::from(t.dwLowDateTime);
    Duration::from_nanos(ticks.saturating_mul(100))
}

const ZERO: FILETIME = FILETIME {
    dwLowDateTime: 0,
    dwHighDateTime: 0,
};

/// Usage of the calling thread.
pub fn thread() -> CpuUsage {
    let (mut created, mut exited, mut kernel, mut user) = (ZERO, ZERO, ZERO, ZERO);
    // SAFETY: the pseudo-handle of the calling thread, and four writable FILETIMEs.
    let ok = unsafe {
        GetThreadTimes(
            GetCurrentThread(),
            &mut created,
            &mut exited,
            &mut kernel,
            &mut user,
        )
    };
    if ok == 0 {
        return CpuUsage::default();
    }
    CpuUsage {
        user: duration(user),
        system: duration(kernel),
        ..CpuUsage::default()
    }
}

/// Usage of the whole process.
pub fn process() -> CpuUsage {
    let (mut created, mut exited, mut kernel, mut user) = (ZERO, ZERO, ZERO, ZERO);
    // SAFETY: the pseudo-handle of this process, and four writable FILETIMEs.
    let ok = unsafe {
        GetProcessTimes(
            GetCurrentProcess(),
            &mut created,
            &mut exited,
            &mut kernel,
            &mut user,
        )
    };
    if ok == 0 {
        return CpuUsage::default();
    }
    // SAFETY: PROCESS_MEMORY_COUNTERS is plain data; the call writes at most `cb` bytes.
    let faults = unsafe {
        let mut m: PROCESS_MEMORY_COUNTERS = std::mem::zeroed();
        let cb = std::mem::size_of::<PROCESS_MEMORY_COUNTERS>() as u32;
        m.cb = cb;
        match K32GetProcessMemoryInfo(GetCurrentProcess(), &mut m, cb) {
            0 => 0,
            _ => u64::from(m.PageFaultCount),
        }
    };
    CpuUsage {
        user: duration(user),
        system: duration(kernel),
        minor_faults: faults,
        ..CpuUsage::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_time_grows_with_work() {
        let a = thread();
        let start = std::time::Instant::now();
        let mut x = 0u64;
        while start.elapsed() < Duration::from_millis(100) {
            x = x.wrapping_mul(31).wrapping_add(std::hint::black_box(7));
        }
        std::hint::black_box(x);
        let d = thread().since(&a);
        assert!(d.user + d.system >= Duration::from_millis(20), "{d:?}");
        assert!(process().user >= d.user, "{:?}", process());
    }
}
