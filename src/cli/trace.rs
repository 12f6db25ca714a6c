//! `iogauge record -- COMMAND…` and `iogauge trace show|stats TRACE`: the command lines of
//! recorded I/O.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Arg, ArgAction, ArgMatches, Command};

use super::tool::{check_output, overwrite_output_arg};
use super::{Request, UsageError};
use crate::rawpath;
use crate::trace::capture::Method;

/// `iogauge record`.
#[derive(Debug)]
pub struct RecordRequest {
    /// The program and its arguments, as the bytes given.
    pub command: Vec<OsString>,
    /// None: the default name, `iogauge-DATE-TIME.iogtrace` here.
    pub output: Option<PathBuf>,
    pub method: Method,
    pub overwrite_output: bool,
}

/// `iogauge trace show|stats`.
#[derive(Debug)]
pub enum TraceRequest {
    Show {
        trace: PathBuf,
        /// At most this many events (0: all).
        limit: usize,
    },
    Stats {
        trace: PathBuf,
        json: bool,
    },
}

pub fn record_command() -> Command {
    Command::new("record")
        .about("Run a program and record every file I/O call it, its threads and children make, into a trace")
        .arg(
            Arg::new("output")
                .short('o')
                .long("output")
                .value_name("TRACE")
                .help("Write the trace here [default: iogauge-DATE-TIME.iogtrace]"),
        )
        .arg(
            Arg::new("method")
                .long("method")
                .value_name("HOW")
                .default_value("auto")
                .value_parser(["auto", "perf", "ptrace"])
                .help("perf: the kernel's syscall tracepoints (root or perf_event_paranoid ≤ 1); ptrace: stops at each call, slower; auto: perf where allowed"),
        )
        .arg(overwrite_output_arg())
        .arg(
            Arg::new("command")
                .value_name("COMMAND")
                .num_args(1..)
                .required(true)
                .trailing_var_arg(true)
                .allow_hyphen_values(true)
                .help("The program to record and its arguments (after --)"),
        )
        .after_help(
            "The trace holds, per call: thread, file, offset, length, flags (O_DIRECT, O_DSYNC, \
             O_APPEND…), issue time and duration in ns, and result. Only regular files and block \
             devices are recorded; calls on pipes, sockets, terminals and /proc are counted. The \
             capture's own cost is measured before each recording and kept in the trace. \
             iogauge record exits with the program's exit code.",
        )
}

pub fn trace_command() -> Command {
    let trace_arg = || Arg::new("trace").value_name("TRACE").required(true);
    Command::new("trace")
        .about("Read a trace that 'iogauge record' wrote")
        .subcommand_required(true)
        .subcommand(
            Command::new("show")
                .about("Each recorded call, one per line")
                .arg(trace_arg())
                .arg(
                    Arg::new("limit")
                        .long("limit")
                        .value_name("N")
                        .default_value("0")
                        .value_parser(clap::value_parser!(u64))
                        .help("At most N calls (0: all)"),
                ),
        )
        .subcommand(
            Command::new("stats")
                .about("Per file: bytes, sizes, sequentiality, read/write mix, syncs; per thread: busy and think time")
                .arg(trace_arg())
                .arg(
                    Arg::new("json")
                        .long("json")
                        .action(ArgAction::SetTrue)
                        .help("As JSON"),
                ),
        )
}

pub fn record_request(sm: &ArgMatches) -> Result<Request, UsageError> {
    let output = sm.get_one::<String>("output").map(|s| rawpath::path(s));
    let overwrite_output = sm.get_flag("overwrite-output");
    if let Some(p) = &output {
        check_output("--output", p, overwrite_output)?;
    }
    let method = sm
        .get_one::<String>("method")
        .expect("default")
        .parse()
        .map_err(UsageError::of)?;
    Ok(Request::Record(RecordRequest {
        command: sm
            .get_many::<String>("command")
            .expect("required")
            .map(|a| rawpath::path(a).into_os_string())
            .collect(),
        output,
        method,
        overwrite_output,
    }))
}

pub fn trace_request(sm: &ArgMatches) -> Result<Request, UsageError> {
    let path = |m: &ArgMatches| rawpath::path(m.get_one::<String>("trace").expect("required"));
    Ok(Request::Trace(match sm.subcommand() {
        Some(("show", m)) => TraceRequest::Show {
            trace: path(m),
            limit: *m.get_one::<u64>("limit").expect("default") as usize,
        },
        Some(("stats", m)) => TraceRequest::Stats {
            trace: path(m),
            json: m.get_flag("json"),
        },
        _ => unreachable!("clap requires a subcommand"),
    }))
}
