//! The tool's own flags, shared by the measuring commands: outputs and their formats, the
//! safety switches, the memory cap, --repeat, the rounds and the scale-out options.

use std::path::PathBuf;

use clap::{Arg, ArgAction, ArgMatches, Command, parser::ValueSource};

use super::UsageError;
use crate::rawpath;
use crate::report::Format;

/// Flags that shape the tool's behaviour rather than the workload.
#[derive(Debug, Clone)]
pub struct ToolOptions {
    /// At least one; each once.
    pub formats: Vec<Format>,
    pub output: Option<PathBuf>,
    pub keep: bool,
    pub allow_overwrite: bool,
    pub skip_space_check: bool,
    /// `--max-memory`: the memory the run may use (default: the machine's available memory).
    pub max_memory: Option<u64>,
    /// `--repeat=N`: run the plan N times and report the spread.
    pub repeat: u32,
    /// `--until-steady`, `--precondition`.
    pub rounds: crate::studies::rounds::RoundsSpec,
    /// Replace report and log files iogauge did not write.
    pub overwrite_output: bool,
    /// `--rank-stonewall`: under mpirun, every rank stops a group when the first finishes it.
    pub rank_stonewall: bool,
    /// `--rank-read-shift`: under mpirun, read jobs read another rank's files.
    pub rank_read_shift: Option<crate::studies::scaleout::ReadShift>,
    /// `--rank-timeout`: under mpirun, how long a rank waits for the others at any meeting
    /// (None: the default, from the plan).
    pub rank_timeout: Option<std::time::Duration>,
    /// `--rank-mixed`: under mpirun, ranks may run other options than rank 0.
    pub rank_mixed: bool,
    /// `--rank-jobs`: under mpirun, a row per rank's job or per host and job (None: not
    /// given, auto).
    pub rank_jobs: Option<crate::studies::scaleout::RankJobs>,
}

impl ToolOptions {
    /// The flags every measuring command shares (safety, memory, repeat), with the
    /// scale-out and round options off.
    pub(super) fn shared(
        m: &ArgMatches,
        formats: Vec<Format>,
        output: Option<PathBuf>,
    ) -> Result<ToolOptions, UsageError> {
        Ok(ToolOptions {
            formats,
            output,
            keep: m.get_flag("keep"),
            allow_overwrite: m.get_flag("allow-overwrite"),
            skip_space_check: m.get_flag("skip-space-check"),
            max_memory: max_memory(m)?,
            overwrite_output: m.get_flag("overwrite-output"),
            repeat: *m.get_one::<u32>("repeat").expect("has default"),
            rank_stonewall: false,
            rank_read_shift: None,
            rank_timeout: None,
            rank_mixed: false,
            rank_jobs: None,
            rounds: crate::studies::rounds::RoundsSpec::default(),
        })
    }
}

impl ToolOptions {
    /// fio mode's: files kept (fio removes only with unlink=1), one run, iogauge's safety
    /// switches off until given; its outputs are fio mode's own (`cli::FioOutputs`).
    pub fn fio_defaults() -> ToolOptions {
        ToolOptions {
            formats: vec![Format::Json],
            output: None,
            keep: true,
            allow_overwrite: false,
            skip_space_check: false,
            max_memory: None,
            overwrite_output: false,
            repeat: 1,
            rounds: crate::studies::rounds::RoundsSpec::default(),
            rank_stonewall: false,
            rank_read_shift: None,
            rank_timeout: None,
            rank_mixed: false,
            rank_jobs: None,
        }
    }

    /// The report files a run writes that `--output` names (without it, one format goes to
    /// stdout and several to `iogauge-DATE-TIME` files named when the run ends; with several
    /// formats, text goes to stdout as well).
    pub fn report_files(&self) -> Vec<PathBuf> {
        match (&self.output, self.formats.as_slice()) {
            (Some(p), [_]) => vec![p.clone()],
            (Some(stem), formats) => formats
                .iter()
                .map(|f| stem.with_extension(f.ext()))
                .collect(),
            (None, _) => Vec::new(),
        }
    }
}

