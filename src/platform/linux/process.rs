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

/// Gives the calling thread a file descriptor table of its own holding the standard streams
/// and `keep` alone: unshare(2) CLONE_FILES, then close_range(2) of the rest of the copy (the
/// other jobs' files, the runner's own). A thread that shares its process's table pays, in
/// every call that names a descriptor (pread, io_uring_enter), for an atomic reference on the
/// file that the kernel skips for a table with one user (fdget, fput): perf put them at 1.25%
/// of a 4 KiB cached pread's samples on this project's VM, 0.49% without (docs/performance.md).
/// fio's jobs, processes of their own by default, skip it too. Returns false, having changed
/// nothing, where either call is refused.
///
/// The thread blocks the signals that stop a run first: their handler writes to a socket of
/// the process's table by its number, which in this table is closed, or is a file the thread
/// opened later. The process's other threads take them (the kernel gives a process's signal
/// to a thread that does not block it).
pub fn own_descriptor_table(keep: &[std::os::fd::RawFd]) -> bool {
    // A range that holds no descriptor: close_range(2) answers it where it exists (Linux 5.9),
    // and the table is unshared only where the copy's strangers can be dropped.
    if close_range(u32::MAX, u32::MAX) != 0 {
        return false;
    }
    let Some(before) = block_stop_signals() else {
        return false;
    };
    // SAFETY: unshare(2) copies the table the calling thread shares; every descriptor keeps its
    // number, and no other thread's table changes.
    if unsafe { libc::unshare(libc::CLONE_FILES) } != 0 {
        // SAFETY: the calling thread's mask as it was before `block_stop_signals`.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &before, std::ptr::null_mut()) };
        return false;
    }
    // Descriptors are below 2^31, so `k + 1` cannot wrap.
    let mut kept: Vec<u32> = keep
        .iter()
        .filter_map(|&fd| u32::try_from(fd).ok())
        .chain(0..3)
        .collect();
    kept.sort_unstable();
    kept.dedup();
    let mut from = 0u32;
    for &k in &kept {
        if k > from {
            close_range(from, k - 1);
        }
        from = k + 1;
    }
    close_range(from, u32::MAX);
    true
}

/// Blocks the stop signals in the calling thread; its mask before, or None if refused.
fn block_stop_signals() -> Option<libc::sigset_t> {
    // SAFETY: sigset_t is plain data that sigemptyset initialises; pthread_sigmask changes
    // the calling thread's mask only and writes the old one into `before`.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        let mut before: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in super::signals::STOPPING {
            libc::sigaddset(&mut set, sig);
        }
        (libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut before) == 0).then_some(before)
    }
}

/// close_range(2) of `first..=last`, flags 0: its return value.
fn close_range(first: u32, last: u32) -> libc::c_long {
    // SAFETY: closes the calling thread's table's entries in the range; callers name only
    // entries nothing of theirs holds (a fresh copy's strangers, or none at all).
    unsafe { libc::syscall(libc::SYS_close_range, first, last, 0u32) }
}

/// Closes the calling thread's entries for `fds`, whose files another thread took into a
/// table of its own ([`own_descriptor_table`]): nothing here owns them any more.
pub fn close_copies(fds: &[std::os::fd::RawFd]) {
    for &fd in fds {
        // SAFETY: the descriptors were handed to the other thread, which holds its own copies;
        // these entries are no value's (see the caller).
        unsafe { libc::close(fd) };
    }
}

#[cfg(test)]
mod tests {
    use std::os::fd::AsRawFd;

    /// Whether `fd` is open in the calling thread's table.
    fn open(fd: i32) -> bool {
        // SAFETY: F_GETFD reads a descriptor's flags; any number may be asked about.
        unsafe { libc::fcntl(fd, libc::F_GETFD) != -1 }
    }

    /// Whether SIGINT is blocked in the calling thread.
    fn sigint_blocked() -> bool {
        // SAFETY: reads the calling thread's mask into a zeroed set.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &mut set);
            libc::sigismember(&set, libc::SIGINT) == 1
        }
    }

    #[test]
    fn a_thread_takes_its_files_into_a_table_of_its_own() {
        let mine = std::fs::File::open("/proc/self/stat").expect("opened");
        let theirs = std::fs::File::open("/dev/null").expect("opened");
        let (m, t) = (mine.as_raw_fd(), theirs.as_raw_fd());
        let seen = std::thread::spawn(move || {
            super::own_descriptor_table(&[m]).then(|| (open(m), open(t), open(2), sigint_blocked()))
        })
        .join()
        .expect("the thread ran");
        match seen {
            // Its file, the standard streams and no other; the stop signals go elsewhere.
            Some(s) => assert_eq!(s, (true, false, true, true)),
            None => eprintln!("skipped: no close_range(2) or unshare(2) here"),
        }
        // The process's table is as it was.
        assert!(open(m) && open(t));
        assert!(!sigint_blocked());
    }
}
