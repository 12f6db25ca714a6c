//! One job thread's measurement loop, generic over the engine so the hot path has no dynamic
//! dispatch: take the next I/O from the workload, time the syscall, record it. Housekeeping
//! (ramp end, deadline, time-series ticks, progress counters) runs only when the clock passes
//! the next event, so the per-I/O cost is two clock reads and a histogram increment.
//! Here: the slab and queue (fill, issue, commit, reap, complete); the data written is in
//! `data.rs`, pacing in `pacing.rs`, the clock's events and series in `timeline.rs`, flushes
//! in `flush.rs`, how a job ends (well or with an error) in `end.rs`.

use std::io;
use std::path::PathBuf;
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use crate::engine::{Completion, Engine, EngineUser, IoUnit, Queued};
use crate::plan::JobSpec;
use crate::plan::workload::{Dir, Workload};
use crate::stats::{Clock, IoSample, JobStats};

mod data;
mod end;
mod flush;
mod iolog;
mod latency;
mod pacing;
mod prio;
mod queue;
mod renew;
mod replay;
mod timeline;
mod verify;
mod workload;

pub use pacing::Flow;
pub use verify::SharedFile;

use data::copy_template;
use end::{dir_name, setup_error};
use workload::workload;

/// How often progress counters are published.
const PUBLISH_EVERY: Duration = Duration::from_millis(250);

/// Counters a job publishes for the progress line; written by the job, read by the runner.
#[derive(Debug, Default)]
#[repr(align(64))]
pub struct JobProgress {
    pub bytes: AtomicU64,
    pub ios: AtomicU64,
}

impl JobProgress {
    fn publish(&self, stats: &JobStats) {
        let [r, w, t] = &stats.dirs;
        self.bytes
            .store(r.bytes + w.bytes + t.bytes, Ordering::Relaxed);
        self.ios.store(r.ios + w.ios + t.ios, Ordering::Relaxed);
    }
}

pub use crate::stats::JobError;

/// What a job thread hands back.
#[derive(Debug)]
pub struct JobResult {
    pub stats: JobStats,
    pub error: Option<JobError>,
    /// The per-I/O log's I/Os (log_avg_msec=0), and how many past its cap were not kept.
    pub io_log: (Vec<IoSample>, u64),
    /// fio's I/O log (`write_iolog`): its lines, and how many past its cap were not kept.
    pub iolog: (Vec<crate::trace::iolog::Op>, u64),
    /// Per file, what this job's verified writes left there (for a later group's readers);
    /// empty when it wrote nothing verified, or did not end well.
    pub handed: Vec<crate::verify::Handed>,
    /// The files the job's engine created as its measured operation (filecreate), by index,
    /// held open: the run removes them as it removes the files it laid out.
    pub made: Vec<(usize, crate::platform::fd::OwnedFd)>,
}

/// Everything a worker needs besides its engine.
pub struct Worker<'a> {
    pub job: &'a JobSpec,
    pub paths: Vec<PathBuf>,
    pub barrier: &'a Barrier,
    pub stop: &'a AtomicBool,
    pub progress: &'a JobProgress,
    pub clock: Clock,
    /// One flag per job of the group, set when the job has finished (for `wait_for`).
    pub finished: &'a [AtomicBool],
    /// This job's index in `finished`.
    pub index: usize,
    /// The jobs this one waits for (`wait_for`).
    pub wait_on: Vec<usize>,
    /// A net job's possible peers: the group's other net jobs. Once all have finished, no
    /// peer of this run is coming, and a receiver stops waiting for one.
    pub peers: Vec<usize>,
    /// Per reporting group of the run group (`new_group` starts one): set by a job with
    /// `exitall` when it ends (its own with exit_what=group, all with stonewall or all), and
    /// the jobs of a group set finish as if done.
    pub exits: &'a [AtomicBool],
    /// This job's reporting group, in `exits`.
    pub segment: usize,
    /// This run's identity, in every verify header it writes.
    pub run_id: u64,
    /// This job's number in the run (group and index), in its verify headers.
    pub job_id: u32,
    /// Per file: the verify map it shares with the group's other jobs that write the file.
    pub shared: Vec<verify::SharedFile>,
    /// Per file: what an earlier group's verifying writers left in it, for a job that checks
    /// as it reads.
    pub handed: Vec<Option<std::sync::Arc<crate::verify::Handed>>>,
    /// Those jobs meet here after writing and before verifying, so no job reads back a file
    /// another is still writing.
    pub verify_barrier: Option<&'a Barrier>,
    /// Threads for the verify phase when the job does not set `verify_async`.
    pub verify_threads: usize,
    /// The flow the job's `flow` weight counts in (fio's flow control), if it has one.
    pub flow: Option<&'a Flow>,
    /// fio's steady-state check this job adds its samples to (its group's, or its own).
    pub steady: Option<&'a crate::stats::steady::SteadyGroup>,
    /// The most I/Os its per-I/O log and I/O log keep (`limits::io_log_cap`).
    pub io_log_cap: usize,
}

