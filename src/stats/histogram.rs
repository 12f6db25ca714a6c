//! A fixed-size, mergeable log-linear histogram of nanosecond latencies. Values below 128 are
//! counted exactly; above, each power of two is split into 128 equal buckets, so a bucket is
//! never wider than 1/128 of its lower bound and the midpoint we report is within 0.4% of any
//! value in it. 7424 buckets cover the whole `u64` range: memory is constant whatever the run.
//! Pure data: no I/O, no clocks.

const SUB_BITS: u32 = 7;
const SUB: u64 = 1 << SUB_BITS; // 128
/// Buckets: 128 exact values, then 128 per power of two from 2^7 to 2^63.
pub const BUCKETS: usize = (SUB + (64 - SUB_BITS as u64) * SUB) as usize;

/// Counts of values per bucket.
#[derive(Clone)]
pub struct Histogram {
    counts: Box<[u64; BUCKETS]>,
    total: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            counts: Box::new([0; BUCKETS]),
            total: 0,
        }
    }
}

impl std::fmt::Debug for Histogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Histogram({} values)", self.total)
    }
}

#[inline]
fn index(v: u64) -> usize {
    if v < SUB {
        v as usize
    } else {
        let shift = 63 - v.leading_zeros() - SUB_BITS;
        (SUB + u64::from(shift) * SUB + ((v >> shift) & (SUB - 1))) as usize
    }
}

/// The `[low, high]` range of values that land in bucket `i`.
fn bounds(i: usize) -> (u64, u64) {
    let i = i as u64;
    if i < SUB {
        (i, i)
    } else {
        let shift = (i - SUB) / SUB;
        let sub = (i - SUB) % SUB;
        let low = (SUB + sub) << shift;
        (low, low + ((1u64 << shift) - 1))
    }
}

impl Histogram {
    #[inline]
    pub fn record(&mut self, v: u64) {
        self.counts[index(v)] += 1;
        self.total += 1;
    }

    pub fn count(&self) -> u64 {
        self.total
    }

    /// The value at percentile `p` (0..=100): the midpoint of the bucket holding the
    /// `ceil(p% × n)`-th smallest value, clamped by the caller to the observed [min, max].
    pub fn percentile(&self, p: f64) -> Option<u64> {
        if self.total == 0 {
            return None;
        }
        let rank = ((p / 100.0) * self.total as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (lo, hi) = bounds(i);
                return Some(lo + (hi - lo) / 2);
            }
        }
        unreachable!("rank {rank} exceeds total {}", self.total)
    }

    /// Non-empty buckets as (low, high, count), in increasing order.
    pub fn buckets(&self) -> impl Iterator<Item = (u64, u64, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(|(i, &c)| {
                let (lo, hi) = bounds(i);
                (lo, hi, c)
            })
    }
}

impl std::ops::AddAssign<&Histogram> for Histogram {
    fn add_assign(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(other.counts.iter()) {
            *a += b;
        }
        self.total += other.total;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_and_bounds_agree_everywhere() {
        let probes = (0..2000u64).chain((7..64).flat_map(|e| {
            let p = 1u64 << e;
            [p - 1, p, p + 1, p + p / 3, p | (p >> 1)]
        }));
        for v in probes.chain([u64::MAX]) {
            let i = index(v);
            assert!(i < BUCKETS);
            let (lo, hi) = bounds(i);
            assert!(lo <= v && v <= hi, "v={v} i={i} [{lo},{hi}]");
            assert!(
                (hi - lo) as f64 <= lo as f64 / 128.0,
                "bucket too wide at {v}"
            );
        }
        assert_eq!(index(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn percentiles_within_one_percent_of_exact() {
        let mut h = Histogram::default();
        // A skewed, wide distribution: 1 µs to ~1 s.
        let mut values: Vec<u64> = (1..=100_000u64).map(|i| 1000 + i * i / 10).collect();
        for &v in &values {
            h.record(v);
        }
        values.sort_unstable();
        for p in [1.0, 10.0, 50.0, 90.0, 99.0, 99.9, 99.99, 100.0] {
            let rank = ((p / 100.0) * values.len() as f64).ceil() as usize;
            let exact = values[rank - 1] as f64;
            let got = h.percentile(p).unwrap() as f64;
            assert!(
                (got - exact).abs() / exact <= 0.01,
                "p{p}: {got} vs {exact}"
            );
        }
    }

    #[test]
    fn merging_equals_recording_together() {
        let (mut a, mut b, mut both) = (
            Histogram::default(),
            Histogram::default(),
            Histogram::default(),
        );
        for v in 0..5000u64 {
            let x = v * 7919 % 100_003;
            if v % 3 == 0 {
                a.record(x)
            } else {
                b.record(x)
            }
            both.record(x);
        }
        a += &b;
        assert_eq!(a.count(), 5000);
        for p in [5.0, 50.0, 99.0] {
            assert_eq!(a.percentile(p), both.percentile(p));
        }
        assert!(Histogram::default().percentile(50.0).is_none());
    }
}
