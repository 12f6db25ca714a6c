//! A time series of per-interval totals (bytes, I/Os, summed latencies) in constant memory: it
//! starts at the job's base interval (500 ms, or `log_avg_msec`) and, when full, merges
//! neighbouring samples and doubles the interval, so a day-long run costs the same memory as a
//! minute-long one. Pure data.

use serde::Serialize;

/// Samples kept before the interval doubles.
pub const CAPACITY: usize = 4096;

/// Totals for one interval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Sample {
    pub bytes: u64,
    pub ios: u64,
    pub lat_sum_ns: u64,
    /// Queued engines only (0 otherwise): submission and completion latency sums.
    pub slat_sum_ns: u64,
    pub clat_sum_ns: u64,
}

impl std::ops::AddAssign for Sample {
    fn add_assign(&mut self, o: Sample) {
        self.bytes += o.bytes;
        self.ios += o.ios;
        self.lat_sum_ns += o.lat_sum_ns;
        self.slat_sum_ns += o.slat_sum_ns;
        self.clat_sum_ns += o.clat_sum_ns;
    }
}

/// The default base interval, fio's `bw_avg_time` (an option's default: the plan's).
pub const DEFAULT_BASE_MS: u64 = crate::plan::job::DEFAULT_SERIES_MS;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Series {
    /// The interval the worker closes samples at.
    pub base_ms: u64,
    /// The interval of one sample now: `base_ms` times a power of two. 0 after merging series
    /// whose intervals cannot be aligned (the merged series is then empty).
    pub interval_ms: u64,
    pub samples: Vec<Sample>,
}

impl Default for Series {
    fn default() -> Self {
        Series::new(DEFAULT_BASE_MS)
    }
}

impl Series {
    pub fn new(base_ms: u64) -> Series {
        let base_ms = base_ms.max(1);
        Series {
            base_ms,
            interval_ms: base_ms,
            samples: Vec::new(),
        }
    }

    /// Adds the totals of base interval `base_index`.
    pub fn push_base(&mut self, s: Sample, base_index: u64) {
        // With a coarser interval, base interval k belongs to sample k / factor.
        let factor = self.interval_ms / self.base_ms;
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
        if other.samples.is_empty() {
            return;
        }
        if self.samples.is_empty() && self.interval_ms != 0 {
            *self = other.clone();
            return;
        }
        let (a, b) = (self.interval_ms.max(1), other.interval_ms.max(1));
        let (hi, lo) = (a.max(b), a.min(b));
        if self.interval_ms == 0 || hi % lo != 0 || !(hi / lo).is_power_of_two() {
            // Jobs sampled at unrelated intervals (different log_avg_msec): no honest sum.
            self.interval_ms = 0;
            self.samples.clear();
            return;
        }
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
            ..Sample::default()
        }
    }

    #[test]
    fn memory_is_bounded_and_totals_kept() {
        let mut series = Series::new(1000);
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
        let mut a = Series::new(1000);
        let mut b = Series::new(1000);
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
        // Unrelated intervals cannot be summed: the merged series says so by being empty.
        let mut c = Series::new(300);
        c.push_base(s(1), 0);
        a += &c;
        assert_eq!((a.interval_ms, a.samples.len()), (0, 0));
    }
}
