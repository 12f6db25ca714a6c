//! `iogauge record -- COMMAND…` and `iogauge trace show|stats TRACE`: the command lines of
//! recorded I/O.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Arg, ArgAction, ArgMatches, Command};

use super::tool::{check_output, overwrite_output_arg, text_or_json_arg, wants_json};
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
    /// `--block DEVICE`: the block layer's requests to it instead of the program's calls.
    pub block: Option<PathBuf>,
}

/// `iogauge replay TRACE`.
#[derive(Debug)]
pub struct ReplayRequest {
    pub trace: PathBuf,
    pub mode: crate::trace::replayed::Mode,
    pub speed: f64,
    pub directory: PathBuf,
    pub json: bool,
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
        /// Also the page with each file's access pattern, here.
        html: Option<PathBuf>,
        overwrite_output: bool,
    },
    /// `trace import (--iolog FILE | --blktrace FILE) -o TRACE`.
    Import {
        source: PathBuf,
        blktrace: bool,
        output: PathBuf,
        overwrite_output: bool,
    },
    /// `trace export TRACE --iolog FILE [--thread TID]`.
    Export {
        trace: PathBuf,
        iolog: PathBuf,
        thread: Option<u32>,
        overwrite_output: bool,
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
        .arg(method_arg())
        .arg(
            Arg::new("block")
                .long("block")
                .value_name("DEVICE")
                .help("Record the block layer's requests to DEVICE (every process's, from issue to completion) while the command runs, instead of its calls"),
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
             I/Os of libaio's io_submit and of io_uring are recorded one by one, each from its \
             submission to its completion, where eBPF is allowed. The capture's own cost is measured before each recording and kept in the trace. \
             iogauge record exits with the program's exit code.",
        )
}

/// `--method auto|perf|ptrace`: how a program is recorded (record, and predict's job files).
pub(super) fn method_arg() -> Arg {
    Arg::new("method")
        .long("method")
        .value_name("HOW")
        .default_value("auto")
        .value_parser(["auto", "perf", "ptrace"])
        .help("perf: the kernel's syscall tracepoints (root or perf_event_paranoid ≤ 1); ptrace: stops at each call, slower; auto: perf where allowed")
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
                )
                .arg(
                    Arg::new("html")
                        .long("html")
                        .value_name("FILE")
                        .help("Also write an HTML page with each file's access pattern (offset against time) and these figures"),
                )
                .arg(overwrite_output_arg()),
        )
        .subcommand(
            Command::new("export")
                .about("The trace's reads, writes and syncs as fio's I/O log (version 3), for read_iolog")
                .arg(trace_arg())
                .arg(
                    Arg::new("iolog")
                        .long("iolog")
                        .value_name("FILE")
                        .required(true)
                        .help("Write the I/O log here (files named f<index>-<name>, relative: replay it with --directory)"),
                )
                .arg(
                    Arg::new("thread")
                        .long("thread")
                        .value_name("TID")
                        .value_parser(clap::value_parser!(u32))
                        .help("Only this thread's calls [default: every thread's, in issue order]"),
                )
                .arg(overwrite_output_arg()),
        )
        .subcommand(
            Command::new("import")
                .about("Make a trace of fio's I/O log (version 2 or 3) or of a blktrace binary, for trace stats and replay")
                .arg(
                    Arg::new("iolog")
                        .long("iolog")
                        .value_name("FILE")
                        .conflicts_with("blktrace")
                        .required_unless_present("blktrace")
                        .help("fio's I/O log (write_iolog's, or any read_iolog reads)"),
                )
                .arg(
                    Arg::new("blktrace")
                        .long("blktrace")
                        .value_name("FILE")
                        .help("A blktrace binary (blktrace -o FILE, or its per-CPU files concatenated): requests from issue (D) to completion (C)"),
                )
                .arg(
                    Arg::new("output")
                        .short('o')
                        .long("output")
                        .value_name("TRACE")
                        .required(true)
                        .help("Write the trace here"),
                )
                .arg(overwrite_output_arg()),
        )
}

