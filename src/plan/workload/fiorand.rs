//! fio's own generators for its skewed random distributions (zipf, pareto, normal), written
//! from fio 3.33's `lib/rand.c`, `lib/zipf.c`, `lib/gauss.c` and `hash.h`, so that a job file
//! run by iogauge reads and writes the same blocks, in the same order, as fio run on it: a
//! cache that holds zipf's hot blocks holds them for both tools. Each file has its own
//! generator, seeded as fio seeds it: the Jenkins hash of the file's name as fio spells it,
//! times fio's number for the job (1 for the first job of the file, clones counted).
//!
//! What fio does, kept as it does it: the 32-bit Tausworthe generator (taus88) and its
//! seeding, where `(2^31) + (2^17) + (2^7)` is C's exclusive or (53); fio's jhash, which adds
//! one byte, not one word, of each 12-byte block; zipf's normalising sum capped at 10 million
//! terms; the multiplicative hash that scatters the hot ranks; and the first draw, which
//! becomes the offset every rank is shifted by.

/// fio's `GOLDEN_RATIO_64`: `__hash_u64` multiplies by it.
const GOLDEN_RATIO_64: u64 = 0x61C8_8646_80B5_83EB;

/// fio's `JHASH_INITVAL` (`GOLDEN_RATIO_32`).
const JHASH_INITVAL: u32 = 0x61C8_8647;

/// fio's `FRAND32_MAX`.
const FRAND32_MAX: f64 = u32::MAX as f64;

/// zipf's normalising sum stops after this many terms (fio's `ZIPF_MAX_GEN`).
const ZIPF_MAX_GEN: u64 = 10_000_000;

/// fio's 32-bit combined Tausworthe generator (L'Ecuyer's taus88).
#[derive(Debug, Clone)]
pub(super) struct Taus88 {
    s1: u32,
    s2: u32,
    s3: u32,
}

impl Taus88 {
    /// Seeded as fio's `__init_rand32`, six draws discarded.
    pub(super) fn new(seed: u32) -> Taus88 {
        let at_least = |x: u32, m: u32| if x < m { x + m } else { x };
        let lcg = |x: u32| x.wrapping_mul(69069) ^ seed;
        // fio writes the start as (2^31) + (2^17) + (2^7); in C, ^ is exclusive or.
        let start = (2 ^ 31) + (2 ^ 17) + (2 ^ 7);
        let s1 = at_least(lcg(start), 1);
        let s2 = at_least(lcg(s1), 7);
        let s3 = at_least(lcg(s2), 15);
        let mut t = Taus88 { s1, s2, s3 };
        for _ in 0..6 {
            t.next_u32();
        }
        t
    }

    #[inline]
    pub(super) fn next_u32(&mut self) -> u32 {
        #[inline]
        fn step(s: u32, a: u32, b: u32, c: u32, d: u32) -> u32 {
            ((s & c) << d) ^ (((s << a) ^ s) >> b)
        }
        self.s1 = step(self.s1, 13, 19, 4_294_967_294, 12);
        self.s2 = step(self.s2, 2, 25, 4_294_967_288, 4);
        self.s3 = step(self.s3, 3, 11, 4_294_967_280, 17);
        self.s1 ^ self.s2 ^ self.s3
    }
}

