//! Verification in the job's loop: sealing each written block with its header, keeping the
//! generation map as writes are acknowledged, and the verify phase after the job, which reads
//! the written blocks back through the same engine and depth, checks each, and records what
//! it found apart from the measured figures.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::time::Duration;

use super::data::{refill_page, refill_rng, stamp_page};
use super::{Halt, Loop};
use crate::engine::{Engine, FlushCall};
use crate::files::ownership::MarkState;
use crate::plan::workload::{Dir, IoReq};
use crate::plan::{DataMode, JobSpec, Verify};
use crate::stats::{BAD_BLOCKS_KEPT, BadBlock, VerifyStats};
use crate::units::unix_ns;
use crate::verify::{
    ANY_WRITER, Checksum, Expect, FLAG_REGENERABLE, Gen, GenMap, HEADER_LEN, Handed, SharedMap,
    Stamp, StateHeader, TRAILER_LEN, check, check_pattern, first_difference, seal, stored_position,
    swap_header,
};

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
    /// A job that checks what an earlier group of this run wrote: per file, per block, the
    /// writer whose write it must hold ([`NOT_HANDED`]: none known, any iogauge block passes).
    handed_jobs: Vec<Vec<u32>>,
}

/// [`Verifier::handed_jobs`] for a block no earlier writer of this run is known to hold.
const NOT_HANDED: u32 = u32::MAX - 1;

/// A journal read back: its header, and per (file, block) the write made durable.
struct Loaded {
    header: StateHeader,
    seqs: HashMap<(usize, usize), u64>,
}

/// The blocks a state journal says were made durable past the end of a file that has been
/// cut short since: each a lost write (counted, the first few kept in full).
fn lost_past_end(
    job: &JobSpec,
    spec: Verify,
    past_end: &std::collections::BTreeMap<(usize, usize), u64>,
) -> (u64, Vec<BadBlock>) {
    let paths = job.paths();
    let end = job.offset + job.per_file_bytes();
    let kept = past_end
        .iter()
        .take(BAD_BLOCKS_KEPT)
        .map(|(&(f, b), &seq)| BadBlock {
            file: paths.get(f).cloned().unwrap_or_default(),
            offset: job.offset + b as u64 * spec.interval,
            len: spec.interval,
            expected_generation: 0,
            fault: crate::verify::Fault {
                kind: "lost write".into(),
                detail: format!(
                    "the file ends at byte {end}: write #{seq} of this block was acknowledged \
                     durable, and the file was cut short after it"
                ),
                found: None,
                first_bad_byte: None,
            },
            found_unix_ns: unix_ns(),
            dumped: Vec::new(),
        })
        .collect();
    (past_end.len() as u64, kept)
}

/// The largest state journal read back (44 M durable writes).
const MAX_STATE_BYTES: u64 = 1 << 30;

