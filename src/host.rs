//! How a run was measured: the host (kernel, CPU, memory) and each target's file system, mount
//! options and block device. The types are the report's; the platform reads them (`/proc` and
//! `/sys` on Linux, the Win32 API on Windows). Read-only, best effort: a field that cannot be
//! read is left empty rather than failing the run.

use std::path::Path;

pub use crate::platform::{Device, Host, Memory, Space, TargetInfo};

/// The machine: its name, kernel, CPU and memory.
pub fn host() -> Host {
    crate::platform::host::host()
}

/// Describes `path` (or, if it is gone or not yet created, the directory holding it).
pub fn describe(path: &Path) -> TargetInfo {
    crate::platform::host::describe(path)
}

/// [`describe`] for each of `paths`, what they share (the mount table, a device) read once.
pub fn describe_all<'a>(paths: impl Iterator<Item = &'a Path>) -> Vec<TargetInfo> {
    crate::platform::host::describe_all(paths)
}

/// The space of the file system holding `dir`.
pub fn space(dir: &Path) -> std::io::Result<Space> {
    crate::platform::host::space(dir)
}

/// The machine's memory and page size.
pub fn memory() -> Memory {
    crate::platform::host::memory()
}
