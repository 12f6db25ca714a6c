//! Scale-out: many hosts (MPI ranks) running one plan at once, and one honest result. This
//! module holds what needs no MPI: how a launch is recognised (so a build without MPI refuses
//! instead of running N independent copies), how each rank's file names are made its own
//! (and, with `--rank-read-shift`, which rank's files its read jobs read), and how rank 0
//! merges the ranks' reports — sums, bandwidth over the earliest start to the latest end,
//! latency percentiles from the merged histograms (exact, never averaged), and a row per
//! host. The transport (gathering the reports) is the binary's, behind `--features mpi`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::plan::{EngineKind, Origin, Plan, ReadFrom, Section};
use crate::result::{DirReport, Measurement, RunReport};

/// This process's place in an MPI launch, from the launcher's environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Launch {
    pub rank: usize,
    pub size: usize,
}

/// The launcher's environment: OpenMPI's `OMPI_COMM_WORLD_*`, PMI's `PMI_RANK`/`PMI_SIZE`
/// (MPICH, Intel MPI, Slurm's srun with PMI), PMIx's `PMIX_RANK` with a size from one of them.
pub fn launched(env: &dyn Fn(&str) -> Option<String>) -> Option<Launch> {
    let num = |k: &str| env(k).and_then(|v| v.trim().parse::<usize>().ok());
    let size = num("OMPI_COMM_WORLD_SIZE")
        .or_else(|| num("PMI_SIZE"))
        .or_else(|| num("SLURM_NTASKS").filter(|_| env("PMIX_RANK").is_some()))?;
    let rank = num("OMPI_COMM_WORLD_RANK")
        .or_else(|| num("PMI_RANK"))
        .or_else(|| num("PMIX_RANK"))?;
    Some(Launch { rank, size })
}

/// The one-line refusal of a launch this build cannot join.
pub fn without_mpi_error(l: Launch) -> String {
    format!(
        "launched as rank {} of {} (mpirun/srun) but this iogauge was built without MPI: it would \
         run {} independent copies and report none of them together; build it with `cargo \
         build --release --features mpi` (see docs/scale-out.md), or run it without mpirun",
        l.rank, l.size, l.size
    )
}

/// Makes each rank's files its own: `$rank` and `$host` in `filename` and `directory` are
/// replaced (fio's `filename_format` style), and a `filename` without `$rank` gets `.r{rank}`
/// appended, so ranks never share a file unless the user wrote `$host` alone or set
/// `shared`. A job writing files by `directory` gets `.r{rank}` in its name (its files are
/// named after it).
pub fn rank_sections(sections: &mut [Section], rank: usize, host: &str, shared: bool) {
    for s in sections.iter_mut() {
        let entries: Vec<(String, String)> = s
            .entries
            .iter()
            .filter_map(|e| e.value.clone().map(|v| (e.key.clone(), v)))
            .collect();
        let get = |k: &str| {
            entries
                .iter()
                .rev()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.clone())
        };
        let sub = |v: &str| v.replace("$rank", &rank.to_string()).replace("$host", host);
        if let Some(f) = get("filename") {
            let mut v = sub(&f);
            if !f.contains("$rank") && !shared {
                // Several files (a:b) each get the rank.
                v = v
                    .split(':')
                    .map(|p| format!("{p}.r{rank}"))
                    .collect::<Vec<_>>()
                    .join(":");
            }
            s.set("filename", &v, Origin::Cli);
        }
        if let Some(d) = get("directory") {
            s.set("directory", &sub(&d), Origin::Cli);
            if get("filename").is_none() && !d.contains("$rank") && !shared {
                // The job's name: its `name` option where given (fio's command line), else
                // its section's.
                match get("name") {
                    Some(n) => {
                        s.set("name", &format!("{n}.r{rank}"), Origin::Cli);
                    }
                    None => s.name = format!("{}.r{rank}", s.name),
                }
            }
        }
    }
}

/// `--rank-read-shift` (IOR's `-C`): the read jobs of rank `r` read the files rank `r + N`
/// (modulo the ranks) laid out or wrote, so what they read was not written through their own
/// host's page cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadShift {
    /// The smallest shift that puts every rank's reads on another host.
    Host,
    /// By this many ranks.
    Ranks(usize),
}

