//! `iogauge assess`: the profile's tests, then the verdicts in the report.

use std::process::ExitCode;

use crate::session::*;
use iogauge::cli::ToolOptions;
use iogauge::profiles;
use iogauge::studies::Report;

/// `iogauge assess`: the profile's tests, then the verdicts in the report.
pub(crate) fn assess(
    args: &[String],
    for_: &str,
    directory: &std::path::Path,
    size: Option<String>,
    seconds: Option<u64>,
    streams: Option<usize>,
    tool: ToolOptions,
) -> ExitCode {
    let size = match super::directory_and_size(directory, size.as_deref()) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if for_ == "sas" {
        if let Some(n) = seconds {
            return usage_exit(&format!(
                "--seconds={n}: goes with --for=database; the SAS streams move a fixed amount \
                 (iotest.sh's shape): --size sets how much, so how long"
            ));
        }
        let streams = streams.unwrap_or(cores);
        // 2 GiB in all (less where space is short), each stream a whole number of 64 KiB
        // blocks.
        let total = size.unwrap_or_else(|| (profiles::quick_size(directory) * 2).min(2 << 30));
        let per = (total / streams as u64) >> 16 << 16;
        if per == 0 {
            return usage_exit(&format!(
                "--size={total}: too small for {streams} streams of 64 KiB blocks"
            ));
        }
        let sections = profiles::assess_sas(directory, streams, per);
        execute(
            args,
            sections,
            false,
            tool,
            Reporting::Iogauge(Some(&profiles::SAS_LABELS)),
            Vec::new(),
            Some(&move |r: &mut Report| {
                r.assessment = Some(iogauge::studies::assess::sas(r, cores));
            }),
        )
    } else {
        if streams.is_some() {
            return usage_exit("--streams: goes with --for=sas");
        }
        let data = size.unwrap_or_else(|| profiles::quick_size(directory));
        if data < 1 << 20 {
            return usage_exit(&format!(
                "--size={data}: the data file needs at least 1 MiB"
            ));
        }
        let seconds = seconds.unwrap_or(10);
        let sections = profiles::assess_database(directory, (data >> 13) << 13, seconds);
        execute(
            args,
            sections,
            true,
            tool,
            Reporting::Iogauge(Some(&profiles::DATABASE_LABELS)),
            Vec::new(),
            Some(&|r: &mut Report| {
                r.assessment = Some(iogauge::studies::assess::database(r));
            }),
        )
    }
}
