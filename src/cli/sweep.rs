//! `iogauge sweep`: its flags, and the request they make.

use std::path::PathBuf;

use clap::{Arg, ArgAction, ArgMatches, Command};

use super::*;

pub(super) fn sweep_command() -> Command {
    let cmd = Command::new("sweep")
        .about("Run a workload over a grid of option values, point by point, into one directory")
        .args_override_self(true)
        .after_help(
            "Each --sweep NAME=VALUES adds an axis: a list (numpages=3,20,50) or a range \
             (bs=4k..1m:x2, iodepth=1..256:x2, numjobs=1..8:+1). The grid runs point by point, \
             the first axis slowest. DIR gets each point's full JSON report under points/, and \
             index.json and index.csv (a row per point, each swept value a column); the table \
             of two swept options is printed at the end and saved as table.txt. A point that \
             fails is recorded and the sweep goes on; --resume runs what an interrupted sweep \
             left.",
        )
        .arg(
            Arg::new("sweep")
                .long("sweep")
                .value_name("NAME=VALUES")
                .action(ArgAction::Append)
                .required(true)
                .help("An option and its values: a list (3,20,50) or a range (4k..1m:x2)"),
        )
        .arg(
            Arg::new("dir")
                .long("dir")
                .value_name("DIR")
                .required(true)
                .help("Where the points' reports and the index go (new, or with --resume)"),
        )
        .arg(
            Arg::new("resume")
                .long("resume")
                .action(ArgAction::SetTrue)
                .help("Continue the sweep in DIR: run only the points not done"),
        )
        .arg(
            Arg::new("table")
                .long("table")
                .value_name("ROW,COL")
                .help("The table's rows and columns: two swept options [default: the first two]"),
        )
        .arg(
            Arg::new("metric")
                .long("metric")
                .value_name("METRIC")
                .default_value("mb/s")
                .help("What the table shows: mb/s, mib/s, iops, p99 or seconds"),
        )
        .arg(
            Arg::new("max-p99")
                .long("max-p99")
                .value_name("TIME")
                .help("The best point is the best whose p99 latency is within TIME (2ms, 500us)"),
        )
        .arg(
            Arg::new("knee")
                .long("knee")
                .value_name("PCT")
                .default_value("10%")
                .help("A numeric axis's knee: the value after which the next step gains less than PCT"),
        )
        .arg(
            Arg::new("job")
                .long("job")
                .value_name("FILE.fio")
                .action(ArgAction::Append)
                .help("Sweep a job file's jobs instead of the workload flags (repeatable)"),
        )
        .arg(
            Arg::new("set")
                .long("set")
                .value_name("KEY=VALUE")
                .action(ArgAction::Append)
                .help("With --job: override an option in every job, over what the file says"),
        )
        .arg(repeat_arg())
        .arg(overwrite_output_arg());
    workload_args(safety_args(
        cmd,
        "Keep the files iogauge created (default: remove them after each point)",
    ))
}

/// `iogauge sweep …`: the axes and the base are checked here; the points when they run.
pub(super) fn sweep_request(args: &[String], sm: &ArgMatches) -> Result<Request, UsageError> {
    let axes = axes(sm)?;
    let (table, metric, max_p99_us, knee_pct) = answers(sm)?;
    let base = base(sm)?;
    Ok(Request::Sweep(SweepRequest {
        base,
        axes,
        dir: rawpath::path(sm.get_one::<String>("dir").expect("required")),
        resume: sm.get_flag("resume"),
        table,
        metric,
        max_p99_us,
        knee_pct,
        tool: ToolOptions::shared(sm, vec![Format::Json], None)?,
        base_args: base_args(args),
    }))
}

/// `--sweep` axes: each parsed, none twice, the grid within its bound.
fn axes(sm: &ArgMatches) -> Result<Vec<crate::studies::sweep::Axis>, UsageError> {
    let mut axes: Vec<crate::studies::sweep::Axis> = Vec::new();
    for a in sm.get_many::<String>("sweep").into_iter().flatten() {
        let axis = crate::studies::sweep::parse_axis(a).map_err(UsageError::of)?;
        if axes.iter().any(|x| x.name == axis.name) {
            return Err(UsageError(format!(
                "--sweep={a}: {} is swept twice; give its values once",
                axis.name
            )));
        }
        axes.push(axis);
    }
    crate::studies::sweep::grid(&axes).map_err(UsageError::of)?;
    Ok(axes)
}