fn state_path(job: &JobSpec) -> PathBuf {
    crate::verify::state_path(&job.name, job.clone)
}

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
        let mut journal = None;
        let mut loaded = None;
        let mut lost_to_truncation = (0u64, Vec::new());
        let mut handed_jobs: Vec<Vec<u32>> = Vec::new();
        if spec.state_save {
            let path = state_path(job);
            // The journal's later records go to the file written here, whatever its name comes
            // to name (the writer's rules: new or iogauge's own, never through a link).
            let f = crate::files::writer::write_path_open(&path, &header.bytes(), false).map_err(
                |e| {
                    std::io::Error::other(format!(
                        "verify_state_save: {}: {e}",
                        crate::rawpath::display(&path)
                    ))
                },
            )?;
            journal = Some(f);
        }
        if spec.state_load {
            let path = state_path(job);
            let shown = crate::rawpath::display(&path).to_string();
            // Bounded: a record per durable write, 24 bytes each.
            let bytes = crate::files::ownership::read_input(
                &path,
                MAX_STATE_BYTES,
                "a journal holds 24 bytes per durable write",
            )
            .map_err(|e| std::io::Error::other(format!("verify_state_load: {shown}: {e}")))?;
            let (h, records) = crate::verify::parse_state(&bytes)
                .map_err(|e| std::io::Error::other(format!("verify_state_load: {shown}: {e}")))?;
            let same_shape = (h.checksum, h.files, h.interval, h.base)
                == (spec.checksum, header.files, header.interval, header.base);
            // The same job's journal over a longer region: the file was cut short since (its
            // size now sets this job's region). What the journal says was durable past the
            // end is lost, each such block a lost write; the rest is checked as usual.
            let truncated = same_shape && h.blocks > header.blocks;
            if !same_shape || (h.blocks != header.blocks && !truncated) {
                return Err(std::io::Error::other(format!(
                    "verify_state_load: {shown} was written by another job ({} file(s) of {} \
                     blocks of {} bytes from offset {}, {}); this one has {} of {} of {} from \
                     {}, {}",
                    h.files,
                    h.blocks,
                    h.interval,
                    h.base,
                    h.checksum.name(),
                    header.files,
                    header.blocks,
                    header.interval,
                    header.base,
                    spec.checksum.name()
                )));
            }
            let mut seqs = HashMap::new();
            let mut past_end = std::collections::BTreeMap::new();
            for r in records {
                let (f, b, seq) = (r.file as usize, r.block as usize, r.seq);
                if f < files && b < blocks {
                    maps[f].acknowledge(b, 1, false);
                    seqs.insert((f, b), seq);
                } else if f < files {
                    past_end.insert((f, b), seq);
                }
            }
            if truncated {
                lost_to_truncation = lost_past_end(job, spec, &past_end);
            }
            loaded = Some(Loaded { header: h, seqs });
        } else if spec.only || spec.inline {
            // What an earlier group of this run wrote: each block the write its map says.
            // Anything else (an earlier run's file): every block must hold one of its writes.
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
        }
        let mut bases = vec![job.offset; files];
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
        let _ = crate::files::ownership::set_mark(std::os::fd::AsFd::as_fd(j), MarkState::Kept);
        Ok(())
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
            match (b..map.len()).find(|&x| map.get(x) != Gen::Unwritten && mine(x / per_unit)) {
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

/// What describing a bad block needs besides the verifier: the job, the data its writes
/// were made from, and its files.
#[derive(Clone, Copy)]
struct Ctx<'a> {
    job: &'a JobSpec,
    template: &'a [u8],
    paths: &'a [PathBuf],
}

/// What the threads of a verify phase share.
struct Phase<'a> {
    files: &'a [std::fs::File],
    /// Bytes per read.
    unit: usize,
    /// The next unit to read, counted over all files.
    next: AtomicUsize,
    /// A read failed, or verify_fatal found a bad block: stop.
    halt: AtomicBool,
    /// Bad blocks described so far (at most [`BAD_BLOCKS_KEPT`] are).
    kept: AtomicUsize,
    /// The run is being stopped (Ctrl-C, another job's error).
    stop: &'a AtomicBool,
}

/// What one thread of a verify phase read and found.
#[derive(Default)]
struct Part {
    ios: u64,
    bytes: u64,
    blocks: u64,
    bad: u64,
    bad_blocks: Vec<BadBlock>,
    /// (file, block) of each bad block, not to be checked again.
    forget: Vec<(usize, usize)>,
    /// The read that failed: file, offset, error.
    error: Option<(usize, u64, std::io::Error)>,
}

