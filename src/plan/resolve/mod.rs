//! Sections → [`Plan`]: looks every key up in the option table, parses and validates values,
//! applies defaults and cross-option rules, and clones jobs for `numjobs`. The result is the
//! only thing the runner sees, whichever front end produced the sections. Checks that need the
//! file system (does the directory exist, is there room) belong to `files::targets`, not here.
//! A section resolves in named steps (name, pattern, I/O sizes, region, timing, engine, cache
//! and data, pacing, randomness), each reading its options through `values.rs` and returning
//! its part of the job (`Pacing`, `Randomness`, the engine's `Queue`…); the sizes' and the
//! engine's option rules have files of their own. An option given that no step read is
//! refused as iogauge's own bug, never silently ignored.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use super::job::*;
use super::value;
use super::{Section, SpecError};
use crate::rawpath;

mod cpus;
mod dedupe;
mod defrag;
mod engine;
mod exec;
mod fileops;
mod hints;
mod net;
mod numa;
mod prio;
mod random;
mod renew;
mod replay;
mod service;
mod sizes;
mod timing;
mod values;
mod verify;
mod zones;

use engine::{engine_flags, engine_kind, queue_options};
use sizes::{block_sizes, rw_and_gap, sequential_gap, size_option, size_or_pct};
use timing::{pacing, steady_state, timing};
use values::{Ignored, Values};
use verify::{data, verification};

/// Resolves sections, each becoming one job (cloned `numjobs` times), all in one group each
/// when `separate_groups`, else all in one group.
pub fn resolve(sections: &[Section], separate_groups: bool) -> Result<Plan, SpecError> {
    let mut plan = Plan::default();
    // Job names so far, with the first group each is in, for wait_for.
    let mut names: std::collections::HashMap<String, usize> = Default::default();
    let mut seen_warnings = std::collections::HashSet::new();
    let mut jobs_so_far = 0usize;
    for section in sections {
        let (mut jobs, warnings, ignored) = resolve_section(section, &names)?;
        for (k, j) in jobs.iter_mut().enumerate() {
            cpus::split(j, jobs_so_far + k);
            // fio's thread_number: 1-based, clones counted, in the order of the sections.
            j.random.job_number = (jobs_so_far + k + 1) as u32;
        }
        jobs_so_far += jobs.len();
        if jobs_so_far > MAX_JOBS {
            return Err(SpecError {
                option: "numjobs".into(),
                value: None,
                message: format!(
                    "the job sections and their numjobs clones come to more than {MAX_JOBS} \
                     jobs (fio's limit, and iogauge's: a thread each)"
                ),
                origin: crate::plan::Origin::Cli,
            });
        }
        for w in warnings {
            if seen_warnings.insert(w.clone()) {
                plan.warnings.push(w);
            }
        }
        for i in ignored {
            if !plan.ignored.iter().any(|(o, _)| *o == i.0) {
                plan.ignored.push(i);
            }
        }
        let stonewall = jobs.first().is_some_and(|j| j.stonewall);
        if separate_groups || stonewall || plan.groups.is_empty() {
            plan.groups.push(Group::default());
        }
        let gi = plan.groups.len() - 1;
        if let Some(w) = jobs.first().and_then(|j| j.pacing.wait_for.clone()) {
            // A job of an earlier group has finished before this group starts.
            if names.get(&w).is_some_and(|g| *g < gi) {
                for j in &mut jobs {
                    j.pacing.wait_for = None;
                }
            }
        }
        if let Some(j) = jobs.first() {
            names.entry(j.name.clone()).or_insert(gi);
        }
        plan.groups[gi].jobs.extend(jobs);
    }
    dedupe::share(&mut plan)?;
    timing::one_clock(&plan)?;
    for g in &plan.groups {
        // fio: a reporting group judges steady state as one, so its jobs must agree.
        let pooled = g.jobs.iter().any(|j| j.group_reporting);
        if pooled && g.jobs.iter().any(|j| j.steady != g.jobs[0].steady) {
            let odd = g
                .jobs
                .iter()
                .find(|j| j.steady != g.jobs[0].steady)
                .map_or("?", |j| j.name.as_str());
            return Err(SpecError {
                option: "steadystate".into(),
                value: None,
                message: format!(
                    "job {odd} differs from job {} in its group: with group_reporting the group \
                     is judged as one, so ss, ss_dur, ss_ramp and ss_interval must be the same \
                     for all its jobs (fio's rule)",
                    g.jobs[0].name
                ),
                origin: g
                    .jobs
                    .iter()
                    .find(|j| j.steady != g.jobs[0].steady)
                    .and_then(|j| {
                        j.origins
                            .get("steadystate_duration")
                            .or(j.origins.get("steadystate"))
                            .cloned()
                    })
                    .unwrap_or(crate::plan::Origin::Cli),
            });
        }
    }
    Ok(plan)
}

