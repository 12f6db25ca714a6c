//! What iogauge asks of the operating system, one half per system. Each half — `linux/` and
//! `windows/` — offers the same modules with the same functions and types, and the rest of the
//! crate calls `crate::platform::…` without asking which half it got:
//!
//! - `host`: facts about the machine and a target's volume (name, kernel, CPU, memory, file
//!   system, mount, device, free space), read-only and best effort;
//! - `disks`: the device under a target whose I/O counters tell what a group really did
//!   (/proc/diskstats on Linux, IOCTL_DISK_PERFORMANCE on Windows), and those counters;
//! - `cpu`: CPU time and context switches of a thread or the process;
//! - `signals`: the requests to stop a run (Ctrl-C, SIGTERM, SIGHUP, a console closing) and
//!   the status request (SIGUSR1), turned into the flags of [`StopFlags`];
//! - `process`: a program run in a group of its own, open-file limits, affinity, priority;
//! - `pages`: a file mapped read-only whose pages are read in as a page fault reads them (a
//!   replay's faults; not on Windows);
//! - `sys` and `fd`: the file and I/O calls the files layer and the engines make, under
//!   rustix's names (rustix itself on Linux; Win32 calls on Windows), and descriptors;
//! - `testing` (tests only): links, identities and probes of what the system offers; `rival`
//!   (tests only): a thread that takes the caller's CPU for a while.
//!
//! What is shared by both halves — the types they hand back (`facts.rs`) and Linux's numbers
//! that iogauge's formats and options carry (`abi.rs`) — lives here, so neither half defines a
//! type the other must mirror, and the platform stays on the ground floor: it imports nothing
//! of the crate's above `rawpath`. A half never prints and never decides policy (what a stop
//! means for a run is the session's): it translates between the system and these types.
//! `#[cfg]` on the OS appears only in `platform/` folders (this one, and those of the engines,
//! the recorder, the files layer and rawpath) and the door; `scripts/shape.py` counts the rest.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize};

pub mod abi;
mod facts;
#[cfg(test)]
pub mod rival;
pub use facts::*;

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
pub use linux::*;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::*;

#[cfg(not(any(target_os = "linux", windows)))]
compile_error!("iogauge builds for Linux and Windows");

/// The flags a request to stop sets, shared by the session and the platform's handlers.
#[derive(Debug, Clone, Default)]
pub struct StopFlags {
    /// Set by the first request during a run.
    pub interrupt: Arc<AtomicBool>,
    /// Set by a request during a run, and by nothing else (`interrupt` is also how a
    /// scale-out run stops a rank for the others).
    pub signalled: Arc<AtomicBool>,
    /// No run has begun: a request ends iogauge at once with 128 + its number.
    pub idle: Arc<AtomicBool>,
    /// The signal number of the last request to stop, as Linux numbers them (2 for Ctrl-C, 1
    /// for a closed terminal or console, 15 for SIGTERM or a log-off); 0 for none.
    pub which: Arc<AtomicUsize>,
    /// The status request came (SIGUSR1): print the figures so far.
    pub status: Arc<AtomicBool>,
}

/// What a stop request does beyond setting [`StopFlags`].
#[derive(Debug, Clone, Copy)]
pub struct StopHandling {
    /// Also stop on SIGCONT (a scale-out rank under mpirun, whose Ctrl-C arrives as SIGCONT,
    /// SIGTERM, SIGKILL a second apart); nothing on Windows.
    pub on_continue: bool,
    /// Called before iogauge ends at a second request during a run: removes what the run
    /// created.
    pub on_second: fn(),
}
