//! The offset/direction generator: given a job's pattern, block sizes and region, yields the
//! next I/O (direction, file index, byte offset, length). Sequential and random, reproducible
//! from a seed. "Each block once per pass" uses a keyed pseudo-random permutation (a Feistel
//! network with cycle walking) instead of a bitmap, so memory stays constant however large the
//! region; the same permutation scatters the hot blocks of skewed distributions (zipf, pareto,
//! normal) over the region, as fio's hashing does. Fixed-size I/O takes a short path; variable
//! sizes (bsrange, bssplit, per-direction bs) keep byte positions per file. This module does no
//! I/O and keeps no statistics.

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::RwMode;
use super::job::{BlockSizes, Distribution};

pub use crate::engine::Dir;

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
        (
            (b % self.nfiles) as usize,
            self.base + (b / self.nfiles) * self.bs,
        )
    }
}

/// A keyed bijection on `[0, n)`.
#[derive(Debug, Clone)]
struct Permutation {
    n: u64,
    half_bits: u32,
    keys: [u64; 4],
}

impl Permutation {
    fn new(n: u64, rng: &mut Xoshiro256PlusPlus) -> Self {
        let bits = (64 - (n.max(2) - 1).leading_zeros()).max(2);
        let bits = bits + (bits & 1); // balanced halves
        let keys = [
            rng.next_u64(),
            rng.next_u64(),
            rng.next_u64(),
            rng.next_u64(),
        ];
        Permutation {
            n,
            half_bits: bits / 2,
            keys,
        }
    }

    #[inline]
    fn round(x: u64, key: u64) -> u64 {
        // splitmix64 finaliser: a cheap, well-mixed round function.
        let mut z = x ^ key;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    #[inline]
    fn get(&self, i: u64) -> u64 {
        let mask = (1u64 << self.half_bits) - 1;
        let mut x = i;
        loop {
            let (mut l, mut r) = (x >> self.half_bits, x & mask);
            for &k in &self.keys {
                let t = l ^ (Self::round(r, k) & mask);
                l = r;
                r = t;
            }
            x = (l << self.half_bits) | r;
            // Cycle walking: the domain is at most 4n, so this ends after ~4 steps on average.
            if x < self.n {
                return x;
            }
        }
    }
}

/// Draws skewed ranks in `[0, n)`.
#[derive(Debug, Clone)]
enum Sampler {
    Uniform,
    /// Rejection-inversion sampling (Hörmann and Derflinger) of ranks 1..=n with weight k^-s.
    Zipf {
        s: f64,
        n: f64,
        h_x1: f64,
        h_n: f64,
        cut: f64,
    },
    /// rank = n * u^pow, with pow = ln(h) / ln(1 - h).
    Pareto {
        pow: f64,
    },
    Normal {
        dev: f64,
    },
    /// (cumulative share of I/Os in percent, first block, blocks).
    Zoned(Vec<(u64, u64, u64)>),
}

fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x))
    }
}

fn zipf_h(s: f64, x: f64) -> f64 {
    (-s * x.ln()).exp()
}

fn zipf_hi(s: f64, x: f64) -> f64 {
    let l = x.ln();
    helper2((1.0 - s) * l) * l
}

fn zipf_hi_inv(s: f64, x: f64) -> f64 {
    let t = (x * (1.0 - s)).max(-1.0);
    (helper1(t) * x).exp()
}

/// A uniform double in [0, 1).
#[inline]
fn unit(rng: &mut Xoshiro256PlusPlus) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

impl Sampler {
    fn new(d: &Distribution, n: u64, bs: u64) -> Sampler {
        let nf = n as f64;
        match d {
            Distribution::Uniform => Sampler::Uniform,
            Distribution::Zipf(s) => Sampler::Zipf {
                s: *s,
                n: nf,
                h_x1: zipf_hi(*s, 1.5) - 1.0,
                h_n: zipf_hi(*s, nf + 0.5),
                cut: 2.0 - zipf_hi_inv(*s, zipf_hi(*s, 2.5) - zipf_h(*s, 2.0)),
            },
            Distribution::Pareto(h) => Sampler::Pareto {
                pow: h.ln() / (1.0 - h).ln(),
            },
            Distribution::Normal(dev) => Sampler::Normal {
                dev: (dev / 100.0 * nf).max(1.0),
            },
            Distribution::Zoned { abs, zones } => {
                let mut out = Vec::new();
                let (mut cum, mut start) = (0u64, 0u64);
                for &(access, size) in zones {
                    let blocks = if *abs {
                        size / bs
                    } else {
                        (u128::from(n) * u128::from(size) / 10_000) as u64
                    };
                    let blocks = blocks.max(1).min(n.saturating_sub(start).max(1));
                    cum += u64::from(access);
                    if access > 0 {
                        out.push((cum, start.min(n - 1), blocks));
                    }
                    start += blocks;
                }
                Sampler::Zoned(out)
            }
        }
    }