type Resolved = (Vec<JobSpec>, Vec<String>, Ignored);

/// The most jobs a run may have, numjobs clones counted (fio's `--max-jobs` default).
pub const MAX_JOBS: usize = 4096;

/// Names of the jobs before a section, with their group.
type Earlier = std::collections::HashMap<String, usize>;

/// One section → its jobs (one per clone). `earlier`: the names of the jobs before it.
fn resolve_section(section: &Section, earlier: &Earlier) -> Result<Resolved, SpecError> {
    let (v, ignored) = Values::collect(section)?;
    let mut warnings = Vec::new();
    let w = &mut warnings;
    let name = job_name(&v, section)?;
    let (rw, gap, read_pct) = pattern(&v, w)?;
    let (sizes, bs, max_bs) = io_sizes(&v, rw, w)?;
    let (data, data_shape) = data(&v, w)?;
    let (verify, rw) = verification(&v, (rw, gap), (&sizes, bs), &data_shape, w)?;
    let region = region(&v, bs, max_bs, w)?;
    let (timing, numjobs) = timing(&v, w)?;
    let engine = engine_kind(&v)?;
    engine::null_verify(&v, verify.is_some(), engine)?;
    let direct = v.bool("direct")?;
    let queue = queue_options(&v, engine, w)?;
    engine::serialize_overlap(&v, queue.depth)?;
    let numpages = numpages(&v, engine, bs, max_bs, &region)?;
    let flags = engine_flags(&v, engine, direct, numpages)?;
    let (pacing, startdelay) = pacing(&v, &name, earlier)?;
    let random = random::randomness(&v, rw, (bs, max_bs), w)?;
    let (logs, series_ms) = logs(&v, &name)?;
    let steady = steady_state(&v, &timing, w)?;
    notes(&v, w)?;
    report_layout(&v)?;
    let options = options_given(&v, random.seed)?;
    let mut spec = JobSpec {
        name,
        clone: 0,
        rw,
        read_pct,
        bs,
        sizes,
        size: region.size,
        offset: region.offset,
        size_pct: region.size_pct,
        offset_pct: region.offset_pct,
        target: region.target,
        nrfiles: region.nrfiles,
        io_bytes: region.io_bytes,
        number_ios: v.int("number_ios")?.filter(|&n| n > 0),
        unlink: v.bool("unlink")?,
        unlink_each_loop: false,
        fill_device: v.bool("fill_device")?,
        size_from_fill: false,
        exitall: v.bool("exitall")?,
        exit_what: exit_what(&v)?,
        exitall_on_error: v.bool("exitall_on_error")?,
        on_error: verify::continue_on(&v, verify.is_some())?,
        failure_stops_group: true,
        new_group: v.bool("new_group")?,
        pacing,
        random,
        timing,
        engine,
        queue,
        numpages,
        flags,
        direct,
        cache: cache(&v, (rw, engine, direct, verify.is_some()), w)?,
        sync: sync(&v, w)?,
        overwrite: v.bool("overwrite")?,
        fallocate: fallocate(&v)?,
        stonewall: v.bool("stonewall")?,
        group_reporting: v.bool("group_reporting")?,
        logs,
        series_ms,
        gap: sequential_gap(&v, rw, gap)?,
        zones: None,
        prio: prio::priorities(&v, engine, rw)?,
        cpus: cpus::cpus(&v)?,
        nice: cpus::nice(&v)?,
        verify_cpus: cpus::verify_cpus(&v)?,
        data,
        data_shape,
        verify,
        steady,
        options,
        origins: v.origins(),
        read_from: None,
        replay: None,
        program: None,
        donor: None,
        net: None,
        file_service: crate::plan::workload::FileService::ROUND_ROBIN,
        allow_create: true,
        write_hint: hints::write_hint(&v)?,
        exec_hooks: hints::exec_hooks(&v),
    };
    refine(&v, &mut spec, numjobs, w)?;
    let replay = replay::replay(&v, &spec)?;
    spec.replay = replay.as_ref().map(|r| r.0.clone());
    all_applied(&v)?;
    check_reach(&v, &spec, (region.nfiles, region.offset_increment), numjobs)?;
    let mut jobs = clones(&spec, numjobs, startdelay, region.offset_increment);
    if let Some((_, logs)) = &replay {
        replay::per_clone(&mut jobs, logs);
    }
    Ok((jobs, warnings, ignored))
}