impl Worker<'_> {
    /// This job failed: the other jobs of its group stop too, where the job's failure ends its
    /// group (iogauge's rule; in fio mode only with `exitall_on_error`).
    fn stop_others(&self) {
        if self.job.failure_stops_group {
            self.stop.store(true, Ordering::Relaxed);
        }
    }

    /// Marks this job finished; with `exitall`, the whole group too.
    fn mark_finished(&self) {
        if let Some(g) = self.steady {
            g.leave();
        }
        self.finished[self.index].store(true, Ordering::Release);
        if self.job.exitall {
            match self.job.exit_what {
                crate::plan::ExitWhat::Group => {
                    self.exits[self.segment].store(true, Ordering::Release)
                }
                _ => self
                    .exits
                    .iter()
                    .for_each(|e| e.store(true, Ordering::Release)),
            }
        }
    }

    /// After the start barrier: waits for `wait_for` jobs and `startdelay`. False when the
    /// job must not start (stopped, or an `exitall` job ended first).
    fn wait_to_start(&self) -> bool {
        let job = self.job;
        if job.pacing.startdelay.is_zero() && self.wait_on.is_empty() {
            return true;
        }
        let until = std::time::Instant::now() + job.pacing.startdelay;
        loop {
            if self.stop.load(Ordering::Relaxed) || self.exited() {
                return false;
            }
            let now = std::time::Instant::now();
            let waited = self
                .wait_on
                .iter()
                .all(|&i| self.finished[i].load(Ordering::Acquire));
            if waited && now >= until {
                return true;
            }
            let left = until.saturating_duration_since(now);
            std::thread::sleep(if waited {
                left.min(WAIT_STEP)
            } else {
                WAIT_STEP
            });
        }
    }
}

impl Worker<'_> {
    /// A job with `exitall` ended in this job's reach (see `exits`).
    #[inline]
    fn exited(&self) -> bool {
        self.exits[self.segment].load(Ordering::Acquire)
    }
}

/// How often a waiting job looks at the flags it waits on.
const WAIT_STEP: Duration = Duration::from_millis(5);

impl EngineUser<JobResult> for Worker<'_> {
    fn run<E: Engine>(self, engine: E) -> JobResult {
        run_loop(self, engine)
    }

    fn setup_failed(self, error: io::Error) -> JobResult {
        setup_error(&self, error)
    }
}

/// Bytes a size-bounded job moves per its spec (update counts its reads and writes), or
/// `None` when time-bounded.
pub fn planned_bytes(job: &JobSpec) -> Option<u64> {
    if let Some(s) = job.replay.as_ref().and_then(|r| r.schedule.as_ref()) {
        return Some(s.bytes);
    }
    if job.timing.time_based {
        return None;
    }
    if job.io_bytes.is_none() && job.gap > 0 {
        // Only the I/Os that fit between the gaps (the workload counts them).
        return workload(job, 0).remaining();
    }
    let per_loop = match job.io_bytes {
        Some(b) => b / job.xfer() * job.xfer(),
        None => job.blocks_per_file() * job.xfer() * job.paths().len() as u64,
    };
    let per_loop = if job.rw.pair_first().is_some() {
        2 * per_loop
    } else {
        per_loop
    };
    Some(per_loop.saturating_mul(u64::from(job.timing.loops)))
}

/// Per-slot bookkeeping the engine does not need.
#[derive(Debug, Clone, Copy, Default)]
struct SlotState {
    /// Clock ticks when the I/O was prepared and when it was handed to the kernel.
    t_prep: u64,
    t_sub: u64,
    /// Issued while measuring (I/O from the ramp is not counted).
    measured: bool,
    /// Bytes from the start of each page (at most a page) holding data read from the file,
    /// not the write pattern (0: all the pattern).
    dirty: u32,
    /// update: write this block back once its read completes.
    write_back: bool,
    /// The write's sequence number (its stamp), taken in workload order when the I/O is
    /// prepared, so what is written does not depend on the order of completions.
    write_seq: u64,
    /// Verifying: a sealed write is in flight over `offset..end` of `file`.
    writing: bool,
    /// Verifying: another write of the same blocks was in flight with this one.
    overlapped: bool,
    file: usize,
    offset: u64,
    end: u64,
}

