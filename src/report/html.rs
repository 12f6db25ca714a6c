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

pub(crate) const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:72em}\
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ccc}\
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.2em .6em;\
text-align:right}th{background:#f3f3f3}td.l,th.l{text-align:left}\
.warn{background:#fff4d6;border-left:4px solid #e0a800;padding:.5em 1em;margin:.4em 0}\
.err{background:#fde2e2;border-left:4px solid #c00;padding:.5em 1em;margin:.4em 0}\
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
                format!("{} {} ({})", d.name, d.model, d.major_minor)
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
fn tail(d: &DirReport) -> Option<(&LatReport, &'static str)> {
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
                "<p>group {}: {} has no block device below it: nothing to check.</p>",
                g.id + 1,
                esc(crate::rawpath::display(p).as_ref())
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
                human_bytes(d.read_bytes),
                d.write_ios,
                human_bytes(d.write_bytes),
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

fn charts(o: &mut String, label: &str, m: &Measurement) {
    let dirs: Vec<(&str, &DirReport)> = [("read", &m.read), ("write", &m.write)]
        .into_iter()
        .filter(|(_, d)| d.ios > 0)
        .collect();
    if dirs.is_empty() && m.sync.is_none() {
        return;
    }
    let _ = writeln!(o, "<h2>{}</h2>", esc(label));
    let no_series = dirs.iter().all(|(_, d)| d.series.bw_bytes_per_s.is_empty());
    if no_series {
        o.push_str("<p>No time series in this report.</p>\n");
    }
    o.push_str("<div class=\"charts\">\n");
    if !no_series {
        let over_time = |f: &dyn Fn(&DirReport) -> &Vec<f64>, scale: f64| -> Vec<Line> {
            dirs.iter()
                .enumerate()
                .map(|(i, (name, d))| Line {
                    name: name.to_string(),
                    color: COLORS[i],
                    points: drawn_windows(f(d), d.series.interval_ms, m.elapsed_ns)
                        .map(|(end_s, v)| (end_s, v / scale))
                        .collect(),
                })
                .collect()
        };
        let bw = over_time(&|d| &d.series.bw_bytes_per_s, 1048576.0);
        let iops = over_time(&|d| &d.series.iops, 1.0);
        for (title, unit, lines) in [
            ("Bandwidth over time", "MiB/s", bw),
            ("IOPS over time", "IOPS", iops),
        ] {
            for (suffix, lines) in by_scale(lines) {
                let axes = Axes::default();
                o.push_str(&line_chart(
                    &format!("{title}{suffix}"),
                    "time (s)",
                    unit,
                    &lines,
                    axes,
                ));
            }
        }
    }
    let mut lats: Vec<(String, &LatReport)> = dirs
        .iter()
        .filter_map(|(n, d)| tail(d).map(|(l, kind)| (format!("{n}{kind}"), l)))
        .collect();
    if let Some(s) = &m.sync {
        lats.push(("sync".into(), s));
    }
    let typical = lats.iter().map(|(_, l)| l.mean).fold(0.0, f64::max);
    let u = LatUnit::for_ns(typical);
    let div = u.ns();
    let pct_lines: Vec<Line> = lats
        .iter()
        .enumerate()
        .map(|(i, (n, l))| {
            let mut pts: Vec<(f64, f64)> = l
                .percentiles
                .iter()
                .filter_map(|(k, &v)| Some((k.parse::<f64>().ok()?, v as f64 / div)))
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            Line {
                name: n.clone(),
                color: COLORS[i % COLORS.len()],
                points: pts,
            }
        })
        .collect();
    // A tail far above the median flattens a linear axis: use a logarithmic one then.
    let axes = Axes {
        percentile_x: true,
        log_y: spread_wide(&pct_lines),
        categories: None,
    };
    o.push_str(&line_chart(
        "Latency percentiles",
        "percentile",
        &format!("latency ({})", u.label()),
        &pct_lines,
        axes,
    ));
    let with_hist: Vec<(&str, &LatReport)> = lats
        .iter()
        .filter(|(n, _)| n != "sync")
        .map(|(n, l)| (n.as_str(), *l))
        .collect();
    o.push_str(&histogram(&with_hist));
    o.push_str("</div>\n");
}

/// Latency percentiles spread wider than this (highest / lowest) get a logarithmic axis.
/// The lines' values span more than [`LOG_Y_SPREAD`]: a linear axis would flatten the small
/// ones.
pub(crate) fn spread_wide(lines: &[Line]) -> bool {
    let ys = lines.iter().flat_map(|l| l.points.iter().map(|p| p.1));
    let (lo, hi) = ys.fold((f64::INFINITY, 0.0f64), |(lo, hi), y| {
        (lo.min(y), hi.max(y))
    });
    lo > 0.0 && hi / lo > LOG_Y_SPREAD
}

const LOG_Y_SPREAD: f64 = 20.0;

/// Lines whose peaks differ more than this share a chart no longer: a 5 MiB/s line would lie
/// flat under a 900 MiB/s one.
const SHARED_SCALE: f64 = 5.0;

/// The lines as charts: together, or one chart per line when their scales differ.
fn by_scale(lines: Vec<Line>) -> Vec<(String, Vec<Line>)> {
    let peaks: Vec<f64> = lines
        .iter()
        .map(|l| l.points.iter().map(|p| p.1).fold(0.0, f64::max))
        .collect();
    let (lo, hi) = peaks.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &p| {
        (lo.min(p), hi.max(p))
    });
    if lines.len() < 2 || hi <= lo * SHARED_SCALE {
        return vec![(String::new(), lines)];
    }
    lines
        .into_iter()
        .map(|l| (format!(" ({})", l.name), vec![l]))
        .collect()
}

/// The samples a chart draws, each at the end of its window: every whole window, and the
/// last, partial one only when it covers at least a quarter of an interval (a rate over a few
/// milliseconds is noise, and would draw a cliff or a spike at the end of the run).
fn drawn_windows(
    values: &[f64],
    interval_ms: u64,
    elapsed_ns: u64,
) -> impl Iterator<Item = (f64, f64)> + '_ {
    let interval_s = interval_ms as f64 / 1e3;
    let elapsed_s = elapsed_ns as f64 / 1e9;
    values.iter().enumerate().filter_map(move |(k, &v)| {
        let start = k as f64 * interval_s;
        let end = (start + interval_s).min(elapsed_s);
        let whole = end - start >= interval_s - 1e-9;
        (whole || (k + 1 == values.len() && end - start >= interval_s / 4.0)).then_some((end, v))
    })
}

pub(crate) struct Line {
    pub(crate) name: String,
    pub(crate) color: &'static str,
    pub(crate) points: Vec<(f64, f64)>,
}

const W: f64 = 520.0;
const H: f64 = 300.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 30.0;
const BOTTOM: f64 = 45.0;

/// A round step for about five ticks over `span`.
fn tick_step(span: f64) -> f64 {
    if span <= 0.0 || !span.is_finite() {
        return 1.0;
    }
    let raw = span / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let n = raw / mag;
    mag * if n < 1.5 {
        1.0
    } else if n < 3.5 {
        2.0
    } else if n < 7.5 {
        5.0
    } else {
        10.0
    }
}

fn fmt_tick(v: f64) -> String {
    if v == 0.0 || (v.abs() >= 0.01 && v.abs() < 1e6) {
        let s = format!("{v:.2}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format!("{v:.1e}")
    }
}

fn frame(title: &str, x_label: &str, y_label: &str) -> String {
    format!(
        "<svg width=\"{W}\" height=\"{H}\" \
         viewBox=\"0 0 {W} {H}\" role=\"img\" aria-label=\"{t}\">\
         <text x=\"{cx}\" y=\"18\" text-anchor=\"middle\" font-size=\"14\" \
         font-weight=\"bold\">{t}</text>\
         <text x=\"{cx}\" y=\"{xl}\" text-anchor=\"middle\" font-size=\"12\">{x}</text>\
         <text transform=\"translate(14 {cy}) rotate(-90)\" text-anchor=\"middle\" \
         font-size=\"12\">{y}</text>",
        t = esc(title),
        x = esc(x_label),
        y = esc(y_label),
        cx = LEFT + (W - LEFT - RIGHT) / 2.0,
        cy = TOP + (H - TOP - BOTTOM) / 2.0,
        xl = H - 6.0,
    )
}

/// How a line chart places its points.
#[derive(Clone, Copy, Default)]
pub(crate) struct Axes<'a> {
    /// x on fio's percentile scale (−log10(100 − p)), so the tail is readable.
    pub(crate) percentile_x: bool,
    /// y on a logarithmic scale, ticks at 1-2-5 steps of each power of ten.
    pub(crate) log_y: bool,
    /// x is the position of each of these values (a sweep's axis), each its own tick.
    pub(crate) categories: Option<&'a [String]>,
}

pub(crate) fn line_chart(
    title: &str,
    x_label: &str,
    y_label: &str,
    lines: &[Line],
    axes: Axes,
) -> String {
    let percentile_x = axes.percentile_x;
    let xf = |x: f64| {
        if percentile_x {
            -(100.0 - x).max(0.001).log10()
        } else {
            x
        }
    };
    let pts = lines.iter().flat_map(|l| l.points.iter());
    let (mut x0, mut x1, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
    let mut y_min = f64::INFINITY;
    for &(x, y) in pts {
        x0 = x0.min(xf(x));
        x1 = x1.max(xf(x));
        y1 = y1.max(y);
        y_min = y_min.min(y);
    }

    let mut s = frame(title, x_label, y_label);
    if !x0.is_finite() {
        s.push_str("<text x=\"260\" y=\"150\" text-anchor=\"middle\">no samples</text></svg>");
        return s;
    }
    if !percentile_x {
        x0 = 0.0;
    }
    if let Some(c) = axes.categories {
        x1 = (c.len().max(2) - 1) as f64;
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    let log_y = axes.log_y && y_min > 0.0;
    let (y0, y1, yticks) = if log_y {
        log_ticks(y_min, y1)
    } else {
        let step = tick_step(y1);
        let top = if y1 > 0.0 {
            (y1 / step).ceil() * step
        } else {
            1.0
        };
        let n = (top / step).round() as usize;
        (0.0, top, (0..=n).map(|i| i as f64 * step).collect())
    };
    let yf = |y: f64| if log_y { y.log10() } else { y };
    let (pw, ph) = (W - LEFT - RIGHT, H - TOP - BOTTOM);
    let px = |x: f64| LEFT + (xf(x) - x0) / (x1 - x0) * pw;
    let py = |y: f64| TOP + ph - (yf(y) - yf(y0)) / (yf(y1) - yf(y0)) * ph;
    // Axes and y grid.
    let _ = write!(
        s,
        "<line x1=\"{LEFT}\" y1=\"{TOP}\" x2=\"{LEFT}\" y2=\"{b}\" stroke=\"#444\"/>\
         <line x1=\"{LEFT}\" y1=\"{b}\" x2=\"{r}\" y2=\"{b}\" stroke=\"#444\"/>",
        b = TOP + ph,
        r = LEFT + pw
    );
    for v in yticks {
        let y = py(v);
        let _ = write!(
            s,
            "<line x1=\"{LEFT}\" y1=\"{y:.1}\" x2=\"{r}\" y2=\"{y:.1}\" stroke=\"#eee\"/>\
             <text x=\"{tx}\" y=\"{ty:.1}\" text-anchor=\"end\" font-size=\"11\">{}</text>",
            fmt_tick(v),
            r = LEFT + pw,
            tx = LEFT - 4.0,
            ty = y + 4.0
        );
    }
    // x ticks: the percentiles themselves, or round times.
    let xticks: Vec<f64> = if let Some(c) = axes.categories {
        (0..c.len()).map(|i| i as f64).collect()
    } else if percentile_x {
        [50.0, 90.0, 99.0, 99.9, 99.99]
            .into_iter()
            .filter(|&p| xf(p) >= x0 - 1e-9 && xf(p) <= x1 + 1e-9)
            .collect()
    } else {
        let st = tick_step(x1);
        (0..=((x1 / st).floor() as usize))
            .map(|i| i as f64 * st)
            .collect()
    };
    for x in xticks {
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\" font-size=\"11\">{}</text>",
            px(x),
            TOP + ph + 16.0,
            match axes.categories {
                Some(c) => esc(&c[x as usize]),
                None => fmt_tick(x),
            }
        );
    }
    for (i, l) in lines.iter().enumerate() {
        let points: Vec<String> = l
            .points
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
            .collect();
        let _ = write!(
            s,
            "<polyline class=\"series\" data-name=\"{n}\" fill=\"none\" stroke=\"{c}\" \
             stroke-width=\"2\" points=\"{p}\"/>\
             <text x=\"{lx}\" y=\"{ly}\" font-size=\"11\" fill=\"{c}\">{n}</text>",
            n = esc(&l.name),
            c = l.color,
            p = points.join(" "),
            lx = legend_at(lines.iter().map(|l| l.name.as_str()), i).0,
            ly = legend_at(lines.iter().map(|l| l.name.as_str()), i).1
        );
    }
    s.push_str("</svg>\n");
    s
}

/// Where the `i`-th legend label starts: after the ones before it (about 6.5 px a character
/// at 11 px) and a gap, on a new row when it would run past the chart's right edge.
fn legend_at<'a>(names: impl Iterator<Item = &'a str>, i: usize) -> (f64, f64) {
    let start = LEFT + 10.0;
    let (mut x, mut row) = (start, 0);
    for (k, n) in names.enumerate() {
        let w = n.chars().count() as f64 * 6.5;
        if x > start && x + w > W - RIGHT {
            (x, row) = (start, row + 1);
        }
        if k == i {
            break;
        }
        x += w + 16.0;
    }
    (x, TOP + 12.0 + 13.0 * row as f64)
}

/// A logarithmic axis over `[lo, hi]` (both > 0): from the power of ten at or below `lo` to
/// the one at or above `hi`, ticks at 1, 2 and 5 of each decade (only the powers of ten over
/// more than three decades).
fn log_ticks(lo: f64, hi: f64) -> (f64, f64, Vec<f64>) {
    let (d0, d1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let d1 = d1.max(d0 + 1);
    let steps: &[f64] = if d1 - d0 > 3 {
        &[1.0]
    } else {
        &[1.0, 2.0, 5.0]
    };
    let mut ticks = Vec::new();
    for d in d0..d1 {
        ticks.extend(steps.iter().map(|m| m * 10f64.powi(d)));
    }
    ticks.push(10f64.powi(d1));
    (10f64.powi(d0), 10f64.powi(d1), ticks)
}

/// Share of I/Os per latency range (log-spaced bins), per direction.
fn histogram(lats: &[(&str, &LatReport)]) -> String {
    let mut s = frame("Latency histogram", "latency", "% of I/Os");
    let lo = lats
        .iter()
        .filter_map(|(_, l)| l.histogram_ns.first().map(|b| b[0]))
        .min();
    let hi = lats
        .iter()
        .filter_map(|(_, l)| l.histogram_ns.last().map(|b| b[1]))
        .max();
    let (Some(lo), Some(hi)) = (lo, hi) else {
        s.push_str("<text x=\"260\" y=\"150\" text-anchor=\"middle\">no samples</text></svg>");
        return s;
    };
    // Bins at 1-2-5 steps from a power of ten below the fastest I/O.
    let mut edges = vec![10f64.powf((lo.max(1) as f64).log10().floor()) as u64];
    while *edges.last().expect("one edge") <= hi {
        let e = *edges.last().expect("one edge");
        let lead = e / 10u64.pow((e as f64).log10().floor() as u32);
        edges.push(if lead == 2 { e / 2 * 5 } else { e * 2 });
    }
    let bins = edges.len() - 1;
    let pcts: Vec<Vec<f64>> = lats
        .iter()
        .map(|(_, l)| {
            edges
                .windows(2)
                .map(|w| 100.0 * l.count_between(w[0], w[1]) as f64 / l.count.max(1) as f64)
                .collect()
        })
        .collect();
    let top = pcts.iter().flatten().copied().fold(0.0, f64::max).max(1.0);
    let (pw, ph) = (W - LEFT - RIGHT, H - TOP - BOTTOM);
    let slot = pw / bins as f64;
    let bar = slot / (lats.len() as f64 + 0.5);
    let _ = write!(
        s,
        "<line x1=\"{LEFT}\" y1=\"{b}\" x2=\"{r}\" y2=\"{b}\" stroke=\"#444\"/>\
         <text x=\"{tx}\" y=\"{TOP}\" text-anchor=\"end\" font-size=\"11\">{:.0}%</text>",
        top,
        b = TOP + ph,
        r = LEFT + pw,
        tx = LEFT - 4.0
    );
    for (d, row) in pcts.iter().enumerate() {
        for (k, &p) in row.iter().enumerate() {
            if p <= 0.0 {
                continue;
            }
            let h = p / top * ph;
            let _ = write!(
                s,
                "<rect class=\"bar\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" \
                 fill=\"{}\"><title>{}: {:.2}% between {} and {}</title></rect>",
                LEFT + k as f64 * slot + d as f64 * bar + bar / 4.0,
                TOP + ph - h,
                bar,
                h,
                COLORS[d],
                lats[d].0,
                p,
                fmt_ns(edges[k]),
                fmt_ns(edges[k + 1])
            );
        }
    }
    let every = bins.div_ceil(8).max(1);
    for (k, e) in edges.iter().enumerate().step_by(every) {
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\" font-size=\"10\">{}</text>",
            LEFT + k as f64 * slot,
            TOP + ph + 16.0,
            fmt_ns(*e)
        );
    }
    for (i, (n, _)) in lats.iter().enumerate() {
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"{}\">{n}</text>",
            legend_at(lats.iter().map(|l| l.0), i).0,
            legend_at(lats.iter().map(|l| l.0), i).1,
            COLORS[i]
        );
    }
    s.push_str("</svg>\n");
    s
}

fn fmt_ns(ns: u64) -> String {
    let ns = ns as f64;
    if ns >= 1e9 {
        format!("{}s", fmt_tick(ns / 1e9))
    } else if ns >= 1e6 {
        format!("{}ms", fmt_tick(ns / 1e6))
    } else if ns >= 1e3 {
        format!("{}µs", fmt_tick(ns / 1e3))
    } else {
        format!("{}ns", fmt_tick(ns))
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
