//! `file_service_type` as a job sets it: `roundrobin`, `sequential` or `random`, each with
//! an optional `:N` (I/Os before moving to another file; fio's default 1), or a distribution
//! over the files, `zipf`, `pareto` or `normal` (`gauss`), with fio's optional parameter and
//! its defaults and ranges (zipf 1.1, not 1; pareto 0.2, between 0 and 1; normal 0, below
//! 100). The combinations whose order the workload keeps another way (several block sizes,
//! a sequential gap, zones, a skewed random_distribution) are refused.

use super::values::Values;
use crate::plan::SpecError;
use crate::plan::job::*;
use crate::plan::value::ValueError;
use crate::plan::workload::{FileService, ServiceKind};

const TAKES: &str = "roundrobin, sequential or random, each with an optional :N (I/Os per \
                     turn, at least 1), or zipf[:THETA[:CENTER]], pareto[:H[:CENTER]], \
                     normal[:DEV[:CENTER]] (gauss)";

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
        k @ ("zipf" | "pareto" | "normal" | "gauss") => return distribution(k, n),
        _ => return Err(ValueError::Syntax(TAKES)),
    };
    let per_turn = match n {
        None => 1,
        Some(n) => match n.trim().parse::<u64>() {
            Ok(n) if n >= 1 => n,
            _ => return Err(ValueError::Syntax(TAKES)),
        },
    };
    Ok(FileService {
        kind,
        per_turn,
        center: None,
    })
}

/// A distribution over the files with fio's parameter (its default where none is given).
fn distribution(kind: &str, param: Option<&str>) -> Result<FileService, ValueError> {
    let (default, valid): (f64, fn(f64) -> bool) = match kind {
        "zipf" => (1.1, |t| t > 0.0 && t != 1.0),
        "pareto" => (0.2, |h| h > 0.0 && h < 1.0),
        _ => (0.0, |d| (0.0..100.0).contains(&d)),
    };
    const TAKES: &str = "zipf:THETA (above 0, not 1), pareto:H (between 0 and 1) or \
                         normal:DEV (0 to below 100), each with an optional :CENTER (0 to 1)";
    // fio's VALUE[:CENTER].
    let (value, center) = match param.map(|p| p.split_once(':')) {
        Some(Some((v, c))) => (Some(v), Some(c)),
        _ => (param, None),
    };
    let x = match value {
        None => default,
        Some(p) => match p.trim().parse::<f64>() {
            Ok(x) if valid(x) => x,
            _ => return Err(ValueError::Syntax(TAKES)),
        },
    };
    let center = match center.map(|c| c.trim().parse::<f64>()) {
        None => None,
        Some(Ok(c)) if (0.0..=1.0).contains(&c) => Some(c),
        Some(_) => return Err(ValueError::Syntax(TAKES)),
    };
    let kind = match kind {
        "zipf" => ServiceKind::Zipf(x),
        "pareto" => ServiceKind::Pareto(x),
        _ => ServiceKind::Normal(x),
    };
    Ok(FileService {
        kind,
        per_turn: 1,
        center,
    })
}

/// The job's file service, checked against what the workload can order that way.
pub(super) fn file_service(v: &Values<'_>, spec: &JobSpec) -> Result<FileService, SpecError> {
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
