//! Runs a checked [`Plan`]: groups one after another; in each, the group's files are prepared
//! (an interrupt stops the lay-out too), every job's files opened, then one thread per job is
//! released by a start barrier. The
//! calling thread watches: it forwards an interrupt to the jobs' stop flag, and reports
//! progress through events. The runner never prints; the CLI decides what to show.

pub mod fault;
mod hooks;
pub mod limits;
pub mod replay;
pub mod worker;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use crate::engine;
use crate::files::targets::{OpenedFile, TargetError, Targets};
use crate::plan::{ClockSource, JobSpec, OnFailure, Plan};
use crate::stats::diskstats::{self, DiskCounters};
use crate::stats::steady::SteadyGroup;
use crate::stats::{Clock, JobStats};
pub use worker::{JobError, JobProgress, JobResult};

/// How often the watcher wakes: bounds how late an interrupt reaches the jobs.
const WATCH: Duration = Duration::from_millis(50);
/// How often progress events are sent.
const PROGRESS_EVERY: Duration = Duration::from_millis(500);

/// Progress of the running group.
#[derive(Debug, Clone)]
pub struct Progress {
    pub group: usize,
    pub groups: usize,
    pub elapsed: Duration,
    pub bytes: u64,
    pub ios: u64,
    /// Share done (0..=1), from bytes or time, whichever is further along.
    pub done: f64,
    pub eta: Option<Duration>,
}

/// What the runner tells its caller.
#[derive(Debug, Clone)]
pub enum Event {
    /// A group is about to lay out its files (may take a while).
    Preparing {
        group: usize,
    },
    /// A group's files are laid out, not yet opened. (A scale-out run whose jobs read other
    /// ranks' files meets the other ranks here, so that every file is there before any is
    /// opened.)
    LaidOut {
        group: usize,
    },
    /// A group's files are laid out and opened: its jobs start next. (A scale-out run meets
    /// the other ranks here.)
    Ready {
        group: usize,
        /// False: this group could not be prepared here (the run ends after this event).
        ok: bool,
    },
    Progress(Progress),
    /// While a group runs, a few times a second: whether its jobs are being stopped (a job
    /// failed, or the run was interrupted). A scale-out run tells the other ranks, and learns
    /// from them, here.
    Tick {
        group: usize,
        stopping: bool,
        /// The last tick of the group: every job has ended.
        ended: bool,
    },
    GroupDone {
        group: usize,
    },
}

/// One job's outcome.
#[derive(Debug)]
pub struct JobOutcome {
    pub spec: JobSpec,
    pub files: Vec<OpenedFile>,
    pub stats: JobStats,
    pub error: Option<JobError>,
    /// The per-I/O log's I/Os (log_avg_msec=0 with a log asked for), and how many past its
    /// cap were not kept.
    pub io_log: (Vec<crate::stats::IoSample>, u64),
    /// fio's I/O log (`write_iolog`): its lines, and how many past its cap were not kept.
    pub iolog: (Vec<crate::trace::iolog::Op>, u64),
}

/// What the block devices under a group's files did while it ran.
#[derive(Debug, Clone, Default)]
pub struct GroupDisks {
    /// (kernel name, "major:minor", counters during the group).
    pub devices: Vec<(String, String, DiskCounters)>,
    /// Files with no block device below them (tmpfs, network file systems).
    pub without_device: Vec<PathBuf>,
    /// Wall time between the two snapshots.
    pub wall: Duration,
}

/// Everything that ran.
#[derive(Debug, Default)]
pub struct RunOutcome {
    pub groups: Vec<Vec<JobOutcome>>,
    /// Per group, in step with `groups`.
    pub disks: Vec<GroupDisks>,
    pub interrupted: bool,
    /// The latency clock used (see `stats::clock`).
    pub clock: String,
    /// A failure while preparing or opening files, which ended the run.
    pub setup_error: Option<TargetError>,
    /// Files a job's `unlink` could not remove.
    pub unlink_errors: Vec<String>,
    /// Other things the report says (a failed `exec_postrun`).
    pub notes: Vec<String>,
    /// This run's identity, written into every verify header (random per run).
    pub run_id: u64,
}

