//! `iogauge replay TRACE`: the recorded program's I/O issued again, call for call, on copies
//! of its files in a directory of the replay's own: one thread per recorded thread, each
//! call at its recorded offset and length with its descriptor's O_DIRECT/O_DSYNC/O_SYNC, in
//! its thread's order and after the other threads' calls it depended on
//! (`trace::order`). Timing
//! per mode: closed (each call when the previous one completed plus the recorded think
//! time), open (at the recorded issue times), afap (no think time). The report holds what a
//! run's does (per call type: count, bytes, latency percentiles; per file; per thread) and
//! the replay's timing fidelity: each call's issue-time error against its schedule, and the
//! replayed span next to the recorded one.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::time::{Duration, Instant};

mod aio;
mod board;
mod calls;
mod faults;
mod issue;
pub mod layout;
mod polls;
mod think;
mod woken;

use crate::stats::histogram::Histogram;
use crate::trace::recording::{Event, Op, Recording};
pub use crate::trace::replayed::{
    CaptureTaken, CpuWait, Mode, OpFigures, ReplayReport, StorageFailure, ThinkFigures,
    ThreadFigures, Timeline,
};
pub use issue::replayed;
use layout::Layout;

/// What a replay is asked to do.
#[derive(Debug, Clone)]
pub struct Options {
    pub mode: Mode,
    /// Think times and issue times divided by this (2: twice as fast).
    pub speed: f64,
    /// Where the replay's own directory is made.
    pub directory: PathBuf,
    /// That directory's name.
    pub name: String,
}

/// One past the largest `Op` number (the last one added).
const OPS: usize = Op::TABLE;

/// One call type's accumulation.
#[derive(Default, Clone)]
struct OpAcc {
    calls: u64,
    bytes: u64,
    errors: u64,
    lat: Histogram,
    lat_sum: u64,
    lat_max: u64,
    recorded_sum: u64,
}

/// What one replay thread measured.
#[derive(Default)]
pub struct ThreadResult {
    ops: Vec<OpAcc>,
    issue_error: Histogram,
    issue_error_max: u64,
    calls: u64,
    busy_ns: u64,
    recorded_busy_ns: u64,
    skipped: u64,
    differ: u64,
    /// Polls that ended at an earlier look here, and last looks held for the change.
    polls_cut: u64,
    polls_held: u64,
    /// What it made of the recorded think times (where the trace splits them).
    think: ThinkFigures,
    /// The capture's cost it took out of them (`think::Capture`), ns.
    capture_taken_ns: u64,
    /// Its time waiting for a CPU from the start to its end (None: not known here).
    cpu_wait_ns: Option<u64>,
    /// What it made of its thread's major page faults.
    faults: faults::Acc,
}

impl ThreadResult {
    fn record(&mut self, e: &Event, result: i64, took: Duration, late: Duration) {
        let ns = self.record_op(e, result, took);
        let late = late.as_nanos() as u64;
        self.issue_error.record(late);
        self.issue_error_max = self.issue_error_max.max(late);
        self.calls += 1;
        self.busy_ns += ns;
        self.recorded_busy_ns = self.recorded_busy_ns.saturating_add(e.dur);
    }

    /// An asynchronous I/O reaped: its call type's figures (the thread's time in calls is
    /// its io_submit's and io_getevents').
    fn record_async(&mut self, e: &Event, result: i64, took: Duration) {
        self.record_op(e, result, took);
    }

    /// The call type's figures; the latency in ns.
    fn record_op(&mut self, e: &Event, result: i64, took: Duration) -> u64 {
        if self.ops.is_empty() {
            self.ops = vec![OpAcc::default(); OPS];
        }
        let ns = took.as_nanos() as u64;
        let a = &mut self.ops[e.op as usize];
        a.calls += 1;
        a.bytes += result.max(0) as u64 * u64::from(matches!(e.op, Op::Read | Op::Write));
        a.errors += u64::from(result < 0);
        a.lat.record(ns);
        a.lat_sum += ns;
        a.lat_max = a.lat_max.max(ns);
        a.recorded_sum = a.recorded_sum.saturating_add(e.dur);
        let differs = (result < 0) != (e.result < 0)
            || (matches!(e.op, Op::Read | Op::Write) && result >= 0 && result != e.result);
        self.differ += u64::from(differs);
        ns
    }
}

/// Why a replay could not run.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The user's to fix (a directory that is missing, too little space).
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Failed(String),
    /// Asked to stop while the files were laid out (what was made is removed).
    #[error("stopped while the trace's files were laid out (removed)")]
    Stopped,
}

