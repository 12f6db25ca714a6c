//! Sweeps: one workload run over a grid of option values, point by point. This module holds
//! what does not run I/O: the `--sweep NAME=VALUES` grammar, the grid, each point's figures
//! as the index records them, the index (JSON and CSV) and the table of two swept options.
//! The command (`iogauge sweep`) runs the points through the same pipeline as `run`.
//! Here: points, figures and the index; `axis.rs` the grammar and the grid; `table.rs` the
//! table and answers; `dir.rs` the directory.

use std::collections::BTreeMap;

mod axis;
pub mod dir;
mod error;
mod table;

pub use axis::*;
pub use error::{AxisError, DirError, ResumeError, SweepError};

use serde::{Deserialize, Serialize};

use crate::plan::options::lookup;
use crate::result::DirReport;
use crate::studies::repeat::Spread;

/// How a point ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Ran and passed.
    Ok,
    /// Ran, and an I/O error, a verify failure or a refused set-up ended it (its report says).
    Failed,
    /// Its options do not resolve (a value the option refuses, a combination that cannot
    /// run): nothing ran.
    Refused,
    /// Stopped by Ctrl-C: `--resume` runs it again.
    Interrupted,
    /// Not run yet.
    Pending,
}

/// One point of the index.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Point {
    /// 1-based, in grid order.
    pub point: usize,
    /// Swept option → value.
    pub values: BTreeMap<String, String>,
    pub status: Status,
    /// The command's exit code (0 ok, 1 failed, 2 refused, 130 interrupted).
    pub exit_code: Option<u8>,
    /// Why it did not pass, in one line.
    pub error: Option<String>,
    /// Its full report, relative to the sweep's directory.
    pub report: Option<String>,
    /// Wall time the point took, set-up and clean-up included.
    pub elapsed_s: Option<f64>,
    pub figures: Option<Figures>,
}

/// A point's headline figures: bandwidth and IOPS summed over its groups (groups run one
/// after another, so for several groups the sums compare like for like only with each
/// other), p99 the worst group's, total latency where recorded (else completion latency).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Figures {
    pub read_mib_per_s: f64,
    pub read_mb_per_s: f64,
    pub read_iops: f64,
    pub read_p99_us: Option<f64>,
    pub write_mib_per_s: f64,
    pub write_mb_per_s: f64,
    pub write_iops: f64,
    pub write_p99_us: Option<f64>,
    /// Read and write together.
    pub mib_per_s: f64,
    pub mb_per_s: f64,
    pub iops: f64,
    /// Worst of the two.
    pub p99_us: Option<f64>,
    /// Measured time, seconds: the longest group's.
    pub runtime_s: f64,
    /// `--repeat`: runs the figures are the means of (1: one run), and the 95% confidence
    /// interval of `mb_per_s`, in percent of it.
    #[serde(default = "one")]
    pub runs: usize,
    #[serde(default)]
    pub mb_per_s_ci95_pct: f64,
    /// The same for `iops` and for `p99_us` (the worst row's p99 over the runs); absent in
    /// an index made before they were recorded, and where no run recorded a p99.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iops_ci95_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_ci95_pct: Option<f64>,
    /// The point's warnings (its report's), carried into every output of the sweep.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Its figures may be the page cache's (`result::cache_served`): marked, and never best.
    #[serde(default)]
    pub cached: bool,
    /// How it was measured: tool, kernel, CPU, and each target's file system and device.
    pub iogauge: String,
    pub kernel: String,
    pub cpu: String,
    pub targets: String,
}

fn one() -> usize {
    1
}

fn p99_us(d: &DirReport) -> Option<f64> {
    let l = d.lat_ns.as_ref().or(d.clat_ns.as_ref())?;
    l.percentiles.get("99.000000").map(|&ns| ns as f64 / 1000.0)
}

/// The larger of two figures either of which may be missing.
pub fn worse(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, y) => x.or(y),
    }
}

/// Of two spreads either of which may be missing, the one with the larger mean.
fn worst_spread(a: Option<Spread>, b: Option<Spread>) -> Option<Spread> {
    match (a, b) {
        (Some(x), Some(y)) => Some(if y.mean > x.mean { y } else { x }),
        (x, y) => x.or(y),
    }
}

