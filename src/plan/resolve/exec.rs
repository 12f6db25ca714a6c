//! ioengine=exec as a job sets it: the program (required), its arguments split on spaces as
//! fio splits them, with `%r` (the job's runtime in whole seconds) and `%n` (its name) put in,
//! `grace_time` and `std_redirect` (`NAME.stdout` and `NAME.stderr` in the working
//! directory, as fio names them). One program per job: `numjobs` above 1 would run several
//! writing the same output files.

use super::values::Values;
use crate::engine::exec::Program;
use crate::plan::SpecError;
use crate::plan::job::*;

/// The job's program; None for any other engine (an error if one of exec's options is given).
pub(super) fn program(v: &Values<'_>, spec: &JobSpec) -> Result<Option<Program>, SpecError> {
    super::engine::own_options_only(v, spec.engine, EngineKind::Exec)?;
    if spec.engine != EngineKind::Exec {
        return Ok(None);
    }
    let program = v.text("program").map(|(p, _)| p).unwrap_or_default();
    if program.trim().is_empty() {
        return Err(v.error(
            "ioengine",
            "ioengine=exec needs program (the program the job runs)".into(),
        ));
    }
    if v.int("numjobs")?.unwrap_or(1) > 1 {
        return Err(v.error(
            "numjobs",
            "ioengine=exec runs one program per job: give each program a job of its own".into(),
        ));
    }
    let runtime = spec.timing.runtime.map_or(0, |r| r.as_secs()).to_string();
    let arguments = v.text("arguments").map(|(a, _)| a).unwrap_or_default();
    let expanded = arguments.replace("%r", &runtime).replace("%n", &spec.name);
    // fio runs "PROGRAM ARGUMENTS" split on spaces.
    let mut words = program
        .split(' ')
        .chain(expanded.split(' '))
        .filter(|w| !w.is_empty())
        .map(String::from);
    let program = words.next().unwrap_or_default();
    let redirect = v.bool("std_redirect")?.then(|| {
        let at = |ext: &str| std::path::PathBuf::from(format!("{}.{ext}", spec.name));
        (at("stdout"), at("stderr"))
    });
    Ok(Some(Program {
        program,
        args: words.collect(),
        grace: std::time::Duration::from_secs(v.int("grace_time")?.unwrap_or(1)),
        redirect,
    }))
}