/// Replays `r`; `stop` ends it early (what was replayed is reported).
pub fn replay(
    r: &Recording,
    trace_name: &str,
    opts: &Options,
    stop: Arc<AtomicBool>,
) -> Result<ReplayReport, ReplayError> {
    replay_timed(r, trace_name, opts, stop).map(|(report, _)| report)
}

/// Replays `r`, and gives what it measured of each call too.
pub fn replay_timed(
    r: &Recording,
    trace_name: &str,
    opts: &Options,
    stop: Arc<AtomicBool>,
) -> Result<(ReplayReport, Timeline), ReplayError> {
    check_space(r, &opts.directory)?;
    check_buffers(r)?;
    let layout = lay_out(r, opts, &stop)?;
    let deps = aio::dependencies(&r.events);
    let anchors = match opts.mode {
        Mode::Closed | Mode::Afap => {
            crate::trace::anchor::anchors(&r.events, r.footer.sleeps(), issue::replayed)
        }
        _ => Default::default(),
    };
    let done: Vec<AtomicU64> = r.events.iter().map(|_| AtomicU64::new(0)).collect();
    let timing: Vec<issue::Timing> = r.events.iter().map(|_| Default::default()).collect();
    let (tids, mine) = by_thread(r);
    let aio = aio::Aio::new(&r.events);
    let board = board::Board::new(&r.events);
    let polls = polls::Polls::of(r, opts.mode, &anchors);
    let gaps = gaps(r, opts.mode);
    let faults = faults::Faults::of(r);
    let start = std::sync::OnceLock::new();
    let ready = std::sync::Barrier::new(tids.len() + 1);
    // The threads' stop: a signal's (forwarded below), or a call the storage failed.
    let (halt, failed) = (AtomicBool::new(false), std::sync::OnceLock::new());
    let shared = issue::Shared {
        events: &r.events,
        deps: &deps,
        anchors: &anchors,
        done: &done,
        timing: &timing,
        layout: &layout,
        mode: opts.mode,
        speed: opts.speed,
        start: &start,
        ready: &ready,
        opened: &std::sync::Mutex::new(Default::default()),
        stop: &halt,
        failed: &failed,
        aio: &aio,
        board: &board,
        polls: &polls,
        gaps: gaps.as_ref(),
        faults: faults.as_ref(),
        capture: think::Capture::of(r, opts.mode),
    };
    let results = run_threads(&shared, (&tids, &mine), &stop, &halt);
    let replayed_span = replayed_span(r, &done, opts);
    let not_removed = layout.remove();
    let timeline = timeline(r, &done, &timing);
    let polled = polls.figures(&results);
    let cpu_wait = cpu_wait(r, &results);
    let think = results
        .iter()
        .fold(ThinkFigures::default(), |a, t| ThinkFigures {
            computed_ns: a.computed_ns + t.think.computed_ns,
            left_out_ns: a.left_out_ns + t.think.left_out_ns,
        });
    let results_taken = results.iter().map(|t| t.capture_taken_ns).sum();
    let accounts: Vec<&faults::Acc> = results.iter().map(|t| &t.faults).collect();
    let faulted = faults.as_ref().map(|f| f.figures(&accounts));
    let mut report = report(
        r,
        trace_name,
        opts,
        &layout,
        results,
        &tids,
        (replayed_span, &timeline),
        (
            stop.load(std::sync::atomic::Ordering::Relaxed),
            halt.load(std::sync::atomic::Ordering::Relaxed),
        ),
    );
    report.polls = polled;
    report.cpu_wait = cpu_wait;
    report.think = gaps.is_some().then_some(think);
    report.capture_taken = shared.capture.map(|c| CaptureTaken {
        between_calls_ns: c.between_ns,
        per_skipped_call_ns: c.per_call_ns,
        taken_ns: results_taken,
    });
    report.faults = faulted;
    report.async_one_by_one = aio.unavailable();
    report.uring_as_aio = aio.rings_as_aio();
    report.not_removed = not_removed.map(|e| e.to_string());
    report.storage_failed = failed
        .get()
        .map(|&(i, result)| failure(r, &layout, i, result));
    Ok((report, timeline))
}

