//! `iogauge compare`: two JSON reports side by side, per job and direction: bandwidth, IOPS and
//! p50/p99 latency, the change in percent, and which changes pass a threshold. It reads the
//! fio-shaped `jobs[]` that iogauge writes and fio itself writes, so a fio baseline compares
//! with an iogauge run. Pure: documents in, text and a verdict out.

use std::fmt::Write;

use serde_json::Value;

/// What a comparison found.
#[derive(Debug)]
pub struct Comparison {
    pub text: String,
    /// Changes beyond the threshold in the worse direction, plus jobs missing from either side.
    pub regressions: usize,
    pub improvements: usize,
}

#[derive(Clone, Copy, PartialEq)]
enum Better {
    Higher,
    Lower,
}

struct Metric {
    label: &'static str,
    better: Better,
    get: fn(&Value) -> Option<f64>,
    /// Its key in a job's `iogauge_repeat` direction (`--repeat`), in the same unit.
    spread_key: &'static str,
}

/// A figure's spread over repeated runs (`iogauge_repeat`), when the report has one.
fn spread(job: &Value, dir: &str, key: &str) -> Option<crate::studies::repeat::Spread> {
    serde_json::from_value(job["iogauge_repeat"][dir][key].clone()).ok()
}

fn percentile(d: &Value, key: &str) -> Option<f64> {
    ["clat_ns", "lat_ns"]
        .iter()
        .find_map(|l| d[l]["percentile"][key].as_f64())
}

const METRICS: [Metric; 4] = [
    Metric {
        label: "MiB/s",
        spread_key: "mib_per_s",
        better: Better::Higher,
        get: |d| {
            d["bw_bytes"]
                .as_f64()
                .or_else(|| d["bw"].as_f64().map(|k| k * 1024.0))
                .map(|b| b / 1048576.0)
        },
    },
    Metric {
        label: "IOPS",
        spread_key: "iops",
        better: Better::Higher,
        get: |d| d["iops"].as_f64(),
    },
    Metric {
        label: "p50 lat (µs)",
        spread_key: "p50_us",
        better: Better::Lower,
        get: |d| percentile(d, "50.000000").map(|ns| ns / 1e3),
    },
    Metric {
        label: "p99 lat (µs)",
        spread_key: "p99_us",
        better: Better::Lower,
        get: |d| percentile(d, "99.000000").map(|ns| ns / 1e3),
    },
];

/// "jobname" with its occurrence number, so clones and repeated names pair up in order.
fn keyed_jobs(doc: &Value) -> Vec<(String, &Value)> {
    let mut seen: std::collections::HashMap<String, usize> = Default::default();
    doc["jobs"]
        .as_array()
        .map(|jobs| {
            jobs.iter()
                .map(|j| {
                    let name = j["jobname"].as_str().unwrap_or("?").to_string();
                    let n = seen.entry(name.clone()).or_default();
                    *n += 1;
                    (format!("{name}.{}", *n - 1), j)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The parts of a report `compare` reads: who made it, where and when, and per job its name,
/// each direction's rate, IOPS, I/O count and percentiles, and its repeat spread. Read
/// straight from the text, the rest of a large report (histograms, series, iogauge's own
/// groups) is skipped, never held: memory stays near the report's own size.
#[derive(serde::Deserialize, serde::Serialize)]
struct Slim {
    #[serde(rename = "fio version", default)]
    fio_version: Value,
    #[serde(default)]
    time: Value,
    #[serde(default)]
    host: Option<SlimHost>,
    #[serde(default)]
    jobs: Option<Vec<SlimJob>>,
}

#[derive(serde::Deserialize, serde::Serialize)]
struct SlimHost {
    #[serde(default)]
    hostname: Value,
    #[serde(default)]
    kernel: Value,
}

#[derive(serde::Deserialize, serde::Serialize)]
struct SlimJob {
    #[serde(default)]
    jobname: Value,
    #[serde(default)]
    read: Option<SlimDir>,
    #[serde(default)]
    write: Option<SlimDir>,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    iogauge_repeat: Value,
}

#[derive(serde::Deserialize, serde::Serialize)]
struct SlimDir {
    #[serde(default)]
    bw_bytes: Value,
    #[serde(default)]
    bw: Value,
    #[serde(default)]
    iops: Value,
    #[serde(default)]
    total_ios: Value,
    #[serde(default)]
    clat_ns: Option<SlimLat>,
    #[serde(default)]
    lat_ns: Option<SlimLat>,
}

#[derive(serde::Deserialize, serde::Serialize)]
struct SlimLat {
    #[serde(default)]
    percentile: Value,
}

/// Why a report cannot be compared.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    #[error("not a JSON report ({0})")]
    NotJson(serde_json::Error),
    #[error(
        "{what}: not a JSON report with a jobs[] list (iogauge --output-format=json or fio \
         --output-format=json)"
    )]
    NoJobs { what: String },
    /// A figure below zero: the report's name, the job, the direction, the key and the value.
    #[error(
        "{what}: job {job} {dir}: {key} is {value}: a report's figures are never negative (a \
         damaged or edited report)"
    )]
    Negative {
        what: String,
        job: String,
        dir: &'static str,
        key: &'static str,
        value: f64,
    },
}

