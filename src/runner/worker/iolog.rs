//! fio's I/O log (`write_iolog`): every I/O the job issues (ramp included, the check's reads
//! of a verify phase not), each flush, in order, timed from the job's start. Kept in memory
//! and written as the run ends, as the other logs are; a job past its cap (`io_log_cap`)
//! counts the rest and says so.

use crate::engine::{Dir, Engine, FlushCall};
use crate::trace::iolog::{Action as IologOp, Op as IologEntry};

use super::Loop;

#[derive(Debug, Default)]
pub(super) struct Recorder {
    /// Clock ticks at the job's start.
    start: u64,
    pub(super) entries: Vec<IologEntry>,
    pub(super) dropped: u64,
}

impl Recorder {
    /// A recorder from now, when the job asked for an I/O log.
    pub(super) fn for_job(job: &crate::plan::JobSpec, clock: &crate::stats::Clock) -> Option<Self> {
        job.logs.iolog.as_ref().map(|_| Recorder {
            start: clock.now(),
            ..Recorder::default()
        })
    }
}

impl<E: Engine> Loop<'_, '_, E> {
    /// Logs slot `i`'s I/O as it is issued.
    #[inline]
    pub(super) fn log_issue(&mut self, i: usize, now: u64) {
        let Some(r) = self.iolog.as_mut() else {
            return;
        };
        let u = &self.slab[i];
        let op = match u.dir {
            Dir::Read => IologOp::Read,
            Dir::Write => IologOp::Write,
            Dir::Trim => IologOp::Trim,
        };
        let t_us = self.clock.ns(now.saturating_sub(r.start)) / 1000;
        push(
            r,
            self.w.io_log_cap,
            t_us,
            u.file,
            op,
            (u.offset, u.len() as u64),
        );
    }

    /// Logs a flush of file `file` as it is called.
    pub(super) fn log_flush(&mut self, file: usize, call: FlushCall) {
        let now = self.clock.now();
        let Some(r) = self.iolog.as_mut() else {
            return;
        };
        let (op, range) = match call {
            FlushCall::Fsync | FlushCall::Syncfs => (IologOp::Sync, (0, 0)),
            FlushCall::Fdatasync => (IologOp::Datasync, (0, 0)),
            FlushCall::Range { offset, len, .. } => (IologOp::SyncFileRange, (offset, len)),
        };
        let t_us = self.clock.ns(now.saturating_sub(r.start)) / 1000;
        push(r, self.w.io_log_cap, t_us, file, op, range);
    }
}

fn push(
    r: &mut Recorder,
    cap: usize,
    t_us: u64,
    file: usize,
    op: IologOp,
    (offset, len): (u64, u64),
) {
    if r.entries.len() < cap {
        r.entries.push(IologEntry {
            t_us,
            offset,
            len,
            file: file as u32,
            action: op,
        });
    } else {
        r.dropped += 1;
    }
}
