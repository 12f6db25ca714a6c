//! Repetitions (`--repeat=N`): the same plan run N times, and the spread of each job's
//! figures over the runs — mean, sample standard deviation, min, max and a 95% confidence
//! interval of the mean (Student's t) — so `compare` can tell a change from noise.

use serde::{Deserialize, Serialize};

use crate::result::fio::{FioDir, FioJob};

/// One figure over the repetitions.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (n − 1); 0 for one run.
    pub stddev: f64,
    pub min: f64,
    pub max: f64,
    /// 95% confidence interval of the mean: mean ± t(0.975, n − 1) × stddev / √n; the mean
    /// itself for one run (no spread is known).
    pub ci95: [f64; 2],
}

/// Student's t at 0.975 for `df` degrees of freedom (two-sided 95%).
fn t975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        d if d <= 30 => T[d - 1],
        d if d <= 60 => 2.000 + (2.042 - 2.000) * (60 - d) as f64 / 30.0,
        d if d <= 120 => 1.980 + (2.000 - 1.980) * (120 - d) as f64 / 60.0,
        _ => 1.960,
    }
}

impl Spread {
    /// The spread of `xs` (at least one value).
    pub fn of(xs: &[f64]) -> Option<Spread> {
        let n = xs.len();
        if n == 0 {
            return None;
        }
        let mean = xs.iter().sum::<f64>() / n as f64;
        let stddev = if n > 1 {
            (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        let half = if n > 1 {
            t975(n - 1) * stddev / (n as f64).sqrt()
        } else {
            0.0
        };
        Some(Spread {
            n,
            mean,
            stddev,
            min: xs.iter().copied().fold(f64::INFINITY, f64::min),
            max: xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            ci95: [mean - half, mean + half],
        })
    }

    /// The interval's half width, in percent of the mean.
    pub fn ci_pct(&self) -> f64 {
        if self.mean == 0.0 {
            0.0
        } else {
            100.0 * (self.ci95[1] - self.mean) / self.mean.abs()
        }
    }

    /// The two intervals share no value: the means differ beyond what the runs' own noise
    /// explains (a conservative test: it calls fewer changes than a t-test would).
    pub fn apart(&self, other: &Spread) -> bool {
        self.n > 1 && other.n > 1 && (self.ci95[1] < other.ci95[0] || other.ci95[1] < self.ci95[0])
    }
}

/// The spread of one direction of a job row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DirSpread {
    pub mib_per_s: Spread,
    pub mb_per_s: Spread,
    pub iops: Spread,
    /// Completion latency percentiles (total latency where there is no completion latency),
    /// µs; absent where no run recorded them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50_us: Option<Spread>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_us: Option<Spread>,
}

/// One row of the fio-shaped `jobs[]` over the repetitions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobSpread {
    pub jobname: String,
    pub groupid: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<DirSpread>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write: Option<DirSpread>,
}

/// What `--repeat` adds to a report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RepeatReport {
    /// Runs asked for, and runs that completed (fewer when one failed or was interrupted).
    pub requested: usize,
    pub completed: usize,
    /// Per row of `jobs[]`, in its order.
    pub jobs: Vec<JobSpread>,
    /// Every row's reads and writes together, per run: the run's total.
    pub total_mib_per_s: Spread,
    pub total_mb_per_s: Spread,
    pub total_iops: Spread,
    /// Per group of the run, in order: its totals (what `assess` rates).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<GroupSpread>,
}

/// A group's totals over the repetitions, per direction it moved data in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupSpread {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<TotalSpread>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write: Option<TotalSpread>,
}

/// One direction of a group's totals: throughput and total latency (mean and p99, ms).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TotalSpread {
    pub mb_per_s: Spread,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lat_mean_ms: Option<Spread>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lat_p99_ms: Option<Spread>,
}

fn total_spread(dirs: &[&crate::result::DirReport]) -> Option<TotalSpread> {
    if dirs.iter().all(|d| d.ios == 0) {
        return None;
    }
    let all = |xs: Vec<Option<f64>>| xs.into_iter().collect::<Option<Vec<f64>>>();
    let lat = |f: &dyn Fn(&crate::result::DirReport) -> Option<f64>| {
        all(dirs.iter().map(|d| f(d)).collect()).and_then(|xs| Spread::of(&xs))
    };
    Some(TotalSpread {
        mb_per_s: Spread::of(&dirs.iter().map(|d| d.mb_per_s).collect::<Vec<_>>())?,
        lat_mean_ms: lat(&|d| d.lat_ns.as_ref().map(|l| l.mean / 1e6)),
        lat_p99_ms: lat(&|d| d.lat_p99_ns().map(|ns| ns as f64 / 1e6)),
    })
}

