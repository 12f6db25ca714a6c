//! Building a RunReport from the runner's outcome: arithmetic on merged stats, the devices'
//! counters and the warnings a reader must see beside the figures. Reads host facts through
//! `host`; nothing else here does I/O.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

mod replay;
mod verdict;

pub use verdict::DeviceCheck;

use super::*;
use crate::host::TargetInfo;
use crate::runner::{JobOutcome, RunOutcome};
use crate::stats::diskstats::DiskCounters;
use crate::stats::{DirStats, JobError, JobStats, LatStats, PrioStats};

/// Latency with its histogram (json+'s bins, sqlio's rows and pooled percentiles read it).
fn lat_report_with_histogram(l: &LatStats) -> Option<LatReport> {
    let mut r = lat_report(l)?;
    r.histogram_ns = l.hist.buckets().map(|(lo, hi, c)| [lo, hi, c]).collect();
    Some(r)
}

fn lat_report(l: &LatStats) -> Option<LatReport> {
    if l.count() == 0 {
        return None;
    }
    let percentiles = PERCENTILES
        .iter()
        .map(|&p| (percentile_key(p), l.percentile_ns(p).unwrap_or(0)))
        .collect();
    Some(LatReport {
        count: l.count(),
        min: l.min_ns,
        max: l.max_ns,
        mean: l.mean_ns(),
        stddev: l.stddev_ns(),
        percentiles,
        histogram_ns: Vec::new(),
    })
}

fn per_s(n: u64, d: Duration) -> f64 {
    if d.is_zero() {
        0.0
    } else {
        n as f64 / d.as_secs_f64()
    }
}

fn dir_report(d: &DirStats, prios: &PrioStats, elapsed: Duration) -> DirReport {
    let bw = per_s(d.bytes, elapsed);
    let interval = Duration::from_millis(d.series.interval_ms);
    let n = d.series.samples.len();
    let mut series = SeriesReport {
        interval_ms: d.series.interval_ms,
        bw_bytes_per_s: Vec::with_capacity(n),
        iops: Vec::with_capacity(n),
        lat_mean_ns: Vec::with_capacity(n),
        slat_mean_ns: Vec::new(),
        clat_mean_ns: Vec::new(),
    };
    let queued = d.clat.count() > 0;
    let mean = |sum: u64, ios: u64| {
        if ios == 0 {
            0.0
        } else {
            sum as f64 / ios as f64
        }
    };
    for (i, s) in d.series.samples.iter().enumerate() {
        let start = interval * i as u32;
        let len = if i + 1 == n {
            elapsed.saturating_sub(start).min(interval)
        } else {
            interval
        };
        series.bw_bytes_per_s.push(per_s(s.bytes, len));
        series.iops.push(per_s(s.ios, len));
        series.lat_mean_ns.push(mean(s.lat_sum_ns, s.ios));
        if queued {
            series.slat_mean_ns.push(mean(s.slat_sum_ns, s.ios));
            series.clat_mean_ns.push(mean(s.clat_sum_ns, s.ios));
        }
    }
    DirReport {
        bytes: d.bytes,
        ios: d.ios,
        bw_bytes_per_s: bw,
        mib_per_s: bw / (1024.0 * 1024.0),
        mb_per_s: bw / 1e6,
        iops: per_s(d.ios, elapsed),
        lat_ns: lat_report_with_histogram(&d.lat),
        slat_ns: lat_report_with_histogram(&d.slat),
        clat_ns: lat_report_with_histogram(&d.clat),
        prios: prios
            .by_prio
            .iter()
            .filter_map(|(p, l)| {
                Some(PrioReport {
                    class: crate::plan::prio::class_of(*p),
                    level: crate::plan::prio::level_of(*p),
                    of: if prios.total { "lat" } else { "clat" }.into(),
                    latency: lat_report_with_histogram(l)?,
                })
            })
            .collect(),
        series,
        dropped: d.dropped,
    }
}

fn cpu_report(c: &crate::stats::CpuUsage, elapsed: Duration) -> CpuReport {
    let e = elapsed.as_secs_f64();
    let pct = |d: Duration| {
        if e > 0.0 {
            100.0 * d.as_secs_f64() / e
        } else {
            0.0
        }
    };
    CpuReport {
        user_s: c.user.as_secs_f64(),
        system_s: c.system.as_secs_f64(),
        usr_pct: pct(c.user),
        sys_pct: pct(c.system),
        ctx_switches: c.voluntary_ctx + c.involuntary_ctx,
        minor_faults: c.minor_faults,
        major_faults: c.major_faults,
    }
}

