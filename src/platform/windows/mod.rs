//! Windows' half of the platform: the Win32 API (windows-sys) for the host's facts, thread
//! and process times, and console control events.

pub mod cpu;
pub mod host;
pub mod signals;
mod wide;

/// The device that discards what is written to it.
pub const NULL_DEVICE: &str = "NUL";