/// fio's `jhash` of `key` with `initval` 0, as fio's `hash.h` has it.
pub fn jhash(key: &[u8]) -> u32 {
    fn mix(a: &mut u32, b: &mut u32, c: &mut u32) {
        *a = a.wrapping_sub(*c);
        *a ^= c.rotate_left(4);
        *c = c.wrapping_add(*b);
        *b = b.wrapping_sub(*a);
        *b ^= a.rotate_left(6);
        *a = a.wrapping_add(*c);
        *c = c.wrapping_sub(*b);
        *c ^= b.rotate_left(8);
        *b = b.wrapping_add(*a);
        *a = a.wrapping_sub(*c);
        *a ^= c.rotate_left(16);
        *c = c.wrapping_add(*b);
        *b = b.wrapping_sub(*a);
        *b ^= a.rotate_left(19);
        *a = a.wrapping_add(*c);
        *c = c.wrapping_sub(*b);
        *c ^= b.rotate_left(4);
        *b = b.wrapping_add(*a);
    }
    fn fin(a: &mut u32, b: &mut u32, c: &mut u32) {
        *c ^= *b;
        *c = c.wrapping_sub(b.rotate_left(14));
        *a ^= *c;
        *a = a.wrapping_sub(c.rotate_left(11));
        *b ^= *a;
        *b = b.wrapping_sub(a.rotate_left(25));
        *c ^= *b;
        *c = c.wrapping_sub(b.rotate_left(16));
        *a ^= *c;
        *a = a.wrapping_sub(c.rotate_left(4));
        *b ^= *a;
        *b = b.wrapping_sub(a.rotate_left(14));
        *c ^= *b;
        *c = c.wrapping_sub(b.rotate_left(24));
    }
    let len = key.len() as u32;
    let mut a = JHASH_INITVAL.wrapping_add(len);
    let (mut b, mut c) = (a, a);
    let mut k = key;
    while k.len() > 12 {
        // fio's adds the byte at each word's start, not the word.
        a = a.wrapping_add(u32::from(k[0]));
        b = b.wrapping_add(u32::from(k[4]));
        c = c.wrapping_add(u32::from(k[8]));
        mix(&mut a, &mut b, &mut c);
        k = &k[12..];
    }
    if k.is_empty() {
        return c;
    }
    let byte = |i: usize, shift: u32| k.get(i).map_or(0, |&x| u32::from(x) << shift);
    c = c.wrapping_add(byte(11, 24) + byte(10, 16) + byte(9, 8) + byte(8, 0));
    b = b.wrapping_add(byte(7, 24) + byte(6, 16) + byte(5, 8) + byte(4, 0));
    a = a.wrapping_add(byte(3, 24) + byte(2, 16) + byte(1, 8) + byte(0, 0));
    fin(&mut a, &mut b, &mut c);
    c
}

/// The seed of a file's generator, as fio's `__init_rand_distribution` makes it with
/// `randrepeat` on: the hash of the file's name times the job's number (1-based).
pub fn file_seed(name: &[u8], job_number: u32) -> u32 {
    jhash(name).wrapping_mul(job_number)
}

/// One file's skewed generator: a block in `[0, nranges)` per draw.
#[derive(Debug, Clone)]
pub(super) enum Skew {
    Zipf {
        rand: Taus88,
        n: u64,
        theta: f64,
        zeta2: f64,
        zetan: f64,
        off: u64,
        /// alpha, eta and 0.5^theta, made with the normalising sum at the first draw.
        consts: Option<(f64, f64, f64)>,
    },
    Pareto {
        rand: Taus88,
        n: u64,
        pow: f64,
        off: u64,
    },
    Gauss {
        rand: Taus88,
        n: u64,
        stddev: u32,
        /// Added to each hashed draw (fio's `rand_off`): 0 without a center.
        off: u64,
    },
}

impl Skew {
    /// fio's `zipf_init` (no center: the first draw is the offset). Its normalising sum (up
    /// to 10 million powers: a fraction of a second) is made at the first draw, so a workload
    /// built only to count its bytes does not pay for it.
    pub(super) fn zipf(n: u64, theta: f64, center: Option<f64>, seed: u32) -> Skew {
        let mut rand = Taus88::new(seed);
        let off = centred(n, center, u64::from(rand.next_u32()));
        let zeta2 = 1.0f64.powf(theta) + 0.5f64.powf(theta);
        Skew::Zipf {
            rand,
            n,
            theta,
            zeta2,
            zetan: 0.0,
            off,
            consts: None,
        }
    }

    /// fio's `pareto_init`.
    pub(super) fn pareto(n: u64, h: f64, center: Option<f64>, seed: u32) -> Skew {
        let mut rand = Taus88::new(seed);
        let off = centred(n, center, u64::from(rand.next_u32()));
        Skew::Pareto {
            rand,
            n,
            pow: h.ln() / (1.0 - h).ln(),
            off,
        }
    }

