//! A job that replays a recorded log instead of generating its I/O (fio's `read_iolog`): the
//! replay options as resolved ([`ReplaySpec`]), and [`attach`], which takes the log once it is
//! read and makes the job what the log does: the log's files become the job's files (or the
//! one `replay_redirect` names), its reads, writes and trims set the job's direction, I/O
//! sizes and how far each file must reach, and its times are scaled into a schedule. Pure:
//! `files::replay` reads the log; the runner replays the schedule.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::job::{BlockSizes, JobSpec, RwMode, TargetSpec};
use crate::trace::iolog::{Action, Op, Trace};

/// The replay options of one job (clone).
#[derive(Debug, Clone, PartialEq)]
pub struct ReplaySpec {
    /// This clone's log (`-`: standard input); `read_iolog=A:B` gives clones A, B, A, …
    pub log: PathBuf,
    /// `replay_no_stall`: as fast as the queue allows, in order.
    pub no_stall: bool,
    /// `replay_time_scale`: percent of the recorded rate.
    pub time_scale: u32,
    /// `replay_redirect`: every I/O onto this file.
    pub redirect: Option<PathBuf>,
    /// `replay_scale`: offsets divided by this.
    pub scale: u64,
    /// `replay_align`: offsets rounded down to a multiple of this power of two (0: as logged).
    pub align: u64,
    /// `replay_skip`: actions left out (read, write, trim, sync).
    pub skip: Skip,
    /// `directory`: where the log's relative file names are.
    pub directory: Option<PathBuf>,
    /// The schedule, once the log is read and attached.
    pub schedule: Option<Arc<Schedule>>,
}

/// The kinds of action `replay_skip` leaves out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Skip {
    pub read: bool,
    pub write: bool,
    pub trim: bool,
    /// sync, datasync and sync_file_range.
    pub sync: bool,
}

impl Skip {
    fn skips(&self, a: Action) -> bool {
        match a {
            Action::Read => self.read,
            Action::Write => self.write,
            Action::Trim => self.trim,
            Action::Sync | Action::Datasync | Action::SyncFileRange => self.sync,
            Action::Wait => false,
        }
    }
}

/// What the replay issues: the log's actions in order, each `t_us` now the microseconds after
/// the replay's first action when it is due (scaled by `replay_time_scale`; 0 throughout with
/// `replay_no_stall` or a version 2 log), `file` an index into the job's files, offsets scaled
/// and aligned. A version 2 `wait` keeps its milliseconds (fio does not scale them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    pub ops: Vec<Op>,
    /// Per job file, the furthest byte its reads and writes reach.
    pub extents: Vec<u64>,
    /// Bytes the reads, writes and trims move.
    pub bytes: u64,
    /// The log's version (2 or 3).
    pub version: u8,
}

/// Why a log cannot be replayed by its job.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    #[error("{log} has no reads, writes or trims to replay{}", if *.skipped { " (after replay_skip)" } else { "" })]
    NothingToReplay { log: String, skipped: bool },
}

/// Makes `job` replay `trace` (see the module's description); returns what the log and the
/// replay say (fio's skipped lines, ignored options).
pub fn attach(job: &mut JobSpec, trace: &Trace) -> Result<Vec<String>, ReplayError> {
    let spec = job.replay.clone().expect("a replaying job");
    let mut notes = trace.notes.clone();
    let paths: Vec<PathBuf> = match &spec.redirect {
        Some(r) => vec![r.clone()],
        None => trace
            .files
            .iter()
            .map(|f| located(f, spec.directory.as_deref()))
            .collect(),
    };
    let schedule = schedule(&spec, trace, paths.len());
    let Some(lens) = shape(job, &schedule) else {
        return Err(ReplayError::NothingToReplay {
            log: crate::rawpath::display(&spec.log).to_string(),
            skipped: spec.skip != Skip::default(),
        });
    };
    let reach = schedule.extents.iter().copied().max().unwrap_or(0);
    job.sizes = lens.map(|l| match l {
        Some((lo, hi)) if lo == hi => BlockSizes::Fixed(lo),
        Some((min, max)) => BlockSizes::Range { min, max },
        None => BlockSizes::Fixed(4096),
    });
    // The smallest data I/O (trims move no data): offsets and sizes are the log's own.
    job.bs = lens[0]
        .into_iter()
        .chain(lens[1])
        .map(|l| l.0)
        .min()
        .or(lens[2].map(|l| l.0))
        .unwrap_or(4096);
    let reach = reach.max(job.bs);
    job.size = Some(reach.div_ceil(job.bs) * job.bs * paths.len() as u64);
    (job.offset, job.size_pct, job.offset_pct, job.io_bytes) = (0, None, None, None);
    job.nrfiles = paths.len() as u32;
    job.target = TargetSpec::Files(paths);
    if job.timing.loops > 1 {
        notes.push(format!(
            "{}: a replay plays its log once, as fio's does (loops={} ignored)",
            job.name, job.timing.loops
        ));
        job.timing.loops = 1;
    }
    job.replay.as_mut().expect("a replaying job").schedule = Some(Arc::new(schedule));
    Ok(notes)
}

