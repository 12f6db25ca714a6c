//! How much slower a thread's work runs right after it slept: a thread that waits for the
//! device gives up its CPU, and when it runs again its caches, TLB and branch predictors hold
//! other work's state (on a virtual machine, often another guest's). A trace cannot see this
//! — it shows up as longer think time after the calls that slept — so a prediction for
//! storage where those calls no longer sleep (or newly do) needs the machine's figure.
//! Measured here by chasing a random cycle through buffers of a few sizes, one load per cache
//! line, each chase right after a 1 ms sleep and again at once; the worst ratio and the worst
//! added time over the sizes bound what one wake-up can cost a program, whatever its working
//! set. A random chase, not a walk in address order: the hardware prefetcher hides most of a
//! walk's misses, where a program's own data (B-trees, an interpreter's objects) and code are
//! not laid out for it. On this project's VM a walk in order gave 1.1–1.3x where sqlite3's
//! user time after its 16,500 sleeps was 2.1x its time without them (0.062 s against
//! 0.029 s, docs/predict.md); the chase gives 1.5–2.4x.

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

/// Buffer sizes chased through: from a core's L2 to past a typical L3 slice.
const SIZES: [usize; 4] = [64 << 10, 256 << 10, 1 << 20, 4 << 20];
const ROUNDS: usize = 21;
/// u64 words per 64-byte cache line.
const LINE: usize = 8;

/// A buffer of `bytes` whose cache lines link into one cycle in a random order: the first
/// word of each line holds the index of the next line's first word (Sattolo's shuffle, so
/// the cycle passes through every line).
fn cycle(bytes: usize, seed: u64) -> Vec<u64> {
    let lines = (bytes / 64).max(1);
    let mut order: Vec<usize> = (0..lines).collect();
    let mut x = seed | 1;
    for i in (1..lines).rev() {
        // xorshift64: enough to defeat the prefetcher, and the same buffer every time.
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let j = (x % i as u64) as usize;
        order.swap(i, j);
    }
    let mut buf = vec![0u64; lines * LINE];
    for k in 0..lines {
        buf[order[k] * LINE] = (order[(k + 1) % lines] * LINE) as u64;
    }
    buf
}

/// Follows the cycle once round: each load waits for the one before.
fn chase(buf: &[u64]) -> u64 {
    let mut at = 0usize;
    for _ in 0..buf.len() / LINE {
        at = buf[at] as usize;
    }
    at as u64
}

/// Measures this machine (about 150 ms).
pub fn measure() -> ColdStart {
    let mut out = ColdStart::NONE;
    let mut keep = 0u64;
    for (n, size) in SIZES.into_iter().enumerate() {
        let buf = cycle(size, 0x9e37_79b9_7f4a_7c15 ^ n as u64);
        let (mut cold, mut warm) = (Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            std::thread::sleep(Duration::from_millis(1));
            let t = Instant::now();
            keep = keep.wrapping_add(chase(std::hint::black_box(&buf)));
            cold.push(t.elapsed().as_nanos() as u64);
            let t = Instant::now();
            keep = keep.wrapping_add(chase(std::hint::black_box(&buf)));
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

    #[test]
    fn the_chase_passes_through_every_line_once_before_it_comes_back() {
        for bytes in [64, 64 << 10, 256 << 10] {
            let buf = cycle(bytes, 3);
            let lines = bytes / 64;
            let mut seen = vec![false; lines];
            let mut at = 0usize;
            for _ in 0..lines {
                assert_eq!(at % LINE, 0, "a link points into the middle of a line");
                assert!(
                    !seen[at / LINE],
                    "line {} visited twice in {bytes} B",
                    at / LINE
                );
                seen[at / LINE] = true;
                at = buf[at] as usize;
            }
            assert_eq!(
                at, 0,
                "the cycle in {bytes} B does not close after {lines} lines"
            );
            assert_eq!(chase(&buf), 0);
        }
        // Not in address order: the prefetcher would hide the misses.
        let buf = cycle(64 << 10, 3);
        let in_order = (0..1024)
            .filter(|&l| buf[l * LINE] as usize == (l + 1) * LINE)
            .count();
        assert!(
            in_order < 16,
            "{in_order} of 1024 links go to the next line"
        );
    }
}
