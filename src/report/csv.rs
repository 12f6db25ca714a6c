//! CSV: one row per job (or per group under `group_reporting`) and direction, with the fields
//! of the fio-shaped JSON rows flattened into stable column names (`lat_ns_mean`,
//! `clat_ns_p99.900000`, `bw` in KiB/s as in fio). A direction the job's `rw` does not do is
//! left out unless it moved I/O. A scale-out report (MPI) adds a row per host and group after
//! the job rows: `jobname` `host:NAME`, `direction` `total`, the host's bandwidth and IOPS
//! (reads and writes together) and the worse direction's p99 latency in `lat_ns_p99.000000`;
//! the other fields are blank. Pure: returns the text.

use crate::plan::RwMode;
use crate::result::fio::{self, FioDir, FioJob, FioLat};
use crate::result::{PERCENTILES, percentile_key};
use crate::studies::Report;

const JOB_OPTIONS: [&str; 5] = ["rw", "bs", "iodepth", "numjobs", "ioengine"];
const LATS: [&str; 3] = ["slat_ns", "clat_ns", "lat_ns"];

pub fn header() -> Vec<String> {
    let mut h: Vec<String> = ["jobname", "groupid", "error", "direction"]
        .map(String::from)
        .to_vec();
    h.extend(JOB_OPTIONS.map(String::from));
    h.extend(
        [
            "io_bytes",
            "io_kbytes",
            "bw_bytes",
            "bw",
            "iops",
            "runtime",
            "total_ios",
        ]
        .map(String::from),
    );
    for l in LATS {
        for f in ["min", "max", "mean", "stddev", "N"] {
            h.push(format!("{l}_{f}"));
        }
        for &p in PERCENTILES {
            h.push(format!("{l}_p{}", percentile_key(p)));
        }
    }
    h.extend(
        [
            "bw_min",
            "bw_max",
            "bw_agg",
            "bw_mean",
            "bw_dev",
            "bw_samples",
            "iops_min",
            "iops_max",
            "iops_mean",
            "iops_stddev",
            "iops_samples",
            "usr_cpu",
            "sys_cpu",
            "ctx",
            "majf",
            "minf",
        ]
        .map(String::from),
    );
    h.extend(VERDICT_COLUMNS.map(String::from));
    h
}

/// `iogauge assess`'s columns, filled on its verdict rows only.
const VERDICT_COLUMNS: [&str; 5] = [
    "verdict",
    "verdict_figure",
    "verdict_value",
    "guidance",
    "caveat",
];

/// `iogauge assess`: a row per verdict (jobname `assess:TEST`, direction `verdict`) and one
/// for the overall verdict (`assess:overall`), in the header's columns.
fn verdict_rows(a: &crate::studies::assess::Assessment) -> Vec<Vec<String>> {
    let h = header();
    let col = |name: &str| {
        h.iter()
            .position(|c| c == name)
            .expect("a column of header()")
    };
    let mut rows = Vec::new();
    for v in &a.verdicts {
        let mut r = vec![String::new(); h.len()];
        r[col("jobname")] = format!("assess:{}", v.test);
        r[col("direction")] = "verdict".into();
        r[col("verdict")] = v.rating.clone();
        r[col("verdict_figure")] = v.figure.clone();
        r[col("verdict_value")] = format!("{:.3}", v.value);
        r[col("guidance")] = v.guidance.clone();
        r[col("caveat")] = v.caveat.clone().unwrap_or_default();
        rows.push(r);
    }
    let mut r = vec![String::new(); h.len()];
    r[col("jobname")] = format!("assess:overall ({})", a.for_);
    r[col("direction")] = "verdict".into();
    r[col("verdict")] = a.overall.clone();
    rows.push(r);
    rows
}

fn lat_fields(row: &mut Vec<String>, l: &FioLat) {
    row.extend([
        l.min.to_string(),
        l.max.to_string(),
        l.mean.to_string(),
        l.stddev.to_string(),
        l.n.to_string(),
    ]);
    for &p in PERCENTILES {
        let v = l
            .percentile
            .as_ref()
            .and_then(|o| o.get(&percentile_key(p)));
        row.push(v.map_or(String::new(), |v| v.to_string()));
    }
}

fn row(j: &FioJob, direction: &str, d: &FioDir) -> Vec<String> {
    let mut r = vec![
        j.jobname.clone(),
        j.groupid.to_string(),
        j.error.to_string(),
        direction.to_string(),
    ];
    for o in JOB_OPTIONS {
        r.push(j.job_options.get(o).cloned().unwrap_or_default());
    }
    r.extend([
        d.io_bytes.to_string(),
        d.io_kbytes.to_string(),
        d.bw_bytes.to_string(),
        d.bw.to_string(),
        d.iops.to_string(),
        d.runtime.to_string(),
        d.total_ios.to_string(),
    ]);
    for l in [&d.slat_ns, &d.clat_ns, &d.lat_ns] {
        lat_fields(&mut r, l);
    }
    r.extend([
        d.bw_min.to_string(),
        d.bw_max.to_string(),
        d.bw_agg.to_string(),
        d.bw_mean.to_string(),
        d.bw_dev.to_string(),
        d.bw_samples.to_string(),
        d.iops_min.to_string(),
        d.iops_max.to_string(),
        d.iops_mean.to_string(),
        d.iops_stddev.to_string(),
        d.iops_samples.to_string(),
        j.usr_cpu.to_string(),
        j.sys_cpu.to_string(),
        j.ctx.to_string(),
        j.majf.to_string(),
        j.minf.to_string(),
    ]);
    // The verdict columns are assess's rows'.
    r.extend(VERDICT_COLUMNS.map(|_| String::new()));
    r
}

