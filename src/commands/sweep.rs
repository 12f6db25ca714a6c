//! `iogauge sweep`: a workload over a grid of option values, point by point, into one
//! directory (its files through `sweep::dir`), then the table and the answers.

use std::process::ExitCode;
use std::time::Instant;

use crate::commands::job::read_job_files;
use iogauge::studies::sweep::dir::{SweepDir, point_file};
use iogauge::studies::sweep::{Index, Point, Status, figures, point_label};

use crate::session::*;
use iogauge::cli::{self};
use iogauge::files::targets::Safety;
use iogauge::plan::{self, Section};
use iogauge::report::{self};
use iogauge::studies::rounds::RoundsSpec;
use iogauge::{errln, out};

/// A point's jobs: the sweep's base with the point's values over it.
pub(crate) fn point_sections(
    base: &cli::SweepBase,
    axes: &[iogauge::studies::sweep::Axis],
    values: &[String],
) -> Result<(Vec<Section>, Vec<String>), Failure> {
    match base {
        cli::SweepBase::Options(sections) => {
            let mut sections = sections.clone();
            for s in &mut sections {
                for (a, v) in axes.iter().zip(values) {
                    s.set(&a.name, v, plan::Origin::Cli);
                }
            }
            Ok((sections, Vec::new()))
        }
        cli::SweepBase::Jobs {
            files,
            defaults,
            overrides,
        } => {
            let mut overrides = overrides.clone();
            for (a, v) in axes.iter().zip(values) {
                overrides.set(&a.name, v, plan::Origin::Cli);
            }
            read_job_files(files, defaults, &overrides, &[])
        }
    }
}

/// The command that runs one point on its own, for its report's command line.
pub(crate) fn point_command(req: &cli::SweepRequest, values: &[String]) -> Vec<String> {
    let jobs = matches!(req.base, cli::SweepBase::Jobs { .. });
    let mut cmd = vec![
        "iogauge".to_string(),
        if jobs { "job" } else { "run" }.to_string(),
    ];
    let mut rest = req.base_args.iter().skip(1).peekable();
    while let Some(a) = rest.next() {
        match a.strip_prefix("--job") {
            Some("") => cmd.extend(rest.next().cloned()),
            Some(v) if v.starts_with('=') => cmd.push(v[1..].to_string()),
            _ => cmd.push(a.clone()),
        }
    }
    for (a, v) in req.axes.iter().zip(values) {
        if jobs {
            cmd.extend(["--set".to_string(), format!("{}={v}", a.name)]);
        } else {
            cmd.push(format!("--{}={v}", a.name));
        }
    }
    cmd
}

/// A pending point ready to run: its values, and its sections with the front end's notes.
type Ready = Option<(Vec<String>, (Vec<Section>, Vec<String>))>;

/// `iogauge sweep`: checks every point's options first (nothing is created when none can
/// run), then runs the pending points one by one through the same pipeline as `run`, saving
/// each report and the index after each point, and prints the table.
pub(crate) fn sweep(args: &[String], req: cli::SweepRequest) -> ExitCode {
    let (row, col) = match &req.table {
        Some((r, c)) => (r.clone(), c.clone()),
        None => (
            req.axes[0].name.clone(),
            req.axes.get(1).unwrap_or(&req.axes[0]).name.clone(),
        ),
    };
    let shown = iogauge::rawpath::display(&req.dir).to_string();
    let (resumed, mut index) = match open_sweep(args, &req, (&row, &col), &shown) {
        Ok(x) => x,
        Err(code) => return code,
    };
    // Every pending point's options, checked before anything is created.
    let (plans, refused, first_refusal) = check_points(&req, &mut index);
    if refused > 0 && refused == plans.iter().filter(|p| p.is_some()).count() + refused {
        // No pending point can run: a bad base or a bad axis, not one bad corner of the grid.
        let e = first_refusal.unwrap_or_default();
        return usage_exit(&format!("sweep: no point can run: {e}"));
    }
    let files = match resumed.map_or_else(
        || SweepDir::create(&req.dir, &shown, req.tool.overwrite_output),
        Ok,
    ) {
        Ok(d) => d,
        Err(e) => {
            errln!("iogauge: sweep: {e}");
            return ExitCode::from(1);
        }
    };
    if let Err(e) = files.save_index(&index) {
        errln!("iogauge: sweep: {shown}/index.json: {e}");
        return ExitCode::from(1);
    }
    let total = index.points.len();
    let todo = plans.iter().filter(|p| p.is_some()).count();
    if total - todo > refused {
        errln!(
            "iogauge: sweep: {} of {total} points already done in {shown}",
            total - todo - refused
        );
    }
    if refused > 0 {
        errln!(
            "iogauge: sweep: {refused} of {total} points refused by their options (first: {})",
            first_refusal.as_deref().unwrap_or_default()
        );
    }
    let interrupted = match run_points(&req, &files, &mut index, plans, &shown) {
        Ok(i) => i,
        Err(code) => return code,
    };
    finish(&req, &files, &mut index, (&row, &col), &shown, interrupted)
}