    /// A rank in [0, n): small ranks are the hot ones (zipf, pareto), or a block (zoned,
    /// normal).
    fn draw(&self, rng: &mut Xoshiro256PlusPlus, n: u64) -> u64 {
        let clamp = |x: f64| (x.max(0.0) as u64).min(n - 1);
        match self {
            Sampler::Uniform => ((u128::from(rng.next_u64()) * u128::from(n)) >> 64) as u64,
            Sampler::Zipf {
                s,
                n: nf,
                h_x1,
                h_n,
                cut,
            } => loop {
                let u = h_n + unit(rng) * (h_x1 - h_n);
                let x = zipf_hi_inv(*s, u);
                let k = (x + 0.5).floor().clamp(1.0, *nf);
                if k - x <= *cut || u >= zipf_hi(*s, k + 0.5) - zipf_h(*s, k) {
                    return clamp(k - 1.0);
                }
            },
            Sampler::Pareto { pow } => clamp((n as f64) * (1.0 - unit(rng).powf(*pow))),
            Sampler::Normal { dev } => loop {
                // Box-Muller: one normal deviate from two uniforms.
                let (u1, u2) = (1.0 - unit(rng), unit(rng));
                let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                let x = n as f64 / 2.0 + z * dev;
                if x >= 0.0 && x < n as f64 {
                    return x as u64;
                }
            },
            Sampler::Zoned(zones) => {
                let r = rng.next_u64() % 100;
                let &(_, start, blocks) = zones
                    .iter()
                    .find(|z| r < z.0)
                    .unwrap_or_else(|| zones.last().expect("zones are checked non-empty"));
                let off = ((u128::from(rng.next_u64()) * u128::from(blocks)) >> 64) as u64;
                (start + off).min(n - 1)
            }
        }
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
    sizes: [Sizes; 2],
    pos: [Vec<u64>; 2],
    covered: [Vec<u64>; 2],
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
    cursor: [u64; 2],
    /// Update mode: the write that follows its read.
    pending_write: Option<IoReq>,
    /// Bytes left when size-bounded; `None` when time-bounded.
    remaining: Option<u64>,
    /// I/Os left (`number_ios`).
    ios_left: Option<u64>,
    /// Sequential: blocks from one I/O to the next.
    stride: u64,
    sampler: Sampler,
    /// Scatters skewed ranks over the region.
    scatter: Option<Permutation>,
    /// Share of random offsets per direction, in percent.
    pct_random: [u64; 2],
    /// `None`: every I/O is one block of `region.bs`.
    var: Option<Variable>,
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
        let per_pass = n * region.bs * if mode == RwMode::Update { 2 } else { 1 };
        Workload {
            mode,
            region,
            read_pct: u64::from(read_pct),
            randommap,
            rng,
            perm,
            cursor: [0, 0],
            pending_write: None,
            remaining: passes.map(|p| p.saturating_mul(per_pass)),
            ios_left: None,
            stride: 1,
            sampler: Sampler::Uniform,
            scatter: None,
            pct_random: [100, 100],
            var: None,
        }
    }

