//! fio's interval logs (`write_bw_log`, `write_iops_log`, `write_lat_log`) from a report's time
//! series: `NAME_bw.N.log` and friends, N counting the run's jobs from 1, each line
//! `msec, value, direction, bs, offset` as fio writes averaged logs (direction 0 read, 1 write;
//! bs and offset 0). Bandwidth (KiB/s) and IOPS cover full windows only, as fio's; latency
//! (mean ns) includes the last, partial window. Pure: returns names and contents; the CLI
//! writes them.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::plan::LogSpec;
use crate::result::fio::full_windows;
use crate::result::{DirReport, JobReport, RunReport};

/// The logs a job asked for, from the options its report keeps.
pub fn wanted(o: &BTreeMap<String, String>) -> LogSpec {
    LogSpec {
        bw: o.get("write_bw_log").cloned(),
        iops: o.get("write_iops_log").cloned(),
        lat: o.get("write_lat_log").cloned(),
    }
}

/// Every log file of the run: (file name, contents).
pub fn render(report: &RunReport) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let jobs = report.groups.iter().flat_map(|g| &g.jobs);
    for (i, job) in jobs.enumerate() {
        let n = i + 1;
        let wanted = wanted(&job.options);
        if let Some(b) = &wanted.bw {
            let text = lines(job, true, |d, k| d.series.bw_bytes_per_s[k] / 1024.0);
            out.push((LogSpec::file_name(b, "bw", n), text));
        }
        if let Some(b) = &wanted.iops {
            out.push((
                LogSpec::file_name(b, "iops", n),
                lines(job, true, |d, k| d.series.iops[k]),
            ));
        }
        if let Some(b) = &wanted.lat {
            out.push((
                LogSpec::file_name(b, "lat", n),
                lines(job, false, |d, k| d.series.lat_mean_ns[k]),
            ));
            // Synchronous engines time one span: fio logs it as clat and leaves slat empty.
            let queued = [&job.measurement.read, &job.measurement.write]
                .iter()
                .any(|d| !d.series.clat_mean_ns.is_empty());
            let clat = if queued {
                lines(job, false, |d, k| {
                    d.series.clat_mean_ns.get(k).copied().unwrap_or(0.0)
                })
            } else {
                lines(job, false, |d, k| d.series.lat_mean_ns[k])
            };
            out.push((LogSpec::file_name(b, "clat", n), clat));
            let slat = if queued {
                lines(job, false, |d, k| {
                    d.series.slat_mean_ns.get(k).copied().unwrap_or(0.0)
                })
            } else {
                String::new()
            };
            out.push((LogSpec::file_name(b, "slat", n), slat));
        }
    }
    out
}

/// One line per window and direction that did I/O in it, in time order.
fn lines(job: &JobReport, full_only: bool, value: impl Fn(&DirReport, usize) -> f64) -> String {
    let m = &job.measurement;
    let dirs = [(0, &m.read), (1, &m.write)];
    let count = |d: &DirReport| {
        if full_only {
            full_windows(&d.series, m.elapsed_ns)
        } else {
            d.series.iops.len()
        }
    };
    let windows = dirs.iter().map(|(_, d)| count(d)).max().unwrap_or(0);
    let mut s = String::new();
    for k in 0..windows {
        for (ddir, d) in dirs {
            if k >= count(d) || d.series.iops[k] == 0.0 {
                continue;
            }
            let interval = d.series.interval_ms;
            let end_ms = ((k as u64 + 1) * interval).min(m.elapsed_ns / 1_000_000);
            let _ = writeln!(s, "{end_ms}, {:.0}, {ddir}, 0, 0", value(d, k));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_are_fios() {
        let mut o = BTreeMap::new();
        o.insert(
            "write_bw_log".to_string(),
            "randread-iodepth-8-numjobs-1".to_string(),
        );
        o.insert("write_lat_log".to_string(), "x".to_string());
        let w = wanted(&o);
        assert_eq!(
            w.files(2),
            vec![
                "randread-iodepth-8-numjobs-1_bw.2.log",
                "x_lat.2.log",
                "x_clat.2.log",
                "x_slat.2.log"
            ]
        );
    }
}
