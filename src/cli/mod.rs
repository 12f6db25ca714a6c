//! Command-line parsing: subcommands and tool-level flags are declared here; workload flags are
//! generated from the option table, so `iogauge run --help` and the table never disagree.
//! Produces sections and tool options; parse errors become one line for the user.

use std::path::PathBuf;

use clap::error::ErrorKind;
use clap::{Arg, ArgAction, ArgMatches, Command, parser::ValueSource};

use crate::plan::Section;
use crate::plan::options::OPTIONS;
use crate::rawpath;
use crate::report::Format;

mod errors;
mod fio;
mod job;
mod predict;
mod sweep;
mod tool;
mod trace;

pub use errors::for_terminal;
use errors::one_line;

pub use fio::{FioOutputs, FioRequest};

use job::{
    job_command, job_request, run_command, run_sections, set_overrides, workload_args,
    workload_entries,
};
pub use predict::PredictRequest;
pub use tool::ToolOptions;
use tool::{check_output, overwrite_output_arg, repeat_arg, safety_args, tool_args, tool_options};
pub use trace::{RecordRequest, ReplayRequest, TraceRequest};

use sweep::{sweep_command, sweep_request};

/// What the user asked for.
#[derive(Debug)]
pub enum Request {
    /// `iogauge run`: one job per `--name` (fio's command line), each with the options given
    /// before the first `--name` and its own.
    Run {
        sections: Vec<Section>,
        tool: ToolOptions,
    },
    Quick {
        directory: PathBuf,
        size: Option<String>,
        seconds: u64,
        tool: ToolOptions,
    },
    Options,
    /// `iogauge job FILE...` (or `iogauge FILE.fio`).
    Job {
        files: Vec<PathBuf>,
        /// Workload flags: defaults the files' values override (fio's rule).
        defaults: Section,
        /// `--set KEY=VALUE`: over the files' values.
        overrides: Section,
        sections: Vec<String>,
        parse_only: bool,
        tool: ToolOptions,
    },
    /// `iogauge report RUN.json`: a saved report in another format.
    Report {
        input: PathBuf,
        output: Option<PathBuf>,
        format: Format,
        overwrite_output: bool,
    },
    /// `iogauge compare BASE.json NEW.json`.
    Compare {
        base: PathBuf,
        new: PathBuf,
        threshold_pct: f64,
        fail_on_regression: bool,
    },
    /// `iogauge sweep`: a workload over a grid of option values, one run per point.
    Sweep(SweepRequest),
    /// `iogauge assess --for=sas|database`.
    Assess {
        for_: String,
        directory: PathBuf,
        size: Option<String>,
        /// Given on the command line (the default is the profile's).
        seconds: Option<u64>,
        streams: Option<usize>,
        tool: ToolOptions,
    },
    /// A legacy tool's command line (`iogauge sasiotest|sqlio|iotest ...`).
    Legacy(crate::compat::Invocation),
    /// fio's command line (`iogauge fio ...`, or iogauge run under the name `fio`).
    Fio(FioRequest),
    /// `iogauge record -- COMMAND…`.
    Record(RecordRequest),
    /// `iogauge trace show|stats TRACE`.
    Trace(TraceRequest),
    /// `iogauge replay TRACE`.
    Replay(ReplayRequest),
    /// `iogauge predict TRACE|JOBFILE`.
    Predict(PredictRequest),
    /// Help or version text to print; exit 0.
    Print(String),
}

/// `iogauge sweep …`.
#[derive(Debug)]
pub struct SweepRequest {
    pub base: SweepBase,
    pub axes: Vec<crate::studies::sweep::Axis>,
    pub dir: PathBuf,
    pub resume: bool,
    /// `--table ROW,COL` (default: the first two swept options).
    pub table: Option<(String, String)>,
    pub metric: crate::studies::sweep::Metric,
    /// `--max-p99`: the best point must keep its p99 latency within this, µs.
    pub max_p99_us: Option<f64>,
    /// `--knee`: a step that gains less than this percent is the knee.
    pub knee_pct: f64,
    pub tool: ToolOptions,
    /// The command line without the sweep's own flags: what every point shares.
    pub base_args: Vec<String>,
}

