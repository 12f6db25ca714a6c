//! CPU time of a thread or the process on Linux: the thread's or the process's CPU clock for
//! the total, split into user and system time as getrusage(2) splits it; getrusage also
//! counts context switches and page faults.

use std::time::Duration;

use crate::platform::CpuUsage;

fn timeval(tv: libc::timeval) -> Duration {
    Duration::new(tv.tv_sec as u64, tv.tv_usec as u32 * 1000)
}

fn usage(who: libc::c_int) -> CpuUsage {
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `ru` is a valid, writable rusage; getrusage only writes into it.
    let rc = unsafe { libc::getrusage(who, ru.as_mut_ptr()) };
    if rc != 0 {
        return CpuUsage::default();
    }
    // SAFETY: zero-initialised and filled by a successful getrusage.
    let ru = unsafe { ru.assume_init() };
    CpuUsage {
        user: timeval(ru.ru_utime),
        system: timeval(ru.ru_stime),
        voluntary_ctx: ru.ru_nvcsw as u64,
        involuntary_ctx: ru.ru_nivcsw as u64,
        minor_faults: ru.ru_minflt as u64,
        major_faults: ru.ru_majflt as u64,
    }
}

/// Whether context switches are counted (getrusage's nvcsw and nivcsw).
pub const COUNTS_CONTEXT_SWITCHES: bool = true;
/// Whether a thread's page faults are counted (RUSAGE_THREAD's minflt and majflt).
pub const COUNTS_THREAD_FAULTS: bool = true;

/// Usage of the calling thread: RUSAGE_THREAD's counts, and its user and system split of the
/// thread's CPU clock (see [`exact`]).
pub fn thread() -> CpuUsage {
    exact(usage(libc::RUSAGE_THREAD), libc::CLOCK_THREAD_CPUTIME_ID)
}

/// The calling thread's voluntary context switches alone (getrusage, no CPU clock read): how
/// a replay tells a call that slept, between its calls.
pub fn thread_voluntary_switches() -> u64 {
    usage(libc::RUSAGE_THREAD).voluntary_ctx
}

/// The calling thread's CPU time, ns (its CPU clock: exact at the call, unlike getrusage's).
pub fn thread_cpu_ns() -> Option<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid clock id and a writable timespec the call fills in.
    (unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } == 0)
        .then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

/// Makes the calling thread's sleeps end when asked, not up to 50 µs later: its timer slack
/// (PR_SET_TIMERSLACK), which lets the kernel group timers that end close together, set to
/// 1 ns. A replay sleeps to shortly before a call is due and spins the rest; the later its
/// sleeps may end, the longer that spin, CPU time the recorded program did not take.
pub fn precise_sleeps() {
    // SAFETY: PR_SET_TIMERSLACK takes the slack in ns as its one argument and changes only the
    // calling thread's timers.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
}

std::thread_local! {
    /// The calling thread's /proc/thread-self/schedstat, opened at its first read and kept
    /// (None: it could not be opened).
    static SCHEDSTAT: std::cell::OnceCell<Option<std::fs::File>> =
        const { std::cell::OnceCell::new() };
}

/// The calling thread's time ready to run but waiting for a CPU since it started, ns: the
/// scheduler's run delay (the second figure of /proc/thread-self/schedstat). None where the
/// kernel keeps no such figures (no CONFIG_SCHED_INFO). Read through a descriptor the thread
/// keeps (about a microsecond a read; opening the file each time costs several): a replay
/// thread whose replay has more threads than the CPUs reads it as each of its calls completes.
pub fn thread_run_delay_ns() -> Option<u64> {
    use std::os::unix::fs::FileExt;
    SCHEDSTAT.with(|kept| {
        let file = kept
            .get_or_init(|| std::fs::File::open("/proc/thread-self/schedstat").ok())
            .as_ref()?;
        let mut buf = [0u8; 96];
        let n = file.read_at(&mut buf, 0).ok()?;
        let text = std::str::from_utf8(&buf[..n]).ok()?;
        text.split_whitespace().nth(1)?.parse().ok()
    })
}

/// Usage of the whole process: RUSAGE_SELF's, split over the process's CPU clock.
pub fn process() -> CpuUsage {
    exact(usage(libc::RUSAGE_SELF), libc::CLOCK_PROCESS_CPUTIME_ID)
}

/// `u` with its user and system times made to add up to `clock`'s CPU time. getrusage's times
/// for a running thread lag by up to a scheduler tick (the kernel brings them up to date at a
/// tick or a switch, not at the call), so a short measurement read from them alone can count
/// time from before its start (a 16-I/O job showed 300% of one CPU); the CPU clocks are exact
/// at the call. The split keeps getrusage's proportion, which is all the kernel knows of it.
fn exact(mut u: CpuUsage, clock: libc::clockid_t) -> CpuUsage {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid clock id and a writable timespec the call fills in.
    if unsafe { libc::clock_gettime(clock, &mut ts) } != 0 {
        return u;
    }
    let total = Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32);
    let (user, system) = (u.user.as_nanos(), u.system.as_nanos());
    // Before the first tick has sampled the thread there is no split: all of it is system
    // time then (the thread has done little but be created).
    let user_ns = (total.as_nanos() * user)
        .checked_div(user + system)
        .unwrap_or(0);
    u.user = Duration::from_nanos(user_ns as u64);
    u.system = total.saturating_sub(u.user);
    u
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A thread's CPU time over a short stretch never exceeds the stretch's wall time: read
    /// from getrusage alone it did, whenever a scheduler tick fell inside (its times catch up
    /// then with what the thread ran before the stretch began).
    #[test]
    fn a_short_stretch_counts_no_more_cpu_than_it_lasted() {
        for _ in 0..40 {
            let a = thread();
            let t0 = std::time::Instant::now();
            while t0.elapsed() < Duration::from_millis(1) {
                std::hint::spin_loop();
            }
            let b = thread();
            let wall = t0.elapsed();
            let used = (b.user + b.system).saturating_sub(a.user + a.system);
            // getrusage's lag is up to a tick (4 ms at this kernel's HZ=250): a millisecond
            // over still catches it. Less would not hold: under load (a CI run's parallel
            // tests on 2 vCPUs) this VM's thread CPU clock once read 1.48 ms over 1.01 ms.
            assert!(
                used <= wall + Duration::from_millis(1),
                "{used:?} of CPU in {wall:?}"
            );
        }
    }

    /// The run delay grows by the time a thread waits for its CPU (here: another thread
    /// spinning on the one CPU both may use), read again and again through the kept file.
    #[test]
    fn a_thread_kept_from_its_cpu_counts_the_wait() {
        let Some(before) = thread_run_delay_ns() else {
            println!(
                "SKIP run delay: /proc/thread-self/schedstat unreadable (no CONFIG_SCHED_INFO)"
            );
            return;
        };
        let spin = Duration::from_millis(200);
        let rival = match crate::platform::rival::Rival::beside_me(Duration::ZERO, spin, false) {
            Ok(r) => r,
            Err(e) => {
                println!("SKIP run delay: sched_setaffinity: {e}");
                return;
            }
        };
        let t0 = std::time::Instant::now();
        let mut reads = 0;
        while t0.elapsed() < spin {
            let _ = thread_run_delay_ns();
            reads += 1;
        }
        drop(rival);
        let waited = thread_run_delay_ns().unwrap() - before;
        // Sharing one CPU with a spinning thread for 200 ms: about half of it waiting.
        assert!(
            waited >= 40_000_000,
            "waited {waited} ns for a CPU over 200 ms beside a spinning rival ({reads} reads)"
        );
    }
}