impl Verifier {
    /// Checks block `block` of `file`, read at `at`, against what it must hold (its map says
    /// `g`).
    fn verdict(
        &self,
        cx: Ctx,
        file: usize,
        block: usize,
        at: u64,
        b: &[u8],
        g: Gen,
    ) -> Result<(), Box<crate::verify::Fault>> {
        let want = match &self.loaded {
            // The journal's run and job, and the durable write of the block.
            Some(l) => Expect {
                offset: at,
                run_id: Some(l.header.run_id),
                job: Some(l.header.job),
                generation: Gen::Any,
                min_seq: l.seqs.get(&(file, block)).copied(),
            },
            None if self
                .handed_jobs
                .get(file)
                .and_then(|j| j.get(block))
                .is_some_and(|&j| j != NOT_HANDED) =>
            {
                // What an earlier group of this run wrote: that write of that job.
                let writer = self.handed_jobs[file][block];
                Expect {
                    offset: at,
                    run_id: Some(self.run_id),
                    job: (writer != ANY_WRITER).then_some(writer),
                    generation: g,
                    min_seq: None,
                }
            }
            None => {
                // What this job wrote, or (verify_only, a reader) what is there.
                let own = !self.spec.only && !self.spec.inline;
                let sole = matches!(self.maps[file], Map::Own(_));
                Expect {
                    offset: at,
                    run_id: own.then_some(self.run_id),
                    // A shared file's block may hold any of its writers' data.
                    job: (own && sole).then_some(self.job),
                    generation: g,
                    min_seq: None,
                }
            }
        };
        match self.spec.checksum {
            Checksum::Pattern => check_pattern(b, &cx.job.data_shape.pattern),
            kind => check(b, kind, &want),
        }
    }

    /// A bad block as the report gives it: where, what was expected and found, and (a bit
    /// flip) the first bad byte; with verify_dump, the files it was dumped to.
    #[allow(clippy::too_many_arguments)]
    fn describe(
        &self,
        cx: Ctx,
        file: usize,
        at: u64,
        b: &[u8],
        g: Gen,
        mut fault: crate::verify::Fault,
    ) -> BadBlock {
        let flip = fault.kind == "bit flip";
        if flip {
            // Counted in the block as stored.
            fault.first_bad_byte = first_bad_byte(cx.job, cx.template, b)
                .map(|d| stored_position(d, u64::from(self.spec.header_at)));
        }
        let dumped = if self.spec.dump {
            dump(cx.job, cx.template, &cx.paths[file], at, b, flip)
        } else {
            Vec::new()
        };
        BadBlock {
            file: cx.paths[file].clone(),
            offset: at,
            len: self.spec.interval,
            expected_generation: match g {
                Gen::Is(n) => n,
                Gen::Any => 255,
                Gen::Unwritten => 0,
            },
            fault,
            found_unix_ns: unix_ns(),
            dumped,
        }
    }

    /// One thread of a threaded verify phase: takes the next unit until none is left or the
    /// phase halts, reads it if it holds a written block (of this job's share of a shared
    /// file), and checks its blocks.
    fn check_units(&self, cx: Ctx, ph: &Phase) -> Part {
        use std::sync::atomic::Ordering::Relaxed;
        let interval = self.spec.interval as usize;
        let per_unit = (ph.unit / interval).max(1);
        let mut buf = crate::engine::AlignedBuf::zeroed(per_unit * interval);
        let mut part = Part::default();
        'units: while !ph.halt.load(Relaxed) && !ph.stop.load(Relaxed) {
            let mut unit = ph.next.fetch_add(1, Relaxed);
            let mut file = 0;
            let map = loop {
                let Some(map) = self.maps.get(file) else {
                    break 'units;
                };
                let units = map.len().div_ceil(per_unit);
                if unit < units {
                    break map;
                }
                unit -= units;
                file += 1;
            };
            if let Map::Shared { k, n, .. } = map {
                if unit % n != *k {
                    continue;
                }
            }
            let blocks = unit * per_unit..((unit + 1) * per_unit).min(map.len());
            if blocks.clone().all(|b| map.get(b) == Gen::Unwritten) {
                continue;
            }
            let offset = self.bases[file] + (blocks.start * interval) as u64;
            let data = &mut buf[..blocks.len() * interval];
            if let Err((done, e)) = read_fully(&ph.files[file], data, offset) {
                part.error = Some((file, offset + done as u64, e));
                ph.halt.store(true, Relaxed);
                break;
            }
            part.ios += 1;
            part.bytes += data.len() as u64;
            let mut at = offset;
            for (block, b) in blocks.zip(data.chunks_exact_mut(interval)) {
                let g = map.get(block);
                if g != Gen::Unwritten {
                    part.blocks += 1;
                    if self.spec.header_at > 0 {
                        swap_header(b, self.spec.header_at as usize);
                    }
                    if let Err(fault) = self.verdict(cx, file, block, at, b, g) {
                        part.bad += 1;
                        part.forget.push((file, block));
                        if ph.kept.fetch_add(1, Relaxed) < BAD_BLOCKS_KEPT {
                            part.bad_blocks
                                .push(self.describe(cx, file, at, b, g, *fault));
                        }
                        if self.spec.fatal {
                            ph.halt.store(true, Relaxed);
                        }
                    }
                }
                at += interval as u64;
            }
        }
        part
    }
}