/// The workload a sweep varies.
#[derive(Debug)]
pub enum SweepBase {
    /// Workload flags, as `run` takes them.
    Options(Vec<Section>),
    /// Job files, as `job` takes them (flags are the files' defaults, `--set` wins).
    Jobs {
        files: Vec<PathBuf>,
        defaults: Section,
        overrides: Section,
    },
}

/// A usage error: one line, exit 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl UsageError {
    /// A lower layer's error, said as it is.
    pub fn of(e: impl std::fmt::Display) -> UsageError {
        UsageError(e.to_string())
    }
}

pub fn command() -> Command {
    negative_values(top())
}

/// Every option that takes a value takes one that starts with '-' and a digit: `--repeat -1`
/// is then refused as `--repeat=-1: expected a whole number from 1 to 100`, naming the option,
/// where clap would call "-1" an unknown option.
fn negative_values(c: Command) -> Command {
    c.mut_args(|a| match a.get_action().takes_values() {
        true => a.allow_negative_numbers(true),
        false => a,
    })
    .mut_subcommands(negative_values)
}

fn top() -> Command {
    Command::new("iogauge")
        .version(env!("CARGO_PKG_VERSION"))
        .about("Measures what a storage path can really do: throughput, IOPS, latency, CPU cost")
        .after_help(
            "With no command, runs the quick check of the current directory. As with fio, \
             'iogauge --name=x --rw=read …' means 'iogauge run …' and 'iogauge FILE.fio' \
             means 'iogauge job FILE.fio'.",
        )
        .subcommand(run_command())
        .subcommand(job_command())
        .subcommand(
            Command::new("help-options")
                .hide(true)
                .about("Same as 'iogauge options'"),
        )
        .subcommand(tool_args(
            Command::new("quick")
                .about("Quick check: sequential 1 MiB write and cold read, 4 KiB random read and write")
                .arg(Arg::new("directory").long("directory").value_name("DIR").default_value("."))
                .arg(Arg::new("size").long("size").value_name("SIZE").help("Test file size [default: 1g, less when space is short]"))
                .arg(
                    Arg::new("seconds")
                        .long("seconds")
                        .value_name("N")
                        .default_value("7")
                        .value_parser(clap::value_parser!(u64).range(1..=3600))
                        .help("Longest time per test"),
                ),
        ))
        .subcommand(sweep_command())
        .subcommand(tool_args(
            Command::new("assess")
                .about("Is this storage good enough? SAS streams or database I/O, with verdicts against published guidance")
                .arg(Arg::new("for").long("for").value_name("WHAT").required(true).value_parser(["sas", "database"]).help("sas: sequential streams, one per core, MB/s per core; database: 8 KiB read and log-write latency"))
                .arg(Arg::new("directory").long("directory").value_name("DIR").default_value("."))
                .arg(Arg::new("size").long("size").value_name("SIZE").help("sas: all the streams' files together [default: 2 GiB, less when space is short]; database: the data file [default: 1 GiB]"))
                .arg(
                    Arg::new("seconds")
                        .long("seconds")
                        .value_name("N")
                        .value_parser(clap::value_parser!(u64).range(1..=3600))
                        .help("database: seconds per test [default: 10]"),
                )
                .arg(
                    Arg::new("streams")
                        .long("streams")
                        .value_name("N")
                        .value_parser(clap::value_parser!(u64).range(1..=1024))
                        .help("sas: concurrent streams [default: one per CPU core]"),
                )
                .after_help(
                    "assess runs its tests 3 times (--repeat=N for another count) and rates \
                     each figure on the worse end of its 95% interval over the runs, so noise \
                     cannot lift a verdict; a figure the page cache could have served (no device \
                     below, too little on the device, buffered I/O over less data than RAM) is \
                     UNPROVEN, never GOOD.",
                ),
        ))
        .subcommand(
            Command::new("options")
                .about("List every workload option with type, default and meaning (or the ones named)")
                .arg(Arg::new("names").value_name("NAME").num_args(0..).allow_hyphen_values(true)),
        )
        .subcommand(
            Command::new("report")
                .about("Turn a saved JSON report into HTML (default), text, CSV or JSON")
                .arg(Arg::new("input").value_name("RUN.json").required(true))
                .arg(Arg::new("output").short('o').long("output").value_name("FILE").help("Write to FILE [default: stdout]"))
                .arg(Arg::new("output-format").long("output-format").value_name("FORMAT").default_value("html").help("html, text, csv or json"))
                .arg(overwrite_output_arg()),
        )
        .subcommand(
            Command::new("compare")
                .about("Compare two JSON reports (iogauge's or fio's) per job and direction: bandwidth, IOPS, p50/p99 latency")
                .arg(Arg::new("base").value_name("BASE.json").required(true))
                .arg(Arg::new("new").value_name("NEW.json").required(true))
                .arg(Arg::new("threshold").long("threshold").value_name("PCT").default_value("5%").help("Changes beyond this are marked (5%, 2.5)"))
                .arg(Arg::new("fail-on-regression").long("fail-on-regression").action(ArgAction::SetTrue).help("Exit 1 when a change beyond the threshold is worse, or a job is missing")),
        )
        .subcommand(trace::record_command())
        .subcommand(trace::trace_command())
        .subcommand(trace::replay_command())
        .subcommand(predict::predict_command())
        .subcommand(legacy("sasiotest", "SAS's SASIOTEST: iogauge sasiotest FILE [-r|-w|-rw] [-seq|-ran] [-filesize N] [-pagesize N] [-sgio -numpages M] [-unbuffered] [-writethru]"))
        .subcommand(legacy("sqlio", "Microsoft's sqlio: iogauge sqlio [-kR|-kW] [-s<secs>] [-f<pattern>] [-o<n>] [-b<KB>] [-t<n>] [-B<N|Y|H|S>] [-L<S|P>] [-F<param file>] [file]; --batch FILE"))
        .subcommand(legacy("iotest", "SAS's iotest.sh: iogauge iotest -i N -t DIR -b BLOCKS -s KB"))
}

