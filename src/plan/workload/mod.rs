//! The offset/direction generator: given a job's pattern, block sizes and region, yields the
//! next I/O (direction, file index, byte offset, length). Sequential and random, reproducible
//! from a seed. Where fio's own way applies, random offsets, skewed distributions (zipf,
//! pareto, normal, zoned) and a mix's directions are fio 3.33's, from its generators
//! (`fiorand`); elsewhere "each block once per pass" uses a keyed pseudo-random permutation (a
//! Feistel network with cycle walking), so memory stays constant however large the region.
//! Fixed-size I/O takes a short path; variable
//! sizes (bsrange, bssplit, per-direction bs) and sequential gaps keep byte positions per file,
//! and random variable sizes keep fio's random map, one bit per smallest block
//! (`BlockMap`), so a pass still covers each byte once. Strided zones (`with_zones`) place
//! each stretch of I/O in its zone. This module does no I/O and keeps no statistics.

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::RwMode;
use super::blockmap::BlockMap;
use super::job::{BlockSizes, Distribution};

pub use crate::engine::Dir;
pub use service::{FileService, ServiceKind};

mod draw;
pub mod fiorand;
mod service;
use draw::{Permutation, Sampler};

/// One I/O to issue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoReq {
    pub dir: Dir,
    pub file: usize,
    pub offset: u64,
    /// Bytes to move.
    pub len: u64,
}

/// The shape of a job's region: `nfiles` files, each with `blocks_per_file` blocks of `bs`
/// bytes starting at `base`.
#[derive(Debug, Clone, Copy)]
pub struct Region {
    pub nfiles: u64,
    pub blocks_per_file: u64,
    pub bs: u64,
    pub base: u64,
}

impl Region {
    pub fn total_blocks(&self) -> u64 {
        self.nfiles * self.blocks_per_file
    }

    /// Logical block `b` → (file, byte offset). Consecutive logical blocks rotate over the
    /// files (fio's round-robin file service), each file advancing sequentially.
    #[inline]
    fn locate(&self, b: u64) -> (usize, u64) {
        // One file (most jobs): no division, which costs more than the rest of a draw.
        if self.nfiles == 1 {
            return (0, self.base + b * self.bs);
        }
        (
            (b % self.nfiles) as usize,
            self.base + (b / self.nfiles) * self.bs,
        )
    }
}

/// Picks each I/O's size for one direction.
#[derive(Debug, Clone)]
enum Sizes {
    Fixed(u64),
    Range { min: u64, steps: u64 },
    Split(Vec<(u64, u32)>),
}

impl Sizes {
    fn new(b: &BlockSizes) -> Sizes {
        match b {
            BlockSizes::Fixed(x) => Sizes::Fixed(*x),
            BlockSizes::Range { min, max } => Sizes::Range {
                min: *min,
                steps: max / min,
            },
            BlockSizes::Split(v) => Sizes::Split(v.clone()),
        }
    }

    #[inline]
    fn pick(&self, rng: &mut Xoshiro256PlusPlus) -> u64 {
        match self {
            Sizes::Fixed(x) => *x,
            Sizes::Range { min, steps } => min * (1 + rng.next_u64() % steps),
            Sizes::Split(v) => {
                let r = (rng.next_u64() % 100) as u32;
                v.iter()
                    .find(|e| r < e.1)
                    .unwrap_or_else(|| v.last().expect("split has entries"))
                    .0
            }
        }
    }
}

/// Variable-size state: per direction and file, the byte position and the bytes covered in
/// this pass (sequential I/O goes to the file with the least, so files fill evenly and a pass
/// covers every byte of every file once).
#[derive(Debug, Clone)]
struct Variable {
    sizes: [Sizes; 3],
    pos: [Vec<u64>; 3],
    covered: [Vec<u64>; 3],
    /// Random with a map: the blocks this pass has touched (fio's random map), so a pass
    /// covers each block once; an I/O that would run into a touched block is cut short there.
    touched: Option<BlockMap>,
}