/// Whether `rw` (fio's word, maybe with ":GAP") reads, writes and trims; reads and writes
/// when unknown.
pub fn rw_directions(rw: &str) -> [bool; 3] {
    let word = rw
        .split(':')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    RwMode::from_word(&word).map_or([true, true, false], RwMode::dirs)
}

pub fn render(report: &Report) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(header()).expect("writing to memory");
    for j in fio::jobs(report) {
        let [reads, writes, trims] =
            rw_directions(j.job_options.get("rw").map_or("", |s| s.as_str()));
        for (name, d, does) in [
            ("read", &j.read, reads),
            ("write", &j.write, writes),
            ("trim", &j.trim, trims),
        ] {
            if does || d.total_ios > 0 {
                w.write_record(row(&j, name, d)).expect("writing to memory");
            }
        }
    }
    if let Some(s) = &report.scaleout {
        for row in host_rows(s) {
            w.write_record(row).expect("writing to memory");
        }
    }
    for row in report.assessment.iter().flat_map(verdict_rows) {
        w.write_record(row).expect("writing to memory");
    }
    String::from_utf8(w.into_inner().expect("flushed to memory")).expect("CSV of UTF-8 fields")
}

/// A scale-out report's rows per host and group, in the header's columns.
fn host_rows(s: &crate::studies::scaleout::ScaleOut) -> Vec<Vec<String>> {
    let h = header();
    let col = |name: &str| {
        h.iter()
            .position(|c| c == name)
            .expect("a column of header()")
    };
    let p99 = format!("lat_ns_p{}", percentile_key(99.0));
    let mut rows = Vec::new();
    for host in &s.hosts {
        for (gi, g) in host.groups.iter().enumerate() {
            let mut r = vec![String::new(); h.len()];
            r[col("jobname")] = format!("host:{}", host.host);
            r[col("groupid")] = gi.to_string();
            r[col("error")] = "0".into();
            r[col("direction")] = "total".into();
            let bytes_per_s = g.mb_per_s * 1e6;
            r[col("bw_bytes")] = format!("{bytes_per_s:.0}");
            r[col("bw")] = format!("{:.0}", bytes_per_s / 1024.0);
            r[col("iops")] = format!("{:.3}", g.iops);
            if let Some(us) = g.p99_us {
                r[col(&p99)] = format!("{:.0}", us * 1000.0);
            }
            rows.push(r);
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directions_follow_rw() {
        assert_eq!(rw_directions("randread"), [true, false, false]);
        assert_eq!(rw_directions("write"), [false, true, false]);
        assert_eq!(rw_directions("read:64k"), [true, false, false]);
        assert_eq!(rw_directions("randrw"), [true, true, false]);
        assert_eq!(rw_directions("update"), [true, true, false]);
        assert_eq!(rw_directions("randtrim"), [false, false, true]);
        assert_eq!(rw_directions("trimwrite"), [false, true, true]);
        let h = header();
        assert!(h.contains(&"clat_ns_p99.900000".to_string()));
        let unique: std::collections::HashSet<_> = h.iter().collect();
        assert_eq!(unique.len(), h.len(), "column names are unique");
    }

    #[test]
    fn a_scale_out_report_has_a_row_per_host_and_group() {
        use crate::studies::scaleout::{HostGroup, HostRow, ScaleOut};
        let s = ScaleOut {
            ranks: 3,
            stonewall: false,
            read_shift: None,
            max_clock_offset_ms: 0.0,
            jobs_per_host: false,
            hosts: vec![HostRow {
                host: "n1".into(),
                ranks: vec![0, 2],
                cpus: 4,
                groups: vec![HostGroup {
                    mb_per_s: 2.048,
                    mib_per_s: 1.953,
                    iops: 500.0,
                    p99_us: Some(12.5),
                    span_ms: 1000.0,
                }],
            }],
            groups: Vec::new(),
            merge: None,
        };
        let rows = host_rows(&s);
        assert_eq!(rows.len(), 1);
        let h = header();
        let get = |k: &str| rows[0][h.iter().position(|c| c == k).unwrap()].clone();
        assert_eq!(get("jobname"), "host:n1");
        assert_eq!(get("direction"), "total");
        assert_eq!(get("bw_bytes"), "2048000");
        assert_eq!(get("bw"), "2000");
        assert_eq!(get("iops"), "500.000");
        assert_eq!(get("lat_ns_p99.000000"), "12500");
        assert_eq!(get("runtime"), "", "not known per host: blank");
    }
}