/// Runs one replay thread per recorded thread, sets the start once all are ready, and
/// forwards a signal's stop (`stop`) to them (`halt`, which a call the storage failed sets
/// too); what each measured.
fn run_threads(
    shared: &issue::Shared<'_>,
    (tids, mine): (&[u32], &std::collections::HashMap<u32, Vec<usize>>),
    stop: &AtomicBool,
    halt: &AtomicBool,
) -> Vec<ThreadResult> {
    let (ended, ends) = std::sync::mpsc::channel::<()>();
    std::thread::scope(|sc| {
        let handles: Vec<_> = tids
            .iter()
            .map(|t| {
                let (list, ended) = (&mine[t], ended.clone());
                sc.spawn(move || {
                    let r = issue::run_thread(shared, list);
                    let _ = ended.send(());
                    r
                })
            })
            .collect();
        shared.ready.wait();
        let _ = shared.start.set(Instant::now());
        shared.ready.wait();
        // Woken as each thread ends, and as often as a parked thread looks again on its own
        // (`board`) to pass a stop on; a thread that panicked sends nothing, and is seen ended.
        let mut left = handles.len();
        while left > 0 && !handles.iter().all(|h| h.is_finished()) {
            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                halt.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            if ends.recv_timeout(Duration::from_millis(50)).is_ok() {
                left -= 1;
            }
        }
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    })
}

/// The call the storage failed, as the report names it.
fn failure(r: &Recording, layout: &Layout, i: usize, result: i64) -> StorageFailure {
    let e = &r.events[i];
    let file = r.footer.files.get(e.file as usize);
    StorageFailure {
        op: e.op.word().to_string(),
        file: file.map(|f| f.path.clone()),
        here: file.map(|_| {
            layout
                .path
                .join(layout.name(e.file as usize))
                .display()
                .to_string()
        }),
        offset: e.offset,
        len: e.len,
        error: crate::platform::os_error(-result as i32).to_string(),
        recorded_result: e.result,
        at_ns: e.t,
    }
}

/// The replay's span: from its first replayed call's due time (its recorded issue time,
/// scaled; the start in afap mode) to its last completion, ns.
fn replayed_span(r: &Recording, done: &[AtomicU64], opts: &Options) -> u64 {
    let last = done
        .iter()
        .map(|d| d.load(std::sync::atomic::Ordering::Acquire))
        .max()
        .unwrap_or(1)
        .saturating_sub(1);
    let first = r
        .events
        .iter()
        .filter(|e| issue::replayed(e))
        .map(|e| e.t)
        .min();
    last.saturating_sub(first.map_or(0, |t| match opts.mode {
        Mode::Afap => 0,
        _ => (t as f64 / opts.speed) as u64,
    }))
}

/// The replay threads' waits for a CPU and the recorded threads' (None: a thread's is not
/// known here).
fn cpu_wait(r: &Recording, results: &[ThreadResult]) -> Option<CpuWait> {
    let replayed = results
        .iter()
        .try_fold(0u64, |sum, t| Some(sum.saturating_add(t.cpu_wait_ns?)))?;
    let recorded = r.footer.knows_sleeps().then(|| {
        r.footer
            .threads
            .iter()
            .filter_map(|t| t.off_cpu)
            .fold(0u64, |sum, o| sum.saturating_add(o.think_preempted_ns))
    });
    Some(CpuWait {
        replayed_ns: replayed,
        recorded_ns: recorded,
    })
}

/// Closed mode, where the trace holds them: each event's time off the CPU before it (asleep,
/// waiting for a CPU), by event.
fn gaps(r: &Recording, mode: Mode) -> Option<crate::trace::ids::IdMap<usize, (u64, u64)>> {
    let gaps = r.footer.gaps.as_ref().filter(|_| mode == Mode::Closed)?;
    Some(
        gaps.iter()
            .filter(|g| (g.event as usize) < r.events.len())
            .map(|g| (g.event as usize, (g.asleep_ns, g.preempted_ns)))
            .collect(),
    )
}

/// The trace's files laid out for the replay (what was made is removed on a failure).
fn lay_out(
    r: &Recording,
    opts: &Options,
    stop: &AtomicBool,
) -> Result<layout::Layout, ReplayError> {
    layout::make(&opts.directory, &opts.name, r, stop).map_err(|e| {
        if e.kind() == std::io::ErrorKind::Interrupted
            && stop.load(std::sync::atomic::Ordering::Relaxed)
        {
            return ReplayError::Stopped;
        }
        ReplayError::Failed(format!(
            "cannot lay out the trace's files in {}: {e}",
            opts.directory.join(&opts.name).display()
        ))
    })
}