/// The steps that read the job as built so far: zones, file service, the file-operation
/// engines, the engine's rules, the dedupe working set.
fn refine(
    v: &Values<'_>,
    spec: &mut JobSpec,
    numjobs: u32,
    w: &mut Vec<String>,
) -> Result<(), SpecError> {
    spec.zones = zones::zones(v, spec, w)?;
    spec.file_service = service::file_service(v, spec)?;
    fileops::file_ops(v, spec, w)?;
    engine::rules(v, spec, numjobs, w)?;
    spec.unlink_each_loop = renew::unlink_each_loop(v, spec)?;
    dedupe::working_set(v, spec, w)
}

fn exit_what(v: &Values<'_>) -> Result<ExitWhat, SpecError> {
    Ok(match v.choice("exit_what")?.as_str() {
        "stonewall" => ExitWhat::Stonewall,
        "all" => ExitWhat::All,
        _ => ExitWhat::Group,
    })
}

fn fallocate(v: &Values<'_>) -> Result<Fallocate, SpecError> {
    Ok(match v.choice("fallocate")?.as_str() {
        "native" => Fallocate::Native,
        "posix" | "1" => Fallocate::Posix,
        "keep" => Fallocate::Keep,
        "truncate" => Fallocate::Truncate,
        _ => Fallocate::None,
    })
}

/// Every option given was read by a resolution step.
fn all_applied(v: &Values<'_>) -> Result<(), SpecError> {
    if let Some(option) = v.unused().first() {
        // A table row no step reads: refuse rather than run without it.
        return Err(v.error(
            option,
            "accepted but not applied: an iogauge bug (the option has no resolution step); \
             please report it"
                .into(),
        ));
    }
    Ok(())
}

/// The last byte any clone reaches must be a file offset (off_t: below 2^63).
fn check_reach(
    v: &Values<'_>,
    spec: &JobSpec,
    (nfiles, offset_increment): (u64, u64),
    numjobs: u32,
) -> Result<(), SpecError> {
    let per_file = spec.size.map_or(0, |s| s / nfiles.max(1));
    let last = offset_increment
        .checked_mul(u64::from(numjobs.saturating_sub(1)))
        .and_then(|inc| spec.offset.checked_add(inc))
        .and_then(|o| o.checked_add(per_file));
    if last.is_none_or(|l| l > i64::MAX as u64) {
        let option = if offset_increment > 0 && numjobs > 1 {
            "offset_increment"
        } else {
            "offset"
        };
        return Err(v.error(
            option,
            format!(
                "offset {} + offset_increment {} × {} clone(s) + {per_file} bytes per file \
                 reaches past the largest file offset (2^63 - 1 bytes)",
                spec.offset,
                offset_increment,
                numjobs.saturating_sub(1)
            ),
        ));
    }
    Ok(())
}

