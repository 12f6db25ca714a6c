//! Flushes inside the job, fio's sync family: `fsync=N`, `fdatasync=N` and
//! `sync_file_range=FLAGS:N` after every N writes (once nothing is in flight), and the final
//! flush of `end_fsync`/`fsync_on_close` (each written file) or `end_syncfs` (one call), each
//! timed into the job's sync latencies as fio times them.

use std::io;

use super::{Halt, JobError, Loop, Worker};
use crate::engine::{Engine, FlushCall};
use crate::plan::job::{Durability, EndFlush, Periodic};
use crate::stats::{Clock, JobStats};

#[derive(Debug, Default)]
pub(super) struct Flush {
    /// Writes completed so far (fio counts from the job's start).
    pub(super) written: u64,
    /// A flush is due on this file once nothing is in flight.
    pub(super) due: Option<(usize, Periodic)>,
    /// Per file, the bytes written since its last flush (`start..end`): what
    /// sync_file_range covers.
    pub(super) dirty: Vec<Option<(u64, u64)>>,
    /// The job flushes every N writes: without, a completed write costs nothing here.
    periodic: bool,
}

impl Flush {
    pub(super) fn new(files: usize, sync: &Durability) -> Flush {
        Flush {
            dirty: vec![None; files],
            periodic: sync.periodic(),
            ..Flush::default()
        }
    }

    /// A write of `len` bytes at `offset` on `file` completed: note its range, and whether a
    /// periodic flush is now due.
    #[inline]
    pub(super) fn wrote(&mut self, w: &Worker<'_>, file: usize, offset: u64, len: u64) {
        if !self.periodic {
            return;
        }
        let end = offset + len;
        let d = &mut self.dirty[file];
        *d = Some(d.map_or((offset, end), |(s, e)| (s.min(offset), e.max(end))));
        self.written += 1;
        if let Some(p) = w.job.sync.due_after(self.written) {
            self.due = Some((file, p));
        }
    }

    /// The call for periodic flush `p` of `file`, over what was written since its last flush.
    fn call(&self, file: usize, p: Periodic) -> FlushCall {
        match p {
            Periodic::Fsync => FlushCall::Fsync,
            Periodic::Fdatasync => FlushCall::Fdatasync,
            Periodic::Range(flags) => {
                let (offset, end) = self.dirty[file].unwrap_or((0, 0));
                FlushCall::Range {
                    offset,
                    len: end - offset,
                    flags,
                }
            }
        }
    }
}

impl<E: Engine> Loop<'_, '_, E> {
    /// The periodic flush that is due, once nothing is in flight.
    pub(super) fn due_flush(&mut self) {
        let Some((file, p)) = self.flush.due.take() else {
            return;
        };
        if self.halt == Halt::Abort {
            return;
        }
        let call = self.flush.call(file, p);
        self.flush.dirty[file] = None;
        let record = self.tl.measuring;
        self.log_flush(file, call);
        if let Err(e) = timed_flush(
            &mut self.engine,
            file,
            call,
            &mut self.stats,
            record,
            &self.clock,
        ) {
            self.error = Some(flush_error(self.w, file, call, e));
            self.halt = Halt::Abort;
            self.w.stop_others();
        } else if matches!(call, FlushCall::Fsync | FlushCall::Fdatasync) {
            // sync_file_range starts writeback; it makes nothing durable.
            self.made_durable(Some(file));
        }
    }

    /// The flush at the end of the job, inside the measured time: buffered writes count when
    /// they are durable. An error is the job's.
    pub(super) fn end_flush(&mut self) {
        let written = || (0..self.data.wrote.len()).filter(|&f| self.data.wrote[f]);
        let calls: Vec<(usize, FlushCall)> = match self.w.job.sync.at_end {
            EndFlush::None => return,
            EndFlush::Fsync => written().map(|f| (f, FlushCall::Fsync)).collect(),
            // One call flushes the file system; any written file names it.
            EndFlush::Syncfs => written().take(1).map(|f| (f, FlushCall::Syncfs)).collect(),
        };
        for (file, call) in calls {
            self.log_flush(file, call);
            if let Err(e) = timed_flush(
                &mut self.engine,
                file,
                call,
                &mut self.stats,
                true,
                &self.clock,
            ) {
                self.error = Some(flush_error(self.w, file, call, e));
                return;
            }
            self.made_durable(match call {
                FlushCall::Syncfs => None,
                _ => Some(file),
            });
        }
    }
}

pub(super) fn timed_flush<E: Engine>(
    e: &mut E,
    file: usize,
    call: FlushCall,
    stats: &mut JobStats,
    record: bool,
    clock: &Clock,
) -> io::Result<()> {
    let t0 = clock.now();
    e.flush(file, call)?;
    if record {
        stats.syncs.record(clock.ns(clock.now().saturating_sub(t0)));
    }
    Ok(())
}

fn flush_error(w: &Worker<'_>, file: usize, call: FlushCall, e: io::Error) -> JobError {
    JobError {
        file: w.paths.get(file).cloned(),
        offset: None,
        direction: Some(call.name().into()),
        errno: crate::engine::errno(&e),
        message: e.to_string(),
    }
}