pub(super) fn tool_args(cmd: Command) -> Command {
    let cmd = cmd
        .arg(
            Arg::new("output-format")
                .long("output-format")
                .help_heading("Output")
                .value_name("FORMAT")
                .default_value("text")
                .help(
                    "text, json (fio's and more), csv, html, or several (text,json: text on \
                     stdout, the others to files named after --output)",
                ),
        )
        .arg(
            Arg::new("output")
                .long("output")
                .help_heading("Output")
                .value_name("FILE")
                .help("Write the report to FILE"),
        );
    safety_args(cmd, "Keep the files iogauge created (default: remove them)")
        .arg(overwrite_output_arg())
        .arg(repeat_arg())
        .args(rank_args())
        .arg(
            Arg::new("until-steady")
                .long("until-steady")
                .help_heading("Rounds and scale-out")
                .action(ArgAction::SetTrue)
                .help(
                    "Run the workload round after round on the same files until the last 5 rounds \
                 are steady (SNIA PTS: range within 20% and best-fit excursion within 10% of \
                 their average), at most --max-rounds",
                ),
        )
        .arg(
            Arg::new("max-rounds")
                .long("max-rounds")
                .help_heading("Rounds and scale-out")
                .value_name("N")
                .default_value("25")
                .value_parser(clap::value_parser!(u32).range(5..=1000))
                .help("With --until-steady: the most rounds (SNIA: 25)"),
        )
        .arg(
            Arg::new("precondition")
                .long("precondition")
                .help_heading("Rounds and scale-out")
                .value_name("N")
                .num_args(0..=1)
                .default_missing_value("2")
                .value_parser(clap::value_parser!(u32).range(1..=100))
                .help(
                    "First write the files sequentially N times (default 2, SNIA's for SSDs), \
                 untimed, then run the workload",
                ),
        )
}

/// --keep, --allow-overwrite, --skip-space-check: what the run may do to files.
pub(super) fn safety_args(cmd: Command, keep_help: &'static str) -> Command {
    cmd.arg(
        Arg::new("keep")
            .long("keep")
            .help_heading("Safety")
            .action(ArgAction::SetTrue)
            .help(keep_help),
    )
    .arg(
        Arg::new("allow-overwrite")
            .long("allow-overwrite")
            .help_heading("Safety")
            .action(ArgAction::SetTrue)
            .help("Allow writing to existing files and block devices (destroys their data)"),
    )
    .arg(
        Arg::new("skip-space-check")
            .long("skip-space-check")
            .help_heading("Safety")
            .action(ArgAction::SetTrue)
            .help("Do not refuse when statvfs reports too little free space"),
    )
    .arg(
        Arg::new("max-memory")
            .long("max-memory")
            .help_heading("Safety")
            .value_name("SIZE")
            .help(
                "The memory the run may use (buffers, verify maps, statistics) [default: what \
                 the machine has available]; a plan that needs more is refused before anything \
                 is created",
            ),
    )
}

/// `--max-memory=SIZE`, checked.
pub(super) fn max_memory(m: &ArgMatches) -> Result<Option<u64>, UsageError> {
    match m.get_one::<String>("max-memory") {
        None => Ok(None),
        Some(t) => match crate::plan::value::parse_size(t) {
            Ok(s) if s.bytes > 0 => Ok(Some(s.bytes)),
            _ => Err(UsageError(format!(
                "--max-memory={t}: expected a size above zero (512m, 8g)"
            ))),
        },
    }
}

pub(super) fn repeat_arg() -> Arg {
    Arg::new("repeat")
        .long("repeat")
        .help_heading("Output")
        .value_name("N")
        .default_value("1")
        .value_parser(clap::value_parser!(u32).range(1..=1000))
        .help("Run N times: each figure's mean, spread and 95% confidence interval")
}

