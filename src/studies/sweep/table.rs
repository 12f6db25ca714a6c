//! A sweep's answers in text: the table of one metric over two swept options, the best
//! point and each numeric axis's knee.

use super::*;

impl Index {
    /// `metric` over two swept options: a row per value of `row`, a column per value of
    /// `col` (the seeds' BUFNO × BUFSIZE shape). With more axes, one table per combination of
    /// the others. A point that did not pass shows how it ended.
    pub fn table(&self, row: &str, col: &str, metric: Metric) -> Result<String, SweepError> {
        let (r, c) = (self.axis_index(row)?, self.axis_index(col)?);
        let others: Vec<usize> = (0..self.axes.len()).filter(|&k| k != r && k != c).collect();
        let mut out = String::new();
        let mut heads: Vec<Vec<String>> = Vec::new();
        for p in &self.points {
            let v = self.values(p);
            let key: Vec<String> = others.iter().map(|&k| v[k].clone()).collect();
            if !heads.contains(&key) {
                heads.push(key);
            }
        }
        for key in heads {
            if !others.is_empty() {
                let which: Vec<String> = others
                    .iter()
                    .zip(&key)
                    .map(|(&k, v)| format!("{}={v}", self.axes[k].name))
                    .collect();
                out.push_str(&format!("{}:\n", which.join(" ")));
            }
            let held: Vec<(usize, &String)> = others.iter().copied().zip(&key).collect();
            out.push_str(&aligned(&self.grid((r, c), &held, metric)));
            // One column is headed by the metric: the note only says what repeated cells are.
            if r != c || self.repeated() > 1 {
                out.push_str(&self.footnote(metric));
            }
        }
        out.push_str(&self.marks_note());
        Ok(out)
    }

