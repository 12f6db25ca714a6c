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

/// The soft and hard limits on open files (`None`: unlimited).
pub fn open_file_limits() -> (Option<u64>, Option<u64>) {
    let lim = rustix::process::getrlimit(rustix::process::Resource::Nofile);
    (lim.current, lim.maximum)
}

/// Raises the soft limit on open files to `need` (up to the hard limit); whether it could.
pub fn raise_open_files(need: u64) -> bool {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let lim = getrlimit(Resource::Nofile);
    let rl = Rlimit {
        current: Some(need),
        maximum: lim.maximum,
    };
    setrlimit(Resource::Nofile, rl).is_ok()
}

/// The limit on the process's address space, bytes (`None`: unlimited).
pub fn address_space_limit() -> Option<u64> {
    rustix::process::getrlimit(rustix::process::Resource::As).current
}

/// Lets the calling thread run on `cpus` only (sched_setaffinity).
pub fn pin_thread(cpus: &[usize]) -> std::io::Result<()> {
    let mut set = rustix::thread::CpuSet::new();
    for &c in cpus {
        set.set(c);
    }
    rustix::thread::sched_setaffinity(None, &set).map_err(std::io::Error::from)
}

/// The calling thread's nice value (Linux keeps one per thread).
pub fn set_thread_nice(n: i32) -> std::io::Result<()> {
    rustix::process::setpriority_process(None, n).map_err(std::io::Error::from)
}
