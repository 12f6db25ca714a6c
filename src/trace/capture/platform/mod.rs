//! Which recorder this build has: Linux's (perf, eBPF, ptrace) or, on Windows, one that
//! refuses. Both offer `record`, `record_with`, `block::record`, `CALIBRATE_ARG` and
//! `calibrate_child`.

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
pub use linux::*;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::*;