/// Reads all of `buf` from `offset`; on failure, how much was read and why (the end of the
/// file is an error: the block was written).
fn read_fully(
    f: &std::fs::File,
    buf: &mut [u8],
    offset: u64,
) -> Result<(), (usize, std::io::Error)> {
    use std::os::unix::fs::FileExt;
    let mut done = 0;
    while done < buf.len() {
        match f.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => {
                let e = std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "read returned 0 bytes (end of file or device)",
                );
                return Err((done, e));
            }
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err((done, e)),
        }
    }
    Ok(())
}

impl<E: Engine> Loop<'_, '_, E> {
    /// Seals every block of slot `i`'s write (its data already in place); `write_back`:
    /// update mode's write of the data just read, which cannot be made again from a pattern.
    pub(super) fn seal_write(&mut self, i: usize, write_back: bool) {
        let Some(v) = self.verify.as_mut() else {
            return;
        };
        let u = &mut self.slab[i];
        let (file, offset, len) = (u.file, u.offset, u.len() as u64);
        // Another write of the same blocks in flight: the device may apply either last.
        let end = offset + len;
        for (j, s) in self.st.iter_mut().enumerate() {
            if j != i && s.writing && s.file == file && s.offset < end && offset < s.end {
                s.overlapped = true;
                self.st[i].overlapped = true;
                break;
            }
        }
        let s = &mut self.st[i];
        (s.writing, s.file, s.offset, s.end) = (true, file, offset, end);
        let regenerable = !write_back && u.page_len() % 512 == 0;
        let mut stamp = Stamp {
            flags: if regenerable { FLAG_REGENERABLE } else { 0 },
            offset,
            run_id: v.run_id,
            job: v.job,
            seq: s.write_seq,
            generation: 0,
            written_unix_ns: unix_ns(),
            write_offset: offset,
            write_len: len as u32,
        };
        let interval = v.spec.interval as usize;
        let mut block = v.blocks(file, offset, len).start;
        let begun = &mut v.begun[i];
        begun.clear();
        for page in u.pages_mut() {
            for b in page.chunks_exact_mut(interval) {
                stamp.generation = match &v.maps[file] {
                    Map::Own(map) => map.next(block),
                    Map::Shared { map, .. } => {
                        let w = map.begin(block);
                        begun.push(w);
                        w.0
                    }
                };
                if v.spec.checksum != Checksum::Pattern {
                    seal(b, v.spec.checksum, &stamp);
                    if v.spec.header_at > 0 {
                        swap_header(b, v.spec.header_at as usize);
                    }
                }
                stamp.offset += interval as u64;
                block += 1;
            }
        }
    }