/// The scale-out flags (under mpirun or srun).
fn rank_args() -> [Arg; 5] {
    [
        Arg::new("rank-stonewall")
            .long("rank-stonewall")
            .help_heading("Rounds and scale-out")
            .action(ArgAction::SetTrue)
            .help(
                "Under mpirun/srun: every rank stops a group as soon as the first rank \
             finishes it (IOR's stonewalling); the group's figure is what all ranks moved \
             until then",
            ),
        Arg::new("rank-read-shift")
            .long("rank-read-shift")
            .help_heading("Rounds and scale-out")
            .value_name("host|N")
            .value_parser(|v: &str| v.parse::<crate::studies::scaleout::ReadShift>())
            .help(
                "Under mpirun/srun: each rank's read-only jobs read the files of the rank N \
             further on (host: the nearest rank on another host), not their own (IOR's -C): \
             reads that the writing host's page cache cannot serve",
            ),
        Arg::new("rank-timeout")
            .long("rank-timeout")
            .help_heading("Rounds and scale-out")
            .value_name("TIME")
            .value_parser(|v: &str| {
                crate::plan::value::parse_duration(v, std::time::Duration::from_secs(1))
                    .map_err(|e| e.to_string())
                    .and_then(|d| {
                        if d.is_zero() {
                            Err("expected a time above zero (30s, 5m)".to_string())
                        } else {
                            Ok(d)
                        }
                    })
            })
            .help(
                "Under mpirun/srun: how long a rank waits for the others at the start of a \
             group or at the end before it gives them up, reports what it has and names \
             the ranks that did not answer [default: 10 minutes, or twice the plan's timed \
             runtime when longer]",
            ),
        Arg::new("rank-mixed")
            .long("rank-mixed")
            .help_heading("Rounds and scale-out")
            .action(ArgAction::SetTrue)
            .help(
                "Under mpirun/srun: run ranks that were given other options than rank 0 (an \
             MPMD launch, a job file that differs between hosts) instead of refusing them; \
             the report names them",
            ),
        Arg::new("rank-jobs")
            .long("rank-jobs")
            .help_heading("Rounds and scale-out")
            .value_name("each|host|auto")
            .value_parser(|v: &str| v.parse::<crate::studies::scaleout::RankJobs>())
            .help(
                "Under mpirun/srun: the merged report's job rows: each rank's (NAME@HOST#RANK), \
             or one per host and job (NAME@HOST, its ranks added up), so the report and rank \
             0's memory grow with the hosts, not the ranks [default: auto, host above 256 \
             ranks]",
            ),
    ]
}

pub(super) fn overwrite_output_arg() -> Arg {
    Arg::new("overwrite-output")
        .long("overwrite-output")
        .help_heading("Output")
        .action(ArgAction::SetTrue)
        .help("Replace report and log files iogauge did not write (never through a link)")
}

/// `--output-format text|json` of the commands that print one report (replay, predict).
pub(super) fn text_or_json_arg() -> Arg {
    Arg::new("output-format")
        .long("output-format")
        .value_name("FORMAT")
        .default_value("text")
        .value_parser(["text", "json"])
        .help("text or json")
}

/// Whether `text_or_json_arg` asked for JSON.
pub(super) fn wants_json(m: &ArgMatches) -> bool {
    m.get_one::<String>("output-format").map(String::as_str) == Some("json")
}

pub(super) fn tool_options(m: &ArgMatches) -> Result<ToolOptions, UsageError> {
    let formats = Format::parse_list(m.get_one::<String>("output-format").expect("has default"))
        .map_err(UsageError::of)?;
    let output = m.get_one::<String>("output").map(|s| rawpath::path(s));
    let tool = ToolOptions {
        rank_stonewall: m.get_flag("rank-stonewall"),
        rank_read_shift: m.get_one("rank-read-shift").copied(),
        rank_timeout: m.get_one("rank-timeout").copied(),
        rank_mixed: m.get_flag("rank-mixed"),
        rank_jobs: m.get_one("rank-jobs").copied(),
        rounds: crate::studies::rounds::RoundsSpec {
            max: if m.get_flag("until-steady") {
                *m.get_one::<u32>("max-rounds").expect("has default") as usize
            } else {
                0
            },
            precondition: m.get_one::<u32>("precondition").copied().unwrap_or(0),
        },
        ..ToolOptions::shared(m, formats, output)?
    };
    if tool.repeat > 1 && tool.rounds.max > 0 {
        return Err(UsageError(
            "--repeat with --until-steady: the rounds already repeat the workload; give one".into(),
        ));
    }
    if m.value_source("max-rounds") == Some(ValueSource::CommandLine) && tool.rounds.max == 0 {
        return Err(UsageError(
            "--max-rounds: goes with --until-steady (the rounds it limits)".into(),
        ));
    }
    for p in tool.report_files() {
        check_output("--output", &p, tool.overwrite_output)?;
    }
    if tool.output.is_none()
        && tool.formats.iter().filter(|f| **f != Format::Text).count() > 0
        && tool.formats.len() > 1
    {
        // The files are named when the run ends (iogauge-DATE-TIME.EXT), here.
        crate::files::named::check_dir(std::path::Path::new(".")).map_err(|e| {
            UsageError(format!(
                "--output-format: the report files go to the current directory: {e}"
            ))
        })?;
    }
    Ok(tool)
}

/// Refuses, before anything runs, an output file that may not be written (see
/// `named::check_output`), naming the option.
pub(super) fn check_output(
    option: &str,
    p: &std::path::Path,
    replace: bool,
) -> Result<(), UsageError> {
    crate::files::named::check_output(p, replace)
        .map_err(|e| UsageError(format!("{option}={}: {e}", p.display())))
}