/// Why ranks cannot read each other's files as asked (`--rank-read-shift`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShiftError {
    #[error("expected host (the nearest ranks on another host) or a number of ranks from 1")]
    Syntax,
    #[error("{flag}: with IOGAUGE_MPI_SHARED_FILES=1 every rank already reads the same files")]
    Shared { flag: String },
    #[error(
        "{flag}: with {n} ranks, a shift of {shift} makes every rank read its own files; give 1 \
         to {} or host",
        .n - 1
    )]
    OwnFiles {
        flag: String,
        n: usize,
        shift: usize,
    },
    #[error(
        "{flag}: all {n} ranks run on one host ({host}), so none can read files written on \
         another; give a number of ranks to shift by (those reads may come from this host's \
         page cache)"
    )]
    OneHost {
        flag: String,
        n: usize,
        host: String,
    },
    #[error(
        "{flag}: no one shift puts every rank's reads on another host with these ranks per host \
         ({counts}); give a number of ranks to shift by"
    )]
    NoShift { flag: String, counts: String },
    #[error(
        "{flag}: job {job} checks what it reads against this rank's journal of durable writes \
         ({option}), which says nothing of another rank's file; check another rank's blocks \
         without it (verify on a reader), or journal its own"
    )]
    Journal {
        flag: String,
        job: String,
        option: String,
    },
    #[error(
        "{flag}: job {job} and rank {rank}'s job {theirs} do not match (the plans differ by \
         rank), so no file of one stands for a file of the other"
    )]
    Mismatch {
        flag: String,
        job: String,
        rank: usize,
        theirs: String,
    },
    #[error(
        "{flag}: no job only reads (rw=read or randread), so no job would read another rank's \
         files"
    )]
    NoReader { flag: String },
}

impl std::str::FromStr for ReadShift {
    type Err = ShiftError;
    fn from_str(s: &str) -> Result<Self, ShiftError> {
        match s {
            "host" => Ok(ReadShift::Host),
            _ => match s.parse::<usize>() {
                Ok(n) if n > 0 => Ok(ReadShift::Ranks(n)),
                _ => Err(ShiftError::Syntax),
            },
        }
    }
}

impl std::fmt::Display for ReadShift {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadShift::Host => write!(f, "host"),
            ReadShift::Ranks(n) => write!(f, "{n}"),
        }
    }
}

impl ReadShift {
    /// The shift in ranks, given every rank's host (indexed by rank), and a warning when some
    /// ranks would read files written on their own host. The same on every rank.
    pub fn ranks(self, hosts: &[String]) -> Result<(usize, Option<String>), ShiftError> {
        let n = hosts.len();
        let flag = format!("--rank-read-shift={self}");
        let same = |s: usize| (0..n).filter(|&r| hosts[r] == hosts[(r + s) % n]).count();
        match self {
            ReadShift::Ranks(shift) if shift % n == 0 => {
                Err(ShiftError::OwnFiles { flag, n, shift })
            }
            ReadShift::Ranks(s) => {
                let s = s % n;
                let warning = match same(s) {
                    0 => None,
                    k => Some(format!(
                        "{flag}: {k} of {n} ranks read files written on their own host, whose \
                         page cache may still hold them (--rank-read-shift=host picks ranks on \
                         other hosts)"
                    )),
                };
                Ok((s, warning))
            }
            ReadShift::Host => {
                if let Some(s) = (1..n).find(|&s| same(s) == 0) {
                    return Ok((s, None));
                }
                let mut per_host: BTreeMap<&str, usize> = BTreeMap::new();
                for h in hosts {
                    *per_host.entry(h).or_default() += 1;
                }
                if per_host.len() == 1 {
                    return Err(ShiftError::OneHost {
                        flag,
                        n,
                        host: hosts[0].clone(),
                    });
                }
                let counts: Vec<String> =
                    per_host.iter().map(|(h, c)| format!("{h}: {c}")).collect();
                Err(ShiftError::NoShift {
                    flag,
                    counts: counts.join(", "),
                })
            }
        }
    }
}