/// A personality's entry, for `iogauge --help` (its arguments are parsed by `compat`).
fn legacy(name: &'static str, about: &'static str) -> Command {
    Command::new(name).about(about).disable_help_flag(true).arg(
        Arg::new("args")
            .num_args(0..)
            .allow_hyphen_values(true)
            .trailing_var_arg(true),
    )
}

/// The arguments as text, bytes that are not UTF-8 carried losslessly (see `rawpath`), or an
/// error naming the argument that holds a character reserved for carrying them.
pub fn text_args(
    args: impl IntoIterator<Item = std::ffi::OsString>,
) -> Result<Vec<String>, UsageError> {
    args.into_iter()
        .enumerate()
        .map(|(i, a)| {
            let shown = a.to_string_lossy().escape_default().to_string();
            crate::rawpath::from_os(a)
                .map_err(|e| UsageError(format!("argument {i} ({shown}): {e}")))
        })
        .collect()
}

/// Parses `args` (including the program name).
pub fn parse(args: &[String]) -> Result<Request, UsageError> {
    // fio's command line: iogauge run as `fio` (a link or a copy of that name), or `iogauge
    // fio …`. Not clap's: fio's options take one dash or two, and job files stand anywhere.
    let program = args.first().map(|a| rawpath::path(a));
    if program.as_deref().and_then(|p| p.file_name()) == Some(std::ffi::OsStr::new("fio")) {
        return fio::parse(&args[1..]);
    }
    if args.get(1).map(String::as_str) == Some("fio") {
        return fio::parse(&args[2..]);
    }
    // Legacy command lines are not clap's: their options are -filesize, -kR, -s60.
    if let Some(name) = args
        .get(1)
        .filter(|a| crate::compat::NAMES.contains(&a.as_str()))
    {
        return crate::compat::parse(name, &args[2..])
            .map(Request::Legacy)
            .map_err(UsageError::of);
    }
    if args.get(1).map(String::as_str) == Some("help")
        && args.get(2).map(String::as_str) == Some("options")
    {
        return Ok(Request::Options);
    }
    let args = with_implied_command(args);
    let m = match command().try_get_matches_from(&args) {
        Ok(m) => m,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            return Ok(Request::Print(e.render().to_string()));
        }
        Err(e) => return Err(UsageError(one_line(&e))),
    };
    match m.subcommand() {
        Some(("run", sm)) => Ok(Request::Run {
            sections: run_sections(sm),
            tool: tool_options(sm)?,
        }),
        Some(("job", sm)) => job_request(sm),
        Some(("options" | "help-options", sm)) => match sm.get_many::<String>("names") {
            Some(names) => options_named(names).map(Request::Print),
            None => Ok(Request::Options),
        },
        Some(("report", sm)) => report_request(sm),
        Some(("compare", sm)) => compare_request(sm),
        Some(("record", sm)) => trace::record_request(sm),
        Some(("trace", sm)) => trace::trace_request(sm),
        Some(("replay", sm)) => trace::replay_request(sm),
        Some(("predict", sm)) => predict::predict_request(sm),
        Some(("sweep", sm)) => sweep_request(&args, sm),
        Some(("assess", sm)) => {
            let mut tool = tool_options(sm)?;
            // A verdict from one run can flip with noise: assess rates the spread of several.
            if sm.value_source("repeat") != Some(ValueSource::CommandLine) {
                tool.repeat = ASSESS_REPEAT;
            }
            Ok(Request::Assess {
                for_: sm.get_one::<String>("for").expect("required").clone(),
                directory: rawpath::path(sm.get_one::<String>("directory").expect("default")),
                size: sm.get_one::<String>("size").cloned(),
                seconds: (sm.value_source("seconds") == Some(ValueSource::CommandLine))
                    .then(|| *sm.get_one::<u64>("seconds").expect("default")),
                streams: sm.get_one::<u64>("streams").map(|&n| n as usize),
                tool,
            })
        }
        Some(("quick", sm)) => Ok(Request::Quick {
            directory: rawpath::path(sm.get_one::<String>("directory").expect("default")),
            size: sm.get_one::<String>("size").cloned(),
            seconds: *sm.get_one::<u64>("seconds").expect("default"),
            tool: tool_options(sm)?,
        }),
        _ => {
            let quick = command()
                .try_get_matches_from(["iogauge", "quick"])
                .expect("defaults parse");
            let sm = quick.subcommand_matches("quick").expect("quick");
            Ok(Request::Quick {
                directory: ".".into(),
                size: None,
                seconds: 7,
                tool: tool_options(sm)?,
            })
        }
    }
}

