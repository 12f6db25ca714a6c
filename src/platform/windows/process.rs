//! A program iogauge runs (fio's `exec` engine) in a process group of its own, and its end.
//! Windows offers no polite request to a process that has no console of ours to hear it, so
//! the program is given `grace` to end by itself and is then terminated (TerminateProcess);
//! what it started itself is not reached.

use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// Starts the program in a new process group (CREATE_NEW_PROCESS_GROUP), so iogauge's own
/// console events do not reach it.
pub fn own_group(c: &mut Command) {
    use std::os::windows::process::CommandExt as _;
    const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
    c.creation_flags(CREATE_NEW_PROCESS_GROUP);
}

/// Ends `child`: `grace` for it to exit, then TerminateProcess; reaped either way.
pub fn end_group(child: &mut Child, grace: Duration) {
    let until = Instant::now() + grace;
    while Instant::now() < until && matches!(child.try_wait(), Ok(None)) {
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// The limits on open files: Windows has none short of its handle table's (about 16 million
/// a process).
pub fn open_file_limits() -> (Option<u64>, Option<u64>) {
    (None, None)
}

/// Nothing to raise (see [`open_file_limits`]).
pub fn raise_open_files(_need: u64) -> bool {
    true
}

/// No limit on the address space is set per process here.
pub fn address_space_limit() -> Option<u64> {
    None
}

/// Lets the calling thread run on `cpus` only (SetThreadAffinityMask: the first 64 CPUs, the
/// thread's processor group).
pub fn pin_thread(cpus: &[usize]) -> std::io::Result<()> {
    use windows_sys::Win32::System::Threading::{GetCurrentThread, SetThreadAffinityMask};
    let mask = cpus
        .iter()
        .filter(|&&c| c < 64)
        .fold(0usize, |m, &c| m | 1 << c);
    if mask == 0 {
        return Err(std::io::Error::other(
            "no CPU below 64 named (one processor group only)",
        ));
    }
    // SAFETY: the calling thread's pseudo-handle and a mask.
    match unsafe { SetThreadAffinityMask(GetCurrentThread(), mask) } {
        0 => Err(std::io::Error::last_os_error()),
        _ => Ok(()),
    }
}

/// A nice value as the calling thread's priority: below 0 raises it (-20 to -11 highest,
/// -10 to -1 above normal), above 0 lowers it (1 to 10 below normal, 11 to 19 lowest).
pub fn set_thread_nice(n: i32) -> std::io::Result<()> {
    use windows_sys::Win32::System::Threading::{
        GetCurrentThread, SetThreadPriority, THREAD_PRIORITY_ABOVE_NORMAL,
        THREAD_PRIORITY_BELOW_NORMAL, THREAD_PRIORITY_HIGHEST, THREAD_PRIORITY_LOWEST,
        THREAD_PRIORITY_NORMAL,
    };
    let p = match n {
        ..=-11 => THREAD_PRIORITY_HIGHEST,
        -10..=-1 => THREAD_PRIORITY_ABOVE_NORMAL,
        0 => THREAD_PRIORITY_NORMAL,
        1..=10 => THREAD_PRIORITY_BELOW_NORMAL,
        _ => THREAD_PRIORITY_LOWEST,
    };
    // SAFETY: the calling thread's pseudo-handle and a priority level.
    match unsafe { SetThreadPriority(GetCurrentThread(), p) } {
        0 => Err(std::io::Error::last_os_error()),
        _ => Ok(()),
    }
}
