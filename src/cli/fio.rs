//! `iogauge fio ARGS…` (or iogauge run under the name `fio`): fio's own command line, read as
//! fio 3 reads it. fio's tool options (`--output`, `--output-format`, `--max-jobs`, …) in
//! either `--opt=value` or `--opt value` form, with one dash or two; job files wherever they
//! stand among the options; job options as fio takes them on its command line: those before
//! the first `--name` (or under `--name=global`) are defaults for every job, job files'
//! included, and each `--name` starts a job of its own. Job options are entries for the same
//! resolution a job file's go through, so the command line accepts what a job file accepts.

use std::path::PathBuf;

use super::{ToolOptions, UsageError};
use crate::plan::options::{Kind, lookup};
use crate::plan::{Entry, Origin, Section};
use crate::rawpath;
use crate::report::FioFormat;

/// What `iogauge fio …` was asked.
#[derive(Debug)]
pub struct FioRequest {
    /// Job files, in the order given.
    pub files: Vec<PathBuf>,
    /// Options before the first `--name`, or under `--name=global`: the defaults of the jobs
    /// that follow them, and of every job file's jobs.
    pub globals: Section,
    /// The jobs the command line defines (`--name=X` and the options after it, after the
    /// defaults given before it), run before the job files' (fio's order).
    pub jobs: Vec<Section>,
    /// `--section`: only these job sections of the files.
    pub sections: Vec<String>,
    pub parse_only: bool,
    /// `--showcmd`: print each job as command-line options; run nothing.
    pub showcmd: bool,
    /// `--inflate-log=FILE`: print a compressed log (`.log.fz`) as text; run nothing.
    pub inflate_log: Option<PathBuf>,
    /// `--readonly`: refuse any job that would write.
    pub readonly: bool,
    /// `--max-jobs`: the most jobs (numjobs clones counted) the run may have.
    pub max_jobs: Option<usize>,
    /// `--warnings-fatal`: a warning ends the run before it starts.
    pub warnings_fatal: bool,
    /// `--debug=parse` (or `all`): each option printed as it is parsed, as fio's parse
    /// debugging prints it. fio's other debug classes are accepted and print nothing.
    pub debug_parse: bool,
    /// Every job option as given, in order (`--name` among them): what `--debug=parse`
    /// prints. A job's section holds the defaults before it as well.
    pub given: Vec<Entry>,
    pub outputs: FioOutputs,
    /// iogauge's own switches, with fio's defaults (files are kept).
    pub tool: ToolOptions,
}

/// Where and how fio mode writes its report.
#[derive(Debug, Clone)]
pub struct FioOutputs {
    /// `--output-format` (a comma list) or `--minimal` (terse); each once, in order.
    pub formats: Vec<FioFormat>,
    /// `--output`: one file for all of them (fio's rule), else stdout.
    pub output: Option<PathBuf>,
    /// `--terse-version`: 2, 3 (fio's default) or 4.
    pub terse_version: u32,
    /// `--bandwidth-log`: fio's aggregate bandwidth logs (agg-read_bw.log, …).
    pub bandwidth_log: bool,
}

/// fio's tool options: name, and whether it takes a value (`Some(true)`: required, as
/// `--opt=V` or `--opt V`; `Some(false)`: optional, only as `--opt=V`; `None`: none).
const TOOL_OPTIONS: &[(&str, Option<bool>)] = &[
    ("output", Some(true)),
    ("latency-log", Some(true)),
    ("bandwidth-log", None),
    ("minimal", None),
    ("output-format", Some(true)),
    ("append-terse", Some(false)),
    ("version", None),
    ("help", None),
    ("cmdhelp", Some(false)),
    ("enghelp", Some(false)),
    ("showcmd", None),
    ("readonly", None),
    ("eta", Some(true)),
    ("eta-interval", Some(true)),
    ("eta-newline", Some(true)),
    ("debug", Some(true)),
    ("parse-only", None),
    ("section", Some(true)),
    ("inflate-log", Some(true)),
    ("alloc-size", Some(true)),
    ("profile", Some(true)),
    ("warnings-fatal", None),
    ("max-jobs", Some(true)),
    ("terse-version", Some(true)),
    ("server", Some(false)),
    ("daemonize", Some(true)),
    ("client", Some(true)),
    ("remote-config", Some(true)),
    ("cpuclock-test", None),
    ("crctest", Some(false)),
    ("memcpytest", Some(false)),
    ("idle-prof", Some(true)),
    ("status-interval", Some(true)),
    ("trigger-file", Some(true)),
    ("trigger-timeout", Some(true)),
    ("trigger", Some(true)),
    ("trigger-remote", Some(true)),
    ("aux-path", Some(true)),
    ("merge-blktrace-only", None),
    // iogauge's own safety switches, accepted here too.
    ("allow-overwrite", None),
    ("overwrite-output", None),
    ("skip-space-check", None),
    ("max-memory", Some(true)),
];

