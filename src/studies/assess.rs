//! `iogauge assess`: is this storage good enough for SAS, or for a database? The verdicts
//! compare what was measured with published guidance, each citing its source:
//!
//! - SAS (SAS Institute's iotest.sh guidance, KB "Tool to test I/O throughput on UNIX
//!   platforms"): at least 75 MB/s per processor core for small to average systems, 100 or more
//!   for larger, heavily used ones, and at least 100 MB/s for any SAS file system.
//! - Databases (Microsoft, "Troubleshoot slow SQL Server performance caused by I/O issues"):
//!   I/O waits consistently over 10–15 ms mean an I/O bottleneck; log writes are commonly kept
//!   within 1–5 ms (practitioners' guidance), since every commit waits for one.

use serde::{Deserialize, Serialize};

use crate::result::{DirReport, RunReport};

/// One verdict line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub test: String,
    /// What was compared, with its unit.
    pub figure: String,
    pub value: f64,
    /// "good", "acceptable", "poor".
    pub rating: String,
    /// The rule, and where it comes from.
    pub guidance: String,
}

/// What `assess` concluded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Assessment {
    /// "sas" or "database".
    pub for_: String,
    pub verdicts: Vec<Verdict>,
    /// good when every verdict is, poor when any is, else acceptable.
    pub overall: String,
}

pub const SAS_SOURCE: &str = "SAS iotest.sh guidance (SAS KB, \"Tool to test I/O throughput on \
                              UNIX platforms\")";
pub const DB_SOURCE: &str = "Microsoft, \"Troubleshoot slow SQL Server performance caused by I/O \
                             issues\": waits over 10-15 ms are a bottleneck";
pub const LOG_SOURCE: &str = "log writes kept within 1-5 ms (SQL Server practitioners' \
                              guidance); over 15 ms a bottleneck (Microsoft)";

fn overall(v: &[Verdict]) -> String {
    if v.iter().any(|v| v.rating == "poor") {
        "poor"
    } else if v.iter().all(|v| v.rating == "good") {
        "good"
    } else {
        "acceptable"
    }
    .into()
}

/// SAS: the write and read groups' MB/s per core against 75/100, and in total against 100.
pub fn sas(r: &RunReport, cores: usize) -> Assessment {
    let mut verdicts = Vec::new();
    for (g, test) in r
        .groups
        .iter()
        .zip(["SAS streams write", "SAS streams read"])
    {
        let d = if test.contains("write") {
            &g.total.write
        } else {
            &g.total.read
        };
        let per_core = d.mb_per_s / cores.max(1) as f64;
        verdicts.push(Verdict {
            test: format!("{test}, {} streams", g.jobs.len()),
            figure: format!("MB/s per core ({cores} cores)"),
            value: per_core,
            rating: if per_core >= 100.0 {
                "good"
            } else if per_core >= 75.0 {
                "acceptable"
            } else {
                "poor"
            }
            .into(),
            guidance: format!(
                "at least 75 MB/s per core for small and average systems, 100 for large, \
                 heavily used ones; {SAS_SOURCE}"
            ),
        });
        verdicts.push(Verdict {
            test: format!("{test}, {} streams", g.jobs.len()),
            figure: "MB/s for the file system".into(),
            value: d.mb_per_s,
            rating: if d.mb_per_s >= 100.0 { "good" } else { "poor" }.into(),
            guidance: format!("at least 100 MB/s for any SAS file system; {SAS_SOURCE}"),
        });
    }
    Assessment {
        for_: "sas".into(),
        overall: overall(&verdicts),
        verdicts,
    }
}

fn mean_ms(d: &DirReport) -> f64 {
    d.lat_ns.as_ref().map_or(0.0, |l| l.mean / 1e6)
}

fn p99_ms(d: &DirReport) -> f64 {
    d.lat_p99_ns().map_or(0.0, |ns| ns as f64 / 1e6)
}

/// Databases: data-file read latency (mean and p99, at QD1 and under load) against 10/15 ms,
/// log-write latency against 5/15 ms.
pub fn database(r: &RunReport) -> Assessment {
    let mut verdicts = Vec::new();
    let tests = crate::profiles::DATABASE_LABELS;
    for (g, test) in r.groups.iter().zip(tests) {
        let log = test.starts_with("log");
        let test = test.to_string();
        let d = if log { &g.total.write } else { &g.total.read };
        let (good, poor, source) = if log {
            (5.0, 15.0, LOG_SOURCE)
        } else {
            (10.0, 15.0, DB_SOURCE)
        };
        for (figure, value) in [
            ("mean latency (ms)", mean_ms(d)),
            ("p99 latency (ms)", p99_ms(d)),
        ] {
            verdicts.push(Verdict {
                test: test.clone(),
                figure: figure.into(),
                value,
                rating: if value <= good {
                    "good"
                } else if value <= poor {
                    "acceptable"
                } else {
                    "poor"
                }
                .into(),
                guidance: format!("good within {good} ms, a bottleneck over {poor} ms; {source}"),
            });
        }
    }
    Assessment {
        for_: "database".into(),
        overall: overall(&verdicts),
        verdicts,
    }
}

/// The verdicts as text lines, each rule once as a numbered note under them.
pub fn lines(a: &Assessment) -> String {
    let mut o = format!("\nAssessment for {}:\n", a.for_);
    let mut rules: Vec<&str> = Vec::new();
    for v in &a.verdicts {
        let n = match rules.iter().position(|r| *r == v.guidance) {
            Some(i) => i + 1,
            None => {
                rules.push(&v.guidance);
                rules.len()
            }
        };
        o.push_str(&format!(
            "  {:<10} {}: {} {:.2} [{n}]\n",
            v.rating.to_uppercase(),
            v.test,
            v.figure,
            v.value
        ));
    }
    o.push_str(&format!("Overall: {}\n", a.overall.to_uppercase()));
    for (i, r) in rules.iter().enumerate() {
        o.push_str(&format!("  [{}] {r}\n", i + 1));
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratings_follow_the_thresholds() {
        let v = |rating: &str| Verdict {
            test: String::new(),
            figure: String::new(),
            value: 0.0,
            rating: rating.into(),
            guidance: String::new(),
        };
        assert_eq!(overall(&[v("good"), v("good")]), "good");
        assert_eq!(overall(&[v("good"), v("acceptable")]), "acceptable");
        assert_eq!(overall(&[v("acceptable"), v("poor")]), "poor");
    }
}
