//! A program iogauge runs (fio's `exec` engine) in a process group of its own, and its end:
//! SIGTERM to the group, a grace period, then SIGKILL to what is left.

use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// Makes the program `c` starts the leader of a process group of its own, so its end reaches
/// what it started too.
pub fn own_group(c: &mut Command) {
    use std::os::unix::process::CommandExt as _;
    c.process_group(0);
}

/// Ends `child` and its group: SIGTERM, `grace` for it to exit, then SIGKILL to what is left
/// of the group; the program reaped either way.
pub fn end_group(child: &mut Child, grace: Duration) {
    use rustix::process::{Pid, Signal, kill_process_group};
    let group = Pid::from_child(child);
    if let Ok(None) = child.try_wait() {
        let _ = kill_process_group(group, Signal::TERM);
        let until = Instant::now() + grace;
        while Instant::now() < until && matches!(child.try_wait(), Ok(None)) {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    // What it started and left behind goes too (no such group any more: nothing left).
    let _ = kill_process_group(group, Signal::KILL);
    let _ = child.kill();
    let _ = child.wait();
}
