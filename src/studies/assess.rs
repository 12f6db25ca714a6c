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

use crate::result::{DirReport, GroupReport, RunReport};

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
    /// Why the figure may not be the storage's (the page cache could have served it): a
    /// verdict with one is never "good" ("unproven" instead; "poor" stays poor, since a cache
    /// only flatters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caveat: Option<String>,
}

/// Below this share of the job's bytes on the device, the device did not do the I/O.
const DEVICE_SHARE: f64 = 0.9;

/// Why group `g`'s `dir` figure ("read" or "write") may describe memory rather than the
/// storage, if it may: no device below the files to confirm it, the device's counters short
/// of what the jobs moved, or buffered I/O over less data than the host's RAM (SAS's KB asks
/// for files larger than RAM for that reason).
fn cache_caveat(r: &RunReport, g: &GroupReport, dir: &str) -> Option<String> {
    let (moved, on_device) = match dir {
        "write" => (
            g.total.write.bytes,
            g.devices.iter().map(|d| d.write_bytes).sum::<u64>(),
        ),
        _ => (
            g.total.read.bytes,
            g.devices.iter().map(|d| d.read_bytes).sum::<u64>(),
        ),
    };
    if moved == 0 {
        return None;
    }
    let human = crate::units::human_bytes;
    if g.devices.is_empty() {
        return Some(
            "no block device below the files (tmpfs or a network file system): nothing shows \
             the storage did this I/O"
                .into(),
        );
    }
    if (on_device as f64) < DEVICE_SHARE * moved as f64 {
        return Some(format!(
            "the device {} only {} of the {} the jobs moved: the rest was the page cache's",
            if dir == "write" { "wrote" } else { "read" },
            human(on_device),
            human(moved)
        ));
    }
    let through_cache = g.jobs.iter().any(|j| {
        let opt = |k: &str| j.options.get(k).map(String::as_str);
        opt("direct") != Some("1")
            && (dir == "read" || matches!(opt("sync"), None | Some("0" | "none")))
    });
    let ram = r.host.memory_bytes;
    if through_cache && ram > 0 && moved < ram {
        return Some(format!(
            "{} of buffered I/O is less than the host's RAM ({}): the page cache could have \
             served it; --size above RAM for a verdict to quote",
            human(moved),
            human(ram)
        ));
    }
    None
}

/// A verdict's rating once its caveat is weighed: never "good" with one.
fn weighed(rating: &str, caveat: &Option<String>) -> String {
    match (rating, caveat) {
        ("poor", _) | (_, None) => rating.into(),
        (_, Some(_)) => "unproven".into(),
    }
}

/// What `assess` concluded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Assessment {
    /// "sas" or "database".
    pub for_: String,
    pub verdicts: Vec<Verdict>,
    /// poor when any verdict is; else unproven when any is (the cache could have served it);
    /// good when every verdict is; else acceptable.
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
    } else if v.iter().any(|v| v.rating == "unproven") {
        "unproven"
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
        let dir = if test.contains("write") {
            "write"
        } else {
            "read"
        };
        let d = if dir == "write" {
            &g.total.write
        } else {
            &g.total.read
        };
        let caveat = cache_caveat(r, g, dir);
        let per_core = d.mb_per_s / cores.max(1) as f64;
        let rating = if per_core >= 100.0 {
            "good"
        } else if per_core >= 75.0 {
            "acceptable"
        } else {
            "poor"
        };
        verdicts.push(Verdict {
            test: format!("{test}, {} streams", g.jobs.len()),
            figure: format!("MB/s per core ({cores} cores)"),
            value: per_core,
            rating: weighed(rating, &caveat),
            guidance: format!(
                "at least 75 MB/s per core for small and average systems, 100 for large, \
                 heavily used ones; {SAS_SOURCE}"
            ),
            caveat: caveat.clone(),
        });
        let rating = if d.mb_per_s >= 100.0 { "good" } else { "poor" };
        verdicts.push(Verdict {
            test: format!("{test}, {} streams", g.jobs.len()),
            figure: "MB/s for the file system".into(),
            value: d.mb_per_s,
            rating: weighed(rating, &caveat),
            guidance: format!("at least 100 MB/s for any SAS file system; {SAS_SOURCE}"),
            caveat,
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
        let caveat = cache_caveat(r, g, if log { "write" } else { "read" });
        let (good, poor, source) = if log {
            (5.0, 15.0, LOG_SOURCE)
        } else {
            (10.0, 15.0, DB_SOURCE)
        };
        for (figure, value) in [
            ("mean latency (ms)", mean_ms(d)),
            ("p99 latency (ms)", p99_ms(d)),
        ] {
            let rating = if value <= good {
                "good"
            } else if value <= poor {
                "acceptable"
            } else {
                "poor"
            };
            verdicts.push(Verdict {
                test: test.clone(),
                figure: figure.into(),
                value,
                rating: weighed(rating, &caveat),
                guidance: format!("good within {good} ms, a bottleneck over {poor} ms; {source}"),
                caveat: caveat.clone(),
            });
        }
    }
    Assessment {
        for_: "database".into(),
        overall: overall(&verdicts),
        verdicts,
    }
}

/// The rules the verdicts used, each once, in the order first used (note `[n]` is the n-th).
pub fn rules(a: &Assessment) -> Vec<&str> {
    let mut rules: Vec<&str> = Vec::new();
    for v in &a.verdicts {
        if !rules.contains(&v.guidance.as_str()) {
            rules.push(&v.guidance);
        }
    }
    rules
}

/// The caveat of the verdict after `v`, if any: a caveat is said after the last verdict of a
/// run of verdicts that share it.
pub fn next_caveat(a: &Assessment, v: &Verdict) -> Option<String> {
    let i = a.verdicts.iter().position(|w| std::ptr::eq(w, v))?;
    a.verdicts.get(i + 1).and_then(|w| w.caveat.clone())
}

/// The verdicts as text lines, each rule once as a numbered note under them.
pub fn lines(a: &Assessment) -> String {
    let mut o = format!("\nAssessment for {}:\n", a.for_);
    let rules = rules(a);
    for v in &a.verdicts {
        let n = rules
            .iter()
            .position(|r| *r == v.guidance)
            .map_or(0, |i| i + 1);
        o.push_str(&format!(
            "  {:<10} {}: {} {:.2} [{n}]\n",
            v.rating.to_uppercase(),
            v.test,
            v.figure,
            v.value
        ));
        // Said once under the verdicts it concerns (a test's figures share one).
        if v.caveat.is_some() && v.caveat != next_caveat(a, v) {
            let c = v.caveat.as_deref().unwrap_or_default();
            o.push_str(&format!("             not a figure to quote: {c}\n"));
        }
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
            caveat: None,
        };
        assert_eq!(overall(&[v("good"), v("good")]), "good");
        assert_eq!(overall(&[v("good"), v("acceptable")]), "acceptable");
        assert_eq!(overall(&[v("acceptable"), v("poor")]), "poor");
        assert_eq!(overall(&[v("good"), v("unproven")]), "unproven");
        assert_eq!(overall(&[v("unproven"), v("poor")]), "poor");
        assert_eq!(weighed("good", &Some("cache".into())), "unproven");
        assert_eq!(weighed("poor", &Some("cache".into())), "poor");
        assert_eq!(weighed("good", &None), "good");
    }
}
