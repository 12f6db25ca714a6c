//! The one-row-per-test summary of `quick` and `assess` (a table of the groups under their
//! test names, one latency unit), the spread of `--repeat`'s runs under it, and the verdicts.

use std::fmt::Write;

use super::LatUnit;
use super::text::{footer, header};
use crate::result::{DirReport, GroupReport};
use crate::studies::Report;
use crate::units::human_bytes;

/// One row per group: the quick check's summary. Units in the header; one latency unit.
pub fn summary(r: &Report, labels: &[&str]) -> String {
    let mut o = String::new();
    header(&mut o, r);
    let rows: Vec<(String, &GroupReport, &DirReport)> = r
        .groups
        .iter()
        .zip(labels)
        .map(|(g, label)| {
            let d = if g.total.write.ios > g.total.read.ios {
                &g.total.write
            } else {
                &g.total.read
            };
            // Nothing is cold where no device is below the file (tmpfs): the "cold" read
            // comes from memory like any other.
            let label = match g.devices.is_empty() && !g.without_device.is_empty() {
                true => label.replace("cold ", ""),
                false => label.to_string(),
            };
            (label, g, d)
        })
        .collect();
    let worst = rows
        .iter()
        .filter_map(|(_, _, d)| d.lat_ns.as_ref().map(|l| l.mean))
        .fold(0.0f64, f64::max);
    let unit = LatUnit::for_ns(worst);
    let u = unit.label();
    // The cache-mode column is as wide as the system's longest name for it.
    let io_w = crate::platform::sys::CACHE_FLAG_NAMES.2.len().max(14);
    let _ = writeln!(
        o,
        "\n{:<28} {:>10} {:>7} {:>3} {:>io_w$} {:>10} {:>10} {:>10} {:>12} {:>12}",
        "test",
        "file",
        "time",
        "QD",
        "I/O",
        "MiB/s",
        "MB/s",
        "IOPS",
        format!("mean ({u})"),
        format!("p99 ({u})")
    );
    let spreads: Vec<(String, usize, bool)> = rows
        .iter()
        .map(|(label, g, d)| (label.clone(), g.id, std::ptr::eq(*d, &g.total.write)))
        .collect();
    for (label, g, d) in rows {
        let (mean, p99) = match &d.lat_ns {
            Some(l) => (
                unit.fmt(l.mean),
                unit.fmt(*l.percentiles.get("99.000000").unwrap_or(&0) as f64),
            ),
            None => ("-".into(), "-".into()),
        };
        // How each test ran: its file's size, measured time, queue depth and cache mode.
        let opt = |k: &str| {
            g.jobs
                .first()
                .and_then(|j| j.options.get(k))
                .map_or("", String::as_str)
        };
        let size = human_bytes(opt("size").parse().unwrap_or(0));
        let time = format!("{:.2}s", g.total.elapsed_ns as f64 / 1e9);
        let io = cache_mode(
            opt("direct") == "1",
            matches!(opt("sync"), "dsync" | "sync" | "1"),
        );
        // I/Os in flight across the test: each job's depth times its jobs (16 jobs at depth
        // 1 keep 16 in flight).
        let depth: u64 = g
            .jobs
            .iter()
            .map(|j| {
                j.options
                    .get("iodepth")
                    .and_then(|d| d.parse().ok())
                    .unwrap_or(1)
            })
            .sum();
        let _ = writeln!(
            o,
            "{label:<28} {size:>10} {time:>7} {depth:>3} {io:>io_w$} {:>10.2} {:>10.2} {:>10.0} \
             {mean:>12} {p99:>12}",
            d.mib_per_s, d.mb_per_s, d.iops
        );
    }
    if let Some(rep) = &r.repeat {
        repeat_rows(&mut o, rep, &spreads);
    }
    footer(&mut o, r);
    if let Some(a) = &r.assessment {
        o.push_str(&crate::studies::assess::lines(a));
    }
    o
}

/// A test's cache mode as the table's I/O column names it, in the system's words.
fn cache_mode(direct: bool, write_through: bool) -> &'static str {
    let (d, w, both) = crate::platform::sys::CACHE_FLAG_NAMES;
    match (direct, write_through) {
        (true, true) => both,
        (true, false) => d,
        (false, true) => w,
        (false, false) => "buffered",
    }
}

/// `--repeat` under the summary table: each test's MB/s and latency over the runs (the
/// table is the last run's). `rows`: each row's label, group and whether it shows writes.
fn repeat_rows(
    o: &mut String,
    rep: &crate::studies::repeat::RepeatReport,
    rows: &[(String, usize, bool)],
) {
    let _ = writeln!(
        o,
        "\nover {} runs (mean ±95% interval; the table above is the last run):",
        rep.completed
    );
    let pm =
        |s: &crate::studies::repeat::Spread| format!("{:.2} ±{:.2}", s.mean, s.ci95[1] - s.mean);
    for (label, gi, writes) in rows {
        let Some(t) = rep.groups.get(*gi).and_then(|g| {
            if *writes {
                g.write.as_ref()
            } else {
                g.read.as_ref()
            }
        }) else {
            continue;
        };
        let mut line = format!("  {label:<28} {} MB/s", pm(&t.mb_per_s));
        if let Some(m) = &t.lat_mean_ms {
            line += &format!("   mean latency {} ms", pm(m));
        }
        if let Some(p) = &t.lat_p99_ms {
            line += &format!("   p99 {} ms", pm(p));
        }
        let _ = writeln!(o, "{line}");
    }
}