/// `numjobs` copies of `spec`: different but reproducible seeds, start delays spread over
/// `startdelay`'s range, offsets `offset_increment` apart.
fn clones(
    spec: &JobSpec,
    numjobs: u32,
    startdelay: (Duration, Duration),
    offset_increment: u64,
) -> Vec<JobSpec> {
    (0..numjobs)
        .map(|clone| {
            let seed = spec.random.seed ^ (u64::from(clone)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let (lo, hi) = startdelay;
            let spread = (hi - lo).as_nanos() as u64;
            let delay = if spread == 0 {
                lo
            } else {
                lo + Duration::from_nanos(seed.wrapping_mul(0xD6E8_FEB8_6659_FD93) % (spread + 1))
            };
            let mut job = spec.clone();
            job.clone = clone;
            job.random.seed = seed;
            job.offset = spec.offset + offset_increment * u64::from(clone);
            job.pacing.startdelay = delay;
            job
        })
        .collect()
}

/// The section's name, unless the name option overrides it.
fn job_name(v: &Values<'_>, section: &Section) -> Result<String, SpecError> {
    let name = match v.given("name") {
        true => v.text("name").map(|t| t.0).unwrap_or_default(),
        false => section.name.clone(),
    };
    if name.is_empty() || name.contains('/') || name.contains('\0') {
        return Err(v.error("name", "expected a job name without '/'".into()));
    }
    Ok(name)
}

/// The I/O pattern: `rw` (with its gap) and the read share of a mixed one.
fn pattern(v: &Values<'_>, warnings: &mut Vec<String>) -> Result<(RwMode, i64, u8), SpecError> {
    let (rw_word, gap) = rw_and_gap(v)?;
    let rw = RwMode::from_word(&rw_word)
        .unwrap_or_else(|| unreachable!("rw_and_gap checked {rw_word} against RW_MODES"));
    let read_pct = match (v.given("rwmixread"), v.given("rwmixwrite")) {
        (true, true) => {
            let (r, w) = (
                v.int("rwmixread")?.unwrap_or(50),
                v.int("rwmixwrite")?.unwrap_or(50),
            );
            if r + w != 100 {
                return Err(v.error(
                    "rwmixwrite",
                    format!("rwmixread={r} and rwmixwrite={w} must add up to 100"),
                ));
            }
            r
        }
        (false, true) => 100 - v.int("rwmixwrite")?.unwrap_or(50),
        _ => v.int("rwmixread")?.unwrap_or(50),
    } as u8;
    if (v.given("rwmixread") || v.given("rwmixwrite"))
        && !matches!(rw, RwMode::ReadWrite | RwMode::RandRw)
    {
        warnings.push(format!(
            "rwmixread/rwmixwrite only apply to rw and randrw; rw={} ignores them",
            rw.as_str()
        ));
    }
    Ok((rw, gap, read_pct))
}

/// The I/O sizes per direction, and the smallest and largest the pattern uses.
fn io_sizes(
    v: &Values<'_>,
    rw: RwMode,
    warnings: &mut Vec<String>,
) -> Result<([BlockSizes; 3], u64, u64), SpecError> {
    let sizes = block_sizes(v, warnings)?;
    let dirs_used = rw.sized_dirs();
    let used = || {
        sizes
            .iter()
            .zip(dirs_used)
            .filter(|(_, u)| *u)
            .map(|(s, _)| s)
    };
    let bs = used()
        .map(BlockSizes::min)
        .min()
        .expect("every pattern reads or writes");
    let max_bs = used()
        .map(BlockSizes::max)
        .max()
        .expect("every pattern reads or writes");
    // Any size of 1 byte or more, as fio: direct I/O's alignment is checked against the
    // device's logical block size once the files are known (`files::targets`).
    if used().any(|s| s.min() == 0) {
        let name = size_option(v);
        return Err(v.error(name, "expected at least 1 byte per I/O".into()));
    }
    Ok((sizes, bs, max_bs))
}

/// Where a job does its I/O and how much: its files and the region in each.
struct Region {
    target: TargetSpec,
    nrfiles: u32,
    /// Files the size is shared by.
    nfiles: u64,
    size: Option<u64>,
    size_pct: Option<u8>,
    offset: u64,
    offset_pct: Option<u8>,
    offset_increment: u64,
    io_bytes: Option<u64>,
}

fn region(
    v: &Values<'_>,
    bs: u64,
    max_bs: u64,
    warnings: &mut Vec<String>,
) -> Result<Region, SpecError> {
    let (size, size_pct) = size_or_pct(v, "size", warnings)?;
    if size == Some(0) {
        return Err(v.error("size", "expected a size above 0".into()));
    }
    let (offset, offset_pct) = size_or_pct(v, "offset", warnings)?;
    let offset = offset.unwrap_or(0);
    let offset_increment = v.size("offset_increment", warnings)?.unwrap_or(0);
    let filesize = v.size("filesize", warnings)?;
    if filesize == Some(0) {
        return Err(v.error("filesize", "expected a size above 0".into()));
    }
    let nrfiles = v.int("nrfiles")?.unwrap_or(1) as u32;
    let target = target(v)?;
    let nfiles = match &target {
        TargetSpec::Files(f) => f.len() as u64,
        TargetSpec::Directory(_) => u64::from(nrfiles),
    };
    // The region: with filesize, each file from offset to filesize (fio's), and size the
    // bytes to move, at most one pass of it; else size (offset + size per file).
    let (size, mut io_bytes) = match filesize {
        Some(fs) if offset_pct.is_none() && offset >= fs => {
            return Err(v.error(
                "offset",
                format!("is at or past filesize ({fs} bytes): the files' region starts there"),
            ));
        }
        Some(fs) => {
            let per_file = if offset_pct.is_none() {
                fs - offset
            } else {
                fs
            };
            let region = per_file.saturating_mul(nfiles);
            (Some(region), size.map(|s| s.min(region)))
        }
        None => (size, None),
    };
    if let Some(io) = v.size("io_size", warnings)? {
        io_bytes = Some(io);
    }
    if let Some(size) = size {
        if max_bs > size / nfiles {
            let what = if nfiles > 1 {
                format!(" split over {nfiles} files")
            } else {
                String::new()
            };
            let name = size_option(v);
            return Err(v.error(
                name,
                format!(
                    "is larger than size={size} bytes{what}; every I/O must fit in the size \
                     per file"
                ),
            ));
        }
    }
    if let Some(io) = io_bytes {
        if io < bs {
            let name = if v.given("io_size") {
                "io_size"
            } else {
                "size"
            };
            return Err(v.error(name, format!("moves less than one I/O of {bs} bytes")));
        }
    }
    Ok(Region {
        target,
        nrfiles,
        nfiles,
        size,
        size_pct,
        offset,
        offset_pct,
        offset_increment,
        io_bytes,
    })
}

/// The files (`filename`, relative to `directory` when both are given) or the directory a
/// job makes its own files in.
fn target(v: &Values<'_>) -> Result<TargetSpec, SpecError> {
    Ok(
        match (
            v.text("filename").map(|t| t.0),
            v.text("directory").map(|t| t.0),
        ) {
            (Some(files), dir) => {
                let dir = dir.map(|d| rawpath::path(&d));
                let names = value::split_filenames(&files);
                if crate::platform::DRIVE_LETTERS && value::unescaped_drive(&names) {
                    return Err(v.error(
                        "filename",
                        "':' separates fio's file names, so a drive letter's colon is \
                         escaped as fio's documentation says: filename=C\\:\\data\\f.dat \
                         (or give the folder with directory=)"
                            .into(),
                    ));
                }
                let paths: Vec<PathBuf> = names
                    .into_iter()
                    .map(|f| match &dir {
                        Some(d) if !f.starts_with('/') => d.join(rawpath::path(&f)),
                        _ => rawpath::path(&f),
                    })
                    .collect();
                if paths.iter().any(|p| p.as_os_str().is_empty()) {
                    return Err(v.error(
                        "filename",
                        "expected one or more paths separated by ':'".into(),
                    ));
                }
                TargetSpec::Files(paths)
            }
            (None, Some(dir)) if dir.is_empty() => {
                return Err(v.error("directory", "expected a directory path".into()));
            }
            (None, Some(dir)) => TargetSpec::Directory(rawpath::path(&dir)),
            (None, None) => TargetSpec::Directory(PathBuf::from(".")),
        },
    )
}

/// `numpages`: page buffers per call, which needs a vectored engine, one I/O size, and a size
/// per file in whole calls (SASIOTEST's rule: no short last call).
fn numpages(
    v: &Values<'_>,
    engine: EngineKind,
    bs: u64,
    max_bs: u64,
    region: &Region,
) -> Result<u32, SpecError> {
    let numpages = v.int("numpages")?.unwrap_or(1) as u32;
    if numpages > 1 && !engine.vectored() {
        return Err(v.error(
            "numpages",
            format!(
                "needs a vectored engine (ioengine=pvsync, pvsync2 or io_uring); \
                 ioengine={} moves one buffer per call",
                engine.as_str()
            ),
        ));
    }
    if numpages > 1 && bs != max_bs {
        return Err(v.error(
            "numpages",
            "needs one I/O size (bs), not bsrange, bssplit or different read and write sizes"
                .into(),
        ));
    }
    if let Some(size) = region.size {
        let nfiles = region.nfiles;
        let xfer = bs * u64::from(numpages);
        if numpages > 1 && (size / nfiles) % xfer != 0 {
            return Err(v.error(
                "numpages",
                format!(
                    "size per file ({} {} bytes) is not a multiple of {} x {} ({bs} x \
                     {numpages} = {xfer} bytes); as SASIOTEST, iogauge refuses rather than \
                     issue a short last call",
                    v.named("size"),
                    size / nfiles,
                    v.named("bs"),
                    v.named("numpages"),
                ),
            ));
        }
    }
    Ok(numpages)
}

/// What the job tells the page cache. `pre_read` turns `invalidate` off, as fio's does
/// (dropping the pages just read would undo it). It reads through the job's own descriptors,
/// so a job that neither reads nor verifies (opened write-only) is not pre-read, and says so.
fn cache(
    v: &Values<'_>,
    (rw, engine, direct, verifies): (RwMode, crate::plan::EngineKind, bool, bool),
    w: &mut Vec<String>,
) -> Result<Cache, SpecError> {
    let fadvise = match v.choice("fadvise_hint")?.as_str() {
        "0" | "none" => Fadvise::None,
        "sequential" => Fadvise::Sequential,
        "random" => Fadvise::Random,
        _ if rw.is_random() => Fadvise::Random,
        _ => Fadvise::Sequential,
    };
    let mut pre_read = v.bool("pre_read")? && !engine.fileless() && !engine.file_op();
    if pre_read && !rw.reads() && !verifies {
        w.push(format!(
            "{}: the job only writes or trims (its files are opened write-only), so nothing is \
             pre-read",
            v.named("pre_read")
        ));
        pre_read = false;
    }
    if pre_read && direct {
        w.push(format!(
            "{} with {}: the pre-read goes around the page cache as the job's own reads do, so \
             it leaves nothing cached for them",
            v.named("pre_read"),
            v.named("direct")
        ));
    }
    Ok(Cache {
        invalidate: v.bool("invalidate")? && !pre_read,
        pre_read,
        fadvise,
    })
}

/// Write-through and flushes: fio's sync family.
fn sync(v: &Values<'_>, w: &mut Vec<String>) -> Result<Durability, SpecError> {
    let (range_flags, range_every) = match v.text("sync_file_range") {
        Some((t, _)) => value::parse_sync_file_range(&t)
            .map_err(|acc| v.error("sync_file_range", format!("expected {acc}")))?,
        None => (0, 0),
    };
    let at_end = if v.bool("end_syncfs")? {
        EndFlush::Syncfs
    } else if v.bool("end_fsync")? || v.bool("fsync_on_close")? {
        EndFlush::Fsync
    } else {
        EndFlush::None
    };
    if v.int("write_barrier")?.unwrap_or(0) > 0 {
        w.push(
            "write_barrier: Linux has no barrier writes and no engine of iogauge's (nor any \
             of fio's but libpmem) issues them; the writes are ordinary writes"
                .into(),
        );
    }
    let mode = match v.choice("sync")?.as_str() {
        "none" | "0" => SyncMode::None,
        "dsync" => SyncMode::Dsync,
        _ => SyncMode::Sync,
    };
    Ok(Durability {
        mode,
        fsync_every: v.int("fsync")?.unwrap_or(0) as u32,
        fdatasync_every: v.int("fdatasync")?.unwrap_or(0) as u32,
        range_every,
        range_flags,
        at_end,
    })
}

/// The fio-format logs a job writes, and the window of their entries (and of the report's
/// time series).
fn logs(v: &Values<'_>, job: &str) -> Result<(LogSpec, u64), SpecError> {
    let log_name = |name: &'static str| -> Result<Option<String>, SpecError> {
        match v.text(name) {
            // Given without a name (or an empty one): the job's (fio's).
            Some((t, Some(e))) if e.value.is_none() || t.trim().is_empty() => {
                Ok(Some(job.to_string()))
            }
            Some((t, _)) if t.contains('\0') => {
                Err(v.error(name, "expected a log file name prefix".into()))
            }
            Some((t, _)) => Ok(Some(t.trim().to_string())),
            None => Ok(None),
        }
    };
    let avg = v.int("log_avg_msec")?.unwrap_or(0);
    let logs = LogSpec {
        bw: log_name("write_bw_log")?,
        iops: log_name("write_iops_log")?,
        lat: log_name("write_lat_log")?,
        per_io: avg == 0,
        per_job: v.bool("per_job_logs")?,
        offset: v.bool("log_offset")?,
        prio: v.bool("log_prio")?,
        compressed: v.bool("log_store_compressed")?,
        iolog: match v.text("write_iolog") {
            Some((t, _)) if t.trim().is_empty() || t.contains('\0') => {
                return Err(v.error("write_iolog", "expected a file name".into()));
            }
            Some((t, _)) => Some(t.trim().to_string()),
            None => None,
        },
    };
    let series_ms = match avg {
        0 => super::job::DEFAULT_SERIES_MS,
        ms => ms,
    };
    Ok((logs, series_ms))
}

