//! Rank 0's merge, one rank's result at a time: each result is folded into running sums as it
//! arrives and then dropped, so rank 0 never holds every rank's whole report at once — only
//! the sums, each rank's window in each group (its start and end, for the spans) and, with a
//! row per rank, its job rows. With a row per host and job (`--rank-jobs=host`, the default
//! above [`HOST_JOBS_ABOVE`] ranks) a host's ranks' jobs of one name are one row, so the
//! report and rank 0's memory grow with the hosts and not with the ranks.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::merge::{
    HostGroup, HostRow, RankResult, RankSpan, ScaleOut, add_verify, first_difference, job_options,
    over_span, p99_us, rank_neutral, ranks_text,
};
use crate::result::{DeviceIo, JobReport, Measurement, VerifyReport};

/// Above this many ranks, `--rank-jobs=auto` reports a row per host and job: a row per rank
/// (28 KiB of report each, measured) would make a report of hundreds of MiB at 10,000 ranks.
pub const HOST_JOBS_ABOVE: usize = 256;

/// How the ranks' job rows are reported (`--rank-jobs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RankJobs {
    /// Every rank's jobs, each named `NAME@HOST#RANK`.
    Each,
    /// One row per host and job, `NAME@HOST`: its ranks' jobs of that name added up.
    Host,
    /// `Each` up to [`HOST_JOBS_ABOVE`] ranks, `Host` above.
    #[default]
    Auto,
}

/// A `--rank-jobs` value it does not take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownRankJobs;

impl std::fmt::Display for UnknownRankJobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "expected each (a row per rank's job), host (a row per host and job) or auto (host \
             above {HOST_JOBS_ABOVE} ranks)"
        )
    }
}

impl std::error::Error for UnknownRankJobs {}

impl std::str::FromStr for RankJobs {
    type Err = UnknownRankJobs;
    fn from_str(v: &str) -> Result<RankJobs, UnknownRankJobs> {
        match v {
            "each" => Ok(RankJobs::Each),
            "host" => Ok(RankJobs::Host),
            "auto" => Ok(RankJobs::Auto),
            _ => Err(UnknownRankJobs),
        }
    }
}

impl std::fmt::Display for RankJobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RankJobs::Each => "each",
            RankJobs::Host => "host",
            RankJobs::Auto => "auto",
        })
    }
}

impl RankJobs {
    /// Whether a launch of `ranks` ranks reports a row per host and job.
    pub fn per_host(self, ranks: usize) -> bool {
        match self {
            RankJobs::Each => false,
            RankJobs::Host => true,
            RankJobs::Auto => ranks > HOST_JOBS_ABOVE,
        }
    }
}

/// Measurements added up one at a time, and the elapsed times they hold (the weight of the
/// whole in the next addition, so that adding one by one gives what adding all at once does).
#[derive(Serialize, Deserialize)]
pub(super) struct Running {
    pub(super) m: Measurement,
    pub(super) weight: f64,
}

fn add_to(sum: &mut Option<Running>, m: &Measurement) {
    add_weighted(sum, m, m.elapsed_ns as f64);
}

/// `m`, standing for `weight` of elapsed time (a host leader's sum of several), added to `sum`.
pub(super) fn add_weighted(sum: &mut Option<Running>, m: &Measurement, weight: f64) {
    *sum = Some(match sum.take() {
        None => Running {
            m: m.clone(),
            weight,
        },
        Some(r) => Running {
            m: Measurement::sum_weighted(&[(&r.m, r.weight), (m, weight)]),
            weight: r.weight + weight,
        },
    });
}

/// One rank's window in one group, on rank 0's clock (ns since the Unix epoch; a host
/// leader's own clock until rank 0 takes its sums), and whether another rank's finish
/// stopped it (stonewalling).
#[derive(Serialize, Deserialize)]
pub(super) struct Window {
    pub(super) rank: usize,
    pub(super) host: String,
    pub(super) start: u64,
    pub(super) end: u64,
    pub(super) stopped: bool,
}

/// A row per host and job: the host's ranks' jobs of one name and clone added up.
#[derive(Serialize, Deserialize)]
pub(super) struct HostJob {
    pub(super) host: String,
    pub(super) name: String,
    pub(super) clone: u32,
    /// The lowest rank's row (its options and files are the row's), the sum in `sum`.
    pub(super) first: (usize, JobReport),
    pub(super) sum: Option<Running>,
    pub(super) ranks: Vec<usize>,
}

