//! A sweep's HTML page: how it was measured, the table and the answers, charts of every
//! figure against every swept option (a line per combination of the other options), the
//! latency-against-IOPS curve, and every point with a link to its own report. Self-contained
//! like the run page (inline CSS and SVG). Pure: a function of the index and one report.

use std::fmt::Write;

use crate::report::html::{Axes, Line, STYLE, esc, line_chart, provenance, spread_wide};
use crate::result::RunReport;
use crate::studies::sweep::{Index, Metric, Point, Status, status_word};

const PALETTE: [&str; 10] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf",
];
/// Lines drawn per chart; the rest are listed as left out.
const MAX_LINES: usize = PALETTE.len();

/// The page for `index`; `first` is one point's report, for how it was measured.
pub fn render(index: &Index, first: Option<&RunReport>) -> String {
    let mut o = String::new();
    let title = "iogauge sweep";
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>{title}</title><style>{STYLE}</style></head><body>\n<h1>{title}</h1>\n"
    );
    let _ = writeln!(
        o,
        "<p><code>{}</code></p>\n<p>{} points over {}.</p>",
        esc(&index.command_line.join(" ")),
        index.points.len(),
        index
            .axes
            .iter()
            .map(|a| format!("{} ({})", esc(&a.name), esc(&a.values.join(", "))))
            .collect::<Vec<_>>()
            .join(" × ")
    );
    if let Some(r) = first {
        provenance(&mut o, r);
    }
    let (row, col, metric) = index.saved_table();
    o.push_str("<h2 id=\"table\">Table</h2>\n");
    if let Ok(t) = index.table(&row, &col, metric) {
        let _ = writeln!(o, "<pre>{}</pre>", esc(&t));
    }
    if !index.answers.is_empty() {
        o.push_str("<ul>\n");
        for a in &index.answers {
            let _ = writeln!(o, "<li>{}</li>", esc(a));
        }
        o.push_str("</ul>\n");
    }
    charts(&mut o, index);
    points(&mut o, index);
    o.push_str("</body></html>\n");
    o
}

/// Every figure against every swept option of two values or more.
fn charts(o: &mut String, index: &Index) {
    o.push_str("<h2 id=\"charts\">Charts</h2>\n");
    let figs = || index.points.iter().filter_map(|p| p.figures.as_ref());
    let runs = figs().map(|f| f.runs).max().unwrap_or(1);
    if runs > 1 {
        let _ = writeln!(
            o,
            "<p>Each point is the mean of up to {runs} runs; its error bar is the mean's 95% \
             confidence interval (overlapping bars: a difference within noise).</p>"
        );
    }
    let cached = figs().filter(|f| f.cached).count();
    if cached > 0 {
        let _ = writeln!(
            o,
            "<p class=\"warn\">{cached} point(s) drawn here the page cache may have served: \
             their figures are not the storage's (marked in the table and the points below).</p>"
        );
    }
    let figures: [(&str, Metric); 3] = [
        ("bandwidth", Metric::MbPerS),
        ("IOPS", Metric::Iops),
        ("p99 latency", Metric::P99Us),
    ];
    for (k, axis) in index.axes.iter().enumerate() {
        if axis.values.len() < 2 {
            continue;
        }
        o.push_str("<div class=\"charts\">\n");
        for (what, metric) in figures {
            let (lines, left_out) = series(index, k, metric);
            let mut chart = line_chart(
                &format!("{what} by {}", axis.name),
                &axis.name,
                metric.label(),
                &lines,
                Axes {
                    categories: Some(&axis.values),
                    log_y: spread_wide(&lines),
                    ..Axes::default()
                },
            );
            if left_out > 0 {
                chart.push_str(&format!(
                    "<p>{left_out} more line(s) not drawn (see the points below)</p>\n"
                ));
            }
            o.push_str(&chart);
        }
        o.push_str("</div>\n");
    }
    // Latency against IOPS along the first axis (the queue-depth curve of an iodepth sweep).
    let first = &index.axes[0];
    if first.values.len() >= 2 {
        let (lines, _) = series_xy(index, 0);
        o.push_str("<div class=\"charts\">\n");
        o.push_str(&line_chart(
            &format!("p99 latency against IOPS, along {}", first.name),
            "IOPS",
            "p99 latency (µs)",
            &lines,
            Axes {
                log_y: spread_wide(&lines),
                ..Axes::default()
            },
        ));
        o.push_str("</div>\n");
    }
}

/// The other axes' values of a point, without axis `k`, and their label.
fn rest(index: &Index, p: &Point, k: usize) -> (Vec<String>, String) {
    let mut v = index.values(p);
    v.remove(k);
    let label = index
        .axes
        .iter()
        .enumerate()
        .filter(|&(j, _)| j != k)
        .zip(&v)
        .map(|((_, a), x)| format!("{}={x}", a.name))
        .collect::<Vec<_>>()
        .join(" ");
    (v, label)
}