/// fio's report switches: kept in the job's options, where fio's reporters read them
/// (`result::fio::Percentiles`, `unified`); read here so a bad value is refused up front.
fn report_layout(v: &Values<'_>) -> Result<(), SpecError> {
    for o in ["clat_percentiles", "lat_percentiles", "slat_percentiles"] {
        v.bool(o)?;
    }
    v.choice("unified_rw_reporting")?;
    Ok(())
}

/// Options accepted with a difference from fio, said once.
fn notes(v: &Values<'_>, warnings: &mut Vec<String>) -> Result<(), SpecError> {
    if v.bool("new_group")? {
        warnings.push(
            "new_group: the job runs alongside the jobs before it, as in fio, but iogauge \
             still reports it in their group (separate reporting groups within a run group \
             are not implemented yet); use stonewall to run and report it apart"
                .into(),
        );
    }
    if !v.bool("create_serialize")? {
        warnings.push(
            "create_serialize=0: iogauge lays out files one at a time anyway, before the \
             group starts, so layout never competes with measured I/O"
                .into(),
        );
    }
    Ok(())
}

/// The options as given, for the report (with the seed a `randrepeat=0` run drew).
fn options_given(v: &Values<'_>, seed: u64) -> Result<BTreeMap<String, String>, SpecError> {
    let mut opts = BTreeMap::new();
    for (name, (_, entry)) in &v.map {
        opts.insert(
            name.to_string(),
            entry.value.clone().unwrap_or_else(|| "1".into()),
        );
    }
    if !v.given("randseed") && !v.bool("randrepeat")? {
        opts.insert("randseed".into(), seed.to_string());
    }
    Ok(opts)
}

#[cfg(test)]
mod tests;