/// One group's running sums.
#[derive(Default, Serialize, Deserialize)]
pub(super) struct GroupSums {
    pub(super) total: Option<Running>,
    pub(super) verify: Option<VerifyReport>,
    pub(super) windows: Vec<Window>,
    pub(super) by_host: BTreeMap<String, Option<Running>>,
    pub(super) devices: Vec<DeviceIo>,
    /// Each host's jobs as its devices' verdicts compare them (see `verdicts`).
    pub(super) checks: Vec<super::verdicts::HostCheck>,
    pub(super) rank_jobs: Vec<(usize, JobReport)>,
    pub(super) host_jobs: Vec<HostJob>,
}

/// A rank's jobs' options, as compared between ranks ([`job_options`]).
type JobOptions = Vec<BTreeMap<String, String>>;

/// A line, the ranks (and their hosts) that gave it, and where it comes first: the lowest
/// rank that gave it and its place in that rank's list.
type Line = (String, Vec<(usize, String)>, (usize, usize));

/// Lines several ranks gave, each once with its ranks and hosts, in the order of where each
/// comes first.
#[derive(Default, Serialize, Deserialize)]
pub(super) struct Said(pub(super) Vec<Line>);

impl Said {
    fn add(&mut self, p: &RankResult, lines: &[String]) {
        for (i, w) in lines.iter().enumerate() {
            let w = rank_neutral(w, p.rank);
            match self.0.iter_mut().find(|(x, _, _)| *x == w) {
                Some((_, who, at)) => {
                    who.push((p.rank, p.host.clone()));
                    *at = (*at).min((p.rank, i));
                }
                None => self
                    .0
                    .push((w, vec![(p.rank, p.host.clone())], (p.rank, i))),
            }
        }
    }

    fn lines(mut self) -> Vec<String> {
        self.0.sort_by_key(|(_, _, at)| *at);
        self.0
            .into_iter()
            .map(|(w, mut who, _)| {
                who.sort_unstable();
                let ranks: Vec<usize> = who.iter().map(|(r, _)| *r).collect();
                let mut hosts: Vec<&str> = Vec::new();
                for (_, h) in &who {
                    if !hosts.contains(&h.as_str()) {
                        hosts.push(h);
                    }
                }
                let which = if ranks.len() == 1 { "rank" } else { "ranks" };
                format!("{which} {} ({}): {w}", ranks_text(&ranks), hosts.join(","))
            })
            .collect()
    }
}

/// Rank 0's merge in progress. [`Merger::add`] takes rank 0's result first (the merged
/// report's provenance: its command line, host and options), then the others' in any order.
/// A host's leader folds its host's results into one of its own and sends it (serialized,
/// without its first rank's whole report) to rank 0, which takes it in with
/// [`Merger::absorb`]: the same sums as if rank 0 had added each result itself.
#[derive(Serialize, Deserialize)]
pub struct Merger {
    pub(super) per_host: bool,
    #[serde(skip)]
    pub(super) base: Option<(usize, crate::studies::Report)>,
    pub(super) read_shift: Option<usize>,
    pub(super) code: u8,
    pub(super) ranks: usize,
    pub(super) interrupted: bool,
    pub(super) stonewall: bool,
    pub(super) max_offset_ns: u64,
    pub(super) groups: Vec<GroupSums>,
    pub(super) hosts: BTreeMap<String, (Vec<usize>, usize)>,
    pub(super) warnings: Said,
    pub(super) errors: Said,
    pub(super) targets: Vec<(usize, String, crate::host::TargetInfo)>,
    /// Each distinct set of the ranks' job options, with the ranks that ran it.
    pub(super) options: Vec<(JobOptions, Vec<usize>)>,
}

impl Merger {
    /// A merge with a row per rank's job, or (`per_host`) a row per host and job.
    pub fn new(per_host: bool) -> Merger {
        Merger {
            per_host,
            base: None,
            read_shift: None,
            code: 0,
            ranks: 0,
            interrupted: false,
            stonewall: false,
            max_offset_ns: 0,
            groups: Vec::new(),
            hosts: BTreeMap::new(),
            warnings: Said::default(),
            errors: Said::default(),
            targets: Vec::new(),
            options: Vec::new(),
        }
    }