    /// Slot `i`'s write completed (`ok`) or failed: the map learns what its blocks hold.
    pub(super) fn acknowledge(&mut self, i: usize, ok: bool) {
        let Some(v) = self.verify.as_mut() else {
            return;
        };
        let s = &mut self.st[i];
        if !s.writing {
            return;
        }
        let (file, offset, end, overlapped) = (s.file, s.offset, s.end, s.overlapped);
        let seq = s.write_seq;
        (s.writing, s.overlapped) = (false, false);
        if v.spec.header_at > 0 && v.spec.checksum != Checksum::Pattern {
            // The buffer goes back to the data behind its header, so the next write made
            // from it is the job's pattern again.
            let interval = v.spec.interval as usize;
            for page in self.slab[i].pages_mut() {
                for b in page.chunks_exact_mut(interval) {
                    swap_header(b, v.spec.header_at as usize);
                }
            }
        }
        let range = v.blocks(file, offset, end - offset);
        match &mut v.maps[file] {
            Map::Own(map) => {
                for b in range.clone() {
                    // A failed write may have landed in part: either data may be there.
                    let g = map.next(b);
                    map.acknowledge(b, g, overlapped || !ok);
                }
            }
            Map::Shared { map, .. } => {
                for (b, w) in range.clone().zip(v.begun[i].drain(..)) {
                    map.end(b, w, ok);
                }
            }
        }
        if ok && v.spec.backlog > 0 {
            v.backlog.push((file, offset, end - offset));
            self.backlog_due = v.backlog.len() as u64 >= v.spec.backlog;
        }
        if ok && v.journal.is_some() && !overlapped {
            v.dirty[file].extend(range.map(|b| (b as u64, seq)));
            if v.write_through {
                // Durable as acknowledged.
                if let Err(e) = v.journal_durable(Some(file)) {
                    self.journal_failed(e);
                }
            }
        }
    }

    /// A flush of `file` (every file: `None`) made its writes durable: journal them.
    pub(super) fn made_durable(&mut self, file: Option<usize>) {
        if let Some(Err(e)) = self.verify.as_mut().map(|v| v.journal_durable(file)) {
            self.journal_failed(e);
        }
    }

