//! The human report: provenance first, then per job and per group the throughput, IOPS,
//! latency (one unit per job block) and CPU cost, then warnings. Also the one-table summary
//! used by the quick check.

use std::fmt::Write;

use super::LatUnit;
use crate::result::{DirReport, GroupReport, LatReport, Measurement, RunReport, percentile_key};
use crate::studies::Report;
use crate::units::human_bytes;

pub fn render(r: &Report) -> String {
    let mut o = String::new();
    header(&mut o, r);
    for g in &r.groups {
        group(&mut o, g, r.groups.len() > 1);
    }
    if let Some(rep) = &r.repeat {
        super::studies_text::repeat_lines(&mut o, rep);
    }
    if let Some(rounds) = &r.rounds {
        super::studies_text::rounds_lines(&mut o, rounds);
    }
    if let Some(a) = &r.assessment {
        o.push_str(&crate::studies::assess::lines(a));
    }
    if let Some(s) = &r.scaleout {
        o.push_str(&crate::studies::scaleout::text(s));
    }
    footer(&mut o, r);
    o
}

/// Provenance lines: tool, host, targets.
pub fn header(o: &mut String, r: &RunReport) {
    let h = &r.host;
    if r.imported() {
        let _ = writeln!(
            o,
            "{} {} · read from its JSON: host, targets and command line not recorded",
            r.tool.name, r.tool.version
        );
        return;
    }
    let _ = writeln!(
        o,
        "{} {} · {} · {} · {} CPUs ({}) · {} RAM",
        r.tool.name,
        r.tool.version,
        h.hostname,
        h.kernel.split(' ').take(2).collect::<Vec<_>>().join(" "),
        h.cpus,
        if h.cpu_model.is_empty() {
            "unknown model"
        } else {
            &h.cpu_model
        },
        human_bytes(h.memory_bytes)
    );
    // Files alike (one directory, one description) beyond a few are one line: a run of 1024
    // jobs names its directory once, not 1024 times.
    let mut alike: Vec<(String, String, Vec<String>)> = Vec::new();
    for t in &r.targets {
        let (dir, name) = match (t.path.parent(), t.path.file_name()) {
            (Some(d), Some(n)) if t.kind != "block device" => (
                crate::rawpath::display(d).into_owned(),
                crate::rawpath::display(std::path::Path::new(n)).into_owned(),
            ),
            _ => (String::new(), crate::rawpath::display(&t.path).into_owned()),
        };
        let desc = target_description(t);
        match alike.iter_mut().find(|(d, e, _)| *d == dir && *e == desc) {
            Some((_, _, names)) => names.push(name),
            None => alike.push((dir, desc, vec![name])),
        }
    }
    for (dir, desc, mut names) in alike {
        if names.len() > FOLD_TARGETS {
            names.sort_by(|a, b| crate::rawpath::natural_cmp(a, b));
            let sep = std::path::MAIN_SEPARATOR;
            let slash = if dir.ends_with(sep) {
                String::new()
            } else {
                sep.to_string()
            };
            let _ = writeln!(
                o,
                "targets {dir}{slash} ({} files, {} … {}): {desc}",
                names.len(),
                names[0],
                names[names.len() - 1]
            );
            continue;
        }
        for n in names {
            let path = match dir.as_str() {
                "" => n,
                d if d.ends_with(std::path::MAIN_SEPARATOR) => format!("{d}{n}"),
                d => format!("{d}{}{n}", std::path::MAIN_SEPARATOR),
            };
            let _ = writeln!(o, "target {path}: {desc}");
        }
    }
    if r.interrupted {
        o.push_str("INTERRUPTED: the run was stopped early; these results are partial.\n");
    }
}

/// More targets than this alike (one directory, one description) are one line.
const FOLD_TARGETS: usize = 4;

/// What a target is, after its path, in short: its file system and the device below (or the
/// raw device) with what most changes a result (rotational or not, its write cache). The
/// mount point and options are in the JSON and HTML reports, the queue's settings
/// (scheduler, read-ahead, request sizes) in the JSON.
fn target_description(t: &crate::host::TargetInfo) -> String {
    let dev = match &t.device {
        Some(d) => {
            let mut facts = Vec::new();
            if !d.model.is_empty() {
                facts.push(d.model.clone());
            }
            if let Some(r) = d.rotational {
                facts.push(if r { "rotational" } else { "non-rotational" }.to_string());
            }
            if let Some(c) = &d.write_cache {
                facts.push(format!("{c} cache"));
            }
            match facts.is_empty() {
                true => d.path(),
                false => format!("{} ({})", d.path(), facts.join(", ")),
            }
        }
        None => "no block device (nothing below the file system to check)".into(),
    };
    if t.kind == "block device" {
        format!("raw block device {dev}")
    } else {
        format!("{} on {dev}", t.fs_type)
    }
}

