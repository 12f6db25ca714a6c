//! Rank 0's merge of every rank's result into one report (sums, bandwidth over the earliest
//! start to the latest end, latency percentiles from the merged histograms, a row per host,
//! what differed between the ranks' plans), and its lines in the text report.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::read_shift_line;
use crate::result::{DirReport, Measurement, RunReport};

/// What one rank sends rank 0.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RankResult {
    pub rank: usize,
    pub host: String,
    pub exit_code: u8,
    /// Per group, when the rank left the barrier before it (ns since the Unix epoch, by its
    /// own clock).
    pub group_start_unix_ns: Vec<u64>,
    /// Its clock minus rank 0's, as rank 0 measured it (filled in by rank 0).
    #[serde(default)]
    pub clock_offset_ns: i64,
    /// `--rank-stonewall` was on.
    #[serde(default)]
    pub stonewall: bool,
    /// Per group: the rank whose finish stopped this one's jobs (stonewalling), if one did.
    #[serde(default)]
    pub stonewalled_by: Vec<Option<usize>>,
    /// `--rank-read-shift`: its read-only jobs read the files of the rank this many further on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_shift: Option<usize>,
    pub report: RunReport,
    /// Its steady-state rounds (`--until-steady`), which rank 0's merged report keeps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<crate::studies::rounds::RoundsReport>,
}

/// A host's ranks together.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostRow {
    pub host: String,
    pub ranks: Vec<usize>,
    /// The most CPUs a rank there could use (a launcher binding each rank to a core makes
    /// this 1; `mpirun --bind-to none` shows the host's).
    #[serde(default)]
    pub cpus: usize,
    /// Per group: MB/s and IOPS (reads and writes), and the worse direction's p99 (µs).
    pub groups: Vec<HostGroup>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostGroup {
    /// The host's bytes and I/Os over the host's own span (its first rank's start to its last
    /// rank's end, on rank 0's clock), as a group's total is over the group's span.
    pub mb_per_s: f64,
    pub mib_per_s: f64,
    pub iops: f64,
    pub p99_us: Option<f64>,
    /// That span, in ms.
    #[serde(default)]
    pub span_ms: f64,
}

/// When one rank ran a group, in ms from the group's earliest start (on rank 0's clock).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankSpan {
    pub rank: usize,
    pub host: String,
    pub start_ms: f64,
    pub end_ms: f64,
}

/// Timing of one group across the ranks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupSpan {
    /// Between the first and the last rank leaving the start barrier.
    pub start_skew_ms: f64,
    /// From the earliest start: the first rank done, the last (the straggler's) done.
    pub first_done_ms: f64,
    pub last_done_ms: f64,
    /// The last rank to finish.
    pub straggler: String,
    /// Stonewalling: the rank whose finish stopped every other rank's jobs in this group
    /// (`HOST#RANK`); the group's figures are what all ranks moved until then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stonewalled_at: Option<String>,
    /// Each rank's start and end, so that any span (a host's, the group's) can be computed
    /// again from the report.
    #[serde(default)]
    pub ranks: Vec<RankSpan>,
}

/// The `scaleout` block of a merged report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScaleOut {
    pub ranks: usize,
    /// `--rank-stonewall`: every rank stopped a group when the first finished it.
    #[serde(default)]
    pub stonewall: bool,
    /// `--rank-read-shift`: each rank's read-only jobs read the files of the rank this many
    /// further on (IOR's `-C`), not its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_shift: Option<usize>,
    /// The largest clock offset from rank 0 among the ranks (measured by round trips at the
    /// start; the group timings are on rank 0's clock).
    #[serde(default)]
    pub max_clock_offset_ms: f64,
    pub hosts: Vec<HostRow>,
    pub groups: Vec<GroupSpan>,
    /// What the merge cost rank 0, for the model of its growth with the ranks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merge: Option<MergeCost>,
}

/// Rank 0's cost of the last merge: the results it received (bytes, time to take and parse
/// them once the ranks had ended), the merge itself, and its peak memory after it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MergeCost {
    pub received_bytes: u64,
    pub receive_ms: f64,
    pub merge_ms: f64,
    /// The process's peak resident memory (`VmHWM`), KiB, after the merge.
    pub peak_rss_kib: Option<u64>,
}

fn p99_us(d: &DirReport) -> Option<f64> {
    d.lat_p99_ns().map(|ns| ns as f64 / 1000.0)
}

