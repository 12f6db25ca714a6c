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
            if r != c {
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
        let repeated = self
            .points
            .iter()
            .filter_map(|p| p.figures.as_ref())
            .map(|f| f.runs)
            .max()
            .unwrap_or(1);
        if repeated > 1 {
            format!(
                "({} per point: the mean of {repeated} runs ± its 95% confidence interval)\n",
                metric.label()
            )
        } else {
            format!("({} per point)\n", metric.label())
        }
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

/// A point's cell: the metric (repeated: bandwidth's 95% interval, in percent), or how the
/// point ended when it did not pass.
fn cell(p: &Point, metric: Metric) -> String {
    match metric.of(p) {
        Some(x) => {
            let mut s = format_metric(x);
            let bw = matches!(metric, Metric::MbPerS | Metric::MibPerS);
            if let Some(f) = p.figures.as_ref().filter(|f| f.runs > 1 && bw) {
                s += &format!(" ±{:.0}%", f.mb_per_s_ci95_pct);
            }
            s += mark(p);
            s
        }
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
    /// for each numeric axis, with the others held, its knee: the first value after which the
    /// next gains less than `knee_pct` percent.
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
        out
    }

    /// The best point by `metric` (under `max_p99_us` when given), as a line.
    fn best(&self, metric: Metric, max_p99_us: Option<f64>) -> String {
        let unit = metric.label();
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
        let best = self
            .points
            .iter()
            .filter(fits)
            .filter(|p| !cached(p))
            .filter_map(|p| metric.of(p).map(|x| (p, x)))
            .max_by(|a, b| {
                let o = a.1.total_cmp(&b.1);
                if metric.lower_better() {
                    o.reverse()
                } else {
                    o
                }
            });
        let bound = max_p99_us
            .map(|m| format!(" with p99 at most {}", latency_text(m)))
            .unwrap_or_default();
        let cache_note = match left_out {
            0 => String::new(),
            n => format!("; {n} point(s) the page cache may have served left out"),
        };
        match best {
            Some((p, x)) => format!(
                "best{bound}: {} ({} {unit}{}{cache_note})",
                point_label(&self.axes, &self.values(p)),
                format_metric(x),
                p.figures
                    .as_ref()
                    .and_then(|f| f.p99_us)
                    .map(|l| format!(", p99 {}", latency_text(l)))
                    .unwrap_or_default()
            ),
            None if left_out > 0 => format!(
                "best{bound}: none the storage can vouch for: every point that passed{} may \
                 have been served by the page cache",
                if max_p99_us.is_some() {
                    " within the bound"
                } else {
                    ""
                }
            ),
            None => format!("best{bound}: no point passed{}", {
                if max_p99_us.is_some() {
                    " within the bound"
                } else {
                    ""
                }
            }),
        }
    }

    /// The knee of axis `k` with the other axes held at `rest`, as a line (none when no point
    /// of the line ran): the first value that no later one improves on by `knee_pct` or more
    /// (robust to a noisy dip: a later gain still counts).
    fn knee(&self, k: usize, rest: &[String], metric: Metric, knee_pct: f64) -> Option<String> {
        let axis = &self.axes[k];
        let unit = metric.label();
        let along: Vec<Option<f64>> = axis
            .values
            .iter()
            .map(|v| {
                self.points
                    .iter()
                    .find(|q| {
                        let mut r = self.values(q);
                        let here = r.remove(k);
                        here == *v && r == rest
                    })
                    .and_then(|q| metric.of(q))
            })
            .collect();
        if along.iter().all(Option::is_none) {
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
        let knee = (0..along.len() - 1).find_map(|i| {
            let a = along[i]?;
            let (j, b) = (i + 1..along.len())
                .filter_map(|j| along[j].map(|b| (j, b)))
                .max_by(|x, y| gain(a, x.1).total_cmp(&gain(a, y.1)))?;
            (gain(a, b) < knee_pct).then_some((i, j, b))
        });
        Some(match knee {
            Some((i, j, b)) => format!(
                "knee of {}{held}: {} — no later value gains {knee_pct}% (the best after it: {} \
                 {unit} at {}, {:+.1}%)",
                axis.name,
                axis.values[i],
                format_metric(b),
                axis.values[j],
                change(along[i].unwrap_or(b), b)
            ),
            None if along.iter().all(Option::is_some) => format!(
                "knee of {}{held}: none up to {} — it still gains {knee_pct}% or more",
                axis.name,
                axis.values[along.len() - 1]
            ),
            None => format!("knee of {}{held}: not found (points missing)", axis.name),
        })
    }
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