/// One line per combination of the other axes: `metric` at each value of axis `k` (x is the
/// value's position), with its 95% interval as an error bar where the point was repeated.
/// Also how many lines did not fit.
fn series(index: &Index, k: usize, metric: Metric) -> (Vec<Line>, usize) {
    let y = |p: &Point| metric.of(p);
    // The combinations where some point has the figure (a line of refused points is not
    // drawn).
    let mut keys: Vec<(Vec<String>, String)> = Vec::new();
    for p in index.points.iter().filter(|p| y(p).is_some()) {
        let r = rest(index, p, k);
        if !keys.contains(&r) {
            keys.push(r);
        }
    }
    let total = keys.len();
    let lines = keys
        .into_iter()
        .take(MAX_LINES)
        .enumerate()
        .map(|(i, (key, label))| Line {
            name: if label.is_empty() {
                "all".into()
            } else {
                label
            },
            color: PALETTE[i % PALETTE.len()],
            points: along(index, k, &key)
                .filter_map(|(x, p)| y(p).map(|y| (x, y)))
                .collect(),
            bars: along(index, k, &key)
                .filter_map(|(x, p)| metric.interval(p).map(|(lo, hi)| (x, lo, hi)))
                .collect(),
        })
        .collect();
    (lines, total.saturating_sub(MAX_LINES))
}

/// The points along axis `k` with the other axes at `key`, each with its position on the axis.
fn along<'a>(
    index: &'a Index,
    k: usize,
    key: &'a [String],
) -> impl Iterator<Item = (f64, &'a Point)> + 'a {
    index.axes[k]
        .values
        .iter()
        .enumerate()
        .filter_map(move |(x, v)| {
            let p = index.points.iter().find(|p| {
                let mut vals = index.values(p);
                vals.remove(k) == *v && vals == key
            })?;
            Some((x as f64, p))
        })
}

/// Like [`series`], with x the point's IOPS and y its p99 latency (no error bars: the
/// intervals are in the charts by axis).
fn series_xy(index: &Index, k: usize) -> (Vec<Line>, usize) {
    let (mut lines, left) = series(index, k, Metric::Iops);
    for l in &mut lines {
        l.bars.clear();
        let label = l.name.clone();
        l.points = index.axes[k]
            .values
            .iter()
            .filter_map(|v| {
                let p = index.points.iter().find(|p| {
                    let (_, lab) = rest(index, p, k);
                    index.values(p)[k] == *v && (lab == label || (lab.is_empty() && label == "all"))
                })?;
                Some((Metric::Iops.of(p)?, Metric::P99Us.of(p)?))
            })
            .collect();
    }
    (lines, left)
}

fn points(o: &mut String, index: &Index) {
    o.push_str("<h2 id=\"points\">Points</h2>\n<table><tr><th>point</th>");
    for a in &index.axes {
        let _ = write!(o, "<th>{}</th>", esc(&a.name));
    }
    o.push_str(
        "<th>status</th><th>MB/s</th><th>MiB/s</th><th>IOPS</th><th>p99 (µs)</th>\
         <th>runs</th><th class=\"l\">report</th></tr>\n",
    );
    for p in &index.points {
        let _ = write!(o, "<tr><td>{}</td>", p.point);
        for v in index.values(p) {
            let _ = write!(o, "<td>{}</td>", esc(&v));
        }
        let f = p.figures.as_ref().filter(|_| p.status == Status::Ok);
        let num = |x: Option<f64>| x.map_or_else(String::new, |x| format!("{x:.1}"));
        // The point's warnings: a badge on its status, the text on hover and below.
        let badge = match f {
            Some(f) if !f.warnings.is_empty() => format!(
                " <span class=\"badge\" title=\"{}\">{}</span>",
                esc(&f.warnings.join("\n")),
                if f.cached {
                    "page cache: not best"
                } else {
                    "warnings"
                }
            ),
            _ => String::new(),
        };
        let _ = writeln!(
            o,
            "<td class=\"l\">{}{badge}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td class=\"l\">{}</td></tr>",
            status_word(p.status),
            num(f.map(|f| f.mb_per_s)),
            num(f.map(|f| f.mib_per_s)),
            num(f.map(|f| f.iops)),
            num(f.and_then(|f| f.p99_us)),
            f.map_or_else(String::new, |f| f.runs.to_string()),
            match (&p.report, &p.error) {
                (Some(r), _) => format!("<a href=\"{0}\">{0}</a>", esc(r)),
                (None, Some(e)) => esc(e),
                _ => String::new(),
            }
        );
    }
    o.push_str("</table>\n");
}
