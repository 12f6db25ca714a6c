//! fio's JSON shape, built from a report: the top-level `fio version`, `timestamp`, `time`,
//! `global options`, `jobs[]` and `disk_util[]` that tools written for fio read (fio-plot,
//! fio2gnuplot-style scripts, dashboards). The rows are `result::fio`'s, which the CSV
//! reporter prints too, so the two formats carry the same fields. Pure arithmetic on the
//! report; no I/O.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::result::RunReport;
use crate::result::fio::{FioJob, jobs};
use crate::studies::Report;
use crate::studies::repeat::JobSpread;

/// The fio part of iogauge's JSON document.
#[derive(Debug, Clone, Serialize)]
pub struct FioDoc {
    /// "iogauge-X.Y.Z": tools that print the producer show iogauge, not a fio version.
    #[serde(rename = "fio version")]
    pub fio_version: String,
    pub timestamp: u64,
    pub timestamp_ms: u64,
    /// The start of the run, as fio's ctime-style string (UTC).
    pub time: String,
    /// Options shared by every job (fio: a job file's [global] section); empty on the CLI.
    #[serde(rename = "global options")]
    pub global_options: BTreeMap<String, String>,
    pub jobs: Vec<FioRow>,
    pub disk_util: Vec<FioDisk>,
}

/// One of fio's rows, and what iogauge adds to it (after fio's keys).
#[derive(Debug, Clone, Serialize)]
pub struct FioRow {
    #[serde(flatten)]
    pub job: FioJob,
    /// iogauge's `--repeat`: this row's figures over the runs (the rest is the last run's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iogauge_repeat: Option<JobSpread>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct FioDisk {
    pub name: String,
    pub read_ios: u64,
    pub write_ios: u64,
    pub read_merges: u64,
    pub write_merges: u64,
    pub read_ticks: u64,
    pub write_ticks: u64,
    pub in_queue: u64,
    pub util: f64,
    /// Scale-out: the host whose device this is (fio's client/server output keeps each
    /// host's disks apart; so does this).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iogauge_host: Option<String>,
}

pub fn doc(r: &Report) -> FioDoc {
    FioDoc {
        fio_version: format!("{}-{}", r.tool.name, r.tool.version),
        timestamp: r.started_unix_s,
        timestamp_ms: r.started_unix_ms,
        time: crate::units::ctime_utc(r.started_unix_s),
        global_options: BTreeMap::new(),
        jobs: {
            let spreads = r
                .repeat
                .iter()
                .flat_map(|rep| rep.jobs.iter().cloned().map(Some));
            jobs(r)
                .into_iter()
                .zip(spreads.chain(std::iter::repeat(None)))
                .map(|(job, iogauge_repeat)| FioRow {
                    job,
                    iogauge_repeat,
                })
                .collect()
        },
        disk_util: disk_util(r),
    }
}

/// Each device's counts summed over the groups.
fn disk_util(r: &RunReport) -> Vec<FioDisk> {
    let mut out: Vec<(FioDisk, u64, u64)> = Vec::new();
    for d in r.groups.iter().flat_map(|g| &g.devices) {
        let i = out
            .iter()
            .position(|(o, _, _)| o.name == d.name && o.iogauge_host == d.host)
            .unwrap_or_else(|| {
                let disk = FioDisk {
                    name: d.name.clone(),
                    iogauge_host: d.host.clone(),
                    ..FioDisk::default()
                };
                out.push((disk, 0, 0));
                out.len() - 1
            });
        let (o, busy, wall) = &mut out[i];
        o.read_ios += d.read_ios;
        o.write_ios += d.write_ios;
        o.read_merges += d.read_merges;
        o.write_merges += d.write_merges;
        o.read_ticks += d.read_ms;
        o.write_ticks += d.write_ms;
        o.in_queue += d.in_queue_ms;
        *busy += d.busy_ms;
        *wall += d.wall_ms;
    }
    out.into_iter()
        .map(|(mut o, busy, wall)| {
            o.util = if wall == 0 {
                0.0
            } else {
                (100.0 * busy as f64 / wall as f64).min(100.0)
            };
            o
        })
        .collect()
}