    fn journal_failed(&mut self, e: std::io::Error) {
        if self.error.is_none() {
            self.error = Some(super::JobError {
                file: None,
                offset: None,
                direction: Some("verify".into()),
                errno: e.raw_os_error(),
                message: format!("verify_state_save: the journal could not be written: {e}"),
            });
        }
        self.halt = Halt::Abort;
        self.w
            .stop
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// verify_backlog: once nothing is in flight, read back the last `backlog_batch` of the
    /// writes since the last pause and check them, then go on with the workload. The reads
    /// are not the job's (not counted), the pause is (its figures include it).
    pub(super) fn backlog_pause(&mut self) {
        self.backlog_due = false;
        let Some(v) = self.verify.as_mut() else {
            return;
        };
        let batch = v.spec.backlog_batch as usize;
        let from = v.backlog.len().saturating_sub(batch);
        v.backlog_reads.extend(v.backlog.drain(..).skip(from));
        v.in_backlog = true;
        v.active = true;
        let (exhausted, pace) = (self.exhausted, self.pace.on);
        (self.exhausted, self.pace.on) = (false, false);
        let start = self.clock.now();
        self.run();
        let end = self.clock.now();
        (self.exhausted, self.pace.on) = (exhausted, pace);
        if let Some(v) = self.verify.as_mut() {
            v.backlog_reads.clear();
            v.in_backlog = false;
            v.active = false;
            // The pause's reads are counted as read back: so is its time.
            v.stats.elapsed += Duration::from_nanos(self.clock.ns(end.saturating_sub(start)));
        }
    }

    /// The verify phase: the written files flushed and their cache dropped (unless O_DIRECT),
    /// then every written block read back and checked. Its time and bytes are its own.
    pub(super) fn verify_phase(&mut self) {
        let Some(v) = self.verify.as_mut() else {
            return;
        };
        v.active = true;
        let direct = self.w.job.direct;
        for f in 0..self.w.paths.len() {
            if self
                .verify
                .as_ref()
                .is_some_and(|v| v.maps[f].written() == 0)
            {
                continue;
            }
            if !direct {
                // Dirty pages cannot be dropped: write them first.
                if let Err(e) = self.engine.flush(f, FlushCall::Fdatasync) {
                    self.io_error(Dir::Write, f, 0, e);
                    return;
                }
                if let Err(e) = drop_cache(&self.w.paths[f]) {
                    self.io_error(Dir::Read, f, 0, e);
                    return;
                }
            }
        }
        if let Some(v) = self.verify.as_mut() {
            v.stats.dropped_cache = !direct;
        }
        // The clock's events (deadline, series) belong to the measured job.
        self.tl.event = u64::MAX;
        self.tl.measuring = false;
        self.pace.on = false;
        (self.halt, self.exhausted) = (Halt::No, false);
        let threads = match self.verify.as_ref().map_or(0, |v| v.spec.threads) {
            0 => self.w.verify_threads,
            n => n as usize,
        };
        if let Some(v) = self.verify.as_mut() {
            v.stats.threads = threads as u32;
        }
        let start = self.clock.now();
        if threads > 1 {
            self.threaded_phase(threads);
        } else {
            self.run();
        }
        let end = self.clock.now();
        // Stopped (Ctrl-C, another job's failure) while reading back: the check may not have
        // reached every block, and must not say it did.
        let stopped = self.w.stop.load(std::sync::atomic::Ordering::Relaxed);
        if let Some(v) = self.verify.as_mut() {
            v.stats.elapsed += Duration::from_nanos(self.clock.ns(end.saturating_sub(start)));
            v.stats.cut_short |= stopped;
            v.active = false;
        }
    }

    /// The verify phase's next read.
    pub(super) fn next_verify_read(&mut self) -> Option<IoReq> {
        let unit = self.slab[0].page_len() as u64 * self.slab[0].npages() as u64;
        self.verify.as_mut()?.next_read(unit)
    }

    /// Slot `i`'s read is being issued: a checked read of a file other jobs write notes what
    /// the map holds for its blocks now, so that a write of theirs acknowledged while the
    /// read was in flight is not taken for a lost one.
    pub(super) fn note_read(&mut self, i: usize) {
        let Some(v) = self.verify.as_mut() else {
            return;
        };
        let u = &self.slab[i];
        if let Map::Shared { map, .. } = &v.maps[u.file] {
            let blocks = v.blocks(u.file, u.offset, u.len() as u64);
            let from = &mut v.read_from[i];
            from.clear();
            from.extend(blocks.map(|b| map.snapshot(b)));
        }
    }

    /// Checks the blocks of slot `i`'s completed verify read.
    pub(super) fn check_read(&mut self, i: usize) {
        let Some(v) = self.verify.as_mut() else {
            return;
        };
        let cx = Ctx {
            job: self.w.job,
            template: &self.data.template,
            paths: &self.w.paths,
        };
        let u = &mut self.slab[i];
        let (file, offset, len) = (u.file, u.offset, u.len() as u64);
        v.stats.ios += 1;
        v.stats.bytes += len;
        let interval = v.spec.interval as usize;
        let mut bad = false;
        let mut block = v.blocks(file, offset, len).start;
        let mut at = offset;
        let first = block;
        for page in u.pages_mut() {
            for b in page.chunks_exact_mut(interval) {
                let g = match &v.maps[file] {
                    Map::Own(map) => map.get(block),
                    Map::Shared { map, .. } => map.settled(block, v.read_from[i][block - first]),
                };
                if g != Gen::Unwritten {
                    v.stats.blocks += 1;
                    if v.spec.header_at > 0 {
                        swap_header(b, v.spec.header_at as usize);
                    }
                    if let Err(fault) = v.verdict(cx, file, block, at, b, g) {
                        bad = true;
                        v.stats.bad += 1;
                        if v.stats.bad_blocks.len() < BAD_BLOCKS_KEPT {
                            let d = v.describe(cx, file, at, b, g, *fault);
                            v.stats.bad_blocks.push(d);
                        }
                        v.maps[file].forget(block);
                    }
                }
                block += 1;
                at += interval as u64;
            }
        }
        if bad && v.spec.fatal && self.halt == Halt::No {
            self.halt = Halt::Done;
        }
    }

    /// The verify phase on `threads` threads, apart from the job's engine: each reads the next
    /// unit (the job's I/O size, from the region's start) that holds a written block, with
    /// pread (O_DIRECT if the job is direct), and checks it, until every unit was read, a
    /// read failed, or (verify_fatal) a block was bad.
    fn threaded_phase(&mut self, threads: usize) {
        let unit = self.slab[0].page_len() * self.slab[0].npages();
        let direct = self.w.job.direct;
        let mut files = Vec::new();
        for (f, path) in self.w.paths.iter().enumerate() {
            let mut o = std::fs::OpenOptions::new();
            o.read(true);
            if direct {
                std::os::unix::fs::OpenOptionsExt::custom_flags(&mut o, libc::O_DIRECT);
            }
            match o.open(path) {
                Ok(file) => files.push(file),
                Err(e) => return self.io_error(Dir::Read, f, 0, e),
            }
        }
        let Some(v) = self.verify.as_ref() else {
            return;
        };
        let cx = Ctx {
            job: self.w.job,
            template: &self.data.template,
            paths: &self.w.paths,
        };
        let shared = Phase {
            files: &files,
            unit,
            next: AtomicUsize::new(0),
            halt: AtomicBool::new(false),
            kept: AtomicUsize::new(0),
            stop: self.w.stop,
        };
        let parts: Vec<Part> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let name = format!("iogauge-verify-{t}");
                    let shared = &shared;
                    std::thread::Builder::new()
                        .name(name)
                        .spawn_scoped(s, move || v.check_units(cx, shared))
                        .expect("spawning a verify thread")
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a verify thread panicked"))
                .collect()
        });
        let Some(v) = self.verify.as_mut() else {
            return;
        };
        let mut error = None;
        for p in parts {
            let s = &mut v.stats;
            (s.ios, s.bytes, s.blocks, s.bad) = (
                s.ios + p.ios,
                s.bytes + p.bytes,
                s.blocks + p.blocks,
                s.bad + p.bad,
            );
            s.bad_blocks.extend(p.bad_blocks);
            for (f, b) in p.forget {
                v.maps[f].forget(b);
            }
            // The failed read nearest the start of the files.
            if let Some(e) = p.error {
                if error
                    .as_ref()
                    .is_none_or(|o: &(usize, u64, _)| (e.0, e.1) < (o.0, o.1))
                {
                    error = Some(e);
                }
            }
        }
        v.stats
            .bad_blocks
            .sort_by(|a, b| (&a.file, a.offset).cmp(&(&b.file, b.offset)));
        let fatal = v.spec.fatal && v.stats.bad > 0;
        if let Some((f, offset, e)) = error {
            self.io_error(Dir::Read, f, offset, e);
        } else if self.w.stop.load(std::sync::atomic::Ordering::Relaxed) {
            self.halt = Halt::Abort;
        } else if fatal {
            self.halt = Halt::Done;
        }
    }

    /// The error a verify phase ends the job with: bad blocks, or nothing read back.
    pub(super) fn verify_verdict(&mut self) {
        let Some(v) = self.verify.as_ref() else {
            return;
        };
        if self.error.is_some() || self.halt == Halt::Abort {
            return;
        }
        let s = &v.stats;
        let message = if let Some(first) = s.bad_blocks.first() {
            format!(
                "verify: {} of {} blocks checked were not what was written; the first, at \
                 offset {}: {}",
                s.bad, s.blocks, first.offset, first.fault
            )
        } else if s.blocks == 0 && v.spec.inline {
            "verify: the job read no block to check: nothing was verified".to_string()
        } else if s.blocks == 0 && v.spec.after_write {
            "verify: no block was read back and checked (the job wrote none): nothing was \
             verified"
                .to_string()
        } else {
            return;
        };
        let first = s.bad_blocks.first();
        self.error = Some(super::JobError {
            file: first.map(|b| b.file.clone()),
            offset: first.map(|b| b.offset),
            direction: Some("verify".into()),
            errno: None,
            message,
        });
    }
}

