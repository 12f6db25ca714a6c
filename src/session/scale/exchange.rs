//! After each measurement, every rank's result to rank 0 and rank 0's merged code back:
//! point to point and polled, so rank 0 takes what comes within the rank's patience and
//! names the ranks that did not answer, instead of waiting in a gather for ever.

use iogauge::studies::scaleout::{Merger, RankResult};
use mpi::traits::*;

use super::wait::{AFTER_SIGNAL, Patience};
use super::{CODE, RESULT, Ranks};

/// What rank 0 collected (the reports went into the merge as they came): the ranks that
/// answered (itself included), the ranks with no report and why, the worst of their codes,
/// and what taking them cost.
pub(super) struct Collected {
    pub(super) answered: Vec<usize>,
    pub(super) failed: Vec<(usize, String)>,
    pub(super) failed_code: u8,
    pub(super) received_bytes: u64,
    pub(super) receive_ms: f64,
    /// Of that time, the part spent folding the reports into the merge.
    pub(super) merge_ms: f64,
}

/// What became of one rank's result.
enum Got {
    Waiting,
    Merged,
    Failed(u8, String),
}

impl Ranks {
    /// Rank 0: every other rank's result, as each sends it, until all have or the wait runs
    /// out, each folded into `merger` as it comes (rank 0's own first) and dropped: the ranks
    /// with none (and why: their own reason, or that they did not answer), and the worst of
    /// their codes. Polled, never blocking on one rank.
    pub(super) fn collect(&self, own: Vec<u8>, merger: &mut Merger) -> Collected {
        let n = self.world.size() as usize;
        let mut got: Vec<Got> = (0..n).map(|_| Got::Waiting).collect();
        let start = std::time::Instant::now();
        let mut merging = std::time::Duration::ZERO;
        let mut received_bytes = own.len() as u64;
        let mut take = |bytes: &[u8]| {
            let at = std::time::Instant::now();
            let g = match bytes {
                [b'!', code, why @ ..] => Got::Failed(*code, String::from_utf8_lossy(why).into()),
                b => match serde_json::from_slice::<RankResult>(b) {
                    Ok(mut p) => {
                        p.clock_offset_ns = self.offsets.get(p.rank).copied().unwrap_or(0);
                        merger.add(p);
                        Got::Merged
                    }
                    Err(e) => Got::Failed(0, format!("its result cannot be read: {e}")),
                },
            };
            merging += at.elapsed();
            g
        };
        got[0] = take(&own);
        drop(own);
        let limit = self.exchange_limit();
        while got.iter().any(|g| matches!(g, Got::Waiting)) && start.elapsed() < limit {
            match self
                .world
                .any_process()
                .immediate_matched_probe_with_tag(RESULT)
            {
                Some(probed) => {
                    use mpi::point_to_point::MatchedReceiveVec as _;
                    let (bytes, status) = probed.matched_receive_vec::<u8>();
                    let r = status.source_rank() as usize;
                    if matches!(got.get(r), Some(Got::Waiting)) {
                        received_bytes += bytes.len() as u64;
                        got[r] = take(&bytes);
                    }
                }
                None => std::thread::sleep(std::time::Duration::from_millis(
                    if start.elapsed().as_secs() >= 1 {
                        10
                    } else {
                        1
                    },
                )),
            }
        }
        let answered = (0..n)
            .filter(|&r| !matches!(got[r], Got::Waiting))
            .collect();
        let mut failed: Vec<(usize, String)> = Vec::new();
        let mut failed_code = 0u8;
        for (r, g) in got.into_iter().enumerate() {
            match g {
                Got::Merged => {}
                Got::Waiting => {
                    failed.push((
                        r,
                        format!(
                            "no result: it did not answer within {:.0} s (--rank-timeout): it \
                             stalled, was killed (its own files then stay where it made them), \
                             or its host was cut off; the report is partial",
                            limit.as_secs_f64()
                        ),
                    ));
                    failed_code = failed_code.max(1);
                }
                Got::Failed(code, why) => {
                    failed.push((r, why));
                    failed_code = failed_code.max(code);
                }
            }
        }
        Collected {
            answered,
            failed,
            failed_code,
            received_bytes,
            receive_ms: start.elapsed().as_secs_f64() * 1e3,
            merge_ms: merging.as_secs_f64() * 1e3,
        }
    }

    /// How long an exchange after the run may take: the rank's patience (a rank that gave
    /// the others up still waits that long once more for those that are only late).
    pub(super) fn exchange_limit(&self) -> std::time::Duration {
        if super::super::signalled() {
            self.patience.limit.min(AFTER_SIGNAL)
        } else {
            self.patience.limit
        }
    }

    /// A rank other than 0: its result to rank 0, and rank 0's merged code back; None when
    /// rank 0 did not take it or answer within the rank's patience.
    pub(super) fn exchange(&self, bytes: Vec<u8>) -> Option<u8> {
        // Rank 0 may still be waiting for the others (at the end meeting, or for their
        // results) for up to its own patience before it takes this result or answers.
        let fresh = Patience::fresh(2 * self.exchange_limit());
        let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
        let root = self.world.process_at_rank(0);
        let sent = root.immediate_send_with_tag(mpi::request::StaticScope, bytes, RESULT);
        fresh.wait(sent, "sending the result to rank 0")?;
        let code: &'static mut u8 = Box::leak(Box::new(0u8));
        let got = root.immediate_receive_into_with_tag(mpi::request::StaticScope, code, CODE);
        fresh.wait(got, "rank 0's answer").copied()
    }

    /// Rank 0: the merged code to every rank that sent a result (never waiting on one).
    pub(super) fn answer(&self, code: u8, to: impl Iterator<Item = usize>) {
        let code: &'static u8 = Box::leak(Box::new(code));
        let fresh = Patience::fresh(self.exchange_limit());
        for r in to.filter(|&r| r != 0) {
            let req = self
                .world
                .process_at_rank(r as i32)
                .immediate_send_with_tag(mpi::request::StaticScope, code, CODE);
            let _ = fresh.wait(req, "the answer");
        }
    }
}
