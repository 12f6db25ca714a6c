//! What a run's outputs need: the default report name, log files checked and written, a
//! report to a file or stdout, a saved report read back, and the live status line.

use std::io::Write;
use std::process::ExitCode;

use iogauge::files::named;
use iogauge::plan::{self};
use iogauge::report::{self};
use iogauge::result::RunReport;
use iogauge::runner::{self, Event};
use iogauge::studies::Report;
use iogauge::units::human_bytes;
use iogauge::{err, errln};

/// "iogauge-20261121-121858": the default name of a run's report files.
pub(crate) fn default_stem(unix_s: u64) -> String {
    let (y, m, d) = iogauge::units::civil_from_days((unix_s / 86_400) as i64);
    let s = unix_s % 86_400;
    format!(
        "iogauge-{y:04}{m:02}{d:02}-{:02}{:02}{:02}",
        s / 3600,
        s % 3600 / 60,
        s % 60
    )
}

/// Refuses, before anything runs, log files that may not be written: in a missing directory,
/// through a link, or over a file iogauge did not write (without `--overwrite-output`).
pub(crate) fn check_log_files(
    plan: &plan::Plan,
    (replace, aggregate): (bool, bool),
) -> Result<(), super::Failure> {
    if aggregate {
        for name in report::log::AGGREGATE_LOGS {
            named::check_output(&iogauge::rawpath::path(name), replace)
                .map_err(|e| super::Failure::Usage(format!("log file {name}: {e}")))?;
        }
    }
    let jobs = plan.groups.iter().flat_map(|g| &g.jobs);
    let mut iologs: Vec<(&str, String)> = Vec::new();
    for (i, job) in jobs.enumerate() {
        if let Some(name) = &job.logs.iolog {
            let me = format!("{}.{}", job.name, job.clone);
            if let Some((_, other)) = iologs.iter().find(|(n, _)| n == name) {
                return Err(super::Failure::Usage(format!(
                    "{}={name}: jobs {other} and {me} would both write it; give each job its \
                     own file (an I/O log is one job's I/O, in order)",
                    job.label("write_iolog")
                )));
            }
            iologs.push((name, me));
        }
        for name in job.logs.files(i + 1) {
            named::check_output(&iogauge::rawpath::path(&name), replace)
                .map_err(|e| super::Failure::Usage(format!("log file {name}: {e}")))?;
        }
    }
    Ok(())
}

/// Writes the fio-format logs the jobs asked for; true when one could not be written.
pub(crate) fn write_logs(report: &RunReport, replace: bool) -> bool {
    write_log_files(report::log::render(report), replace)
}

/// Writes each log (name, text), compressed where its name says `.fz`; true when one could not
/// be written.
fn write_log_files(logs: Vec<(String, String)>, replace: bool) -> bool {
    let mut failed = false;
    for (name, text) in logs {
        let bytes = report::log::encoded(&name, &text);
        if let Err(e) = write_when_read(&iogauge::rawpath::path(&name), &bytes, replace) {
            errln!("iogauge: cannot write log {name}: {e}");
            failed = true;
        }
    }
    failed
}

/// The per-I/O logs of a run's jobs (log_avg_msec=0), written as the run ends; a job whose
/// log reached its cap says so in `warnings`. `true` when one could not be written.
pub(crate) fn write_io_logs(
    outcome: &iogauge::runner::RunOutcome,
    (replace, aggregate): (bool, bool),
    warnings: &mut Vec<String>,
) -> bool {
    let jobs: Vec<&iogauge::runner::JobOutcome> = outcome.groups.iter().flatten().collect();
    let samples: Vec<report::log::JobSamples> = jobs
        .iter()
        .enumerate()
        .map(|(i, j)| report::log::JobSamples {
            n: i + 1,
            logs: &j.spec.logs,
            samples: &j.io_log.0,
        })
        .collect();
    for j in jobs.iter().filter(|j| j.io_log.1 > 0) {
        warnings.push(format!(
            "job {}.{}: its per-I/O log keeps the first {} I/Os (the logging jobs' share of a \
             quarter of the memory available); {} more were not logged (set log_avg_msec for \
             window means)",
            j.spec.name,
            j.spec.clone,
            j.io_log.0.len(),
            j.io_log.1
        ));
    }
    let mut failed = write_iologs(&jobs, replace, warnings);
    if aggregate {
        let each: Vec<_> = jobs
            .iter()
            .map(|j| (j.stats.window_ns, &j.stats.dirs))
            .collect();
        failed |= write_log_files(report::log::aggregate_bw(&each), replace);
    }
    failed | write_log_files(report::log::per_io(&samples), replace)
}