/// Bandwidth and IOPS of a merged direction over `span_ns` (earliest start to latest end).
fn over_span(d: &mut DirReport, span_ns: u64) {
    if span_ns == 0 {
        return;
    }
    let secs = span_ns as f64 / 1e9;
    d.bw_bytes_per_s = d.bytes as f64 / secs;
    d.mib_per_s = d.bw_bytes_per_s / 1048576.0;
    d.mb_per_s = d.bw_bytes_per_s / 1e6;
    d.iops = d.ios as f64 / secs;
}

/// Rank 0's merge of every rank's result: the report (rank 0's provenance, every rank's jobs
/// named `NAME@HOST#RANK`, each group's total over all ranks with its bandwidth over the
/// earliest start to the latest end and its latencies pooled from the histograms), and the
/// exit code (the worst rank's).
pub fn aggregate(mut parts: Vec<RankResult>) -> (crate::studies::Report, u8) {
    parts.sort_by_key(|p| p.rank);
    let code = parts.iter().map(|p| p.exit_code).max().unwrap_or(0);
    let mut out = crate::studies::Report::from(parts[0].report.clone());
    out.rounds = parts[0].rounds.clone();
    let ngroups = parts
        .iter()
        .map(|p| p.report.groups.len())
        .max()
        .unwrap_or(0);
    let mut spans = Vec::new();
    let mut hosts = host_rows(&parts);
    for gi in 0..ngroups.min(out.groups.len()) {
        let here: Vec<Ran> = parts
            .iter()
            .filter_map(|p| p.report.groups.get(gi).map(|g| (p, g)))
            .collect();
        let (starts, ends) = group_times(gi, &here);
        spans.push(merge_group(
            gi,
            &here,
            (&starts, &ends),
            &mut out.groups[gi],
        ));
        for row in hosts.values_mut() {
            let g = host_group(&row.host, &here, (&starts, &ends));
            row.groups.push(g);
        }
    }
    out.targets = parts
        .iter()
        .flat_map(|p| p.report.targets.clone())
        .collect();
    out.interrupted = parts.iter().any(|p| p.report.interrupted);
    out.warnings = tagged(&parts, |r| &r.warnings);
    out.warnings.extend(plan_differences(&parts));
    out.errors = tagged(&parts, |r| &r.errors);
    out.scaleout = Some(ScaleOut {
        ranks: parts.len(),
        stonewall: parts.iter().any(|p| p.stonewall),
        read_shift: parts[0].read_shift,
        max_clock_offset_ms: parts
            .iter()
            .map(|p| p.clock_offset_ns.unsigned_abs() as f64 / 1e6)
            .fold(0.0, f64::max),
        hosts: hosts.into_values().collect(),
        groups: spans,
        merge: None,
    });
    (out, code)
}

/// A rank that ran a group, and its report of it.
type Ran<'a> = (&'a RankResult, &'a crate::result::GroupReport);

/// A row per host, with its ranks and CPUs (its groups added as they are merged).
fn host_rows(parts: &[RankResult]) -> BTreeMap<String, HostRow> {
    let mut hosts: BTreeMap<String, HostRow> = BTreeMap::new();
    for p in parts {
        let row = hosts.entry(p.host.clone()).or_insert_with(|| HostRow {
            host: p.host.clone(),
            ranks: Vec::new(),
            cpus: 0,
            groups: Vec::new(),
        });
        row.ranks.push(p.rank);
        row.cpus = row.cpus.max(p.report.host.cpus);
    }
    hosts
}

