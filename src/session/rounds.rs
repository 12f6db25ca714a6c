//! `--precondition` and `--until-steady`: the workload round after round on the same files.

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use crate::session::*;
use iogauge::errln;
use iogauge::files::targets::{self};
use iogauge::plan::{self};
use iogauge::runner::{self, Event};
use iogauge::studies::rounds::RoundsSpec;
use iogauge::units::human_bytes;

/// `--precondition` and `--until-steady`: the sequential passes, then the workload round after
/// round on the same files (created once, removed at the end) until SNIA's window is steady
/// or the most rounds have run. The outcome is the last round's.
pub(crate) fn run_rounds(
    plan: &plan::Plan,
    targets: &mut targets::Targets,
    interrupt: &AtomicBool,
    rounds: RoundsSpec,
    on_event: &mut dyn FnMut(&Event),
) -> Result<(runner::RunOutcome, iogauge::studies::rounds::RoundsReport), Failure> {
    use iogauge::studies::rounds::{PreconditionReport, RoundsReport, figures, window};
    let bandwidth = iogauge::studies::rounds::tracks_bandwidth(plan);
    let mut report = RoundsReport {
        metric: if bandwidth { "mb_per_s" } else { "iops" }.into(),
        values: Vec::new(),
        max_rounds: rounds.max.max(1),
        steady: false,
        range_pct: None,
        excursion_pct: None,
        precondition: None,
    };
    if rounds.precondition > 0 {
        let pre = iogauge::studies::rounds::precondition_plan(plan, rounds.precondition)
            .map_err(Failure::usage)?;
        errln!(
            "iogauge: preconditioning: writing the files sequentially {} time(s)",
            rounds.precondition
        );
        let t0 = Instant::now();
        let o = runner::run(&pre, targets, interrupt, on_event);
        let secs = t0.elapsed().as_secs_f64();
        let bytes: u64 = o
            .groups
            .iter()
            .flatten()
            .flat_map(|j| &j.stats.dirs)
            .map(|d| d.bytes)
            .sum();
        report.precondition = Some(PreconditionReport {
            passes: rounds.precondition,
            bytes,
            seconds: secs,
            mb_per_s: if secs > 0.0 {
                bytes as f64 / secs / 1e6
            } else {
                0.0
            },
        });
        errln!(
            "iogauge: preconditioned: {} in {secs:.1} s",
            human_bytes(bytes)
        );
        if o.interrupted || o.failed() {
            // The workload never ran: the passes' failure is the result.
            return Ok((o, report));
        }
    }
    let most = rounds.max.max(1);
    let mut k = 0;
    loop {
        k += 1;
        let o = runner::run(plan, targets, interrupt, on_event);
        let (iops, mbs) = figures(&o);
        let value = if bandwidth { mbs } else { iops };
        if o.interrupted || o.failed() {
            return Ok((o, report));
        }
        report.values.push(value);
        let w = window(&report.values);
        if let Some(w) = w {
            (report.range_pct, report.excursion_pct) = (Some(w.range_pct), Some(w.excursion_pct));
            report.steady = w.steady();
        }
        if rounds.max > 0 {
            errln!(
                "iogauge: round {k} of at most {most}: {value:.1} {}{}",
                if bandwidth { "MB/s" } else { "IOPS" },
                match w {
                    Some(w) => format!(
                        "; last 5 rounds: range {:.1}%, slope excursion {:.1}% of their average{}",
                        w.range_pct,
                        w.excursion_pct,
                        if w.steady() { ": steady" } else { "" }
                    ),
                    None => String::new(),
                }
            );
        }
        if report.steady || k >= most {
            return Ok((o, report));
        }
    }
}
