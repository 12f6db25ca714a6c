//! A replay's timing in the report: how late its I/Os were against the log's schedule, and
//! the note a reader must see when the replay could not keep the log's pace.

use crate::result::ReplayReport;
use crate::stats::{REPLAY_LATE_NS, ReplayStats};

pub(super) fn report(r: &ReplayStats) -> ReplayReport {
    let us = |ns: Option<u64>| ns.unwrap_or(0) as f64 / 1e3;
    ReplayReport {
        ios: r.late.hist.count(),
        late_p50_us: us(r.late.percentile_ns(50.0)),
        late_p99_us: us(r.late.percentile_ns(99.0)),
        late_max_us: r.late.max_ns as f64 / 1e3,
        behind_ios: r.behind,
        scheduled_s: r.scheduled_ns as f64 / 1e9,
        replayed_s: r.replayed_ns as f64 / 1e9,
    }
}

/// A replay that fell behind its log: the figures measure a pace the log did not have.
pub(super) fn note(name: &str, clone: u32, r: &ReplayStats) -> Option<String> {
    let ios = r.late.hist.count();
    // A few I/Os late from the scheduler's hiccups do not change the pace; a twentieth of
    // them, or the whole log taking longer, does.
    let slower = r.replayed_ns > r.scheduled_ns + r.scheduled_ns / 20 + REPLAY_LATE_NS;
    if ios == 0 || (r.behind * 20 < ios && !slower) {
        return None;
    }
    Some(format!(
        "job {name}.{clone}: the replay fell behind its log: {} of {ios} I/Os were issued more \
         than 1 ms late (at worst {:.1} ms), the log's {:.3} s took {:.3} s; the storage (or \
         the queue depth) could not keep the recorded pace",
        r.behind,
        r.late.max_ns as f64 / 1e6,
        r.scheduled_ns as f64 / 1e9,
        r.replayed_ns as f64 / 1e9
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 50 I/Os scheduled over 98 ms, `behind` of them more than 1 ms late, the last issued at
    /// `replayed_ms`.
    fn replay(behind: u64, replayed_ms: u64) -> ReplayStats {
        let mut r = ReplayStats::default();
        for i in 0..50u64 {
            let late = if i < behind { 2_000_000 } else { 10_000 };
            r.issued(
                late,
                i * 2_000_000,
                (i * 2_000_000).min(replayed_ms * 1_000_000),
            );
        }
        r
    }

    #[test]
    fn a_replay_is_said_behind_its_log_past_a_twentieth_late_or_a_longer_run() {
        // Two of fifty a millisecond late, the whole on time: the scheduler's hiccups.
        assert_eq!(note("r", 0, &replay(2, 98)), None);
        // Three of fifty (6%): behind, said with the counts and times.
        let n = note("r", 0, &replay(3, 98)).expect("behind");
        assert!(
            n.starts_with("job r.0: the replay fell behind its log: 3 of 50"),
            "{n}"
        );
        assert!(
            n.contains("at worst 2.0 ms") && n.contains("0.098 s took 0.098 s"),
            "{n}"
        );
        // None late, but the log's 98 ms took 105 ms (more than 5% and 1 ms longer).
        let mut r = replay(0, 98);
        r.replayed_ns = 105_000_000;
        assert!(note("r", 0, &r).is_some());
        r.replayed_ns = 103_000_000;
        assert_eq!(note("r", 0, &r), None);
        // Nothing issued: nothing to say.
        assert_eq!(note("r", 0, &Default::default()), None);
    }
}
