//! `iogauge run` and the job commands: the workload flags made from the option table, their
//! order kept as given, and the job files and --set overrides they combine with.

use clap::{Arg, ArgAction, ArgMatches, Command, parser::ValueSource};

use super::tool::{tool_args, tool_options};
use super::{Request, UsageError};
use crate::plan::options::{Kind, OPTIONS};
use crate::plan::{Origin, Section};
use crate::rawpath;

/// The workload options `--help` shows, by topic, in the order shown, each with a line of
/// help (the table's whole text: `iogauge options NAME`); every other option of the table
/// works the same but is listed only by `iogauge options`.
pub(super) const TOPICS: &[(&str, &[(&str, &str)])] = &[
    (
        "What to run",
        &[
            ("name", "Job name; each --name starts a job"),
            (
                "rw",
                "read, write, randread, randwrite, rw, randrw, update, trim, ...",
            ),
            ("bs", "Bytes per I/O (bs=4k,64k: reads, writes)"),
            ("rwmixread", "Percent of reads in rw and randrw"),
            (
                "ioengine",
                "psync, sync, vsync, pvsync, pvsync2, io_uring, libaio, null, ...",
            ),
            ("iodepth", "I/Os in flight per job (io_uring, libaio)"),
            ("numjobs", "Threads running this job, started together"),
            ("direct", "O_DIRECT: bypass the page cache"),
            ("sync", "Write-through: dsync (O_DSYNC) or sync (O_SYNC)"),
            (
                "fdatasync",
                "fdatasync(2) after every N writes (database logs)",
            ),
            (
                "verify",
                "Read back and check what was written: crc32c, md5, ...",
            ),
        ],
    ),
    (
        "Where",
        &[
            ("filename", "File(s) or block device(s), ':'-separated"),
            ("directory", "Directory for one file per job (NAME.CLONE.0)"),
            (
                "size",
                "Bytes per job, over its files (N%: of an existing file)",
            ),
        ],
    ),
    (
        "How long",
        &[
            ("runtime", "Stop after this long (30, 30s, 5m)"),
            ("time_based", "Loop over the files until runtime has passed"),
            ("ramp_time", "Run this long before measuring"),
        ],
    ),
];

/// `run --help`'s layout: examples before the options.
const RUN_TEMPLATE: &str = "\
{about-with-newline}
{usage-heading} {usage}

Examples:
  # 4 KiB random reads by 4 threads over one shared 1 GiB file, 60 s
  iogauge run --filename=/data/t --rw=randread --bs=4k --size=1g --numjobs=4 --runtime=60
  # SAS-style streams: 8 jobs of 128 KiB sequential reads, direct I/O, one file each
  iogauge run --directory=/saswork --rw=read --bs=128k --size=4g --numjobs=8 --direct=1
  # Database log writes: 8 KiB, each made durable (fdatasync) before the next
  iogauge run --filename=/db/log.test --rw=write --bs=8k --size=256m --fdatasync=1
  # A reader and a writer side by side (each --name starts a job), report as JSON
  iogauge run --size=1g --name=r --rw=read --name=w --rw=write --output-format=json

{all-args}{after-help}";

pub(super) fn run_command() -> Command {
    let cmd = Command::new("run")
        .about("Run jobs with fio-style options (each --name starts a job, as in fio)")
        .args_override_self(true)
        .help_template(RUN_TEMPLATE)
        .after_help(more_options_help());
    tool_args(workload_args(cmd))
}

/// What `--help` leaves out and where it is.
fn more_options_help() -> String {
    format!(
        "These are the options most runs need. All {} of fio's options that iogauge takes work \
         here too (--rate, --bsrange, --fsync, --write_bw_log, ...): `iogauge options` lists \
         them, `iogauge options NAME` explains one. Sizes and durations use fio's syntax (4k, \
         1m, 10g; 30s, 5m). As on fio's command line, the options before the first --name \
         apply to every job.",
        OPTIONS.len()
    )
}

pub(super) fn job_command() -> Command {
    let cmd = Command::new("job")
        .about("Run fio job files (also: iogauge FILE.fio)")
        .args_override_self(true)
        .after_help(format!(
            "Workload options given here act as fio's command-line options do with a job file: \
             they are defaults, and the file's own values win. --set KEY=VALUE wins over the \
             file (to scale a job down: --set size=64m --set runtime=10). Several files run one \
             after another. {}",
            more_options_help()
        ))
        .arg(
            Arg::new("files")
                .value_name("FILE.fio")
                .required(true)
                .num_args(1..),
        )
        .arg(
            Arg::new("set")
                .long("set")
                .value_name("KEY=VALUE")
                .action(ArgAction::Append)
                .help("Override an option in every job, over what the file says"),
        )
        .arg(
            Arg::new("section")
                .long("section")
                .value_name("NAME")
                .action(ArgAction::Append)
                .help("Run only this job section (repeatable), as fio's --section"),
        )
        .arg(
            Arg::new("parse-only")
                .long("parse-only")
                .action(ArgAction::SetTrue)
                .help("Check the files and print the resolved jobs; run nothing"),
        );
    tool_args(workload_args(cmd))
}