    /// Sequential patterns skip `stride - 1` blocks after each I/O (fio's `rw=read:GAP`),
    /// wrapping to the first block when the next would be past the end.
    pub fn with_stride(mut self, stride: u64) -> Self {
        self.stride = stride.max(1);
        self
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

    /// How random offsets are spread; anything but uniform lets blocks repeat.
    pub fn with_distribution(mut self, d: &Distribution) -> Self {
        if !d.is_uniform() {
            let n = self.region.total_blocks();
            self.sampler = Sampler::new(d, n, self.region.bs);
            self.perm = None;
            self.randommap = false;
            if !matches!(d, Distribution::Zoned { .. }) {
                self.scatter = Some(Permutation::new(n, &mut self.rng));
            }
        }
        self
    }

    /// For random patterns, the share of I/Os (per direction, percent) at random offsets; the
    /// rest continue sequentially.
    pub fn with_pct_random(mut self, pct: [u8; 2]) -> Self {
        self.pct_random = pct.map(u64::from);
        self
    }

    /// Per-direction I/O sizes (multiples of 512; the smallest is `region.bs`). Anything but
    /// one fixed size keeps byte positions and lets random blocks repeat.
    pub fn with_sizes(mut self, sizes: &[BlockSizes; 2]) -> Self {
        if sizes
            .iter()
            .all(|s| *s == BlockSizes::Fixed(self.region.bs))
        {
            return self;
        }
        let nfiles = self.region.nfiles as usize;
        self.var = Some(Variable {
            sizes: [Sizes::new(&sizes[0]), Sizes::new(&sizes[1])],
            pos: [vec![0; nfiles], vec![0; nfiles]],
            covered: [vec![0; nfiles], vec![0; nfiles]],
        });
        self.perm = None;
        self.randommap = false;
        self
    }

    /// Bytes left in a size-bounded job.
    pub fn remaining(&self) -> Option<u64> {
        self.remaining
    }

    #[inline]
    fn random_block(&mut self) -> u64 {
        let n = self.region.total_blocks();
        if !self.randommap {
            let r = self.sampler.draw(&mut self.rng, n);
            return match &self.scatter {
                Some(p) => p.get(r),
                None => r,
            };
        }
        if self.cursor[0] == n {
            self.cursor[0] = 0;
            self.perm = Some(Permutation::new(n, &mut self.rng));
        }
        let i = self.cursor[0];
        self.cursor[0] += 1;
        self.perm
            .as_ref()
            .expect("random with map has a permutation")
            .get(i)
    }

    #[inline]
    fn sequential_block(&mut self, dir: Dir) -> u64 {
        let c = &mut self.cursor[dir as usize];
        let b = *c;
        let next = b + self.stride;
        *c = if next >= self.region.total_blocks() {
            0
        } else {
            next
        };
        b
    }

    #[inline]
    fn mixed_dir(&mut self) -> Dir {
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

    /// A variable-size I/O: (file, offset, len).
    fn variable(&mut self, dir: Dir, random: bool) -> (usize, u64, u64) {
        let file_bytes = self.region.blocks_per_file * self.region.bs;
        let var = self.var.as_mut().expect("variable sizes");
        let len = var.sizes[dir as usize].pick(&mut self.rng).min(file_bytes);
        if random {
            let b = self.random_block();
            let (file, off) = self.region.locate(b);
            let rel =
                (off - self.region.base).min((file_bytes - len) / self.region.bs * self.region.bs);
            return (file, self.region.base + rel, len);
        }
        let var = self.var.as_mut().expect("variable sizes");
        let d = dir as usize;
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
        let len = len.min(file_bytes - pos);
        let step = len + (self.stride - 1) * self.region.bs;
        let next = pos + step;
        covered[file] += step.min(file_bytes - pos);
        var.pos[d][file] = if next >= file_bytes { 0 } else { next };
        (file, self.region.base + pos, len)
    }
}

impl Iterator for Workload {
    type Item = IoReq;

    #[inline]
    fn next(&mut self) -> Option<IoReq> {
        if self.remaining == Some(0) || self.ios_left == Some(0) {
            return None;
        }
        let io = match self.pending_write.take() {
            Some(w) => w,
            None => {
                let dir = match self.mode {
                    RwMode::Read | RwMode::RandRead | RwMode::Update => Dir::Read,
                    RwMode::Write | RwMode::RandWrite => Dir::Write,
                    RwMode::ReadWrite | RwMode::RandRw => self.mixed_dir(),
                };
                let random = self.is_random(dir);
                let (file, offset, len) = if self.var.is_some() {
                    self.variable(dir, random)
                } else {
                    let block = if random {
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
                if self.mode == RwMode::Update {
                    self.pending_write = Some(IoReq {
                        dir: Dir::Write,
                        ..io
                    });
                }
                io
            }
        };
        let io = match &mut self.remaining {
            Some(r) => {
                let len = io.len.min(*r);
                *r -= len;
                if let Some(w) = &mut self.pending_write {
                    w.len = len;
                }
                IoReq { len, ..io }
            }
            None => io,
        };
        if let Some(n) = &mut self.ios_left {
            *n -= 1;
        }
        Some(io)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn region(nfiles: u64, blocks: u64) -> Region {
        Region {
            nfiles,
            blocks_per_file: blocks,
            bs: 4096,
            base: 8192,
        }
    }

    #[test]
    fn permutation_is_a_bijection_for_awkward_sizes() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        for n in [1u64, 2, 3, 5, 17, 64, 100, 1000, 4097] {
            let p = Permutation::new(n, &mut rng);
            let mut seen = vec![false; n as usize];
            for i in 0..n {
                let x = p.get(i);
                assert!(x < n && !seen[x as usize], "n={n} i={i} x={x}");
                seen[x as usize] = true;
            }
        }
    }

    #[test]
    fn random_with_map_covers_every_block_once_per_pass() {
        let r = region(3, 100);
        let w = Workload::new(RwMode::RandRead, r, 50, true, 7, Some(2));
        let mut count: HashMap<(usize, u64), u32> = HashMap::new();
        for io in w {
            assert_eq!(io.dir, Dir::Read);
            assert!(io.offset >= 8192 && (io.offset - 8192) % 4096 == 0);
            *count.entry((io.file, io.offset)).or_default() += 1;
        }
        assert_eq!(count.len(), 300);
        assert!(count.values().all(|&c| c == 2));
    }

    #[test]
    fn random_is_not_sequential_and_is_reproducible() {
        let r = region(1, 1000);
        let a: Vec<_> = Workload::new(RwMode::RandRead, r, 50, true, 9, Some(1)).collect();
        let b: Vec<_> = Workload::new(RwMode::RandRead, r, 50, true, 9, Some(1)).collect();
        assert_eq!(a, b);
        let in_order = a
            .windows(2)
            .filter(|w| w[1].offset == w[0].offset + 4096)
            .count();
        assert!(in_order < 20, "{in_order} sequential steps out of 999");
    }

    #[test]
    fn sequential_rotates_files_and_wraps() {
        let r = region(2, 2);
        let got: Vec<_> = Workload::new(RwMode::Write, r, 0, true, 1, Some(2))
            .map(|i| (i.file, i.offset))
            .collect();
        let pass = [(0, 8192), (1, 8192), (0, 12288), (1, 12288)];
        assert_eq!(got, [pass, pass].concat());
    }

    #[test]
    fn a_gap_skips_blocks_and_wraps_to_the_start() {
        let got: Vec<_> = Workload::new(RwMode::Read, region(1, 10), 0, true, 1, Some(1))
            .with_stride(4)
            .map(|i| (i.offset - 8192) / 4096)
            .collect();
        assert_eq!(got, [0, 4, 8, 0, 4, 8, 0, 4, 8, 0]);
    }

    #[test]
    fn update_reads_then_writes_the_same_block() {
        let w: Vec<_> =
            Workload::new(RwMode::Update, region(1, 50), 50, true, 3, Some(1)).collect();
        assert_eq!(w.len(), 100);
        for pair in w.chunks(2) {
            assert_eq!((pair[0].dir, pair[1].dir), (Dir::Read, Dir::Write));
            assert_eq!(pair[0].offset, pair[1].offset);
        }
    }

    #[test]
    fn mixes_follow_the_percentage() {
        let w = Workload::new(RwMode::RandRw, region(1, 10_000), 70, false, 5, Some(1));
        let reads = w.filter(|i| i.dir == Dir::Read).count();
        assert!((6700..7300).contains(&reads), "{reads}");
    }

    fn hits(w: Workload, n: usize) -> Vec<u32> {
        let mut h = vec![0u32; n];
        for io in w {
            h[((io.offset - 8192) / 4096) as usize] += 1;
        }
        h
    }

    #[test]
    fn skewed_distributions_concentrate_and_zones_follow_their_shares() {
        let r = region(1, 10_000);
        let draws = Some(5); // 50,000 I/Os
        let top_share = |d: Distribution| {
            let w = Workload::new(RwMode::RandRead, r, 50, true, 3, draws).with_distribution(&d);
            let mut h = hits(w, 10_000);
            h.sort_unstable_by(|a, b| b.cmp(a));
            let top: u32 = h[..1000].iter().sum();
            f64::from(top) / 50_000.0
        };
        // Uniform: the busiest 10% of blocks get little more than 10% of I/Os.
        assert!(top_share(Distribution::Uniform) < 0.2);
        assert!(top_share(Distribution::Zipf(1.2)) > 0.6);
        // pareto:0.8 sends ~80% of I/Os to 20% of the blocks, so over half to the top 10%.
        assert!(top_share(Distribution::Pareto(0.8)) > 0.5);
        // normal:5 keeps ~95% within two deviations: a tenth of the region holds >= 68%.
        assert!(top_share(Distribution::Normal(5.0)) > 0.6);
        let zoned = Distribution::Zoned {
            abs: false,
            zones: vec![(60, 1000), (40, 9000)],
        };
        let w = Workload::new(RwMode::RandRead, r, 50, true, 3, draws).with_distribution(&zoned);
        let h = hits(w, 10_000);
        let first: u32 = h[..1000].iter().sum();
        assert!(
            (0.57..0.63).contains(&(f64::from(first) / 50_000.0)),
            "{first}"
        );
    }

    #[test]
    fn pct_random_mixes_sequential_runs_in() {
        let w = Workload::new(RwMode::RandRead, region(1, 100_000), 50, false, 4, None)
            .with_pct_random([25, 100]);
        let v: Vec<_> = w.take(20_000).collect();
        let seq = v
            .windows(2)
            .filter(|p| p[1].offset == p[0].offset + 4096)
            .count();
        // 75% of I/Os continue the sequential cursor; consecutive only when both are.
        assert!((9_000..14_000).contains(&seq), "{seq}");
    }

    #[test]
    fn variable_sizes_move_exact_bytes_and_stay_inside_the_files() {
        let r = region(2, 64); // 2 files of 256 KiB, base 8 KiB
        let split = BlockSizes::Split(vec![(4096, 50), (16384, 80), (65536, 100)]);
        for mode in [RwMode::Read, RwMode::RandWrite, RwMode::RandRw] {
            let sizes = [
                split.clone(),
                BlockSizes::Range {
                    min: 4096,
                    max: 32768,
                },
            ];
            let w = Workload::new(mode, r, 50, true, 9, Some(3)).with_sizes(&sizes);
            let (mut bytes, mut lens) = (0, std::collections::BTreeSet::new());
            for io in w {
                assert!(
                    io.offset >= 8192 && io.offset + io.len <= 8192 + 64 * 4096,
                    "{io:?}"
                );
                assert_eq!(io.offset % 4096, 0);
                bytes += io.len;
                lens.insert(io.len);
            }
            assert_eq!(bytes, 3 * 2 * 64 * 4096, "{mode:?}");
            assert!(lens.len() >= 3, "{mode:?}: {lens:?}");
        }
        // Sequential variable sizes tile the files: every byte once per pass.
        let w = Workload::new(RwMode::Read, r, 50, true, 9, Some(1))
            .with_sizes(&[split.clone(), split]);
        let mut seen = vec![0u8; 128];
        for io in w {
            for b in 0..io.len / 4096 {
                seen[io.file * 64 + ((io.offset - 8192) / 4096 + b) as usize] += 1;
            }
        }
        assert!(seen.iter().all(|&c| c == 1), "{seen:?}");
    }

    #[test]
    fn total_bytes_and_number_ios_bound_the_job() {
        let w = Workload::new(RwMode::Read, region(1, 10), 50, true, 1, Some(1))
            .with_total_bytes(25 * 4096);
        let v: Vec<_> = w.collect();
        assert_eq!(v.len(), 25, "io_size beyond the region wraps around");
        let w = Workload::new(RwMode::Update, region(1, 10), 50, true, 1, Some(1))
            .with_number_ios(Some(7));
        assert_eq!(w.count(), 7);
    }

    #[test]
    fn norandommap_repeats_blocks() {
        let w = Workload::new(RwMode::RandRead, region(1, 1000), 50, false, 5, Some(1));
        let distinct: std::collections::HashSet<_> = w.map(|i| i.offset).collect();
        // Drawing 1000 of 1000 with replacement leaves about 1/e of blocks untouched.
        assert!((560..720).contains(&distinct.len()), "{}", distinct.len());
    }
}
