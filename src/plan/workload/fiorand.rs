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
    },
}

impl Skew {
    /// fio's `zipf_init` (no center: the first draw is the offset). Its normalising sum (up
    /// to 10 million powers: a fraction of a second) is made at the first draw, so a workload
    /// built only to count its bytes does not pay for it.
    pub(super) fn zipf(n: u64, theta: f64, seed: u32) -> Skew {
        let mut rand = Taus88::new(seed);
        let off = u64::from(rand.next_u32());
        let zeta2 = 1.0f64.powf(theta) + 0.5f64.powf(theta);
        let zetan = 0.0;
        Skew::Zipf {
            rand,
            n,
            theta,
            zeta2,
            zetan,
            off,
        }
    }

    /// fio's `pareto_init`.
    pub(super) fn pareto(n: u64, h: f64, seed: u32) -> Skew {
        let mut rand = Taus88::new(seed);
        let off = u64::from(rand.next_u32());
        Skew::Pareto {
            rand,
            n,
            pow: h.ln() / (1.0 - h).ln(),
            off,
        }
    }

    /// fio's `gauss_init`: `dev` in percent of the blocks.
    pub(super) fn gauss(n: u64, dev: f64, seed: u32) -> Skew {
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
            } => {
                if *zetan == 0.0 {
                    for i in 0..(*n).min(ZIPF_MAX_GEN) {
                        *zetan += (1.0 / (i + 1) as f64).powf(*theta);
                    }
                }
                let nf = *n as f64;
                let alpha = 1.0 / (1.0 - *theta);
                let eta = (1.0 - (2.0 / nf).powf(1.0 - *theta)) / (1.0 - *zeta2 / *zetan);
                let uni = f64::from(rand.next_u32()) / FRAND32_MAX;
                let z = uni * *zetan;
                let val: u64 = if z < 1.0 {
                    1
                } else if z < 1.0 + 0.5f64.powf(*theta) {
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
            Skew::Gauss { rand, n, stddev } => {
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
                scatter(sum, 0, *n)
            }
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
            ten(Skew::zipf(1000, 1.2, 12345)),
            [146, 385, 969, 15, 808, 277, 146, 969, 277, 923]
        );
        assert_eq!(
            ten(Skew::pareto(1000, 0.9, 12345)),
            [827, 496, 788, 988, 142, 850, 204, 273, 204, 96]
        );
        assert_eq!(
            ten(Skew::gauss(1000, 10.0, 12345)),
            [182, 260, 237, 653, 44, 667, 591, 853, 175, 437]
        );
        assert_eq!(
            ten(Skew::gauss(1000, 0.0, 12345)),
            [982, 260, 460, 653, 152, 67, 237, 929, 345, 660]
        );
    }

    #[test]
    fn draws_stay_in_range_and_skew_as_asked() {
        let n = 1000;
        for mut s in [
            Skew::zipf(n, 1.2, 7),
            Skew::pareto(n, 0.9, 7),
            Skew::gauss(n, 10.0, 7),
            Skew::gauss(n, 0.0, 7),
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
}