/// The log's actions as the replay options make them (skipped, redirected, offsets scaled and
/// aligned, times scaled from the first action), with each file's reach and the bytes moved.
fn schedule(spec: &ReplaySpec, trace: &Trace, nfiles: usize) -> Schedule {
    let mut ops = Vec::with_capacity(trace.ops.len());
    let mut origin = None;
    for op in &trace.ops {
        if spec.skip.skips(op.action) || (op.action == Action::Wait && spec.no_stall) {
            continue;
        }
        let mut op = *op;
        if spec.redirect.is_some() {
            op.file = 0;
        }
        if op.action != Action::Wait {
            op.offset /= spec.scale;
            if spec.align > 1 {
                op.offset &= !(spec.align - 1);
            }
            // The first action sets the schedule's zero, as fio's first delay is nothing;
            // times before it are issued at once.
            let t0 = *origin.get_or_insert(op.t_us);
            op.t_us = if spec.no_stall {
                0
            } else {
                ((u128::from(op.t_us.saturating_sub(t0)) * 100) / u128::from(spec.time_scale))
                    as u64
            };
        }
        ops.push(op);
    }
    let mut extents = vec![0u64; nfiles];
    let mut bytes = 0u64;
    for op in ops.iter().filter(|o| o.action.is_io()) {
        bytes = bytes.saturating_add(op.len);
        if op.action != Action::Trim {
            let e = &mut extents[op.file as usize];
            *e = (*e).max(op.offset + op.len);
        }
    }
    Schedule {
        ops,
        extents,
        bytes,
        version: trace.version,
    }
}

/// Sets the job's direction from what the schedule does and returns the smallest and largest
/// read, write and trim; `None` when it has none of them.
fn shape(job: &mut JobSpec, schedule: &Schedule) -> Option<[Option<(u64, u64)>; 3]> {
    let mut lens: [Option<(u64, u64)>; 3] = [None; 3];
    for op in &schedule.ops {
        let d = match op.action {
            Action::Read => 0,
            Action::Write => 1,
            Action::Trim => 2,
            _ => continue,
        };
        let l = &mut lens[d];
        *l = Some(l.map_or((op.len, op.len), |(lo, hi)| {
            (lo.min(op.len), hi.max(op.len))
        }));
    }
    let [reads, writes, trims] = lens.map(|l| l.is_some());
    job.rw = match (reads, writes || trims) {
        (false, false) => return None,
        (true, true) => RwMode::ReadWrite,
        (true, false) => RwMode::Read,
        (false, true) => RwMode::Write,
    };
    Some(lens)
}

impl JobSpec {
    /// How far into its file `i` (of [`JobSpec::paths`]) the job's I/O reaches: a replay's
    /// furthest read or write there, else the region's end.
    pub fn extent(&self, i: usize) -> u64 {
        match self.replay.as_ref().and_then(|r| r.schedule.as_ref()) {
            Some(s) => s.extents.get(i).copied().unwrap_or(0),
            None => self.offset.saturating_add(self.per_file_bytes()),
        }
    }
}