/// The figures of a point's report.
pub fn figures(r: &super::Report) -> Figures {
    let mut f = Figures {
        iogauge: format!("{} {}", r.tool.name, r.tool.version),
        kernel: r.host.kernel.clone(),
        cpu: format!("{} x {}", r.host.cpus, r.host.cpu_model),
        targets: r
            .targets
            .iter()
            .map(|t| {
                let dev = t
                    .device
                    .as_ref()
                    .map_or_else(|| "no device".to_string(), |d| d.name.clone());
                format!(
                    "{} ({}, {dev})",
                    crate::rawpath::display(&t.path),
                    t.fs_type
                )
            })
            .collect::<Vec<_>>()
            .join("; "),
        ..Figures::default()
    };
    for g in &r.groups {
        let (rd, wr) = (&g.total.read, &g.total.write);
        f.read_mib_per_s += rd.mib_per_s;
        f.read_mb_per_s += rd.mb_per_s;
        f.read_iops += rd.iops;
        f.write_mib_per_s += wr.mib_per_s;
        f.write_mb_per_s += wr.mb_per_s;
        f.write_iops += wr.iops;
        if rd.ios > 0 {
            f.read_p99_us = worse(f.read_p99_us, p99_us(rd));
        }
        if wr.ios > 0 {
            f.write_p99_us = worse(f.write_p99_us, p99_us(wr));
        }
        f.runtime_s = f.runtime_s.max(g.total.elapsed_ns as f64 / 1e9);
    }
    f.warnings = r.warnings.clone();
    f.cached = crate::result::cache_served(&r.warnings);
    f.runs = 1;
    if let Some(rep) = r.repeat.as_ref().filter(|r| r.completed > 1) {
        // The means over the runs: sums of the rows' means, p99 the worst row's mean (and
        // that row's spread, for its interval).
        let (mut rd, mut wr) = ([0.0; 3], [0.0; 3]);
        let (mut rp, mut wp) = (None, None);
        for j in &rep.jobs {
            for (d, acc, p) in [(&j.read, &mut rd, &mut rp), (&j.write, &mut wr, &mut wp)] {
                if let Some(d) = d {
                    acc[0] += d.mib_per_s.mean;
                    acc[1] += d.mb_per_s.mean;
                    acc[2] += d.iops.mean;
                    *p = worst_spread(*p, d.p99_us);
                }
            }
        }
        [f.read_mib_per_s, f.read_mb_per_s, f.read_iops] = rd;
        [f.write_mib_per_s, f.write_mb_per_s, f.write_iops] = wr;
        (f.read_p99_us, f.write_p99_us) = (rp.map(|s| s.mean), wp.map(|s| s.mean));
        f.p99_ci95_pct = worst_spread(rp, wp).map(|s| s.ci_pct());
        f.iops_ci95_pct = Some(rep.total_iops.ci_pct());
        f.runs = rep.completed;
        f.mb_per_s_ci95_pct = rep.total_mb_per_s.ci_pct();
    }
    f.mib_per_s = f.read_mib_per_s + f.write_mib_per_s;
    f.mb_per_s = f.read_mb_per_s + f.write_mb_per_s;
    f.iops = f.read_iops + f.write_iops;
    f.p99_us = worse(f.read_p99_us, f.write_p99_us);
    f
}

/// What a table cell shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    MbPerS,
    MibPerS,
    Iops,
    P99Us,
    /// The point's wall time, as the seeds' tables give it.
    ElapsedS,
}

impl Metric {
    pub const ACCEPTED: &'static str = "mb/s, mib/s, iops, p99 or seconds";

    pub fn parse(t: &str) -> Option<Metric> {
        Some(match t.to_ascii_lowercase().as_str() {
            "mb/s" | "mb_per_s" | "mbps" => Metric::MbPerS,
            "mib/s" | "mib_per_s" => Metric::MibPerS,
            "iops" => Metric::Iops,
            "p99" | "p99_us" => Metric::P99Us,
            "seconds" | "s" | "elapsed" => Metric::ElapsedS,
            _ => return None,
        })
    }