pub fn measurement(s: &JobStats) -> Measurement {
    Measurement {
        elapsed_ns: s.elapsed.as_nanos() as u64,
        read: dir_report(&s.dirs[0], &s.prios[0], s.elapsed),
        write: dir_report(&s.dirs[1], &s.prios[1], s.elapsed),
        trim: dir_report(&s.dirs[2], &s.prios[2], s.elapsed),
        sync: lat_report_with_histogram(&s.syncs),
        iodepth: depth_report(&s.depth, s.dirs.iter().map(|d| d.ios).sum()),
        cpu: cpu_report(&s.cpu, s.elapsed),
        verify: s.verify.as_ref().map(verify_report),
        steadystate: s.steady.clone(),
        replay: s.replay.as_ref().map(replay::report),
        latency_target: s.latency,
        errors_continued: s.continued.clone(),
        filled: s.filled.clone(),
    }
}

fn verify_report(v: &crate::stats::VerifyStats) -> VerifyReport {
    let bw = per_s(v.bytes, v.elapsed);
    VerifyReport {
        checksum: v.checksum.to_string(),
        blocks: v.blocks,
        bytes: v.bytes,
        ios: v.ios,
        elapsed_ns: v.elapsed.as_nanos() as u64,
        mib_per_s: bw / (1024.0 * 1024.0),
        mb_per_s: bw / 1e6,
        dropped_cache: v.dropped_cache,
        inline: v.inline,
        threads: v.threads,
        cut_short: v.cut_short,
        bad_blocks: v.bad,
        first_bad: v.bad_blocks.clone(),
    }
}

/// `ios`: the I/Os the job issued, which a synchronous engine (no submissions counted)
/// issued one at a time.
fn depth_report(d: &crate::stats::DepthStats, ios: u64) -> DepthReport {
    let total = d.total_ns();
    let levels = crate::stats::DEPTH_LEVELS;
    let pct_time = levels
        .iter()
        .zip(d.ns)
        .map(|(&lvl, ns)| {
            let key = if lvl == levels[levels.len() - 1] {
                format!(">={lvl}")
            } else {
                lvl.to_string()
            };
            let pct = if total == 0 {
                0.0
            } else {
                100.0 * ns as f64 / total as f64
            };
            (key, pct)
        })
        .collect();
    let one_at_a_time = |i: usize| {
        let mut v = vec![0; 7];
        v[i] = ios;
        v
    };
    let (at_submit, submit_calls, complete_calls) = if d.submit_calls.iter().any(|&c| c > 0) {
        (
            d.at_submit.to_vec(),
            d.submit_calls.to_vec(),
            d.complete_calls.to_vec(),
        )
    } else {
        (one_at_a_time(0), one_at_a_time(1), one_at_a_time(1))
    };
    DepthReport {
        mean: d.mean(),
        mean_unknown: false,
        pct_time,
        at_submit,
        submit_calls,
        complete_calls,
    }
}

/// How every engine trims (`engine::trim`).
const TRIM_CALLS: &str = "trims as BLKDISCARD on a block device, fallocate(PUNCH_HOLE) on a file";

/// What the engine of `job` does per I/O (the engine describes itself).
pub fn engine_report(job: &crate::plan::JobSpec) -> EngineReport {
    let d = crate::engine::describe(&job.engine_config());
    let calls = match (job.rw.trims(), job.rw.reads() || job.rw.writes()) {
        (false, _) => d.calls,
        // These engines trim their own way (the null engine not at all).
        _ if matches!(
            job.engine,
            crate::plan::EngineKind::Null | crate::plan::EngineKind::Falloc
        ) =>
        {
            d.calls
        }
        (true, false) => TRIM_CALLS.to_string(),
        (true, true) => format!("{} and {TRIM_CALLS}", d.calls),
    };
    let mut features = d.features;
    if let Some(ep) = &job.net {
        features.push(ep.for_clone(job.clone).describe());
    }
    EngineReport {
        name: job.engine.as_str().into(),
        calls,
        iodepth: job.queue.depth,
        numpages: job.numpages,
        bytes_per_io: job.xfer(),
        per_call_flags: d.per_call_flags.into_iter().map(Cow::Borrowed).collect(),
        features,
    }
}

/// Inputs besides the outcome.
pub struct Context {
    pub command_line: Vec<String>,
    pub started: SystemTime,
    pub process_cpu: crate::stats::CpuUsage,
    pub wall: Duration,
    pub targets: Vec<TargetInfo>,
    pub warnings: Vec<String>,
    /// The device counters' verdicts are left to a merge of this run with others on the same
    /// devices (a scale-out rank): each group keeps its [`DeviceCheck`] for it instead.
    pub defer_device_verdicts: bool,
}