/// The threads in the order of their first call, and each one's calls.
fn by_thread(r: &Recording) -> (Vec<u32>, std::collections::HashMap<u32, Vec<usize>>) {
    let mut tids: Vec<u32> = Vec::new();
    let mut mine: std::collections::HashMap<u32, Vec<usize>> = Default::default();
    for (i, e) in r.events.iter().enumerate() {
        mine.entry(e.tid).or_insert_with(|| {
            tids.push(e.tid);
            Vec::new()
        });
        mine.get_mut(&e.tid).expect("inserted").push(i);
    }
    (tids, mine)
}

/// What the replay measured of each call, read once its threads have ended.
fn timeline(r: &Recording, done: &[AtomicU64], timing: &[issue::Timing]) -> Timeline {
    let load = |a: &AtomicU64| a.load(std::sync::atomic::Ordering::Acquire);
    Timeline {
        done_ns: r
            .events
            .iter()
            .zip(done)
            .zip(timing)
            .map(|((e, d), t)| {
                Some(load(d))
                    .filter(|&d| d > 0 && issue::replayed(e))
                    .filter(|_| !t.skipped.load(std::sync::atomic::Ordering::Acquire))
                    .map(|d| d - 1)
            })
            .collect(),
        took_ns: timing.iter().map(|t| load(&t.took_ns)).collect(),
        chain_late_ns: timing.iter().map(|t| load(&t.chain_late_ns)).collect(),
        chain_capture_ns: timing.iter().map(|t| load(&t.chain_capture_ns)).collect(),
        chain_calls: timing.iter().map(|t| load(&t.chain_calls)).collect(),
        slept: timing
            .iter()
            .map(|t| t.slept.load(std::sync::atomic::Ordering::Acquire))
            .collect(),
        after: timing
            .iter()
            .map(|t| (load(&t.after) as usize).checked_sub(1))
            .collect(),
    }
}

/// The most memory the replay threads' buffers may take together (each thread holds one as
/// large as its largest read or write).
const BUFFERS_MAX: u64 = 4 << 30;

/// Refuses a trace whose threads' buffers would not fit in BUFFERS_MAX.
fn check_buffers(r: &Recording) -> Result<(), ReplayError> {
    let mut largest: std::collections::HashMap<u32, u64> = Default::default();
    for e in r
        .events
        .iter()
        .filter(|e| matches!(e.op, Op::Read | Op::Write))
    {
        let l = largest.entry(e.tid).or_default();
        *l = (*l).max(e.len);
    }
    let total = largest.values().fold(0u64, |a, l| a.saturating_add(*l));
    if total > BUFFERS_MAX {
        return Err(ReplayError::Usage(format!(
            "the trace's {} threads would need {} of I/O buffers (each its largest call); \
             iogauge replays up to {}",
            largest.len(),
            crate::units::human_bytes(total),
            crate::units::human_bytes(BUFFERS_MAX)
        )));
    }
    Ok(())
}

