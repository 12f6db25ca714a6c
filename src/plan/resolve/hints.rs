//! fio's `write_hint`: the write lifetime hint a writing job puts on its files' inodes
//! (fcntl F_SET_RW_HINT), which the kernel passes with their writes to a device that places
//! data by expected lifetime (NVMe streams, flexible data placement); and fio's
//! `exec_prerun` / `exec_postrun` commands around the job.

use super::values::Values;
use crate::plan::SpecError;

/// The hint's value (RWH_WRITE_LIFE_NONE 1 to RWH_WRITE_LIFE_EXTREME 5), or None when not set.
pub(super) fn write_hint(v: &Values<'_>) -> Result<Option<u64>, SpecError> {
    if !v.given("write_hint") {
        return Ok(None);
    }
    Ok(Some(match v.choice("write_hint")?.as_str() {
        "none" => 1,
        "short" => 2,
        "medium" => 3,
        "long" => 4,
        _ => 5,
    }))
}

/// `exec_prerun` and `exec_postrun`, as given.
pub(super) fn exec_hooks(v: &Values<'_>) -> [Option<String>; 2] {
    ["exec_prerun", "exec_postrun"].map(|o| v.text(o).map(|(c, _)| c))
}