pub fn build(outcome: &RunOutcome, ctx: Context) -> RunReport {
    let mut errors = Vec::new();
    let mut device_notes = Vec::new();
    if let Some(e) = &outcome.setup_error {
        errors.push(e.to_string());
    }
    // A file `unlink` left (not iogauge's to remove, or the removal failed) is said, but the
    // measurement stands: a warning, not an error that the exit code would not match.
    let unlink_notes = outcome.unlink_errors.iter().chain(&outcome.notes).cloned();
    // The files with no device below them said so far.
    let mut said = std::collections::BTreeSet::new();
    let groups = outcome
        .groups
        .iter()
        .enumerate()
        .map(|(id, jobs)| {
            group_report(
                (outcome, id, jobs),
                &mut errors,
                (&mut device_notes, ctx.defer_device_verdicts),
                &mut said,
            )
        })
        .collect();
    RunReport {
        schema: "iogauge-run".into(),
        schema_version: SCHEMA_VERSION,
        tool: Tool {
            name: "iogauge".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        started_unix_s: ctx
            .started
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        started_unix_ms: ctx
            .started
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64),
        command_line: ctx
            .command_line
            .iter()
            .map(|a| crate::rawpath::shown(a).into_owned())
            .collect(),
        host: crate::host::host(),
        targets: ctx.targets,
        groups,
        interrupted: outcome.interrupted,
        clock: outcome.clock.clone(),
        process_cpu: cpu_report(&ctx.process_cpu, ctx.wall),
        warnings: ctx
            .warnings
            .into_iter()
            .chain(unlink_notes)
            .chain(device_notes)
            .collect(),
        errors,
    }
}

/// Group `id`'s part of the report: its jobs (their errors added to `errors`), its total,
/// and the devices below its files (what their counters say added to `notes`).
fn group_report(
    (outcome, id, jobs): (&RunOutcome, usize, &[JobOutcome]),
    errors: &mut Vec<String>,
    (device_notes, defer_verdicts): (&mut Vec<String>, bool),
    said_without_device: &mut std::collections::BTreeSet<std::path::PathBuf>,
) -> GroupReport {
    let mut total = JobStats::default();
    // Jobs that do no I/O (cpuio, exec) run beside the I/O jobs: their cycles are not the
    // group's I/O.
    let some_io = jobs.iter().any(|j| !j.spec.engine.no_io());
    let jobs = jobs
        .iter()
        .map(|j| {
            if !(some_io && j.spec.engine.no_io()) {
                total += &j.stats;
            }
            if let Some(e) = &j.error {
                errors.push(job_error_line(&j.spec.name, j.spec.clone, e));
            }
            let late = j.stats.replay.as_ref();
            device_notes.extend(late.and_then(|r| replay::note(&j.spec.name, j.spec.clone, r)));
            let clones = jobs.iter().filter(|o| o.spec.name == j.spec.name).count();
            job_report(j, clones)
        })
        .collect();
    let disks = outcome.disks.get(id).cloned().unwrap_or_default();
    // The counters cannot start when each job's measuring does: how much of their
    // window was not measured.
    let unmeasured = outcome.groups[id]
        .iter()
        .map(|j| j.spec.timing.ramp + j.spec.pacing.startdelay)
        .max()
        .unwrap_or_default();
    let devices: Vec<DeviceIo> = disks
        .devices
        .iter()
        .map(|(name, mm, c)| device_io(name, mm, c, disks.wall, unmeasured))
        .collect();
    // Jobs told to start later (startdelay, wait_for) are apart on purpose.
    let staggered = outcome.groups[id]
        .iter()
        .any(|j| !j.spec.pacing.startdelay.is_zero() || j.spec.pacing.wait_for.is_some());
    let spread = (!staggered)
        .then(|| spread_out(&mut total, outcome.groups[id].len()))
        .flatten();
    // How every note of the group names it.
    let label = group_label(id, outcome.groups[id].iter().map(|j| j.spec.name.as_str()));
    if let Some(w) = spread {
        device_notes.push(format!("{label}: {w}"));
    }
    let total = measurement(&total);
    // A file with no device below it is said once, at the first group that uses it.
    let unsaid: Vec<std::path::PathBuf> = disks
        .without_device
        .iter()
        .filter(|p| said_without_device.insert((*p).clone()))
        .cloned()
        .collect();
    without_device_note(device_notes, &label, &unsaid);
    let check = DeviceCheck::of(label, &outcome.groups[id], &total);
    // A merge of several processes' runs judges their shared devices once, against all of
    // their jobs (see `DeviceCheck`).
    if !defer_verdicts {
        device_notes.extend(check.verdicts(&devices));
    }
    GroupReport {
        id,
        group_reporting: outcome.groups[id].iter().any(|j| j.spec.group_reporting),
        jobs,
        total,
        devices,
        without_device: disks.without_device,
        device_check: Some(check),
    }
}