/// `iogauge report INPUT.json [--output-format F] [--output FILE]`.
fn report_request(sm: &ArgMatches) -> Result<Request, UsageError> {
    let text = sm.get_one::<String>("output-format").expect("has default");
    let format: Format = text
        .parse()
        .map_err(|e: crate::report::UnknownFormat| UsageError(e.to_string()))?;
    let output = sm.get_one::<String>("output").map(|s| rawpath::path(s));
    let overwrite_output = sm.get_flag("overwrite-output");
    if let Some(p) = &output {
        check_output("--output", p, overwrite_output)?;
    }
    Ok(Request::Report {
        input: rawpath::path(sm.get_one::<String>("input").expect("required")),
        output,
        format,
        overwrite_output,
    })
}

/// The command line with the subcommand the user left out, as fio users type it:
/// `iogauge FILE.fio` runs a job file, `iogauge --name=x --rw=read …` runs those options.
fn with_implied_command(args: &[String]) -> Vec<String> {
    let mut args = args.to_vec();
    if let Some(first) = args.get(1) {
        let own_flag = ["--help", "--version"].contains(&first.as_str());
        if first.starts_with("--") && !own_flag {
            args.insert(1, "run".into());
            return args;
        }
        let known = command()
            .get_subcommands()
            .any(|c| c.get_name() == first.as_str());
        let looks_like_job =
            first.ends_with(".fio") || (!first.starts_with('-') && rawpath::path(first).is_file());
        if !known && looks_like_job {
            args.insert(1, "job".into());
        }
    }
    args
}