/// Points the read jobs of `plan` at the files of the rank `partner` stands for (the same
/// sections resolved for that rank: the same jobs in the same order). A job that only reads
/// reads that rank's files (and, verifying, checks that rank's blocks by their headers);
/// every other job keeps its own. Returns how many jobs read another rank's files; none is an
/// error, as is one that checks against a journal of this rank's own writes.
pub fn borrow(
    plan: &mut Plan,
    partner: &Plan,
    rank: usize,
    host: &str,
    flag: &str,
) -> Result<usize, ShiftError> {
    let theirs = partner.groups.iter().flat_map(|g| &g.jobs);
    let mut n = 0;
    for (job, other) in plan.groups.iter_mut().flat_map(|g| &mut g.jobs).zip(theirs) {
        if job.rw.writes() || job.engine == EngineKind::Null {
            continue;
        }
        if job.verify.is_some_and(|v| v.state_load) {
            // A reader's checks (verify on a reader, verify_only) need nothing of the writer:
            // each block's header says where it belongs and its digest what it holds. A
            // journal, though, is of this rank's own writes.
            return Err(ShiftError::Journal {
                flag: flag.into(),
                job: job.name.clone(),
                option: job.label("verify_state_load"),
            });
        }
        let paths = other.paths();
        if paths.len() != job.paths().len()
            || other.name.split('.').next() != job.name.split('.').next()
        {
            return Err(ShiftError::Mismatch {
                flag: flag.into(),
                job: job.name.clone(),
                rank,
                theirs: other.name.clone(),
            });
        }
        job.read_from = Some(ReadFrom {
            rank,
            host: host.to_string(),
            paths,
        });
        n += 1;
    }
    if n == 0 {
        return Err(ShiftError::NoReader { flag: flag.into() });
    }
    Ok(n)
}

/// Rank 0's lines for the ranks that ended without a result (`(rank, why)`, of `n` ranks on
/// `hosts`): each distinct reason once, naming its ranks unless every rank gave it, and the
/// reasons that only say another rank failed (`echo`) after the others.
pub fn failure_lines(
    failed: &[(usize, String)],
    hosts: &[String],
    n: usize,
    echo: &str,
) -> Vec<String> {
    let mut by_why: Vec<(&str, Vec<usize>)> = Vec::new();
    for (rank, why) in failed {
        match by_why.iter_mut().find(|(w, _)| w == why) {
            Some((_, ranks)) => ranks.push(*rank),
            None => by_why.push((why, vec![*rank])),
        }
    }
    by_why.sort_by_key(|(w, ranks)| (*w == echo, ranks.first().copied()));
    by_why
        .into_iter()
        .map(|(why, mut ranks)| {
            ranks.sort_unstable();
            if ranks.len() == n {
                return why.to_string();
            }
            let mut names: Vec<&str> = Vec::new();
            for h in ranks.iter().filter_map(|&r| hosts.get(r)) {
                if !names.contains(&h.as_str()) {
                    names.push(h);
                }
            }
            let list: Vec<String> = ranks.iter().map(|r| r.to_string()).collect();
            let which = if ranks.len() == 1 { "rank" } else { "ranks" };
            format!("{which} {} ({}): {why}", list.join(","), names.join(","))
        })
        .collect()
}

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
    pub rounds: Option<super::rounds::RoundsReport>,
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
pub fn aggregate(mut parts: Vec<RankResult>) -> (super::Report, u8) {
    parts.sort_by_key(|p| p.rank);
    let code = parts.iter().map(|p| p.exit_code).max().unwrap_or(0);
    let mut out = super::Report::from(parts[0].report.clone());
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
    g.devices = here.iter().flat_map(|(_, g)| g.devices.clone()).collect();
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

/// Every rank's warnings (or errors), each tagged with the rank and host, each said once.
fn tagged(parts: &[RankResult], f: fn(&RunReport) -> &Vec<String>) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for p in parts {
        for w in f(&p.report) {
            let w = format!("rank {} ({}): {w}", p.rank, p.host);
            if !v.contains(&w) {
                v.push(w);
            }
        }
    }
    v
}