    /// One rank's result folded in (its clock offset from rank 0 already set).
    pub fn add(&mut self, p: RankResult) {
        self.ranks += 1;
        self.code = self.code.max(p.exit_code);
        self.interrupted |= p.report.interrupted;
        self.stonewall |= p.stonewall;
        self.max_offset_ns = self.max_offset_ns.max(p.clock_offset_ns.unsigned_abs());
        let row = self
            .hosts
            .entry(p.host.clone())
            .or_insert_with(|| (Vec::new(), 0));
        row.0.push(p.rank);
        row.1 = row.1.max(p.report.host.cpus);
        self.warnings.add(&p, &p.report.warnings);
        self.errors.add(&p, &p.report.errors);
        self.add_options(p.rank, job_options(&p));
        self.add_targets(&p);
        let ngroups = match &self.base {
            Some((_, b)) => b.groups.len(),
            None => p.report.groups.len(),
        };
        self.groups.resize_with(ngroups, GroupSums::default);
        for gi in 0..ngroups.min(p.report.groups.len()) {
            self.add_group(gi, &p);
        }
        if self.base.is_none() {
            self.read_shift = p.read_shift;
            let mut base = crate::studies::Report::from(p.report);
            base.rounds = p.rounds;
            self.base = Some((p.rank, base));
        }
    }

    pub(super) fn add_options(&mut self, rank: usize, mine: JobOptions) {
        match self.options.iter_mut().find(|(o, _)| *o == mine) {
            Some((_, ranks)) => ranks.push(rank),
            None => self.options.push((mine, vec![rank])),
        }
    }

    /// The ranks that ran other options than `base_rank`, and the lowest one's first
    /// difference.
    fn differ(&self, base_rank: usize) -> (Vec<usize>, Option<String>) {
        let Some((base, _)) = self.options.iter().find(|(_, r)| r.contains(&base_rank)) else {
            return (Vec::new(), None);
        };
        let mut odd: Vec<(usize, &[BTreeMap<String, String>])> = self
            .options
            .iter()
            .filter(|(o, _)| o != base)
            .flat_map(|(o, ranks)| ranks.iter().map(move |&r| (r, o.as_slice())))
            .collect();
        odd.sort_unstable_by_key(|(r, _)| *r);
        let example = odd
            .first()
            .map(|&(r, mine)| first_difference((base_rank, base), (r, mine)));
        (odd.into_iter().map(|(r, _)| r).collect(), example)
    }

    /// Every rank's targets; with a row per host, each host's file systems once (the lowest
    /// rank's file on each).
    fn add_targets(&mut self, p: &RankResult) {
        for t in &p.report.targets {
            self.add_target(p.rank, &p.host, t);
        }
    }

    pub(super) fn add_target(&mut self, rank: usize, host: &str, t: &crate::host::TargetInfo) {
        if self.per_host {
            let same = self
                .targets
                .iter_mut()
                .find(|(_, h, x)| *h == host && x.mount_point == t.mount_point);
            if let Some(s) = same {
                if rank < s.0 {
                    *s = (rank, host.to_string(), t.clone());
                }
                return;
            }
        }
        self.targets.push((rank, host.to_string(), t.clone()));
    }

    fn add_group(&mut self, gi: usize, p: &RankResult) {
        let g = &p.report.groups[gi];
        let sums = &mut self.groups[gi];
        let start = p
            .group_start_unix_ns
            .get(gi)
            .copied()
            .unwrap_or(0)
            .saturating_add_signed(-p.clock_offset_ns);
        sums.windows.push(Window {
            rank: p.rank,
            host: p.host.clone(),
            start,
            end: start + g.total.elapsed_ns,
            stopped: p.stonewalled_by.get(gi).is_some_and(Option::is_some),
        });
        add_to(&mut sums.total, &g.total);
        add_to(sums.by_host.entry(p.host.clone()).or_default(), &g.total);
        if let Some(v) = &g.total.verify {
            add_verify(&mut sums.verify, v);
        }
        add_devices(&mut sums.devices, p, &g.devices);
        super::verdicts::add_check(sums, p, gi);
        for j in &g.jobs {
            if !self.per_host {
                sums.rank_jobs.push((p.rank, j.clone()));
                continue;
            }
            let name = j
                .name
                .strip_suffix(&format!(".r{}", p.rank))
                .unwrap_or(&j.name);
            let row = match sums
                .host_jobs
                .iter_mut()
                .find(|r| r.host == p.host && r.name == name && r.clone == j.clone)
            {
                Some(r) => r,
                None => {
                    sums.host_jobs.push(HostJob {
                        host: p.host.clone(),
                        name: name.to_string(),
                        clone: j.clone,
                        first: (p.rank, j.clone()),
                        sum: None,
                        ranks: Vec::new(),
                    });
                    sums.host_jobs.last_mut().expect("just pushed")
                }
            };
            if p.rank < row.first.0 {
                row.first = (p.rank, j.clone());
            }
            add_to(&mut row.sum, &j.measurement);
            row.ranks.push(p.rank);
        }
    }

