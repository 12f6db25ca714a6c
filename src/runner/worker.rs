//! One job thread's measurement loop, generic over the engine so the hot path has no dynamic
//! dispatch: take the next I/O from the workload, time the syscall, record it. Housekeeping
//! (ramp end, deadline, time-series ticks, progress counters) runs only when the clock passes
//! the next event, so the per-I/O cost is two clock reads and a histogram increment.

use std::io;
use std::path::PathBuf;
use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::engine::{AlignedBuf, Engine, EngineUser};
use crate::spec::workload::{Dir, Region, Workload};
use crate::spec::{DataMode, JobSpec, RwMode};
use crate::stats::{Clock, CpuUsage, DirStats, JobStats, Sample};

/// How often progress counters are published.
const PUBLISH_EVERY: Duration = Duration::from_millis(250);
/// Time-series base interval.
const TICK: Duration = Duration::from_secs(1);

/// Counters a job publishes for the progress line; written by the job, read by the runner.
#[derive(Debug, Default)]
#[repr(align(64))]
pub struct JobProgress {
    pub bytes: AtomicU64,
    pub ios: AtomicU64,
}

impl JobProgress {
    fn publish(&self, stats: &JobStats) {
        let [r, w] = &stats.dirs;
        self.bytes.store(r.bytes + w.bytes, Ordering::Relaxed);
        self.ios.store(r.ios + w.ios, Ordering::Relaxed);
    }
}

/// An I/O error that stopped a job.
#[derive(Debug, Clone, serde::Serialize)]
pub struct JobError {
    pub file: Option<PathBuf>,
    pub offset: Option<u64>,
    pub direction: Option<&'static str>,
    pub errno: Option<i32>,
    pub message: String,
}

/// What a job thread hands back.
#[derive(Debug)]
pub struct JobResult {
    pub stats: JobStats,
    pub error: Option<JobError>,
}

/// Everything a worker needs besides its engine.
pub struct Worker<'a> {
    pub job: &'a JobSpec,
    pub paths: Vec<PathBuf>,
    pub barrier: &'a Barrier,
    pub stop: &'a AtomicBool,
    pub progress: &'a JobProgress,
    pub clock: Clock,
}

impl EngineUser<JobResult> for Worker<'_> {
    fn run<E: Engine>(self, engine: E) -> JobResult {
        run_loop(self, engine)
    }
}

/// Total I/Os a size-bounded job performs per its spec, or `None` when time-bounded.
pub fn planned_ios(job: &JobSpec) -> Option<u64> {
    if job.time_based {
        return None;
    }
    let blocks = crate::target::per_file_bytes(job) / job.bs * job.paths().len() as u64;
    let per_pass = if job.rw == RwMode::Update {
        2 * blocks
    } else {
        blocks
    };
    Some(per_pass * u64::from(job.loops))
}

fn workload(job: &JobSpec, seed: u64) -> Workload {
    let nfiles = job.paths().len() as u64;
    let region = Region {
        nfiles,
        blocks_per_file: crate::target::per_file_bytes(job) / job.bs,
        bs: job.bs,
        base: job.offset,
    };
    let passes = (!job.time_based).then_some(u64::from(job.loops));
    Workload::new(job.rw, region, job.read_pct, job.randommap, seed, passes)
}

/// Makes each written block unique (defeating deduplication) without the cost of refilling:
/// the first 8 bytes of every 512-byte sector get a stamp from the write's sequence number.
#[inline]
fn stamp(buf: &mut [u8], seq: u64) {
    let base = seq.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    for (i, sector) in buf.chunks_exact_mut(512).enumerate() {
        sector[..8].copy_from_slice(&(base ^ i as u64).to_le_bytes());
    }
}

/// Moves all of `buf`, resubmitting after short transfers. A read that hits the end of the
/// file is an error: the region was supposed to be there.
#[inline]
fn transfer<E: Engine>(
    e: &mut E,
    dir: Dir,
    file: usize,
    offset: u64,
    buf: &mut [u8],
) -> io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        let n = e.submit(dir, file, offset + done as u64, &mut buf[done..])?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "{} returned 0 bytes (end of file or device)",
                    match dir {
                        Dir::Read => "read",
                        Dir::Write => "write",
                    }
                ),
            ));
        }
        done += n;
    }
    Ok(())
}