/// Writes a file's dirty pages and drops its cached ones, so what is read next comes from
/// the device.
fn drop_cache(path: &std::path::Path) -> std::io::Result<()> {
    let f = std::fs::File::open(path)?;
    rustix::fs::fadvise(&f, 0, None, rustix::fs::Advice::DontNeed)?;
    Ok(())
}

/// Where a block's data first differs from what its write put there, when the header says
/// the data can be made again.
fn first_bad_byte(job: &JobSpec, template: &[u8], block: &[u8]) -> Option<u64> {
    let want = expected_block(job, template, block)?;
    let len = block.len();
    first_difference(
        &block[HEADER_LEN..len - TRAILER_LEN],
        &want[HEADER_LEN..len - TRAILER_LEN],
    )
    .map(|d| d + HEADER_LEN as u64)
}

/// The block as its write made it, from the header the block carries (intact: its CRC
/// matched) when the data can be made again: the job's pattern with the write's stamps (or
/// its refill), sealed as the write sealed it.
fn expected_block(job: &JobSpec, template: &[u8], block: &[u8]) -> Option<Vec<u8>> {
    let h = crate::verify::read_stamp(block)?;
    if h.flags & FLAG_REGENERABLE == 0 {
        return None;
    }
    let len = block.len();
    let at = (h.offset.checked_sub(h.write_offset)?) as usize;
    // The write up to this block, page by page, as prepare_write made it.
    let page = (job.max_xfer() / u64::from(job.numpages)) as usize;
    let shape = &job.data_shape;
    let mut unit = match job.data {
        DataMode::Zero => vec![0u8; at + len],
        DataMode::Random | DataMode::Pattern => {
            let mut unit = template.get(..at + len)?.to_vec();
            if let Some(seq) = shape.stamp_of(job.data, h.seq) {
                for (p, data) in unit.chunks_mut(page).enumerate() {
                    stamp_page(data, seq, (p * (page / 512)) as u64, shape);
                }
            }
            unit
        }
        DataMode::Refill => {
            let mut unit = vec![0u8; at + len];
            let mut rng = refill_rng(job, h.seq);
            for data in unit.chunks_mut(page) {
                refill_page(&mut rng, data, shape);
            }
            unit
        }
    };
    let mut want = unit.split_off(at);
    let kind = job.verify.map(|v| v.checksum)?;
    crate::verify::seal(&mut want, kind, &h);
    Some(want)
}

