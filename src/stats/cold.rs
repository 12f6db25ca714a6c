//! How much slower a thread's work runs right after it slept: a thread that waits for the
//! device gives up its CPU, and when it runs again its caches, TLB and branch predictors hold
//! other work's state (on a virtual machine, often another guest's). A trace cannot see this
//! — it shows up as longer think time after the calls that slept — so a prediction for
//! storage where those calls no longer sleep (or newly do) needs the machine's figure.
//! Measured here by chasing random cycles, one cache line a step, right after a 1 ms sleep and
//! again at once: through buffers of data (a load a line) and through blocks of generated
//! code (a jump a line, `platform::code`), a few sizes each. Each size is a working set: what
//! a stretch of work can lose or gain by a wake-up is the largest, over the sets, of its
//! share of the stretch, capped by that set's refill. A random chase, not a walk in address
//! order: the hardware prefetcher hides most of a walk's misses, where a program's own data
//! (B-trees, an interpreter's objects) and code are not laid out for it. Code, not data
//! alone: on this project's VM (an Intel host, 2026-12-04) code chased cold ran 3–5x its warm
//! time at 64 KiB, and sqlite3's think time recorded on the disk is 2.4x its think time
//! recorded on tmpfs (docs/predict.md). The chases take turns round by round, with other
//! work between one's rounds as a program has between its wake-ups: chased alone, one size
//! after another, the data showed 1.0–1.4x; in turns, 1.6–2.6x.

use std::time::{Duration, Instant};

use serde::Serialize;

use crate::platform::code::CodeChain;

/// One buffer chased: a pass right after a sleep and one at once after it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ColdPoint {
    /// "data": a load per cache line through a buffer; "code": a jump per cache line through
    /// a block of instructions.
    pub kind: &'static str,
    pub bytes: u64,
    /// The median pass at once after another, ns.
    pub warm_ns: u64,
    /// The median pass right after a 1 ms sleep, ns.
    pub cold_ns: u64,
}

impl ColdPoint {
    fn refill_ns(&self) -> u64 {
        self.cold_ns.saturating_sub(self.warm_ns)
    }

    /// What work of this working set, `think_ns` long after a wake-up, loses without it: its
    /// cold share, at most the whole refill.
    fn shrink_ns(&self, think_ns: u64) -> u64 {
        let share = think_ns as u128 * self.refill_ns() as u128 / self.cold_ns.max(1) as u128;
        (share as u64).min(self.refill_ns())
    }

    /// What work of this working set, `think_ns` long warm, gains after a wake-up.
    fn growth_ns(&self, think_ns: u64) -> u64 {
        let more = think_ns as u128 * self.refill_ns() as u128 / self.warm_ns.max(1) as u128;
        more.min(self.refill_ns() as u128) as u64
    }
}

/// The machine's cost of waking up cold.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ColdStart {
    /// The most work ran slower right after a sleep than warm: cold / warm time, over the
    /// buffers chased.
    pub factor: f64,
    /// The most time one wake-up added to a chase, ns.
    pub penalty_ns: u64,
    /// Each buffer chased.
    pub points: Vec<ColdPoint>,
    /// Why code was not chased, where it was not (data alone then).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code_unmeasured: Option<String>,
}

impl Default for ColdStart {
    /// No effect: a machine that was not measured.
    fn default() -> ColdStart {
        ColdStart::from_points(Vec::new(), None)
    }
}

impl ColdStart {
    pub fn from_points(points: Vec<ColdPoint>, code_unmeasured: Option<String>) -> ColdStart {
        let factor = points
            .iter()
            .map(|p| p.cold_ns as f64 / p.warm_ns.max(1) as f64)
            .fold(1.0, f64::max);
        let penalty_ns = points.iter().map(ColdPoint::refill_ns).max().unwrap_or(0);
        ColdStart {
            factor,
            penalty_ns,
            points,
            code_unmeasured,
        }
    }

    /// The most a stretch of `think_ns` of work right after a wake-up can shrink by when the
    /// wake-up goes away: over the working sets chased, the largest of its cold share (1 −
    /// warm / cold) capped by that working set's refill. Each buffer alone, not its worst
    /// ratio with another's worst refill: a small working set slows most in proportion and
    /// a large one the most in time, and one program's stretch is not both.
    pub fn at_most(&self, think_ns: u64) -> u64 {
        self.points
            .iter()
            .map(|p| p.shrink_ns(think_ns))
            .max()
            .unwrap_or(0)
    }

    /// The most a stretch of `think_ns` of warm work can grow by when a wake-up comes before
    /// it: (cold / warm − 1) of it, capped by the refill, the largest over the working sets.
    pub fn added_at_most(&self, think_ns: u64) -> u64 {
        self.points
            .iter()
            .map(|p| p.growth_ns(think_ns))
            .max()
            .unwrap_or(0)
    }
}

/// Data buffers chased through: from a core's L2 to past a typical L3 slice.
const DATA_SIZES: [usize; 4] = [64 << 10, 256 << 10, 1 << 20, 4 << 20];
/// Code chased through: a hot loop's to a large program's (an interpreter, a database).
const CODE_SIZES: [usize; 3] = [64 << 10, 256 << 10, 1 << 20];
const ROUNDS: usize = 21;
/// u64 words per 64-byte cache line.
const LINE: usize = 8;

/// The lines of a buffer of `bytes` in a random order (Sattolo's shuffle of 0..lines, so a
/// cycle through them passes through every line): the same order for the same seed.
fn shuffled_lines(bytes: usize, seed: u64) -> Vec<usize> {
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
    order
}