fn run_loop<E: Engine>(w: Worker<'_>, mut engine: E) -> JobResult {
    let job = w.job;
    let bs = job.bs as usize;
    let mut buf = AlignedBuf::zeroed(bs);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(job.seed ^ 0xDA7A);
    if job.data != DataMode::Zero {
        rng.fill_bytes(&mut buf);
    }
    let mut wl = workload(job, job.seed);
    let mut stats = JobStats::default();
    let mut error = None;
    let mut written_since_fsync = 0u32;
    // Indexed like the workload's files (the null engine opens none, but still rotates).
    let mut wrote = vec![false; job.paths().len()];
    let mut write_seq = 0u64;

    let clock = w.clock;
    let (publish_every, tick) = (clock.ticks(PUBLISH_EVERY), clock.ticks(TICK));
    w.barrier.wait();
    // All times below are clock ticks.
    let start = clock.now();
    let mut measuring = job.ramp.is_zero();
    let mut measure_start = start;
    let mut cpu_start = CpuUsage::thread();
    let ramp_end = start + clock.ticks(job.ramp);
    let mut deadline = job.runtime.map(|r| ramp_end + clock.ticks(r));
    let mut next_publish = start + publish_every;
    let mut next_tick = start + tick;
    let mut tick_index = 0u64;
    let mut last = [Sample::default(); 2];
    let next_event = |measuring: bool, np: u64, nt: u64, dl: Option<u64>| {
        let mut e = np.min(nt);
        if !measuring {
            e = e.min(ramp_end);
        }
        dl.map_or(e, |d| e.min(d))
    };
    let mut event = next_event(measuring, next_publish, next_tick, deadline);
    // Stopped early by the stop flag (interrupt or another job's failure): skip the final flush.
    let mut stopped = false;

    loop {
        if w.stop.load(Ordering::Relaxed) {
            stopped = true;
            break;
        }
        let io = match wl.next() {
            Some(io) => io,
            // The ramp cycles the region until it is over, however small the region.
            None if !measuring => {
                wl = workload(job, job.seed);
                continue;
            }
            None => break,
        };
        if io.dir == Dir::Write {
            match job.data {
                DataMode::Random => stamp(&mut buf, write_seq),
                DataMode::Refill => rng.fill_bytes(&mut buf),
                DataMode::Zero => {}
            }
            write_seq += 1;
        }
        let t0 = clock.now();
        let res = transfer(&mut engine, io.dir, io.file, io.offset, &mut buf);
        let t1 = clock.now();
        if let Err(e) = res {
            error = Some(JobError {
                file: w.paths.get(io.file).cloned(),
                offset: Some(io.offset),
                direction: Some(if io.dir == Dir::Read { "read" } else { "write" }),
                errno: e.raw_os_error(),
                message: e.to_string(),
            });
            w.stop.store(true, Ordering::Relaxed);
            break;
        }
        if measuring {
            let d = &mut stats.dirs[io.dir as usize];
            d.ios += 1;
            d.bytes += bs as u64;
            d.lat.record(clock.ns(t1.saturating_sub(t0)));
        }
        if io.dir == Dir::Write {
            wrote[io.file] = true;
            if job.fsync_every > 0 {
                written_since_fsync += 1;
                if written_since_fsync == job.fsync_every {
                    written_since_fsync = 0;
                    if let Err(e) = timed_fsync(&mut engine, io.file, &mut stats, measuring, &clock)
                    {
                        error = Some(fsync_error(&w, io.file, e));
                        w.stop.store(true, Ordering::Relaxed);
                        break;
                    }
                }
            }
        }
        if t1 < event {
            continue;
        }
        // Housekeeping, at most a few times a second.
        if !measuring && t1 >= ramp_end {
            measuring = true;
            measure_start = t1;
            cpu_start = CpuUsage::thread();
            deadline = job.runtime.map(|r| t1 + clock.ticks(r));
            next_tick = t1 + tick;
            // The measured part covers the full size, whatever the ramp did.
            wl = workload(job, job.seed.wrapping_add(1));
        }
        if measuring {
            while t1 >= next_tick {
                for (d, l) in stats.dirs.iter_mut().zip(last.iter_mut()) {
                    close_interval(d, l, tick_index);
                }
                tick_index += 1;
                next_tick += tick;
            }
        }
        if t1 >= next_publish {
            w.progress.publish(&stats);
            next_publish = t1 + publish_every;
        }
        if deadline.is_some_and(|d| t1 >= d) {
            break;
        }
        event = next_event(measuring, next_publish, next_tick, deadline);
    }

    // The final flush is part of the measured job: buffered writes count when they are durable.
    if job.end_fsync && error.is_none() && !stopped && measuring {
        for (file, &did) in wrote.iter().enumerate() {
            if did {
                if let Err(e) = timed_fsync(&mut engine, file, &mut stats, true, &clock) {
                    error = Some(fsync_error(&w, file, e));
                    break;
                }
            }
        }
    }
    let end = clock.now();
    if measuring {
        stats.elapsed = Duration::from_nanos(clock.ns(end.saturating_sub(measure_start)));
        stats.cpu = CpuUsage::thread().since(&cpu_start);
        // The last, partial interval, if anything happened in it.
        for (d, l) in stats.dirs.iter_mut().zip(last.iter_mut()) {
            if d.ios != l.ios {
                close_interval(d, l, tick_index);
            }
        }
    }
    w.progress.publish(&stats);
    JobResult { stats, error }
}

/// Pushes what direction `d` did since `last` as interval `index` of its series.
fn close_interval(d: &mut DirStats, last: &mut Sample, index: u64) {
    let now = Sample {
        bytes: d.bytes,
        ios: d.ios,
        lat_sum_ns: d.lat.sum_ns as u64,
    };
    let delta = Sample {
        bytes: now.bytes - last.bytes,
        ios: now.ios - last.ios,
        lat_sum_ns: now.lat_sum_ns - last.lat_sum_ns,
    };
    d.series.push_base(delta, index);
    *last = now;
}

fn timed_fsync<E: Engine>(
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

fn fsync_error(w: &Worker<'_>, file: usize, e: io::Error) -> JobError {
    JobError {
        file: w.paths.get(file).cloned(),
        offset: None,
        direction: Some("fsync"),
        errno: e.raw_os_error(),
        message: e.to_string(),
    }
}