/// `zonemode=strided` in blocks: I/O within the zone at `start` until `size` bytes are done.
#[derive(Debug, Clone)]
struct Zone {
    range: u64,
    size: u64,
    skip: u64,
    start: u64,
    done: u64,
    /// The zone's own pass: random with a map walks a permutation of its blocks.
    perm: Option<Permutation>,
    cursor: u64,
}

/// Yields a job's I/Os in order.
pub struct Workload {
    mode: RwMode,
    region: Region,
    read_pct: u64,
    randommap: bool,
    rng: Xoshiro256PlusPlus,
    perm: Option<Permutation>,
    /// Position within the current pass (random with map) or per direction (sequential).
    cursor: [u64; 3],
    /// Update and the trimwrites: the write that follows its read or trim.
    pending_write: Option<IoReq>,
    /// Bytes left when size-bounded; `None` when time-bounded.
    remaining: Option<u64>,
    /// I/Os left (`number_ios`).
    ios_left: Option<u64>,
    /// Sequential: bytes skipped after each I/O (fio's `rw=read:GAP`; negative: backwards).
    gap: i64,
    /// Passes over the region when size-bounded.
    passes: Option<u64>,
    sampler: Sampler,
    /// zipf, pareto, normal: fio's own generator per file, and the draws so far (which
    /// rotate over the files, as fio's round-robin file service does).
    skew: Option<(Vec<fiorand::Skew>, u64)>,
    /// Uniform random offsets as fio 3.33 draws them (one block size, round-robin files).
    uniform: Option<fiorand::Uniform>,
    /// A mixed job's directions as fio 3.33 chooses them.
    mix: Option<fiorand::Mix>,
    /// Share of random offsets per direction, in percent.
    pct_random: [u64; 3],
    /// `None`: every I/O is one block of `region.bs`.
    var: Option<Variable>,
    zone: Option<Zone>,
    /// Random offsets on multiples of this (`blockalign`, without the random map); 0: of
    /// `region.bs`.
    align: u64,
    /// `file_service_type` other than plain round robin, with several files.
    service: Option<service::Service>,
    /// Whether `next` may take the short path, decided at the first draw (the builders
    /// have all run by then).
    fast: Fast,
}

/// The common case, decided once: one direction, each I/O one block of the region, no
/// read-then-write pairs, file service, zones, gaps, variable sizes or random share.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fast {
    Undecided,
    Yes { dir: Dir, random: bool },
    No,
}

impl Workload {
    /// `passes`: how many times the region is covered (`None`: until stopped).
    pub fn new(
        mode: RwMode,
        region: Region,
        read_pct: u8,
        randommap: bool,
        seed: u64,
        passes: Option<u64>,
    ) -> Self {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let n = region.total_blocks();
        let perm = (mode.is_random() && randommap).then(|| Permutation::new(n, &mut rng));
        let per_pass = n * region.bs * if mode.pair_first().is_some() { 2 } else { 1 };
        Workload {
            mode,
            region,
            read_pct: u64::from(read_pct),
            randommap,
            rng,
            perm,
            cursor: [0; 3],
            pending_write: None,
            remaining: passes.map(|p| p.saturating_mul(per_pass)),
            ios_left: None,
            gap: 0,
            passes,
            sampler: Sampler::Uniform,
            skew: None,
            uniform: None,
            mix: None,
            pct_random: [100; 3],
            var: None,
            zone: None,
            align: 0,
            service: None,
            fast: Fast::Undecided,
        }
    }

    /// Whether this workload's I/Os can come from the short path (see [`Fast`]).
    fn decide_fast(&self) -> Fast {
        let dir = match self.mode {
            RwMode::Read | RwMode::RandRead => Dir::Read,
            RwMode::Write | RwMode::RandWrite => Dir::Write,
            RwMode::Trim | RwMode::RandTrim => Dir::Trim,
            _ => return Fast::No,
        };
        let random = self.mode.is_random();
        let plain = self.service.is_none() && self.var.is_none() && self.zone.is_none();
        match plain && (!random || self.pct_random[dir as usize] >= 100) {
            true => Fast::Yes { dir, random },
            false => Fast::No,
        }
    }