/// One job's part of the report: its options as resolved (what ran, not only what was
/// asked), its engine, files and figures. `clones`: the job's copies in its group.
fn job_report(j: &JobOutcome, clones: usize) -> JobReport {
    // Bytes carried in values (rawpath) shown as \xNN, as in every message.
    let mut options: BTreeMap<String, String> = j
        .spec
        .options
        .iter()
        .map(|(k, v)| (k.clone(), crate::rawpath::shown(v).into_owned()))
        .collect();
    options.insert("rw".into(), j.spec.rw.as_str().into());
    let bs = if j.spec.fixed_size() {
        j.spec.bs.to_string()
    } else {
        let sizes = j.spec.sizes.clone().map(|s| s.describe());
        crate::plan::summary::per_direction(&sizes, j.spec.rw.sized_dirs())
    };
    options.insert("bs".into(), bs);
    options.insert("size".into(), j.spec.size.unwrap_or(0).to_string());
    options.insert("ioengine".into(), j.spec.engine.as_str().into());
    options.insert("iodepth".into(), j.spec.queue.depth.to_string());
    options.insert("numpages".into(), j.spec.numpages.to_string());
    options
        .entry("numjobs".into())
        .or_insert_with(|| clones.to_string());
    // The logs as resolved: a name given as a bare option is the job's.
    let logs = &j.spec.logs;
    for (key, name) in [
        ("write_bw_log", &logs.bw),
        ("write_iops_log", &logs.iops),
        ("write_lat_log", &logs.lat),
    ] {
        if let Some(n) = name {
            options.insert(key.into(), crate::rawpath::shown(n).into_owned());
        }
    }
    JobReport {
        name: j.spec.name.clone(),
        clone: j.spec.clone,
        options,
        files: j.files.clone(),
        engine: engine_report(&j.spec),
        data: if j.spec.engine == crate::plan::EngineKind::Cpuio {
            "none: ioengine=cpuio does no I/O; each I/O is one cycle of CPU burned and slept"
                .to_string()
        } else if let Some(p) = &j.spec.program {
            p.data_line()
        } else if j.spec.engine.file_op() {
            use crate::plan::EngineKind as K;
            let (what, op) = match j.spec.engine {
                K::Filecreate => ("file", "create"),
                K::Filestat => ("file", "stat"),
                K::Filedelete => ("file", "delete"),
                K::Dircreate => ("directory", "mkdir"),
                K::Dirstat => ("directory", "stat"),
                _ => ("directory", "rmdir"),
            };
            format!(
                "none: ioengine={} moves no data; each I/O is one {what}'s {op}, and its bytes \
                 are the one block per {what} fio counts (read the IOPS as operations per \
                 second)",
                j.spec.engine.as_str(),
            )
        } else if j.spec.rw.writes() && j.spec.engine.moves_no_data() {
            format!("none: ioengine={} moves no data", j.spec.engine.as_str())
        } else if j.spec.rw.writes() {
            j.spec.data_shape.describe(j.spec.data)
        } else {
            String::new()
        },
        error: j.error.clone(),
        ranks: Vec::new(),
        measurement: measurement(&j.stats),
    }
}

/// What one device did during a group (`wall`, of which `unmeasured` was ramp or start
/// delay), from its counters' difference.
fn device_io(
    name: &str,
    major_minor: &str,
    c: &DiskCounters,
    wall: Duration,
    unmeasured: Duration,
) -> DeviceIo {
    DeviceIo {
        name: name.to_string(),
        major_minor: major_minor.to_string(),
        read_ios: c.read_ios,
        read_merges: c.read_merges,
        read_bytes: c.read_sectors * 512,
        write_ios: c.write_ios,
        write_merges: c.write_merges,
        write_bytes: c.write_sectors * 512,
        read_ms: c.read_ms,
        write_ms: c.write_ms,
        in_queue_ms: c.queue_ms,
        busy_ms: c.io_ms,
        wall_ms: wall.as_millis() as u64,
        unmeasured_ms: unmeasured.min(wall).as_millis() as u64,
        util_pct: if wall.is_zero() {
            0.0
        } else {
            (100.0 * c.io_ms as f64 / wall.as_millis().max(1) as f64).min(100.0)
        },
        bytes_unknown: false,
        host: None,
        ranks: Vec::new(),
    }
}

