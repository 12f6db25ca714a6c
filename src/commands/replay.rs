//! `iogauge replay TRACE [--mode closed|open|afap] [--directory DIR] [--speed X]`: a recorded
//! program's I/O issued again on copies of its files, and what it measured.

use std::process::ExitCode;
use std::sync::atomic::Ordering;

use iogauge::cli::ReplayRequest;
use iogauge::runner::replay::{self, Options, ReplayError};
use iogauge::{errln, out, outln, rawpath};

use crate::session::outputs::{default_stem, stdout_is_stderr};
use crate::session::{signals, usage_exit};

pub(crate) fn replay(req: ReplayRequest) -> ExitCode {
    let r = match super::trace::read(&req.trace) {
        Ok(r) => r,
        Err(m) => return usage_exit(&format!("{}: {m}", rawpath::display(&req.trace))),
    };
    let opts = Options {
        mode: req.mode,
        speed: req.speed,
        directory: req.directory.clone(),
        name: format!(
            "{}.replay",
            default_stem(iogauge::units::unix_ns() / 1_000_000_000)
        ),
    };
    remove_leftovers(&req.directory, "replay");
    // From here files exist: the first signal stops the replay cleanly, a second removes them
    // and exits.
    let s = signals();
    s.idle.store(false, Ordering::SeqCst);
    let name = rawpath::display(&req.trace).to_string();
    let report = match replay::replay(&r, &name, &opts, std::sync::Arc::clone(&s.interrupt)) {
        Ok(rep) => rep,
        Err(ReplayError::Usage(m)) => return usage_exit(&m),
        Err(ReplayError::Stopped) => {
            errln!("iogauge: replay: {}", ReplayError::Stopped);
            return ExitCode::from(128u8.saturating_add(s.which.load(Ordering::SeqCst) as u8));
        }
        Err(ReplayError::Failed(m)) => {
            errln!("iogauge: replay: {m}");
            return ExitCode::from(1);
        }
    };
    if req.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&report).expect("plain data")
        );
    } else {
        out!("{}", iogauge::report::trace::replay_text(&report));
    }
    if let Some(why) = &report.not_removed {
        if req.json || !stdout_is_stderr() {
            errln!(
                "iogauge: replay: {}",
                iogauge::report::trace::not_removed_text(&report.directory, why)
            );
        }
    }
    if let Some(f) = &report.storage_failed {
        // In the text report already, where that is on the terminal.
        if req.json || !stdout_is_stderr() {
            errln!(
                "iogauge: replay: {}",
                iogauge::report::trace::storage_failed_text(f)
            );
        }
        return ExitCode::from(1);
    }
    if report.stopped {
        let sig = s.which.load(Ordering::SeqCst);
        return ExitCode::from(128u8.saturating_add(sig as u8));
    }
    if report.not_removed.is_some() {
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

/// Removes the directories earlier replays (or predictions) made in `dir` and left, killed
/// before their end, saying so: what was left there is iogauge's and the user's room.
pub(super) fn remove_leftovers(dir: &std::path::Path, command: &str) {
    for (path, found) in replay::layout::leftovers(dir) {
        errln!(
            "iogauge: {command}: {}",
            iogauge::report::trace::leftover_text(&path, &found)
        );
    }
}