/// When each rank started and ended group `gi`, on rank 0's clock.
fn group_times<'a>(gi: usize, here: &[Ran<'a>]) -> (Vec<u64>, Vec<(u64, &'a RankResult)>) {
    let starts: Vec<u64> = here
        .iter()
        .map(|(p, _)| {
            let own = p.group_start_unix_ns.get(gi).copied().unwrap_or(0);
            own.saturating_add_signed(-p.clock_offset_ns)
        })
        .collect();
    let ends = here
        .iter()
        .zip(&starts)
        .map(|((p, g), s)| (s + g.total.elapsed_ns, *p))
        .collect();
    (starts, ends)
}

/// Group `gi` merged into `g` (rank 0's): the total over every rank, its bandwidth over the
/// earliest start to the latest end; every rank's jobs named `NAME@HOST#RANK`. Returns the
/// group's span: skew, first and last done, the straggler, where stonewalling stopped it.
fn merge_group(
    gi: usize,
    here: &[Ran],
    (starts, ends): (&[u64], &[(u64, &RankResult)]),
    g: &mut crate::result::GroupReport,
) -> GroupSpan {
    let first_start = starts.iter().copied().min().unwrap_or(0);
    let last_start = starts.iter().copied().max().unwrap_or(0);
    let (last_end, straggler) = ends
        .iter()
        .max_by_key(|(e, _)| *e)
        .map(|(e, p)| (*e, format!("{}#{}", p.host, p.rank)))
        .unwrap_or_default();
    let first_end = ends.iter().map(|(e, _)| *e).min().unwrap_or(0);
    let span = last_end.saturating_sub(first_start);
    let totals: Vec<&Measurement> = here.iter().map(|(_, g)| &g.total).collect();
    let mut total = Measurement::sum(&totals);
    total.elapsed_ns = span;
    over_span(&mut total.read, span);
    over_span(&mut total.write, span);
    total.verify = merged_verify(totals.iter().filter_map(|m| m.verify.as_ref()));
    g.total = total;
    g.jobs = here
        .iter()
        .flat_map(|(p, g)| {
            g.jobs.iter().map(move |j| {
                let mut j = j.clone();
                j.name = format!("{}@{}#{}", j.name, p.host, p.rank);
                j
            })
        })
        .collect();
    // The fio part carries the aggregate: one row for the group.
    g.group_reporting = true;
    g.devices = host_devices(here);
    // The first to finish among the ranks that were not stopped for another's finish.
    let stonewalled_at = here
        .iter()
        .any(|(p, _)| p.stonewalled_by.get(gi).is_some_and(Option::is_some))
        .then(|| {
            ends.iter()
                .filter(|(_, p)| p.stonewalled_by.get(gi).is_none_or(Option::is_none))
                .min_by_key(|(e, _)| *e)
                .map(|(_, p)| format!("{}#{}", p.host, p.rank))
        })
        .flatten();
    let ms = |t: u64| t.saturating_sub(first_start) as f64 / 1e6;
    GroupSpan {
        start_skew_ms: (last_start - first_start) as f64 / 1e6,
        first_done_ms: first_end.saturating_sub(first_start) as f64 / 1e6,
        last_done_ms: span as f64 / 1e6,
        straggler,
        stonewalled_at,
        ranks: here
            .iter()
            .zip(starts)
            .zip(ends)
            .map(|(((p, _), &s), &(e, _))| RankSpan {
                rank: p.rank,
                host: p.host.clone(),
                start_ms: ms(s),
                end_ms: ms(e),
            })
            .collect(),
    }
}

/// The ranks' verify phases of one group as one, as a group's jobs' are merged: sums, the
/// longest time (the ranks check side by side), the first bad blocks; None when no rank
/// verified.
fn merged_verify<'a>(
    parts: impl Iterator<Item = &'a crate::result::VerifyReport>,
) -> Option<crate::result::VerifyReport> {
    let mut out: Option<crate::result::VerifyReport> = None;
    for v in parts {
        let Some(o) = out.as_mut() else {
            out = Some(v.clone());
            continue;
        };
        o.blocks += v.blocks;
        o.bytes += v.bytes;
        o.ios += v.ios;
        o.elapsed_ns = o.elapsed_ns.max(v.elapsed_ns);
        o.dropped_cache |= v.dropped_cache;
        o.inline |= v.inline;
        o.cut_short |= v.cut_short;
        o.threads += v.threads;
        o.bad_blocks += v.bad_blocks;
        let room = crate::stats::BAD_BLOCKS_KEPT.saturating_sub(o.first_bad.len());
        o.first_bad.extend(v.first_bad.iter().take(room).cloned());
    }
    if let Some(o) = out.as_mut().filter(|o| o.elapsed_ns > 0) {
        let secs = o.elapsed_ns as f64 / 1e9;
        o.mib_per_s = o.bytes as f64 / secs / 1048576.0;
        o.mb_per_s = o.bytes as f64 / secs / 1e6;
    }
    out
}

/// Each host's devices once, with the ranks there that ran on them. The ranks on one host
/// count the same device over overlapping windows, so adding their counts would count its
/// I/O several times: each device gets the counts of the rank whose window saw the most
/// (the fullest view of it; the device's own traffic from other ranks and processes is in
/// it as it always is).
fn host_devices(here: &[Ran]) -> Vec<crate::result::DeviceIo> {
    let mut out: Vec<crate::result::DeviceIo> = Vec::new();
    for (p, g) in here {
        for d in &g.devices {
            let moved = |d: &crate::result::DeviceIo| (d.read_bytes + d.write_bytes, d.wall_ms);
            let same = out.iter_mut().find(|o| {
                o.host.as_deref() == Some(p.host.as_str())
                    && o.name == d.name
                    && o.major_minor == d.major_minor
            });
            match same {
                Some(o) => {
                    let mut ranks = std::mem::take(&mut o.ranks);
                    ranks.push(p.rank);
                    if moved(d) > moved(o) {
                        *o = d.clone();
                        o.host = Some(p.host.clone());
                    }
                    o.ranks = ranks;
                }
                None => {
                    let mut d = d.clone();
                    d.host = Some(p.host.clone());
                    d.ranks = vec![p.rank];
                    out.push(d);
                }
            }
        }
    }
    out
}

