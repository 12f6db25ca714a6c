//! `iogauge quick`: four short tests of a directory (sequential write and read, random read
//! and write), summarised.

use std::process::ExitCode;

use iogauge::cli::ToolOptions;
use iogauge::{plan, profiles};

use crate::session::{execute, usage_exit};

pub(crate) fn quick(
    args: &[String],
    directory: &std::path::Path,
    size: Option<String>,
    seconds: u64,
    tool: ToolOptions,
) -> ExitCode {
    if !directory.is_dir() {
        return usage_exit(&format!(
            "--directory={}: no such directory",
            directory.display()
        ));
    }
    let size = match size.as_deref().map(plan::value::parse_size) {
        Some(Ok(s)) => s.bytes,
        Some(Err(accepted)) => return usage_exit(&format!("--size: expected {accepted}")),
        None => profiles::quick_size(directory),
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
        Some(&profiles::QUICK_LABELS),
        Vec::new(),
        None,
    )
}
