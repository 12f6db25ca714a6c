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

/// Whether context switches are counted (they are not: see above).
pub const COUNTS_CONTEXT_SWITCHES: bool = false;
/// Whether a thread's page faults are counted (only the process's are).
pub const COUNTS_THREAD_FAULTS: bool = false;

const ZERO: FILETIME = FILETIME {
    dwLowDateTime: 0,
    dwHighDateTime: 0,
};

/// GetThreadTimes' and GetProcessTimes' signature.
// SAFETY: a type, not a call: `times` says why its one call holds.
type Times = unsafe extern "system" fn(
    windows_sys::Win32::Foundation::HANDLE,
    *mut FILETIME,
    *mut FILETIME,
    *mut FILETIME,
    *mut FILETIME,
) -> windows_sys::core::BOOL;

/// User and kernel time of `who` as `get` (GetThreadTimes, GetProcessTimes) reads them.
fn times(get: Times, who: windows_sys::Win32::Foundation::HANDLE) -> Option<CpuUsage> {
    let (mut created, mut exited, mut kernel, mut user) = (ZERO, ZERO, ZERO, ZERO);
    // SAFETY: a pseudo-handle of this thread or process, and four writable FILETIMEs.
    let ok = unsafe { get(who, &mut created, &mut exited, &mut kernel, &mut user) };
    (ok != 0).then(|| CpuUsage {
        user: duration(user),
        system: duration(kernel),
        ..CpuUsage::default()
    })
}

/// Usage of the calling thread.
pub fn thread() -> CpuUsage {
    // SAFETY: the calling thread's pseudo-handle, valid for as long as the thread runs.
    times(GetThreadTimes, unsafe { GetCurrentThread() }).unwrap_or_default()
}

/// The calling thread's voluntary context switches: Windows counts none (0).
pub fn thread_voluntary_switches() -> u64 {
    0
}

/// The calling thread's CPU time, ns: None here (GetThreadTimes counts in whole scheduler
/// ticks, 15.6 ms by default: too coarse to use the CPU for a given time).
pub fn thread_cpu_ns() -> Option<u64> {
    None
}

/// Makes the calling thread's sleeps end when asked: nothing to set here (Windows has no
/// per-thread timer slack; its sleeps end on the system timer's tick).
pub fn precise_sleeps() {}

/// The calling thread's time waiting for a CPU: None here (Windows keeps no such figure for a
/// thread).
pub fn thread_run_delay_ns() -> Option<u64> {
    None
}

/// Usage of the whole process.
pub fn process() -> CpuUsage {
    // SAFETY: this process's pseudo-handle.
    let me = unsafe { GetCurrentProcess() };
    let Some(usage) = times(GetProcessTimes, me) else {
        return CpuUsage::default();
    };
    // SAFETY: PROCESS_MEMORY_COUNTERS is plain data; the call writes at most `cb` bytes.
    let faults = unsafe {
        let mut m: PROCESS_MEMORY_COUNTERS = std::mem::zeroed();
        let cb = std::mem::size_of::<PROCESS_MEMORY_COUNTERS>() as u32;
        m.cb = cb;
        match K32GetProcessMemoryInfo(me, &mut m, cb) {
            0 => 0,
            _ => u64::from(m.PageFaultCount),
        }
    };
    CpuUsage {
        minor_faults: faults,
        ..usage
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_time_grows_with_work() {
        let a = thread();
        // Work until the thread has had 20 ms of CPU (a loaded machine gives it less than its
        // wall time), within 5 s: the count must grow with the work.
        let start = std::time::Instant::now();
        let mut x = 0u64;
        let mut d = thread().since(&a);
        while d.user + d.system < Duration::from_millis(20) && start.elapsed().as_secs() < 5 {
            for _ in 0..100_000 {
                x = x.wrapping_mul(31).wrapping_add(std::hint::black_box(7));
            }
            d = thread().since(&a);
        }
        std::hint::black_box(x);
        assert!(d.user + d.system >= Duration::from_millis(20), "{d:?}");
        assert!(process().user >= d.user, "{:?}", process());
    }
}