    /// Its name for `--metric` and the index.
    pub fn name(self) -> &'static str {
        match self {
            Metric::MbPerS => "mb/s",
            Metric::MibPerS => "mib/s",
            Metric::Iops => "iops",
            Metric::P99Us => "p99",
            Metric::ElapsedS => "seconds",
        }
    }

    /// Less is better (latency, run time); more is better for the rates.
    pub fn lower_better(self) -> bool {
        matches!(self, Metric::P99Us | Metric::ElapsedS)
    }

    /// The label with its unit.
    pub fn label(self) -> &'static str {
        match self {
            Metric::MbPerS => "MB/s",
            Metric::MibPerS => "MiB/s",
            Metric::Iops => "IOPS",
            Metric::P99Us => "p99 latency (µs)",
            Metric::ElapsedS => "seconds per point",
        }
    }

    pub fn of(self, p: &Point) -> Option<f64> {
        let f = p.figures.as_ref().filter(|_| p.status == Status::Ok);
        match self {
            Metric::MbPerS => f.map(|f| f.mb_per_s),
            Metric::MibPerS => f.map(|f| f.mib_per_s),
            Metric::Iops => f.map(|f| f.iops),
            Metric::P99Us => f.and_then(|f| f.p99_us),
            Metric::ElapsedS => f.and(p.elapsed_s),
        }
    }

    /// The 95% confidence interval of the point's figure, when it is the mean of repeated
    /// runs (`--repeat`) and the runs recorded its spread (a point's wall time has none).
    pub fn interval(self, p: &Point) -> Option<(f64, f64)> {
        let x = self.of(p)?;
        let f = p.figures.as_ref().filter(|f| f.runs > 1)?;
        let pct = match self {
            // MiB/s is MB/s times a constant in every run: the same relative interval.
            Metric::MbPerS | Metric::MibPerS => f.mb_per_s_ci95_pct,
            Metric::Iops => f.iops_ci95_pct?,
            Metric::P99Us => f.p99_ci95_pct?,
            Metric::ElapsedS => return None,
        };
        let half = x.abs() * pct / 100.0;
        Some((x - half, x + half))
    }
}

/// The sweep's directory's `index.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Index {
    pub schema: String,
    pub schema_version: u32,
    /// The command that made it (the last one to run points, with `--resume`).
    pub command_line: Vec<String>,
    /// The workload every point shares: the command line without the sweep's own options
    /// (`--resume` checks it is the same).
    pub base: Vec<String>,
    pub axes: Vec<Axis>,
    pub points: Vec<Point>,
    /// The best point and the knees, as printed under the table.
    #[serde(default)]
    pub answers: Vec<String>,
    /// The table's rows and columns (two swept options) and its metric, as asked.
    #[serde(default)]
    pub table: Vec<String>,
    #[serde(default)]
    pub metric: String,
    /// The answers' bounds, as asked (`--knee`, `--max-p99`): `iogauge report` answers again
    /// with them, by today's rules.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub knee_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_p99_us: Option<f64>,
}

pub const SCHEMA: &str = "iogauge-sweep";

impl Index {
    pub fn new(
        command_line: Vec<String>,
        base: Vec<String>,
        axes: Vec<Axis>,
    ) -> Result<Index, SweepError> {
        let points = grid(&axes)?
            .into_iter()
            .enumerate()
            .map(|(i, values)| Point {
                point: i + 1,
                values: axes
                    .iter()
                    .zip(values)
                    .map(|(a, v)| (a.name.clone(), v))
                    .collect(),
                status: Status::Pending,
                exit_code: None,
                error: None,
                report: None,
                elapsed_s: None,
                figures: None,
            })
            .collect();
        Ok(Index {
            schema: SCHEMA.into(),
            schema_version: 1,
            command_line,
            base,
            axes,
            points,
            answers: Vec::new(),
            table: Vec::new(),
            metric: String::new(),
            knee_pct: None,
            max_p99_us: None,
        })
    }

    /// The answers again, by the saved metric and bounds (an index made before they were
    /// saved: the defaults, `--knee=10%` and no p99 bound).
    pub fn answer_again(&mut self) {
        let (_, _, metric) = self.saved_table();
        self.answers = self.answers(metric, self.max_p99_us, self.knee_pct.unwrap_or(10.0));
    }

    /// The table the sweep printed: its rows, columns and metric (the first two swept
    /// options and MB/s when not recorded).
    pub fn saved_table(&self) -> (String, String, Metric) {
        let (row, col) = match self.table.as_slice() {
            [r, c] => (r.clone(), c.clone()),
            _ => (
                self.axes[0].name.clone(),
                self.axes.get(1).unwrap_or(&self.axes[0]).name.clone(),
            ),
        };
        (
            row,
            col,
            Metric::parse(&self.metric).unwrap_or(Metric::MbPerS),
        )
    }

    /// A point's values in axis order.
    pub fn values(&self, p: &Point) -> Vec<String> {
        self.axes
            .iter()
            .map(|a| p.values.get(&a.name).cloned().unwrap_or_default())
            .collect()
    }

