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
