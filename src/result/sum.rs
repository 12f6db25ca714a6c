//! Several measurements as one: jobs that ran side by side (a group's total, a host's ranks)
//! summed, latencies pooled. Pure arithmetic on report data.

use std::collections::BTreeMap;

use super::{CpuReport, DepthReport, DirReport, LatReport, Measurement, PrioReport, SeriesReport};

impl Measurement {
    /// A group's jobs together: counts and rates summed (the jobs ran side by side), elapsed the
    /// longest, latency moments pooled. Percentiles cannot be pooled from percentiles: a total of
    /// several jobs keeps them only where every job's histogram came with the JSON (json+).
    pub fn sum(parts: &[&Measurement]) -> Measurement {
        let weighted: Vec<(&Measurement, f64)> =
            parts.iter().map(|m| (*m, m.elapsed_ns as f64)).collect();
        Measurement::sum_weighted(&weighted)
    }

    /// [`Measurement::sum`] with each part's weight in the depth shares given (its elapsed
    /// time, or, for a running sum folded one part at a time, the elapsed times it already
    /// holds added up), so that folding parts in one by one gives what summing them at once
    /// gives.
    pub fn sum_weighted(parts: &[(&Measurement, f64)]) -> Measurement {
        if let [(one, _)] = parts {
            return (*one).clone();
        }
        let weights: Vec<f64> = parts.iter().map(|(_, w)| *w).collect();
        let parts: Vec<&Measurement> = parts.iter().map(|(m, _)| *m).collect();
        let parts = parts.as_slice();
        let elapsed_ns = parts.iter().map(|m| m.elapsed_ns).max().unwrap_or(0);
        let dirs = |f: fn(&Measurement) -> &DirReport| -> DirReport {
            let ds: Vec<&DirReport> = parts.iter().map(|m| f(m)).collect();
            DirReport::sum(&ds)
        };
        let cpu = |f: fn(&CpuReport) -> f64| parts.iter().map(|m| f(&m.cpu)).sum::<f64>();
        let (user_s, system_s) = (cpu(|c| c.user_s), cpu(|c| c.system_s));
        let pct = |s: f64| {
            if elapsed_ns == 0 {
                0.0
            } else {
                100.0 * s / (elapsed_ns as f64 / 1e9)
            }
        };
        // Each level's share, weighted by how long each job ran (equally when none ran: a report
        // must never carry NaN, which JSON cannot hold).
        let weight: f64 = weights.iter().sum();
        let share = |i: usize| match weight {
            0.0 => 1.0 / parts.len().max(1) as f64,
            w => weights[i] / w,
        };
        let mut pct_time = BTreeMap::new();
        for (i, m) in parts.iter().enumerate() {
            for (k, v) in &m.iodepth.pct_time {
                *pct_time.entry(k.clone()).or_insert(0.0) += v * share(i);
            }
        }
        Measurement {
            elapsed_ns,
            read: dirs(|m| &m.read),
            write: dirs(|m| &m.write),
            trim: dirs(|m| &m.trim),
            sync: pool(parts.iter().map(|m| m.sync.as_ref())),
            iodepth: DepthReport {
                mean: 0.0,
                mean_unknown: true,
                pct_time,
                at_submit: summed(parts, |d| &d.at_submit),
                submit_calls: summed(parts, |d| &d.submit_calls),
                complete_calls: summed(parts, |d| &d.complete_calls),
            },
            cpu: CpuReport {
                user_s,
                system_s,
                usr_pct: pct(user_s),
                sys_pct: pct(system_s),
                ctx_switches: parts.iter().map(|m| m.cpu.ctx_switches).sum(),
                minor_faults: parts.iter().map(|m| m.cpu.minor_faults).sum(),
                major_faults: parts.iter().map(|m| m.cpu.major_faults).sum(),
            },
            verify: None,
            steadystate: parts.iter().find_map(|m| m.steadystate.clone()),
            // Several replays' timings cannot be summed from their percentiles.
            replay: None,
            latency_target: parts.iter().find_map(|m| m.latency_target),
            errors_continued: parts
                .iter()
                .filter_map(|m| m.errors_continued.as_ref())
                .fold(None, |acc: Option<crate::stats::Continued>, c| {
                    Some(match acc {
                        Some(mut a) => {
                            a.total += c.total;
                            for (x, y) in a.per_dir.iter_mut().zip(c.per_dir) {
                                *x += y;
                            }
                            a
                        }
                        None => c.clone(),
                    })
                }),
            filled: parts.iter().find_map(|m| m.filled.clone()),
        }
    }
}

/// fio's depth counts added up over `parts`; empty unless every part has them.
fn summed(parts: &[&Measurement], f: fn(&DepthReport) -> &Vec<u64>) -> Vec<u64> {
    if parts.iter().any(|m| f(&m.iodepth).is_empty()) {
        return Vec::new();
    }
    let mut out = vec![0; 7];
    for m in parts {
        for (o, v) in out.iter_mut().zip(f(&m.iodepth)) {
            *o += v;
        }
    }
    out
}

impl DirReport {
    /// I/O that went on side by side (several jobs' reads, or one job's reads, writes and
    /// trims as fio's `unified_rw_reporting` folds them): counts and rates summed, latencies
    /// pooled, no series.
    pub fn sum(ds: &[&DirReport]) -> DirReport {
        let bw: f64 = ds.iter().map(|d| d.bw_bytes_per_s).sum();
        DirReport {
            bytes: ds.iter().map(|d| d.bytes).sum(),
            ios: ds.iter().map(|d| d.ios).sum(),
            bw_bytes_per_s: bw,
            mib_per_s: bw / (1024.0 * 1024.0),
            mb_per_s: bw / 1e6,
            iops: ds.iter().map(|d| d.iops).sum(),
            lat_ns: pool(ds.iter().map(|d| d.lat_ns.as_ref())),
            slat_ns: pool(ds.iter().map(|d| d.slat_ns.as_ref())),
            clat_ns: pool(ds.iter().map(|d| d.clat_ns.as_ref())),
            prios: pool_prios(ds),
            series: SeriesReport::none(),
            dropped: ds.iter().map(|d| d.dropped).sum(),
        }
    }
}