    /// One row per point: its number, every swept value, how it ended, its figures and how
    /// it was measured.
    pub fn csv(&self) -> String {
        let mut head: Vec<String> = vec!["point".into()];
        head.extend(self.axes.iter().map(|a| a.name.clone()));
        head.extend(
            [
                "status",
                "mb_per_s",
                "mib_per_s",
                "iops",
                "p99_us",
                "read_mb_per_s",
                "read_mib_per_s",
                "read_iops",
                "read_p99_us",
                "write_mb_per_s",
                "write_mib_per_s",
                "write_iops",
                "write_p99_us",
                "runtime_s",
                "runs",
                "mb_per_s_ci95_pct",
                "iops_ci95_pct",
                "p99_ci95_pct",
                "elapsed_s",
                "report",
                "iogauge",
                "kernel",
                "cpu",
                "targets",
                "error",
                "cached",
                "warnings",
            ]
            .map(String::from),
        );
        let mut out = csv_row(&head);
        let num = |v: f64| format!("{v:.3}");
        let opt = |v: Option<f64>| v.map(num).unwrap_or_default();
        for p in &self.points {
            let mut row = vec![p.point.to_string()];
            row.extend(self.values(p));
            row.push(
                serde_json::to_value(p.status)
                    .ok()
                    .and_then(|v| v.as_str().map(String::from))
                    .unwrap_or_default(),
            );
            let f = p.figures.clone();
            let d = Figures::default();
            let g = f.as_ref().unwrap_or(&d);
            let has = f.is_some();
            let n = |v: f64| if has { num(v) } else { String::new() };
            row.extend([
                n(g.mb_per_s),
                n(g.mib_per_s),
                n(g.iops),
                opt(g.p99_us),
                n(g.read_mb_per_s),
                n(g.read_mib_per_s),
                n(g.read_iops),
                opt(g.read_p99_us),
                n(g.write_mb_per_s),
                n(g.write_mib_per_s),
                n(g.write_iops),
                opt(g.write_p99_us),
                n(g.runtime_s),
                if has {
                    g.runs.to_string()
                } else {
                    String::new()
                },
                n(g.mb_per_s_ci95_pct),
                opt(g.iops_ci95_pct),
                opt(g.p99_ci95_pct),
                opt(p.elapsed_s),
                p.report.clone().unwrap_or_default(),
                g.iogauge.clone(),
                g.kernel.clone(),
                g.cpu.clone(),
                g.targets.clone(),
                p.error.clone().unwrap_or_default(),
                if has {
                    u8::from(g.cached).to_string()
                } else {
                    String::new()
                },
                g.warnings.join(" | "),
            ]);
            out.push_str(&csv_row(&row));
        }
        out
    }
}

pub fn status_word(s: Status) -> &'static str {
    match s {
        Status::Ok => "ok",
        Status::Failed => "failed",
        Status::Refused => "refused",
        Status::Interrupted => "interrupted",
        Status::Pending => "not run",
    }
}