/// Why the loop stops issuing I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Halt {
    /// Keep going.
    No,
    /// Deadline or end of work: finish what is in flight, then the final flush.
    Done,
    /// Stop flag (interrupt, another job's failure) or this job's error: drain, no flush.
    Abort,
}

/// What happened to an I/O's result.
enum Next {
    /// The slot is free again.
    Free,
    /// Queue the slot again (the rest of a short transfer, or update's write-back).
    Again,
}

/// The loop's state. The slab is declared before the engine in `run_loop`, so the engine
/// (and a ring that may still point into the slab) is dropped first. Its parts, each with its
/// own file: the data written (`data.rs`), pacing (`pacing.rs`), the clock's events and the
/// series (`timeline.rs`), and flushes (`flush.rs`); the slab and queue are here.
struct Loop<'w, 'a, E: Engine> {
    w: &'w Worker<'a>,
    engine: E,
    slab: &'w mut [IoUnit],
    st: Vec<SlotState>,
    free: Vec<u32>,
    /// Queued, not yet committed.
    pending: Vec<u32>,
    /// Committed, not yet reaped.
    in_kernel: usize,
    /// The ring itself failed (submit or wait): what is in flight cannot be drained.
    ring_broken: bool,
    /// Completions of the current reap (kept to reuse its allocation).
    cq: Vec<Completion>,
    wl: Workload,
    exhausted: bool,
    halt: Halt,
    stats: JobStats,
    error: Option<JobError>,
    clock: Clock,
    data: data::Pattern,
    pace: pacing::Pacer,
    tl: timeline::Timeline,
    flush: flush::Flush,
    verify: Option<verify::Verifier>,
    /// verify_backlog: enough writes since the last pause; read them back once idle.
    backlog_due: bool,
    /// log_avg_msec=0 with a log asked for: every measured I/O, and those past
    /// `io_log_cap` counted.
    io_log: Option<(Vec<IoSample>, u64)>,
    /// `write_iolog`: every I/O issued.
    iolog: Option<iolog::Recorder>,
    /// Each I/O's priority.
    prio: prio::Draw,
    /// `read_iolog`: the log's actions instead of the workload's.
    replay: Option<replay::Replayer>,
    /// fio's latency target: the queue depth searched for (boxed: the loop's hot fields stay
    /// together).
    lat: Option<Box<latency::Search>>,
    /// Each completion's latency is checked (a latency target or `max_latency`).
    lat_checks: bool,
    /// unlink_each_loop: where loops start, and the files made so far.
    renew: Option<Box<renew::Renew>>,
    /// A new loop starts: its files are renewed once nothing is in flight.
    renew_due: bool,
}

