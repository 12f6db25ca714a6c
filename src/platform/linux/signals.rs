//! Signals on Linux: SIGINT, SIGTERM, SIGHUP and SIGQUIT stop a run, SIGUSR1 asks for its
//! figures so far, and under mpirun SIGCONT stops a rank too (signal-hook's handlers set the
//! flags; a thread of its own counts the requests that come during a run).

use std::sync::Arc;
use std::sync::atomic::Ordering;

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
    for sig in STOPPING {
        // Exit at once while idle; otherwise interrupt, in the handler itself.
        let _ = signal_hook::flag::register_conditional_shutdown(
            sig,
            128 + sig,
            Arc::clone(&flags.idle),
        );
        let _ = signal_hook::flag::register_usize(sig, Arc::clone(&flags.which), sig as usize);
        let _ = signal_hook::flag::register(sig, Arc::clone(&flags.interrupt));
        let _ = signal_hook::flag::register(sig, Arc::clone(&flags.signalled));
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
    if let Ok(mut it) = signal_hook::iterator::Signals::new(STOPPING) {
        let idle = Arc::clone(&flags.idle);
        let _ = std::thread::Builder::new()
            .name("iogauge-signals".into())
            .spawn(move || {
                let mut seen = 0;
                for sig in it.forever() {
                    if idle.load(Ordering::SeqCst) {
                        continue;
                    }
                    seen += 1;
                    if seen >= 2 {
                        (how.on_second)();
                        signal_hook::low_level::exit(128 + sig);
                    }
                }
            });
    }
}
