//! How a job ends: well (the final flush, the verify phase and its verdict, the last interval
//! of the series, what its writes hand on), or with an error (the engine could not start, an
//! I/O failed, the ring broke), which stops the other jobs too.

use crate::platform::abi;
use std::io;
use std::time::Duration;

use super::timeline::close_interval;
use super::{Halt, JobError, JobResult, Loop, Worker};
use crate::engine::Engine;
use crate::plan::JobSpec;
use crate::plan::workload::Dir;
use crate::stats::{CpuUsage, JobStats};

/// The engine could not start: meet the other jobs at the barrier (they must not wait
/// forever), stop them, and report why.
pub(super) fn setup_error(w: &Worker<'_>, e: io::Error) -> JobResult {
    w.stop_others();
    w.barrier.wait();
    if let Some(b) = w.verify_barrier {
        b.wait();
    }
    w.mark_finished();
    JobResult {
        io_log: (Vec::new(), 0),
        iolog: (Vec::new(), 0),
        handed: Vec::new(),
        made: Vec::new(),
        stats: JobStats::default(),
        error: Some(job_error(&e, e.to_string())),
    }
}

/// An error of the whole job, at no file or offset: its errno (through any context added to
/// it) and `message`.
fn job_error(e: &io::Error, message: String) -> JobError {
    JobError {
        file: None,
        offset: None,
        direction: None,
        errno: crate::engine::errno(e),
        message,
    }
}

impl<E: Engine> Loop<'_, '_, E> {
    /// The engine's own start (net's connection), once the job may start: false when the job
    /// must do no I/O (the wait was given up, or the start failed: its error kept). The wait
    /// ends when the job is stopped or its group exits, or after the job's own time (ramp and
    /// runtime) where it has one: a peer that never comes does not hold the run.
    pub(super) fn engine_start(&mut self) -> bool {
        let w = self.w;
        let job = w.job;
        let bound = job
            .timing
            .runtime
            .map(|r| std::time::Instant::now() + r + job.timing.ramp);
        let mut timed_out = false;
        let peers_gone = || {
            !w.peers.is_empty()
                && w.peers
                    .iter()
                    .all(|&i| w.finished[i].load(std::sync::atomic::Ordering::Acquire))
        };
        let mut keep_waiting = || {
            if w.stop.load(std::sync::atomic::Ordering::Relaxed) || w.exited() || peers_gone() {
                return false;
            }
            timed_out = bound.is_some_and(|b| std::time::Instant::now() >= b);
            !timed_out
        };
        match self.engine.start(&mut keep_waiting) {
            Ok(true) => true,
            Ok(false) if timed_out => {
                self.fail_start(crate::engine::with_context(
                    crate::platform::os_error(abi::errno::ETIMEDOUT),
                    format!(
                        "{}: no peer within the job's time ({} s)",
                        job.engine.as_str(),
                        job.timing.runtime.unwrap_or_default().as_secs_f64()
                    ),
                ));
                false
            }
            Ok(false) => false,
            Err(e) => {
                self.fail_start(e);
                false
            }
        }
    }

    fn fail_start(&mut self, e: io::Error) {
        self.error = Some(job_error(&e, e.to_string()));
        self.halt = Halt::Abort;
        self.w.stop_others();
    }

    pub(super) fn io_error(&mut self, dir: Dir, file: usize, offset: u64, e: io::Error) {
        if self.error.is_none() {
            let errno = crate::engine::errno(&e);
            let hint = errno.and_then(|n| explain_errno(self.w.job, n));
            self.error = Some(JobError {
                file: self.w.paths.get(file).cloned(),
                offset: Some(offset),
                direction: Some(dir_name(dir).into()),
                errno,
                message: match hint {
                    Some(h) => format!("{e}: {h}"),
                    None => e.to_string(),
                },
            });
        }
        self.halt = Halt::Abort;
        self.w.stop_others();
    }