/// `iogauge compare BASE NEW [--threshold P]`.
fn compare_request(sm: &ArgMatches) -> Result<Request, UsageError> {
    let t = sm.get_one::<String>("threshold").expect("has default");
    let threshold_pct = t
        .trim()
        .trim_end_matches('%')
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
        .ok_or_else(|| {
            UsageError(format!(
                "--threshold={t}: expected a percentage of 0 or more (5%, 2.5)"
            ))
        })?;
    Ok(Request::Compare {
        base: rawpath::path(sm.get_one::<String>("base").expect("required")),
        new: rawpath::path(sm.get_one::<String>("new").expect("required")),
        threshold_pct,
        fail_on_regression: sm.get_flag("fail-on-regression"),
    })
}

/// One option of the table as documentation: its names, type, default and meaning, wrapped
/// to 100 columns.
fn option_text(def: &crate::plan::options::OptionDef) -> String {
    let mut names = def.name.to_string();
    for a in def.aliases {
        names += &format!(", {a}");
    }
    format!(
        "  {names}\n{}{}",
        wrapped(
            &format!(
                "type: {}; default: {}",
                // A long list of choices wraps between its words.
                def.kind.describe().replace('|', " | "),
                def.default.unwrap_or("(see text)")
            ),
            6
        ),
        wrapped(def.help, 6)
    )
}

/// `text` as lines of at most 100 columns, each indented by `indent` spaces.
fn wrapped(text: &str, indent: usize) -> String {
    let (mut out, mut line) = (String::new(), String::new());
    for word in text.split_whitespace() {
        if !line.is_empty() && indent + line.chars().count() + 1 + word.chars().count() > 100 {
            out += &format!("{:indent$}{line}\n", "");
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line += word;
    }
    if !line.is_empty() {
        out += &format!("{:indent$}{line}\n", "");
    }
    out
}

/// `iogauge options NAME…`: the options named, or a usage error naming one the table lacks.
fn options_named<'a>(names: impl Iterator<Item = &'a String>) -> Result<String, UsageError> {
    let mut o = String::new();
    for n in names {
        let n = n.trim_start_matches('-');
        let Some(def) = crate::plan::options::lookup(n) else {
            let fio = crate::plan::options::fio_only(n)
                .map(|_| " (a fio option iogauge knows of: `iogauge options` says what it does with it)")
                .unwrap_or("; `iogauge options` lists them all");
            return Err(UsageError(format!(
                "options {n}: no workload option of that name{fio}"
            )));
        };
        o += &option_text(def);
    }
    Ok(o)
}

/// Runs `iogauge assess` makes unless `--repeat` says otherwise: its verdicts rate the worse
/// end of each figure's 95% interval over them.
pub const ASSESS_REPEAT: u32 = 3;

