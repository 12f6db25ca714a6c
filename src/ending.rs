//! A process that ends at once (a second Ctrl-C, a bug) removes what it created first
//! (`files::ownership::remove_watched`), then exits. A thread that is making a file meanwhile
//! — between the call that creates it and its entry on the emergency list, a few
//! microseconds in a filecreate loop, seconds on a stalled file system — would leave it
//! behind. So each such stretch is a [`Making`]: none starts once the process is ending, and
//! the ending waits (a while, not for ever) for those under way to put their file on the list
//! before it goes through it.
//!
//! On the ground floor, beside `units.rs`: the engines, the file layer and the replay all make
//! files, and none of them may depend on the others for this.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

static ENDING: AtomicBool = AtomicBool::new(false);
static MAKING: AtomicUsize = AtomicUsize::new(0);

/// Whether the process is ending at once: nothing new is made now.
pub fn now() -> bool {
    ENDING.load(Ordering::SeqCst)
}

/// A stretch that makes a file and puts it on the emergency list; it ends when dropped, which
/// is after the file is on the list (or was never made).
#[derive(Debug)]
#[must_use = "the stretch ends when this is dropped"]
pub struct Making(());

impl Making {
    /// Starts a stretch; None once the process is ending (make nothing then). Counted before
    /// the flag is read, the flag set before the count is read ([`begin`]): one of the two
    /// sides always sees the other.
    pub fn begin() -> Option<Making> {
        MAKING.fetch_add(1, Ordering::SeqCst);
        if now() {
            MAKING.fetch_sub(1, Ordering::SeqCst);
            return None;
        }
        Some(Making(()))
    }

    /// [`Making::begin`] as an error that says why nothing was made (EINTR's kind).
    pub fn begin_or_refuse() -> std::io::Result<Making> {
        Making::begin().ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::Interrupted,
                "not made: iogauge is stopping at once",
            )
        })
    }
}

impl Drop for Making {
    fn drop(&mut self) {
        MAKING.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Marks the process as ending and waits, at most `wait`, for the stretches under way to end;
/// whether they all did.
pub fn begin(wait: Duration) -> bool {
    ENDING.store(true, Ordering::SeqCst);
    let until = Instant::now() + wait;
    while MAKING.load(Ordering::SeqCst) > 0 {
        if Instant::now() >= until {
            return false;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    true
}