impl RunOutcome {
    pub fn failed(&self) -> bool {
        self.setup_error.is_some() || self.groups.iter().flatten().any(|j| j.error.is_some())
    }
}

/// Threads for each verify phase of the group that does not set `verify_async`: one per CPU
/// shared among the jobs that have a verify phase (at least one each).
fn verify_threads(jobs: &[JobSpec]) -> usize {
    let verifying = jobs
        .iter()
        .filter(|j| j.verify.is_some_and(|v| v.after_write))
        .count()
        .max(1);
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    (cpus / verifying).max(1)
}

/// Files two or more verifying jobs of a group write: one generation map each, shared by those
/// jobs (each with its place among them), and the barrier they meet at before verifying. Per
/// job, per file of its list. The check refused files a verifying and a plain job both write.
fn shared_verify_maps(
    jobs: &[JobSpec],
    opened: &[Opened],
) -> (Vec<Vec<worker::SharedFile>>, Option<Barrier>) {
    use std::collections::BTreeMap;
    let mut writers: BTreeMap<&std::path::Path, Vec<usize>> = BTreeMap::new();
    for (i, (job, (_, files))) in jobs.iter().zip(opened).enumerate() {
        if job.verify.is_some() && job.rw.writes() {
            for f in files {
                let w = writers.entry(f.path.as_path()).or_default();
                if !w.contains(&i) {
                    w.push(i);
                }
            }
        }
    }
    // Writers whose regions overlap (directly or through another) share a map; one whose
    // region is apart from every other writer's keeps its own.
    let end = |i: usize| jobs[i].offset + jobs[i].per_file_bytes();
    let clusters: BTreeMap<&std::path::Path, Vec<Vec<usize>>> = writers
        .into_iter()
        .map(|(p, mut w)| {
            w.sort_by_key(|&i| jobs[i].offset);
            let mut out: Vec<(u64, Vec<usize>)> = Vec::new();
            for i in w {
                match out.last_mut() {
                    Some((reach, c)) if jobs[i].offset < *reach => {
                        *reach = (*reach).max(end(i));
                        c.push(i);
                    }
                    _ => out.push((end(i), vec![i])),
                }
            }
            let shared = out.into_iter().map(|(_, c)| c).filter(|c| c.len() > 1);
            (p, shared.collect())
        })
        .collect();
    let maps: BTreeMap<(&std::path::Path, usize), std::sync::Arc<crate::verify::SharedMap>> =
        clusters
            .iter()
            .flat_map(|(p, cs)| cs.iter().enumerate().map(move |(k, c)| ((*p, k), c)))
            .map(|(key, w)| {
                // Whole blocks from the first region's start (the check put every writer's
                // region on the same block grid) to the furthest region's end.
                let interval = jobs[w[0]].verify.map_or(1, |v| v.interval);
                let base = w.iter().map(|&i| jobs[i].offset).min().unwrap_or(0);
                let last = w.iter().map(|&i| end(i)).max().unwrap_or(base);
                let blocks = ((last - base) / interval) as usize;
                let map = crate::verify::SharedMap::new(base, blocks);
                (key, std::sync::Arc::new(map))
            })
            .collect();
    let mut sharing = 0;
    let per_job = jobs
        .iter()
        .zip(opened)
        .enumerate()
        .map(|(i, (_, (_, files)))| {
            let mine: Vec<worker::SharedFile> = files
                .iter()
                .map(|f| {
                    let cs = clusters.get(f.path.as_path())?;
                    let (c, w) = cs.iter().enumerate().find(|(_, w)| w.contains(&i))?;
                    let k = w.iter().position(|&x| x == i)?;
                    Some((maps[&(f.path.as_path(), c)].clone(), k, w.len()))
                })
                .collect();
            if mine.iter().any(Option::is_some) {
                sharing += 1;
            }
            mine
        })
        .collect();
    let barrier = (sharing > 0).then(|| Barrier::new(sharing));
    (per_job, barrier)
}