/// A report's text, read for `compare`: only what it compares (see [`Slim`]).
pub fn load(text: &str) -> Result<Value, CompareError> {
    let slim: Slim = serde_json::from_slice(crate::result::json_start(text).as_bytes())
        .map_err(CompareError::NotJson)?;
    serde_json::to_value(slim).map_err(CompareError::NotJson)
}

/// Who produced a document, and where, in one line.
fn describe(doc: &Value) -> String {
    let mut s = doc["fio version"]
        .as_str()
        .unwrap_or("unknown tool")
        .to_string();
    if let Some(t) = doc["time"].as_str() {
        s += &format!(", {t}");
    }
    if let Some(h) = doc["host"]["hostname"].as_str() {
        s += &format!(
            ", host {h} (kernel {})",
            doc["host"]["kernel"].as_str().unwrap_or("?")
        );
    }
    s
}

/// Checks that `doc` has fio's `jobs[]`; the error names `what`.
pub fn check(doc: &Value, what: &str) -> Result<(), CompareError> {
    let Some(jobs) = doc["jobs"].as_array() else {
        return Err(CompareError::NoJobs { what: what.into() });
    };
    // A rate, a count or a latency below zero is no measurement: a damaged or edited report.
    for j in jobs {
        for dir in ["read", "write"] {
            let d = &j[dir];
            let mut figures: Vec<(&str, Option<f64>)> = ["bw_bytes", "bw", "iops", "total_ios"]
                .iter()
                .map(|k| (*k, d[*k].as_f64()))
                .collect();
            figures.extend(["50.000000", "99.000000"].map(|p| ("percentile", percentile(d, p))));
            if let Some((k, v)) = figures.iter().find(|(_, v)| v.is_some_and(|v| v < 0.0)) {
                return Err(CompareError::Negative {
                    what: what.into(),
                    job: j["jobname"].as_str().unwrap_or("?").into(),
                    dir,
                    key: k,
                    value: v.unwrap_or_default(),
                });
            }
        }
    }
    Ok(())
}

/// One metric of one direction of a job, compared.
struct Judged {
    base: f64,
    new: f64,
    /// The change in percent (infinite from zero).
    change: f64,
    /// The change is beyond the threshold either way.
    beyond: bool,
    /// Not both repeated, or their intervals are apart: the change can be called.
    apart: bool,
    worse: bool,
    better: bool,
    /// Both repeated: each side's 95% interval.
    noise: String,
}