pub(super) fn footer(o: &mut String, r: &RunReport) {
    process_line(o, r);
    for w in &r.warnings {
        let _ = writeln!(o, "warning: {w}");
    }
    for e in &r.errors {
        let _ = writeln!(o, "error: {e}");
    }
}

/// The whole process's CPU, when it spent much more than its jobs' threads: the jobs' `cpu`
/// lines count their own threads only, and the kernel's io_uring workers (iou-wrk, which do
/// buffered I/O the ring cannot do inline) or an SQPOLL thread can double the real cost.
fn process_line(o: &mut String, r: &RunReport) {
    let p = &r.process_cpu;
    let jobs: f64 = r
        .groups
        .iter()
        .flat_map(|g| &g.jobs)
        .map(|j| j.measurement.cpu.user_s + j.measurement.cpu.system_s)
        .sum();
    let all = p.user_s + p.system_s;
    let more = all - jobs;
    if jobs <= 0.0 || more < 0.2_f64.max(0.25 * jobs) {
        return;
    }
    let _ = writeln!(
        o,
        "\nprocess cpu {:.2} s ({:.2} s user, {:.2} s system), {more:.2} s more than the jobs' \
         threads ({jobs:.2} s): the kernel's I/O workers for io_uring (iou-wrk, SQPOLL), \
         iogauge's own threads (verify), laying out files and start-up; the jobs' cpu lines \
         leave it out",
        all, p.user_s, p.system_s
    );
}

/// Above this many jobs (without group_reporting) a group's text shows the jobs' spread, not
/// each job: 1024 jobs would be 8,000 lines. JSON and CSV keep every job.
pub const FOLD_JOBS: usize = 16;

fn group(o: &mut String, g: &GroupReport, numbered: bool) {
    o.push('\n');
    if numbered {
        let _ = writeln!(o, "── group {} ──", g.id + 1);
    }
    let folded = !g.group_reporting && g.jobs.len() > FOLD_JOBS;
    // group_reporting: each job's description once (not each clone's), then the group as
    // one.
    let mut names_shown = std::collections::BTreeSet::new();
    let mut files_shown = std::collections::BTreeSet::new();
    for j in &g.jobs {
        if (g.group_reporting || folded) && !names_shown.insert(j.name.as_str()) {
            continue;
        }
        let opt = |k: &str| j.options.get(k).map(String::as_str).unwrap_or("");
        let mut line = format!(
            "{}.{}: rw={} bs={} size={} ioengine={}",
            j.name,
            j.clone,
            opt("rw"),
            sizes_text(opt("bs")),
            human_bytes(opt("size").parse().unwrap_or(0)),
            opt("ioengine")
        );
        for k in ["direct", "sync", "numjobs", "runtime", "time_based"] {
            if let Some(v) = j.options.get(k) {
                line += &format!(" {k}={v}");
            }
        }
        let flags: Vec<String> = j.files.iter().map(|f| f.open_flags.join("|")).collect();
        if let Some(f) = flags.first() {
            line += &format!("  [{f}]");
        }
        let _ = writeln!(o, "{line}");
        engine_line(o, &j.engine);
        if !j.data.is_empty() {
            let _ = writeln!(o, "  data   {}", j.data);
        }
        // How each file was laid out, once per file of the group.
        for f in &j.files {
            if let Some(l) = &f.layout {
                if files_shown.insert(f.path.clone()) {
                    let _ = writeln!(o, "  file {}: {l}", crate::rawpath::display(&f.path));
                }
            }
        }
        if !g.group_reporting && !folded {
            measurement(o, &j.measurement, j.engine.iodepth);
        }
    }
    for j in &g.jobs {
        if let Some(e) = &j.error {
            let _ = writeln!(
                o,
                "  ERROR  {}",
                crate::result::job_error_line(&j.name, j.clone, e)
            );
        }
    }
    let deepest = g.jobs.iter().map(|j| j.engine.iodepth).max().unwrap_or(1);
    if g.group_reporting {
        let _ = match g.jobs.len() {
            // fio's JSON has one entry for the group, however many jobs it ran.
            1 => writeln!(o, "the group as one (group_reporting):"),
            n => writeln!(
                o,
                "all {n} jobs together (group_reporting: totals summed, latencies merged):"
            ),
        };
        measurement(o, &g.total, deepest);
    } else if g.jobs.len() > 1 {
        // Jobs that do no I/O (cpuio, exec) are not in the total beside I/O jobs.
        let no_io = |j: &&crate::result::JobReport| {
            crate::engine::Kind::NO_IO
                .iter()
                .any(|k| k.as_str() == j.engine.name)
        };
        let io = g.jobs.iter().filter(|j| !no_io(j)).count();
        let _ = match g.jobs.len() - io {
            0 => writeln!(o, "all {} jobs together:", g.jobs.len()),
            _ if io == 0 => writeln!(o, "all {} jobs together (none does I/O):", g.jobs.len()),
            n => {
                let what = if n == 1 { "job does" } else { "jobs do" };
                match io {
                    1 => writeln!(o, "the group's I/O job ({n} cpuio/exec {what} no I/O):"),
                    _ => writeln!(
                        o,
                        "all {io} I/O jobs together ({n} cpuio/exec {what} no I/O):"
                    ),
                }
            }
        };
        measurement(o, &g.total, deepest);
    }
    if folded {
        job_spread(o, g);
    }
    devices(o, g);
}