    /// fio's `gauss_init`: `dev` in percent of the blocks; a center moves the bell's
    /// offset by `n × (center − 0.5)` blocks, kept in 32 bits as fio keeps it (a negative
    /// one wraps, as x86 converts it).
    pub(super) fn gauss(n: u64, dev: f64, center: Option<f64>, seed: u32) -> Skew {
        let mut stddev = 0u32;
        if dev != 0.0 {
            stddev = ((n as f64 * dev) / 100.0).ceil() as u32;
            if u64::from(stddev) > n / 2 {
                stddev = (n / 2) as u32;
            }
        }
        Skew::Gauss {
            rand: Taus88::new(seed),
            n,
            stddev,
            off: center.map_or(0, |c| u64::from((n as f64 * (c - 0.5)) as i64 as u32)),
        }
    }

    /// The next block, as fio's `zipf_next`, `pareto_next` and `gauss_next` give it.
    pub(super) fn next(&mut self) -> u64 {
        match self {
            Skew::Zipf {
                rand,
                n,
                theta,
                zeta2,
                zetan,
                off,
                consts,
            } => {
                let (alpha, eta, half) = *consts.get_or_insert_with(|| {
                    for i in 0..(*n).min(ZIPF_MAX_GEN) {
                        *zetan += (1.0 / (i + 1) as f64).powf(*theta);
                    }
                    // What fio's zipf_next computes on every call, from the same numbers.
                    let alpha = 1.0 / (1.0 - *theta);
                    let eta =
                        (1.0 - (2.0 / *n as f64).powf(1.0 - *theta)) / (1.0 - *zeta2 / *zetan);
                    (alpha, eta, 0.5f64.powf(*theta))
                });
                let nf = *n as f64;
                let uni = f64::from(rand.next_u32()) / FRAND32_MAX;
                let z = uni * *zetan;
                let val: u64 = if z < 1.0 {
                    1
                } else if z < 1.0 + half {
                    2
                } else {
                    1 + (nf * (eta * uni - eta + 1.0).powf(alpha)) as u64
                };
                scatter(val - 1, *off, *n)
            }
            Skew::Pareto { rand, n, pow, off } => {
                let r = f64::from(rand.next_u32()) / FRAND32_MAX;
                let k = ((*n - 1) as f64 * r.powf(*pow)) as u64;
                scatter(k, *off, *n)
            }
            Skew::Gauss {
                rand,
                n,
                stddev,
                off,
            } => {
                let mut sum = 0u64;
                for _ in 0..12 {
                    sum += u64::from(rand.next_u32()) % (*n + 1);
                }
                sum = sum.div_ceil(12);
                if *stddev != 0 {
                    let r = rand.next_u32();
                    let vr = (f64::from(*stddev) * (f64::from(r) / (FRAND32_MAX + 1.0))) as i32;
                    let mut dev = vr.wrapping_sub((*stddev / 2) as i32);
                    // fio loops while it does not fit (forever, were dev 0 and sum n).
                    while (dev as i64 as u64).wrapping_add(sum) >= *n && dev != 0 {
                        dev /= 2;
                    }
                    sum = sum.wrapping_add(dev as i64 as u64);
                }
                scatter(sum, *off, *n)
            }
        }
    }
}

/// zipf's and pareto's offset: with a center (`random_distribution=zipf:THETA:CENTER`),
/// `n × center` blocks in place of the generator's first draw, which fio still takes.
fn centred(n: u64, center: Option<f64>, drawn: u64) -> u64 {
    center.map_or(drawn, |c| (n as f64 * c) as u64)
}

/// A 64-bit seed folded into the 32 bits fio's generators take (where fio's own seed does
/// not apply: `randrepeat=0`, a workload started afresh).
pub fn fold(seed: u64) -> u32 {
    (seed ^ (seed >> 32)) as u32
}

/// fio 3.33's seed of a job's offset generator with `randrepeat` (its `FIO_RANDSEED` times
/// the job's number, cut to the 32 bits its generator takes). fio 3.35 and later seed it
/// from `randseed` instead, so they pick other blocks than 3.33 for the same job.
pub fn offset_seed(job_number: u32) -> u32 {
    0xb189_9bed_u32.wrapping_mul(job_number)
}

