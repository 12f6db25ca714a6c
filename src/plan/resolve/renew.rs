//! `unlink_each_loop`: a size-bounded job with `loops` above one removes its files before
//! each loop after the first and writes them afresh (fio's unlink-then-reopen with O_CREAT),
//! so each loop measures writing into new files (allocation, extent growth) rather than
//! overwriting. Taken only where the renewal is sound: a job that only writes (fio's own run
//! of a reader fails at its second loop with ENOENT), under an engine that does its I/O
//! through a descriptor the worker can point at the new file.

use super::values::Values;
use crate::plan::SpecError;
use crate::plan::job::*;

/// The engines whose I/O goes through a plain file descriptor per file.
const RENEWABLE: &[EngineKind] = &[
    EngineKind::Psync,
    EngineKind::Sync,
    EngineKind::Vsync,
    EngineKind::Pvsync,
    EngineKind::Pvsync2,
    EngineKind::IoUring,
    EngineKind::Libaio,
    EngineKind::Posixaio,
    EngineKind::Splice,
    EngineKind::Falloc,
    EngineKind::Ftruncate,
];

/// Whether the job renews its files each loop; an error where it cannot.
pub(super) fn unlink_each_loop(v: &Values<'_>, spec: &JobSpec) -> Result<bool, SpecError> {
    if !v.bool("unlink_each_loop")? {
        return Ok(false);
    }
    let refuse = |why: String| Err(v.error("unlink_each_loop", why));
    if spec.rw.reads() || spec.verify.is_some() {
        return refuse(format!(
            "rw={}{}: the job reads its files, and every loop after the first would find them \
             removed (fio's run fails there with ENOENT); unlink_each_loop is for jobs that \
             only write",
            spec.rw.as_str(),
            if spec.verify.is_some() {
                " with verify"
            } else {
                ""
            }
        ));
    }
    if !RENEWABLE.contains(&spec.engine) || spec.flags.registerfiles {
        let names: Vec<&str> = RENEWABLE.iter().map(|e| e.as_str()).collect();
        let what = match spec.flags.registerfiles {
            true => "ioengine=io_uring with registerfiles".to_string(),
            false => format!("ioengine={}", spec.engine.as_str()),
        };
        return refuse(format!(
            "not taken with {what}: files are renewed each loop only under engines that do \
             their I/O through a plain descriptor ({})",
            names.join(", ")
        ));
    }
    // One loop, or a time-based job (its single loop runs until the time is up): nothing to
    // renew, as in fio.
    Ok(spec.timing.loops > 1 && !spec.timing.time_based)
}