/// A buffer of `bytes` whose cache lines link into one cycle in a random order: the first
/// word of each line holds the index of the next line's first word.
fn cycle(bytes: usize, seed: u64) -> Vec<u64> {
    let order = shuffled_lines(bytes, seed);
    let lines = order.len();
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

/// A buffer to chase: what it is, its size, and one pass through it.
struct Chase<'a> {
    kind: &'static str,
    bytes: usize,
    pass: Box<dyn FnMut() + 'a>,
}

/// Each chase's median pass right after a 1 ms sleep, and at once after it, over `ROUNDS`
/// rounds. The chases take turns round by round, so a disturbance of the machine for a while
/// (another program's burst, writeback) spoils a few rounds of each, not all of one; each
/// sleep follows a pass through the same buffer, so what its cold pass finds evicted is what
/// the sleep evicted, not the other chases.
fn points(chases: &mut [Chase<'_>]) -> Vec<ColdPoint> {
    let mut cold = vec![Vec::with_capacity(ROUNDS); chases.len()];
    let mut warm = vec![Vec::with_capacity(ROUNDS); chases.len()];
    for _ in 0..ROUNDS {
        for (k, c) in chases.iter_mut().enumerate() {
            (c.pass)();
            std::thread::sleep(Duration::from_millis(1));
            let t = Instant::now();
            (c.pass)();
            cold[k].push(t.elapsed().as_nanos() as u64);
            let t = Instant::now();
            (c.pass)();
            warm[k].push(t.elapsed().as_nanos() as u64);
        }
    }
    let median = |v: &mut Vec<u64>| {
        v.sort_unstable();
        v[ROUNDS / 2]
    };
    chases
        .iter()
        .enumerate()
        .map(|(k, c)| ColdPoint {
            kind: c.kind,
            bytes: c.bytes as u64,
            warm_ns: median(&mut warm[k]).max(1),
            cold_ns: median(&mut cold[k]),
        })
        .collect()
}

/// Measures this machine (about 0.4 s).
pub fn measure() -> ColdStart {
    let buffers: Vec<(usize, Vec<u64>)> = DATA_SIZES
        .into_iter()
        .enumerate()
        .map(|(n, size)| (size, cycle(size, 0x9e37_79b9_7f4a_7c15 ^ n as u64)))
        .collect();
    let mut why_not = None;
    let mut chains = Vec::new();
    for (n, size) in CODE_SIZES.into_iter().enumerate() {
        let order = shuffled_lines(size, 0x2545_f491_4f6c_dd1d ^ n as u64);
        match CodeChain::new(size, &order) {
            Ok(chain) => chains.push((size, chain)),
            Err(e) => {
                why_not = Some(format!("no executable code here: {e}"));
                chains.clear();
                break;
            }
        }
    }
    let keep = std::cell::Cell::new(0u64);
    let mut chases: Vec<Chase<'_>> = Vec::new();
    for (size, buf) in &buffers {
        let keep = &keep;
        chases.push(Chase {
            kind: "data",
            bytes: *size,
            pass: Box::new(move || {
                keep.set(keep.get().wrapping_add(chase(std::hint::black_box(buf))));
            }),
        });
    }
    for (size, chain) in &chains {
        chases.push(Chase {
            kind: "code",
            bytes: *size,
            pass: Box::new(move || chain.run()),
        });
    }
    let points = points(&mut chases);
    std::hint::black_box(keep.get());
    ColdStart::from_points(points, why_not)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_wake_up_can_take_is_the_share_beyond_warm_capped_by_one_wake_up() {
        // A small working set: twice as slow cold, 30 µs more; a large one: 1.25x, 100 µs.
        let small = ColdPoint {
            kind: "code",
            bytes: 64 << 10,
            warm_ns: 30_000,
            cold_ns: 60_000,
        };
        let large = ColdPoint {
            kind: "data",
            bytes: 4 << 20,
            warm_ns: 400_000,
            cold_ns: 500_000,
        };
        let c = ColdStart::from_points(vec![small, large], None);
        assert_eq!((c.factor, c.penalty_ns), (2.0, 100_000));
        // Short work: the small set's half. Long: the large set's 100 µs, not half of it
        // (the small set's ratio with the large set's refill would say 100 µs at 200 µs).
        assert_eq!(c.at_most(10_000), 5_000);
        assert_eq!(c.at_most(100_000), 30_000);
        assert_eq!(c.at_most(200_000), 40_000);
        assert_eq!(c.at_most(1_000_000), 100_000);
        // Growing, from warm work: the small set doubles it, up to its 30 µs; the large adds
        // a quarter, up to 100 µs.
        assert_eq!(c.added_at_most(10_000), 10_000);
        assert_eq!(c.added_at_most(100_000), 30_000);
        assert_eq!(c.added_at_most(1_000_000), 100_000);
        assert_eq!(ColdStart::default().at_most(100_000), 0);
        assert_eq!(ColdStart::default().added_at_most(100_000), 0);
    }

    #[test]
    fn the_machine_is_measured_on_data_and_on_code_where_it_can_run_code() {
        let c = measure();
        let kinds = |k: &str| c.points.iter().filter(|p| p.kind == k).count();
        assert_eq!(kinds("data"), DATA_SIZES.len(), "{c:?}");
        match &c.code_unmeasured {
            None => assert_eq!(kinds("code"), CODE_SIZES.len(), "{c:?}"),
            Some(why) => {
                assert_eq!(kinds("code"), 0, "{c:?}");
                println!("SKIP the code chase: {why}");
            }
        }
        assert!(c.points.iter().all(|p| p.warm_ns > 0), "{c:?}");
        assert!(c.factor >= 1.0);
        assert_eq!(
            c.penalty_ns,
            c.points
                .iter()
                .map(|p| p.cold_ns.saturating_sub(p.warm_ns))
                .max()
                .unwrap()
        );
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