fn run_loop<E: Engine>(w: Worker<'_>, engine: E) -> JobResult {
    let job = w.job;
    if let Some(refused) = prio::settle_thread(&w) {
        return refused;
    }
    crate::runner::fault::panic_if_asked("job");
    let depth = if E::QUEUED {
        job.queue.depth as usize
    } else {
        1
    };
    let npages = job.numpages as usize;
    // Variable sizes share buffers of the largest one.
    let bs = (job.max_xfer() / u64::from(job.numpages)) as usize;
    // Declared before the engine, so dropped after it (see `Loop`).
    let mut slab: Vec<IoUnit> = (0..depth).map(|_| IoUnit::new(bs, npages)).collect();
    let mut engine = engine;
    let template = data::template(job, bs, npages);
    for u in &mut slab {
        copy_template(u, &template);
        // The job's own priority; per-command ones are drawn per I/O (`prio::Draw`).
        u.prio = job.prio.default;
    }
    if let Err(e) = engine.register(&mut slab) {
        return setup_error(&w, e);
    }
    let clock = w.clock;
    let mut l = Loop {
        w: &w,
        engine,
        st: vec![SlotState::default(); depth],
        free: (0..depth as u32).rev().collect(),
        pending: Vec::with_capacity(depth),
        in_kernel: 0,
        ring_broken: false,
        cq: Vec::with_capacity(depth),
        wl: workload(job, job.random.seed),
        renew: None,
        renew_due: false,
        exhausted: false,
        halt: Halt::No,
        stats: JobStats::with_series_ms(job.series_ms),
        error: None,
        clock,
        data: data::Pattern::new(template, job.paths().len()),
        pace: pacing::Pacer::new(job),
        tl: timeline::Timeline::new(job, &clock, PUBLISH_EVERY),
        flush: flush::Flush::new(job.paths().len(), &job.sync),
        verify: match job.verify {
            Some(v) => match verify::Verifier::new(
                job,
                v,
                (job.paths().len(), depth),
                &w.shared,
                &w.handed,
                (w.run_id, w.job_id),
            ) {
                Ok(v) => Some(v),
                Err(e) => return setup_error(&w, e),
            },
            None => None,
        },
        backlog_due: false,
        io_log: (job.logs.any() && job.logs.per_io).then(|| (Vec::new(), 0)),
        iolog: iolog::Recorder::for_job(job, &clock),
        prio: prio::Draw::new(job),
        replay: replay::Replayer::for_job(job),
        lat: (job.pacing.latency).map(|t| Box::new(latency::Search::new(&t, &clock, depth as u32))),
        lat_checks: job.pacing.latency.is_some()
            || job.pacing.max_latency.iter().any(|m| !m.is_zero()),
        slab: &mut slab,
    };
    l.renew = renew::Renew::for_job(job, &l.wl);
    prio::track(&mut l.stats, job);
    if let (Some(flow), Some(spec)) = (w.flow, job.pacing.flow) {
        flow.join(spec.weight);
    }
    w.barrier.wait();
    let go = w.wait_to_start() && l.engine_start();
    l.start(clock.now());
    // verify_only writes nothing: the job is its verify phase.
    if go && !job.verify.is_some_and(|v| v.only) {
        l.run();
    }
    let in_flight = l.in_kernel + l.pending.len();
    let result = l.finish();
    w.mark_finished();
    if in_flight > 0 {
        // The ring failed with I/O still in the kernel: it may yet write into these buffers,
        // so they must never be freed.
        std::mem::forget(slab);
    }
    result
}

impl<E: Engine> Loop<'_, '_, E> {
    fn run(&mut self) {
        loop {
            self.check_stop();
            if self.flush.due.is_some() && self.in_kernel == 0 && self.pending.is_empty() {
                self.due_flush();
            }
            if self.backlog_due && self.in_kernel == 0 && self.pending.is_empty() {
                self.backlog_pause();
            }
            if self.renew_due && self.in_kernel == 0 && self.pending.is_empty() {
                self.renew_files();
            }
            self.fill();
            if !E::QUEUED {
                if self.halt != Halt::No || (self.exhausted && !self.paused()) {
                    return;
                }
                continue;
            }
            if !self.pending.is_empty() {
                self.commit();
            }
            if self.in_kernel == 0 {
                let idle = self.halt != Halt::No || self.exhausted;
                if self.pending.is_empty() && idle && !self.paused() {
                    return;
                }
                if self.error.is_some() {
                    return;
                }
                continue;
            }
            self.reap();
            if self.ring_broken {
                return;
            }
        }
    }

    /// Issuing waits for something due once nothing is in flight: a flush, a verify
    /// backlog's pause, a loop's renewal of its files.
    #[inline]
    fn paused(&self) -> bool {
        self.flush.due.is_some() || self.backlog_due || self.renew_due
    }

    /// Reads the stop flag (one relaxed load per I/O); true when the loop must stop issuing.
    #[inline]
    fn check_stop(&mut self) -> bool {
        if self.w.stop.load(Ordering::Relaxed) && self.halt == Halt::No {
            self.halt = Halt::Abort;
        }
        self.halt != Halt::No
    }

