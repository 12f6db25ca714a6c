//! Verification in the job's loop: sealing each written block with its header, keeping the
//! generation map as writes are acknowledged (seal.rs), the journal of durable writes
//! (journal.rs), and the verify phase after the job, which reads the written blocks back
//! through the same engine and depth, checks each, and records what it found apart from the
//! measured figures (check.rs). This file: the verifier, its maps, and the phase's reads.

use std::sync::Arc;

use crate::files::ownership::MarkState;
use crate::plan::workload::{Dir, IoReq};
use crate::plan::{JobSpec, Verify};
use crate::stats::VerifyStats;
use crate::verify::{ANY_WRITER, Gen, GenMap, Handed, SharedMap, StateHeader};

mod check;
mod journal;
mod seal;

use journal::Loaded;

/// A file's map: this job's own, or one the group's jobs that write the file share.
enum Map {
    Own(GenMap),
    /// With this job's share of the verify phase: units `k`, `k + n`, `k + 2n`…
    Shared {
        map: Arc<SharedMap>,
        k: usize,
        n: usize,
    },
}

impl Map {
    fn get(&self, b: usize) -> Gen {
        match self {
            Map::Own(m) => m.get(b),
            Map::Shared { map, .. } => map.get(b),
        }
    }

    fn len(&self) -> usize {
        match self {
            Map::Own(m) => m.len(),
            Map::Shared { map, .. } => map.len(),
        }
    }

    fn written(&self) -> usize {
        match self {
            Map::Own(m) => m.written(),
            Map::Shared { map, .. } => map.written(),
        }
    }

    fn forget(&mut self, b: usize) {
        match self {
            Map::Own(m) => m.forget(b),
            Map::Shared { map, .. } => map.forget(b),
        }
    }
}

/// A file several verifying jobs of the group write: the map they share, and this job's
/// place among them (k of n).
pub type SharedFile = Option<(Arc<SharedMap>, usize, usize)>;

pub(super) struct Verifier {
    pub(super) spec: Verify,
    /// Where block 0 of each file's map is: the job's region start, or the shared map's.
    bases: Vec<u64>,
    /// One per file.
    maps: Vec<Map>,
    /// Per slot, what a shared map's `begin` gave each block of the write in flight.
    begun: Vec<Vec<(u32, u8, bool)>>,
    /// Per slot, a shared map's bytes for the blocks of the read in flight, as they were
    /// when it was issued.
    read_from: Vec<Vec<u8>>,
    run_id: u64,
    job: u32,
    /// The verify phase is running.
    pub(super) active: bool,
    /// The phase's next read: file and block.
    cursor: (usize, usize),
    pub(super) stats: VerifyStats,
    /// verify_state_save: the journal, and per file the blocks written (with the write's
    /// number) since its last flush, durable at the next one.
    journal: Option<std::fs::File>,
    dirty: Vec<Vec<(u64, u64)>>,
    /// Writes are durable when acknowledged (sync=dsync/sync).
    write_through: bool,
    /// verify_state_load: the journal's run and job, and each durable block's write number.
    loaded: Option<Loaded>,
    /// verify_backlog: the writes acknowledged since the last pause (file, offset, length),
    /// and the reads of the pause under way.
    backlog: Vec<(usize, u64, u64)>,
    backlog_reads: std::collections::VecDeque<(usize, u64, u64)>,
    in_backlog: bool,
    /// verify_backlog: per file (of this job's own), per block, checked by a pause since its
    /// last write; the phase after the job does not read it again (fio's). Empty without a
    /// backlog.
    checked: Vec<Vec<bool>>,
    /// A job that checks what an earlier group of this run wrote: per file, per block, the
    /// writer whose write it must hold ([`NOT_HANDED`]: none known, any iogauge block passes).
    handed_jobs: Vec<Vec<u32>>,
}

/// [`Verifier::handed_jobs`] for a block no earlier writer of this run is known to hold.
const NOT_HANDED: u32 = u32::MAX - 1;