/// Several directions' or jobs' per-priority latencies as one list: each priority's pooled,
/// in the order they first appear (fio merges its clat_prio arrays so).
fn pool_prios(ds: &[&DirReport]) -> Vec<PrioReport> {
    let mut keys: Vec<(u16, u16, &str)> = Vec::new();
    for p in ds.iter().flat_map(|d| &d.prios) {
        let k = (p.class, p.level, p.of.as_str());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    keys.into_iter()
        .filter_map(|(class, level, of)| {
            let same = ds
                .iter()
                .flat_map(|d| &d.prios)
                .filter(|p| (p.class, p.level, p.of.as_str()) == (class, level, of))
                .map(|p| Some(&p.latency));
            Some(PrioReport {
                class,
                level,
                of: of.to_string(),
                latency: pool(same)?,
            })
        })
        .collect()
}

impl SeriesReport {
    /// No time series (a report read from JSON that had none, or a sum of several).
    pub fn none() -> SeriesReport {
        SeriesReport {
            interval_ms: 0,
            bw_bytes_per_s: Vec::new(),
            iops: Vec::new(),
            lat_mean_ns: Vec::new(),
            slat_mean_ns: Vec::new(),
            clat_mean_ns: Vec::new(),
        }
    }
}

/// Several jobs' latencies as one: count, min, max, mean and standard deviation pooled
/// exactly; histograms added and percentiles read from the sum when every part has one.
fn pool<'a>(parts: impl Iterator<Item = Option<&'a LatReport>>) -> Option<LatReport> {
    let ls: Vec<&LatReport> = parts.flatten().collect();
    let count: u64 = ls.iter().map(|l| l.count).sum();
    if count == 0 {
        return None;
    }
    let n = count as f64;
    let mean = ls.iter().map(|l| l.mean * l.count as f64).sum::<f64>() / n;
    // Σ (variance + mean²) × count over the parts gives the pooled second moment.
    let second = ls
        .iter()
        .map(|l| (l.stddev * l.stddev + l.mean * l.mean) * l.count as f64)
        .sum::<f64>()
        / n;
    let (min, max) = (
        ls.iter().map(|l| l.min).min().unwrap_or(0),
        ls.iter().map(|l| l.max).max().unwrap_or(0),
    );
    let mut histogram_ns: Vec<[u64; 3]> = Vec::new();
    let mut percentiles = BTreeMap::new();
    if ls.iter().all(|l| !l.histogram_ns.is_empty()) {
        // Each part's buckets ascend: sorted together (runs the sort merges) and each
        // bucket's counts added.
        let mut all: Vec<[u64; 3]> = ls
            .iter()
            .flat_map(|l| l.histogram_ns.iter().copied())
            .collect();
        all.sort_by_key(|b| (b[0], b[1]));
        for b in all {
            match histogram_ns.last_mut() {
                Some(last @ &mut [lo, hi, _]) if (lo, hi) == (b[0], b[1]) => last[2] += b[2],
                _ => histogram_ns.push(b),
            }
        }
        let total: u64 = histogram_ns.iter().map(|b| b[2]).sum();
        // One pass for every percentile (they ascend): the bucket holding the
        // ⌈p% × total⌉-th I/O, at its midpoint.
        let mut buckets = histogram_ns.iter();
        let mut seen = 0;
        let mut at: Option<&[u64; 3]> = None;
        for &p in crate::result::PERCENTILES {
            let rank = ((p / 100.0 * total as f64).ceil() as u64).max(1);
            while seen < rank {
                match buckets.next() {
                    Some(b) => {
                        seen += b[2];
                        at = Some(b);
                    }
                    None => {
                        at = None;
                        break;
                    }
                }
            }
            if let Some(b) = at {
                let mid = b[0] + (b[1] - b[0]) / 2;
                percentiles.insert(crate::result::percentile_key(p), mid.clamp(min, max));
            }
        }
    }
    Some(LatReport {
        count,
        min,
        max,
        mean,
        stddev: (second - mean * mean).max(0.0).sqrt(),
        percentiles,
        histogram_ns,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pooled_moments_are_exact() {
        let l = |xs: &[u64]| {
            let n = xs.len() as f64;
            let mean = xs.iter().sum::<u64>() as f64 / n;
            let var = xs.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / n;
            LatReport {
                count: xs.len() as u64,
                min: *xs.iter().min().unwrap(),
                max: *xs.iter().max().unwrap(),
                mean,
                stddev: var.sqrt(),
                percentiles: BTreeMap::new(),
                histogram_ns: xs.iter().map(|&x| [x, x, 1]).collect(),
            }
        };
        let (a, b) = (l(&[10, 20, 30]), l(&[40, 50]));
        let all = l(&[10, 20, 30, 40, 50]);
        let p = pool([Some(&a), Some(&b), None].into_iter()).unwrap();
        assert_eq!((p.count, p.min, p.max), (5, 10, 50));
        assert!((p.mean - all.mean).abs() < 1e-9);
        assert!((p.stddev - all.stddev).abs() < 1e-9);
        assert_eq!(p.percentiles["50.000000"], 30);
        assert_eq!(p.percentiles["99.000000"], 50);
        assert_eq!(p.histogram_ns.len(), 5);
    }
}