/// The sweep's index, new or resumed (with its directory, taken back), its table's axes
/// checked. `Err`: it cannot run (said; nothing created), with the exit code.
fn open_sweep(
    args: &[String],
    req: &cli::SweepRequest,
    (row, col): (&str, &str),
    shown: &str,
) -> Result<(Option<SweepDir>, Index), ExitCode> {
    let opened = Index::new(args.to_vec(), req.base_args.clone(), req.axes.clone())
        .and_then(|fresh| fresh.table(row, col, req.metric).map(|_| fresh))
        .and_then(|fresh| {
            if req.resume {
                SweepDir::resume(&req.dir, shown, fresh, req.tool.overwrite_output)
                    .map(|(d, i)| (Some(d), i))
            } else {
                SweepDir::check_new(&req.dir, shown).map(|()| (None, fresh))
            }
        });
    opened.map_err(|e| usage_exit(&e.to_string()))
}

/// Each pending point resolved (a refused one recorded in the index): the points ready to
/// run, how many were refused, and the first refusal.
fn check_points(req: &cli::SweepRequest, index: &mut Index) -> (Vec<Ready>, usize, Option<String>) {
    let axes = &req.axes;
    let mut plans = Vec::new();
    let mut refused = 0;
    let mut first_refusal = None;
    for p in &mut index.points {
        if p.status != Status::Pending && p.status != Status::Interrupted {
            plans.push(None);
            continue;
        }
        let values: Vec<String> = axes.iter().map(|a| p.values[&a.name].clone()).collect();
        let checked = point_sections(&req.base, axes, &values).and_then(|(sections, notes)| {
            plan::resolve(&sections, false)
                .map(|_| (sections, notes))
                .map_err(Failure::from)
        });
        match checked {
            Ok(plan) => plans.push(Some((values, plan))),
            Err(e) => {
                let e = e.message();
                refused += 1;
                first_refusal.get_or_insert_with(|| e.clone());
                (p.status, p.exit_code, p.error) = (Status::Refused, Some(2), Some(e));
                plans.push(None);
            }
        }
    }
    (plans, refused, first_refusal)
}

/// Runs the ready points in turn, saving each report and the index after each; stops at an
/// interrupted one. `Ok(interrupted)`, or the exit code when a file could not be written.
fn run_points(
    req: &cli::SweepRequest,
    files: &SweepDir,
    index: &mut Index,
    plans: Vec<Ready>,
    shown: &str,
) -> Result<bool, ExitCode> {
    let safety = Safety {
        allow_overwrite: req.tool.allow_overwrite,
        skip_space_check: req.tool.skip_space_check,
        overwrite_output: false,
        max_memory: req.tool.max_memory,
    };
    if let Ok(mut seen) = SEEN_WARNINGS.lock() {
        *seen = Some(Default::default());
    }
    let total = index.points.len();
    let todo = plans.iter().filter(|p| p.is_some()).count();
    let started = Instant::now();
    let mut ran = 0;
    for (k, plan) in plans.into_iter().enumerate() {
        let Some((values, (sections, notes))) = plan else {
            continue;
        };
        let label = point_label(&req.axes, &values);
        errln!(
            "iogauge: sweep: point {}/{total}: {label}",
            index.points[k].point
        );
        let t0 = Instant::now();
        let command = point_command(req, &values);
        let p = &mut index.points[k];
        let measured = repeated(req.tool.repeat as usize, &mut || {
            measure(
                &command,
                &sections,
                false,
                safety,
                Ending::iogauge(req.tool.keep),
                &notes,
                RoundsSpec::default(),
            )
        });
        record(files, p, measured, shown)?;
        p.elapsed_s = Some(t0.elapsed().as_secs_f64());
        let interrupted = p.status == Status::Interrupted;
        ran += 1;
        let left = todo - ran;
        let eta = started.elapsed().as_secs_f64() / ran as f64 * left as f64;
        errln!(
            "iogauge: sweep: point {}/{total} ({label}): {} in {:.1} s; {left} left{}",
            p.point,
            outcome_text(p),
            p.elapsed_s.unwrap_or(0.0),
            if left > 0 && !interrupted {
                format!(", about {}", duration_text(eta))
            } else {
                String::new()
            }
        );
        if let Err(e) = files.save_index(index) {
            errln!("iogauge: sweep: {shown}/index.json: {e}");
            return Err(ExitCode::from(1));
        }
        if interrupted {
            return Ok(true);
        }
    }
    Ok(false)
}