/// The seeds of a job's generators as fio 3.33 makes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FioSeeds {
    /// Offsets (`FIO_RAND_BLOCK_OFF`; with `randrepeat`, fio's constant times the job number).
    pub offset: u32,
    /// A mix's directions (`FIO_RAND_MIX_OFF`).
    pub mix: u32,
    /// zoned distributions' choice of zone (`FIO_RAND_ZONE_OFF`).
    pub zone: u32,
}

/// fio 3.33's `rand_seeds[index]`: from `randseed` (fio's default 0x89), multiplied through
/// its seed chain, times the job's number, plus the index, cut to the 32 bits its
/// generators take.
pub fn chain_seed(rand_seed: u64, job_number: u32, index: u64) -> u32 {
    const K: u64 = 0x9e37_0001;
    let mut s = rand_seed;
    for _ in 0..4 + index {
        s = s.wrapping_mul(K);
    }
    s.wrapping_mul(u64::from(job_number)).wrapping_add(index) as u32
}

/// fio's `FIO_RAND_MIX_OFF` and `FIO_RAND_ZONE_OFF`.
pub const MIX_OFF: u64 = 4;
pub const ZONE_OFF: u64 = 16;

/// fio's zoned and zoned_abs distributions (`__get_next_rand_offset_zoned[_abs]`): a draw of
/// 1 to 100 from the zone generator picks the zone that holds that percent of the accesses,
/// then the offset generator a block within it. Per percent: the zone's first block and its
/// length, in blocks of a file of `blocks`.
#[derive(Debug, Clone)]
struct Zones {
    seed: u32,
    rand: Taus88,
    table: Vec<(u64, u64)>,
}

impl Zones {
    /// `zones`: (share of accesses in percent, size) in zoned's hundredths of a percent or
    /// zoned_abs's bytes. `None` where fio's table would differ (a size in fractions of a
    /// percent, accesses not adding up to 100, an absolute zone past the file's end).
    fn new(abs: bool, zones: &[(u32, u64)], blocks: u64, bs: u64, seed: u32) -> Option<Zones> {
        let mut table = Vec::with_capacity(100);
        let mut prev = 0u64;
        for &(access, size) in zones {
            let (start, end) = match abs {
                // fio's size_prev / ba and size / ba.
                true => (prev / bs, (prev + size) / bs),
                false if size % 100 != 0 => return None,
                // fio's percent of the file's blocks: stotal * lastb / 100 and the length
                // lastb * (send - stotal) / 100.
                false => {
                    let (p, s) = (prev / 100, (prev + size) / 100);
                    (p * blocks / 100, p * blocks / 100 + blocks * (s - p) / 100)
                }
            };
            if abs && end > blocks {
                return None;
            }
            for _ in 0..access {
                table.push((start, end - start));
            }
            prev += size;
        }
        (table.len() == 100).then(|| Zones {
            seed,
            rand: Taus88::new(seed),
            table,
        })
    }
}

/// fio's choice of each I/O's direction in a mixed job (`get_rw_ddir`): a new direction is
/// drawn (1 to 100 against `rwmixread`) only once the current one has caught up with the
/// issues it owes; on a switch, what the new one owes is the old one's issues times the new
/// one's share. The issue counts run over the whole job; each loop reseeds the generator and
/// clears what is owed, as fio's does.
#[derive(Debug, Clone)]
pub(super) struct Mix {
    seed: u32,
    rand: Taus88,
    read_pct: u64,
    read: bool,
    owed: u64,
    issues: [u64; 2],
    /// I/Os per loop, where loops reseed (a size-bounded job of one block size).
    loop_len: Option<u64>,
    in_loop: u64,
}

impl Mix {
    pub(super) fn new(seed: u32, read_pct: u64, loop_len: Option<u64>) -> Mix {
        Mix {
            seed,
            rand: Taus88::new(seed),
            read_pct,
            read: true,
            owed: 0,
            issues: [0; 2],
            loop_len,
            in_loop: 0,
        }
    }

