//! Rank 0's merge of every rank's result into one report (sums, bandwidth over the earliest
//! start to the latest end, latency percentiles from the merged histograms, a row per host,
//! what differed between the ranks' plans), and its lines in the text report.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::read_shift_line;
use crate::result::{DirReport, RunReport};

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
    /// Per group, what its device verdicts compare the counters with: the rank leaves the
    /// verdicts to the merge, which judges each host's devices against all of its ranks' jobs
    /// (see `verdicts`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub device_checks: Vec<Option<crate::result::DeviceCheck>>,
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
    /// The ranks' jobs are one row per host and job (`NAME@HOST`, `--rank-jobs=host`, the
    /// default above 256 ranks), not a row per rank's job (`NAME@HOST#RANK`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub jobs_per_host: bool,
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
    /// With a tree of host leaders: what rank 0 received is their merges.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_leaders: Option<LeadersCost>,
}

/// The host leaders' share of a merge: how many hosts' merges rank 0 took in, and the
/// longest any leader took to take its host's results (they do so at once, each on its host).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LeadersCost {
    pub merges: usize,
    pub longest_receive_ms: f64,
}

pub(super) fn p99_us(d: &DirReport) -> Option<f64> {
    d.lat_p99_ns().map(|ns| ns as f64 / 1000.0)
}

/// Bandwidth and IOPS of a merged direction over `span_ns` (earliest start to latest end).
pub(super) fn over_span(d: &mut DirReport, span_ns: u64) {
    if span_ns == 0 {
        return;
    }
    let secs = span_ns as f64 / 1e9;
    d.bw_bytes_per_s = d.bytes as f64 / secs;
    d.mib_per_s = d.bw_bytes_per_s / 1048576.0;
    d.mb_per_s = d.bw_bytes_per_s / 1e6;
    d.iops = d.ios as f64 / secs;
}

/// Rank 0's merge of every rank's result at once (see [`super::Merger`], which takes them
/// one at a time as they arrive): the report (the lowest rank's provenance, each group's
/// total over all ranks with its bandwidth over the earliest start to the latest end and its
/// latencies pooled from the histograms, every rank's jobs named `NAME@HOST#RANK` or, with
/// `per_host`, one row per host and job), and the exit code (the worst rank's).
pub fn aggregate(mut parts: Vec<RankResult>, per_host: bool) -> (crate::studies::Report, u8) {
    parts.sort_unstable_by_key(|p| p.rank);
    let mut m = super::Merger::new(per_host);
    for p in parts {
        m.add(p);
    }
    m.finish().expect("at least one rank's result")
}

/// The ranks' verify phases of one group as one, as a group's jobs' are merged: sums, the
/// longest time (the ranks check side by side), the first bad blocks (the rates are made
/// from the sums once all are in).
pub(super) fn add_verify(
    out: &mut Option<crate::result::VerifyReport>,
    v: &crate::result::VerifyReport,
) {
    let Some(o) = out.as_mut() else {
        *out = Some(v.clone());
        return;
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

/// A rank's jobs' options as compared between the ranks (an MPMD launch, `mpirun -n 1 A :
/// -n 3 B`, runs ranks with other options than rank 0; the merge names them in a warning
/// with the first difference, so the merged total, which adds their different workloads as
/// the fio-format row and the host rows do, is read for what it is): the options that name
/// a rank's own files left out, and the `.rRANK` a job writing by `directory` is named with.
pub(super) fn job_options(p: &RankResult) -> Vec<BTreeMap<String, String>> {
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
}

/// The first difference between two ranks' jobs' options ([`job_options`]).
pub(super) fn first_difference(
    (first, base): (usize, &[BTreeMap<String, String>]),
    (rank, mine): (usize, &[BTreeMap<String, String>]),
) -> String {
    let Some((a, b)) = base.iter().zip(mine).find(|(a, b)| a != b) else {
        return format!(
            "rank {rank} ran {} job(s), rank {first} {}",
            mine.len(),
            base.len()
        );
    };
    let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    let show = |m: &BTreeMap<String, String>, k: &str| {
        m.get(k).map_or("unset".to_string(), |v| format!("{k}={v}"))
    };
    match keys.into_iter().find(|k| a.get(*k) != b.get(*k)) {
        Some(k) => format!(
            "rank {rank} ran {} where rank {first} ran {}",
            show(b, k),
            show(a, k)
        ),
        None => format!("rank {rank} ran other jobs"),
    }
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
pub(super) fn ranks_text(ranks: &[usize]) -> String {
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
