//! The human report's lines for the studies a run carries out inside itself: repeats
//! (`--repeat`: each run's figure and their spread) and rounds (`--precondition`,
//! `--until-steady`: the passes and the verdict). The text report calls these after its
//! groups.

use std::fmt::Write;

use crate::units::human_bytes;

/// `--precondition`, `--until-steady`: the passes, each round's figure and the verdict.
pub fn rounds_lines(o: &mut String, r: &crate::studies::rounds::RoundsReport) {
    o.push('\n');
    if let Some(p) = &r.precondition {
        let _ = writeln!(
            o,
            "Preconditioned: the files written sequentially {} time(s), {} in {:.1} s ({:.1} MB/s)",
            p.passes,
            human_bytes(p.bytes),
            p.seconds,
            p.mb_per_s
        );
    }
    if r.values.is_empty() {
        return;
    }
    let unit = if r.metric == "iops" { "IOPS" } else { "MB/s" };
    let values: Vec<String> = r.values.iter().map(|v| format!("{v:.0}")).collect();
    let _ = writeln!(
        o,
        "Rounds ({unit}, the figures above are the last round's): {}",
        values.join(", ")
    );
    if r.max_rounds > 1 {
        let _ = writeln!(
            o,
            "{}",
            match (r.steady, r.range_pct, r.excursion_pct) {
                (true, Some(range), Some(exc)) => format!(
                    "Steady after {} rounds (SNIA: the last 5 within {range:.1}% range, {exc:.1}% \
                     slope excursion of their average)",
                    r.values.len()
                ),
                (false, Some(range), Some(exc)) => format!(
                    "NOT steady after {} rounds: the last 5 had {range:.1}% range (limit 20%) and \
                     {exc:.1}% slope excursion (limit 10%)",
                    r.values.len()
                ),
                _ => format!(
                    "NOT steady: {} round(s) ran; SNIA's window needs 5",
                    r.values.len()
                ),
            }
        );
    }
}

/// `--repeat`: each job row's figures over the runs: mean ± the 95% interval's half width,
/// standard deviation, min and max.
pub fn repeat_lines(o: &mut String, rep: &crate::studies::repeat::RepeatReport) {
    let _ = writeln!(
        o,
        "\nRepeated: {} of {} runs (the figures above are the last run's); mean ± 95% \
         confidence interval, standard deviation, min-max:",
        rep.completed, rep.requested
    );
    let s = |x: &crate::studies::repeat::Spread, unit: &str| {
        // IOPS in whole numbers, the rest to a tenth.
        let p = if unit == " IOPS" { 0 } else { 1 };
        format!(
            "{:.p$}{unit} ±{:.1}% (sd {:.p$}, {:.p$}-{:.p$})",
            x.mean,
            x.ci_pct(),
            x.stddev,
            x.min,
            x.max
        )
    };
    for j in &rep.jobs {
        for (name, d) in [("read", &j.read), ("write", &j.write)] {
            let Some(d) = d else {
                continue;
            };
            let _ = writeln!(
                o,
                "  {} (group {}) {name}: {} · {} · {}",
                j.jobname,
                j.groupid + 1,
                s(&d.mib_per_s, " MiB/s"),
                s(&d.mb_per_s, " MB/s"),
                s(&d.iops, " IOPS")
            );
            if let Some(p) = &d.p99_us {
                let _ = writeln!(o, "    p99 latency: {}", s(p, " µs"));
            }
        }
    }
}
