//! After each measurement, every rank's result to rank 0 and rank 0's merged code back:
//! point to point and polled, so rank 0 takes what comes within the rank's patience and
//! names the ranks that did not answer, instead of waiting in a gather for ever. With a tree
//! of host leaders (`tree.rs`) a host's results go to its leader, which takes them the same
//! way and sends rank 0 its host's merge.

use iogauge::studies::scaleout::{HostPart, Merger, RankResult};
use mpi::traits::*;

use super::wait::{AFTER_SIGNAL, Patience};
use super::{CODE, PARTIAL, RESULT, Ranks};

/// What a rank collected (the reports went into the merge as they came): the ranks that
/// answered (itself included), those that sent a reason instead of a result, those that
/// sent nothing, and what taking them cost.
pub(super) struct Collected {
    pub(super) answered: Vec<usize>,
    /// (rank, code, why).
    pub(super) failed: Vec<(usize, u8, String)>,
    pub(super) silent: Vec<(usize, Silence)>,
    pub(super) received_bytes: u64,
    pub(super) receive_ms: f64,
    /// Of that time, the part spent folding the reports into the merge.
    pub(super) merge_ms: f64,
    /// The host leaders' merges taken in, and the longest any leader took for its host's.
    pub(super) host_parts: usize,
    pub(super) leader_receive_ms_max: f64,
}

/// One rank's result (or its reason for having none) folded into `merger`, on rank 0's
/// clock.
fn take_result(bytes: &[u8], offset: &dyn Fn(usize) -> i64, merger: &mut Merger) -> Got {
    match bytes {
        [b'!', code, why @ ..] => Got::Failed(*code, String::from_utf8_lossy(why).into()),
        b => match serde_json::from_slice::<RankResult>(b) {
            Ok(mut p) => {
                p.clock_offset_ns = offset(p.rank);
                merger.add(p);
                Got::Merged
            }
            Err(e) => Got::Failed(0, format!("its result cannot be read: {e}")),
        },
    }
}

/// Who did not hear from a rank.
#[derive(Clone, Copy)]
pub(super) enum Silence {
    /// This rank, which waited for it.
    Here,
    /// Its host's leader (which said so in its host's merge).
    Leader(usize),
    /// Nobody: its host's leader (which may be itself) sent nothing.
    LeaderToo(usize),
}

/// What became of one rank's result.
enum Got {
    NotHere,
    Waiting,
    Merged,
    Failed(u8, String),
    Silent(usize),
}

impl Ranks {
    /// Rank 0, or a host's leader: the results of the ranks that send theirs here (with a
    /// tree of host leaders: this host's; else every rank's) and, at rank 0, the other hosts'
    /// leaders' merges, each folded into `merger` as it comes (this rank's own result first)
    /// and dropped, until all have come or the wait runs out. Polled, never blocking on one
    /// rank. Rank 0 waits a little longer than a leader does, so that a leader that gave up
    /// on one of its ranks still passes the others on.
    pub(super) fn collect(&self, own: Vec<u8>, merger: &mut Merger) -> Collected {
        let n = self.world.size() as usize;
        let leaders = &self.leaders;
        let tree = self.tree();
        let mine = |r: usize| r != self.rank && (if tree { leaders[r] == self.rank } else { true });
        let mut got: Vec<Got> = (0..n)
            .map(|r| if mine(r) { Got::Waiting } else { Got::NotHere })
            .collect();
        let parts_expected = self.rank == 0 && tree;
        if parts_expected {
            for r in (0..n).filter(|&r| leaders[r] != 0) {
                got[r] = Got::Waiting;
            }
        }
        let start = std::time::Instant::now();
        let mut received_bytes = own.len() as u64;
        let (mut host_parts, mut leader_ms) = (0usize, 0f64);
        let offset = |r: usize| self.offsets.get(r).copied().unwrap_or(0);
        let take = |bytes: &[u8], merger: &mut Merger| {
            let at = std::time::Instant::now();
            (take_result(bytes, &offset, merger), at.elapsed())
        };
        let (g, mut merging) = take(&own, merger);
        got[self.rank] = g;
        drop(own);
        let limit = self.exchange_limit();
        let limit = match parts_expected {
            true => limit + (limit / 4).clamp(std::time::Duration::from_secs(1), AFTER_SIGNAL),
            false => limit,
        };
        while got.iter().any(|g| matches!(g, Got::Waiting)) && start.elapsed() < limit {
            use mpi::point_to_point::MatchedReceiveVec as _;
            let any = self.world.any_process();
            if let Some(probed) = any.immediate_matched_probe_with_tag(RESULT) {
                let (bytes, status) = probed.matched_receive_vec::<u8>();
                let r = status.source_rank() as usize;
                if mine(r) && matches!(got[r], Got::Waiting) {
                    received_bytes += bytes.len() as u64;
                    let (g, took) = take(&bytes, merger);
                    got[r] = g;
                    merging += took;
                }
                continue;
            }
            if let Some(probed) = any.immediate_matched_probe_with_tag(PARTIAL) {
                let (bytes, status) = probed.matched_receive_vec::<u8>();
                let l = status.source_rank() as usize;
                if parts_expected && l != 0 && leaders.get(l) == Some(&l) {
                    received_bytes += bytes.len() as u64;
                    let at = std::time::Instant::now();
                    if let Some(ms) = self.take_part(&bytes, l, (&mut got, leaders), merger) {
                        host_parts += 1;
                        leader_ms = leader_ms.max(ms);
                    }
                    merging += at.elapsed();
                }
                continue;
            }
            std::thread::sleep(std::time::Duration::from_millis(
                if start.elapsed().as_secs() >= 1 {
                    10
                } else {
                    1
                },
            ));
        }
        let mut c = Collected {
            answered: Vec::new(),
            failed: Vec::new(),
            silent: Vec::new(),
            received_bytes,
            receive_ms: start.elapsed().as_secs_f64() * 1e3,
            merge_ms: merging.as_secs_f64() * 1e3,
            host_parts,
            leader_receive_ms_max: leader_ms,
        };
        for (r, g) in got.into_iter().enumerate() {
            match g {
                Got::NotHere => {}
                Got::Merged => c.answered.push(r),
                Got::Failed(code, why) => {
                    c.answered.push(r);
                    c.failed.push((r, code, why));
                }
                Got::Silent(l) => c.silent.push((r, Silence::Leader(l))),
                Got::Waiting if tree && leaders[r] != self.rank => {
                    c.silent.push((r, Silence::LeaderToo(leaders[r])))
                }
                Got::Waiting => c.silent.push((r, Silence::Here)),
            }
        }
        c
    }