    /// A failed I/O the job's `continue_on_error` goes past: counted (the first kept), and
    /// true; false when it must stop the job.
    #[cold]
    pub(super) fn went_past(
        &mut self,
        (dir, file, offset): (Dir, usize, u64),
        e: &io::Error,
    ) -> bool {
        let Some(errno) = crate::engine::errno(e) else {
            return false;
        };
        if !self.w.job.on_error.continues(dir == Dir::Read, errno) {
            return false;
        }
        let c = self.stats.continued.get_or_insert_with(Default::default);
        c.total += 1;
        c.per_dir[dir as usize] += 1;
        if c.total == 1 {
            c.first_errno = errno;
            let path = self.w.paths.get(file).map(|p| p.display().to_string());
            c.first = format!(
                "{} of {} at offset {offset}: {e}",
                dir_name(dir),
                path.as_deref().unwrap_or("?")
            );
        }
        true
    }

    /// A transfer of slot `slot` failed: a full file system ends a fill_device job, an
    /// error continue_on_error allows is counted and gone past, any other stops the job.
    #[cold]
    pub(super) fn failed(&mut self, slot: u32, e: io::Error) -> super::Next {
        let u = &self.slab[slot as usize];
        let at = (u.dir, u.file, u.next_offset());
        if at.0 == Dir::Write {
            self.acknowledge(slot as usize, false);
        }
        self.free.push(slot);
        if self.w.job.fill_device && self.filled(at, &e) {
            return super::Next::Free;
        }
        if self.w.job.on_error.classes == 0 || !self.went_past(at, &e) {
            self.io_error(at.0, at.1, at.2, e);
        }
        super::Next::Free
    }

    /// fill_device: a write that found the file system full (ENOSPC, EDQUOT) ends the job
    /// as its work done, not as an error (fio's way); true when it did.
    #[cold]
    pub(super) fn filled(&mut self, (dir, file, offset): (Dir, usize, u64), e: &io::Error) -> bool {
        let errno = crate::engine::errno(e);
        if dir != Dir::Write || !matches!(errno, Some(abi::errno::ENOSPC | abi::errno::EDQUOT)) {
            return false;
        }
        if self.stats.filled.is_none() {
            let path = self.w.paths.get(file).map(|p| p.display().to_string());
            let name = if errno == Some(abi::errno::ENOSPC) {
                "ENOSPC"
            } else {
                "EDQUOT"
            };
            self.stats.filled = Some(format!(
                "{} full at offset {offset} ({name})",
                path.as_deref().unwrap_or("?")
            ));
        }
        self.exhausted = true;
        if self.halt == Halt::No {
            self.halt = Halt::Done;
        }
        true
    }

    /// The ring itself failed (submit or wait): nothing in flight can be trusted to finish.
    pub(super) fn fail_ring(&mut self, e: io::Error) {
        if self.error.is_none() {
            let message = format!("{}: {e}", self.w.job.engine.as_str());
            self.error = Some(job_error(&e, message));
        }
        self.ring_broken = true;
        self.halt = Halt::Abort;
        self.w.stop_others();
    }

