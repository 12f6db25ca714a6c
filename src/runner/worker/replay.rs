//! Replaying a log (`read_iolog`): the schedule's actions in order. Each read, write and trim
//! is issued no earlier than its time after the replay's first action, on one clock from
//! there, so a late I/O does not push the rest of the schedule back (queued I/O completes
//! while the job waits). A sync (fsync, fdatasync, sync_file_range) runs once what is in
//! flight has completed, timed into the job's sync latencies as a periodic flush is; a
//! version 2 `wait` holds the replay until its millisecond after the start.

use std::sync::Arc;
use std::time::Duration;

use super::{Halt, Loop};
use crate::engine::{Dir, Engine};
use crate::plan::job::Periodic;
use crate::plan::replay::Schedule;
use crate::plan::workload::IoReq;
use crate::trace::iolog::Action;

/// sync_file_range's flags for a replayed call: start writeback and wait for it, before and
/// after (the log does not keep the flags; these make the range durable as far as the call
/// can).
const RANGE_FLAGS: u32 = crate::platform::abi::SYNC_FILE_RANGE_WAIT_BEFORE
    | crate::platform::abi::SYNC_FILE_RANGE_WRITE
    | crate::platform::abi::SYNC_FILE_RANGE_WAIT_AFTER;

pub(super) struct Replayer {
    schedule: Arc<Schedule>,
    /// The next action's index.
    next: usize,
    /// Clock ticks when the first action was taken: the schedule's zero.
    start: Option<u64>,
    /// `replay_no_stall`: no schedule to keep.
    no_stall: bool,
}

impl Replayer {
    pub(super) fn for_job(job: &crate::plan::JobSpec) -> Option<Replayer> {
        let spec = job.replay.as_ref()?;
        Some(Replayer {
            schedule: spec.schedule.clone()?,
            next: 0,
            start: None,
            no_stall: spec.no_stall,
        })
    }
}

impl<E: Engine> Loop<'_, '_, E> {
    /// The replay's next I/O, once it is due. `None`: the log is done, the job is stopping, or
    /// a sync is due (`flush.due` set: the loop drains the queue, flushes, and asks again).
    // Kept out of the generated workload's path (`next_io`), which only tests for a replay.
    #[inline(never)]
    pub(super) fn next_replayed(&mut self) -> Option<IoReq> {
        loop {
            let now = self.clock.now();
            let r = self.replay.as_mut()?;
            let op = *r.schedule.ops.get(r.next)?;
            r.next += 1;
            let start = *r.start.get_or_insert(now);
            let due = match op.action {
                Action::Wait => start + self.clock.ticks(Duration::from_millis(op.offset)),
                _ => start + self.clock.ticks(Duration::from_micros(op.t_us)),
            };
            if due > now {
                self.wait_until(due);
            }
            if self.halt != Halt::No || self.check_stop() {
                return None;
            }
            if op.action.is_io() {
                self.timed(op.t_us, due);
            }
            let file = op.file as usize;
            let (dir, periodic) = match op.action {
                Action::Read => (Dir::Read, None),
                Action::Write => (Dir::Write, None),
                Action::Trim => (Dir::Trim, None),
                Action::Wait => continue,
                Action::Sync => (Dir::Write, Some(Periodic::Fsync)),
                Action::Datasync => (Dir::Write, Some(Periodic::Fdatasync)),
                Action::SyncFileRange => {
                    self.flush.dirty[file] = Some((op.offset, op.offset.saturating_add(op.len)));
                    (Dir::Write, Some(Periodic::Range(RANGE_FLAGS)))
                }
            };
            if let Some(p) = periodic {
                self.flush.due = Some((file, p));
                return None;
            }
            return Some(IoReq {
                dir,
                file,
                offset: op.offset,
                len: op.len,
            });
        }
    }

    /// Notes how late an I/O due at tick `due` (`t_us` into the schedule) is being issued.
    fn timed(&mut self, t_us: u64, due: u64) {
        let Some(r) = self.replay.as_ref() else {
            return;
        };
        if r.no_stall || !self.tl.measuring {
            return;
        }
        let now = self.clock.now();
        let start = r.start.unwrap_or(now);
        let late = self.clock.ns(now.saturating_sub(due));
        let replayed = self.clock.ns(now.saturating_sub(start));
        self.stats
            .replay
            .get_or_insert_with(Default::default)
            .issued(late, t_us.saturating_mul(1000), replayed);
    }
}
