//! Stop requests on Windows: a console's control events, numbered as the Linux signals a user
//! knows them by — Ctrl-C as SIGINT (2, exit code 130), Ctrl-Break as SIGQUIT (3), the console
//! closing as SIGHUP (1), log-off and shutdown as SIGTERM (15). There is no SIGUSR1 (the
//! status request) and no SIGCONT. Windows calls the handler on a thread of its own.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use windows_sys::Win32::Foundation::{FALSE, TRUE};
use windows_sys::Win32::System::Console::{
    CTRL_BREAK_EVENT, CTRL_C_EVENT, CTRL_CLOSE_EVENT, CTRL_LOGOFF_EVENT, CTRL_SHUTDOWN_EVENT,
    SetConsoleCtrlHandler,
};
use windows_sys::core::BOOL;

use crate::platform::{StopFlags, StopHandling};

static WATCHED: OnceLock<(StopFlags, StopHandling)> = OnceLock::new();
/// Stop requests seen during a run.
static SEEN: AtomicUsize = AtomicUsize::new(0);

/// Installs the console handler that sets `flags`: while `idle`, a stop request ends the
/// process at once with 128 + its number; during a run the first sets the flags, and a second
/// calls `how.on_second` and ends the process.
pub fn watch(flags: &StopFlags, how: StopHandling) {
    if WATCHED.set((flags.clone(), how)).is_err() {
        return;
    }
    // SAFETY: `handler` is a plain function that lives as long as the process.
    unsafe { SetConsoleCtrlHandler(Some(handler), TRUE) };
}

/// The Linux signal number a console event stands for; `None` for events that do not stop.
pub(crate) fn number(event: u32) -> Option<usize> {
    match event {
        CTRL_C_EVENT => Some(2),
        CTRL_BREAK_EVENT => Some(3),
        CTRL_CLOSE_EVENT => Some(1),
        CTRL_LOGOFF_EVENT | CTRL_SHUTDOWN_EVENT => Some(15),
        _ => None,
    }
}

// SAFETY: Windows calls this on a thread of its own with an event number; it touches only
// atomics and statics, and ends the process through std.
unsafe extern "system" fn handler(event: u32) -> BOOL {
    let (Some((flags, how)), Some(sig)) = (WATCHED.get(), number(event)) else {
        return FALSE;
    };
    let code = 128 + sig as i32;
    if flags.idle.load(Ordering::SeqCst) {
        std::process::exit(code);
    }
    flags.which.store(sig, Ordering::SeqCst);
    flags.interrupt.store(true, Ordering::SeqCst);
    flags.signalled.store(true, Ordering::SeqCst);
    if SEEN.fetch_add(1, Ordering::SeqCst) >= 1 {
        (how.on_second)();
        std::process::exit(code);
    }
    if matches!(
        event,
        CTRL_CLOSE_EVENT | CTRL_LOGOFF_EVENT | CTRL_SHUTDOWN_EVENT
    ) {
        // Windows ends the process when this returns (and 5 s after a close at the latest):
        // give the run the time to stop, report and remove what it created; the main thread
        // exits the process when it is done. If it is not done by then, remove and go.
        let start = Instant::now();
        while start.elapsed() < Duration::from_millis(4500) {
            std::thread::sleep(Duration::from_millis(50));
        }
        (how.on_second)();
        std::process::exit(code);
    }
    TRUE
}

/// `pid` is a task of a program being recorded, whose signals are not requests to stop (as
/// Linux's half): a console's control events name no sender, and record does not run here.
pub fn program_task(_pid: i32) {}

/// The recording is over (as Linux's half): nothing is kept here.
pub fn forget_program_tasks() {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn console_events_carry_the_linux_numbers() {
        assert_eq!(number(CTRL_C_EVENT), Some(2));
        assert_eq!(number(CTRL_BREAK_EVENT), Some(3));
        assert_eq!(number(CTRL_CLOSE_EVENT), Some(1));
        assert_eq!(number(CTRL_SHUTDOWN_EVENT), Some(15));
        assert_eq!(number(99), None);
    }
}
