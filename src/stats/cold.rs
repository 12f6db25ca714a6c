//! How much slower a thread's work runs right after it slept: a thread that waits for the
//! device gives up its CPU, and when it runs again its caches hold other work's lines (on a
//! virtual machine, often another guest's). A trace cannot see this — it shows up as longer
//! think time after the calls that slept — so a prediction for storage where those calls no
//! longer sleep (or newly do) needs the machine's figure. Measured here by walking buffers of
//! a few sizes, each read right after a 1 ms sleep and again at once; the worst ratio and the
//! worst added time over the sizes bound what one wake-up can cost a program, whatever its
//! working set.

use std::time::{Duration, Instant};

use serde::Serialize;

/// The machine's cost of waking up cold.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ColdStart {
    /// The most work ran slower right after a sleep than warm: cold / warm time, over the
    /// buffer sizes walked.
    pub factor: f64,
    /// The most time one wake-up added to a walk, ns (the largest buffer's, as a rule).
    pub penalty_ns: u64,
}

impl ColdStart {
    /// No effect: a machine that was not measured.
    pub const NONE: ColdStart = ColdStart {
        factor: 1.0,
        penalty_ns: 0,
    };

    /// The most a stretch of `think_ns` of work right after a wake-up can shrink by when the
    /// wake-up goes away (or grow by when one comes): the part beyond warm, capped by what
    /// one wake-up costs.
    pub fn at_most(&self, think_ns: u64) -> u64 {
        let beyond = think_ns as f64 * (1.0 - 1.0 / self.factor.max(1.0));
        (beyond as u64).min(self.penalty_ns)
    }
}

/// Buffer sizes walked: from a core's L2 to past a typical L3 slice.
const SIZES: [usize; 4] = [64 << 10, 256 << 10, 1 << 20, 4 << 20];
const ROUNDS: usize = 21;

/// Reads one byte per cache line of `buf`; the sum keeps the reads.
fn walk(buf: &[u8]) -> u64 {
    buf.iter().step_by(64).map(|&b| b as u64).sum()
}

/// Measures this machine (about 100 ms).
pub fn measure() -> ColdStart {
    let mut out = ColdStart::NONE;
    let mut keep = 0u64;
    for size in SIZES {
        let buf: Vec<u8> = (0..size).map(|i| (i * 7) as u8).collect();
        let (mut cold, mut warm) = (Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            std::thread::sleep(Duration::from_millis(1));
            let t = Instant::now();
            keep = keep.wrapping_add(walk(std::hint::black_box(&buf)));
            cold.push(t.elapsed().as_nanos() as u64);
            let t = Instant::now();
            keep = keep.wrapping_add(walk(std::hint::black_box(&buf)));
            warm.push(t.elapsed().as_nanos() as u64);
        }
        cold.sort_unstable();
        warm.sort_unstable();
        let (c, w) = (cold[ROUNDS / 2], warm[ROUNDS / 2].max(1));
        out.factor = out.factor.max(c as f64 / w as f64);
        out.penalty_ns = out.penalty_ns.max(c.saturating_sub(w));
    }
    std::hint::black_box(keep);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_wake_up_can_take_is_the_share_beyond_warm_capped_by_one_wake_up() {
        let c = ColdStart {
            factor: 2.0,
            penalty_ns: 30_000,
        };
        assert_eq!(c.at_most(10_000), 5_000);
        assert_eq!(c.at_most(100_000), 30_000);
        assert_eq!(ColdStart::NONE.at_most(100_000), 0);
    }
}