    /// The short path of `next`: the same I/Os the general path gives for such a workload.
    #[inline]
    fn next_fast(&mut self, dir: Dir, random: bool) -> Option<IoReq> {
        if self.done() {
            return None;
        }
        let block = match random {
            true => self.random_block(),
            false => self.sequential_block(dir),
        };
        let (file, offset) = self.region.locate(block);
        let len = self.count(self.region.bs);
        Some(IoReq {
            dir,
            file,
            offset,
            len,
        })
    }

    /// The job's bytes or I/Os (`number_ios`) are all given out.
    #[inline]
    fn done(&self) -> bool {
        self.remaining == Some(0) || self.ios_left == Some(0)
    }

    /// Counts an I/O of `len` bytes against what is left; its length. As fio's, the last I/O
    /// is not cut to the bytes left: a job whose directions have sizes of their own ends past
    /// its `io_size` by less than one I/O (where one block size divides the budget, exactly
    /// on it).
    #[inline]
    fn count(&mut self, len: u64) -> u64 {
        if let Some(r) = &mut self.remaining {
            *r = r.saturating_sub(len);
        }
        if let Some(n) = &mut self.ios_left {
            *n -= 1;
        }
        len
    }

    /// Which file each I/O goes to (`file_service_type`); fixed-size I/O without zones or a
    /// gap, uniform offsets (resolution sees to it). Plain round robin is the default order.
    pub fn with_file_service(mut self, svc: FileService) -> Self {
        let r = self.region;
        if svc != FileService::ROUND_ROBIN && r.nfiles > 1 {
            debug_assert!(self.var.is_none() && self.zone.is_none());
            self.service = Some(service::Service::new(
                svc,
                r.nfiles as usize,
                r.blocks_per_file,
            ));
        }
        self
    }

    /// Sequential patterns skip `gap` bytes after each I/O (fio's `rw=read:GAP`, any number of
    /// bytes). A pass of each file ends where the next I/O would not fit, as fio's does, so a
    /// size-bounded job moves the I/Os that fit, not `size` bytes. A negative gap moves back
    /// (fio's `rw=read:-8k`): the first I/O at the start, each next one at the previous one's
    /// end plus the gap, wrapping to the file's end plus the gap when that falls before the
    /// start, as fio's; a pass is then `size` bytes, as fio counts it.
    pub fn with_gap(mut self, gap: i64) -> Self {
        if gap == 0 {
            return self;
        }
        self.gap = gap;
        let r = self.region;
        let file_bytes = r.blocks_per_file * r.bs;
        let per_file = match file_bytes.checked_sub(r.bs) {
            _ if gap < 0 => r.blocks_per_file,
            Some(room) => room / (r.bs + gap as u64) + 1,
            None => 0,
        };
        let pairs = if self.mode.pair_first().is_some() {
            2
        } else {
            1
        };
        if let Some(p) = self.passes {
            self.remaining = Some(p.saturating_mul(r.nfiles * per_file * r.bs * pairs));
        }
        // Byte positions per file (the variable-size path), each I/O one block.
        let nfiles = r.nfiles as usize;
        self.var = Some(Variable {
            sizes: [(); 3].map(|_| Sizes::Fixed(r.bs)),
            pos: [(); 3].map(|_| vec![0; nfiles]),
            covered: [(); 3].map(|_| vec![0; nfiles]),
            touched: None,
        });
        self
    }