/// fio's short options (`-v`, `-h`, …) and the long ones they stand for.
const SHORT: &[(char, &str)] = &[
    ('v', "version"),
    ('h', "help"),
    ('o', "output"),
    ('x', "section"),
    ('d', "debug"),
];

/// Whether job option `key`, given without `=`, takes the next argument as its value (fio's
/// parser: every option but the booleans does).
fn takes_value(key: &str) -> bool {
    lookup(key).is_some_and(|d| !matches!(d.kind, Kind::Bool))
}

impl FioRequest {
    /// Nothing asked yet: fio's defaults (normal output to stdout, terse version 3).
    fn new() -> FioRequest {
        FioRequest {
            files: Vec::new(),
            globals: Section::new("global"),
            jobs: Vec::new(),
            sections: Vec::new(),
            parse_only: false,
            showcmd: false,
            inflate_log: None,
            readonly: false,
            max_jobs: None,
            warnings_fatal: false,
            debug_parse: false,
            given: Vec::new(),
            outputs: FioOutputs {
                formats: vec![FioFormat::Normal],
                output: None,
                terse_version: 3,
                bandwidth_log: false,
            },
            tool: ToolOptions::fio_defaults(),
        }
    }

    /// A job option: `--name` closes the job being built and starts the next (a global one
    /// sends what follows to the defaults); any other goes to the job being built, or to the
    /// defaults before the first `--name`.
    fn job_option(&mut self, current: &mut Option<Section>, name: &str, value: Option<String>) {
        self.given.push(Entry {
            key: name.replace('-', "_"),
            value: value.clone(),
            origin: Origin::Cli,
        });
        if name == "name" {
            let job = value.unwrap_or_default();
            if let Some(done) = current.take() {
                self.jobs.push(done);
            }
            if !job.starts_with("global") {
                // A job starts from the defaults given so far (fio copies them then).
                let mut s = Section::new(job);
                s.entries = self.globals.entries.clone();
                *current = Some(s);
            }
            return;
        }
        let entry = Entry {
            key: name.replace('-', "_"),
            value,
            origin: Origin::Cli,
        };
        match current.as_mut() {
            Some(job) => job.entries.push(entry),
            None => self.globals.entries.push(entry),
        }
    }
}

/// An option argument's name (a short option as its long name) and its `=value`, if any.
fn option_parts(a: &str, body: &str) -> Result<(String, Option<String>), UsageError> {
    let (name, value) = match body.split_once('=') {
        Some((n, v)) => (n.to_string(), Some(v.to_string())),
        None => (body.to_string(), None),
    };
    let mut chars = name.chars();
    let name = match (chars.next(), chars.next()) {
        (Some(c), None) if !a.starts_with("--") => SHORT
            .iter()
            .find(|(s, _)| *s == c)
            .map(|(_, long)| long.to_string())
            .ok_or_else(|| UsageError(format!("-{c}: not one of fio's options")))?,
        _ => name,
    };
    Ok((name, value))
}

/// The argument after option `name` (at `*i`), taken as its value.
fn next_value(args: &[String], i: &mut usize, name: &str) -> Result<String, UsageError> {
    let v = args
        .get(*i)
        .cloned()
        .ok_or_else(|| UsageError(format!("--{name}: needs a value")))?;
    *i += 1;
    Ok(v)
}