/// A point's outcome into its index entry, its report into `points/`.
fn record(
    files: &SweepDir,
    p: &mut Point,
    measured: Result<Measured, Failure>,
    shown: &str,
) -> Result<(), ExitCode> {
    match measured {
        Ok(Measured { report, code }) => {
            let name = point_file(p.point);
            match serde_json::to_vec_pretty(&report) {
                Ok(json) => {
                    if let Err(e) = files.write_point(p.point, &json) {
                        errln!("iogauge: sweep: {shown}/{name}: {e}");
                        return Err(ExitCode::from(1));
                    }
                }
                Err(e) => {
                    errln!("iogauge: sweep: point {}: {e}", p.point);
                    return Err(ExitCode::from(1));
                }
            }
            p.status = match code {
                0 => Status::Ok,
                c if c > 128 => Status::Interrupted,
                2 => Status::Refused,
                _ => Status::Failed,
            };
            p.exit_code = Some(code);
            p.error = report.errors.first().cloned();
            p.report = Some(name);
            p.figures = Some(figures(&report));
        }
        Err(f) => {
            f.report();
            p.status = match f {
                Failure::Interrupted => Status::Interrupted,
                Failure::Usage(_) => Status::Refused,
                Failure::System(_) | Failure::Said(_) => Status::Failed,
            };
            p.exit_code = Some(f.code());
            p.error = Some(match f {
                Failure::Usage(m) | Failure::System(m) => m,
                Failure::Interrupted => "interrupted before the point started".into(),
                Failure::Said(_) => "failed (said above)".into(),
            });
            p.report = None;
            p.figures = None;
        }
    }
    Ok(())
}

/// A point's outcome in a few words: its figures, or its status and why.
fn outcome_text(p: &Point) -> String {
    match (&p.status, &p.figures) {
        (Status::Ok, Some(f)) => format!(
            "{:.1} MB/s ({:.1} MiB/s), {:.0} IOPS",
            f.mb_per_s, f.mib_per_s, f.iops
        ),
        (s, _) => format!(
            "{}{}",
            serde_json::to_value(s)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default(),
            p.error
                .as_ref()
                .map(|e| format!(": {e}"))
                .unwrap_or_default()
        ),
    }
}

/// The table and the answers, saved with the index, `table.txt` and `index.html`, and the
/// exit code: 130 and the like when interrupted, 1 when a point failed or a file could not be
/// written.
fn finish(
    req: &cli::SweepRequest,
    files: &SweepDir,
    index: &mut Index,
    (row, col): (&str, &str),
    shown: &str,
    interrupted: bool,
) -> ExitCode {
    let mut table = index
        .table(row, col, req.metric)
        .expect("the table's axes were checked");
    index.answers = index.answers(req.metric, req.max_p99_us, req.knee_pct);
    (index.table, index.metric) = (vec![row.into(), col.into()], req.metric.name().into());
    (index.knee_pct, index.max_p99_us) = (Some(req.knee_pct), req.max_p99_us);
    for a in &index.answers {
        table.push_str(a);
        table.push('\n');
    }
    if let Err(e) = files.save_index(index) {
        errln!("iogauge: sweep: {shown}/index.json: {e}");
        return ExitCode::from(1);
    }
    out!("{table}");
    let mut failed_files = Vec::new();
    if let Err(e) = files.write("table.txt", table.as_bytes()) {
        failed_files.push(format!("{shown}/table.txt: {e}"));
    }
    let first = first_point_report(&req.dir, index);
    let html = report::sweep_html::render(index, first.as_deref());
    if let Err(e) = files.write("index.html", html.as_bytes()) {
        failed_files.push(format!("{shown}/index.html: {e}"));
    }
    for f in &failed_files {
        errln!("iogauge: sweep: cannot write {f}");
    }
    let failed = index
        .points
        .iter()
        .filter(|p| matches!(p.status, Status::Failed | Status::Refused))
        .count();
    errln!(
        "iogauge: sweep: {shown}: index.json, index.csv, index.html, table.txt and {} point \
         report(s){}",
        index.points.iter().filter(|p| p.report.is_some()).count(),
        if failed > 0 {
            format!("; {failed} point(s) failed or were refused (see index.csv)")
        } else {
            String::new()
        }
    );
    if interrupted {
        errln!("iogauge: sweep: interrupted; --resume runs the points left");
        ExitCode::from(interrupted_code())
    } else if failed > 0 || !failed_files.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// 75 s → "1 min 15 s".
pub(crate) fn duration_text(s: f64) -> String {
    let s = s.round() as u64;
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min {} s", s / 60, s % 60),
        _ => format!("{} h {} min", s / 3600, s % 3600 / 60),
    }
}