/// fio's I/O logs (`write_iolog`) of the jobs that asked for one; `true` when one could not
/// be written.
fn write_iologs(
    jobs: &[&iogauge::runner::JobOutcome],
    replace: bool,
    warnings: &mut Vec<String>,
) -> bool {
    let mut failed = false;
    for j in jobs {
        let Some(name) = &j.spec.logs.iolog else {
            continue;
        };
        let (entries, dropped) = &j.iolog;
        if *dropped > 0 {
            warnings.push(format!(
                "job {}.{}: its I/O log ({name}) keeps the first {} lines (the logging jobs' \
                 share of a quarter of the memory available); {dropped} more were not logged",
                j.spec.name,
                j.spec.clone,
                entries.len()
            ));
        }
        let files: Vec<String> = j
            .spec
            .io_paths()
            .iter()
            // fio names a file in the working directory without "./".
            .map(|p| iogauge::rawpath::display(p.strip_prefix(".").unwrap_or(p)).into_owned())
            .collect();
        let end_us = entries.last().map_or(0, |e| e.t_us);
        let text = report::log::iolog(&files, entries, end_us);
        if let Err(e) = write_when_read(&iogauge::rawpath::path(name), text.as_bytes(), replace) {
            errln!("iogauge: cannot write the I/O log {name}: {e}");
            failed = true;
        }
    }
    failed
}

/// The largest saved report read back: a day-long run's series is a few MiB.
pub(crate) const MAX_REPORT_BYTES: u64 = 1 << 30;
pub(crate) const REPORT_CAP_WHY: &str = "a report's series is a few MiB even for a day-long run";

/// Writes a rendered report to `output` (or stdout).
pub(crate) fn emit(out: &str, output: Option<&std::path::Path>, replace: bool) -> ExitCode {
    let written = match output {
        Some(p) => write_when_read(p, out.as_bytes(), replace),
        None => iogauge::out::stdout_bytes(out.as_bytes()),
    };
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            errln!("iogauge: cannot write the report: {e}");
            ExitCode::from(1)
        }
    }
}

/// Writes an output the user named, as [`named::write_output`] does, but where it is a
/// FIFO nothing reads yet (`gzip < fifo` started later) waits for a reader and says so, rather
/// than lose the output: a stop (Ctrl-C) that comes during the wait gives up; one that came
/// before it leaves the wait to the second, which ends iogauge.
pub(crate) fn write_when_read(
    path: &std::path::Path,
    bytes: &[u8],
    replace: bool,
) -> std::io::Result<()> {
    let stop = &super::signals().interrupt;
    let stopped_before = stop.load(std::sync::atomic::Ordering::SeqCst);
    let waiting = || {
        errln!(
            "iogauge: waiting for a program to read the FIFO {}: nothing reads it yet, and what \
             it gets is written nowhere else (Ctrl-C gives up)",
            iogauge::rawpath::display(path)
        )
    };
    let give_up = || !stopped_before && stop.load(std::sync::atomic::Ordering::SeqCst);
    named::write_output_when_read(path, bytes, replace, &waiting, &give_up)
}

/// Whether stdout and stderr are one file (a terminal, or `&>` into one file).
pub(crate) fn stdout_is_stderr() -> bool {
    let (Ok(a), Ok(b)) = (
        iogauge::platform::sys::fs::fstat(std::io::stdout()),
        iogauge::platform::sys::fs::fstat(std::io::stderr()),
    ) else {
        return false;
    };
    (a.st_dev, a.st_ino, a.st_rdev) == (b.st_dev, b.st_ino, b.st_rdev)
}

/// A running group's figures so far, in one line.
pub(crate) fn progress_text(p: &runner::Progress) -> String {
    let secs = p.elapsed.as_secs_f64().max(1e-9);
    format!(
        "group {}/{}: {:>3.0}% done  {:.1} MiB/s  {:.0} IOPS  {} moved  ETA {}",
        p.group + 1,
        p.groups,
        p.done * 100.0,
        p.bytes as f64 / secs / 1048576.0,
        p.ios as f64 / secs,
        human_bytes(p.bytes),
        p.eta
            .map_or("?".into(), |d| format!("{:.0} s", d.as_secs_f64()))
    )
}

pub(crate) fn status_line(ev: &Event) {
    let line = match ev {
        Event::Preparing { group } => format!("group {}: preparing files…", group + 1),
        Event::Progress(p) => progress_text(p),
        Event::GroupDone { .. }
        | Event::LaidOut { .. }
        | Event::Ready { .. }
        | Event::Tick { .. } => return,
    };
    err!("\r\x1b[2K{line}");
    let _ = std::io::stderr().flush();
}

/// The report of a sweep's first point that ran (how the sweep was measured, for its page).
pub(crate) fn first_point_report(
    dir: &std::path::Path,
    index: &iogauge::studies::sweep::Index,
) -> Option<Report> {
    index
        .points
        .iter()
        .filter_map(|p| p.report.as_ref())
        .find_map(|r| {
            let t = named::read_input_text(&dir.join(r), MAX_REPORT_BYTES, REPORT_CAP_WHY).ok()?;
            report::saved(&t).ok()
        })
}