    /// Queues new I/O while there are free slots and work left.
    fn fill(&mut self) {
        while self.halt == Halt::No && !self.exhausted && !self.paused() {
            if self.check_stop() {
                return;
            }
            if self.free.is_empty() {
                return;
            }
            // One at a time (the synchronous engines) is never above the target's depth.
            if E::QUEUED {
                if let Some(s) = self.lat.as_mut() {
                    if s.full(self.slab.len() - self.free.len()) {
                        return;
                    }
                }
            }
            let Some(io) = self.next_io() else {
                // Unless a replayed sync is due or a loop's files are to be renewed: the queue
                // drains, that runs, the job goes on.
                if self.flush.due.is_none() && !self.renew_due {
                    self.exhausted = true;
                }
                return;
            };
            if self.pace.on {
                // (Off in the verify phase.)
                self.pace(io.dir, io.len);
                if self.halt != Halt::No {
                    return;
                }
            }
            // Taken only now: while the I/O waited for its time, completions freed slots.
            let slot = self
                .free
                .pop()
                .expect("a free slot (waiting only frees more)");
            let i = slot as usize;
            let verifying = self.verifying();
            // Per-command priorities ride in queued submissions only (resolution sees to it);
            // without them every unit keeps the job's own, set once.
            if E::QUEUED && self.prio.cmd {
                self.slab[i].prio = self.prio.draw(&self.w.job.prio, io.dir, io.len);
            }
            let u = &mut self.slab[i];
            (u.dir, u.file, u.offset, u.done) = (io.dir, io.file, io.offset, 0);
            u.set_len(io.len as usize);
            let s = &mut self.st[i];
            // A backlog pause's reads are the check's, not the job's.
            s.measured = self.tl.measuring && !verifying;
            s.write_back = false;
            if Some(io.dir) == self.w.job.rw.pair_first() && !verifying {
                // The workload's next I/O writes this block (back): it goes with this unit,
                // so it follows its read or trim even with many I/Os in flight.
                let wb = self.wl.next();
                debug_assert!(wb.is_some_and(|w| w.dir == Dir::Write && w.offset == io.offset));
                s.write_back = true;
                s.write_seq = self.data.write_seq;
                self.data.write_seq += 1;
            }
            if io.dir == Dir::Write {
                self.prepare_write(i, false);
            } else if io.dir == Dir::Read {
                // The bytes this read overwrites (capped at a page where they are used).
                let len = io.len.min(u64::from(u32::MAX)) as u32;
                self.st[i].dirty = self.st[i].dirty.max(len);
                if self
                    .verify
                    .as_ref()
                    .is_some_and(|v| v.active || v.spec.inline)
                {
                    self.note_read(i);
                }
            }
            // Before the clock starts: what the engine does that is not the operation.
            self.engine.prep(&self.slab[i]);
            let now = self.clock.now();
            self.st[i].t_prep = now;
            if !verifying {
                self.log_issue(i, now);
            }
            self.issue(slot);
        }
    }

    fn next_io(&mut self) -> Option<crate::plan::workload::IoReq> {
        if self.verifying() {
            return self.next_verify_read();
        }
        if self.replay.is_some() {
            return self.next_replayed();
        }
        if let Some(r) = self.renew.as_deref_mut() {
            if r.crossed(self.wl.remaining()) {
                self.renew_due = true;
                return None;
            }
        }
        match self.wl.next() {
            Some(io) => Some(io),
            // The ramp cycles the region until it is over, however small the region.
            None if !self.tl.measuring => {
                self.wl = workload(self.w.job, self.w.job.random.seed);
                self.wl.next()
            }
            None => None,
        }
    }

    /// Hands slot `slot` to the engine; a synchronous engine completes it here.
    #[inline]
    fn issue(&mut self, slot: u32) {
        loop {
            match self.engine.queue(slot, &mut self.slab[slot as usize]) {
                Queued::Queued => {
                    self.pending.push(slot);
                    if self.pending.len() >= self.w.job.queue.batch_submit as usize {
                        self.commit();
                    }
                    return;
                }
                Queued::Done(res) => {
                    let now = self.clock.now();
                    if let Some(made) = self.engine.settle() {
                        self.made(made);
                    }
                    let t_prep = self.st[slot as usize].t_prep;
                    match self.complete(slot, res, t_prep, now) {
                        Next::Free => {}
                        Next::Again => continue,
                    }
                    if now >= self.tl.event {
                        self.housekeeping(now);
                    }
                    return;
                }
                Queued::Waiting => {
                    if self.still_waiting(slot) {
                        continue;
                    }
                    return;
                }
                Queued::End => {
                    self.peer_ended(slot);
                    return;
                }
            }
        }
    }

    /// The engine waited a step with nothing moved: true to queue the unit again; false when
    /// the job must stop (its time is up, or it was stopped), the unit dropped uncounted.
    #[cold]
    fn still_waiting(&mut self, slot: u32) -> bool {
        let now = self.clock.now();
        if now >= self.tl.event {
            self.housekeeping(now);
        }
        if self.check_stop() {
            self.free.push(slot);
            return false;
        }
        true
    }