impl Verifier {
    pub(super) fn new(
        job: &JobSpec,
        spec: Verify,
        (files, depth): (usize, usize),
        shared: &[SharedFile],
        handed: &[Option<Arc<Handed>>],
        (run_id, id): (u64, u32),
    ) -> std::io::Result<Self> {
        let blocks = (job.per_file_bytes() / spec.interval) as usize;
        let mut maps = vec![GenMap::new(blocks); files];
        let header = StateHeader {
            checksum: spec.checksum,
            run_id,
            job: id,
            files: files as u32,
            interval: spec.interval,
            base: job.offset,
            blocks: blocks as u64,
        };
        let journal = match spec.state_save {
            true => Some(journal::open(job, &header)?),
            false => None,
        };
        let mut loaded = None;
        let mut lost_to_truncation = (0u64, Vec::new());
        let mut handed_jobs: Vec<Vec<u32>> = Vec::new();
        if spec.state_load {
            let (l, lost) = journal::load(job, spec, &header, &mut maps)?;
            (loaded, lost_to_truncation) = (Some(l), lost);
        } else if spec.only || spec.inline {
            handed_jobs = seed_handed(job, spec, handed, &mut maps);
        }
        let (bases, maps) = share(job, maps, shared);
        Ok(Verifier {
            spec,
            bases,
            maps,
            begun: vec![Vec::new(); depth],
            read_from: vec![Vec::new(); depth],
            run_id,
            job: id,
            active: false,
            cursor: (0, 0),
            stats: VerifyStats {
                checksum: spec.checksum.name(),
                inline: spec.inline,
                blocks: lost_to_truncation.0,
                bad: lost_to_truncation.0,
                bad_blocks: lost_to_truncation.1,
                ..VerifyStats::default()
            },
            journal,
            dirty: vec![Vec::new(); files],
            write_through: job.sync.mode != crate::plan::SyncMode::None,
            loaded,
            backlog: Vec::new(),
            backlog_reads: Default::default(),
            in_backlog: false,
            checked: match spec.backlog {
                0 => Vec::new(),
                _ => vec![vec![false; blocks]; files],
            },
            handed_jobs,
        })
    }

    /// What this job's writes left in each file, for a later group's readers (see
    /// [`Handed`]): its own map, or the map it shared with the group's other writers.
    pub(super) fn handed(&self) -> Vec<Handed> {
        self.maps
            .iter()
            .zip(&self.bases)
            .map(|(m, &base)| {
                let blocks = match m {
                    Map::Own(m) => (0..m.len()).map(|b| (self.job, m.get(b))).collect(),
                    Map::Shared { map, .. } => {
                        (0..map.len()).map(|b| (ANY_WRITER, map.get(b))).collect()
                    }
                };
                Handed {
                    base,
                    interval: self.spec.interval,
                    blocks,
                }
            })
            .collect()
    }

    /// Journals the blocks of `file` (every file: `None`) written since their last flush, now
    /// durable, and makes the journal durable before the job goes on.
    fn journal_durable(&mut self, file: Option<usize>) -> std::io::Result<()> {
        let Some(j) = self.journal.as_mut() else {
            return Ok(());
        };
        let mut out = Vec::new();
        for (f, d) in self.dirty.iter_mut().enumerate() {
            if file.is_none_or(|x| x == f) {
                for (b, seq) in d.drain(..) {
                    out.extend_from_slice(&crate::verify::state_record(
                        self.run_id,
                        f as u32,
                        b,
                        seq,
                    ));
                }
            }
        }
        if out.is_empty() {
            return Ok(());
        }
        use std::io::Write;
        j.write_all(&out)?;
        j.sync_data()?;
        // Still iogauge's as it is now: a later run may replace it, a user's edit may not be.
        let _ =
            crate::files::ownership::set_mark(crate::platform::fd::AsFd::as_fd(j), MarkState::Kept);
        Ok(())
    }

    /// Block `b` of `file` was checked by a verify_backlog pause since its last write.
    fn was_checked(&self, file: usize, b: usize) -> bool {
        matches!(self.maps[file], Map::Own(_))
            && self
                .checked
                .get(file)
                .and_then(|c| c.get(b))
                .copied()
                .unwrap_or(false)
    }

    /// Marks block `b` of `file` checked (a pause read it) or not (written since).
    fn set_checked(&mut self, file: usize, b: usize, checked: bool) {
        if let Some(c) = self.checked.get_mut(file).and_then(|c| c.get_mut(b)) {
            *c = checked;
        }
    }

    fn blocks(&self, file: usize, offset: u64, len: u64) -> std::ops::Range<usize> {
        let i = self.spec.interval;
        let first = ((offset - self.bases[file]) / i) as usize;
        first..first + (len / i) as usize
    }

