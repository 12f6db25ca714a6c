//! HTML: one self-contained page (inline CSS and SVG; no script, no network, no fonts to
//! fetch) with the run's provenance, its warnings, a summary table, what the devices did, and
//! per job charts: bandwidth and IOPS over time, latency percentiles and the latency
//! histogram. Pure: a function of the report.

use std::fmt::Write;

use crate::report::LatUnit;
use crate::result::{DirReport, GroupReport, LatReport, Measurement, RunReport};
use crate::studies::Report;
use crate::units::ctime_utc;
use crate::units::human_bytes;

mod charts;

use charts::*;
pub(crate) use charts::{Axes, Line, line_chart, spread_wide};

pub(crate) const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:72em}\
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ccc}\
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.2em .6em;\
text-align:right}th{background:#f3f3f3}td.l,th.l{text-align:left}\
.warn{background:#fff4d6;border-left:4px solid #e0a800;padding:.5em 1em;margin:.4em 0}\
.err{background:#fde2e2;border-left:4px solid #c00;padding:.5em 1em;margin:.4em 0}\
.badge{background:#fff4d6;border:1px solid #e0a800;border-radius:3px;padding:0 .3em;font-size:.85em;cursor:help}\
.charts{display:flex;flex-wrap:wrap;gap:1em}svg{background:#fff;border:1px solid #ddd}\
code{background:#f3f3f3;padding:0 .3em}";

const COLORS: [&str; 2] = ["#1f77b4", "#d62728"];

/// Escapes text for HTML content and attribute values.
pub(crate) fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

pub fn render(r: &Report) -> String {
    let mut o = String::new();
    let title = format!("iogauge report, {}", ctime_utc(r.started_unix_s));
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>{}</title><style>{STYLE}</style></head><body>\n<h1>{}</h1>\n",
        esc(&title),
        esc(&title)
    );
    provenance(&mut o, r);
    if !r.warnings.is_empty() || !r.errors.is_empty() || r.interrupted {
        o.push_str("<h2 id=\"warnings\">Warnings and errors</h2>\n");
        if r.interrupted {
            o.push_str("<div class=\"err\">Interrupted: the results are partial.</div>\n");
        }
        for e in &r.errors {
            let _ = writeln!(o, "<div class=\"err\">{}</div>", esc(e));
        }
        for w in &r.warnings {
            let _ = writeln!(o, "<div class=\"warn\">{}</div>", esc(w));
        }
    }
    summary(&mut o, r);
    if let Some(a) = &r.assessment {
        assessment(&mut o, a);
    }
    verification(&mut o, r);
    scale_out(&mut o, r);
    jobs(&mut o, r);
    devices(&mut o, r);
    for g in &r.groups {
        for (label, m) in units(g) {
            charts(&mut o, &label, m);
        }
    }
    o.push_str("</body></html>\n");
    o
}

/// `iogauge assess`: each verdict with its figure and the rule it used (numbered, cited once
/// below), a caveat where the page cache could have served the figure, and the overall verdict.
fn assessment(o: &mut String, a: &crate::studies::assess::Assessment) {
    let _ = writeln!(
        o,
        "<h2 id=\"assessment\">Assessment for {}: {}</h2>\n<table>\n<tr><th class=\"l\">verdict</th>\
         <th class=\"l\">test</th><th class=\"l\">figure</th><th>value</th><th>rule</th></tr>",
        esc(&a.for_),
        esc(&a.overall.to_uppercase())
    );
    let rules = crate::studies::assess::rules(a);
    for v in &a.verdicts {
        let n = rules
            .iter()
            .position(|r| *r == v.guidance)
            .map_or(0, |i| i + 1);
        let spread = v.spread.map_or(String::new(), |s| {
            format!(
                " ±{:.2} ({} runs; rated on {:.2})",
                s.ci95[1] - s.mean,
                s.n,
                v.rated_on
            )
        });
        let _ = writeln!(
            o,
            "<tr><td class=\"l\"><b>{}</b></td><td class=\"l\">{}</td><td class=\"l\">{}</td>\
             <td>{:.2}{}</td><td>[{n}]</td></tr>",
            esc(&v.rating.to_uppercase()),
            esc(&v.test),
            esc(&v.figure),
            v.value,
            esc(&spread)
        );
        let c = v
            .caveat
            .as_ref()
            .filter(|_| v.caveat != crate::studies::assess::next_caveat(a, v));
        if let Some(c) = c {
            let _ = writeln!(
                o,
                "<tr><td></td><td class=\"l\" colspan=\"4\"><div class=\"warn\">not a figure \
                 to quote: {}</div></td></tr>",
                esc(c)
            );
        }
    }
    let _ = writeln!(
        o,
        "</table>\n<p><b>Overall: {}</b></p>\n<ol>",
        esc(&a.overall.to_uppercase())
    );
    for r in rules {
        let _ = writeln!(o, "<li>{}</li>", esc(r));
    }
    o.push_str("</ol>\n");
}

/// What the charts and summary show for a group: each job, or the group as one.
fn units(g: &GroupReport) -> Vec<(String, &Measurement)> {
    if g.group_reporting {
        let label = crate::result::group_label(g.id, g.jobs.iter().map(|j| j.name.as_str()));
        vec![(format!("{label}, reported as one"), &g.total)]
    } else {
        g.jobs
            .iter()
            .map(|j| {
                (
                    format!("group {}, job {}.{}", g.id + 1, j.name, j.clone),
                    &j.measurement,
                )
            })
            .collect()
    }
}

pub(crate) fn provenance(o: &mut String, r: &RunReport) {
    let h = &r.host;
    o.push_str("<h2>How this was measured</h2>\n<table>\n");
    let row = |o: &mut String, k: &str, v: &str| {
        let _ = writeln!(
            o,
            "<tr><th class=\"l\">{k}</th><td class=\"l\">{}</td></tr>",
            esc(v)
        );
    };
    row(o, "tool", &format!("{} {}", r.tool.name, r.tool.version));
    if r.imported() {
        row(
            o,
            "started",
            &format!("{} UTC", ctime_utc(r.started_unix_s)),
        );
        row(
            o,
            "host, targets, command",
            &format!("not recorded in {}'s JSON", r.tool.name),
        );
        row(o, "clock", &r.clock);
        o.push_str("</table>\n");
        return;
    }
    row(o, "command", &r.command_line.join(" "));
    row(
        o,
        "started",
        &format!("{} UTC", ctime_utc(r.started_unix_s)),
    );
    row(o, "host", &h.hostname);
    row(o, "kernel", &format!("{} ({})", h.kernel, h.arch));
    row(o, "CPU", &format!("{} × {}", h.cpus, h.cpu_model));
    row(o, "memory", &human_bytes(h.memory_bytes));
    row(o, "clock", &r.clock);
    o.push_str(
        "</table>\n<table>\n<tr><th class=\"l\">target</th><th class=\"l\">kind</th>\
                <th class=\"l\">file system</th><th class=\"l\">mount</th>\
                <th class=\"l\">device</th></tr>\n",
    );
    for t in &r.targets {
        let dev = t
            .device
            .as_ref()
            .map_or("none (no block device)".to_string(), |d| {
                let mut s = d.path();
                if !d.model.is_empty() {
                    s = format!("{s} {}", d.model);
                }
                if !d.major_minor.is_empty() {
                    s = format!("{s} ({})", d.major_minor);
                }
                s
            });
        let _ = writeln!(
            o,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td>\
             <td class=\"l\">{} ({})</td><td class=\"l\">{}</td></tr>",
            esc(crate::rawpath::display(&t.path).as_ref()),
            esc(&t.kind),
            esc(&t.fs_type),
            esc(&t.mount_point),
            esc(&t.mount_options),
            esc(&dev)
        );
    }
    o.push_str("</table>\n");
}

fn summary(o: &mut String, r: &RunReport) {
    let typical = r
        .groups
        .iter()
        .flat_map(|g| [&g.total.read, &g.total.write])
        .filter_map(|d| tail(d).map(|t| t.0))
        .map(|l| l.mean)
        .fold(0.0, f64::max);
    let u = LatUnit::for_ns(typical);
    let lu = u.label();
    let _ = writeln!(
        o,
        "<h2>Summary</h2>\n<table id=\"summary\">\n<tr><th class=\"l\">job</th>\
         <th class=\"l\">direction</th><th>MiB/s</th><th>MB/s</th><th>IOPS</th>\
         <th>I/Os</th><th>bytes</th><th>lat mean ({lu})</th><th>p50 ({lu})</th>\
         <th>p99 ({lu})</th><th>p99.9 ({lu})</th><th>max ({lu})</th></tr>"
    );
    for g in &r.groups {
        for (label, m) in units(g) {
            for (dir, d) in [("read", &m.read), ("write", &m.write)] {
                if d.ios == 0 {
                    continue;
                }
                let (l, kind) = tail(d).map_or((None, ""), |(l, k)| (Some(l), k));
                let _ = writeln!(
                    o,
                    "<tr><td class=\"l\">{}</td><td class=\"l\">{dir}{kind}</td><td>{:.2}</td>\
                     <td>{:.2}</td><td>{:.0}</td><td>{}</td><td>{}</td>{}</tr>",
                    esc(&label),
                    d.mib_per_s,
                    d.mb_per_s,
                    d.iops,
                    d.ios,
                    d.bytes,
                    lat_cells(l, u),
                );
            }
            if let Some(s) = &m.sync {
                // fsync, fdatasync, sync_file_range and syncfs calls, as fio's sync block.
                let _ = writeln!(
                    o,
                    "<tr><td class=\"l\">{}</td><td class=\"l\">sync calls</td><td>-</td>\
                     <td>-</td><td>-</td><td>{}</td><td>-</td>{}</tr>",
                    esc(&label),
                    s.count,
                    lat_cells(Some(s), u),
                );
            }
        }
    }
    o.push_str("</table>\n");
}

/// The latency a direction's tail is read from: total latency, or completion latency where
/// only that has percentiles (fio's JSON without lat_percentiles=1), marked so.
pub(super) fn tail(d: &DirReport) -> Option<(&LatReport, &'static str)> {
    fn has(l: &Option<LatReport>) -> Option<&LatReport> {
        l.as_ref().filter(|l| !l.percentiles.is_empty())
    }
    match (has(&d.lat_ns), has(&d.clat_ns)) {
        (Some(l), _) => Some((l, "")),
        (None, Some(c)) => Some((c, " (completion latency)")),
        (None, None) => d.lat_ns.as_ref().map(|l| (l, "")),
    }
}

/// Mean, p50, p99, p99.9 and max cells in `u`.
fn lat_cells(l: Option<&LatReport>, u: LatUnit) -> String {
    let p = |k: &str| {
        l.and_then(|l| l.percentiles.get(k))
            .map_or("-".into(), |&v| u.fmt(v as f64))
    };
    format!(
        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
        l.map_or("-".into(), |l| u.fmt(l.mean)),
        p("50.000000"),
        p("99.000000"),
        p("99.900000"),
        l.map_or("-".into(), |l| u.fmt(l.max as f64)),
    )
}

/// The verify phases: what each read back, how fast, the verdict and the bad blocks kept.
fn verification(o: &mut String, r: &RunReport) {
    let rows: Vec<(String, &crate::result::VerifyReport)> = r
        .groups
        .iter()
        .flat_map(|g| units(g).into_iter())
        .filter_map(|(label, m)| m.verify.as_ref().map(|v| (label, v)))
        .collect();
    if rows.is_empty() {
        return;
    }
    o.push_str(
        "<h2 id=\"verify\">Verification</h2>\n<table><tr><th class=\"l\">job</th>\
         <th class=\"l\">checksum</th><th>blocks</th><th>bytes</th><th>time (s)</th>\
         <th>MiB/s</th><th>MB/s</th><th class=\"l\">read from</th><th class=\"l\">verdict</th></tr>\n",
    );
    for (label, v) in &rows {
        let verdict = match v.bad_blocks {
            0 if v.cut_short => {
                "stopped before every block was checked; none bad of those checked".to_string()
            }
            0 if v.blocks > 0 => "every block as written".to_string(),
            0 => "nothing checked".to_string(),
            n => format!("{n} bad"),
        };
        let _ = writeln!(
            o,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td>\
             <td>{:.2}</td><td>{:.2}</td><td>{:.2}</td><td class=\"l\">{}</td>\
             <td class=\"l\">{}</td></tr>",
            esc(label),
            esc(&v.checksum),
            v.blocks,
            v.bytes,
            v.elapsed_ns as f64 / 1e9,
            v.mib_per_s,
            v.mb_per_s,
            if v.inline {
                "the job's own reads, as they completed".to_string()
            } else {
                format!(
                    "the device ({}){}",
                    if v.dropped_cache {
                        "cache dropped first"
                    } else {
                        "O_DIRECT"
                    },
                    if v.threads > 1 {
                        format!(", {} threads", v.threads)
                    } else {
                        String::new()
                    }
                )
            },
            verdict
        );
    }
    o.push_str("</table>\n");
    for (label, v) in &rows {
        for b in &v.first_bad {
            let line = format!(
                "{label}: {} at offset {} ({} bytes): {}",
                crate::rawpath::display(&b.file),
                b.offset,
                b.len,
                crate::report::bad_block_details(b)
            );
            let _ = writeln!(o, "<div class=\"err\">{}</div>", esc(&line));
        }
    }
}

/// Each job's engine and options (a group_reporting group's clones once).
/// A run over MPI ranks: a row per host and group, and each group's timing across the ranks.
fn scale_out(o: &mut String, r: &Report) {
    let Some(s) = &r.scaleout else {
        return;
    };
    let _ = writeln!(
        o,
        "<h2 id=\"scaleout\">Scale-out</h2>\n<p>{} ranks on {} host(s), merged on rank 0: \
         bandwidth over the earliest start to the latest end, latency from the merged \
         histograms.</p>\n<table><tr><th>group</th><th class=\"l\">host</th>\
         <th class=\"l\">ranks</th><th>MB/s</th><th>MiB/s</th><th>IOPS</th><th>p99 (µs)</th>\
         </tr>",
        s.ranks,
        s.hosts.len()
    );
    if let Some(n) = s.read_shift {
        let line = crate::studies::scaleout::read_shift_line(n);
        let _ = writeln!(
            o,
            "<tr><td></td><td class=\"l\" colspan=\"6\">{}</td></tr>",
            esc(line.trim())
        );
    }
    for (gi, g) in s.groups.iter().enumerate() {
        for h in &s.hosts {
            if let Some(x) = h.groups.get(gi) {
                let ranks: Vec<String> = h.ranks.iter().map(|r| r.to_string()).collect();
                let _ = writeln!(
                    o,
                    "<tr><td>{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td>\
                     <td>{:.2}</td><td>{:.2}</td><td>{:.0}</td><td>{}</td></tr>",
                    gi + 1,
                    esc(&h.host),
                    ranks.join(","),
                    x.mb_per_s,
                    x.mib_per_s,
                    x.iops,
                    x.p99_us.map_or("-".into(), |p| format!("{p:.1}"))
                );
            }
        }
        let _ = writeln!(
            o,
            "<tr><td>{}</td><td class=\"l\" colspan=\"6\">start skew {:.2} ms; first rank \
             done at {:.1} ms, the last ({}) at {:.1} ms{}</td></tr>",
            gi + 1,
            g.start_skew_ms,
            g.first_done_ms,
            esc(&g.straggler),
            g.last_done_ms,
            g.stonewalled_at.as_ref().map_or(String::new(), |f| format!(
                "; stonewalled: every rank stopped when {} finished, the figures are what all \
                 ranks moved until then",
                esc(f)
            ))
        );
    }
    o.push_str("</table>\n");
}

fn jobs(o: &mut String, r: &RunReport) {
    o.push_str(
        "<h2>Jobs</h2>\n<table id=\"jobs\"><tr><th class=\"l\">group</th>\
         <th class=\"l\">job</th><th class=\"l\">engine</th><th class=\"l\">options</th></tr>\n",
    );
    for g in &r.groups {
        let mut shown = std::collections::BTreeSet::new();
        for j in &g.jobs {
            if g.group_reporting && !shown.insert(j.name.as_str()) {
                continue;
            }
            let e = &j.engine;
            let options: Vec<String> = j
                .options
                .iter()
                .map(|(k, v)| format!("<code>{}={}</code>", esc(k), esc(v)))
                .collect();
            let _ = writeln!(
                o,
                "<tr><td class=\"l\">{}</td><td class=\"l\">{}.{}</td>\
                 <td class=\"l\">{}: {}, {} per I/O, iodepth {}{}</td><td class=\"l\">{}</td></tr>",
                g.id + 1,
                esc(&j.name),
                j.clone,
                esc(&e.name),
                esc(&e.calls),
                human_bytes(e.bytes_per_io),
                e.iodepth,
                if j.data.is_empty() {
                    String::new()
                } else {
                    format!("; data: {}", esc(&j.data))
                },
                options.join(" ")
            );
        }
    }
    o.push_str("</table>\n");
}

fn devices(o: &mut String, r: &RunReport) {
    o.push_str("<h2>What the devices did</h2>\n");
    if r.groups
        .iter()
        .all(|g| g.devices.is_empty() && g.without_device.is_empty())
    {
        o.push_str("<p>Not recorded.</p>\n");
        return;
    }
    for g in &r.groups {
        for p in &g.without_device {
            let _ = writeln!(
                o,
                "<p>group {}: {} is {}: nothing to check.</p>",
                g.id + 1,
                esc(crate::rawpath::display(p).as_ref()),
                esc(crate::platform::NO_DEVICE_WHY)
            );
        }
        if g.devices.is_empty() {
            continue;
        }
        let _ = writeln!(
            o,
            "<table><tr><th class=\"l\">group {}</th><th>read I/Os</th><th>read bytes</th>\
             <th>write I/Os</th><th>write bytes</th><th>merges r/w</th><th>in queue (ms)</th>\
             <th>util %</th><th>iogauge read</th><th>iogauge wrote</th></tr>",
            g.id + 1
        );
        for d in &g.devices {
            let _ = writeln!(
                o,
                "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
                 <td>{}/{}</td><td>{}</td><td>{:.1}</td><td>{}</td><td>{}</td></tr>",
                esc(&d.name),
                d.read_ios,
                d.bytes_text(d.read_bytes),
                d.write_ios,
                d.bytes_text(d.write_bytes),
                d.read_merges,
                d.write_merges,
                d.in_queue_ms,
                d.util_pct,
                human_bytes(g.total.read.bytes),
                human_bytes(g.total.write.bytes),
            );
        }
        o.push_str("</table>\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_ticks() {
        assert_eq!(
            esc("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
        assert_eq!(tick_step(100.0), 20.0);
        assert_eq!(tick_step(7.0), 1.0);
        assert_eq!(fmt_tick(2.5), "2.5");
        assert_eq!(fmt_ns(250_000), "250µs");
    }

    #[test]
    fn a_short_last_window_is_not_drawn() {
        let v = [10.0, 20.0, 30.0];
        // 1.1 s at 500 ms: the last window is 100 ms, a fifth of one: left out.
        let got: Vec<(f64, f64)> = drawn_windows(&v, 500, 1_100_000_000).collect();
        assert_eq!(got, [(0.5, 10.0), (1.0, 20.0)]);
        // 1.2 s: 200 ms is at least a quarter: drawn at its true end.
        let got: Vec<(f64, f64)> = drawn_windows(&v, 500, 1_200_000_000).collect();
        assert_eq!(got.last(), Some(&(1.2, 30.0)));
        // Whole windows are always drawn.
        assert_eq!(drawn_windows(&v, 500, 1_500_000_000).count(), 3);
    }

    #[test]
    fn lines_of_different_scales_get_their_own_charts() {
        let line = |name: &str, peak: f64| Line {
            name: name.into(),
            color: COLORS[0],
            points: vec![(1.0, peak / 2.0), (2.0, peak)],
            bars: Vec::new(),
        };
        let together = by_scale(vec![line("read", 900.0), line("write", 400.0)]);
        assert_eq!(together.len(), 1);
        assert_eq!(together[0].1.len(), 2);
        let apart = by_scale(vec![line("read", 900.0), line("write", 5.0)]);
        let titles: Vec<&str> = apart.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(titles, [" (read)", " (write)"]);
    }

    #[test]
    fn log_axis_spans_whole_decades() {
        let (lo, hi, ticks) = log_ticks(3.0, 450.0);
        assert_eq!((lo, hi), (1.0, 1000.0));
        assert_eq!(ticks.len(), 3 * 3 + 1);
        assert!(ticks.contains(&20.0) && ticks.contains(&500.0));
        // Over more than three decades, only the powers of ten.
        let (_, _, ticks) = log_ticks(0.5, 20_000.0);
        assert_eq!(ticks, [0.1, 1.0, 10.0, 100.0, 1000.0, 10000.0, 100000.0]);
    }
}
