//! `read_iolog` and the `replay_*` options: the job replays a log instead of generating I/O.
//! Here the options are read and checked; the log itself is read and attached before the
//! files are checked (`files::replay`, `plan::replay::attach`).

use std::path::PathBuf;

use super::values::Values;
use crate::plan::replay::{ReplaySpec, Skip};
use crate::plan::{JobSpec, SpecError, value};
use crate::rawpath;

/// The job's replay, if it names a log (with each clone's log: `read_iolog=A:B` gives clone
/// `i` the log `i % 2`, as fio's).
pub(super) fn replay(
    v: &Values<'_>,
    spec: &JobSpec,
) -> Result<Option<(ReplaySpec, Vec<PathBuf>)>, SpecError> {
    let no_stall = v.bool("replay_no_stall")?;
    let time_scale = v.int("replay_time_scale")?.unwrap_or(100) as u32;
    let scale = v.int("replay_scale")?.unwrap_or(1);
    let align = v.size("replay_align", &mut Vec::new())?.unwrap_or(0);
    let redirect = v.text("replay_redirect").map(|t| t.0);
    let skip = v.parsed("replay_skip", parse_skip)?.unwrap_or_default();
    let Some((logs, _)) = v.text("read_iolog") else {
        for o in [
            "replay_no_stall",
            "replay_time_scale",
            "replay_scale",
            "replay_align",
            "replay_redirect",
            "replay_skip",
        ] {
            if v.given(o) {
                return Err(v.error(
                    o,
                    "applies only to a replay: name the log with read_iolog".into(),
                ));
            }
        }
        return Ok(None);
    };
    let logs: Vec<PathBuf> = value::split_filenames(&logs)
        .iter()
        .map(|l| rawpath::path(l))
        .collect();
    if logs.is_empty() || logs.iter().any(|l| l.as_os_str().is_empty()) {
        return Err(v.error(
            "read_iolog",
            "expected a log file (or FILE1:FILE2 …)".into(),
        ));
    }
    if align > 0 && !align.is_power_of_two() {
        return Err(v.error(
            "replay_align",
            format!("{align} is not a power of two (fio's rule)"),
        ));
    }
    if redirect.as_deref() == Some("") {
        return Err(v.error("replay_redirect", "expected a file or device".into()));
    }
    refuse_with(v, spec)?;
    let replay = ReplaySpec {
        log: logs[0].clone(),
        no_stall,
        time_scale,
        redirect: redirect.map(|r| rawpath::path(&r)),
        scale,
        align,
        skip,
        directory: v.text("directory").map(|t| rawpath::path(&t.0)),
        schedule: None,
    };
    Ok(Some((replay, logs)))
}

/// Gives each clone its log.
pub(super) fn per_clone(jobs: &mut [JobSpec], logs: &[PathBuf]) {
    for j in jobs {
        if let Some(r) = j.replay.as_mut() {
            r.log = logs[j.clone as usize % logs.len()].clone();
        }
    }
}

/// What a replay cannot be combined with: the log decides offsets and sizes alone.
fn refuse_with(v: &Values<'_>, spec: &JobSpec) -> Result<(), SpecError> {
    if spec.verify.is_some() {
        return Err(v.error(
            "verify",
            "verifying a replay's writes is not supported: replay the log without verify, or \
             verify with a generated workload"
                .into(),
        ));
    }
    if spec.numpages > 1 {
        return Err(v.error(
            "numpages",
            "a replay issues each I/O of its log at the log's size; numpages must be 1".into(),
        ));
    }
    if spec.zones.is_some() {
        return Err(v.error(
            "zonemode",
            "a replay's offsets are the log's; zones cannot place them".into(),
        ));
    }
    Ok(())
}

fn parse_skip(t: &str) -> Result<Skip, value::ValueError> {
    let mut s = Skip::default();
    for w in t.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        match w {
            "read" => s.read = true,
            "write" => s.write = true,
            "trim" => s.trim = true,
            "sync" => s.sync = true,
            _ => {
                return Err(value::ValueError::Syntax(
                    "a comma list of read, write, trim and sync",
                ));
            }
        }
    }
    Ok(s)
}
