//! Waiting on the other ranks, never for ever: every meeting and exchange is a request
//! polled against the rank's patience (`--rank-timeout`), and the messages a rank sends
//! during a run go without waiting on any peer. A dead, stalled or cut-off rank never
//! answers (over TCP a blocking call to it never returns): once a wait runs out, the rank
//! is on its own and makes no call that waits on another.

use std::cell::RefCell;

use iogauge::plan::Section;
use mpi::traits::*;

/// How long a rank waits for the others at any meeting (`--rank-timeout`), and, once one
/// wait ran out, why: from then on the rank makes no call that waits on another (a dead or
/// cut-off peer never answers; over TCP a blocking call to it never returns).
pub struct Patience {
    pub(super) limit: std::time::Duration,
    lost: RefCell<Option<String>>,
}

/// After a signal, the others (told too, by the launcher) are given this long at most.
pub(super) const AFTER_SIGNAL: std::time::Duration = std::time::Duration::from_secs(10);

impl Patience {
    /// The default: 10 minutes, or twice the plan's timed runtime (ramps included, groups
    /// one after another) when that is longer.
    pub(super) fn for_plan(sections: &[Section], asked: Option<std::time::Duration>) -> Patience {
        let limit = asked.unwrap_or_else(|| {
            let timed: std::time::Duration = sections
                .iter()
                .map(|s| {
                    ["runtime", "ramp_time"]
                        .iter()
                        .filter_map(|k| s.entries.iter().rev().find(|e| e.key == *k))
                        .filter_map(|e| {
                            iogauge::plan::value::parse_duration(
                                e.value.as_deref()?,
                                std::time::Duration::from_secs(1),
                            )
                            .ok()
                        })
                        .sum::<std::time::Duration>()
                })
                .sum();
            (2 * timed).max(std::time::Duration::from_secs(600))
        });
        Patience::fresh(limit)
    }

    /// A patience of `limit` that has not run out (for one exchange after the run).
    pub(super) fn fresh(limit: std::time::Duration) -> Patience {
        Patience {
            limit,
            lost: RefCell::new(None),
        }
    }

    pub(super) fn is_lost(&self) -> bool {
        self.lost.borrow().is_some()
    }

    /// Polls `req` until it completes (its data) or the wait runs out (None, and the rank
    /// is lost: `what` says where). A signal shortens the wait to [`AFTER_SIGNAL`]. The
    /// request's buffers are leaked boxes, so one given up can stay with MPI.
    pub(super) fn wait<D: ?Sized>(
        &self,
        mut req: mpi::request::Request<'static, D>,
        what: &str,
    ) -> Option<&'static D> {
        let start = std::time::Instant::now();
        let mut naps = 0u32;
        loop {
            match req.test_with_data() {
                Ok((_, d)) => return Some(d),
                Err(r) => req = r,
            }
            let waited = start.elapsed();
            let limit = if super::super::signalled() {
                self.limit.min(waited.max(AFTER_SIGNAL))
            } else {
                self.limit
            };
            if waited >= limit {
                // MPI keeps the request and its (leaked) buffers; nothing is freed under it.
                std::mem::forget(req);
                self.give_up(what, waited);
                return None;
            }
            // Spin briefly (a meeting is usually met within microseconds), then nap, longer
            // after the first second: a rank waiting for a slow one costs next to no CPU.
            naps += 1;
            if naps > 1000 {
                let nap = if waited.as_secs() >= 1 { 10 } else { 1 };
                std::thread::sleep(std::time::Duration::from_millis(nap));
            }
        }
    }

    pub(super) fn give_up(&self, what: &str, waited: std::time::Duration) {
        self.lost.borrow_mut().get_or_insert_with(|| {
            format!(
                "{what}: the other ranks did not all answer within {:.0} s (--rank-timeout): a \
                 rank stalled, was killed, or its host was cut off",
                waited.as_secs_f64()
            )
        });
    }
}

/// One meeting of every rank: whether all are ready (bit 0), whether all have ended
/// (bit 1). Every meeting point of a run (the start, each group, the end) is one bitwise-AND
/// reduction on one communicator, so a rank that ended early keeps meeting the others
/// wherever they wait, tells them it is not ready (they stop there), and leaves once all
/// have ended: no count of the meetings a rank missed is needed, and none is left waiting.
/// None when the others did not all come within the rank's patience (or an earlier wait
/// ran out): the rank is on its own from then on. Each meeting leaks its two bytes of
/// buffer (a meeting given up leaves them with MPI); a run has a meeting per group.
pub(super) fn meet(
    phase: &mpi::topology::SimpleCommunicator,
    ready: bool,
    ended: bool,
    patience: &Patience,
    what: &str,
) -> Option<(bool, bool)> {
    if patience.is_lost() {
        return None;
    }
    let mine: &'static u8 = Box::leak(Box::new(u8::from(ready) | (u8::from(ended) << 1)));
    let all: &'static mut u8 = Box::leak(Box::new(0u8));
    let req = phase.immediate_all_reduce_into(
        mpi::request::StaticScope,
        mine,
        all,
        mpi::collective::SystemOperation::bitwise_and(),
    );
    let all = *patience.wait(req, what)?;
    Some((all & 1 == 1, all & 2 == 2))
}

/// Sends `m` to every other rank without waiting on any: the requests go to `pending`,
/// completed as later ticks test them (a dead peer's stays there; see [`flush_pending`]).
pub(super) fn tell_all(
    w: &mpi::topology::SimpleCommunicator,
    m: i64,
    tag: mpi::Tag,
    pending: &mut Vec<mpi::request::Request<'static, i64>>,
) {
    let me = w.rank();
    let m: &'static i64 = Box::leak(Box::new(m));
    for r in (0..w.size()).filter(|&r| r != me) {
        pending.push(w.process_at_rank(r).immediate_send_with_tag(
            mpi::request::StaticScope,
            m,
            tag,
        ));
    }
}

/// Tests the sends still pending; those done are dropped.
pub(super) fn flush_pending(pending: &mut Vec<mpi::request::Request<'static, i64>>) {
    let mut left = Vec::new();
    for r in pending.drain(..) {
        if let Err(r) = r.test() {
            left.push(r);
        }
    }
    *pending = left;
}

/// Sends not yet known to be delivered (to a peer that may be gone); tested at each tick,
/// and left with MPI when the run is over.
pub(super) struct Sends(pub(super) Vec<mpi::request::Request<'static, i64>>);

impl Drop for Sends {
    fn drop(&mut self) {
        flush_pending(&mut self.0);
        for r in self.0.drain(..) {
            // Its buffer is leaked: MPI may finish it or not, nothing is freed under it.
            std::mem::forget(r);
        }
    }
}