    /// Where the axis `n` (as the user names it) is among the swept ones.
    fn axis_index(&self, n: &str) -> Result<usize, SweepError> {
        let def = lookup(n).map(|d| d.name).unwrap_or(n);
        self.axes
            .iter()
            .position(|a| a.name == def)
            .ok_or_else(|| SweepError::NotSwept {
                name: n.to_string(),
                swept: self
                    .axes
                    .iter()
                    .map(|a| a.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    /// One table's cells, its head first: a row per value of axis `r`, a column per value of
    /// axis `c` (or one column, the metric, when they are the same), the other axes `held`.
    fn grid(
        &self,
        (r, c): (usize, usize),
        held: &[(usize, &String)],
        metric: Metric,
    ) -> Vec<Vec<String>> {
        let rows = &self.axes[r].values;
        let cols: &[String] = if r == c { &[] } else { &self.axes[c].values };
        let corner = if r == c {
            self.axes[r].name.clone()
        } else {
            format!("{} \\ {}", self.axes[r].name, self.axes[c].name)
        };
        let mut head = vec![corner];
        if cols.is_empty() {
            head.push(metric.label().into());
        } else {
            head.extend(cols.iter().cloned());
        }
        let mut grid = vec![head];
        let cols_or_one: Vec<Option<&String>> = if cols.is_empty() {
            vec![None]
        } else {
            cols.iter().map(Some).collect()
        };
        for rv in rows {
            let mut line = vec![rv.clone()];
            for cv in &cols_or_one {
                let point = self.points.iter().find(|p| {
                    let v = self.values(p);
                    v[r] == *rv
                        && cv.is_none_or(|cv| v[c] == *cv)
                        && held.iter().all(|&(k, kv)| v[k] == *kv)
                });
                line.push(point.map(|p| cell(p, metric)).unwrap_or_default());
            }
            grid.push(line);
        }
        grid
    }

    /// What a table's cells are: the metric, and with repeated points the mean and interval.
    fn footnote(&self, metric: Metric) -> String {
        let repeated = self.repeated();
        if repeated > 1 && metric == Metric::ElapsedS {
            format!(
                "({} per point: its {repeated} runs together)\n",
                metric.label()
            )
        } else if repeated > 1 {
            format!(
                "({} per point: the mean of {repeated} runs ± its 95% confidence interval)\n",
                metric.label()
            )
        } else {
            format!("({} per point)\n", metric.label())
        }
    }

    /// The most runs any point's figures are the mean of.
    fn repeated(&self) -> usize {
        self.points
            .iter()
            .filter_map(|p| p.figures.as_ref())
            .map(|f| f.runs)
            .max()
            .unwrap_or(1)
    }

    /// What the cells' marks mean, where any cell has one.
    fn marks_note(&self) -> String {
        let mut note = String::new();
        let figs = || self.points.iter().filter_map(|p| p.figures.as_ref());
        if figs().any(|f| f.cached) {
            note += "(† the page cache may have served this point's figures (its report says \
                     why): not the storage's, and never the best)\n";
        }
        if figs().any(|f| !f.cached && !f.warnings.is_empty()) {
            note += "(* this point's report has warnings: index.json, index.csv, its report)\n";
        }
        note
    }
}

/// A point's cell: the metric (repeated: its 95% interval, in percent), or how the point
/// ended when it did not pass.
fn cell(p: &Point, metric: Metric) -> String {
    match metric.of(p) {
        Some(x) => format_metric(x) + &spread_text(metric.interval(p), x) + mark(p),
        None => format!("({})", status_word(p.status)),
    }
}

/// A cell's mark: `†` where the page cache may have served the point's figures, `*` where
/// its report has other warnings (both explained under the table; the warnings are in
/// index.json, index.csv and the point's report).
pub fn mark(p: &Point) -> &'static str {
    match p.figures.as_ref() {
        Some(f) if f.cached => " †",
        Some(f) if !f.warnings.is_empty() => " *",
        _ => "",
    }
}

/// The grid's lines, its first column to the left and the others to the right.
fn aligned(grid: &[Vec<String>]) -> String {
    let widths: Vec<usize> = (0..grid[0].len())
        .map(|k| grid.iter().map(|l| l[k].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for l in grid {
        let cells: Vec<String> = l
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(k, (s, &w))| {
                if k == 0 {
                    format!("{s:<w$}")
                } else {
                    format!("{s:>w$}")
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

/// The value as a number for ordering an axis (sizes in bytes), if it is one.
fn numeric(v: &str) -> Option<f64> {
    v.parse::<f64>().ok().or_else(|| {
        crate::plan::value::parse_size(v)
            .ok()
            .map(|s| s.bytes as f64)
    })
}

impl Index {
    /// Answers, not only data: the best point (under `max_p99_us` when given) by `metric`, and
    /// for each numeric axis, with the others held, its knee: the first value after which no
    /// later one gains `knee_pct` percent. Both are tested against noise where the points
    /// were repeated (their 95% intervals must not overlap); with one run per point a last
    /// line says they were not. Points the page cache may have served take no part.
    pub fn answers(&self, metric: Metric, max_p99_us: Option<f64>, knee_pct: f64) -> Vec<String> {
        let mut out = vec![self.best(metric, max_p99_us)];
        for (k, axis) in self.axes.iter().enumerate() {
            let Some(nums) = axis
                .values
                .iter()
                .map(|v| numeric(v))
                .collect::<Option<Vec<f64>>>()
            else {
                continue;
            };
            if axis.values.len() < 3 || nums.windows(2).any(|w| w[1] <= w[0]) {
                continue;
            }
            // One line per combination of the other axes.
            let mut seen: Vec<Vec<String>> = Vec::new();
            for p in &self.points {
                let mut rest = self.values(p);
                rest.remove(k);
                if seen.contains(&rest) {
                    continue;
                }
                seen.push(rest.clone());
                out.extend(self.knee(k, &rest, metric, knee_pct));
            }
        }
        let ran = || self.points.iter().filter(|p| metric.of(p).is_some());
        if ran().count() > 1 && ran().all(|p| metric.interval(p).is_none()) {
            out.push(if ran().any(|p| p.figures.as_ref().is_some_and(|f| f.runs > 1)) {
                format!(
                    "(the runs recorded no spread for {}: best and knees are not tested against \
                     noise)",
                    metric.label()
                )
            } else {
                "(one run per point: best and knees are not tested against noise; --repeat 3 \
                 gives each point a 95% interval)"
                    .to_string()
            });
        }
        out
    }

    /// The best point by `metric` (under `max_p99_us` when given), as a line: "no clear best"
    /// when the leader's 95% interval overlaps another point's.
    fn best(&self, metric: Metric, max_p99_us: Option<f64>) -> String {
        let unit = metric.label();
        let (ranked, left_out) = self.ranked(metric, max_p99_us);
        let bound = max_p99_us
            .map(|m| format!(" with p99 at most {}", latency_text(m)))
            .unwrap_or_default();
        let cache_note = match left_out {
            0 => String::new(),
            n => format!("; {n} point(s) the page cache may have served left out"),
        };
        let within = if max_p99_us.is_some() {
            " within the bound"
        } else {
            ""
        };
        let Some(&(p, x)) = ranked.first() else {
            return if left_out > 0 {
                format!(
                    "best{bound}: none the storage can vouch for: every point that passed{} may \
                     have been served by the page cache",
                    within
                )
            } else {
                format!("best{bound}: no point passed{}", within)
            };
        };
        let figure = |p: &Point, x: f64| {
            format!(
                "{} {unit}{}",
                format_metric(x),
                spread_text(metric.interval(p), x)
            )
        };
        let p99 = p
            .figures
            .as_ref()
            .and_then(|f| f.p99_us)
            .filter(|_| metric != Metric::P99Us)
            .map(|l| format!(", p99 {}", latency_text(l)))
            .unwrap_or_default();
        let label = |p: &Point| point_label(&self.axes, &self.values(p));
        let Some(lead) = metric.interval(p) else {
            return format!(
                "best{bound}: {} ({}{p99}{cache_note})",
                label(p),
                figure(p, x)
            );
        };
        // Within noise: another point whose interval reaches the leader's, or that has none.
        let ties: Vec<String> = ranked[1..]
            .iter()
            .filter(|(q, _)| {
                metric
                    .interval(q)
                    .is_none_or(|(lo, hi)| lo <= lead.1 && hi >= lead.0)
            })
            .map(|&(q, y)| format!("{} ({})", label(q), figure(q, y)))
            .collect();
        match ties.len() {
            0 => format!(
                "best{bound}: {} ({}{p99}{}{cache_note})",
                label(p),
                figure(p, x),
                ranked
                    .get(1)
                    .map(|&(q, y)| format!(
                        "; ahead of the next, {}, by {:.1}% beyond noise: their 95% intervals do \
                         not overlap",
                        label(q),
                        100.0 * (x - y).abs() / y.abs().max(f64::MIN_POSITIVE)
                    ))
                    .unwrap_or_default()
            ),
            n => format!(
                "no clear best{bound}: {} leads ({}{p99}) but its 95% interval overlaps {n} other \
                 point(s): {} — the differences are within noise (more --repeat runs or a \
                 longer runtime can separate them){cache_note}",
                label(p),
                figure(p, x),
                listed(&ties, 3)
            ),
        }
    }

    /// The points that passed (within `max_p99_us` when given) by `metric`, best first, less
    /// those the page cache may have served, and how many of those there were.
    fn ranked(&self, metric: Metric, max_p99_us: Option<f64>) -> (Vec<(&Point, f64)>, usize) {
        let fits = |p: &&Point| {
            max_p99_us.is_none_or(|max| {
                p.figures
                    .as_ref()
                    .and_then(|f| f.p99_us)
                    .is_some_and(|p99| p99 <= max)
            })
        };
        let cached = |p: &&Point| p.figures.as_ref().is_some_and(|f| f.cached);
        let left_out = self
            .points
            .iter()
            .filter(fits)
            .filter(|p| metric.of(p).is_some() && cached(p))
            .count();
        let mut ranked: Vec<(&Point, f64)> = self
            .points
            .iter()
            .filter(fits)
            .filter(|p| !cached(p))
            .filter_map(|p| metric.of(p).map(|x| (p, x)))
            .collect();
        ranked.sort_by(|a, b| {
            let o = b.1.total_cmp(&a.1);
            if metric.lower_better() {
                o.reverse()
            } else {
                o
            }
        });
        (ranked, left_out)
    }

    /// The knee of axis `k` with the other axes held at `rest`, as a line (none when no point
    /// of the line ran): the first value that no later one improves on by `knee_pct` or more
    /// (robust to a noisy dip: a later gain still counts). A gain counts only beyond noise:
    /// where both points have intervals, they must not overlap.
    fn knee(&self, k: usize, rest: &[String], metric: Metric, knee_pct: f64) -> Option<String> {
        let axis = &self.axes[k];
        let unit = metric.label();
        let mut cached = 0;
        let along: Vec<Option<Measured>> = axis
            .values
            .iter()
            .map(|v| {
                let q = self.points.iter().find(|q| {
                    let mut r = self.values(q);
                    let here = r.remove(k);
                    here == *v && r == rest
                })?;
                let x = metric.of(q)?;
                if q.figures.as_ref().is_some_and(|f| f.cached) {
                    cached += 1;
                    return None;
                }
                Some(Measured {
                    x,
                    ci: metric.interval(q),
                })
            })
            .collect();
        if along.iter().all(Option::is_none) && cached == 0 {
            return None;
        }
        let held = self
            .axes
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != k)
            .zip(rest)
            .map(|((_, a), v)| format!("{}={v}", a.name))
            .collect::<Vec<_>>()
            .join(" ");
        let held = if held.is_empty() {
            String::new()
        } else {
            format!(" ({held})")
        };
        // The change in percent, and the gain (the change for the better).
        let change = |a: f64, b: f64| 100.0 * (b - a) / a.abs().max(f64::MIN_POSITIVE);
        let gain = |a: f64, b: f64| {
            if metric.lower_better() {
                -change(a, b)
            } else {
                change(a, b)
            }
        };
        // A gain that counts: large enough and beyond noise (where both points have
        // intervals, they do not overlap).
        let counts = |a: Measured, b: Measured| {
            gain(a.x, b.x) >= knee_pct
                && match (a.ci, b.ci) {
                    (Some(a), Some(b)) => a.1 < b.0 || b.1 < a.0,
                    _ => true,
                }
        };
        let knee = (0..along.len() - 1).find_map(|i| {
            let a = along[i]?;
            let later: Vec<(usize, Measured)> = (i + 1..along.len())
                .filter_map(|j| along[j].map(|b| (j, b)))
                .collect();
            let &(j, b) = later
                .iter()
                .max_by(|x, y| gain(a.x, x.1.x).total_cmp(&gain(a.x, y.1.x)))?;
            (!later.iter().any(|&(_, b)| counts(a, b))).then_some((i, j, a, b))
        });
        let left_out = match cached {
            0 => String::new(),
            n => format!("; {n} point(s) the page cache may have served left out"),
        };
        Some(match knee {
            Some((i, j, a, b)) => format!(
                "knee of {}{held}: {} — no later value gains {knee_pct}%{} (the best after it: \
                 {} {unit} at {}, {:+.1}%{}){left_out}",
                axis.name,
                axis.values[i],
                if a.ci.is_some() { " beyond noise" } else { "" },
                format_metric(b.x),
                axis.values[j],
                change(a.x, b.x),
                if gain(a.x, b.x) >= knee_pct {
                    ", within noise"
                } else {
                    ""
                }
            ),
            None if along.iter().all(Option::is_some) => format!(
                "knee of {}{held}: none up to {} — it still gains {knee_pct}% or more",
                axis.name,
                axis.values[along.len() - 1]
            ),
            None => format!(
                "knee of {}{held}: not found (points missing{left_out})",
                axis.name
            ),
        })
    }
}

/// A point's figure and its 95% interval, where it has one.
#[derive(Clone, Copy)]
struct Measured {
    x: f64,
    ci: Option<(f64, f64)>,
}

/// A figure's 95% interval as "±N%" after it, or nothing when it has none.
fn spread_text(interval: Option<(f64, f64)>, x: f64) -> String {
    match interval {
        Some((_, hi)) if x != 0.0 => {
            let pct = 100.0 * (hi - x) / x.abs();
            // Under 1% once rounded: a decimal, so a tight interval does not read ±0%.
            if pct < 0.95 {
                format!(" ±{pct:.1}%")
            } else {
                format!(" ±{pct:.0}%")
            }
        }
        _ => String::new(),
    }
}

/// The first `n` items, joined, and how many more.
fn listed(items: &[String], n: usize) -> String {
    let mut s = items.iter().take(n).cloned().collect::<Vec<_>>().join(", ");
    if items.len() > n {
        s += &format!(" and {} more", items.len() - n);
    }
    s
}

/// µs in the unit that reads best.
fn latency_text(us: f64) -> String {
    if us >= 1000.0 {
        format!("{:.2} ms", us / 1000.0)
    } else {
        format!("{us:.1} µs")
    }
}

fn format_metric(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}