/// The workload flags, one per row of the option table: those of [`TOPICS`] shown by
/// `--help` under their topic with their line of help, the rest taken but left to
/// `iogauge options`.
pub(super) fn workload_args(mut cmd: Command) -> Command {
    for (topic, shown) in TOPICS {
        for (name, brief) in *shown {
            let def = crate::plan::options::lookup(name).expect("a row of the table");
            let help = match def.default {
                Some(d) => format!("{brief} [default: {d}]"),
                None => brief.to_string(),
            };
            cmd = cmd.arg(workload_arg(def).help(help).help_heading(*topic));
        }
    }
    let shown = |name: &str| {
        TOPICS
            .iter()
            .any(|(_, s)| s.iter().any(|(n, _)| *n == name))
    };
    for def in OPTIONS {
        if !shown(def.name) {
            cmd = cmd.arg(workload_arg(def).hide(true));
        }
    }
    cmd
}

/// The flag of one row of the option table.
fn workload_arg(def: &'static crate::plan::options::OptionDef) -> Arg {
    {
        let dashed = def.name.replace('_', "-");
        let mut arg = Arg::new(def.name)
            .long(def.name)
            .value_name(value_name(def));
        if dashed != def.name {
            arg = arg.alias(dashed);
        }
        for a in def.aliases {
            arg = arg.alias(*a);
        }
        arg = if def.kind == Kind::Bool {
            arg.num_args(0..=1)
                .default_missing_value("1")
                .require_equals(true)
        } else if crate::plan::options::VALUE_OPTIONAL.contains(&def.name) {
            // A log asked for without a name: the job's (fio's).
            arg.num_args(0..=1)
                .default_missing_value("")
                .require_equals(true)
        } else {
            arg.num_args(1)
        };
        // Every occurrence is kept with its place, so --name can split the line into jobs.
        arg.action(ArgAction::Append)
    }
}

/// The value's placeholder, short so the help has room: the accepted values are in the help
/// (a choice's words) and in `iogauge options NAME`.
fn value_name(def: &crate::plan::options::OptionDef) -> String {
    let said = def.kind.describe();
    match def.kind {
        Kind::Choice(_) => "WORD".into(),
        Kind::Size => "SIZE".into(),
        Kind::Seconds | Kind::Micros => "TIME".into(),
        Kind::Int { .. } => "N".into(),
        Kind::Bool => "0|1".into(),
        _ if said.len() <= 16 => said.to_uppercase(),
        _ => "VALUE".into(),
    }
}

/// The workload flags given on the command line, in the order given (a later value wins).
pub(super) fn ordered_flags(sm: &ArgMatches) -> Vec<(usize, &'static str, &String)> {
    let mut flags = Vec::new();
    for def in OPTIONS {
        if sm.value_source(def.name) != Some(ValueSource::CommandLine) {
            continue;
        }
        let (Some(at), Some(values)) = (sm.indices_of(def.name), sm.get_many::<String>(def.name))
        else {
            continue;
        };
        flags.extend(at.zip(values).map(|(i, v)| (i, def.name, v)));
    }
    flags.sort_by_key(|f| f.0);
    flags
}

/// The workload flags as entries of one section (`iogauge job`'s defaults).
pub(super) fn workload_entries(sm: &ArgMatches) -> Section {
    let mut section = Section::new("job");
    for (_, k, v) in ordered_flags(sm) {
        section.set(k, v, Origin::Cli);
    }
    section
}

/// fio's command line: each `--name` starts a job; what comes before the first applies to all.
pub(super) fn run_sections(sm: &ArgMatches) -> Vec<Section> {
    let mut global: Vec<(&str, &String)> = Vec::new();
    let mut jobs: Vec<Section> = Vec::new();
    for (_, k, v) in ordered_flags(sm) {
        if k == "name" {
            let mut job = Section::new(v.as_str());
            for &(gk, gv) in &global {
                job.set(gk, gv, Origin::Cli);
            }
            jobs.push(job);
        }
        match jobs.last_mut() {
            Some(job) => {
                job.set(k, v, Origin::Cli);
            }
            None => global.push((k, v)),
        }
    }
    if jobs.is_empty() {
        let mut job = Section::new("job");
        for (k, v) in global {
            job.set(k, v, Origin::Cli);
        }
        jobs.push(job);
    }
    jobs
}

/// `--set KEY=VALUE`, each over what a job file says.
pub(super) fn set_overrides(sm: &ArgMatches) -> Result<Section, UsageError> {
    let mut overrides = Section::new("--set");
    for kv in sm.get_many::<String>("set").into_iter().flatten() {
        let Some((k, v)) = kv.split_once('=') else {
            return Err(UsageError(format!(
                "--set={kv}: expected KEY=VALUE (--set size=64m)"
            )));
        };
        overrides.set(k.trim(), v.trim(), Origin::Cli);
    }
    Ok(overrides)
}

/// `iogauge job FILE… [--set K=V] [--section S]`.
pub(super) fn job_request(sm: &ArgMatches) -> Result<Request, UsageError> {
    let overrides = set_overrides(sm)?;
    Ok(Request::Job {
        files: sm
            .get_many::<String>("files")
            .expect("required")
            .map(|s| rawpath::path(s))
            .collect(),
        defaults: workload_entries(sm),
        overrides,
        sections: sm
            .get_many::<String>("section")
            .into_iter()
            .flatten()
            .cloned()
            .collect(),
        parse_only: sm.get_flag("parse-only"),
        tool: tool_options(sm)?,
    })
}