/// A folded group's jobs: the spread of their IOPS and bandwidth, and the slowest ones.
fn job_spread(o: &mut String, g: &GroupReport) {
    let mut rows: Vec<(f64, f64, String)> = g
        .jobs
        .iter()
        .map(|j| {
            let m = &j.measurement;
            (
                m.dirs().iter().map(|d| d.iops).sum(),
                m.dirs().iter().map(|d| d.mib_per_s).sum(),
                format!("{}.{}", j.name, j.clone),
            )
        })
        .collect();
    rows.sort_by(|a, b| a.0.total_cmp(&b.0));
    let n = rows.len();
    let median = &rows[n / 2];
    let _ = writeln!(
        o,
        "  {n} jobs, each: IOPS min {:.0} ({}), median {:.0}, max {:.0} ({}); MiB/s min {:.2}, \
         median {:.2}, max {:.2}",
        rows[0].0,
        rows[0].2,
        median.0,
        rows[n - 1].0,
        rows[n - 1].2,
        rows[0].1,
        median.1,
        rows[n - 1].1
    );
    let slowest: Vec<String> = rows
        .iter()
        .take(3)
        .map(|r| format!("{} {:.0} IOPS", r.2, r.0))
        .collect();
    let _ = writeln!(
        o,
        "  slowest: {}; every job's own figures are in the JSON and CSV reports",
        slowest.join(", ")
    );
}

/// What the kernel counted on the devices below the group's files.
pub fn devices(o: &mut String, g: &GroupReport) {
    for d in &g.devices {
        let _ = writeln!(
            o,
            "  device {}: read {} ({} merged), wrote {} ({} merged), util {:.1}%, in queue {} \
             ms{}",
            d.label(),
            d.io_text(d.read_bytes, d.read_ios),
            d.read_merges,
            d.io_text(d.write_bytes, d.write_ios),
            d.write_merges,
            d.util_pct,
            d.in_queue_ms,
            if d.bytes_unknown {
                " (bytes not recorded by the report's source)"
            } else {
                ""
            }
        );
        if d.unmeasured_ms > 0 {
            let _ = writeln!(
                o,
                "         (counted over the whole group, {:.1} s, including {:.1} s of ramp \
                 and start delay that the figures above do not measure)",
                d.wall_ms as f64 / 1000.0,
                d.unmeasured_ms as f64 / 1000.0
            );
        }
        if let Some(v) = g.total.verify.as_ref().filter(|v| v.bytes > 0) {
            let _ = writeln!(
                o,
                "         (these counts include the verify phase, which read back {})",
                human_bytes(v.bytes)
            );
        }
    }
    if g.devices.is_empty() && !g.without_device.is_empty() {
        let why = crate::platform::NO_DEVICE_SHORT;
        let _ = writeln!(o, "  device: {why}, nothing to check");
    }
}