    /// The peer ended the stream: the unit is dropped uncounted and the job's work is over.
    #[cold]
    fn peer_ended(&mut self, slot: u32) {
        self.free.push(slot);
        self.exhausted = true;
        if self.halt == Halt::No {
            self.halt = Halt::Done;
        }
    }

    /// Accounts a finished transfer of slot `slot` (`t_sub`: when it reached the kernel).
    #[inline]
    fn complete(&mut self, slot: u32, res: io::Result<usize>, t_sub: u64, now: u64) -> Next {
        let i = slot as usize;
        let u = &mut self.slab[i];
        let n = match res {
            Ok(0) => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "{} returned 0 bytes (end of file or device)",
                    dir_name(u.dir)
                ),
            )),
            r => r,
        };
        let n = match n {
            Ok(n) => n,
            Err(e) => return self.failed(slot, e),
        };
        let u = &mut self.slab[i];
        u.done += n;
        if u.done < u.len() {
            // A short transfer: the rest goes again, timed as the same I/O.
            return Next::Again;
        }
        let (dir, file, len, offset) = (u.dir, u.file, u.len() as u64, u.offset);
        let s = self.st[i];
        if s.measured && self.tl.measuring {
            let d = &mut self.stats.dirs[dir as usize];
            d.ios += 1;
            d.bytes += len;
            let lat = self.clock.ns(now.saturating_sub(s.t_prep));
            d.lat.record(lat);
            let (mut slat, mut clat) = (0, lat);
            if E::QUEUED {
                slat = self.clock.ns(t_sub.saturating_sub(s.t_prep));
                clat = self.clock.ns(now.saturating_sub(t_sub));
                d.slat.record(slat);
                d.clat.record(clat);
            }
            if E::QUEUED && self.prio.cmd && self.w.job.prio.tracked(dir as usize) {
                let prio = self.slab[i].prio;
                let ns = if self.w.job.prio.by_total { lat } else { clat };
                self.stats.prios[dir as usize].record(prio, ns);
            }
            if self.io_log.is_some() {
                let prio = self.slab[i].prio;
                self.log_io(IoSample {
                    t_ns: self.clock.ns(now.saturating_sub(self.tl.measure_start)),
                    lat_ns: lat,
                    clat_ns: clat,
                    slat_ns: slat,
                    offset,
                    bs: len as u32,
                    dir: dir as u8,
                    prio,
                });
            }
        }
        if self.lat_checks {
            let lat = self.clock.ns(now.saturating_sub(s.t_prep));
            self.latency_seen((dir, file, offset), lat, now);
        }
        if dir == Dir::Write {
            self.data.wrote[file] = true;
            self.flush.wrote(self.w, file, offset, len);
            if self.verify.is_some() {
                self.acknowledge(i, true);
            }
        } else if dir == Dir::Read
            && self
                .verify
                .as_ref()
                .is_some_and(|v| v.active || v.spec.inline)
        {
            // The verify phase's reads, or a verifying reader's own.
            self.check_read(i);
        }
        if s.write_back && self.halt == Halt::No {
            if E::QUEUED && self.prio.cmd {
                self.slab[i].prio = self.prio.draw(&self.w.job.prio, Dir::Write, len);
            }
            let u = &mut self.slab[i];
            (u.dir, u.done) = (Dir::Write, 0);
            self.st[i].write_back = false;
            self.prepare_write(i, true);
            self.st[i].t_prep = now;
            self.log_issue(i, now);
            return Next::Again;
        }
        self.free.push(slot);
        Next::Free
    }

    /// The engine created file `file` (inode `dev`, `ino`): on the list of files removed if
    /// the process must stop at once, until the run takes it over with the job's result.
    #[cold]
    fn made(&mut self, (file, (dev, ino), making): crate::engine::fileops::Made) {
        use crate::files::ownership;
        ownership::watch(&self.w.paths[file], ownership::Identity { dev, ino }, None);
        drop(making);
    }

    /// Keeps one measured I/O in the per-I/O log, or counts it past the log's cap.
    fn log_io(&mut self, sample: IoSample) {
        if let Some((log, dropped)) = self.io_log.as_mut() {
            if log.len() < self.w.io_log_cap {
                log.push(sample);
            } else {
                *dropped += 1;
            }
        }
    }

    /// In the verify phase.
    #[inline]
    fn verifying(&self) -> bool {
        self.verify.as_ref().is_some_and(|v| v.active)
    }
}

#[cfg(test)]
mod tests;