    /// Rank 0: host leader `l`'s merge of its host's results taken in (each of its host's
    /// ranks then merged, failed with its reason, or silent); the leader's own time to take
    /// them, or None when its merge cannot be read (that leader failed, its host's ranks
    /// silent).
    fn take_part(
        &self,
        bytes: &[u8],
        l: usize,
        (got, leaders): (&mut [Got], &[usize]),
        merger: &mut Merger,
    ) -> Option<f64> {
        let ms = match serde_json::from_slice::<HostPart>(bytes) {
            Ok(part) => {
                for r in part.merger.merged_ranks() {
                    got[r] = Got::Merged;
                }
                for (r, code, why) in part.failed {
                    got[r] = Got::Failed(code, why);
                }
                for r in part.silent {
                    got[r] = Got::Silent(l);
                }
                merger.absorb(part.merger, self.offsets.get(l).copied().unwrap_or(0));
                Some(part.receive_ms)
            }
            Err(e) => {
                let why = format!("its host's leader's (rank {l}) merge cannot be read: {e}");
                got[l] = Got::Failed(0, why);
                None
            }
        };
        // Any rank of that host the leader did not account for has nothing coming.
        for (r, g) in got.iter_mut().enumerate() {
            if leaders[r] == l && matches!(g, Got::Waiting) {
                *g = Got::Silent(l);
            }
        }
        ms
    }

    /// Rank 0: the ranks with no result and why (their own reason, or who did not hear from
    /// them), and the worst of their codes.
    pub(super) fn reasons(&self, c: &Collected) -> (Vec<(usize, String)>, u8) {
        let secs = self.exchange_limit().as_secs_f64();
        let mut failed: Vec<(usize, String)> = Vec::new();
        let mut code = 0u8;
        for (r, c, why) in &c.failed {
            failed.push((*r, why.clone()));
            code = code.max(*c);
        }
        for (r, s) in &c.silent {
            let who = match s {
                Silence::Here => "it did not answer".to_string(),
                Silence::Leader(l) => format!("it did not answer its host's leader (rank {l})"),
                Silence::LeaderToo(l) => format!("its host's leader (rank {l}) did not answer"),
            };
            failed.push((
                *r,
                format!(
                    "no result: {who} within {secs:.0} s (--rank-timeout): it stalled, was \
                     killed (its own files then stay where it made them), or its host was cut \
                     off; the report is partial"
                ),
            ));
            code = code.max(1);
        }
        (failed, code)
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

    /// A rank other than 0: its result (or its host's merge) to rank `to` with `tag`, and
    /// rank 0's merged code back; None when it was not taken or rank 0 did not answer within
    /// the rank's patience.
    pub(super) fn exchange(&self, to: usize, tag: mpi::Tag, bytes: Vec<u8>) -> Option<u8> {
        // Rank 0 may still be waiting for the others (at the end meeting, or for their
        // results) for up to its own patience before it takes this result or answers.
        let fresh = Patience::fresh(2 * self.exchange_limit());
        let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
        let dest = self.world.process_at_rank(to as i32);
        let sent = dest.immediate_send_with_tag(mpi::request::StaticScope, bytes, tag);
        let whom = if to == 0 {
            "rank 0"
        } else {
            "its host's leader"
        };
        fresh.wait(sent, &format!("sending the result to {whom}"))?;
        let code: &'static mut u8 = Box::leak(Box::new(0u8));
        let root = self.world.process_at_rank(0);
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