/// Each group's totals over `runs`.
fn group_spreads(runs: &[super::Report]) -> Vec<GroupSpread> {
    let groups = runs.iter().map(|r| r.groups.len()).min().unwrap_or(0);
    (0..groups)
        .map(|g| GroupSpread {
            read: total_spread(
                &runs
                    .iter()
                    .map(|r| &r.groups[g].total.read)
                    .collect::<Vec<_>>(),
            ),
            write: total_spread(
                &runs
                    .iter()
                    .map(|r| &r.groups[g].total.write)
                    .collect::<Vec<_>>(),
            ),
        })
        .collect()
}

fn percentile_us(d: &FioDir, key: &str) -> Option<f64> {
    [&d.clat_ns, &d.lat_ns]
        .iter()
        .find_map(|l| l.percentile.as_ref()?.get(key))
        .map(|ns| ns as f64 / 1000.0)
}

fn dir_spread(rows: &[&FioDir]) -> Option<DirSpread> {
    if rows.iter().all(|d| d.total_ios == 0) {
        return None;
    }
    let get =
        |f: &dyn Fn(&FioDir) -> f64| Spread::of(&rows.iter().map(|d| f(d)).collect::<Vec<_>>());
    let pct = |key: &str| {
        let xs: Vec<f64> = rows.iter().filter_map(|d| percentile_us(d, key)).collect();
        (xs.len() == rows.len()).then(|| Spread::of(&xs)).flatten()
    };
    Some(DirSpread {
        mib_per_s: get(&|d| d.bw_bytes as f64 / 1048576.0)?,
        mb_per_s: get(&|d| d.bw_bytes as f64 / 1e6)?,
        iops: get(&|d| d.iops)?,
        p50_us: pct("50.000000"),
        p99_us: pct("99.000000"),
    })
}

/// The spread of every job row over `runs` (the same plan each time, so the same rows).
pub fn summarize(runs: &[super::Report], requested: usize) -> RepeatReport {
    let rows: Vec<Vec<FioJob>> = runs.iter().map(|r| crate::result::fio::jobs(r)).collect();
    let jobs = rows
        .first()
        .map(|first| {
            (0..first.len())
                .map(|k| {
                    let same: Vec<&FioJob> = rows.iter().filter_map(|r| r.get(k)).collect();
                    JobSpread {
                        jobname: first[k].jobname.clone(),
                        groupid: first[k].groupid,
                        read: dir_spread(&same.iter().map(|j| &j.read).collect::<Vec<_>>()),
                        write: dir_spread(&same.iter().map(|j| &j.write).collect::<Vec<_>>()),
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    let total = |f: &dyn Fn(&FioDir) -> f64| {
        let per_run: Vec<f64> = rows
            .iter()
            .map(|r| r.iter().map(|j| f(&j.read) + f(&j.write)).sum())
            .collect();
        Spread::of(&per_run).unwrap_or(Spread {
            n: 0,
            mean: 0.0,
            stddev: 0.0,
            min: 0.0,
            max: 0.0,
            ci95: [0.0, 0.0],
        })
    };
    RepeatReport {
        requested,
        completed: runs.len(),
        jobs,
        total_mib_per_s: total(&|d| d.bw_bytes as f64 / 1048576.0),
        total_mb_per_s: total(&|d| d.bw_bytes as f64 / 1e6),
        total_iops: total(&|d| d.iops),
        groups: group_spreads(runs),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spread_is_the_sample_statistics_with_a_t_interval() {
        let s = Spread::of(&[10.0, 12.0, 14.0]).unwrap();
        assert_eq!((s.n, s.mean, s.min, s.max), (3, 12.0, 10.0, 14.0));
        assert!((s.stddev - 2.0).abs() < 1e-12);
        // 12 ± 4.303 × 2 / √3
        let half = 4.303 * 2.0 / 3f64.sqrt();
        assert!((s.ci95[0] - (12.0 - half)).abs() < 1e-9);
        assert!((s.ci95[1] - (12.0 + half)).abs() < 1e-9);
        assert!((s.ci_pct() - 100.0 * half / 12.0).abs() < 1e-9);
        let one = Spread::of(&[5.0]).unwrap();
        assert_eq!((one.stddev, one.ci95), (0.0, [5.0, 5.0]));
        assert!(Spread::of(&[]).is_none());
        assert_eq!(t975(200), 1.96);
        assert!(t975(45) < t975(30) && t975(45) > t975(60));
    }

    #[test]
    fn intervals_that_overlap_are_not_apart() {
        let a = Spread::of(&[100.0, 102.0, 98.0, 101.0, 99.0]).unwrap();
        let b = Spread::of(&[95.0, 97.0, 93.0, 96.0, 94.0]).unwrap();
        let c = Spread::of(&[99.0, 100.0, 98.0, 97.0, 99.5]).unwrap();
        assert!(a.apart(&b) && b.apart(&a));
        assert!(!a.apart(&c));
        // One run has no spread: never "apart".
        assert!(!Spread::of(&[50.0]).unwrap().apart(&a));
    }
}