/// `iogauge options`: the table as documentation.
pub fn options_help() -> String {
    let mut o = String::from(
        "Workload options (fio names: --name=value on the command line, name=value in a job \
         file):\n\n",
    );
    for def in OPTIONS {
        o += &option_text(def);
    }
    o += "\nfio options accepted in job files but ignored (they change only fio's internals or \
          its report):\n\n";
    for (names, t) in crate::plan::options::FIO_ONLY {
        match t {
            crate::plan::options::FioOnly::Ignored(why) => {
                o += &format!("{}{}", wrapped(&names.join(", "), 2), wrapped(why, 6));
            }
            crate::plan::options::FioOnly::DefaultOnly(only, why) => {
                let text = format!("only ={only}: {why}");
                o += &format!("{}{}", wrapped(&names.join(", "), 2), wrapped(&text, 6));
            }
            crate::plan::options::FioOnly::Rejected(_) => {}
        }
    }
    o += "\nfio options refused, with why:\n\n";
    for (names, t) in crate::plan::options::FIO_ONLY {
        if let crate::plan::options::FioOnly::Rejected(why) = t {
            o += &format!("{}{}", wrapped(&names.join(", "), 2), wrapped(why, 6));
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        std::iter::once("iogauge")
            .chain(a.iter().copied())
            .map(String::from)
            .collect()
    }

    #[test]
    fn workload_flags_become_a_section() {
        let Request::Run { sections, tool } = parse(&args(&[
            "run",
            "--rw=randread",
            "--bs",
            "8k",
            "--time-based",
            "--direct=1",
        ]))
        .unwrap() else {
            panic!("not a run")
        };
        let [section] = &sections[..] else {
            panic!("one job: {sections:?}")
        };
        let got: Vec<(String, String)> = section
            .entries
            .iter()
            .map(|e| (e.key.clone(), e.value.clone().unwrap()))
            .collect();
        assert!(got.contains(&("rw".into(), "randread".into())));
        assert!(got.contains(&("bs".into(), "8k".into())));
        assert!(got.contains(&("time_based".into(), "1".into())));
        assert!(got.contains(&("direct".into(), "1".into())));
        assert_eq!(tool.formats, vec![Format::Text]);
    }

    #[test]
    fn a_missing_subcommand_names_those_there_are() {
        let e = parse(&args(&["trace"])).unwrap_err().0;
        assert_eq!(
            e,
            "iogauge trace takes a command: show, stats, export, import; 'iogauge trace \
             --help' says what each does"
        );
    }

    #[test]
    fn unknown_flag_is_one_line() {
        let e = parse(&args(&["run", "--sizee=4k"])).unwrap_err().0;
        assert!(
            !e.contains('\n') && e.starts_with("--sizee") && e.contains("unknown option"),
            "{e}"
        );
        assert!(e.contains("did you mean"), "{e}");
    }

    #[test]
    fn messages_for_the_terminal_escape_controls_and_cut_long_words() {
        assert_eq!(for_terminal("a\x1b[2Jb: bad"), "a\\u{1b}[2Jb: bad");
        let long = format!("{}=1: unknown", "k".repeat(1_000_000));
        let shown = for_terminal(&long);
        assert!(
            shown.len() < 200 && shown.ends_with("more bytes] unknown"),
            "{shown}"
        );
        assert_eq!(for_terminal("plain words"), "plain words");
    }

    #[test]
    fn arguments_carry_bytes_that_are_not_utf8() {
        if !crate::platform::testing::ANY_BYTES_IN_PATHS {
            eprintln!("skipped: paths here are text (UTF-16), they carry no stray bytes");
            return;
        }
        let args = vec![
            std::ffi::OsString::from("iogauge"),
            crate::rawpath::os_from_bytes(b"--filename=t\xff".to_vec()),
        ];
        let text = text_args(args).unwrap();
        let file = text[1].strip_prefix("--filename=").unwrap();
        let bytes = crate::rawpath::path(file)
            .as_os_str()
            .as_encoded_bytes()
            .to_vec();
        assert_eq!(bytes, b"t\xff");
        assert_eq!(for_terminal(&text[1]), "--filename=t\\xff");
        let reserved = std::ffi::OsString::from("\u{10FFE9}");
        let e = text_args([reserved]).unwrap_err().0;
        assert!(e.starts_with("argument 0") && e.contains("reserved"), "{e}");
    }

    #[test]
    fn last_value_wins() {
        let Request::Run { sections, .. } = parse(&args(&["run", "--bs=4k", "--bs=8k"])).unwrap()
        else {
            panic!()
        };
        assert_eq!(
            sections[0].entries.last().unwrap().value.as_deref(),
            Some("8k")
        );
    }

    /// fio's command line: options before the first --name are every job's; each --name
    /// starts a job with only those and its own.
    #[test]
    fn each_name_starts_a_job() {
        let Request::Run { sections, .. } = parse(&args(&[
            "run",
            "--size=1m",
            "--direct",
            "--name=r",
            "--rw=read",
            "--bs=8k",
            "--name=w",
            "--rw=write",
        ]))
        .unwrap() else {
            panic!()
        };
        let kv = |s: &Section| -> Vec<String> {
            s.entries
                .iter()
                .map(|e| format!("{}={}", e.key, e.value.as_deref().unwrap()))
                .collect()
        };
        assert_eq!(sections.len(), 2);
        assert_eq!(sections[0].name, "r");
        assert_eq!(
            kv(&sections[0]),
            ["size=1m", "direct=1", "name=r", "rw=read", "bs=8k"]
        );
        assert_eq!(sections[1].name, "w");
        assert_eq!(
            kv(&sections[1]),
            ["size=1m", "direct=1", "name=w", "rw=write"]
        );
    }
}
