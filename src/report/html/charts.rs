//! The page's SVG charts, drawn inline: bandwidth and IOPS over time (a chart per scale),
//! latency percentiles, and the latency histogram on a log axis.

use std::fmt::Write;

use super::{COLORS, esc, tail};
use crate::report::LatUnit;
use crate::result::{DirReport, LatReport, Measurement};

pub(super) fn charts(o: &mut String, label: &str, m: &Measurement) {
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
                    bars: Vec::new(),
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
                bars: Vec::new(),
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

pub(super) const LOG_Y_SPREAD: f64 = 20.0;

/// Lines whose peaks differ more than this share a chart no longer: a 5 MiB/s line would lie
/// flat under a 900 MiB/s one.
pub(super) const SHARED_SCALE: f64 = 5.0;

/// The lines as charts: together, or one chart per line when their scales differ.
pub(super) fn by_scale(lines: Vec<Line>) -> Vec<(String, Vec<Line>)> {
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
pub(super) fn drawn_windows(
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
    /// Error bars: at x, from the low y to the high one (a 95% interval), where known.
    pub(crate) bars: Vec<(f64, f64, f64)>,
}

pub(super) const W: f64 = 520.0;
pub(super) const H: f64 = 300.0;
pub(super) const LEFT: f64 = 70.0;
pub(super) const RIGHT: f64 = 20.0;
pub(super) const TOP: f64 = 30.0;
pub(super) const BOTTOM: f64 = 45.0;

/// A round step for about five ticks over `span`.
pub(super) fn tick_step(span: f64) -> f64 {
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

pub(super) fn fmt_tick(v: f64) -> String {
    if v == 0.0 || (v.abs() >= 0.01 && v.abs() < 1e6) {
        let s = format!("{v:.2}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format!("{v:.1e}")
    }
}

pub(super) fn frame(title: &str, x_label: &str, y_label: &str) -> String {
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

/// A line chart of `lines` (each a name, a colour and its points) on `axes`.
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
    let bar_ends = lines
        .iter()
        .flat_map(|l| l.bars.iter().flat_map(|&(x, lo, hi)| [(x, lo), (x, hi)]))
        // A bar reaching zero or below would break a log axis: it is clipped at the axis.
        .filter(|&(_, y)| y > 0.0);
    for (x, y) in pts.copied().chain(bar_ends) {
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
    let (y0, y1, yticks) = y_scale(y_min, y1, log_y);
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
    let xticks = x_ticks(axes, (x0, x1), xf);
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
    draw_series(&mut s, lines, (&px, &py));
    s.push_str("</svg>\n");
    s
}

/// The y axis: its bottom, top and ticks (logarithmic: 1-2-5 steps of each power of ten;
/// linear: from 0 to a round top above `y1`).
fn y_scale(y_min: f64, y1: f64, log_y: bool) -> (f64, f64, Vec<f64>) {
    if log_y {
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
    }
}

/// x ticks: each category, the percentiles themselves, or round times.
fn x_ticks(axes: Axes, (x0, x1): (f64, f64), xf: impl Fn(f64) -> f64) -> Vec<f64> {
    if let Some(c) = axes.categories {
        (0..c.len()).map(|i| i as f64).collect()
    } else if axes.percentile_x {
        [50.0, 90.0, 99.0, 99.9, 99.99]
            .into_iter()
            .filter(|&p| xf(p) >= x0 - 1e-9 && xf(p) <= x1 + 1e-9)
            .collect()
    } else {
        let st = tick_step(x1);
        (0..=((x1 / st).floor() as usize))
            .map(|i| i as f64 * st)
            .collect()
    }
}

/// Each line as a polyline, with its name in the legend.
fn draw_series(
    s: &mut String,
    lines: &[Line],
    (px, py): (&dyn Fn(f64) -> f64, &dyn Fn(f64) -> f64),
) {
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
        for &(x, lo, hi) in &l.bars {
            let (x, top) = (px(x), py(hi));
            // Clipped at the bottom of the plot (a log axis has no zero).
            let bottom = py(lo.max(f64::MIN_POSITIVE)).min(H - BOTTOM);
            let _ = write!(
                s,
                "<path class=\"errbar\" stroke=\"{c}\" stroke-width=\"1\" fill=\"none\" \
                 d=\"M{x:.1},{top:.1}V{bottom:.1}M{l:.1},{top:.1}H{r:.1}M{l:.1},{bottom:.1}H{r:.1}\">\
                 <title>{n}: 95% interval {lo_t} to {hi_t}</title></path>",
                c = l.color,
                n = esc(&l.name),
                l = x - 4.0,
                r = x + 4.0,
                lo_t = fmt_tick(lo),
                hi_t = fmt_tick(hi),
            );
        }
    }
}

/// Where the `i`-th legend label starts: after the ones before it (about 6.5 px a character
/// at 11 px) and a gap, on a new row when it would run past the chart's right edge.
pub(super) fn legend_at<'a>(names: impl Iterator<Item = &'a str>, i: usize) -> (f64, f64) {
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
pub(super) fn log_ticks(lo: f64, hi: f64) -> (f64, f64, Vec<f64>) {
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
pub(super) fn histogram(lats: &[(&str, &LatReport)]) -> String {
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

pub(super) fn fmt_ns(ns: u64) -> String {
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