fn engine_line(o: &mut String, e: &crate::result::EngineReport) {
    let mut line = format!(
        "  engine {}: {}, {} per I/O, iodepth {}",
        e.name,
        e.calls,
        human_bytes(e.bytes_per_io),
        e.iodepth
    );
    if !e.per_call_flags.is_empty() {
        line += &format!(", flags {}", e.per_call_flags.join("|"));
    }
    for f in &e.features {
        line += &format!(", {f}");
    }
    let _ = writeln!(o, "{line}");
}

/// `depth`: the most I/Os the job (or any job of the group) keeps in flight, which caps the
/// range its highest depth level can stand for.
fn measurement(o: &mut String, m: &Measurement, depth: u32) {
    let typical = m
        .dirs()
        .iter()
        .filter_map(|d| d.lat_ns.as_ref().map(|l| l.mean))
        .fold(0.0f64, f64::max);
    let unit = LatUnit::for_ns(typical);
    let elapsed = m.elapsed_ns as f64 / 1e9;
    for (name, d) in [("read", &m.read), ("write", &m.write), ("trim", &m.trim)] {
        if d.ios > 0 {
            direction(o, name, d, elapsed, unit);
        }
    }
    if let Some(s) = &m.sync {
        // fio's heading: one block for fsync, fdatasync, sync_file_range and syncfs.
        o.push_str("  fsync/fdatasync/sync_file_range:\n");
        lat_lines(o, "sync", s, LatUnit::for_ns(s.mean));
    }
    // Levels in numeric order (the JSON map's keys sort as text).
    let mut levels: Vec<(&String, &f64)> = m.iodepth.pct_time.iter().collect();
    levels.sort_by_key(|(k, _)| {
        k.trim_start_matches(">=")
            .parse::<u32>()
            .unwrap_or(u32::MAX)
    });
    // Each level counts up to the next one: "16" is 16 to 31 in flight.
    let lows: Vec<Option<u32>> = levels.iter().map(|(k, _)| k.parse().ok()).collect();
    let cells: Vec<String> = levels
        .iter()
        .enumerate()
        .filter(|(_, (_, p))| **p >= 0.05)
        .map(|(i, (k, p))| {
            let label = match (lows[i], lows.get(i + 1).copied().flatten()) {
                (Some(lo), Some(next)) if next.min(depth + 1) > lo + 1 => {
                    format!("{lo}-{}", (next - 1).min(depth))
                }
                (Some(lo), Some(_)) => lo.to_string(),
                // The last level: "8" when it is the queue's depth cap, ">=64" from JSON.
                _ => k.to_string(),
            };
            format!("{label}: {p:.1}%")
        })
        .collect();
    if !cells.is_empty() {
        let mean = match m.iodepth.mean_unknown {
            // fio's JSON has the levels only.
            true => "share of I/Os at".to_string(),
            false => format!("mean {:.1} in flight; share of time at", m.iodepth.mean),
        };
        let _ = writeln!(o, "  depth  {mean}  {}", cells.join("  "));
    }
    latency_target_line(o, m);
    let c = &m.cpu;
    // What the system does not count for a thread is said so, not printed as 0.
    use crate::platform::cpu::{COUNTS_CONTEXT_SWITCHES as CTX, COUNTS_THREAD_FAULTS as FAULTS};
    let counted = |yes: bool, v: String| if yes { v } else { "not counted here".into() };
    let ctx = counted(CTX, c.ctx_switches.to_string());
    let faults = counted(
        FAULTS,
        format!("{} major / {} minor", c.major_faults, c.minor_faults),
    );
    let _ = writeln!(
        o,
        "  cpu    usr {:.1}%  sys {:.1}% of one CPU  ({:.2} s user, {:.2} s system)  ctx switches \
         {ctx}  page faults {faults}",
        c.usr_pct, c.sys_pct, c.user_s, c.system_s
    );
    errors_line(o, m);
    if let Some(v) = &m.verify {
        verify_lines(o, v);
    }
    if let Some(s) = &m.steadystate {
        steady_line(o, s);
    }
    if let Some(r) = &m.replay {
        let _ = writeln!(
            o,
            "  replay {} I/Os against the log's schedule: late p50 {:.0} us, p99 {:.0} us, max \
             {:.0} us; {} more than 1 ms late; the log's {:.3} s replayed in {:.3} s",
            r.ios,
            r.late_p50_us,
            r.late_p99_us,
            r.late_max_us,
            r.behind_ios,
            r.scheduled_s,
            r.replayed_s
        );
    }
}