    pub(super) fn finish(mut self) -> JobResult {
        // The final flush is part of the measured job: buffered writes count when durable.
        if self.error.is_none() && self.halt != Halt::Abort && self.tl.measuring {
            self.end_flush();
        }
        self.close_measurement();
        // A datagram receiver's losses are its reads'.
        self.stats.dirs[Dir::Read as usize].dropped = self.engine.dropped();
        if let (Some(s), Some(t)) = (&self.lat, self.w.job.pacing.latency) {
            self.stats.latency = Some(crate::stats::LatencyFound {
                depth: s.qd,
                target_ns: t.target.as_nanos() as u64,
                window_us: t.window.as_micros() as u64,
                percentile: t.percentile,
                settled: Some(s.settled()),
            });
        }
        // Its I/Os no longer hold the flow's other jobs back.
        if let (Some(flow), Some(spec)) = (self.w.flow, self.w.job.pacing.flow) {
            flow.leave(self.pace.flow_ios, spec.weight);
        }
        if let Some(b) = self.w.verify_barrier {
            // Every job writing a shared file gets here, whatever happened to it.
            b.wait();
        }
        let ok = self.error.is_none() && self.halt != Halt::Abort && !self.ring_broken;
        let spec = self.verify.as_ref().map(|v| v.spec);
        if ok && spec.is_some_and(|v| v.after_write) {
            self.verify_phase();
        }
        // verify_backlog with do_verify=0 checked blocks in its pauses: a bad one fails the job.
        if ok && spec.is_some_and(|v| v.after_write || v.inline || v.backlog > 0) {
            self.verify_verdict();
        }
        self.w.progress.publish(&self.stats);
        // What its writes left, for a later group's readers: only a job that wrote and ended
        // well (a failed one ends the run).
        let handed = match &self.verify {
            Some(v) if ok && self.w.job.rw.writes() && self.error.is_none() => v.handed(),
            _ => Vec::new(),
        };
        // do_verify=0 sealed the blocks and checked nothing (unless in backlog pauses): no
        // check to report.
        self.stats.verify = self
            .verify
            .take()
            .filter(|v| v.spec.after_write || v.spec.inline || v.stats.blocks > 0)
            .map(|v| v.stats);
        JobResult {
            io_log: self.io_log.take().unwrap_or_default(),
            iolog: self
                .iolog
                .take()
                .map_or_else(Default::default, |r| (r.entries, r.dropped)),
            stats: self.stats,
            error: self.error,
            handed,
            made: {
                let mut made = self.engine.take_made();
                made.extend(self.renew.take().map(|r| r.made).unwrap_or_default());
                made
            },
        }
    }

    /// Ends the measured time: elapsed, CPU, depth and the last interval of the series.
    fn close_measurement(&mut self) {
        let end = self.clock.now();
        if self.tl.measuring {
            let stats = &mut self.stats;
            stats.elapsed =
                Duration::from_nanos(self.clock.ns(end.saturating_sub(self.tl.measure_start)));
            stats.window_ns = Some((self.clock.ns(self.tl.measure_start), self.clock.ns(end)));
            stats.cpu = CpuUsage::thread().since(&self.tl.cpu_start);
            if E::QUEUED {
                self.account_depth(end);
            } else {
                // One I/O in the kernel during each I/O's latency, none in between.
                let busy: u64 = self.stats.dirs.iter().map(|d| d.lat.sum_ns as u64).sum();
                let total = self.stats.elapsed.as_nanos() as u64;
                self.stats.depth.add(1, busy.min(total));
                self.stats.depth.add(0, total.saturating_sub(busy));
            }
            // The last, partial interval, if anything happened in it.
            for (d, l) in self.stats.dirs.iter_mut().zip(self.tl.last.iter_mut()) {
                if d.ios != l.ios {
                    close_interval(d, l, self.tl.tick_index);
                }
            }
        }
    }
}

pub(super) fn dir_name(d: Dir) -> &'static str {
    d.name()
}

/// What an errno means for this job's options, where the bare message would mislead.
fn explain_errno(job: &JobSpec, errno: i32) -> Option<&'static str> {
    match errno {
        abi::errno::EOPNOTSUPP if job.flags.hipri => Some(
            "polled I/O (hipri) is not supported for this file: it needs a block device \
             with poll queues (NVMe: the nvme.poll_queues module parameter)",
        ),
        abi::errno::EOPNOTSUPP if job.flags.nowait => Some(
            "nowait (RWF_NOWAIT) is not supported for this I/O here (buffered native AIO \
             writes on most file systems): drop nowait or use direct=1",
        ),
        abi::errno::EAGAIN if job.flags.nowait => {
            Some("the I/O would have blocked and nowait (RWF_NOWAIT) asked it to fail instead")
        }
        abi::errno::EINVAL if job.engine == crate::plan::EngineKind::E4defrag => Some(
            "EXT4_IOC_MOVE_EXT moved nothing: the range is beyond the end of the file or of \
             the donor, or the file system refused the move",
        ),
        abi::errno::ENOTTY | abi::errno::EOPNOTSUPP
            if job.engine == crate::plan::EngineKind::E4defrag =>
        {
            Some("this file cannot have its extents moved (ext4 without extents, or data=journal)")
        }
        abi::errno::EINVAL if job.direct => Some(
            "the kernel refused the direct I/O: check that bs and offset are multiples of \
             the logical block size",
        ),
        _ => None,
    }
}