/// A run's identity: the time and process mixed, so two runs (on two hosts, or one after
/// the other) do not share it.
fn new_run_id() -> u64 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let x = t ^ (u64::from(std::process::id()) << 40) ^ 0x5EED_1D0F_1064_A4E5;
    // A finaliser (splitmix64's), so close inputs give unrelated ids.
    let x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    let x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Set by [`stop_group`]; cleared as each group starts.
static STOP_GROUP: AtomicBool = AtomicBool::new(false);

/// Stops the group now running (its jobs end within one I/O, as at the end of their time),
/// without stopping the run: the next group starts as planned. A scale-out run's
/// stonewalling: every rank stops a group when the first rank finishes it.
pub fn stop_group() {
    STOP_GROUP.store(true, Ordering::Relaxed);
}

/// Runs every group of `plan` on `targets` (already checked). `interrupt` is set from outside
/// (Ctrl-C); jobs stop within one I/O of it.
pub fn run(
    plan: &Plan,
    targets: &mut Targets,
    interrupt: &AtomicBool,
    on_event: &mut dyn FnMut(&Event),
) -> RunOutcome {
    let (clock, clock_note) = match plan.clock_source() {
        ClockSource::Auto => (Clock::new(), None),
        ClockSource::Cpu => Clock::tsc_asked(),
        ClockSource::Monotonic => (Clock::monotonic(), None),
    };
    let mut outcome = RunOutcome {
        clock: clock.describe(),
        run_id: new_run_id(),
        notes: clock_note.into_iter().collect(),
        ..RunOutcome::default()
    };
    let ngroups = plan.groups.len();
    let mut handed_on = HandedOn::default();
    for (gi, group) in plan.groups.iter().enumerate() {
        if interrupt.load(Ordering::Relaxed) {
            break;
        }
        let Some((opened, jobs)) = prepare(targets, (gi, group), interrupt, on_event, &mut outcome)
        else {
            break;
        };
        let (ids, without_device) = devices_of(&jobs);
        on_event(&Event::Ready {
            group: gi,
            ok: true,
        });
        if interrupt.load(Ordering::Relaxed) {
            // Stopped while the files were made ready (or, in a scale-out run, another rank
            // was not ready): the group does not start.
            break;
        }
        let before = diskstats::snapshot(&ids);
        let t0 = Instant::now();
        let (results, handed, made) = run_group(
            gi,
            ngroups,
            &jobs,
            {
                let handed = handed_on.for_group(&jobs, &opened);
                (opened, handed)
            },
            (clock, outcome.run_id),
            interrupt,
            on_event,
        );
        handed_on.after_group(&results, handed);
        // Files a job's engine created as its measured operation (filecreate): the run's now,
        // removed at the end (or by `unlink`) as the files it laid out are.
        for (job, made) in group.jobs.iter().zip(made) {
            outcome
                .unlink_errors
                .extend(targets.adopt(&job.paths(), made));
        }
        let wall = t0.elapsed();
        let after = diskstats::snapshot(&ids);
        let devices = disk_deltas(&before, &after);
        outcome.disks.push(GroupDisks {
            devices,
            without_device,
            wall,
        });
        for job in group.jobs.iter().filter(|j| j.unlink) {
            outcome.unlink_errors.extend(targets.unlink(&job.paths()));
        }
        for job in &group.jobs {
            if let Err(e) = hooks::run(job, true) {
                outcome.notes.push(e.to_string());
            }
        }
        // A failed job ends the run, or (fio's way) only its group unless it says otherwise.
        let ends_run = results.iter().zip(&group.jobs).any(|(r, j)| {
            r.error.is_some() && (plan.on_failure == OnFailure::EndRun || j.exitall_on_error)
        }) || group
            .jobs
            .iter()
            .any(|j| j.exitall && j.exit_what == crate::plan::ExitWhat::All);
        outcome.groups.push(results);
        on_event(&Event::GroupDone { group: gi });
        if ends_run {
            break;
        }
    }
    let (described, drifted) = clock.describe_checked();
    outcome.clock = described;
    outcome.notes.extend(drifted);
    finish(outcome, interrupt)
}