/// A host's row for one group: the host's bytes over the host's span, computed as the
/// group's total is, never the sum of its ranks' own rates (ranks that did not overlap would
/// add up to more than the host moved in any second).
fn host_group(
    host: &str,
    here: &[Ran],
    (starts, ends): (&[u64], &[(u64, &RankResult)]),
) -> HostGroup {
    let at_host: Vec<usize> = (0..here.len())
        .filter(|&i| here[i].0.host == host)
        .collect();
    let mine: Vec<&Measurement> = at_host.iter().map(|&i| &here[i].1.total).collect();
    let mut m = Measurement::sum(&mine);
    let from = at_host.iter().map(|&i| starts[i]).min().unwrap_or(0);
    let to = at_host.iter().map(|&i| ends[i].0).max().unwrap_or(0);
    let host_span = to.saturating_sub(from);
    over_span(&mut m.read, host_span);
    over_span(&mut m.write, host_span);
    HostGroup {
        mb_per_s: m.read.mb_per_s + m.write.mb_per_s,
        mib_per_s: m.read.mib_per_s + m.write.mib_per_s,
        iops: m.read.iops + m.write.iops,
        p99_us: crate::studies::sweep::worse(p99_us(&m.read), p99_us(&m.write)),
        span_ms: host_span as f64 / 1e6,
    }
}

/// Every rank's warnings (or errors), each said once with the ranks (and hosts) that gave
/// it: the same words from several ranks, once their own file and job names (`.rRANK`) read
/// `.r$rank`, are one line.
fn tagged(parts: &[RankResult], f: fn(&RunReport) -> &Vec<String>) -> Vec<String> {
    let mut said: Vec<(String, Vec<(usize, &str)>)> = Vec::new();
    for p in parts {
        for w in f(&p.report) {
            let w = rank_neutral(w, p.rank);
            match said.iter_mut().find(|(x, _)| *x == w) {
                Some((_, who)) => who.push((p.rank, &p.host)),
                None => said.push((w, vec![(p.rank, &p.host)])),
            }
        }
    }
    said.into_iter()
        .map(|(w, who)| {
            let ranks: Vec<usize> = who.iter().map(|&(r, _)| r).collect();
            let mut hosts: Vec<&str> = Vec::new();
            for &(_, h) in &who {
                if !hosts.contains(&h) {
                    hosts.push(h);
                }
            }
            let which = if ranks.len() == 1 { "rank" } else { "ranks" };
            format!("{which} {} ({}): {w}", ranks_text(&ranks), hosts.join(","))
        })
        .collect()
}

