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

use super::Report;
use super::repeat::{GroupSpread, Spread};
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
    /// Over `--repeat`'s runs (assess runs 3 unless told): the figure's spread. `value` is then
    /// its mean, and the rating was made on `rated_on`, the worse end of its 95% interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<Spread>,
    #[serde(default)]
    pub rated_on: f64,
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

/// SAS's megabyte: iotest.sh's, 2^20 bytes; every SAS figure here is in it.
pub const SAS_MB: f64 = 1048576.0;

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

/// A figure a verdict rates: the mean over `--repeat`'s runs (or the one run's value) and,
/// with several runs, its spread.
#[derive(Debug, Clone, Copy)]
struct Figure {
    value: f64,
    spread: Option<Spread>,
}

impl Figure {
    /// The figure of group `gi`: from the repetitions' spread where `pick` finds one, else the
    /// run's own `value`.
    fn of(
        r: &Report,
        gi: usize,
        value: f64,
        pick: impl Fn(&GroupSpread) -> Option<Spread>,
    ) -> Self {
        let spread = r
            .repeat
            .as_ref()
            .and_then(|rep| rep.groups.get(gi))
            .and_then(pick)
            .filter(|s| s.n > 1);
        Figure {
            value: spread.map_or(value, |s| s.mean),
            spread,
        }
    }

    fn scaled(self, k: f64) -> Self {
        let scale = |s: Spread| Spread {
            mean: s.mean * k,
            stddev: s.stddev * k,
            min: s.min * k,
            max: s.max * k,
            ci95: [s.ci95[0] * k, s.ci95[1] * k],
            ..s
        };
        Figure {
            value: self.value * k,
            spread: self.spread.map(scale),
        }
    }

    /// What the rating is made on: the worse end of the 95% interval (the lower for MB/s,
    /// the upper for latency), so noise between runs cannot lift a verdict.
    fn rated_on(&self, higher_is_better: bool) -> f64 {
        match self.spread {
            Some(s) if higher_is_better => s.ci95[0],
            Some(s) => s.ci95[1],
            None => self.value,
        }
    }
}

/// One verdict: `rate` maps the rated value to good, acceptable or poor.
fn verdict(
    (test, figure): (String, String),
    f: Figure,
    higher_is_better: bool,
    rate: impl Fn(f64) -> &'static str,
    guidance: String,
    caveat: &Option<String>,
) -> Verdict {
    let rated_on = f.rated_on(higher_is_better);
    Verdict {
        test,
        figure,
        value: f.value,
        rating: weighed(rate(rated_on), caveat),
        guidance,
        caveat: caveat.clone(),
        spread: f.spread,
        rated_on,
    }
}

/// SAS: the write and read groups' MB/s per core against 75/100, and in total against 100.
pub fn sas(r: &Report, cores: usize) -> Assessment {
    let mut verdicts = Vec::new();
    for (gi, (g, test)) in r
        .groups
        .iter()
        .zip(["SAS streams write", "SAS streams read"])
        .enumerate()
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
        // SAS's MB is iotest.sh's, 2^20 bytes (iotest's verdict uses the same): MiB/s.
        let mbs = Figure::of(r, gi, d.mb_per_s, |gs| {
            let t = if dir == "write" { &gs.write } else { &gs.read };
            t.as_ref().map(|t| t.mb_per_s)
        })
        .scaled(1e6 / SAS_MB);
        let test = format!("{test}, {} streams", g.jobs.len());
        verdicts.push(verdict(
            (
                test.clone(),
                format!("MB/s per core (MB = 2^20 bytes, as SAS's iotest.sh; {cores} cores)"),
            ),
            mbs.scaled(1.0 / cores.max(1) as f64),
            true,
            |v| match v {
                v if v >= 100.0 => "good",
                v if v >= 75.0 => "acceptable",
                _ => "poor",
            },
            format!(
                "at least 75 MB/s per core for small and average systems, 100 for large, \
                 heavily used ones; {SAS_SOURCE}"
            ),
            &caveat,
        ));
        verdicts.push(verdict(
            (test, "MB/s for the file system (MB = 2^20 bytes)".into()),
            mbs,
            true,
            |v| if v >= 100.0 { "good" } else { "poor" },
            format!("at least 100 MB/s for any SAS file system; {SAS_SOURCE}"),
            &caveat,
        ));
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
pub fn database(r: &Report) -> Assessment {
    let mut verdicts = Vec::new();
    let tests = crate::profiles::DATABASE_LABELS;
    for (gi, (g, test)) in r.groups.iter().zip(tests).enumerate() {
        let log = test.starts_with("log");
        let d = if log { &g.total.write } else { &g.total.read };
        let caveat = cache_caveat(r, g, if log { "write" } else { "read" });
        let (good, poor, source) = if log {
            (5.0, 15.0, LOG_SOURCE)
        } else {
            (10.0, 15.0, DB_SOURCE)
        };
        let side = move |gs: &GroupSpread| {
            if log {
                gs.write.clone()
            } else {
                gs.read.clone()
            }
        };
        let figures = [
            (
                "mean latency (ms)",
                Figure::of(r, gi, mean_ms(d), |gs| side(gs).and_then(|t| t.lat_mean_ms)),
            ),
            (
                "p99 latency (ms)",
                Figure::of(r, gi, p99_ms(d), |gs| side(gs).and_then(|t| t.lat_p99_ms)),
            ),
        ];
        for (figure, f) in figures {
            verdicts.push(verdict(
                (test.to_string(), figure.into()),
                f,
                false,
                |v| match v {
                    v if v <= good => "good",
                    v if v <= poor => "acceptable",
                    _ => "poor",
                },
                format!("good within {good} ms, a bottleneck over {poor} ms; {source}"),
                &caveat,
            ));
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
        let spread = match &v.spread {
            Some(s) => format!(
                " ±{:.2} over {} runs, rated on {:.2}",
                s.ci95[1] - s.mean,
                s.n,
                v.rated_on
            ),
            None => String::new(),
        };
        o.push_str(&format!(
            "  {:<10} {}: {} {:.2}{spread} [{n}]\n",
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
    if let Some(s) = a.verdicts.iter().find_map(|v| v.spread) {
        o.push_str(&format!(
            "  (each figure: the mean ±95% interval over {} runs, rated on the interval's worse \
             end, so noise between runs cannot lift a verdict)\n",
            s.n
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
            caveat: None,
            spread: None,
            rated_on: 0.0,
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