    /// fio's strided zones (`zonemode=strided`; one file, one I/O size): `size` bytes of I/O
    /// within a zone of `range` bytes, then the zone `skip` bytes past its end, wrapping to
    /// the first zone at the region's end. Random I/O with a map covers each zone's blocks
    /// once before repeating any.
    pub fn with_zones(mut self, range: u64, size: u64, skip: u64) -> Self {
        let bs = self.region.bs;
        self.zone = Some(Zone {
            range: (range / bs).max(1),
            size,
            skip: skip / bs,
            start: 0,
            done: 0,
            perm: None,
            cursor: 0,
        });
        self
    }

    /// The next block of a zoned job.
    fn zoned_block(&mut self, random: bool) -> u64 {
        let n = self.region.total_blocks();
        let bs = self.region.bs;
        let z = self.zone.as_mut().expect("zones");
        if z.done >= z.size {
            z.done = 0;
            z.start += z.range + z.skip;
            if z.start >= n {
                z.start = 0;
            }
            z.cursor = 0;
            z.perm = None;
        }
        // A zone reaching past the region's end is cut there.
        let blocks = z.range.min(n - z.start);
        let k = if !random {
            z.cursor % blocks
        } else if self.randommap {
            if z.cursor % blocks == 0 {
                z.perm = Some(Permutation::new(blocks, &mut self.rng));
            }
            z.perm
                .as_ref()
                .expect("a zone permutation")
                .get(z.cursor % blocks)
        } else {
            ((u128::from(self.rng.next_u64()) * u128::from(blocks)) >> 64) as u64
        };
        z.cursor += 1;
        z.done += bs;
        z.start + k
    }

    /// Bytes to move in all, instead of whole passes (`io_size`; update counts its reads and
    /// writes). Ignored when time-bounded.
    pub fn with_total_bytes(mut self, bytes: u64) -> Self {
        if self.remaining.is_some() {
            self.remaining = Some(bytes);
        }
        self
    }

    /// Stop after `n` I/Os.
    pub fn with_number_ios(mut self, n: Option<u64>) -> Self {
        self.ios_left = n;
        self
    }

    /// How random offsets are spread; anything but uniform lets blocks repeat. zipf,
    /// pareto and normal draw each file's blocks with fio's own generator, seeded with
    /// `seeds` (one per file: see `JobSpec::skew_seeds`), so they pick fio's blocks.
    /// `center`: fio's `KIND:VALUE:CENTER`, where in the region the skew sits (0 to 1).
    pub fn with_distribution(
        mut self,
        d: &Distribution,
        center: Option<f64>,
        seeds: &[u32],
    ) -> Self {
        if d.is_uniform() {
            return self;
        }
        self.perm = None;
        self.randommap = false;
        let n = self.region.blocks_per_file;
        debug_assert_eq!(seeds.len() as u64, self.region.nfiles, "one seed per file");
        let per_file = |make: &dyn Fn(u32) -> fiorand::Skew| {
            Some((seeds.iter().map(|&s| make(s)).collect(), 0))
        };
        self.skew = match d {
            Distribution::Zipf(theta) => per_file(&|s| fiorand::Skew::zipf(n, *theta, center, s)),
            Distribution::Pareto(h) => per_file(&|s| fiorand::Skew::pareto(n, *h, center, s)),
            Distribution::Normal(dev) => per_file(&|s| fiorand::Skew::gauss(n, *dev, center, s)),
            Distribution::Zoned { .. } | Distribution::Uniform => {
                self.sampler = Sampler::new(d, self.region.total_blocks(), self.region.bs);
                None
            }
        };
        self
    }