/// Lays out a group's files and opens its jobs' files: `None` (the run ends) when it was
/// interrupted, or (scale-out) another rank could not lay out its files, or a file could not
/// be made or opened (`outcome.setup_error` says why). Returns the jobs as they run: a job
/// sized by what a fill_device job left is sized now.
fn prepare<'g>(
    targets: &mut Targets,
    (gi, group): (usize, &'g crate::plan::Group),
    interrupt: &AtomicBool,
    on_event: &mut dyn FnMut(&Event),
    outcome: &mut RunOutcome,
) -> Option<(Vec<Opened>, std::borrow::Cow<'g, [JobSpec]>)> {
    on_event(&Event::Preparing { group: gi });
    let not_ready = |on_event: &mut dyn FnMut(&Event)| {
        on_event(&Event::Ready {
            group: gi,
            ok: false,
        })
    };
    let seed = group.jobs.first().map_or(0, |j| j.random.seed);
    match targets.prepare_group(gi, seed, interrupt) {
        Ok(()) => {}
        Err(TargetError::Interrupted) => {
            not_ready(on_event);
            return None;
        }
        Err(e) => {
            not_ready(on_event);
            outcome.setup_error = Some(e);
            return None;
        }
    }
    on_event(&Event::LaidOut { group: gi });
    if interrupt.load(Ordering::Relaxed) {
        // Interrupted, or (scale-out) another rank could not lay out its files.
        return None;
    }
    let jobs = match targets.sized_after_fill(&group.jobs) {
        Ok(jobs) => jobs,
        Err(e) => {
            not_ready(on_event);
            outcome.setup_error = Some(e);
            return None;
        }
    };
    let mut opened = Vec::new();
    for job in jobs.iter() {
        let pre_read = |(files, mut names): Opened| {
            hooks::run(job, false).map_err(|e| TargetError::Io(e.to_string()))?;
            if job.cache.pre_read {
                crate::files::targets::pre_read(&files.fds, &mut names, job, interrupt)?;
            }
            Ok((files, names))
        };
        match targets.open_job(job).and_then(pre_read) {
            Ok(o) => opened.push(o),
            Err(TargetError::Interrupted) => {
                not_ready(on_event);
                return None;
            }
            Err(e) => {
                not_ready(on_event);
                outcome.setup_error = Some(e);
                return None;
            }
        }
    }
    Some((opened, jobs))
}

/// The devices a group's files are on, and the files on none the kernel counts for.
fn devices_of(jobs: &[JobSpec]) -> (Vec<diskstats::DiskId>, Vec<std::path::PathBuf>) {
    let mut ids = Vec::new();
    let mut without_device = Vec::new();
    // A set beside the list: thousands of files (nrfiles) must not cost the square of their
    // number here.
    let mut seen = std::collections::HashSet::new();
    // The null engine does no I/O: its files' devices have nothing to say about it.
    let doing_io = jobs.iter().filter(|j| !j.engine.fileless());
    for p in doing_io.flat_map(|j| j.io_paths()) {
        match diskstats::device_of(&p) {
            Some(id) if !ids.contains(&id) => ids.push(id),
            Some(_) => {}
            None if seen.insert(p.clone()) => without_device.push(p),
            None => {}
        }
    }
    (ids, without_device)
}

/// What each device did between two snapshots: its name, major:minor, and the counters'
/// difference.
fn disk_deltas(
    before: &[(diskstats::DiskId, String, DiskCounters)],
    after: &[(diskstats::DiskId, String, DiskCounters)],
) -> Vec<(String, String, DiskCounters)> {
    after
        .iter()
        .filter_map(|(id, name, c)| {
            let (_, _, b) = before.iter().find(|(i, _, _)| i == id)?;
            Some((name.clone(), id.label(), c.since(b)))
        })
        .collect()
}

fn finish(mut outcome: RunOutcome, interrupt: &AtomicBool) -> RunOutcome {
    outcome.interrupted = interrupt.load(Ordering::Relaxed);
    outcome
}