/// Metric `m` of direction `dir` of the base and new job compared: both repeated, their means,
/// a change called only when the runs' intervals are apart. `None` when either lacks it.
fn judge((b, n): (&Value, &Value), dir: &str, m: &Metric, threshold_pct: f64) -> Option<Judged> {
    let (bd, nd) = (&b[dir], &n[dir]);
    let spreads = match (spread(b, dir, m.spread_key), spread(n, dir, m.spread_key)) {
        (Some(sb), Some(sn)) if sb.n > 1 && sn.n > 1 => Some((sb, sn)),
        _ => None,
    };
    let (x, y) = match spreads {
        Some((sb, sn)) => (Some(sb.mean), Some(sn.mean)),
        None => ((m.get)(bd), (m.get)(nd)),
    };
    let (x, y) = (x?, y?);
    let change = if x == 0.0 {
        if y == 0.0 { 0.0 } else { f64::INFINITY }
    } else {
        100.0 * (y - x) / x
    };
    let apart = spreads.is_none_or(|(sb, sn)| sb.apart(&sn));
    let worse = apart
        && match m.better {
            Better::Higher => change < -threshold_pct,
            Better::Lower => change > threshold_pct,
        };
    let better = apart
        && match m.better {
            Better::Higher => change > threshold_pct,
            Better::Lower => change < -threshold_pct,
        };
    let noise = match spreads {
        Some((sb, sn)) => format!(" ±{:.1}%/±{:.1}%", sb.ci_pct(), sn.ci_pct()),
        None => String::new(),
    };
    Some(Judged {
        base: x,
        new: y,
        change,
        beyond: change.abs() > threshold_pct,
        apart,
        worse,
        better,
        noise,
    })
}