    /// Whether the next I/O reads.
    pub(super) fn next(&mut self) -> bool {
        if self.loop_len == Some(self.in_loop) {
            self.rand = Taus88::new(self.seed);
            (self.owed, self.in_loop) = (0, 0);
        }
        self.in_loop += 1;
        let cur = usize::from(!self.read);
        if self.issues[cur] >= self.owed {
            let v = 1 + ((100 * u64::from(self.rand.next_u32())) >> 32);
            let read = v <= self.read_pct;
            if read != self.read {
                let other = if self.read {
                    100 - self.read_pct
                } else {
                    self.read_pct
                };
                self.owed = self.issues[cur] * other / 100;
            }
            self.read = read;
        }
        self.issues[usize::from(!self.read)] += 1;
        self.read
    }
}

/// One file's random map as fio keeps it (its axmap): a bit per block, set when an I/O is
/// given the block, and a summary bit per word of 64 that is full, so finding the next free
/// block near the end of a pass skips full stretches 4,096 blocks at a time.
#[derive(Debug, Clone)]
struct FreeMap {
    words: Vec<u64>,
    full: Vec<u64>,
    bits: u64,
}

impl FreeMap {
    fn new(bits: u64) -> FreeMap {
        let nwords = bits.div_ceil(64) as usize;
        let mut m = FreeMap {
            words: vec![0; nwords],
            full: vec![0; nwords.div_ceil(64)],
            bits,
        };
        m.clear();
        m
    }

    /// Every block free again; the last word's bits past the end stay set.
    fn clear(&mut self) {
        self.words.fill(0);
        self.full.fill(0);
        let tail = self.bits % 64;
        if tail != 0 {
            let last = self.words.len() - 1;
            self.words[last] = !0u64 << tail;
        }
    }

    #[inline]
    fn is_set(&self, b: u64) -> bool {
        self.words[(b / 64) as usize] & (1 << (b % 64)) != 0
    }

    #[inline]
    fn set(&mut self, b: u64) {
        let w = (b / 64) as usize;
        self.words[w] |= 1 << (b % 64);
        if self.words[w] == !0 {
            self.full[w / 64] |= 1 << (w % 64);
        }
    }

    /// The first free block at or after `from`: in `from`'s own word (most calls, inlined),
    /// else through the summary.
    #[inline]
    fn first_free(&self, from: u64) -> Option<u64> {
        if from >= self.bits {
            return None;
        }
        let w = (from / 64) as usize;
        let here = !self.words[w] & (!0u64 << (from % 64));
        if here != 0 {
            return Some(w as u64 * 64 + u64::from(here.trailing_zeros()));
        }
        self.first_free_after_word(w)
    }

    /// The first free block in a word after word `w`, found through the summary.
    #[cold]
    fn first_free_after_word(&self, w: usize) -> Option<u64> {
        let mut s = (w + 1) / 64;
        let mut mask = !0u64 << ((w + 1) % 64);
        while s < self.full.len() {
            let open = !self.full[s] & mask;
            if open != 0 {
                let word = s * 64 + open.trailing_zeros() as usize;
                if word >= self.words.len() {
                    return None;
                }
                let bit = (!self.words[word]).trailing_zeros();
                return Some(word as u64 * 64 + u64::from(bit));
            }
            s += 1;
            mask = !0;
        }
        None
    }

    /// fio's `axmap_next_free`: the first free block after `b`, else from the start.
    #[inline]
    fn next_free(&self, b: u64) -> Option<u64> {
        let next = if b + 1 == self.bits { 0 } else { b + 1 };
        self.first_free(next).or_else(|| match next {
            0 => None,
            _ => self.first_free(0),
        })
    }
}

/// fio's uniform random offsets (`__get_next_rand_offset` with its Tausworthe generator):
/// a block drawn as `blocks × r / 2^32`, and with the random map, the next free block after
/// it when it is taken. The files take turns, as fio's round robin gives each I/O the next.
#[derive(Debug, Clone)]
pub(super) struct Uniform {
    seed: u32,
    rand: Taus88,
    blocks: u64,
    maps: Option<Vec<FreeMap>>,
    turn: u64,
    zones: Option<Zones>,
}

