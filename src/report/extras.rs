//! What iogauge adds below another tool's output (a legacy tool's, fio mode's normal
//! report): per direction the IOPS, MiB/s and latency percentiles, how the I/O was issued, CPU
//! cost, the devices, verification, and every warning and error.

use std::fmt::Write;

use crate::report::LatUnit;
use crate::result::{DirReport, RunReport, percentile_key};
use crate::units::human_bytes;

/// What iogauge adds below `tool`'s output, after a rule naming it: per direction the IOPS,
/// MiB/s and latency percentiles, how the I/O was issued, CPU cost, and every warning and
/// error.
pub fn extras(r: &RunReport, tool: &str) -> String {
    let mut o = format!("\n---- iogauge: what {tool} does not show ----\n");
    let _ = writeln!(
        o,
        "{} {} · {} · {} CPUs · {} RAM",
        r.tool.name,
        r.tool.version,
        // Linux's "Linux 6.1.0-18-amd64 #1 SMP …" as its release; Windows' as it is.
        match r.host.kernel.strip_prefix("Linux ") {
            Some(rest) => format!("kernel {}", rest.split(' ').next().unwrap_or("")),
            None => r.host.kernel.clone(),
        },
        r.host.cpus,
        human_bytes(r.host.memory_bytes)
    );
    for t in &r.targets {
        let dev = t
            .device
            .as_ref()
            .map_or("no block device".to_string(), |d| d.path());
        let _ = writeln!(
            o,
            "target {}: {} · {dev}",
            crate::rawpath::display(&t.path),
            t.fs_type
        );
    }
    for g in &r.groups {
        let Some(first) = g.jobs.first() else {
            continue;
        };
        // Open flags, where the jobs have files.
        let flags = first
            .files
            .first()
            .map_or(String::new(), |f| format!(" · {}", f.open_flags.join("|")));
        let _ = writeln!(
            o,
            "{}{} job(s): {}{} · iodepth {}",
            if r.groups.len() > 1 {
                format!("group {}: ", g.id + 1)
            } else {
                String::new()
            },
            g.jobs.len(),
            first.engine.calls,
            flags,
            first.engine.iodepth
        );
        for (name, d) in [("read", &g.total.read), ("write", &g.total.write)] {
            if d.ios > 0 {
                dir_line(&mut o, name, d);
            }
        }
        crate::report::text::devices(&mut o, g);
        if let Some(v) = &g.total.verify {
            crate::report::text::verify_lines(&mut o, v);
        }
        let c = &g.total.cpu;
        // Per thread, as the legacy tools' own CPU figures are (one number for one quantity:
        // iotest's "CPU per stream" is this).
        let threads = g.jobs.len().max(1) as f64;
        let busy: f64 = g
            .jobs
            .iter()
            .map(|j| j.measurement.cpu.user_s + j.measurement.cpu.system_s)
            .sum();
        let real: f64 = g
            .jobs
            .iter()
            .map(|j| j.measurement.elapsed_ns as f64 / 1e9)
            .sum();
        let per_thread = if real > 0.0 { 100.0 * busy / real } else { 0.0 };
        let _ = writeln!(
            o,
            "  cpu: user {:.3} s, system {:.3} s, {per_thread:.0}% of each thread's real time on \
             average ({threads} thread(s))",
            c.user_s, c.system_s
        );
    }
    for w in &r.warnings {
        let _ = writeln!(o, "warning: {w}");
    }
    for e in &r.errors {
        let _ = writeln!(o, "error: {e}");
    }
    if r.interrupted {
        let _ = writeln!(
            o,
            "interrupted: the figures above cover the time until Ctrl-C"
        );
    }
    o
}

fn dir_line(o: &mut String, name: &str, d: &DirReport) {
    let _ = writeln!(
        o,
        "  {name}: {} in {} I/Os · {:.2} MiB/s ({:.2} MB/s) · {:.0} IOPS",
        human_bytes(d.bytes),
        d.ios,
        d.mib_per_s,
        d.mb_per_s,
        d.iops
    );
    if let Some(l) = &d.lat_ns {
        let unit = LatUnit::for_ns(l.mean);
        let p = |q: f64| {
            l.percentiles
                .get(&percentile_key(q))
                .map_or("-".into(), |&v| unit.fmt(v as f64))
        };
        let _ = writeln!(
            o,
            "  {name} latency ({}): min {} · mean {} · p50 {} · p90 {} · p99 {} · p99.9 {} · \
             max {}",
            unit.label(),
            unit.fmt(l.min as f64),
            unit.fmt(l.mean),
            p(50.0),
            p(90.0),
            p(99.0),
            p(99.9),
            unit.fmt(l.max as f64)
        );
    }
}