fn run_group(
    gi: usize,
    ngroups: usize,
    jobs: &[JobSpec],
    (opened, handed): (Vec<Opened>, Vec<Vec<HandedFile>>),
    (clock, run_id): (Clock, u64),
    interrupt: &AtomicBool,
    on_event: &mut dyn FnMut(&Event),
) -> (Vec<JobOutcome>, Vec<Vec<crate::verify::Handed>>, Vec<Made>) {
    let barrier = Barrier::new(jobs.len());
    let stop = AtomicBool::new(false);
    STOP_GROUP.store(false, Ordering::Relaxed);
    let finished: Vec<AtomicBool> = jobs.iter().map(|_| AtomicBool::new(false)).collect();
    let (segments, exits) = exit_flags(jobs);
    let progress: Vec<JobProgress> = jobs.iter().map(|_| JobProgress::default()).collect();
    let planned: Option<u64> = jobs.iter().map(worker::planned_bytes).sum::<Option<u64>>();
    let planned_time = jobs
        .iter()
        .filter_map(|j| j.timing.runtime.map(|r| r + j.timing.ramp))
        .max();

    let (shared, verify_barrier) = shared_verify_maps(jobs, &opened);
    let verify_threads = verify_threads(jobs);
    let steady = steady_groups(jobs);
    // fio's flows: one per flow_id among the group's jobs that have a weight.
    let mut flows: std::collections::BTreeMap<u32, worker::Flow> = Default::default();
    for j in jobs {
        if let Some(f) = j.pacing.flow {
            flows.entry(f.id).or_default();
        }
    }
    let loggers = jobs
        .iter()
        .filter(|j| (j.logs.any() && j.logs.per_io) || j.logs.iolog.is_some())
        .count();
    let io_log_cap = limits::io_log_cap(loggers);
    let mut file_lists = Vec::new();
    let mut results: Vec<JobResult> = std::thread::scope(|s| {
        let mut handles = Vec::new();
        for (index, ((job, (fds, files)), prog)) in
            jobs.iter().zip(opened).zip(&progress).enumerate()
        {
            let wait_on = waits_on(jobs, index);
            let w = worker::Worker {
                job,
                paths: files.iter().map(|f| f.path.clone()).collect(),
                barrier: &barrier,
                stop: &stop,
                progress: prog,
                clock,
                finished: &finished,
                index,
                wait_on,
                peers: peers_of(jobs, index),
                exits: &exits,
                segment: segments[index],
                run_id,
                job_id: ((gi as u32) << 16) | index as u32,
                shared: shared[index].clone(),
                handed: handed[index].clone(),
                verify_barrier: verify_barrier
                    .as_ref()
                    .filter(|_| shared[index].iter().any(Option::is_some)),
                verify_threads,
                steady: steady[index].as_deref(),
                flow: job.pacing.flow.and_then(|f| flows.get(&f.id)),
                io_log_cap,
            };
            file_lists.push(files);
            let name = format!("iogauge-{}.{}", job.name, job.clone);
            let h = std::thread::Builder::new()
                .name(name)
                .spawn_scoped(s, move || engine::with_engine(&job.engine_config(), fds, w))
                .expect("spawning a job thread");
            handles.push(h);
        }
        let watch = Watch {
            gi,
            ngroups,
            stop: &stop,
            interrupt,
            progress: &progress,
            planned: (planned, planned_time),
        };
        watch.until_done(|| handles.iter().all(|h| h.is_finished()), on_event);
        handles
            .into_iter()
            .map(|h| h.join().expect("job thread panicked"))
            .collect()
    });
    let made = results
        .iter_mut()
        .map(|r| std::mem::take(&mut r.made))
        .collect();
    let (outcomes, handed) = outcomes(jobs, results, file_lists, &steady);
    (outcomes, handed, made)
}

/// A net job's possible peers: the group's other net jobs (none for any other job).
fn peers_of(jobs: &[JobSpec], index: usize) -> Vec<usize> {
    if !jobs[index].engine.network() {
        return Vec::new();
    }
    (0..jobs.len())
        .filter(|&i| i != index && jobs[i].engine.network())
        .collect()
}