impl Uniform {
    /// `None` when a file has more blocks than fio's 32-bit generator reaches (fio switches
    /// to its 64-bit one there).
    pub(super) fn new(seed: u32, nfiles: u64, blocks: u64, map: bool) -> Option<Uniform> {
        if blocks == 0 || blocks > u64::from(u32::MAX) {
            return None;
        }
        Some(Uniform {
            seed,
            rand: Taus88::new(seed),
            blocks,
            maps: map.then(|| (0..nfiles).map(|_| FreeMap::new(blocks)).collect()),
            turn: 0,
            zones: None,
        })
    }

    /// fio's zoned (`abs`: zoned_abs) distribution over each file, its zones drawn from a
    /// generator seeded with `seed`; `bs` the block size. `None` where fio's would differ.
    pub(super) fn zoned(
        mut self,
        abs: bool,
        zones: &[(u32, u64)],
        bs: u64,
        seed: u32,
    ) -> Option<Uniform> {
        self.zones = Some(Zones::new(abs, zones, self.blocks, bs, seed)?);
        Some(self)
    }

    /// fio's `__get_next_rand_offset` over `blocks`: `blocks × r / 2^32` (the integer form
    /// below 2^21 blocks, where it is exactly fio's double arithmetic).
    #[inline]
    fn draw(rand: &mut Taus88, blocks: u64) -> u64 {
        let r = rand.next_u32();
        match blocks < 1 << 21 {
            true => (blocks * u64::from(r)) >> 32,
            false => (blocks as f64 * (f64::from(r) / 4_294_967_296.0)) as u64,
        }
    }

    /// The next I/O's (file, block in the file) among `nfiles`. A file whose map is full
    /// (a time-based job going round) starts a new pass as fio's does: the draw that found it
    /// full is spent, the map cleared, and a block drawn again.
    #[inline]
    pub(super) fn next(&mut self, nfiles: u64) -> (u64, u64) {
        let file = match nfiles {
            1 => 0,
            _ => self.turn % nfiles,
        };
        self.turn += 1;
        if let Some(z) = &mut self.zones {
            let v = (100 * u64::from(z.rand.next_u32())) >> 32;
            let (start, len) = z.table[v as usize];
            return (file, start + Self::draw(&mut self.rand, len));
        }
        let blocks = self.blocks;
        let b = Self::draw(&mut self.rand, blocks);
        let Some(maps) = &mut self.maps else {
            return (file, b);
        };
        let m = &mut maps[file as usize];
        let b = match m.is_set(b) {
            false => b,
            true => match m.next_free(b) {
                Some(free) => free,
                None => {
                    m.clear();
                    Self::draw(&mut self.rand, blocks)
                }
            },
        };
        m.set(b);
        (file, b)
    }

    /// A new loop: every map cleared and the generator started again from its seed, as fio
    /// reseeds each loop.
    pub(super) fn new_loop(&mut self) {
        for m in self.maps.iter_mut().flatten() {
            m.clear();
        }
        self.rand = Taus88::new(self.seed);
        self.turn = 0;
        if let Some(z) = &mut self.zones {
            z.rand = Taus88::new(z.seed);
        }
    }
}