/// A log's file name: relative ones inside `directory` when the job names one (fio's).
fn located(name: &str, directory: Option<&Path>) -> PathBuf {
    let p = crate::rawpath::path(name);
    match directory {
        Some(d) if !name.starts_with('/') => d.join(p),
        _ => p,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::iolog::parse;

    fn job(options: &[(&str, &str)]) -> JobSpec {
        let mut s = crate::plan::Section::new("r");
        for (k, v) in options {
            s.set(k, v, crate::plan::Origin::Cli);
        }
        let plan = crate::plan::resolve(&[s], false).unwrap();
        plan.groups[0].jobs[0].clone()
    }

    const LOG: &str = "fio version 3 iolog\n0 a add\n0 b add\n100 a write 8192 4096\n\
                       300 b read 0 512\n500 a sync 0 0\n700 a trim 1000000 65536\n\
                       900 b read 65536 1024\n";

    #[test]
    fn the_log_sets_the_files_direction_sizes_reach_and_schedule() {
        let mut j = job(&[("read_iolog", "x.log"), ("directory", "/d")]);
        let notes = attach(&mut j, &parse(LOG.as_bytes()).unwrap()).unwrap();
        assert!(notes.is_empty());
        assert_eq!(
            j.target,
            TargetSpec::Files(vec!["/d/a".into(), "/d/b".into()])
        );
        assert_eq!(j.rw, RwMode::ReadWrite);
        assert_eq!(j.bs, 512);
        assert_eq!(
            j.sizes,
            [
                BlockSizes::Range {
                    min: 512,
                    max: 1024
                },
                BlockSizes::Fixed(4096),
                BlockSizes::Fixed(65536)
            ]
        );
        let s = j.replay.as_ref().unwrap().schedule.clone().unwrap();
        assert_eq!(s.extents, [12288, 66560]);
        assert_eq!(s.bytes, 4096 + 512 + 65536 + 1024);
        // Large enough for the furthest file, in whole smallest I/Os.
        assert_eq!(j.per_file_bytes(), 66560);
        let times: Vec<u64> = s.ops.iter().map(|o| o.t_us).collect();
        assert_eq!(times, [0, 200, 400, 600, 800]);
    }

    #[test]
    fn scale_align_redirect_skip_and_time_scale_change_what_is_replayed() {
        let mut j = job(&[
            ("read_iolog", "x.log"),
            ("replay_redirect", "/dev/shm/one"),
            ("replay_scale", "2"),
            ("replay_align", "4k"),
            ("replay_skip", "trim,sync"),
            ("replay_time_scale", "200"),
        ]);
        attach(&mut j, &parse(LOG.as_bytes()).unwrap()).unwrap();
        assert_eq!(j.target, TargetSpec::Files(vec!["/dev/shm/one".into()]));
        let s = j.replay.as_ref().unwrap().schedule.clone().unwrap();
        let got: Vec<_> = s
            .ops
            .iter()
            .map(|o| (o.t_us, o.file, o.action, o.offset))
            .collect();
        assert_eq!(
            got,
            [
                (0, 0, Action::Write, 4096),
                (100, 0, Action::Read, 0),
                (400, 0, Action::Read, 32768)
            ]
        );
        let mut j = job(&[("read_iolog", "x.log"), ("replay_no_stall", "1")]);
        attach(&mut j, &parse(LOG.as_bytes()).unwrap()).unwrap();
        let s = j.replay.as_ref().unwrap().schedule.clone().unwrap();
        assert!(s.ops.iter().all(|o| o.t_us == 0));
    }

    #[test]
    fn writes_and_trims_only_make_a_write_job_and_nothing_to_replay_is_refused() {
        let log = "fio version 3 iolog\n0 /dev/null add\n5 /dev/null trim 0 2147483648\n\
                   9 /dev/null write 0 4096\n";
        let mut j = job(&[("read_iolog", "x.log"), ("loops", "3")]);
        let notes = attach(&mut j, &parse(log.as_bytes()).unwrap()).unwrap();
        assert_eq!(j.rw, RwMode::Write);
        assert_eq!(j.timing.loops, 1);
        assert_eq!(notes.len(), 1, "{notes:?}");
        // Trims move no data: the buffers are the writes' size.
        assert_eq!(j.max_xfer(), 4096);
        let mut j = job(&[("read_iolog", "x.log"), ("replay_skip", "write,trim")]);
        let e = attach(&mut j, &parse(log.as_bytes()).unwrap()).unwrap_err();
        assert!(e.to_string().contains("no reads, writes or trims"), "{e}");
    }
}