/// Options that name a rank's own files: they differ between ranks by design.
const PER_RANK: [&str; 3] = ["filename", "directory", "filename_format"];

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

/// What `--rank-read-shift` did, in one sentence.
pub fn read_shift_line(n: usize) -> String {
    format!(
        "  reads: each rank's read-only jobs read the files of the rank {n} further on (rank r \
         read rank r+{n}'s, modulo the ranks), not their own (--rank-read-shift; IOR's -C)"
    )
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
        for h in &s.hosts {
            if let Some(x) = h.groups.get(gi) {
                o.push_str(&format!(
                    "    {:<24} ranks {:<12} {:>10.2} MB/s ({:.2} MiB/s) {:>10.0} IOPS  p99 {}\n",
                    h.host,
                    h.ranks
                        .iter()
                        .map(|r| r.to_string())
                        .collect::<Vec<_>>()
                        .join(","),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_read_shift_by_host_lands_every_rank_on_another_host() {
        let host = ReadShift::Host;
        // By slot (blocks of ranks per host): one host's worth of ranks.
        let by_slot = hosts(&["a", "a", "b", "b", "c", "c"]);
        assert_eq!(host.ranks(&by_slot), Ok((2, None)));
        // Round robin: the next rank is on another host.
        assert_eq!(host.ranks(&hosts(&["a", "b", "a", "b"])), Ok((1, None)));
        // Uneven: no one shift works for every rank.
        let e = host
            .ranks(&hosts(&["a", "a", "a", "b"]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("a: 3, b: 1"), "{e}");
        let e = host.ranks(&hosts(&["n1", "n1"])).unwrap_err().to_string();
        assert!(e.contains("all 2 ranks run on one host (n1)"), "{e}");
    }

    #[test]
    fn a_read_shift_by_ranks_is_taken_modulo_the_ranks_and_warns_on_one_host() {
        let four = hosts(&["a", "a", "b", "b"]);
        assert_eq!(ReadShift::Ranks(2).ranks(&four), Ok((2, None)));
        assert_eq!(ReadShift::Ranks(6).ranks(&four).unwrap().0, 2);
        let (n, w) = ReadShift::Ranks(1).ranks(&four).unwrap();
        assert_eq!(n, 1);
        // Ranks 0 and 2 read their host-mate's files.
        assert!(w.unwrap().contains("2 of 4 ranks"));
        let e = ReadShift::Ranks(8).ranks(&four).unwrap_err().to_string();
        assert!(e.contains("give 1 to 3 or host"), "{e}");
        assert_eq!("host".parse(), Ok(ReadShift::Host));
        assert_eq!("3".parse(), Ok(ReadShift::Ranks(3)));
        for bad in ["0", "-1", "", "hosts", "1.5"] {
            assert!(bad.parse::<ReadShift>().is_err(), "{bad}");
        }
    }

    #[test]
    fn failures_are_said_once_per_reason_with_their_ranks() {
        let h = hosts(&["a", "a", "b", "b"]);
        let echo = "another rank could not start";
        let failed = vec![
            (0, echo.to_string()),
            (1, echo.to_string()),
            (2, "f2: not a regular file".to_string()),
            (3, echo.to_string()),
        ];
        assert_eq!(
            failure_lines(&failed, &h, 4, echo),
            [
                "rank 2 (b): f2: not a regular file",
                "ranks 0,1,3 (a,b): another rank could not start"
            ]
        );
        // Every rank with one reason: said once, as it is.
        let all: Vec<(usize, String)> = (0..4).map(|r| (r, "bad".to_string())).collect();
        assert_eq!(failure_lines(&all, &h, 4, echo), ["bad"]);
    }

    #[test]
    fn a_launch_is_recognised_from_the_launchers_environment() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(key, _)| *key == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        let ompi = env(&[("OMPI_COMM_WORLD_RANK", "3"), ("OMPI_COMM_WORLD_SIZE", "4")]);
        assert_eq!(launched(&ompi), Some(Launch { rank: 3, size: 4 }));
        let pmi = env(&[("PMI_RANK", "0"), ("PMI_SIZE", "16")]);
        assert_eq!(launched(&pmi), Some(Launch { rank: 0, size: 16 }));
        assert_eq!(launched(&env(&[])), None);
        assert_eq!(
            launched(&env(&[("PMI_SIZE", "2")])),
            None,
            "no rank: not a launch"
        );
        let e = without_mpi_error(Launch { rank: 1, size: 4 });
        assert!(e.contains("4 independent copies") && e.contains("--features mpi"));
    }

    #[test]
    fn each_rank_gets_its_own_files() {
        let mut s = vec![
            Section::new("w"),
            Section::new("d"),
            Section::new("x"),
            Section::new("job"),
        ];
        s[0].set("filename", "/data/a:/data/b", Origin::Cli);
        s[1].set("directory", "/scratch/$host", Origin::Cli);
        s[3].set("name", "r", Origin::Cli);
        s[3].set("directory", "/scratch", Origin::Cli);
        s[2].set("filename", "/data/f.$rank.$host", Origin::Cli);
        rank_sections(&mut s, 3, "n7", false);
        let get = |s: &Section, k: &str| {
            s.entries
                .iter()
                .rev()
                .find(|e| e.key == k)
                .and_then(|e| e.value.clone())
        };
        assert_eq!(get(&s[0], "filename").unwrap(), "/data/a.r3:/data/b.r3");
        assert_eq!(get(&s[1], "directory").unwrap(), "/scratch/n7");
        assert_eq!(
            s[1].name, "d.r3",
            "directory mode: the files are named after the job"
        );
        assert_eq!(get(&s[2], "filename").unwrap(), "/data/f.3.n7");
        assert_eq!(
            get(&s[3], "name").unwrap(),
            "r.r3",
            "--name=r on the command line"
        );
        // Shared on purpose.
        let mut t = vec![Section::new("w")];
        t[0].set("filename", "/shared/f", Origin::Cli);
        rank_sections(&mut t, 2, "n1", true);
        assert_eq!(get(&t[0], "filename").unwrap(), "/shared/f");
    }

    #[test]
    fn read_jobs_borrow_the_partners_files_and_writers_keep_their_own() {
        use std::path::PathBuf;
        let sections = || {
            let mut s = vec![Section::new("w"), Section::new("r"), Section::new("m")];
            for (sec, rw) in s.iter_mut().zip(["write", "randread", "randrw"]) {
                sec.set("directory", "/scratch/$host", Origin::Cli);
                sec.set("size", "1m", Origin::Cli);
                sec.set("rw", rw, Origin::Cli);
            }
            s[1].set("stonewall", "1", Origin::Cli);
            s
        };
        let plan_of = |rank: usize, host: &str| {
            let mut s = sections();
            rank_sections(&mut s, rank, host, false);
            crate::plan::resolve(&s, false).unwrap()
        };
        let mut mine = plan_of(0, "n1");
        let theirs = plan_of(2, "n2");
        assert_eq!(
            borrow(&mut mine, &theirs, 2, "n2", "--rank-read-shift=2"),
            Ok(1)
        );
        let jobs: Vec<&crate::plan::JobSpec> = mine.groups.iter().flat_map(|g| &g.jobs).collect();
        // Writers (and mixed jobs, which write) keep their own files.
        assert_eq!(jobs[0].read_from, None);
        assert_eq!(jobs[2].read_from, None);
        let from = jobs[1].read_from.as_ref().unwrap();
        assert_eq!((from.rank, from.host.as_str()), (2, "n2"));
        assert_eq!(from.paths, [PathBuf::from("/scratch/n2/r.r2.0.0")]);
        assert_eq!(jobs[1].paths(), [PathBuf::from("/scratch/n1/r.r0.0.0")]);
        assert_eq!(jobs[1].io_paths(), from.paths);
        // A plan with no reader has nothing to borrow.
        let mut w = crate::plan::resolve(&sections()[..1], false).unwrap();
        let e = borrow(&mut w, &theirs, 2, "n2", "--rank-read-shift=2")
            .unwrap_err()
            .to_string();
        assert!(e.contains("no job only reads"), "{e}");
    }
}
