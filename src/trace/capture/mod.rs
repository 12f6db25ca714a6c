//! `iogauge record`'s capture: runs a program and records every file I/O call it and its
//! threads and children make, with what each call's timing was. How it is done is the
//! platform's (`platform/`): on Linux, the kernel's syscall tracepoints through perf, or
//! ptrace where perf is not allowed; a build for another system refuses to record, saying so.
//! What both halves share — the method asked for, the errors and what a capture gives back —
//! is here.

mod platform;
pub use platform::*;

use crate::trace::recording::Recording;

/// How long a program asked to stop (the first Ctrl-C) is given to end on SIGTERM before its
/// tasks still running are killed: a program that ignores SIGTERM, or a server that waits for
/// its clients to end, would keep the recording, and the trace of what it did so far, from
/// ever ending.
pub const STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// The processes a program's first process left running as it ended (`sh -c 'server &'`):
/// the recording goes on following them, and the command line says so while it waits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftRunning {
    /// The first process's id.
    pub program: u32,
    /// Each process still running then (up to [`LeftRunning::NAMED`]): its id and its name.
    pub processes: Vec<(u32, String)>,
    /// How many there were.
    pub count: usize,
}

impl LeftRunning {
    /// The most processes a notice names.
    pub const NAMED: usize = 4;
}

static LEFT_RUNNING: std::sync::Mutex<Option<LeftRunning>> = std::sync::Mutex::new(None);

/// The recorder says its program's first process ended and left others running.
#[cfg_attr(windows, allow(dead_code))]
pub(crate) fn set_left_running(left: Option<LeftRunning>) {
    *LEFT_RUNNING.lock().unwrap_or_else(|e| e.into_inner()) = left;
}

/// Taken once: the processes the program's first process left running, where it ended so
/// since the last call.
pub fn take_left_running() -> Option<LeftRunning> {
    LEFT_RUNNING
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
}

/// How calls are captured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// perf where it is allowed, ptrace otherwise.
    Auto,
    Perf,
    Ptrace,
}

/// A method name that is not one.
#[derive(Debug, thiserror::Error)]
#[error("--method={0}: expected auto, perf or ptrace")]
pub struct UnknownMethod(pub String);

impl std::str::FromStr for Method {
    type Err = UnknownMethod;
    fn from_str(s: &str) -> Result<Method, UnknownMethod> {
        match s {
            "auto" => Ok(Method::Auto),
            "perf" => Ok(Method::Perf),
            "ptrace" => Ok(Method::Ptrace),
            _ => Err(UnknownMethod(s.into())),
        }
    }
}

/// Why a recording could not be made.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    /// The command line is wrong (a program not found): the user's to fix.
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Failed(String),
}

/// What a capture gives back: the trace, and why perf was not used.
pub struct Captured {
    pub recording: Recording,
    /// Why perf was not used, when `Auto` fell back to ptrace.
    pub fallback_reason: Option<String>,
}
