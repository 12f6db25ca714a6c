//! The verify phase: the written files flushed and their cache dropped, every written block
//! read back (through the job's engine, or on threads of its own) and checked against what the
//! map says it must hold, and each bad block described, and dumped with verify_dump.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::time::Duration;

use super::super::data::{refill_page, refill_rng, stamp_page};
use super::super::{Halt, Loop};
use super::{Map, NOT_HANDED, Verifier};
use crate::engine::{Engine, FlushCall};
use crate::plan::workload::{Dir, IoReq};
use crate::plan::{DataMode, JobSpec};
use crate::stats::{BAD_BLOCKS_KEPT, BadBlock};
use crate::units::unix_ns;
use crate::verify::{
    ANY_WRITER, Checksum, Expect, FLAG_REGENERABLE, Gen, HEADER_LEN, TRAILER_LEN, check,
    check_pattern, first_difference, stored_position, swap_header,
};

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
            Checksum::Pattern => {
                let (pattern, phase) = expected_pattern(cx.job, self.spec.interval, at);
                check_pattern(b, &pattern, phase)
            }
            Checksum::PatternHdr => {
                check(b, Checksum::PatternHdr, &want)?;
                // Between header and trailer, the pattern as the write laid it.
                let (pattern, phase) = expected_pattern(cx.job, self.spec.interval, at);
                let (h, t) = (crate::verify::HEADER_LEN, crate::verify::TRAILER_LEN);
                check_pattern(&b[h..b.len() - t], &pattern, phase + h).map_err(|mut f| {
                    f.first_bad_byte = f.first_bad_byte.map(|x| x + h as u64);
                    f
                })
            }
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
            if blocks
                .clone()
                .all(|b| map.get(b) == Gen::Unwritten || self.was_checked(file, b))
            {
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
    let mut done = 0;
    while done < buf.len() {
        let got = crate::platform::sys::io::pread(f, &mut buf[done..], offset + done as u64);
        match got.map_err(std::io::Error::from) {
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
    /// The verify phase: the written files flushed and their cache dropped (unless O_DIRECT),
    /// then every written block read back and checked. Its time and bytes are its own.
    pub(in crate::runner::worker) fn verify_phase(&mut self) {
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
    pub(in crate::runner::worker) fn next_verify_read(&mut self) -> Option<IoReq> {
        let unit = self.slab[0].page_len() as u64 * self.slab[0].npages() as u64;
        self.verify.as_mut()?.next_read(unit)
    }

    /// Slot `i`'s read is being issued: a checked read of a file other jobs write notes what
    /// the map holds for its blocks now, so that a write of theirs acknowledged while the
    /// read was in flight is not taken for a lost one.
    pub(in crate::runner::worker) fn note_read(&mut self, i: usize) {
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
    pub(in crate::runner::worker) fn check_read(&mut self, i: usize) {
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
                    if v.in_backlog {
                        v.set_checked(file, block, true);
                    }
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
                crate::platform::sys::direct(&mut o);
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
                        .spawn_scoped(s, move || {
                            // verify_async_cpus: the checking threads' CPUs, as fio's.
                            let cpus = cx.job.verify_cpus.as_deref();
                            if let Some(Err(e)) = cpus.map(super::super::prio::pin) {
                                let why = format!("sched_setaffinity (verify_async_cpus): {e}");
                                return Part {
                                    error: Some((0, 0, std::io::Error::new(e.kind(), why))),
                                    ..Part::default()
                                };
                            }
                            v.check_units(cx, shared)
                        })
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
    pub(in crate::runner::worker) fn verify_verdict(&mut self) {
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
        self.error = Some(super::super::JobError {
            file: first.map(|b| b.file.clone()),
            offset: first.map(|b| b.offset),
            direction: Some("verify".into()),
            // fio's errno for data that is not what was written: EILSEQ.
            errno: first.map(|_| crate::platform::abi::errno::EILSEQ),
            message,
        });
    }
}

/// Writes a file's dirty pages and drops its cached ones, so what is read next comes from
/// the device.
fn drop_cache(path: &std::path::Path) -> std::io::Result<()> {
    let f = std::fs::File::open(path)?;
    crate::platform::sys::fs::fadvise(&f, 0, None, crate::platform::sys::fs::Advice::DontNeed)?;
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
            match crate::files::named::write_output(&path, bytes, false) {
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

/// The pattern the block at file offset `at` holds, and where in it the block starts. Each
/// write carries the pattern from its own start (fio's way), with its own offset where the
/// pattern has fio's `%o`: a block starts at the pattern's start when the pattern divides the
/// block size or the block is a whole write; otherwise (resolution allows it only for
/// fixed-size writes laid from the job's offset, as it allows `%o`) at its distance from its
/// write's start.
fn expected_pattern(
    job: &crate::plan::JobSpec,
    interval: u64,
    at: u64,
) -> (std::borrow::Cow<'_, [u8]>, usize) {
    let shape = &job.data_shape;
    let len = shape.pattern.len().max(1) as u64;
    let write = job.xfer();
    let whole = interval >= write;
    let into_write = if whole {
        0
    } else {
        at.saturating_sub(job.offset) % write
    };
    let phase = if interval % len == 0 {
        0
    } else {
        (into_write % len) as usize
    };
    if !shape.pattern_per_write() {
        return (std::borrow::Cow::Borrowed(&shape.pattern), phase);
    }
    // The block's bytes as its write made them.
    let mut want = vec![0u8; interval as usize];
    let pattern = (&shape.pattern[..], &shape.pattern_offsets[..]);
    let write_at = at - into_write;
    crate::verify::fill_pattern(
        &mut want,
        pattern,
        shape.pattern_segment,
        write_at,
        into_write,
    );
    (std::borrow::Cow::Owned(want), 0)
}