/// Parses fio's command line (without the program name).
pub fn parse(args: &[String]) -> Result<super::Request, UsageError> {
    let mut r = FioRequest::new();
    // The job the options go to: None before the first --name (and under --name=global).
    let mut current: Option<Section> = None;
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        let Some(body) = a.strip_prefix("--").or_else(|| a.strip_prefix('-')) else {
            r.files.push(rawpath::path(a));
            continue;
        };
        if a == "-" || a == "--" {
            return Err(UsageError(format!(
                "{a}: fio reads job files by name; give the job file's path"
            )));
        }
        let (name, value) = option_parts(a, body)?;
        if let Some(&(_, arity)) = TOOL_OPTIONS.iter().find(|(n, _)| *n == name) {
            let value = match (arity, value) {
                (Some(true), None) => Some(next_value(args, &mut i, &name)?),
                (None, Some(v)) => {
                    return Err(UsageError(format!("--{name}={v}: takes no value")));
                }
                (_, v) => v,
            };
            if let Some(done) = tool_option(&mut r, &name, value.as_deref())? {
                return Ok(done);
            }
            continue;
        }
        // A job option: fio's parser takes a value from the next argument when the option
        // needs one.
        let value = match value {
            None if takes_value(&name) => Some(next_value(args, &mut i, &name)?),
            v => v,
        };
        r.job_option(&mut current, &name, value);
    }
    if let Some(done) = current.take() {
        r.jobs.push(done);
    }
    if r.files.is_empty() && r.jobs.is_empty() && !r.parse_only && r.inflate_log.is_none() {
        return Err(UsageError(
            "no jobs: give a job file, or --name=NAME and the job's options (fio's usage)".into(),
        ));
    }
    Ok(super::Request::Fio(r))
}

/// One tool option into `r`; `Some(request)`: the option answers on its own (`--version`,
/// `--help`, `--cmdhelp`, `--enghelp`).
fn tool_option(
    r: &mut FioRequest,
    name: &str,
    value: Option<&str>,
) -> Result<Option<super::Request>, UsageError> {
    let v = value.unwrap_or("");
    let whole = |what: &str| -> Result<u64, UsageError> {
        v.trim()
            .parse::<u64>()
            .map_err(|_| UsageError(format!("--{name}={v}: expected {what}")))
    };
    match name {
        "output" => {
            let p = rawpath::path(v);
            super::check_output("--output", &p, r.tool.overwrite_output)?;
            r.outputs.output = Some(p);
        }
        "output-format" => r.outputs.formats = FioFormat::parse_list(v).map_err(UsageError::of)?,
        "minimal" => r.outputs.formats = vec![FioFormat::Terse],
        "append-terse" if !r.outputs.formats.contains(&FioFormat::Terse) => {
            r.outputs.formats.push(FioFormat::Terse);
        }
        "terse-version" => {
            let n = whole("2, 3 or 4")?;
            if !(2..=4).contains(&n) {
                return Err(UsageError(format!(
                    "--terse-version={v}: expected 2, 3 or 4"
                )));
            }
            r.outputs.terse_version = n as u32;
        }
        "version" => {
            return Ok(Some(super::Request::Print(format!(
                "fio-3.33 (iogauge {} fio mode)\n",
                env!("CARGO_PKG_VERSION")
            ))));
        }
        "help" => return Ok(Some(super::Request::Print(usage()))),
        "cmdhelp" => return Ok(Some(super::Request::Print(cmdhelp(value)?))),
        "enghelp" => return Ok(Some(super::Request::Print(enghelp(value)))),
        "showcmd" => r.showcmd = true,
        "readonly" => r.readonly = true,
        "parse-only" => r.parse_only = true,
        "section" => r.sections.extend(v.split(',').map(str::to_string)),
        "max-jobs" => r.max_jobs = Some(whole("a whole number of jobs")? as usize),
        "warnings-fatal" => r.warnings_fatal = true,
        "debug" => r.debug_parse |= v.split(',').any(|c| c == "parse" || c == "all"),
        "bandwidth-log" => r.outputs.bandwidth_log = true,
        "inflate-log" => r.inflate_log = Some(crate::rawpath::path(v)),
        "latency-log"
        | "profile"
        | "cpuclock-test"
        | "crctest"
        | "memcpytest"
        | "idle-prof"
        | "merge-blktrace-only" => {
            return Err(UsageError(format!(
                "--{name}: fio's own {} is not part of iogauge's fio mode",
                match name {
                    "latency-log" => "log tool",
                    "profile" => "built-in profiles (iogauge has its own: iogauge assess)",
                    "idle-prof" => "idleness profiling",
                    _ => "self-test",
                }
            )));
        }
        "server" | "daemonize" | "client" | "remote-config" | "trigger-remote" => {
            return Err(UsageError(format!(
                "--{name}: fio's client/server mode is not iogauge's; to run on many hosts, \
                 launch iogauge under mpirun or srun (built with --features mpi): every rank \
                 runs the job on its host and rank 0 reports for all"
            )));
        }
        "allow-overwrite" => r.tool.allow_overwrite = true,
        "overwrite-output" => r.tool.overwrite_output = true,
        "skip-space-check" => r.tool.skip_space_check = true,
        "max-memory" => {
            r.tool.max_memory = Some(
                crate::plan::value::parse_size(v)
                    .map_err(|acc| UsageError(format!("--max-memory={v}: expected {acc}")))?
                    .bytes,
            )
        }
        // Accepted as fio accepts them; what they change is fio's live display, its debug
        // log, its triggers or its allocator, none of which the run's figures depend on.
        _ => {}
    }
    Ok(None)
}

