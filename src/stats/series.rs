//! A time series of per-interval totals (bytes, I/Os, summed latency) in constant memory: it
//! starts at one-second intervals and, when full, merges neighbouring samples and doubles the
//! interval, so a day-long run costs the same memory as a minute-long one. Pure data.

use serde::Serialize;

/// Samples kept before the interval doubles.
pub const CAPACITY: usize = 4096;

/// Totals for one interval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Sample {
    pub bytes: u64,
    pub ios: u64,
    pub lat_sum_ns: u64,
}

impl std::ops::AddAssign for Sample {
    fn add_assign(&mut self, o: Sample) {
        self.bytes += o.bytes;
        self.ios += o.ios;
        self.lat_sum_ns += o.lat_sum_ns;
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Series {
    pub interval_ms: u64,
    pub samples: Vec<Sample>,
}

impl Default for Series {
    fn default() -> Self {
        Series {
            interval_ms: 1000,
            samples: Vec::new(),
        }
    }
}

impl Series {
    /// Appends the totals of the next base (1 s) interval.
    pub fn push_base(&mut self, s: Sample, base_index: u64) {
        // With a coarser interval, base interval k belongs to sample k / factor.
        let factor = self.interval_ms / 1000;
        let slot = (base_index / factor) as usize;
        if slot >= CAPACITY {
            self.halve();
            return self.push_base(s, base_index);
        }
        if self.samples.len() <= slot {
            self.samples.resize(slot + 1, Sample::default());
        }
        self.samples[slot] += s;
    }

    fn halve(&mut self) {
        self.samples = self
            .samples
            .chunks(2)
            .map(|c| {
                let mut s = c[0];
                if let Some(&b) = c.get(1) {
                    s += b;
                }
                s
            })
            .collect();
        self.interval_ms *= 2;
    }
}

impl std::ops::AddAssign<&Series> for Series {
    /// Adds another series sample by sample (both measured from the same start).
    fn add_assign(&mut self, other: &Series) {
        let mut other = other.clone();
        while other.interval_ms < self.interval_ms {
            other.halve();
        }
        while self.interval_ms < other.interval_ms {
            self.halve();
        }
        if self.samples.len() < other.samples.len() {
            self.samples.resize(other.samples.len(), Sample::default());
        }
        for (a, b) in self.samples.iter_mut().zip(other.samples) {
            *a += b;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(b: u64) -> Sample {
        Sample {
            bytes: b,
            ios: 1,
            lat_sum_ns: 10,
        }
    }

    #[test]
    fn memory_is_bounded_and_totals_kept() {
        let mut series = Series::default();
        let n = (CAPACITY * 3) as u64;
        for i in 0..n {
            series.push_base(s(i), i);
        }
        assert!(series.samples.len() <= CAPACITY);
        assert_eq!(series.interval_ms, 4000);
        let total: u64 = series.samples.iter().map(|x| x.bytes).sum();
        assert_eq!(total, n * (n - 1) / 2);
        assert_eq!(series.samples.iter().map(|x| x.ios).sum::<u64>(), n);
    }

    #[test]
    fn merge_aligns_intervals() {
        let mut a = Series::default();
        let mut b = Series::default();
        for i in 0..4 {
            a.push_base(s(1), i);
        }
        for i in 0..(CAPACITY as u64 + 2) {
            b.push_base(s(1), i);
        }
        a += &b;
        assert_eq!(a.interval_ms, 2000);
        assert_eq!(a.samples[0].ios, 4);
        assert_eq!(
            a.samples.iter().map(|x| x.ios).sum::<u64>(),
            CAPACITY as u64 + 6
        );
    }
}