    /// The merged report and the worst rank's exit code; None when no result was added.
    pub fn finish(self) -> Option<(crate::studies::Report, u8)> {
        let (odd, example) = self.base.as_ref().map(|(r, _)| self.differ(*r))?;
        let verdicts = self.device_verdicts();
        let (base_rank, mut out) = self.base?;
        let mut hosts: Vec<HostRow> = self
            .hosts
            .into_iter()
            .map(|(host, (mut ranks, cpus))| {
                ranks.sort_unstable();
                HostRow {
                    host,
                    ranks,
                    cpus,
                    groups: Vec::new(),
                }
            })
            .collect();
        let mut spans = Vec::new();
        for (gi, sums) in self.groups.into_iter().enumerate() {
            let g = &mut out.groups[gi];
            let mut windows = sums.windows;
            windows.sort_unstable_by_key(|w| w.rank);
            // Each host's first start and last end, in one pass over the windows.
            let mut host_spans: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
            for w in &windows {
                let s = host_spans.entry(&w.host).or_insert((w.start, w.end));
                *s = (s.0.min(w.start), s.1.max(w.end));
            }
            for row in &mut hosts {
                let m = sums.by_host.get(&row.host).and_then(Option::as_ref);
                let span = host_spans.get(row.host.as_str()).copied();
                row.groups.push(host_group(m, span.unwrap_or((0, 0))));
            }
            let span = group_span(&windows);
            if let Some(total) = sums.total {
                let mut total = total.m;
                let ns = windows.iter().map(|w| w.end).max().unwrap_or(0)
                    - windows.iter().map(|w| w.start).min().unwrap_or(0);
                total.elapsed_ns = ns;
                over_span(&mut total.read, ns);
                over_span(&mut total.write, ns);
                total.verify = sums.verify.map(finish_verify);
                g.total = total;
            }
            g.jobs = match self.per_host {
                false => rank_rows(sums.rank_jobs, &hosts),
                true => host_rows(sums.host_jobs),
            };
            // The fio part carries the aggregate: one row for the group.
            g.group_reporting = true;
            let mut devices = sums.devices;
            for d in &mut devices {
                d.ranks.sort_unstable();
            }
            // In the order of their ranks, not of the results' arrival.
            devices.sort_unstable_by_key(|d| d.ranks.first().copied());
            g.devices = devices;
            spans.push(span);
        }
        let mut targets = self.targets;
        targets.sort_by_key(|(r, _, _)| *r);
        out.targets = targets.into_iter().map(|(_, _, t)| t).collect();
        out.interrupted = self.interrupted;
        out.warnings = self.warnings.lines();
        out.warnings.extend(verdicts);
        if !odd.is_empty() {
            out.warnings.push(format!(
                "rank(s) {} ran other options than rank {base_rank} ({}): each group's total, its \
                 fio-format row and the host rows add different workloads together; each \
                 rank's jobs carry their own options",
                odd.iter()
                    .map(|r| r.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                example.unwrap_or_default()
            ));
        }
        out.errors = self.errors.lines();
        out.scaleout = Some(ScaleOut {
            ranks: self.ranks,
            stonewall: self.stonewall,
            read_shift: self.read_shift,
            max_clock_offset_ms: self.max_offset_ns as f64 / 1e6,
            hosts,
            groups: spans,
            jobs_per_host: self.per_host,
            merge: None,
        });
        Some((out, self.code))
    }
}

/// Every rank's job rows in rank order, each named `NAME@HOST#RANK`.
fn rank_rows(mut jobs: Vec<(usize, JobReport)>, hosts: &[HostRow]) -> Vec<JobReport> {
    jobs.sort_by_key(|(r, _)| *r);
    jobs.into_iter()
        .map(|(rank, mut j)| {
            let host = hosts
                .iter()
                .find(|h| h.ranks.binary_search(&rank).is_ok())
                .map_or("?", |h| h.host.as_str());
            j.name = format!("{}@{host}#{rank}", j.name);
            j
        })
        .collect()
}

/// A row per host and job, `NAME@HOST`: the ranks' figures added up, the rates over the
/// longest of their times (fio's group_reporting), the lowest rank's options and files.
fn host_rows(mut jobs: Vec<HostJob>) -> Vec<JobReport> {
    jobs.sort_by(|a, b| (&a.host, a.first.0, &a.name).cmp(&(&b.host, b.first.0, &b.name)));
    jobs.into_iter()
        .map(|h| {
            let (_, mut j) = h.first;
            if let Some(s) = h.sum {
                j.measurement = s.m;
                let ns = j.measurement.elapsed_ns;
                over_span(&mut j.measurement.read, ns);
                over_span(&mut j.measurement.write, ns);
            }
            j.name = format!("{}@{}", h.name, h.host);
            let mut ranks = h.ranks;
            ranks.sort_unstable();
            j.ranks = ranks;
            j
        })
        .collect()
}

/// The merged verify phase's rates, from its bytes over its (longest) time.
fn finish_verify(mut v: VerifyReport) -> VerifyReport {
    if v.elapsed_ns > 0 {
        let secs = v.elapsed_ns as f64 / 1e9;
        v.mib_per_s = v.bytes as f64 / secs / 1048576.0;
        v.mb_per_s = v.bytes as f64 / secs / 1e6;
    }
    v
}

/// A group's timing from its ranks' windows (in rank order): the skew of their starts, the
/// first and the last done (the straggler), where stonewalling stopped it, every window.
fn group_span(windows: &[Window]) -> super::merge::GroupSpan {
    let first_start = windows.iter().map(|w| w.start).min().unwrap_or(0);
    let last_start = windows.iter().map(|w| w.start).max().unwrap_or(0);
    let last = windows.iter().max_by_key(|w| w.end);
    let last_end = last.map_or(0, |w| w.end);
    let first_end = windows.iter().map(|w| w.end).min().unwrap_or(0);
    // The first to finish among the ranks that were not stopped for another's finish.
    let stonewalled_at = windows
        .iter()
        .any(|w| w.stopped)
        .then(|| {
            windows
                .iter()
                .filter(|w| !w.stopped)
                .min_by_key(|w| w.end)
                .map(|w| format!("{}#{}", w.host, w.rank))
        })
        .flatten();
    let ms = |t: u64| t.saturating_sub(first_start) as f64 / 1e6;
    super::merge::GroupSpan {
        start_skew_ms: (last_start - first_start) as f64 / 1e6,
        first_done_ms: ms(first_end),
        last_done_ms: ms(last_end),
        straggler: last.map_or(String::new(), |w| format!("{}#{}", w.host, w.rank)),
        stonewalled_at,
        ranks: windows
            .iter()
            .map(|w| RankSpan {
                rank: w.rank,
                host: w.host.clone(),
                start_ms: ms(w.start),
                end_ms: ms(w.end),
            })
            .collect(),
    }
}

/// A host's row for one group: the host's bytes over the host's span (its first rank's start
/// to its last rank's end), computed as the group's total is, never the sum of its ranks' own
/// rates (ranks that did not overlap would add up to more than the host moved in any second).
fn host_group(m: Option<&Running>, (from, to): (u64, u64)) -> HostGroup {
    let mut m = m.map_or_else(|| Measurement::sum(&[]), |r| r.m.clone());
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

/// One rank's devices added to a group's: each host's device once, with the ranks there that
/// ran on it. The ranks on one host count the same device over overlapping windows, so
/// adding their counts would count its I/O several times: each device keeps the counts of
/// the rank whose window saw the most (the fullest view of it; the device's own traffic from
/// other ranks and processes is in it as it always is).
fn add_devices(out: &mut Vec<DeviceIo>, p: &RankResult, devices: &[DeviceIo]) {
    for d in devices {
        let mut d = d.clone();
        d.host = Some(p.host.clone());
        d.ranks = vec![p.rank];
        fold_device(out, d);
    }
}

/// One device (its host and the ranks that saw it set) into a group's list: the same host's
/// device once, its ranks together, the counts of the fullest view of it.
pub(super) fn fold_device(out: &mut Vec<DeviceIo>, d: DeviceIo) {
    let moved = |d: &DeviceIo| (d.read_bytes + d.write_bytes, d.wall_ms);
    let same = out
        .iter_mut()
        .find(|o| o.host == d.host && o.name == d.name && o.major_minor == d.major_minor);
    match same {
        Some(o) => {
            let mut ranks = std::mem::take(&mut o.ranks);
            ranks.extend_from_slice(&d.ranks);
            if moved(&d) > moved(o) {
                *o = d;
            }
            o.ranks = ranks;
        }
        None => out.push(d),
    }
}