    /// Uniform random offsets drawn as fio 3.33 draws them, from its generator seeded with
    /// `seed` (see `JobSpec::offset_seed`), with its random map: the same blocks in the same
    /// order as fio. Only where fio's way applies as it is: one block size, the files in
    /// turn, no zones; called after the other builders (anything else keeps iogauge's
    /// permutation). A mixed job's directions are fio's too, from `mix_seed`.
    pub fn with_fio_offsets(mut self, seeds: fiorand::FioSeeds, d: &Distribution) -> Self {
        if matches!(self.mode, RwMode::ReadWrite | RwMode::RandRw) {
            let loop_len =
                (self.passes.is_some() && self.var.is_none()).then(|| self.region.total_blocks());
            self.mix = Some(fiorand::Mix::new(seeds.mix, self.read_pct, loop_len));
        }
        let plain = self.var.is_none() && self.zone.is_none() && self.service.is_none();
        if self.mode.is_random() && plain && self.skew.is_none() {
            let r = self.region;
            let u =
                fiorand::Uniform::new(seeds.offset, r.nfiles, r.blocks_per_file, self.randommap);
            self.uniform = match d {
                Distribution::Uniform => u,
                Distribution::Zoned { abs, zones } => {
                    u.and_then(|u| u.zoned(*abs, zones, r.bs, seeds.zone))
                }
                _ => None,
            };
        }
        self
    }

    /// For random patterns, the share of I/Os (per direction, percent) at random offsets; the
    /// rest continue sequentially.
    /// `blockalign`: random offsets (relative to the region's start) on multiples of `align`
    /// bytes, a multiple of `region.bs`; 0 or `region.bs`: unchanged. Only without the
    /// random map (resolution sees to it).
    pub fn with_align(mut self, align: u64) -> Self {
        if align > self.region.bs {
            debug_assert!(!self.randommap && align % self.region.bs == 0);
            self.align = align;
        }
        self
    }

    pub fn with_pct_random(mut self, pct: [u8; 3]) -> Self {
        self.pct_random = pct.map(u64::from);
        self
    }

    /// Per-direction I/O sizes (the smallest is `region.bs`). Anything but one fixed size
    /// keeps byte positions; random I/O whose directions share their sizes keeps a map of the
    /// blocks touched (unless `norandommap`), as fio does; otherwise blocks may repeat.
    pub fn with_sizes(mut self, sizes: &[BlockSizes; 3]) -> Self {
        if sizes
            .iter()
            .all(|s| *s == BlockSizes::Fixed(self.region.bs))
        {
            return self;
        }
        let nfiles = self.region.nfiles as usize;
        // One map when the directions used share their sizes (bsrange, bssplit); with a size
        // per direction (bs=4k,64k) each I/O keeps its size and blocks may repeat.
        let mut used = sizes.iter().zip(self.mode.sized_dirs()).filter(|(_, u)| *u);
        let first = used.next().map(|(s, _)| s);
        let shared = used.all(|(s, _)| Some(s) == first);
        let mapped = self.randommap && self.mode.is_random() && shared;
        self.var = Some(Variable {
            sizes: sizes.clone().map(|s| Sizes::new(&s)),
            pos: [(); 3].map(|_| vec![0; nfiles]),
            covered: [(); 3].map(|_| vec![0; nfiles]),
            touched: mapped.then(|| BlockMap::new(self.region.total_blocks())),
        });
        if !mapped {
            self.perm = None;
            self.randommap = false;
        }
        self
    }

    /// Bytes left in a size-bounded job.
    pub fn remaining(&self) -> Option<u64> {
        self.remaining
    }

    /// fio's uniform draw inline (the common case); every other kind a call of its own.
    #[inline]
    fn random_block(&mut self) -> u64 {
        let n = self.region.total_blocks();
        let Some(u) = &mut self.uniform else {
            return self.random_block_other();
        };
        // A loop with the random map (every block once) starts fio's generators again, as
        // fio's does; without the map fio's stream goes on across loops. A time-based job's
        // files start their passes over as they fill (`Uniform::next`).
        if self.randommap && self.passes.is_some() {
            if self.cursor[0] == n {
                self.cursor[0] = 0;
                u.new_loop();
            }
            self.cursor[0] += 1;
        }
        let nfiles = self.region.nfiles;
        let (file, b) = u.next(nfiles);
        let b = b * nfiles + file;
        match self.align {
            0 => b,
            _ => self.aligned_block(b),
        }
    }

