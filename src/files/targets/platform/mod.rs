//! What the files layer asks of one system alone: on Linux the per-call flags' checks (`rwf`:
//! RWF_ATOMIC against statx's torn-write limits, RWF_DONTCACHE by a probe). Windows has no such
//! flags, and its half refuses a job that asks for them.

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
pub use linux::*;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::*;
