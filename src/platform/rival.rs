//! A thread that takes the calling thread's CPU from it for a while (tests only): for tests of
//! what a thread kept from its CPU measures.

use std::io;
use std::time::{Duration, Instant};

use super::process::pin_thread;
use super::testing::{current_cpu, realtime_thread};

/// The caller is pinned to the CPU it is on, and the rival, pinned there too (real-time where
/// asked, so that no ordinary thread preempts it), sleeps `delay` and then spins `spin` — on
/// its own clock, so a test that fails midway holds no CPU for long. Joined when dropped.
pub struct Rival(Option<std::thread::JoinHandle<()>>);

impl Rival {
    /// Err where the pin or the real-time policy is refused (the rival then ends at once).
    pub fn beside_me(delay: Duration, spin: Duration, realtime: bool) -> io::Result<Rival> {
        let cpu = current_cpu().unwrap_or(0);
        pin_thread(&[cpu])?;
        let (tx, rx) = std::sync::mpsc::channel();
        let rival = Rival(Some(std::thread::spawn(move || {
            let ready = pin_thread(&[cpu]).and_then(|()| match realtime {
                true => realtime_thread(),
                false => Ok(()),
            });
            let ok = ready.is_ok();
            let _ = tx.send(ready);
            if ok {
                std::thread::sleep(delay);
                let t = Instant::now();
                while t.elapsed() < spin {
                    std::hint::spin_loop();
                }
            }
        })));
        rx.recv().map_err(io::Error::other)??;
        Ok(rival)
    }
}

impl Drop for Rival {
    fn drop(&mut self) {
        if let Some(h) = self.0.take() {
            let _ = h.join();
        }
    }
}