/// fio's last step: the rank hashed (`__hash_u64`), shifted by the offset, wrapped.
#[inline]
fn scatter(rank: u64, off: u64, n: u64) -> u64 {
    rank.wrapping_mul(GOLDEN_RATIO_64).wrapping_add(off) % n
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fio 3.33's own values: a C program over its lib/rand.c, lib/zipf.c, lib/gauss.c and
    /// hash.h printed them (2026-11-27).
    #[test]
    fn the_generators_give_fios_numbers() {
        let mut t = Taus88::new(1);
        let taus: Vec<u32> = (0..3).map(|_| t.next_u32()).collect();
        assert_eq!(taus, [2634262343, 4072702554, 2367269570]);
        let keys: [&[u8]; 5] = [
            b"job.0.0",
            b"abcdefghijkl",
            b"abcdefghijklmnop",
            b"/tmp/fio-cmp/zipf.0.0",
            b"",
        ];
        let hashes: Vec<u32> = keys.iter().map(|k| jhash(k)).collect();
        assert_eq!(
            hashes,
            [88798828, 3629498091, 3406994537, 253962835, 1640531527]
        );
        let ten = |mut s: Skew| (0..10).map(|_| s.next()).collect::<Vec<u64>>();
        assert_eq!(
            ten(Skew::zipf(1000, 1.2, None, 12345)),
            [146, 385, 969, 15, 808, 277, 146, 969, 277, 923]
        );
        assert_eq!(
            ten(Skew::pareto(1000, 0.9, None, 12345)),
            [827, 496, 788, 988, 142, 850, 204, 273, 204, 96]
        );
        assert_eq!(
            ten(Skew::gauss(1000, 10.0, None, 12345)),
            [182, 260, 237, 653, 44, 667, 591, 853, 175, 437]
        );
        assert_eq!(
            ten(Skew::gauss(1000, 0.0, None, 12345)),
            [982, 260, 460, 653, 152, 67, 237, 929, 345, 660]
        );
        // With a center (fio's random_distribution=KIND:VALUE:CENTER), the same program.
        assert_eq!(
            ten(Skew::zipf(1000, 1.2, Some(0.3), 12345)),
            [300, 539, 123, 169, 962, 431, 300, 123, 431, 77]
        );
        assert_eq!(
            ten(Skew::pareto(1000, 0.9, Some(0.7), 12345)),
            [381, 50, 342, 542, 696, 404, 758, 827, 758, 650]
        );
        assert_eq!(
            ten(Skew::gauss(1000, 10.0, Some(0.2), 12345)),
            [178, 256, 233, 649, 40, 663, 587, 849, 171, 433]
        );
        assert_eq!(
            ten(Skew::gauss(1000, 10.0, Some(0.8), 12345)),
            [482, 560, 537, 953, 344, 967, 891, 153, 475, 737]
        );
    }

    #[test]
    fn draws_stay_in_range_and_skew_as_asked() {
        let n = 1000;
        for mut s in [
            Skew::zipf(n, 1.2, None, 7),
            Skew::pareto(n, 0.9, None, 7),
            Skew::gauss(n, 10.0, None, 7),
            Skew::gauss(n, 0.0, None, 7),
        ] {
            let mut hits = vec![0u32; n as usize];
            for _ in 0..100_000 {
                let b = s.next();
                assert!(b < n);
                hits[b as usize] += 1;
            }
            hits.sort_unstable();
            // The hottest 10% of blocks take far more than 10% of the draws.
            let hot: u32 = hits[900..].iter().sum();
            assert!(hot > 20_000, "{hot}: {s:?}");
        }
    }

    #[test]
    fn the_random_map_gives_each_block_once_a_pass_and_finds_the_next_free_one() {
        let mut m = FreeMap::new(200);
        for b in [5, 6, 7, 199] {
            m.set(b);
        }
        assert_eq!(m.next_free(4), Some(8));
        assert_eq!(m.next_free(198), Some(0), "past the end wraps");
        for b in 0..200 {
            if !m.is_set(b) {
                m.set(b);
            }
        }
        assert_eq!(m.next_free(3), None);
        // Full stretches are skipped through the summary.
        let mut big = FreeMap::new(10_000);
        for b in 0..9_000 {
            big.set(b);
        }
        assert_eq!(big.next_free(10), Some(9_000));
        let mut u = Uniform::new(offset_seed(1), 2, 500, true).unwrap();
        let mut seen = std::collections::HashSet::new();
        for _ in 0..1000 {
            assert!(seen.insert(u.next(2)), "a block twice in one pass");
        }
        assert_eq!(seen.len(), 1000);
    }

    /// Below 2^21 blocks, fio's draw in doubles and the integer one agree for every r.
    #[test]
    fn the_integer_draw_is_fios_double_draw_below_two_to_the_21() {
        let mut t = Taus88::new(3);
        for blocks in [1u64, 2, 3, 1000, 65_536, 1_000_003, (1 << 21) - 1] {
            for r in (0..200_000).map(|_| t.next_u32()).chain([0, u32::MAX]) {
                let double = (blocks as f64 * (f64::from(r) / 4_294_967_296.0)) as u64;
                assert_eq!((blocks * u64::from(r)) >> 32, double, "{blocks} {r}");
            }
        }
    }
}