    /// The next read of the verify phase: the next stretch of the unit's size (aligned to it
    /// from the region's start) holding a written block; `None` when all were read.
    fn next_read(&mut self, unit_len: u64) -> Option<IoReq> {
        if self.in_backlog {
            let (file, offset, len) = self.backlog_reads.pop_front()?;
            return Some(IoReq {
                dir: Dir::Read,
                file,
                offset,
                len,
            });
        }
        let per_unit = (unit_len / self.spec.interval).max(1) as usize;
        while self.cursor.0 < self.maps.len() {
            let (f, b) = self.cursor;
            let map = &self.maps[f];
            // A shared file: this job reads back every n-th unit, the others the rest.
            let mine = |unit: usize| match map {
                Map::Own(_) => true,
                Map::Shared { k, n, .. } => unit % n == *k,
            };
            let due = |x: usize| {
                map.get(x) != Gen::Unwritten && mine(x / per_unit) && !self.was_checked(f, x)
            };
            match (b..map.len()).find(|&x| due(x)) {
                Some(x) => {
                    let start = x / per_unit * per_unit;
                    let end = (start + per_unit).min(map.len());
                    self.cursor = (f, end);
                    return Some(IoReq {
                        dir: Dir::Read,
                        file: f,
                        offset: self.bases[f] + start as u64 * self.spec.interval,
                        len: (end - start) as u64 * self.spec.interval,
                    });
                }
                None => self.cursor = (f + 1, 0),
            }
        }
        None
    }
}

/// verify_only, or a reader checking inline: what an earlier group of this run wrote, each
/// block the write its map says (per file, per block, the writer; empty for a file no earlier
/// writer handed on). Anything else (an earlier run's file): every block must hold one of its
/// writes.
fn seed_handed(
    job: &JobSpec,
    spec: Verify,
    handed: &[Option<Arc<Handed>>],
    maps: &mut [GenMap],
) -> Vec<Vec<u32>> {
    let mut handed_jobs: Vec<Vec<u32>> = Vec::new();
    // A job that only reads has no writes to replay: its verify_only checks every block.
    let replays = spec.only && !job.timing.time_based && spec.given_rw.writes();
    let replayed = replays.then(|| replay_writes(job, spec, maps));
    for (f, m) in maps.iter_mut().enumerate() {
        let h = handed.get(f).cloned().flatten();
        let mut jobs = Vec::new();
        for b in 0..m.len() {
            let at = job.offset + b as u64 * spec.interval;
            match h.as_ref().and_then(|h| h.at(at)) {
                Some((writer, Gen::Is(g))) => {
                    m.acknowledge(b, u32::from(g), false);
                    jobs.push(writer);
                }
                Some((writer, _)) => {
                    m.acknowledge(b, 0, true);
                    jobs.push(writer);
                }
                // Not written earlier in this run: verify_only checks what the job's own
                // writes would have written (fio replays the workload), any other check
                // every block.
                None if replayed.as_ref().is_some_and(|r| !r[f][b]) => jobs.push(NOT_HANDED),
                None => {
                    m.acknowledge(b, 0, true);
                    jobs.push(NOT_HANDED);
                }
            }
        }
        if h.is_some() {
            handed_jobs.resize(f + 1, Vec::new());
            handed_jobs[f] = jobs;
        }
    }
    handed_jobs
}

/// Per file, per block: whether one pass of the job's workload (its seed, its sizes, its
/// loops) writes it. A size-bounded job only.
fn replay_writes(job: &JobSpec, spec: Verify, maps: &[GenMap]) -> Vec<Vec<bool>> {
    let mut written: Vec<Vec<bool>> = maps.iter().map(|m| vec![false; m.len()]).collect();
    let mut as_given = job.clone();
    as_given.rw = spec.given_rw;
    for io in super::workload(&as_given, job.random.seed) {
        if io.dir != crate::plan::workload::Dir::Write {
            continue;
        }
        let Some(w) = written.get_mut(io.file) else {
            continue;
        };
        let first = io.offset.saturating_sub(job.offset) / spec.interval;
        let end = (io.offset + io.len)
            .saturating_sub(job.offset)
            .div_ceil(spec.interval);
        for b in first..end.min(w.len() as u64) {
            w[b as usize] = true;
        }
    }
    written
}

/// Each file's map: the job's own, or the one it shares with the group's other writers of the
/// file; and where each map's block 0 is.
fn share(job: &JobSpec, maps: Vec<GenMap>, shared: &[SharedFile]) -> (Vec<u64>, Vec<Map>) {
    let mut bases = vec![job.offset; maps.len()];
    let maps = maps
        .into_iter()
        .enumerate()
        .map(|(f, own)| match shared.get(f).cloned().flatten() {
            Some((map, k, n)) => {
                bases[f] = map.base;
                Map::Shared { map, k, n }
            }
            None => Map::Own(own),
        })
        .collect();
    (bases, maps)
}