/// What the sweep's answers ask for: the table's axes, its metric, the p99 bound and the
/// knee's threshold.
#[allow(clippy::type_complexity)]
fn answers(
    sm: &ArgMatches,
) -> Result<
    (
        Option<(String, String)>,
        crate::studies::sweep::Metric,
        Option<f64>,
        f64,
    ),
    UsageError,
> {
    let table = match sm.get_one::<String>("table") {
        Some(t) => {
            let Some((r, c)) = t.split_once(',') else {
                return Err(UsageError(format!(
                    "--table={t}: expected ROW,COL, two swept options (--table numpages,bs)"
                )));
            };
            Some((r.trim().to_string(), c.trim().to_string()))
        }
        None => None,
    };
    let metric_text = sm.get_one::<String>("metric").expect("has default");
    let metric = crate::studies::sweep::Metric::parse(metric_text).ok_or_else(|| {
        UsageError(format!(
            "--metric={metric_text}: expected {}",
            crate::studies::sweep::Metric::ACCEPTED
        ))
    })?;
    let max_p99_us = match sm.get_one::<String>("max-p99") {
        Some(t) => Some(
            crate::plan::value::parse_duration(t, std::time::Duration::from_micros(1))
                .ok()
                .filter(|d| !d.is_zero())
                .ok_or_else(|| {
                    UsageError(format!(
                        "--max-p99={t}: expected a latency above zero (2ms, 500us; a bare \
                         number is µs)"
                    ))
                })?
                .as_secs_f64()
                * 1e6,
        ),
        None => None,
    };
    let knee_text = sm.get_one::<String>("knee").expect("has default");
    let knee_pct = knee_text
        .trim_end_matches('%')
        .parse::<f64>()
        .ok()
        .filter(|p| *p > 0.0 && *p < 1000.0)
        .ok_or_else(|| {
            UsageError(format!(
                "--knee={knee_text}: expected a percentage above 0 (10%, 5)"
            ))
        })?;
    Ok((table, metric, max_p99_us, knee_pct))
}

/// The workload every point shares: the options given, or job files with their overrides.
fn base(sm: &ArgMatches) -> Result<SweepBase, UsageError> {
    let files: Vec<PathBuf> = sm
        .get_many::<String>("job")
        .into_iter()
        .flatten()
        .map(|s| rawpath::path(s))
        .collect();
    let overrides = set_overrides(sm)?;
    if files.is_empty() && !overrides.entries.is_empty() {
        return Err(UsageError(
            "--set: overrides a job file's options; without --job give the options themselves"
                .into(),
        ));
    }
    Ok(if files.is_empty() {
        SweepBase::Options(run_sections(sm))
    } else {
        SweepBase::Jobs {
            files,
            defaults: workload_entries(sm),
            overrides,
        }
    })
}

/// The command line without the sweep's own flags: what every point's report records.
fn base_args(args: &[String]) -> Vec<String> {
    // What every point shares: the command line without the sweep's own flags.
    let own = [
        "--dir",
        "--resume",
        "--table",
        "--metric",
        "--sweep",
        "--repeat",
        "--max-p99",
        "--knee",
        "--overwrite-output",
        "--max-memory",
    ];
    let mut base_args = Vec::new();
    let mut skip = false;
    for a in args.iter().skip(1) {
        if skip {
            skip = false;
            continue;
        }
        let flag = a.split('=').next().unwrap_or("");
        if own.contains(&flag) {
            // `--dir D` takes the next word; `--resume` and `--dir=D` do not.
            skip = !a.contains('=') && !matches!(flag, "--resume" | "--overwrite-output");
            continue;
        }
        base_args.push(a.clone());
    }
    base_args
}
