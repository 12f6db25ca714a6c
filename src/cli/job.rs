//! `iogauge run` and the job commands: the workload flags made from the option table, their
//! order kept as given, and the job files and --set overrides they combine with.

use clap::{Arg, ArgAction, ArgMatches, Command, parser::ValueSource};

use super::tool::{tool_args, tool_options};
use super::{Request, UsageError};
use crate::plan::options::{Kind, OPTIONS};
use crate::plan::{Origin, Section};
use crate::rawpath;

pub(super) fn run_command() -> Command {
    let cmd = Command::new("run")
        .about("Run jobs with fio-style options (each --name starts a job, as in fio)")
        .args_override_self(true)
        .after_help(
            "Sizes and durations use fio's syntax (4k, 1m, 10g; 30s, 5m). As on fio's command \
             line, each --name starts a job and the options before the first --name apply to \
             every job: --size=1g --name=r --rw=read --name=w --rw=write runs a reader and a \
             writer side by side.",
        );
    tool_args(workload_args(cmd))
}

pub(super) fn job_command() -> Command {
    let cmd = Command::new("job")
        .about("Run fio job files (also: iogauge FILE.fio)")
        .args_override_self(true)
        .after_help(
            "Workload options given here act as fio's command-line options do with a job file: \
             they are defaults, and the file's own values win. --set KEY=VALUE wins over the \
             file (to scale a job down: --set size=64m --set runtime=10). Several files run one \
             after another.",
        )
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

/// The workload flags, one per row of the option table.
pub(super) fn workload_args(mut cmd: Command) -> Command {
    for def in OPTIONS {
        let dashed = def.name.replace('_', "-");
        let mut arg = Arg::new(def.name)
            .long(def.name)
            .value_name(def.kind.describe().to_uppercase())
            .help(match def.default {
                Some(d) => format!("{} [default: {d}]", def.help),
                None => def.help.to_string(),
            });
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
        cmd = cmd.arg(arg.action(ArgAction::Append));
    }
    cmd
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