    /// `random_block` without fio's uniform generator: a distribution's sampler, a skewed
    /// generator per file, or the keyed permutation.
    #[inline(never)]
    fn random_block_other(&mut self) -> u64 {
        let n = self.region.total_blocks();
        if !self.randommap {
            let b = match &mut self.skew {
                Some((skews, turn)) => {
                    // fio's generator of the file whose turn it is.
                    let nfiles = skews.len() as u64;
                    let file = *turn % nfiles;
                    *turn += 1;
                    skews[file as usize].next() * nfiles + file
                }
                None => self.sampler.draw(&mut self.rng, n),
            };
            return match self.align {
                0 => b,
                _ => self.aligned_block(b),
            };
        }
        if self.cursor[0] == n {
            self.cursor[0] = 0;
            self.perm = Some(Permutation::new(n, &mut self.rng));
            if let Some(m) = self.var.as_mut().and_then(|v| v.touched.as_mut()) {
                m.clear();
            }
        }
        let i = self.cursor[0];
        self.cursor[0] += 1;
        self.perm
            .as_ref()
            .expect("random with map has a permutation")
            .get(i)
    }

    /// blockalign (only without the map): block `b` down to the aligned block of its file.
    #[inline(never)]
    fn aligned_block(&self, b: u64) -> u64 {
        let per = self.align / self.region.bs;
        let (f, i) = (b % self.region.nfiles, b / self.region.nfiles);
        i / per * per * self.region.nfiles + f
    }

    #[inline]
    fn sequential_block(&mut self, dir: Dir) -> u64 {
        let c = &mut self.cursor[dir as usize];
        let b = *c;
        let next = b + 1;
        *c = if next >= self.region.total_blocks() {
            0
        } else {
            next
        };
        b
    }

    #[inline]
    fn mixed_dir(&mut self) -> Dir {
        if let Some(m) = &mut self.mix {
            return if m.next() { Dir::Read } else { Dir::Write };
        }
        if self.rng.next_u64() % 100 < self.read_pct {
            Dir::Read
        } else {
            Dir::Write
        }
    }

    /// Whether this I/O goes to a random offset.
    #[inline]
    fn is_random(&mut self, dir: Dir) -> bool {
        let pct = self.pct_random[dir as usize];
        self.mode.is_random() && (pct >= 100 || self.rng.next_u64() % 100 < pct)
    }

    /// A random variable-size I/O of at most `len` bytes at a block this pass has not
    /// touched, cut short where the next touched block or the file's end begins (fio's).
    fn mapped(&mut self, len: u64) -> (usize, u64, u64) {
        let r = self.region;
        loop {
            let b = self.random_block();
            let map = self
                .var
                .as_mut()
                .and_then(|v| v.touched.as_mut())
                .expect("a map");
            if map.is_set(b) {
                continue;
            }
            let (file, off) = r.locate(b);
            // Blocks of one file are `nfiles` apart (files take turns).
            let end = r.total_blocks() - r.nfiles + file as u64 + 1;
            let run = map.take_run(b, r.nfiles, len.div_ceil(r.bs), end);
            return (file, off, len.min(run * r.bs));
        }
    }

