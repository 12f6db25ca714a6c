//! `iogauge quick`: four short tests of a directory (sequential write and read, random read
//! and write), summarised.

use std::process::ExitCode;

use iogauge::cli::ToolOptions;
use iogauge::profiles;

use crate::session::{Reporting, execute, usage_exit};

pub(crate) fn quick(
    args: &[String],
    directory: &std::path::Path,
    size: Option<String>,
    seconds: u64,
    tool: ToolOptions,
) -> ExitCode {
    let size = match super::directory_and_size(directory, size.as_deref()) {
        Ok(s) => s.unwrap_or_else(|| profiles::quick_size(directory)),
        Err(code) => return code,
    };
    if size < 1 << 20 {
        return usage_exit(&format!(
            "--size={size}: the quick check needs at least 1 MiB (is {} nearly full?)",
            directory.display()
        ));
    }
    let sections = profiles::quick_check(directory, size, seconds);
    execute(
        args,
        sections,
        true,
        tool,
        Reporting::Iogauge(Some(&profiles::QUICK_LABELS)),
        Vec::new(),
        None,
    )
}
