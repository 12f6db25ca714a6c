//! The legacy tools' command lines: SASIOTEST, sqlio (and its batch files), iotest.sh.

use std::io::Write;
use std::process::ExitCode;

use crate::session::*;
use iogauge::cli::{self};
use iogauge::files::targets::Safety;
use iogauge::report::{self, Format};
use iogauge::studies::rounds::RoundsSpec;
use iogauge::{compat, files::named};
use iogauge::{err, errln, out, outln};

/// Runs a legacy tool's command line and prints its output (or, with --json, the report).
pub(crate) fn legacy(args: &[String], inv: compat::Invocation) -> ExitCode {
    use compat::Invocation as I;
    // Every warning is in the tool's output (under iogauge's rule, or the JSON): where stdout
    // and stderr are one file (2>&1, one terminal), saying it on stderr too doubles it.
    if same_file(&std::io::stdout(), &std::io::stderr()) {
        WARNINGS_ONLY_IN_REPORT.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    match inv {
        // Run without its arguments, a tool says how to use it: a usage error, as the
        // originals treat it (stderr, exit 2), so a script that lost its arguments fails.
        I::Usage(text) => {
            err!("{text}");
            ExitCode::from(2)
        }
        I::One(p, f) => legacy_one(args, p.as_ref(), &f),
        I::SqlioBatch(batch, f) => sqlio_batch(args, batch, &f),
    }
}

/// One personality's measured step (its sections made this rank's own in a scale-out run):
/// its results file checked before the run.
pub(crate) fn legacy_measure(
    args: &[String],
    step: &compat::Step,
    f: &compat::Flags,
) -> Result<Measured, Failure> {
    let safety = Safety {
        allow_overwrite: f.allow_overwrite,
        skip_space_check: f.skip_space_check,
        overwrite_output: f.overwrite_output,
        max_memory: None,
    };
    speak_as(step.words);
    let mut m = measure(
        args,
        &step.sections,
        false,
        safety,
        Ending::iogauge(step.keep),
        &[],
        RoundsSpec::default(),
    )?;
    // The report's warnings as the screen said them: in the tool's own flags.
    for w in &mut m.report.warnings {
        *w = in_own_words(w);
    }
    Ok(m)
}

/// Prints a personality's output for `m` (or, with --json, the report) and its errors.
pub(crate) fn legacy_print(m: &Measured, f: &compat::Flags, screen: &str) {
    if f.json {
        out!("{}", report::render(Format::Json, &m.report));
    } else {
        out!("{screen}");
    }
    let _ = std::io::stdout().flush();
    for e in &m.report.errors {
        errln!("iogauge: error: {}", cli::for_terminal(e));
    }
}

pub(crate) fn legacy_one(
    args: &[String],
    p: &dyn compat::Personality,
    f: &compat::Flags,
) -> ExitCode {
    if let Some(path) = p.results_file() {
        if let Err(e) = named::check_output(path, f.overwrite_output) {
            return usage_exit(&format!("{}: {e}", iogauge::rawpath::display(path)));
        }
    }
    #[cfg_attr(not(feature = "mpi"), allow(unused_mut))]
    let mut step = p.step();
    // Across ranks as `run` is: SAS's guidance runs iotest.sh on every grid node at once.
    #[cfg(feature = "mpi")]
    let ranks = match scale::begin(&mut step.sections, scale::Asked::default()) {
        Ok(r) => r,
        Err(code) => return ExitCode::from(code),
    };
    let measured = legacy_measure(args, &step, f);
    #[cfg(feature = "mpi")]
    let measured = scale::each(&ranks, measured);
    #[cfg(feature = "mpi")]
    let measured = match scale::merged(&ranks, measured) {
        Ok(m) => m,
        Err(code) => return ExitCode::from(code),
    };
    let code = match measured {
        Ok(m) => {
            let out = p.render(&m.report);
            legacy_print(&m, f, &out.screen);
            match out.file {
                Some((path, text)) => {
                    let shown = iogauge::rawpath::display(&path);
                    match write_when_read(&path, text.as_bytes(), f.overwrite_output) {
                        Err(e) => {
                            errln!("iogauge: cannot write {shown}: {e}");
                            1
                        }
                        Ok(()) => {
                            if !f.json {
                                outln!("\nresults written to {shown}");
                            }
                            m.code
                        }
                    }
                }
                None => m.code,
            }
        }
        Err(e) => e.reported(),
    };
    #[cfg(feature = "mpi")]
    scale::end(&ranks, code);
    ExitCode::from(code)
}

/// `sqlio --batch`: every test in order (compat::sqlio runs the batch); with --json, one array
/// of every test's report, printed when the batch ends.
pub(crate) fn sqlio_batch(
    args: &[String],
    batch: compat::sqlio::Batch,
    f: &compat::Flags,
) -> ExitCode {
    use compat::sqlio::BatchEnd;
    let interrupt = interrupt_flag();
    let mut reports: Vec<iogauge::studies::Report> = Vec::new();
    // Per test that ran: its line, its arguments and sqlio's figures, for the summary.
    let mut rows: Vec<BatchRow> = Vec::new();
    let end = batch.run(&interrupt, &mut |line, targs, s| {
        if !f.json {
            outln!("[batch line {line}: sqlio {}]", targs.join(" "));
        }
        let m = match legacy_measure(args, &compat::Personality::step(s), f) {
            Ok(m) => m,
            Err(Failure::Usage(m)) => return Err(m),
            // Reported here; the batch stops at this line with the failure's exit code.
            Err(e) => {
                e.report();
                return Ok(e.code());
            }
        };
        rows.push((line, targs.join(" "), s.figures(&m.report)));
        if f.json {
            for e in &m.report.errors {
                errln!("iogauge: error: {}", cli::for_terminal(e));
            }
            reports.push(m.report);
        } else {
            legacy_print(&m, f, &compat::Personality::render(s, &m.report).screen);
        }
        Ok(m.code)
    });
    let print_json = |reports: &[iogauge::studies::Report]| {
        if f.json {
            outln!("{}", report::json::render_all(reports));
        } else if !rows.is_empty() {
            outln!("{}", batch_summary(&rows));
        }
    };
    match end {
        BatchEnd::Done => {
            print_json(&reports);
            ExitCode::SUCCESS
        }
        BatchEnd::Interrupted => {
            print_json(&reports);
            ExitCode::from(interrupted_code())
        }
        BatchEnd::Usage { line, message } => {
            print_json(&reports);
            usage_exit(&format!("batch line {line}: {message}"))
        }
        BatchEnd::Failed { line, code } => {
            print_json(&reports);
            errln!("iogauge: sqlio batch stopped at line {line}");
            ExitCode::from(code)
        }
    }
}

/// Whether two descriptors are the same open file (device and inode).
fn same_file(a: &impl iogauge::platform::fd::AsFd, b: &impl iogauge::platform::fd::AsFd) -> bool {
    match (
        iogauge::platform::sys::fs::fstat(a.as_fd()),
        iogauge::platform::sys::fs::fstat(b.as_fd()),
    ) {
        (Ok(x), Ok(y)) => (x.st_dev, x.st_ino) == (y.st_dev, y.st_ino),
        _ => false,
    }
}

/// A batch line that ran: its number, its arguments, sqlio's figures.
type BatchRow = (usize, String, Option<compat::sqlio::Figures>);

/// The batch's tests side by side, as the sqlio article tabulates them: each line's test and
/// sqlio's figures (the ones its CUMULATIVE DATA printed).
fn batch_summary(rows: &[BatchRow]) -> String {
    let w = rows
        .iter()
        .map(|r| r.1.chars().count())
        .max()
        .unwrap_or(0)
        .max(5);
    let mut o = format!(
        "\nSUMMARY of the batch ({} test(s); MB = 2^20 bytes, as sqlio's)\n{:>5}  {:<w$} {:>10} \
         {:>10} {:>16}\n",
        rows.len(),
        "line",
        "sqlio",
        "IOs/sec",
        "MBs/sec",
        "Avg_Latency(ms)"
    );
    for (line, args, figs) in rows {
        let (iops, mbs, lat) = match figs {
            Some((i, m, l)) => (
                format!("{i:.2}"),
                format!("{m:.2}"),
                l.map_or("-".into(), |l| format!("{l:.2}")),
            ),
            None => ("-".into(), "-".into(), "-".into()),
        };
        o += &format!("{line:>5}  {args:<w$} {iops:>10} {mbs:>10} {lat:>16}\n");
    }
    o
}
