//! Drawing positions where fio's own generators (`fiorand`) do not apply: the keyed
//! permutation that gives each block once per pass, and iogauge's samplers of zipf ranks (the
//! files of `file_service_type=zipf`) and zoned blocks (zone sizes in fractions of a percent).

use rand_core::RngCore;
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::plan::job::Distribution;

/// A keyed bijection on `[0, n)`.
#[derive(Debug, Clone)]
pub(super) struct Permutation {
    n: u64,
    half_bits: u32,
    keys: [u64; 4],
}

impl Permutation {
    pub(super) fn new(n: u64, rng: &mut Xoshiro256PlusPlus) -> Self {
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

    /// The round function: the high `half_bits` bits of a keyed multiply (multiply-shift
    /// hashing, whose high bits depend on every bit of the input). One multiply a round, where
    /// a full 64-bit mixer took two and three shifts: the draw is on every random I/O's path.
    #[inline]
    fn round(x: u64, key: u64, shift: u32) -> u64 {
        ((x ^ key).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ key) >> shift
    }

    #[inline]
    pub(super) fn get(&self, i: u64) -> u64 {
        let mask = (1u64 << self.half_bits) - 1;
        let shift = 64 - self.half_bits;
        let mut x = i;
        loop {
            let (mut l, mut r) = (x >> self.half_bits, x & mask);
            for &k in &self.keys {
                let t = l ^ Self::round(r, k, shift);
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
pub(super) enum Sampler {
    Uniform,
    /// Rejection-inversion sampling (Hörmann and Derflinger) of ranks 1..=n with weight k^-s.
    Zipf {
        s: f64,
        n: f64,
        h_x1: f64,
        h_n: f64,
        cut: f64,
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
pub(super) fn unit(rng: &mut Xoshiro256PlusPlus) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

impl Sampler {
    pub(super) fn new(d: &Distribution, n: u64, bs: u64) -> Sampler {
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
            Distribution::Pareto(_) | Distribution::Normal(_) => {
                unreachable!("pareto and normal offsets are fio's generators' (fiorand)")
            }
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
    pub(super) fn draw(&self, rng: &mut Xoshiro256PlusPlus, n: u64) -> u64 {
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