/// fio's steady state: the criterion, whether it held (and so ended the job), and the
/// window's means.
pub fn steady_line(o: &mut String, s: &crate::stats::steady::SteadyReport) {
    let _ = writeln!(
        o,
        "  steady {} over {} s: {} (criterion {}); window means {} IOPS, {:.2} MiB/s ({} \
         samples)",
        s.ss,
        s.duration,
        if s.attained == 1 {
            "attained, so the job stopped there"
        } else {
            "not attained before the job ended"
        },
        s.criterion,
        s.data.iops_mean,
        s.data.bw_mean as f64 / 1048576.0,
        s.data.iops.len()
    );
}

/// The verify phase: what was read back, how fast, and each bad block kept.
pub fn verify_lines(o: &mut String, v: &crate::result::VerifyReport) {
    let verdict = match v.bad_blocks {
        0 if v.cut_short => {
            "STOPPED before every block was checked; none bad of those checked".to_string()
        }
        0 if v.blocks > 0 => "every block as written".to_string(),
        0 => "NOTHING CHECKED".to_string(),
        n => format!("{n} BAD"),
    };
    if v.inline {
        let _ = writeln!(
            o,
            "  verify {}: {} blocks ({}) checked as the job read them: {verdict}",
            v.checksum,
            v.blocks,
            human_bytes(v.bytes)
        );
    } else {
        let _ = writeln!(
            o,
            "  verify {}: {} blocks ({}) read back in {:.2} s{}{}, {:.2} MiB/s ({:.2} MB/s): {verdict}",
            v.checksum,
            v.blocks,
            human_bytes(v.bytes),
            v.elapsed_ns as f64 / 1e9,
            if v.threads > 1 {
                format!(" by {} threads", v.threads)
            } else {
                String::new()
            },
            if v.dropped_cache {
                " (cache dropped first)"
            } else {
                ""
            },
            v.mib_per_s,
            v.mb_per_s
        );
    }
    for b in &v.first_bad {
        let _ = writeln!(
            o,
            "         {} at offset {} ({}): {}",
            crate::rawpath::display(&b.file),
            b.offset,
            human_bytes(b.len),
            crate::report::bad_block_details(b)
        );
    }
    if v.bad_blocks > v.first_bad.len() as u64 {
        let _ = writeln!(
            o,
            "         … and {} more",
            v.bad_blocks - v.first_bad.len() as u64
        );
    }
}

fn direction(o: &mut String, name: &str, d: &DirReport, elapsed: f64, unit: LatUnit) {
    let _ = writeln!(
        o,
        "  {name:<6} {:.0} IOPS  {:.2} MiB/s ({:.2} MB/s)  {} in {elapsed:.2} s ({} I/Os)",
        d.iops,
        d.mib_per_s,
        d.mb_per_s,
        human_bytes(d.bytes),
        d.ios
    );
    if d.dropped > 0 {
        let _ = writeln!(
            o,
            "         {} more sent and never received (datagrams lost on the way: {:.2}% of {})",
            d.dropped,
            100.0 * d.dropped as f64 / (d.dropped + d.ios) as f64,
            d.dropped + d.ios
        );
    }
    if let Some(l) = &d.lat_ns {
        lat_lines(o, "", l, unit);
    }
    for (label, l) in [("submission", &d.slat_ns), ("completion", &d.clat_ns)] {
        if let Some(l) = l {
            lat_summary(o, label, l, unit);
        }
    }
    // Per-command priorities: each priority's share of the I/Os and its latency.
    let prios = d.split_by_prio();
    let all: u64 = prios.iter().map(|p| p.latency.count).sum();
    for p in prios {
        let what = if p.of == "lat" { "total" } else { "completion" };
        let share = 100.0 * p.latency.count as f64 / all.max(1) as f64;
        let label = format!("prio {}/{} {what}, {share:.1}% of I/Os", p.class, p.level);
        lat_summary(o, &label, &p.latency, unit);
    }
}