/// `fio --help`, as fio mode has it.
fn usage() -> String {
    format!(
        "fio-3.33 (iogauge {} fio mode)\n\
         fio [options] [job options] <job file(s)>\n\
         \x20 --output=file\t\tWrite the report to file\n\
         \x20 --output-format=type\tnormal, terse, json or json+ (a comma list for several)\n\
         \x20 --minimal\t\tterse output\n\
         \x20 --terse-version=n\tterse version (2, 3 or 4)\n\
         \x20 --max-jobs=n\t\tthe most jobs the run may have\n\
         \x20 --parse-only\t\tparse the options, run nothing\n\
         \x20 --section=name\tonly this job section of the files (repeat or a comma list)\n\
         \x20 --readonly\t\trefuse any job that writes\n\
         \x20 --showcmd\t\tprint each job as command-line options\n\
         \x20 --cmdhelp=option\thelp on a job option (all: every option)\n\
         \x20 --enghelp=engine\tthe I/O engines\n\
         \x20 --warnings-fatal\ta warning ends the run before it starts\n\
         \x20 --version\t\tthe version\n\
         Job options: as in a job file, --name=value; each --name starts a job.\n\
         iogauge's own: --allow-overwrite, --overwrite-output, --skip-space-check, \
         --max-memory=SIZE.\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// `--cmdhelp[=option]`: one option's help, or (`all` or none) every option's name.
fn cmdhelp(option: Option<&str>) -> Result<String, UsageError> {
    let all = || {
        crate::plan::options::OPTIONS
            .iter()
            .map(|d| format!("{:<24}: {}\n", d.name, d.kind.describe()))
            .collect::<String>()
    };
    match option {
        None | Some("" | "all") => Ok(all()),
        Some(o) => match lookup(o) {
            Some(d) => Ok(format!(
                "{:<20}: {}\n{:<20}: {}\n{:<20}: {}\n",
                d.name,
                d.help.split_whitespace().collect::<Vec<_>>().join(" "),
                "type",
                d.kind.describe(),
                "default",
                d.default.unwrap_or("(none)")
            )),
            None => Err(UsageError(format!(
                "--cmdhelp={o}: no such option (--cmdhelp=all lists them)"
            ))),
        },
    }
}

/// `--enghelp[=engine]`: the engines fio mode runs.
fn enghelp(engine: Option<&str>) -> String {
    let engines: Vec<&str> = crate::plan::options::ENGINES.to_vec();
    let own = |e: &str| -> Option<String> {
        engines
            .contains(&e)
            .then(|| crate::plan::options::engine_options(e).join(" "))
    };
    match engine {
        Some(e) if !e.is_empty() => match own(e) {
            Some(o) if o.is_empty() => format!("{e}: no engine-specific options\n"),
            Some(o) => format!(
                "{e}:\n\t{}\n",
                o.split(' ').collect::<Vec<_>>().join("\n\t")
            ),
            None => format!(
                "{e}: iogauge has no such engine; it has {}\n",
                engines.join(", ")
            ),
        },
        _ => format!("Available IO engines:\n\t{}\n", engines.join("\n\t")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    fn fio(a: &[&str]) -> FioRequest {
        match parse(&args(a)) {
            Ok(super::super::Request::Fio(r)) => r,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn job_files_stand_anywhere_and_tool_options_take_either_form() {
        let r = fio(&[
            "--max-jobs=16",
            "a.fio",
            "--output-format",
            "json,json+",
            "-output=x.out",
            "b.fio",
        ]);
        assert_eq!(
            r.files,
            vec![PathBuf::from("a.fio"), PathBuf::from("b.fio")]
        );
        assert_eq!(r.max_jobs, Some(16));
        // json+ is json with more: asked for both, fio writes json+ once.
        assert_eq!(r.outputs.formats, vec![FioFormat::JsonPlus]);
        assert_eq!(r.outputs.output, Some(PathBuf::from("x.out")));
        assert!(r.tool.keep, "fio keeps its files");
    }

    #[test]
    fn options_before_the_first_name_are_every_jobs_defaults() {
        let r = fio(&[
            "--rw=read",
            "--size",
            "1m",
            "--name=a",
            "--bs=4k",
            "--thread",
            "--name=global",
            "--iodepth=2",
            "--name=b",
        ]);
        let keys = |s: &Section| {
            s.entries
                .iter()
                .map(|e| format!("{}={}", e.key, e.value.clone().unwrap_or_default()))
                .collect::<Vec<_>>()
        };
        assert_eq!(r.jobs.len(), 2);
        assert_eq!(r.jobs[0].name, "a");
        // `--thread` takes no value: it does not swallow `--name=global`.
        assert_eq!(keys(&r.jobs[0]), ["rw=read", "size=1m", "bs=4k", "thread="]);
        // What follows --name=global is a default again, for the jobs after it (as fio).
        assert_eq!(r.jobs[1].name, "b");
        assert_eq!(keys(&r.jobs[1]), ["rw=read", "size=1m", "iodepth=2"]);
        assert_eq!(keys(&r.globals), ["rw=read", "size=1m", "iodepth=2"]);
    }

    /// `--enghelp=ENGINE` lists the engine's own options, each of them one iogauge takes.
    #[test]
    fn enghelp_lists_each_engines_own_options() {
        assert!(enghelp(None).contains("\tlibaio\n"));
        let aio = enghelp(Some("libaio"));
        assert_eq!(aio.lines().next(), Some("libaio:"));
        for line in aio
            .lines()
            .skip(1)
            .chain(enghelp(Some("io_uring")).lines().skip(1))
        {
            let o = line.trim();
            assert!(crate::plan::options::lookup(o).is_some(), "{o}");
        }
        assert!(aio.contains("\tuserspace_reap\n"));
        assert_eq!(
            enghelp(Some("psync")),
            "psync: no engine-specific options\n"
        );
        assert!(enghelp(Some("rdma")).contains("no such engine"));
    }

    #[test]
    fn client_server_and_bad_values_are_refused_by_name() {
        for (a, want) in [
            (
                &["--client=h", "x.fio"][..],
                "--client: fio's client/server mode",
            ),
            (
                &["--terse-version=9", "x.fio"][..],
                "--terse-version=9: expected 2, 3 or 4",
            ),
            (&["--output-format=xml", "x.fio"][..], "xml"),
            (&["--max-jobs"][..], "--max-jobs: needs a value"),
            (&["-q", "x.fio"][..], "-q: not one of fio's options"),
            (&[][..], "no jobs"),
        ] {
            let e = parse(&args(a)).expect_err(&format!("{a:?}"));
            assert!(e.0.contains(want), "{a:?}: {}", e.0);
        }
    }
}