    /// A variable-size I/O: (file, offset, len).
    fn variable(&mut self, dir: Dir, random: bool) -> (usize, u64, u64) {
        let file_bytes = self.region.blocks_per_file * self.region.bs;
        let var = self.var.as_mut().expect("variable sizes");
        let len = var.sizes[dir as usize].pick(&mut self.rng).min(file_bytes);
        if random && var.touched.is_some() {
            return self.mapped(len);
        }
        if random {
            let b = self.random_block();
            let (file, off) = self.region.locate(b);
            // Cut back to fit, on the alignment's grid (blockalign, else the smallest block).
            let step = self.align.max(self.region.bs);
            let rel = (off - self.region.base).min((file_bytes - len) / step * step);
            return (file, self.region.base + rel, len);
        }
        let var = self.var.as_mut().expect("variable sizes");
        let d = dir as usize;
        loop {
            let covered = &mut var.covered[d];
            let mut file = (0..covered.len())
                .min_by_key(|&f| covered[f])
                .expect("a file");
            if covered[file] >= file_bytes {
                // Every file covered: a new pass.
                covered.iter_mut().for_each(|c| *c = 0);
                file = 0;
            }
            let pos = var.pos[d][file];
            if self.gap > 0 && pos > 0 && pos + len > file_bytes {
                // With a gap, the pass of this file ends where an I/O no longer fits (fio's).
                covered[file] = file_bytes;
                var.pos[d][file] = 0;
                continue;
            }
            let len = len.min(file_bytes - pos);
            var.pos[d][file] = if self.gap >= 0 {
                covered[file] += (len + self.gap as u64).min(file_bytes - pos);
                let next = pos + len + self.gap as u64;
                if next >= file_bytes { 0 } else { next }
            } else {
                covered[file] += len;
                match (pos + len).checked_add_signed(self.gap) {
                    Some(next) if next + len <= file_bytes => next,
                    // Before the start (or past the end): from the end, as fio wraps.
                    _ => file_bytes
                        .saturating_add_signed(self.gap)
                        .min(file_bytes - len),
                }
            };
            return (file, self.region.base + pos, len);
        }
    }
}

impl Iterator for Workload {
    type Item = IoReq;

    /// The short path inline in the caller's loop; the general one a call of its own, so the
    /// common case pays for neither its frame nor its registers.
    #[inline]
    fn next(&mut self) -> Option<IoReq> {
        match self.fast {
            Fast::Yes { dir, random } => self.next_fast(dir, random),
            Fast::No | Fast::Undecided => self.next_general(),
        }
    }
}

impl Workload {
    /// `next` for any workload (and the first call, which decides whether the short path
    /// gives the same I/Os).
    #[inline(never)]
    fn next_general(&mut self) -> Option<IoReq> {
        if self.fast == Fast::Undecided {
            self.fast = self.decide_fast();
            return self.next();
        }
        if self.done() {
            return None;
        }
        let io = match self.pending_write.take() {
            Some(w) => w,
            None => {
                let dir = match self.mode {
                    RwMode::Read | RwMode::RandRead | RwMode::Update => Dir::Read,
                    RwMode::Write | RwMode::RandWrite => Dir::Write,
                    RwMode::ReadWrite | RwMode::RandRw => self.mixed_dir(),
                    RwMode::Trim | RwMode::RandTrim => Dir::Trim,
                    RwMode::TrimWrite | RwMode::RandTrimWrite => Dir::Trim,
                };
                let random = self.is_random(dir);
                let (file, offset, len) = if let Some(s) = &mut self.service {
                    let map = self.randommap;
                    let (file, block) = s.next(dir, random, map, &mut self.rng);
                    (
                        file,
                        self.region.base + block * self.region.bs,
                        self.region.bs,
                    )
                } else if self.var.is_some() {
                    self.variable(dir, random)
                } else {
                    let block = if self.zone.is_some() {
                        self.zoned_block(random)
                    } else if random {
                        self.random_block()
                    } else {
                        self.sequential_block(dir)
                    };
                    let (file, offset) = self.region.locate(block);
                    (file, offset, self.region.bs)
                };
                let io = IoReq {
                    dir,
                    file,
                    offset,
                    len,
                };
                if self.mode.pair_first().is_some() {
                    self.pending_write = Some(IoReq {
                        dir: Dir::Write,
                        ..io
                    });
                }
                io
            }
        };
        let len = self.count(io.len);
        // The write that follows its read moves the same bytes.
        if let Some(w) = &mut self.pending_write {
            w.len = len;
        }
        Some(IoReq { len, ..io })
    }
}

#[cfg(test)]
mod tests;