/// Each job's reporting group (fio's: a job with new_group starts one, its clones stay in
/// it), and a flag per group that a job with `exitall` sets (see `Worker::exits`).
fn exit_flags(jobs: &[JobSpec]) -> (Vec<usize>, Vec<AtomicBool>) {
    let segments: Vec<usize> = jobs
        .iter()
        .scan(0, |seg, j| {
            *seg += usize::from(j.new_group && j.clone == 0);
            Some(*seg)
        })
        .collect();
    let exits = (0..=segments.last().copied().unwrap_or(0))
        .map(|_| AtomicBool::new(false))
        .collect();
    (segments, exits)
}

/// fio's steady state per job: a group_reporting group is judged as one, any other job alone.
fn steady_groups(jobs: &[JobSpec]) -> Vec<Option<Arc<SteadyGroup>>> {
    let pooled = jobs.iter().any(|j| j.group_reporting);
    let shared = jobs
        .first()
        .and_then(|j| j.steady)
        .filter(|_| pooled)
        .map(|s| Arc::new(SteadyGroup::new(s, jobs.len())));
    jobs.iter()
        .map(|j| match (&shared, j.steady) {
            (Some(g), _) => Some(g.clone()),
            (None, Some(s)) => Some(Arc::new(SteadyGroup::new(s, 1))),
            (None, None) => None,
        })
        .collect()
}

/// wait_for: the earlier jobs of the group job `index` waits for.
fn waits_on(jobs: &[JobSpec], index: usize) -> Vec<usize> {
    match &jobs[index].pacing.wait_for {
        Some(name) => jobs[..index]
            .iter()
            .enumerate()
            .filter(|(_, j)| j.name == *name)
            .map(|(i, _)| i)
            .collect(),
        None => Vec::new(),
    }
}

/// The watch over a running group: ticks, Ctrl-C, a scale-out group's end, and progress.
struct Watch<'a> {
    gi: usize,
    ngroups: usize,
    stop: &'a AtomicBool,
    interrupt: &'a AtomicBool,
    progress: &'a [JobProgress],
    /// The group's planned bytes and time, for its share done.
    planned: (Option<u64>, Option<Duration>),
}

impl Watch<'_> {
    /// Watches until `done`: a tick every [`WATCH`], the stop passed on (Ctrl-C, or
    /// [`stop_group`]), progress every [`PROGRESS_EVERY`]; a last tick as the group ends.
    fn until_done(&self, done: impl Fn() -> bool, on_event: &mut dyn FnMut(&Event)) {
        let (gi, stop) = (self.gi, self.stop);
        let start = Instant::now();
        let mut next_progress = start + PROGRESS_EVERY;
        // Stopped for the group's end (stop_group), not for a failure or an interrupt.
        let mut cut = false;
        while !done() {
            std::thread::sleep(WATCH);
            on_event(&Event::Tick {
                group: gi,
                stopping: stop.load(Ordering::Relaxed) && !cut,
                ended: false,
            });
            if self.interrupt.load(Ordering::Relaxed) {
                stop.store(true, Ordering::Relaxed);
                cut = false;
            } else if STOP_GROUP.swap(false, Ordering::Relaxed) && !stop.load(Ordering::Relaxed) {
                stop.store(true, Ordering::Relaxed);
                cut = true;
            }
            let now = Instant::now();
            if now >= next_progress {
                next_progress = now + PROGRESS_EVERY;
                on_event(&Event::Progress(self.progress_at(now - start)));
            }
        }
        // Once more as the group ends: jobs that failed before the first tick (a file system
        // full at once) still say so.
        on_event(&Event::Tick {
            group: gi,
            stopping: stop.load(Ordering::Relaxed) && !cut,
            ended: true,
        });
    }

    /// The group's progress `elapsed` into it: bytes and I/Os so far, the share done (of its
    /// planned bytes or time, whichever is further), and the time left at this pace.
    fn progress_at(&self, elapsed: Duration) -> Progress {
        let bytes = self
            .progress
            .iter()
            .map(|p| p.bytes.load(Ordering::Relaxed))
            .sum();
        let ios = self
            .progress
            .iter()
            .map(|p| p.ios.load(Ordering::Relaxed))
            .sum();
        let (planned, planned_time) = self.planned;
        let by_bytes = planned.map(|p| bytes as f64 / p.max(1) as f64);
        let by_time = planned_time.map(|t| elapsed.as_secs_f64() / t.as_secs_f64());
        let done = by_bytes.unwrap_or(0.0).max(by_time.unwrap_or(0.0)).min(1.0);
        let eta = (done > 0.0).then(|| elapsed.mul_f64((1.0 - done) / done));
        Progress {
            group: self.gi,
            groups: self.ngroups,
            elapsed,
            bytes,
            ios,
            done,
            eta,
        }
    }
}