fn csv_row(cells: &[String]) -> String {
    let mut s = cells
        .iter()
        .map(|c| {
            if c.contains([',', '"', '\n']) {
                format!("\"{}\"", c.replace('"', "\"\""))
            } else {
                c.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(",");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_take_lists_and_ranges() {
        let a = parse_axis("bs=4k..64k:x2").unwrap();
        assert_eq!(a.values, ["4k", "8k", "16k", "32k", "64k"]);
        assert_eq!(
            parse_axis("iodepth=1..256:x4").unwrap().values,
            ["1", "4", "16", "64", "256"]
        );
        assert_eq!(
            parse_axis("numjobs=1..4").unwrap().values,
            ["1", "2", "3", "4"]
        );
        assert_eq!(
            parse_axis("iodepth=8..32:+8").unwrap().values,
            ["8", "16", "24", "32"]
        );
        // An alias is the option's own name; a list keeps the user's spelling.
        let a = parse_axis("bufno=3, 20 ,50").unwrap();
        assert_eq!(
            (a.name.as_str(), a.values.clone()),
            ("numpages", vec!["3".into(), "20".into(), "50".into()])
        );
        assert_eq!(
            parse_axis("bs=1536..2k:+512").unwrap().values,
            ["1536", "2k"]
        );
        for (bad, why) in [
            ("bs", "expected NAME=V1,V2"),
            ("nosuch=1,2", "nosuch is not a workload option"),
            ("bs=", "no values"),
            ("bs=4k,4k", "4k is given twice"),
            ("bs=64k..4k:x2", "runs upwards"),
            ("iodepth=1..8:x1", "factor of at least 2"),
            ("iodepth=0..8:x2", "cannot start at 0"),
            ("rw=read..write", "size or whole-number option"),
            ("iodepth=1..100000", "at most 1000 per option"),
        ] {
            let e = parse_axis(bad).unwrap_err().to_string();
            assert!(e.starts_with(&format!("--sweep={bad}: ")), "{e}");
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn the_grid_runs_the_first_axis_slowest() {
        let axes = vec![
            parse_axis("numpages=1,2").unwrap(),
            parse_axis("bs=4k,8k,16k").unwrap(),
        ];
        let g = grid(&axes).unwrap();
        assert_eq!(g.len(), 6);
        assert_eq!(g[0], ["1", "4k"]);
        assert_eq!(g[2], ["1", "16k"]);
        assert_eq!(g[3], ["2", "4k"]);
        assert_eq!(point_label(&axes, &g[4]), "numpages=2 bs=8k");
        let many = vec![
            parse_axis("iodepth=1..100").unwrap(),
            parse_axis("numjobs=1..101").unwrap(),
        ];
        assert!(
            grid(&many)
                .unwrap_err()
                .to_string()
                .contains("10100 points")
        );
    }

    fn done(idx: &mut Index, point: usize, mb: Option<f64>, status: Status) {
        let p = &mut idx.points[point];
        p.status = status;
        p.elapsed_s = Some(2.0);
        p.figures = mb.map(|mb| Figures {
            mb_per_s: mb,
            ..Figures::default()
        });
    }

    #[test]
    fn the_answers_name_the_best_point_and_each_knee() {
        let axes = vec![
            parse_axis("iodepth=1..16:x2").unwrap(),
            parse_axis("bs=4k,8k").unwrap(),
        ];
        let mut idx = Index::new(vec![], vec![], axes).unwrap();
        // MB/s and p99 (µs) per iodepth, for bs=4k and bs=8k.
        let data = [
            (100.0, 50.0),
            (150.0, 60.0),
            (190.0, 80.0),
            (200.0, 150.0),
            (202.0, 300.0),
            (100.0, 60.0),
            (200.0, 70.0),
            (400.0, 90.0),
            (800.0, 160.0),
            (1600.0, 320.0),
        ];
        for (k, (mb, p99)) in data.iter().enumerate() {
            // The grid runs iodepth slowest: point k is iodepth k/2, bs k%2.
            let at = (k % 5) * 2 + k / 5;
            let p = &mut idx.points[at];
            p.status = Status::Ok;
            p.figures = Some(Figures {
                mb_per_s: *mb,
                p99_us: Some(*p99),
                ..Figures::default()
            });
        }
        let a = idx.answers(Metric::MbPerS, None, 10.0);
        assert_eq!(a[0], "best: iodepth=16 bs=8k (1600 MB/s, p99 320.0 µs)");
        assert_eq!(
            a[1],
            "knee of iodepth (bs=4k): 4 — no later value gains 10% (the best after it: 202 MB/s \
             at 16, +6.3%)"
        );
        assert_eq!(
            a[2],
            "knee of iodepth (bs=8k): none up to 16 — it still gains 10% or more"
        );
        assert_eq!(a.len(), 4, "bs has two values: no knee: {a:?}");
        assert_eq!(
            a[3],
            "(one run per point: best and knees are not tested against noise; --repeat 3 gives \
             each point a 95% interval)"
        );
        let a = idx.answers(Metric::MbPerS, Some(100.0), 10.0);
        assert_eq!(
            a[0],
            "best with p99 at most 100.0 µs: iodepth=4 bs=8k (400 MB/s, p99 90.0 µs)"
        );
        // A noisy dip is not the knee when a later value still gains.
        let mut dip =
            Index::new(vec![], vec![], vec![parse_axis("iodepth=1..8:x2").unwrap()]).unwrap();
        for (k, mb) in [100.0, 95.0, 200.0, 205.0].into_iter().enumerate() {
            done(&mut dip, k, Some(mb), Status::Ok);
        }
        let a = dip.answers(Metric::MbPerS, None, 10.0);
        assert!(
            a[1].starts_with("knee of iodepth: 4 — no later value gains"),
            "{a:?}"
        );
        let a = idx.answers(Metric::MbPerS, Some(10.0), 10.0);
        assert_eq!(
            a[0],
            "best with p99 at most 10.0 µs: no point passed within the bound"
        );
    }

    /// Repeated points: `mb` ± `ci` percent over 3 runs.
    fn repeated(idx: &mut Index, point: usize, mb: f64, ci: f64) {
        done(idx, point, Some(mb), Status::Ok);
        let f = idx.points[point].figures.as_mut().unwrap();
        f.runs = 3;
        f.mb_per_s_ci95_pct = ci;
    }

    /// An iodepth=1..8:x2 sweep whose points are `(MB/s, ± percent)` over 3 runs.
    fn repeated_index(points: &[(f64, f64)]) -> Index {
        let axes = vec![parse_axis("iodepth=1..8:x2").unwrap()];
        let mut idx = Index::new(vec![], vec![], axes).unwrap();
        for (k, &(mb, ci)) in points.iter().enumerate() {
            repeated(&mut idx, k, mb, ci);
        }
        idx
    }

    #[test]
    fn best_and_knee_are_tested_against_noise() {
        // A noisy cell: 242 ±1116% leads, but its interval covers every other point.
        let idx = repeated_index(&[(100.0, 2.0), (180.0, 3.0), (200.0, 2.0), (242.0, 1116.0)]);
        let a = idx.answers(Metric::MbPerS, None, 10.0);
        assert_eq!(
            a[0],
            "no clear best: iodepth=8 leads (242 MB/s ±1116%) but its 95% interval overlaps 3 \
             other point(s): iodepth=4 (200 MB/s ±2%), iodepth=2 (180 MB/s ±3%), iodepth=1 (100 \
             MB/s ±2%) — the differences are within noise (more --repeat runs or a longer \
             runtime can separate them)"
        );
        // Its gain over iodepth=4 (+21%) is within noise: the knee is at 4.
        assert_eq!(
            a[1],
            "knee of iodepth: 4 — no later value gains 10% beyond noise (the best after it: 242 \
             MB/s at 8, +21.0%, within noise)"
        );
        assert_eq!(a.len(), 2, "repeated points: no 'not tested' line: {a:?}");
        // Tight intervals: a clear best, and the knee where gains stop.
        let mut idx = repeated_index(&[(100.0, 2.0), (180.0, 3.0), (200.0, 2.0), (260.0, 1.0)]);
        let a = idx.answers(Metric::MbPerS, None, 10.0);
        assert_eq!(
            a[0],
            "best: iodepth=8 (260 MB/s ±1%; ahead of the next, iodepth=4, by 30.0% beyond \
             noise: their 95% intervals do not overlap)"
        );
        assert_eq!(
            a[1],
            "knee of iodepth: none up to 8 — it still gains 10% or more"
        );
        // 4 → 8 gains 2% and the intervals overlap: no clear best, and the knee at 4.
        repeated(&mut idx, 3, 204.0, 1.0);
        let a = idx.answers(Metric::MbPerS, None, 10.0);
        assert!(
            a[0].starts_with(
                "no clear best: iodepth=8 leads (204 MB/s ±1%) but its 95% \
             interval overlaps 1 other point(s): iodepth=4 (200 MB/s ±2%)"
            ),
            "{a:?}"
        );
        assert_eq!(
            a[1],
            "knee of iodepth: 4 — no later value gains 10% beyond noise (the best after it: 204 \
             MB/s at 8, +2.0%)"
        );
    }

    #[test]
    fn the_table_has_a_row_per_value_and_a_column_per_value() {
        let axes = vec![
            parse_axis("numpages=3,20").unwrap(),
            parse_axis("bs=16k,32k").unwrap(),
        ];
        let mut idx = Index::new(vec![], vec![], axes).unwrap();
        done(&mut idx, 0, Some(101.26), Status::Ok);
        done(&mut idx, 1, Some(9.5), Status::Ok);
        done(&mut idx, 2, Some(55.55), Status::Ok);
        done(&mut idx, 3, None, Status::Failed);
        let t = idx.table("bufno", "bs", Metric::MbPerS).unwrap();
        assert_eq!(
            t,
            "numpages \\ bs   16k       32k\n\
             3               101      9.50\n\
             20             55.5  (failed)\n\
             (MB/s per point)\n"
        );
        assert!(
            idx.table("iodepth", "bs", Metric::MbPerS)
                .unwrap_err()
                .to_string()
                .contains("not swept")
        );
        // The CSV: a header, a row per point, the swept values as columns.
        let csv = idx.csv();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 5);
        assert!(lines[0].starts_with("point,numpages,bs,status,mb_per_s,"));
        assert!(lines[1].starts_with("1,3,16k,ok,101.260,"));
        assert!(lines[4].starts_with("4,20,32k,failed,,"));
    }
}
