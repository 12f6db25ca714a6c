//! `iogauge predict (TRACE | JOBFILE) [--directory DIR] [--repeat N] [--json]`: the command
//! line of a prediction.

use std::path::PathBuf;

use clap::{Arg, ArgAction, ArgMatches, Command};

use super::tool::{text_or_json_arg, wants_json};
use super::{Request, UsageError};
use crate::rawpath;
use crate::trace::capture::Method;

/// `iogauge predict`.
#[derive(Debug)]
pub struct PredictRequest {
    /// A trace `record` wrote, or a fio job file (recorded first, as iogauge runs it).
    pub source: PathBuf,
    /// The storage predicted for: where the replays run.
    pub directory: PathBuf,
    pub repeat: u32,
    pub json: bool,
    /// A job file: where it is run to be recorded (in a directory of its own, removed).
    pub record_directory: PathBuf,
    pub method: Method,
}

/// Most replays one prediction runs.
const MAX_REPEAT: u32 = 100;

pub fn predict_command() -> Command {
    Command::new("predict")
        .about("Predict how long a recorded program (or a fio job file) would run on other storage, replaying its I/O there, with an error bound")
        .arg(
            Arg::new("source")
                .value_name("TRACE|JOBFILE")
                .required(true)
                .help("A trace 'iogauge record' wrote, or a fio job file (recorded first, as 'iogauge fio' runs it)"),
        )
        .arg(
            Arg::new("directory")
                .long("directory")
                .value_name("DIR")
                .default_value(".")
                .help("The storage to predict for: the replays run in a directory of their own here (removed at the end)"),
        )
        .arg(
            Arg::new("repeat")
                .long("repeat")
                .value_name("N")
                .default_value("3")
                .help("Replays to run (1-100); the prediction is their median and their spread is in the bound"),
        )
        .arg(text_or_json_arg())
        .arg(
            Arg::new("json")
                .long("json")
                .action(ArgAction::SetTrue)
                .help("The same as --output-format=json"),
        )
        .arg(
            Arg::new("record-directory")
                .long("record-directory")
                .value_name("DIR")
                .default_value(".")
                .help_heading("A job file's recording")
                .help("A job file is recorded running here, in a directory of its own (removed at the end)"),
        )
        .arg(super::trace::method_arg().help_heading("A job file's recording"))
        .after_help(
            "Each replay issues the program's calls on copies of its files under --directory, \
             in closed loop: each call its recorded think time after the one before, after the \
             other threads' calls it waited for. The program's run time there is read off the \
             replay (the thread that ends last decides it), less the replay's own delays and the \
             capture's cost left in the think times. The bound adds the replays' spread, the \
             capture's uncertain share and the time of I/O the trace cannot see (libaio and \
             io_uring I/Os it could not read); warnings say where the prediction is weaker than that (reads served from \
             the page cache when recorded, mappings, an incomplete trace).",
        )
}

pub fn predict_request(sm: &ArgMatches) -> Result<Request, UsageError> {
    let text = sm.get_one::<String>("repeat").expect("default");
    let repeat = text
        .parse::<u32>()
        .ok()
        .filter(|n| (1..=MAX_REPEAT).contains(n))
        .ok_or_else(|| {
            UsageError(format!(
                "--repeat={text}: expected a whole number from 1 to {MAX_REPEAT}"
            ))
        })?;
    let path = |name: &str| rawpath::path(sm.get_one::<String>(name).expect("default"));
    let (directory, record_directory) = (path("directory"), path("record-directory"));
    for (name, d) in [
        ("--directory", &directory),
        ("--record-directory", &record_directory),
    ] {
        if !d.is_dir() {
            return Err(UsageError(format!(
                "{name}={}: no such directory",
                rawpath::display(d)
            )));
        }
    }
    Ok(Request::Predict(PredictRequest {
        source: path("source"),
        directory,
        repeat,
        json: sm.get_flag("json") || wants_json(sm),
        record_directory,
        method: sm
            .get_one::<String>("method")
            .expect("default")
            .parse()
            .map_err(UsageError::of)?,
    }))
}
