//! The offset/direction generator: given a job's pattern, block size and region, yields the next
//! I/O (direction, file index, byte offset). Sequential and random, reproducible from a seed.
//! "Each block once per pass" uses a keyed pseudo-random permutation (a Feistel network with
//! cycle walking) instead of a bitmap, so memory stays constant however large the region.
//! This module does no I/O and keeps no statistics.

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::RwMode;

/// Direction of one I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    Read = 0,
    Write = 1,
}

/// One I/O to issue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoReq {
    pub dir: Dir,
    pub file: usize,
    pub offset: u64,
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
    /// Update mode: the block whose write follows its read.
    pending_write: Option<u64>,
    /// I/Os left when size-bounded; `None` when time-bounded.
    remaining: Option<u64>,
    /// Sequential: blocks from one I/O to the next.
    stride: u64,
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
        let per_pass = if mode == RwMode::Update { 2 * n } else { n };
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
            stride: 1,
        }
    }

    /// Sequential patterns skip `stride - 1` blocks after each I/O (fio's `rw=read:GAP`),
    /// wrapping to the first block when the next would be past the end.
    pub fn with_stride(mut self, stride: u64) -> Self {
        self.stride = stride.max(1);
        self
    }

    /// I/Os left in a size-bounded job.
    pub fn remaining(&self) -> Option<u64> {
        self.remaining
    }

    #[inline]
    fn random_block(&mut self) -> u64 {
        let n = self.region.total_blocks();
        if !self.randommap {
            // Lemire's multiply-shift: uniform in [0, n) without division.
            return ((u128::from(self.rng.next_u64()) * u128::from(n)) >> 64) as u64;
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
}

impl Iterator for Workload {
    type Item = IoReq;

    #[inline]
    fn next(&mut self) -> Option<IoReq> {
        if let Some(r) = &mut self.remaining {
            if *r == 0 {
                return None;
            }
            *r -= 1;
        }
        let (dir, block) = match self.mode {
            RwMode::Read => (Dir::Read, self.sequential_block(Dir::Read)),
            RwMode::Write => (Dir::Write, self.sequential_block(Dir::Write)),
            RwMode::RandRead => (Dir::Read, self.random_block()),
            RwMode::RandWrite => (Dir::Write, self.random_block()),
            RwMode::ReadWrite => {
                let d = self.mixed_dir();
                (d, self.sequential_block(d))
            }
            RwMode::RandRw => {
                let d = self.mixed_dir();
                (d, self.random_block())
            }
            RwMode::Update => match self.pending_write.take() {
                Some(b) => (Dir::Write, b),
                None => {
                    let b = self.random_block();
                    self.pending_write = Some(b);
                    (Dir::Read, b)
                }
            },
        };
        let (file, offset) = self.region.locate(block);
        Some(IoReq { dir, file, offset })
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

    #[test]
    fn norandommap_repeats_blocks() {
        let w = Workload::new(RwMode::RandRead, region(1, 1000), 50, false, 5, Some(1));
        let distinct: std::collections::HashSet<_> = w.map(|i| i.offset).collect();
        // Drawing 1000 of 1000 with replacement leaves about 1/e of blocks untouched.
        assert!((560..720).contains(&distinct.len()), "{}", distinct.len());
    }
}
