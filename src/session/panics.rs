//! What a bug does: a panic, in any thread, ends iogauge at once. Rust's own default ends
//! only the thread that panicked, and the others wait on: a replay thread waiting for the dead
//! one's call, a job waiting at the start barrier for it — a run that never ends, whose files
//! stay (a Ctrl-C does not reach a barrier). Here the panic's message and place are printed as
//! Rust prints them, then one line says it is a bug in iogauge, the files the run created are
//! removed (`ownership::remove_watched`, as a second Ctrl-C removes them: the other threads
//! told to stop first, the creates under way waited for (`iogauge::ending`), and the list gone
//! through again after a moment for a file made outside such a stretch), and the process exits with 101, Rust's code for a panic. No report is
//! written: the figures of a run with a thread gone are not the run's. It must not stop for
//! anything but the removal.

use std::sync::atomic::Ordering;
use std::time::Duration;

use iogauge::errln;
use iogauge::files::ownership;

/// Exit code of a run ended by a bug.
const BUG: i32 = 101;
/// How long the other threads are given to finish a call under way before the second look.
const GRACE: Duration = Duration::from_millis(50);

/// Installs the hook; at the door, before anything else runs.
pub(crate) fn end_at_a_panic() {
    let rust_s = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        rust_s(info);
        // The other threads stop at their next look at the flag; one amid a call that creates
        // a file puts it on the list when the call returns: the list is gone through again
        // once they have had time to.
        super::signals().interrupt.store(true, Ordering::SeqCst);
        ownership::remove_watched();
        std::thread::sleep(GRACE);
        ownership::remove_watched();
        errln!(
            "iogauge: internal error: a bug in iogauge (the panic above says where; please \
             report it); stopped at once, the files this run created removed, no report written"
        );
        std::process::exit(BUG);
    }));
}
