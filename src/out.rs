//! stdout and stderr for the door, which is the only place that prints: writes that never
//! panic. A reader that goes away (`iogauge run … | head`, a dropped ssh session) is an
//! ordinary end of the run, not a crash: the first write that finds the pipe closed (EPIPE)
//! sets the flag given to [`stop_on_closed_pipe`], so a run in progress stops as if
//! interrupted (its files removed, its report still written to the files asked for), and
//! the process ends with 141, what a shell expects of a program whose pipe closed. A stream
//! that cannot be written for another reason (`2>/dev/full`) loses what was written to it
//! and changes nothing else.

use std::io::Write;
use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

static CLOSED: AtomicBool = AtomicBool::new(false);
static STOP: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// The flag a closed pipe sets (the run's interrupt flag).
pub fn stop_on_closed_pipe(flag: Arc<AtomicBool>) {
    let _ = STOP.set(flag);
}

/// Whether stdout or stderr was found closed by its reader.
pub fn pipe_closed() -> bool {
    CLOSED.load(Ordering::SeqCst)
}

fn failed(e: &std::io::Error) {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        CLOSED.store(true, Ordering::SeqCst);
        if let Some(stop) = STOP.get() {
            stop.store(true, Ordering::SeqCst);
        }
    }
}

/// Writes `text` to stdout, whole, and flushes it.
pub fn stdout(text: &str) {
    let _ = stdout_bytes(text.as_bytes());
}

/// Writes `bytes` to stdout, whole, and flushes them.
pub fn stdout_bytes(bytes: &[u8]) -> std::io::Result<()> {
    let mut o = std::io::stdout().lock();
    let done = o.write_all(bytes).and_then(|()| o.flush());
    if let Err(e) = &done {
        failed(e);
    }
    done
}

/// Writes `text` to stderr in one write (ranks of a scale-out run share a terminal).
pub fn stderr(text: &str) {
    let mut e = std::io::stderr().lock();
    if let Err(err) = e.write_all(text.as_bytes()).and_then(|()| e.flush()) {
        failed(&err);
    }
}

/// `print!` that never panics.
#[macro_export]
macro_rules! out {
    ($($t:tt)*) => { $crate::out::stdout(&format!($($t)*)) };
}

/// `println!` that never panics.
#[macro_export]
macro_rules! outln {
    () => { $crate::out::stdout("\n") };
    ($($t:tt)*) => { $crate::out::stdout(&format!("{}\n", format_args!($($t)*))) };
}

/// `eprint!` that never panics.
#[macro_export]
macro_rules! err {
    ($($t:tt)*) => { $crate::out::stderr(&format!($($t)*)) };
}

/// `eprintln!` that never panics.
#[macro_export]
macro_rules! errln {
    () => { $crate::out::stderr("\n") };
    ($($t:tt)*) => { $crate::out::stderr(&format!("{}\n", format_args!($($t)*))) };
}
