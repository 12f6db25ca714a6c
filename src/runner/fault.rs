//! A bug on purpose, for the tests of what a bug does: `IOGAUGE_PANIC_IN=PLACE` makes the
//! named place panic, as a bug there would (`job`: a job thread of a run, once its files are
//! open; `replay`: a replay thread, once all have started). What iogauge must do then — stop at
//! once rather than leave the other threads waiting for the one that died, remove what the
//! run created, say it is a bug — is the door's (`src/session/panics.rs`). Nothing else reads
//! the variable; a place reads it once a thread, never in an I/O loop.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

/// Panics where the environment names `place`: in the first thread to get there, as a bug
/// would in one thread while the others go on.
pub fn panic_if_asked(place: &str) {
    static ASKED: OnceLock<Option<String>> = OnceLock::new();
    static FIRED: AtomicBool = AtomicBool::new(false);
    let asked = ASKED.get_or_init(|| std::env::var("IOGAUGE_PANIC_IN").ok());
    if asked.as_deref() == Some(place) && !FIRED.swap(true, Ordering::SeqCst) {
        panic!(
            "IOGAUGE_PANIC_IN={place}: a panic the environment asked for, to test what a bug does"
        );
    }
}