/// Two runs' reports (iogauge's or fio's JSON) compared job by job, direction by direction:
/// each metric's change, marked worse or better beyond `threshold_pct` (within noise when
/// both sides were repeated and their intervals overlap), and the jobs only one side has.
pub fn compare(base: &Value, new: &Value, threshold_pct: f64) -> Comparison {
    let mut o = String::new();
    let _ = writeln!(o, "base: {}", describe(base));
    let _ = writeln!(o, "new:  {}", describe(new));
    for (k, what) in [("hostname", "host"), ("kernel", "kernel")] {
        let (a, b) = (&base["host"][k], &new["host"][k]);
        if a.is_string() && b.is_string() && a != b {
            let _ = writeln!(
                o,
                "note: the {what} differs ({} vs {}): the change may not be the storage's",
                a.as_str().unwrap_or(""),
                b.as_str().unwrap_or("")
            );
        }
    }
    let _ = writeln!(
        o,
        "\n{:<20} {:<6} {:<13} {:>14} {:>14} {:>9}",
        "job", "dir", "metric", "base", "new", "change"
    );
    let (base_jobs, new_jobs) = (keyed_jobs(base), keyed_jobs(new));
    let (mut regressions, mut improvements) = (0, 0);
    for (key, b) in &base_jobs {
        let Some((_, n)) = new_jobs.iter().find(|(k, _)| k == key) else {
            let _ = writeln!(o, "{key:<20} only in base: missing from the new run");
            regressions += 1;
            continue;
        };
        for dir in ["read", "write"] {
            let (bd, nd) = (&b[dir], &n[dir]);
            let ios = |d: &Value| d["total_ios"].as_u64().unwrap_or(0);
            if ios(bd) == 0 && ios(nd) == 0 {
                continue;
            }
            for (i, m) in METRICS.iter().enumerate() {
                let Some(r) = judge((b, n), dir, m, threshold_pct) else {
                    continue;
                };
                let mark = if r.beyond && !r.apart {
                    "  within noise"
                } else if r.worse {
                    regressions += 1;
                    "  WORSE"
                } else if r.better {
                    improvements += 1;
                    "  better"
                } else {
                    ""
                };
                let (job, d) = if i == 0 {
                    (key.as_str(), dir)
                } else {
                    ("", "")
                };
                let _ = writeln!(
                    o,
                    "{job:<20} {d:<6} {:<13} {:>14.2} {:>14.2} {:>8.1}%{}{mark}",
                    m.label, r.base, r.new, r.change, r.noise
                );
            }
        }
    }
    for (key, _) in &new_jobs {
        if !base_jobs.iter().any(|(k, _)| k == key) {
            let _ = writeln!(o, "{key:<20} only in new: not in the base run");
            regressions += 1;
        }
    }
    let _ = writeln!(
        o,
        "\n{regressions} worse beyond {threshold_pct}% (or unmatched), {improvements} better"
    );
    if base_jobs
        .iter()
        .chain(&new_jobs)
        .any(|(_, j)| j["iogauge_repeat"].is_object())
    {
        let _ = writeln!(
            o,
            "(where both sides were repeated (--repeat), means are compared, with each side's \
             95% confidence interval; a change whose intervals overlap is within noise and not \
             counted)"
        );
    }
    Comparison {
        text: o,
        regressions,
        improvements,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(bw: f64, p99: f64) -> Value {
        json!({"fio version": "fio-3.33", "jobs": [{"jobname": "a", "read": {
            "total_ios": 10, "bw_bytes": bw, "iops": bw / 4096.0,
            "clat_ns": {"percentile": {"50.000000": 100.0, "99.000000": p99}}
        }, "write": {"total_ios": 0}}]})
    }

    #[test]
    fn marks_changes_beyond_the_threshold() {
        let c = compare(&doc(100e6, 1000.0), &doc(90e6, 1020.0), 5.0);
        // Bandwidth and IOPS fell 10%: worse; p99 rose 2%: within the threshold.
        assert_eq!((c.regressions, c.improvements), (2, 0), "{}", c.text);
        assert!(c.text.contains("-10.0%  WORSE"), "{}", c.text);
        let c = compare(&doc(100e6, 1000.0), &doc(100e6, 800.0), 5.0);
        assert_eq!((c.regressions, c.improvements), (0, 1), "{}", c.text);
        let mut other = doc(1.0, 1.0);
        other["jobs"][0]["jobname"] = json!("b");
        let c = compare(&doc(1.0, 1.0), &other, 5.0);
        assert_eq!(c.regressions, 2, "a job only in one run is unmatched");
        assert!(check(&json!({"x": 1}), "f.json").is_err());
    }

    /// Repeated runs: the means are compared, and a change inside the runs' noise is not a
    /// regression however large.
    #[test]
    fn repeated_runs_call_only_changes_beyond_their_noise() {
        let repeated = |runs: &[f64]| {
            let mut d = doc(runs[runs.len() - 1] * 1048576.0, 1000.0);
            let mib = crate::studies::repeat::Spread::of(runs).unwrap();
            let iops = crate::studies::repeat::Spread::of(
                &runs.iter().map(|r| r * 256.0).collect::<Vec<_>>(),
            )
            .unwrap();
            d["jobs"][0]["iogauge_repeat"] =
                json!({"read": {"mib_per_s": mib, "mb_per_s": mib, "iops": iops}});
            d
        };
        // Means 100 and 90 MiB/s, but each side's runs spread over ±20%.
        let noisy = compare(
            &repeated(&[80.0, 120.0, 100.0]),
            &repeated(&[70.0, 110.0, 90.0]),
            5.0,
        );
        assert_eq!(
            (noisy.regressions, noisy.improvements),
            (0, 0),
            "{}",
            noisy.text
        );
        assert!(noisy.text.contains("-10.0% ±"), "{}", noisy.text);
        assert!(noisy.text.contains("within noise"), "{}", noisy.text);
        assert!(noisy.text.contains("means are compared"), "{}", noisy.text);
        // The same means from tight runs: a regression.
        let tight = compare(
            &repeated(&[99.0, 101.0, 100.0]),
            &repeated(&[89.0, 91.0, 90.0]),
            5.0,
        );
        assert_eq!(tight.regressions, 2, "MiB/s and IOPS: {}", tight.text);
        assert!(tight.text.contains("100.00"), "{}", tight.text);
        assert!(tight.text.contains("90.00"), "{}", tight.text);
    }
}