/// verify_dump: the block as read, and as written where it can be made again, next to the
/// file as FILE.OFFSET.received and FILE.OFFSET.expected (fio's names), both as stored (with
/// verify_offset, the header where it was swapped to); never over a file iogauge did not
/// write. Returns what was written, or why not.
fn dump(
    job: &JobSpec,
    template: &[u8],
    file: &std::path::Path,
    offset: u64,
    block: &[u8],
    regenerate: bool,
) -> Vec<String> {
    let mut out = Vec::new();
    let header_at = job.verify.map_or(0, |v| v.header_at as usize);
    let mut put = |suffix: &str, bytes: &[u8]| {
        let mut stored;
        let bytes = if header_at > 0 {
            stored = bytes.to_vec();
            swap_header(&mut stored, header_at);
            &stored[..]
        } else {
            bytes
        };
        let mut name = file.as_os_str().to_owned();
        name.push(format!(".{offset}.{suffix}"));
        let path = std::path::PathBuf::from(name);
        let shown = crate::rawpath::display(&path).to_string();
        out.push(
            match crate::files::ownership::write_output(&path, bytes, false) {
                Ok(()) => shown,
                Err(e) => format!("{shown}: not written: {e}"),
            },
        );
    };
    put("received", block);
    if regenerate {
        if let Some(want) = expected_block(job, template, block) {
            put("expected", &want);
        }
    }
    out
}
