//! fio's file-operation engines (files and directories) as a job sets them: `stat_type`
//! (filestat's and dirstat's own option), the patterns they take (an operation per file, read
//! or write only saying which side of the report counts it, in file order or random), one
//! block per file when no size is given, and the single pass of filedelete, dircreate and
//! dirdelete (a file is deleted, a directory made or removed, once).

use super::values::Values;
use crate::engine::fileops::StatCall;
use crate::plan::SpecError;
use crate::plan::job::*;

/// `stat_type`: the call filestat (or dirstat) measures; an error with any other engine.
pub(super) fn stat_call(v: &Values<'_>, engine: EngineKind) -> Result<StatCall, SpecError> {
    let call = match v.choice("stat_type")?.as_str() {
        "lstat" => StatCall::Lstat,
        "statx" => StatCall::Statx,
        _ => StatCall::Stat,
    };
    if v.given("stat_type") && !matches!(engine, EngineKind::Filestat | EngineKind::Dirstat) {
        return Err(v.error(
            "stat_type",
            format!(
                "applies only to ioengine=filestat or dirstat, not {}",
                engine.as_str()
            ),
        ));
    }
    Ok(call)
}

/// The rules of the file-operation engines, on a job already resolved; and for every job,
/// whether it may create the files that are missing (`allow_file_create`).
pub(super) fn file_ops(
    v: &Values<'_>,
    spec: &mut JobSpec,
    warnings: &mut Vec<String>,
) -> Result<(), SpecError> {
    spec.allow_create = v.bool("allow_file_create")?;
    if !spec.allow_create && spec.engine.creates() {
        return Err(v.error(
            "allow_file_create",
            format!(
                "ioengine={} creates its files: it cannot run without creating them",
                spec.engine.as_str()
            ),
        ));
    }
    if !spec.engine.file_op() {
        return Ok(());
    }
    let engine = spec.engine.as_str();
    if !matches!(
        spec.rw,
        RwMode::Read | RwMode::Write | RwMode::RandRead | RwMode::RandWrite
    ) {
        return Err(v.error(
            "rw",
            format!(
                "ioengine={engine} does one operation per file: rw=read or write (in file \
                 order) or randread or randwrite (in random order) says which side of the \
                 report counts it, as fio counts it"
            ),
        ));
    }
    if spec.gap != 0 || spec.zones.is_some() {
        let option = if spec.gap != 0 { "rw" } else { "zonemode" };
        return Err(v.error(
            option,
            format!("ioengine={engine} does one operation per file: no offsets to skip"),
        ));
    }
    let once = match spec.engine {
        EngineKind::Filedelete => Some(
            "deletes each file once: a second pass would find them \
                                        gone (fio's ends with ENOENT); nrfiles sets the number \
                                        of deletes",
        ),
        EngineKind::Dirdelete => Some(
            "removes each directory once: a second pass would find \
                                       them gone (fio's ends with ENOENT); nrfiles sets the \
                                       number of removals",
        ),
        EngineKind::Dircreate => Some(
            "makes each directory once: a second pass would find \
                                       them there (fio's ends with EEXIST); nrfiles sets the \
                                       number of mkdirs",
        ),
        _ => None,
    };
    if let Some(why) = once.filter(|_| spec.timing.time_based || spec.timing.loops > 1) {
        let option = if spec.timing.time_based {
            "time_based"
        } else {
            "loops"
        };
        return Err(v.error(option, format!("ioengine={} {why}", spec.engine.as_str())));
    }
    if spec.engine == EngineKind::Filecreate && (spec.timing.time_based || spec.timing.loops > 1) {
        warnings.push(
            "ioengine=filecreate creates each file in its first pass; later passes open the \
             files that pass made (as fio's open with O_CREAT finds them), so their operations \
             are opens, not creates"
                .into(),
        );
    }
    if spec.direct {
        warnings.push(format!(
            "direct=1 has no effect with ioengine={engine}: it moves no data"
        ));
    }
    // One operation per file per pass, whatever `size` says of bytes (fio opens each file
    // once, however many blocks it counts in it).
    spec.io_bytes = None;
    if spec.size.is_none() && spec.size_pct.is_none() {
        // One block per file, as fio's filecreate sizes its files.
        let nfiles = spec.paths().len() as u64;
        spec.size = Some(nfiles * spec.xfer());
    }
    Ok(())
}
