//! Linux's half of the platform: /proc and /sys for the host's facts, getrusage for CPU time,
//! signal-hook for signals, and rustix's file and I/O calls for the file layer and the engines.

pub mod cpu;
pub mod host;
pub mod signals;

/// The file and I/O calls the file layer and the shared engines make: rustix's, as they are.
pub mod sys {
    pub use rustix::{fs, io};
}

/// Descriptors: a file descriptor on Linux.
pub mod fd {
    pub use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};
}

/// The device that discards what is written to it.
pub const NULL_DEVICE: &str = "/dev/null";