/// Each job's outcome (its steady state judged), and what its writes hand on.
fn outcomes(
    jobs: &[JobSpec],
    results: Vec<JobResult>,
    file_lists: Vec<Vec<OpenedFile>>,
    steady: &[Option<Arc<SteadyGroup>>],
) -> (Vec<JobOutcome>, Vec<Vec<crate::verify::Handed>>) {
    jobs.iter()
        .zip(results)
        .zip(file_lists)
        .zip(steady)
        .map(|(((spec, r), files), ss)| {
            let mut stats = r.stats;
            stats.steady = ss.as_ref().map(|g| g.report());
            let handed = r.handed;
            let outcome = JobOutcome {
                spec: spec.clone(),
                files,
                stats,
                error: r.error,
                io_log: r.io_log,
                iolog: r.iolog,
            };
            (outcome, handed)
        })
        .unzip()
}

/// The files a job's engine created as its measured operation, by index, held open.
type Made = Vec<(usize, crate::platform::fd::OwnedFd)>;
/// A job's files, opened: the descriptors and what the report says of each.
type Opened = (engine::Files, Vec<OpenedFile>);
/// What a job is handed of one file (see `verify::Handed`).
type HandedFile = Option<std::sync::Arc<crate::verify::Handed>>;

/// What the verifying writers of the groups so far left in each file (see
/// `verify::Handed`), for a later group's jobs that check what they read.
#[derive(Default)]
struct HandedOn(std::collections::BTreeMap<PathBuf, std::sync::Arc<crate::verify::Handed>>);

impl HandedOn {
    /// Per job of a group, per file it opened: what it is handed (only a job that checks as
    /// it reads). The files as opened: a scale-out reader's are another rank's, never handed.
    fn for_group(&self, jobs: &[JobSpec], opened: &[Opened]) -> Vec<Vec<HandedFile>> {
        jobs.iter()
            .zip(opened)
            .map(|(j, (_, files))| {
                let reads_to_check = j.verify.is_some_and(|v| v.inline || v.only);
                files
                    .iter()
                    .map(|f| self.0.get(&f.path).filter(|_| reads_to_check).cloned())
                    .collect()
            })
            .collect()
    }

    /// A group ended: each job that wrote a file either hands on what it left (verified
    /// writes) or makes the file's map unknown (writes without verify, or a failed job); a
    /// file removed (`unlink`) is forgotten.
    fn after_group(&mut self, jobs: &[JobOutcome], handed: Vec<Vec<crate::verify::Handed>>) {
        for (j, handed) in jobs.iter().zip(handed) {
            if !j.spec.rw.modifies() {
                continue;
            }
            for (f, p) in j.files.iter().map(|f| &f.path).enumerate() {
                match handed.get(f).cloned() {
                    Some(h) => {
                        let merged = match self.0.get(p) {
                            Some(before) => before.overwritten_by(&h),
                            None => h,
                        };
                        self.0.insert(p.clone(), std::sync::Arc::new(merged));
                    }
                    None => {
                        self.0.remove(p);
                    }
                }
            }
        }
        for j in jobs.iter().filter(|j| j.spec.unlink) {
            for f in &j.files {
                self.0.remove(&f.path);
            }
        }
    }
}