pub fn replay_command() -> Command {
    Command::new("replay")
        .about("Replay a recorded trace's I/O on copies of its files, call for call, and report it with the replay's timing fidelity")
        .arg(Arg::new("trace").value_name("TRACE").required(true))
        .arg(
            Arg::new("mode")
                .long("mode")
                .value_name("MODE")
                .default_value("closed")
                .help("closed: each call when the thread's previous one completed plus the recorded think time; open: at the recorded times; afap: no think time"),
        )
        .arg(
            Arg::new("directory")
                .long("directory")
                .value_name("DIR")
                .default_value(".")
                .help("Where the replay makes its own directory for the files (removed at the end)"),
        )
        .arg(
            Arg::new("speed")
                .long("speed")
                .value_name("X")
                .default_value("1")
                .help("Think and issue times divided by X (2: twice as fast)"),
        )
        .arg(text_or_json_arg())
        .after_help(
            "The recorded paths are never touched: each file of the trace is a file in a new \
             directory under --directory, laid out at its recorded size before the replay \
             (or created by the replay where the program created it). mmap calls are counted, \
             not replayed; libaio and io_uring I/Os are submitted asynchronously, as recorded \
             (io_submit and io_uring_enter whose I/Os the trace lacks are counted).",
        )
}

pub fn replay_request(sm: &ArgMatches) -> Result<Request, UsageError> {
    let mode = sm
        .get_one::<String>("mode")
        .expect("default")
        .parse()
        .map_err(UsageError::of)?;
    let speed_text = sm.get_one::<String>("speed").expect("default");
    let speed = speed_text
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v > 0.0 && *v <= 1e6)
        .ok_or_else(|| {
            UsageError(format!(
                "--speed={speed_text}: expected a number above 0 (0.5: half as fast, 2: twice as fast)"
            ))
        })?;
    Ok(Request::Replay(ReplayRequest {
        trace: rawpath::path(sm.get_one::<String>("trace").expect("required")),
        mode,
        speed,
        directory: rawpath::path(sm.get_one::<String>("directory").expect("default")),
        json: wants_json(sm),
    }))
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
        block: sm.get_one::<String>("block").map(|s| rawpath::path(s)),
    }))
}

pub fn trace_request(sm: &ArgMatches) -> Result<Request, UsageError> {
    let path = |m: &ArgMatches| rawpath::path(m.get_one::<String>("trace").expect("required"));
    Ok(Request::Trace(match sm.subcommand() {
        Some(("show", m)) => TraceRequest::Show {
            trace: path(m),
            limit: *m.get_one::<u64>("limit").expect("default") as usize,
        },
        Some(("stats", m)) => {
            let html = m.get_one::<String>("html").map(|s| rawpath::path(s));
            let overwrite_output = m.get_flag("overwrite-output");
            if let Some(p) = &html {
                check_output("--html", p, overwrite_output)?;
            }
            TraceRequest::Stats {
                trace: path(m),
                json: m.get_flag("json"),
                html,
                overwrite_output,
            }
        }
        Some(("export", m)) => {
            let iolog = rawpath::path(m.get_one::<String>("iolog").expect("required"));
            let overwrite_output = m.get_flag("overwrite-output");
            check_output("--iolog", &iolog, overwrite_output)?;
            TraceRequest::Export {
                trace: path(m),
                iolog,
                thread: m.get_one::<u32>("thread").copied(),
                overwrite_output,
            }
        }
        Some(("import", m)) => {
            let output = rawpath::path(m.get_one::<String>("output").expect("required"));
            let overwrite_output = m.get_flag("overwrite-output");
            check_output("--output", &output, overwrite_output)?;
            let (source, blktrace) = match m.get_one::<String>("blktrace") {
                Some(b) => (rawpath::path(b), true),
                None => (
                    rawpath::path(m.get_one::<String>("iolog").expect("one is required")),
                    false,
                ),
            };
            TraceRequest::Import {
                source,
                blktrace,
                output,
                overwrite_output,
            }
        }
        _ => unreachable!("clap requires a subcommand"),
    }))
}
