//! Signals on Linux: SIGINT, SIGTERM, SIGHUP and SIGQUIT stop a run, SIGUSR1 asks for its
//! figures so far, and under mpirun SIGCONT stops a rank too (signal-hook's handlers set the
//! flags; a thread of its own counts the requests that come during a run).
//!
//! A request sent by a task of a program `iogauge record` is running is not one: the program
//! runs in iogauge's process group (so a terminal's Ctrl-C reaches both), and a script's
//! `kill 0` — `trap 'kill 0' EXIT` is a common way to end its helpers — signals that whole
//! group, iogauge with it. Until 2026-12-06 that stopped the recording (exit 143, "asked to
//! stop"), and a trap that sent it twice ended iogauge at once. The recorder names the
//! program's tasks ([`program_task`]); the handlers leave their signals alone.

use std::sync::Arc;
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};

use crate::platform::{StopFlags, StopHandling};

/// The signals that stop a run cleanly.
const STOPPING: [i32; 4] = [
    signal_hook::consts::SIGINT,
    signal_hook::consts::SIGTERM,
    signal_hook::consts::SIGHUP,
    signal_hook::consts::SIGQUIT,
];

/// Installs the handlers that set `flags`: while `idle`, a stop request ends the process at
/// once with 128 + its number; during a run the first sets the flags, and a second calls
/// `how.on_second` and ends the process.
pub fn watch(flags: &StopFlags, how: StopHandling) {
    // The requests during a run, counted by the handlers (the program's signals left out).
    let requests = Arc::new(AtomicUsize::new(0));
    for sig in STOPPING {
        let counted = Arc::clone(&requests);
        // Exit at once while idle; otherwise interrupt, in the handler itself — unless a
        // recorded program's task sent it.
        let (idle, which) = (Arc::clone(&flags.idle), Arc::clone(&flags.which));
        let (interrupt, signalled) = (Arc::clone(&flags.interrupt), Arc::clone(&flags.signalled));
        let action = move |info: &libc::siginfo_t| {
            if from_the_program(info) {
                return;
            }
            if idle.load(Ordering::SeqCst) {
                signal_hook::low_level::exit(128 + sig);
            }
            which.store(sig as usize, Ordering::SeqCst);
            interrupt.store(true, Ordering::SeqCst);
            signalled.store(true, Ordering::SeqCst);
            counted.fetch_add(1, Ordering::SeqCst);
        };
        // SAFETY: the action only reads atomics and the siginfo, stores atomics, and calls
        // _exit: all async-signal-safe.
        let _ = unsafe { signal_hook_registry::register_sigaction(sig, action) };
    }
    let _ = signal_hook::flag::register(signal_hook::consts::SIGUSR1, Arc::clone(&flags.status));
    if how.on_continue {
        let cont = signal_hook::consts::SIGCONT;
        let _ = signal_hook::flag::register(cont, Arc::clone(&flags.interrupt));
        let _ = signal_hook::flag::register(cont, Arc::clone(&flags.signalled));
    }
    // A second request during a run: remove what the run created, then exit at once (the
    // run's own clean-up may be what is stuck). Signals that arrive together may count once;
    // then the run's clean-up handles them.
    // The handlers above have run for a signal by the time this thread hears of it.
    if let Ok(mut it) = signal_hook::iterator::Signals::new(STOPPING) {
        let _ = std::thread::Builder::new()
            .name("iogauge-signals".into())
            .spawn(move || {
                for sig in it.forever() {
                    if requests.load(Ordering::SeqCst) >= 2 {
                        (how.on_second)();
                        signal_hook::low_level::exit(128 + sig);
                    }
                }
            });
    }
}

/// The tasks of the program being recorded, as a table a signal handler can read: open
/// addressing over atomics, 0 for a free slot. A task stays in it until the recording ends
/// (one that signals and exits at once may have gone before its signal is handled); a program
/// that starts more tasks than it holds (as many as the eBPF capture follows at once) has the
/// rest's signals taken as requests, as before.
const PROGRAM_SLOTS: usize = 1 << 16;
static PROGRAM: [AtomicI32; PROGRAM_SLOTS] = [const { AtomicI32::new(0) }; PROGRAM_SLOTS];

fn slot(pid: i32) -> usize {
    (pid as u32 as usize).wrapping_mul(2_654_435_761) % PROGRAM_SLOTS
}

/// `pid` is a task of the program being recorded: its signals to iogauge (its process
/// group's, a `kill 0`) are not requests to stop.
pub fn program_task(pid: i32) {
    if pid <= 0 {
        return;
    }
    let start = slot(pid);
    for i in 0..PROGRAM_SLOTS {
        let s = &PROGRAM[(start + i) % PROGRAM_SLOTS];
        match s.compare_exchange(0, pid, Ordering::SeqCst, Ordering::SeqCst) {
            Ok(_) => return,
            Err(held) if held == pid => return,
            Err(_) => {}
        }
    }
}

/// The recording is over: no task is the program's (its ids may be anyone's now).
pub fn forget_program_tasks() {
    for s in &PROGRAM {
        s.store(0, Ordering::SeqCst);
    }
}

/// Whether `pid` is a task of the program being recorded (async-signal-safe).
fn is_program_task(pid: i32) -> bool {
    if pid <= 0 {
        return false;
    }
    let start = slot(pid);
    for i in 0..PROGRAM_SLOTS {
        match PROGRAM[(start + i) % PROGRAM_SLOTS].load(Ordering::SeqCst) {
            0 => return false,
            p if p == pid => return true,
            _ => {}
        }
    }
    false
}

/// Whether a signal was sent by a task of the program being recorded (kill, tkill, sigqueue:
/// a code of 0 or below names the sender; the kernel's own — a terminal's Ctrl-C, a hangup —
/// never is).
fn from_the_program(info: &libc::siginfo_t) -> bool {
    // SAFETY: the sender's id is valid for the codes a process's send gives.
    info.si_code <= 0 && is_program_task(unsafe { info.si_pid() })
}
