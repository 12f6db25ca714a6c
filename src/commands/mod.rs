//! One file per subcommand: each turns its request into sections or a plan and hands it to
//! the session pipeline (`crate::session`), then picks its reporter. A new subcommand is a new
//! file here and one line in the door.

use crate::session::usage_exit;

pub(crate) mod assess;
pub(crate) mod fio;
pub(crate) mod job;
pub(crate) mod legacy;
pub(crate) mod predict;
pub(crate) mod quick;
pub(crate) mod record;
pub(crate) mod replay;
pub(crate) mod report;
pub(crate) mod sweep;
pub(crate) mod trace;

/// `--directory` (which must exist) and `--size` (a size, when given) of `quick` and `assess`;
/// `Err`: said, with the exit code.
pub(crate) fn directory_and_size(
    directory: &std::path::Path,
    size: Option<&str>,
) -> Result<Option<u64>, std::process::ExitCode> {
    if !directory.is_dir() {
        return Err(usage_exit(&format!(
            "--directory={}: no such directory",
            directory.display()
        )));
    }
    match size.map(iogauge::plan::value::parse_size) {
        Some(Ok(s)) => Ok(Some(s.bytes)),
        Some(Err(accepted)) => Err(usage_exit(&format!("--size: expected {accepted}"))),
        None => Ok(None),
    }
}