/// `text` with this rank's own suffix, `.rRANK` where no digit follows, written `.r$rank`.
pub(crate) fn rank_neutral(text: &str, rank: usize) -> String {
    let own = format!(".r{rank}");
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(&own) {
        let after = &rest[at + own.len()..];
        out.push_str(&rest[..at]);
        if after.starts_with(|c: char| c.is_ascii_digit()) {
            out.push_str(&own);
        } else {
            out.push_str(".r$rank");
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// Options that name a rank's own files: they differ between ranks by design.
pub(super) const PER_RANK: [&str; 3] = ["filename", "directory", "filename_format"];

/// Ranks that ran other options than rank 0 (an MPMD launch, `mpirun -n 1 A : -n 3 B`): the
/// warning that names them and the first difference, so the merged total (which adds their
/// different workloads, as the fio-format row and the host rows do) is read for what it is.
/// Each rank's jobs keep their own options in the report.
pub fn plan_differences(parts: &[RankResult]) -> Option<String> {
    let options = |p: &RankResult| -> Vec<BTreeMap<String, String>> {
        p.report
            .groups
            .iter()
            .flat_map(|g| &g.jobs)
            .map(|j| {
                let mut o = j.options.clone();
                o.retain(|k, _| !PER_RANK.contains(&k.as_str()));
                // A job writing by `directory` is named NAME.rRANK by design (its files are
                // named after it): that is not a difference.
                if let Some(n) = o.get_mut("name") {
                    if let Some(base) = n.strip_suffix(&format!(".r{}", p.rank)) {
                        *n = base.to_string();
                    }
                }
                o
            })
            .collect()
    };
    let first = parts.first()?;
    let base = options(first);
    let mut odd = Vec::new();
    let mut example = None;
    for p in &parts[1..] {
        let mine = options(p);
        if mine == base {
            continue;
        }
        odd.push(p.rank.to_string());
        if example.is_none() {
            example = Some(match base.iter().zip(&mine).find(|(a, b)| a != b) {
                Some((a, b)) => {
                    let keys: std::collections::BTreeSet<&String> =
                        a.keys().chain(b.keys()).collect();
                    let k = keys.into_iter().find(|k| a.get(*k) != b.get(*k));
                    let show = |m: &BTreeMap<String, String>, k: &str| {
                        m.get(k).map_or("unset".to_string(), |v| format!("{k}={v}"))
                    };
                    match k {
                        Some(k) => format!(
                            "rank {} ran {} where rank {} ran {}",
                            p.rank,
                            show(b, k),
                            first.rank,
                            show(a, k)
                        ),
                        None => format!("rank {} ran other jobs", p.rank),
                    }
                }
                None => format!(
                    "rank {} ran {} job(s), rank {} {}",
                    p.rank,
                    mine.len(),
                    first.rank,
                    base.len()
                ),
            });
        }
    }
    (!odd.is_empty()).then(|| {
        format!(
            "rank(s) {} ran other options than rank {} ({}): each group's total, its \
             fio-format row and the host rows add different workloads together; each rank's \
             jobs carry their own options",
            odd.join(", "),
            first.rank,
            example.unwrap_or_default()
        )
    })
}

/// The text report's scale-out lines.
pub fn text(s: &ScaleOut) -> String {
    let mut o = format!(
        "\nScale-out: {} ranks on {} host(s); timings on rank 0's clock (the ranks' clocks were \
         within {:.3} ms of it)\n",
        s.ranks,
        s.hosts.len(),
        s.max_clock_offset_ms
    );
    if let Some(n) = s.read_shift {
        o.push_str(&read_shift_line(n));
        o.push('\n');
    }
    for (gi, g) in s.groups.iter().enumerate() {
        o.push_str(&format!(
            "  group {}: start skew {:.2} ms; first rank done at {:.1} ms, last at {:.1} ms \
             ({})\n",
            gi + 1,
            g.start_skew_ms,
            g.first_done_ms,
            g.last_done_ms,
            g.straggler
        ));
        match &g.stonewalled_at {
            Some(first) => o.push_str(&format!(
                "    stonewalled: every rank stopped when {first} finished; the figures are what \
                 all ranks moved until then (IOR's stonewalled bandwidth)\n"
            )),
            None if s.stonewall => o.push_str(
                "    stonewalling on, but no rank was stopped: all finished before hearing of \
                 the first\n",
            ),
            None => {}
        }
        // One host: its row is the group's total printed above, not a second figure.
        if let [h] = s.hosts.as_slice() {
            o.push_str(&format!(
                "    {}: ranks {} (the group's total above is this host's)\n",
                h.host,
                ranks_text(&h.ranks)
            ));
            continue;
        }
        for h in &s.hosts {
            if let Some(x) = h.groups.get(gi) {
                o.push_str(&format!(
                    "    {:<24} ranks {:<12} {:>10.2} MB/s ({:.2} MiB/s) {:>10.0} IOPS  p99 {}\n",
                    h.host,
                    ranks_text(&h.ranks),
                    x.mb_per_s,
                    x.mib_per_s,
                    x.iops,
                    x.p99_us.map_or("-".into(), |p| format!("{p:.1} µs"))
                ));
            }
        }
    }
    o
}

/// Ranks as "0,1,2,3".
fn ranks_text(ranks: &[usize]) -> String {
    ranks
        .iter()
        .map(|r| r.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::rank_neutral;

    #[test]
    fn a_ranks_own_suffix_reads_as_the_template() {
        assert_eq!(
            rank_neutral("group 1 (w.r1): /d/w.r1.0.0 and /d/w.r10.0.0", 1),
            "group 1 (w.r$rank): /d/w.r$rank.0.0 and /d/w.r10.0.0"
        );
        assert_eq!(rank_neutral("w.r2", 2), "w.r$rank");
        assert_eq!(rank_neutral("w.r2", 3), "w.r2", "another rank's name stays");
    }
}
