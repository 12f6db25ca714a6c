//! Linux's half of the platform: /proc and /sys for the host's facts, getrusage for CPU time,
//! signal-hook for signals.

pub mod cpu;
pub mod host;
pub mod signals;

/// The device that discards what is written to it.
pub const NULL_DEVICE: &str = "/dev/null";
