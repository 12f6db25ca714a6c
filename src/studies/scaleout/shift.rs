//! `--rank-read-shift`: which rank's files each rank's read jobs read, so what they read was
//! not written through their own host's page cache, and the plan pointed at them.

use std::collections::BTreeMap;

use crate::plan::{EngineKind, Plan, ReadFrom};

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
        if job.rw.modifies() || job.engine == EngineKind::Null {
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

/// What `--rank-read-shift` did, in one sentence.
pub fn read_shift_line(n: usize) -> String {
    format!(
        "  reads: each rank's read-only jobs read the files of the rank {n} further on (rank r \
         read rank r+{n}'s, modulo the ranks), not their own (--rank-read-shift; IOR's -C)"
    )
}
