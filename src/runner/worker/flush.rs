//! Flushes inside the job: `fsync=N` after every N writes (once nothing is in flight), and
//! the final flush of `end_fsync`, each timed into the job's sync latencies.

use std::io;
use std::sync::atomic::Ordering;

use super::{Halt, JobError, Loop, Worker};
use crate::engine::Engine;
use crate::stats::{Clock, JobStats};

#[derive(Debug, Default)]
pub(super) struct Flush {
    /// Writes since the last `fsync=N` flush.
    pub(super) written: u32,
    /// A flush is due on this file once nothing is in flight.
    pub(super) due: Option<usize>,
}

impl<E: Engine> Loop<'_, '_, E> {
    /// The fsync that `fsync=N` asked for, once nothing is in flight.
    pub(super) fn due_fsync(&mut self) {
        let Some(file) = self.flush.due.take() else {
            return;
        };
        if self.halt == Halt::Abort {
            return;
        }
        let record = self.tl.measuring;
        if let Err(e) = timed_fsync(&mut self.engine, file, &mut self.stats, record, &self.clock) {
            self.error = Some(fsync_error(self.w, file, e));
            self.halt = Halt::Abort;
            self.w.stop.store(true, Ordering::Relaxed);
        }
    }
}

pub(super) fn timed_fsync<E: Engine>(
    e: &mut E,
    file: usize,
    stats: &mut JobStats,
    record: bool,
    clock: &Clock,
) -> io::Result<()> {
    let t0 = clock.now();
    e.fsync(file)?;
    if record {
        stats.syncs.record(clock.ns(clock.now().saturating_sub(t0)));
    }
    Ok(())
}

pub(super) fn fsync_error(w: &Worker<'_>, file: usize, e: io::Error) -> JobError {
    JobError {
        file: w.paths.get(file).cloned(),
        offset: None,
        direction: Some("fsync".into()),
        errno: e.raw_os_error(),
        message: e.to_string(),
    }
}