/// "group 2 (seq-read)": a group as warnings name it, by number and its jobs' names, so a
/// warning about the quick check's second test says which test it was.
pub fn group_label<'a>(id: usize, names: impl Iterator<Item = &'a str>) -> String {
    let mut distinct: Vec<&str> = Vec::new();
    for n in names {
        if !distinct.contains(&n) {
            distinct.push(n);
        }
    }
    let shown = match distinct.len() {
        0 => return format!("group {}", id + 1),
        1..=3 => distinct.join(", "),
        more => format!("{}, … {} jobs", distinct[..2].join(", "), more),
    };
    format!("group {} ({shown})", id + 1)
}

/// A group whose `jobs` did not run at the same time (more jobs than CPUs can run at once:
/// some only started as others were ending): its totals' time becomes the span from the first
/// job's start to the last one's end, not the longest job's, so that its rates are what the
/// jobs did together. Returns the warning; None when they ran together (within 5% and 10 ms).
fn spread_out(total: &mut JobStats, jobs: usize) -> Option<String> {
    let (start, end) = total.window_ns?;
    let span = Duration::from_nanos(end.saturating_sub(start));
    let longest = total.elapsed;
    if jobs < 2 || span <= longest.mul_f64(1.05) || span - longest <= Duration::from_millis(10) {
        return None;
    }
    total.elapsed = span;
    Some(format!(
        "its {jobs} jobs did not run at the same time: each measured {:.2} s at most, but from \
         the first one's start to the last one's end took {:.2} s (typically more jobs than the \
         CPUs could run at once: late ones only started as others ended); the group's rates \
         are over those {:.2} s, not the sum of the jobs'",
        longest.as_secs_f64(),
        span.as_secs_f64(),
        span.as_secs_f64()
    ))
}

/// Says the files of `group` that have no device below them: nothing to check, and the
/// figures are the file system's.
fn without_device_note(
    notes: &mut Vec<String>,
    group: &str,
    without_device: &[std::path::PathBuf],
) {
    if without_device.is_empty() {
        return;
    }
    let why = crate::platform::NO_DEVICE_WHY;
    notes.push(format!(
        "{group}: {} {} {why}: there is no device to check, and the figures are the file \
         system's",
        crate::rawpath::brief_list(without_device),
        if without_device.len() == 1 {
            "is"
        } else {
            "are"
        }
    ));
}

/// One line naming the job, file, offset and error.
pub fn job_error_line(name: &str, clone: u32, e: &JobError) -> String {
    let mut s = format!(
        "job {name}.{clone}: {}",
        e.direction.as_deref().unwrap_or("I/O")
    );
    if let Some(f) = &e.file {
        s += &format!(" of {}", crate::rawpath::display(f));
    }
    if let Some(o) = e.offset {
        s += &format!(" at offset {o}");
    }
    s + &format!(" failed: {}", e.message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(elapsed_ms: u64, window_ms: (u64, u64)) -> JobStats {
        JobStats {
            elapsed: Duration::from_millis(elapsed_ms),
            window_ns: Some((window_ms.0 * 1_000_000, window_ms.1 * 1_000_000)),
            ..JobStats::default()
        }
    }

    #[test]
    fn a_group_whose_jobs_ran_one_after_another_is_timed_over_their_span() {
        // Two 1 s jobs, the second starting as the first ended.
        let mut total = stats(1000, (0, 1000));
        total += &stats(1000, (1000, 2000));
        assert_eq!(total.window_ns, Some((0, 2_000_000_000)));
        let w = spread_out(&mut total, 2).expect("said");
        assert_eq!(total.elapsed, Duration::from_secs(2));
        assert!(w.contains("did not run at the same time"), "{w}");
        assert!(w.contains("1.00 s") && w.contains("2.00 s"), "{w}");
        // Together, within 5 ms of each other: the longest job's time stands.
        let mut total = stats(1000, (0, 1000));
        total += &stats(1000, (5, 1005));
        assert_eq!(spread_out(&mut total, 2), None);
        assert_eq!(total.elapsed, Duration::from_secs(1));
        // One job: nothing to compare.
        let mut one = stats(1000, (0, 3000));
        assert_eq!(spread_out(&mut one, 1), None);
    }
}