/// One line for slat/clat: the full percentile table is for total latency.
fn lat_summary(o: &mut String, name: &str, l: &LatReport, unit: LatUnit) {
    let f = |v: f64| unit.fmt(v);
    let p = |k: &str| l.percentiles.get(k).map_or("-".into(), |v| f(*v as f64));
    let _ = writeln!(
        o,
        "         {name} ({}): min {}  mean {}  p50 {}  p99 {}  max {}",
        unit.label(),
        f(l.min as f64),
        f(l.mean),
        p("50.000000"),
        p("99.000000"),
        f(l.max as f64)
    );
}

fn lat_lines(o: &mut String, name: &str, l: &LatReport, unit: LatUnit) {
    let u = unit.label();
    let f = |v: f64| unit.fmt(v);
    let prefix = if name.is_empty() {
        "latency".to_string()
    } else {
        format!("{name} latency")
    };
    let _ = writeln!(
        o,
        "         {prefix} ({u}): min {}  mean {}  stddev {}  max {}  ({} call{})",
        f(l.min as f64),
        f(l.mean),
        f(l.stddev),
        f(l.max as f64),
        l.count,
        if l.count == 1 { "" } else { "s" }
    );
    // A percentile says something only with a sample beyond it: p99 needs 100 samples,
    // p99.9 a thousand. Below that it repeats the maximum (a single fsync would show 17
    // copies of one number); the JSON keeps them all, as fio's does.
    let cells: Vec<String> = crate::result::PERCENTILES
        .iter()
        .filter(|&&p| l.count as f64 * (100.0 - p) >= 100.0)
        .filter_map(|&p| {
            let v = l.percentiles.get(&percentile_key(p))?;
            Some(format!("p{p}={}", f(*v as f64)))
        })
        .collect();
    for (i, row) in cells.chunks(9).enumerate() {
        let head = if i == 0 {
            format!("percentiles ({u}):")
        } else {
            String::new()
        };
        let _ = writeln!(o, "         {head:<18}{}", row.join("  "));
    }
}

/// A job's `bs` as resolved (`4096`, `4096,8192` for reads and writes, `4096/50:8192/50` for a
/// split) with every size in its unit: `4.00 KiB`, `4.00 KiB,8.00 KiB`, `4.00 KiB/50:8.00 KiB/50`;
/// one value when reads and writes share it.
fn sizes_text(bs: &str) -> String {
    let one = |part: &str| -> String {
        part.split(':')
            .map(|e| match e.split_once('/') {
                Some((b, pct)) => format!("{}/{pct}", size_word(b)),
                None => size_word(e),
            })
            .collect::<Vec<_>>()
            .join(":")
    };
    let parts: Vec<&str> = bs.split(',').collect();
    match parts.as_slice() {
        [r, w] if r == w => one(r),
        _ => parts.iter().map(|p| one(p)).collect::<Vec<_>>().join(","),
    }
}

fn size_word(b: &str) -> String {
    match b.split_once('-') {
        Some((lo, hi)) => format!("{}-{}", size_word(lo), size_word(hi)),
        None => b.parse().map(human_bytes).unwrap_or_else(|_| b.to_string()),
    }
}
/// fio's latency target: the depth found, and what the figures are.
fn latency_target_line(o: &mut String, m: &Measurement) {
    if let Some(l) = &m.latency_target {
        let window = match l.window_us {
            0 => "of the I/Os".to_string(),
            us if us % 1_000_000 == 0 => format!("of each {} s window", us / 1_000_000),
            us if us % 1000 == 0 => format!("of each {} ms window", us / 1000),
            us => format!("of each {us} µs window"),
        };
        let figures = match l.settled {
            Some(true) => "; the figures are the last window's, at that depth",
            Some(false) => "; still searching when the job ended: the figures span the search",
            None => "",
        };
        let _ = writeln!(
            o,
            "  latency target {} µs for {}% {window}: queue depth {}{figures}",
            l.target_ns / 1000,
            l.percentile,
            l.depth
        );
    }
}

/// The failed I/Os continue_on_error went past, and where fill_device found the file system
/// full.
fn errors_line(o: &mut String, m: &Measurement) {
    if let Some(f) = &m.filled {
        let _ = writeln!(o, "  filled  {f}: the job ended there (fill_device)");
    }
    if let Some(c) = &m.errors_continued {
        let _ = writeln!(
            o,
            "  errors {} failed I/O(s) counted and gone past (continue_on_error); the first: {}",
            c.total, c.first
        );
    }
}
