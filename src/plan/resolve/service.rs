//! `file_service_type` as a job sets it: `roundrobin`, `sequential` or `random`, each with
//! an optional `:N` (I/Os before moving to another file; fio's default 1). fio's
//! distributions over the files (zipf, pareto, normal, gauss) are refused by name, as are
//! the combinations whose order the workload keeps another way (several block sizes, a
//! sequential gap, zones, a skewed random_distribution).

use super::values::Values;
use crate::plan::SpecError;
use crate::plan::job::*;
use crate::plan::value::ValueError;
use crate::plan::workload::{FileService, ServiceKind};

const TAKES: &str = "roundrobin, sequential or random, each with an optional :N (I/Os per \
                     turn, at least 1)";

/// `file_service_type=KIND[:N]`.
pub(crate) fn parse(text: &str) -> Result<FileService, ValueError> {
    let (kind, n) = match text.trim().split_once(':') {
        Some((k, n)) => (k, Some(n)),
        None => (text.trim(), None),
    };
    let kind = match kind.to_ascii_lowercase().as_str() {
        "roundrobin" => ServiceKind::RoundRobin,
        "sequential" => ServiceKind::Sequential,
        "random" => ServiceKind::Random,
        _ => return Err(ValueError::Syntax(TAKES)),
    };
    let per_turn = match n {
        None => 1,
        Some(n) => match n.trim().parse::<u64>() {
            Ok(n) if n >= 1 => n,
            _ => return Err(ValueError::Syntax(TAKES)),
        },
    };
    Ok(FileService { kind, per_turn })
}

/// The job's file service, checked against what the workload can order that way.
pub(super) fn file_service(v: &Values<'_>, spec: &JobSpec) -> Result<FileService, SpecError> {
    let given = v
        .text("file_service_type")
        .map(|(t, _)| t)
        .unwrap_or_default();
    let kind = given
        .split(':')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if ["zipf", "pareto", "normal", "gauss"].contains(&kind.as_str()) {
        return Err(v.error(
            "file_service_type",
            format!("not supported yet: {kind} (a distribution over the files); {TAKES} are"),
        ));
    }
    let svc = v
        .parsed("file_service_type", parse)?
        .unwrap_or(FileService::ROUND_ROBIN);
    if svc == FileService::ROUND_ROBIN {
        return Ok(svc);
    }
    let clash = if !spec.fixed_size() {
        Some("one block size (not bsrange, bssplit or a size per direction)")
    } else if spec.gap != 0 {
        Some("no gap or backwards step in rw (rw=read:N)")
    } else if spec.zones.is_some() {
        Some("no zonemode")
    } else if !spec.random.distribution.is_uniform() {
        Some("uniform random offsets (random_distribution=random)")
    } else {
        None
    };
    match clash {
        Some(needs) => Err(v.error(
            "file_service_type",
            format!("other than roundrobin needs {needs}"),
        )),
        None => Ok(svc),
    }
}
