//! ioengine=e4defrag as a job sets it: the donor file (`donorname`, required, in the job's
//! directory as fio puts it) and `inplace`. Only writes exist for it (fio fails each read
//! with EINVAL), so a pattern that reads is refused here, before anything runs.

use super::values::Values;
use crate::plan::SpecError;
use crate::plan::job::*;

/// The job's donor file; None for any other engine (an error if donorname or inplace is
/// given with one).
pub(super) fn donor(
    v: &Values<'_>,
    spec: &JobSpec,
) -> Result<Option<std::path::PathBuf>, SpecError> {
    super::engine::own_options_only(v, spec.engine, EngineKind::E4defrag)?;
    if spec.engine != EngineKind::E4defrag {
        return Ok(None);
    }
    let name = v.text("donorname").map(|(n, _)| n).unwrap_or_default();
    if name.trim().is_empty() {
        return Err(v.error(
            "ioengine",
            "ioengine=e4defrag needs donorname (the file whose blocks each write swaps in; \
             iogauge creates it and removes it at the end)"
                .into(),
        ));
    }
    if spec.rw.reads() || spec.rw.trims() {
        return Err(v.error(
            "rw",
            format!(
                "rw={}: ioengine=e4defrag only writes (each write moves the blocks under its \
                 range); use rw=write or rw=randwrite",
                spec.rw.as_str()
            ),
        ));
    }
    // In the job's directory (the first, when it names several), as fio puts it.
    let name = std::path::PathBuf::from(name);
    let dir = v.text("directory").map(|(d, _)| d).unwrap_or_default();
    Ok(Some(
        match dir.split(':').next().filter(|d| !d.is_empty()) {
            Some(dir) if name.is_relative() => std::path::Path::new(dir).join(name),
            _ => name,
        },
    ))
}