/// Refuses a layout the directory has no room for.
fn check_space(r: &Recording, dir: &std::path::Path) -> Result<(), ReplayError> {
    if !dir.is_dir() {
        return Err(ReplayError::Usage(format!(
            "--directory={}: no such directory",
            dir.display()
        )));
    }
    let need = layout::bytes_needed(r);
    let free = crate::host::space(dir)
        .map_err(|e| ReplayError::Failed(format!("{}: {e}", dir.display())))?
        .avail_bytes;
    // The program's writes grow files too: the files it created up to how far it wrote, and
    // the others past their size.
    let grown: u64 = r
        .footer
        .files
        .iter()
        .map(|f| f.extent.saturating_sub(f.size_at_open.unwrap_or(0)))
        .fold(0, u64::saturating_add);
    let total = need.saturating_add(grown);
    if total > free {
        return Err(ReplayError::Usage(format!(
            "--directory={}: the replay needs about {} ({} laid out before it starts) and {} is free",
            dir.display(),
            crate::units::human_bytes(total),
            crate::units::human_bytes(need),
            crate::units::human_bytes(free)
        )));
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn report(
    r: &Recording,
    trace_name: &str,
    opts: &Options,
    layout: &layout::Layout,
    results: Vec<ThreadResult>,
    tids: &[u32],
    (replayed_span_ns, timeline): (u64, &Timeline),
    (stopped, cut_short): (bool, bool),
) -> ReplayReport {
    let mut ops = vec![OpAcc::default(); OPS];
    let mut err = Histogram::default();
    let mut err_max = 0;
    let mut threads = Vec::new();
    let (mut skipped, mut differ, mut io) = (0, 0, 0);
    for (t, res) in tids.iter().zip(&results) {
        for (a, b) in ops.iter_mut().zip(&res.ops) {
            a.calls += b.calls;
            a.bytes += b.bytes;
            a.errors += b.errors;
            a.lat += &b.lat;
            a.lat_sum += b.lat_sum;
            a.lat_max = a.lat_max.max(b.lat_max);
            a.recorded_sum += b.recorded_sum;
        }
        err += &res.issue_error;
        err_max = err_max.max(res.issue_error_max);
        skipped += res.skipped;
        differ += res.differ;
        io += res.busy_ns;
        threads.push(ThreadFigures {
            tid: *t,
            calls: res.calls,
            busy_ns: res.busy_ns,
            recorded_busy_ns: res.recorded_busy_ns,
            issue_error_p50_ns: res.issue_error.percentile(50.0).unwrap_or(0),
            issue_error_p99_ns: res.issue_error.percentile(99.0).unwrap_or(0),
        });
    }
    let span_s = replayed_span_ns.max(1) as f64 / 1e9;
    // A replay cut short (a stop, a call the storage failed) is set against the recorded
    // calls it made, not the whole recording.
    let replayed: Vec<&Event> = r
        .events
        .iter()
        .zip(&timeline.done_ns)
        .filter(|(e, done)| issue::replayed(e) && (!cut_short || done.is_some()))
        .map(|(e, _)| e)
        .collect();
    let recorded_span_ns = match (replayed.first(), replayed.iter().map(|e| e.done_ns()).max()) {
        (Some(f), Some(l)) => l - f.t,
        _ => 0,
    };
    ReplayReport {
        trace: trace_name.to_string(),
        command: r.header.command.clone(),
        mode: opts.mode,
        speed: opts.speed,
        directory: layout.path.display().to_string(),
        laid_out_bytes: layout.laid_out,
        recorded_span_ns,
        recorded_span_untraced_ns: r.footer.overhead.as_ref().map(|o| {
            let share = recorded_span_ns as f64 / r.footer.duration_ns.max(1) as f64;
            recorded_span_ns.saturating_sub((o.added_ns as f64 * share.min(1.0)) as u64)
        }),
        replayed_span_ns,
        recorded_io_ns: replayed.iter().fold(0u64, |a, e| a.saturating_add(e.dur)),
        replayed_io_ns: io,
        issue_error_p50_ns: err.percentile(50.0).unwrap_or(0),
        issue_error_p99_ns: err.percentile(99.0).unwrap_or(0),
        issue_error_max_ns: err_max,
        ops: op_figures(&ops, span_s),
        threads,
        skipped,
        results_differ: differ,
        recorded_calls_slept: recorded_sleeps(r, &replayed),
        replayed_calls_slept: timeline.slept.iter().filter(|&&s| s).count() as u64,
        stopped,
        polls: Default::default(),
        think: None,
        capture_taken: None,
        async_one_by_one: None,
        uring_as_aio: None,
        incomplete: r.footer.missing(),
        cpu_wait: None,
        faults: None,
        storage_failed: None,
        not_removed: None,
    }
}

/// Each call type's figures, of those replayed (`span_s`: the replay's span, s).
fn op_figures(ops: &[OpAcc], span_s: f64) -> Vec<OpFigures> {
    ops.iter()
        .enumerate()
        .filter(|(_, a)| a.calls > 0)
        .map(|(i, a)| OpFigures {
            op: Op::from_u8(i as u8).map_or("?", Op::word).to_string(),
            calls: a.calls,
            bytes: a.bytes,
            errors: a.errors,
            mib_per_s: a.bytes as f64 / (1 << 20) as f64 / span_s,
            lat_mean_ns: a.lat_sum as f64 / a.calls as f64,
            lat_p50_ns: a.lat.percentile(50.0).unwrap_or(0).min(a.lat_max),
            lat_p99_ns: a.lat.percentile(99.0).unwrap_or(0).min(a.lat_max),
            lat_max_ns: a.lat_max,
            recorded_lat_mean_ns: a.recorded_sum as f64 / a.calls as f64,
        })
        .collect()
}

/// How many of the replayed calls slept when recorded (None: the trace does not say).
fn recorded_sleeps(r: &Recording, replayed: &[&Event]) -> Option<u64> {
    r.footer.knows_sleeps().then(|| {
        replayed
            .iter()
            .filter(|e| e.flags & crate::trace::recording::flag::SLEPT != 0)
            .count() as u64
    })
}
