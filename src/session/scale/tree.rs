//! A tree of host leaders: with a row per host and job (`--rank-jobs=host`, the default above
//! 256 ranks) and more than one host, each rank sends its result to its host's leader (the
//! host's lowest rank) instead of rank 0; the leader folds its host's results into a merge
//! of its own as they come and sends rank 0 that one message. Rank 0 then receives and
//! parses one message per host, not per rank, and the leaders' folding runs on every host
//! at once. Every rank still hears the merged code from rank 0 itself.

use iogauge::studies::scaleout::{HostPart, Merger};

use super::{PARTIAL, RESULT, Ranks};

impl Ranks {
    /// Whether the results go through the hosts' leaders: a row per host and job, on more
    /// than one host (some rank's leader is not rank 0).
    pub(super) fn tree(&self) -> bool {
        self.jobs_per_host && self.leaders.iter().any(|&l| l != 0)
    }

    /// A rank other than 0: its result on its way to rank 0 (through its host's leader, or
    /// as that leader with its host's merge), and rank 0's merged code back; None when it
    /// was not taken or no answer came within the rank's patience.
    pub(super) fn pass_on(&self, bytes: Vec<u8>) -> Option<u8> {
        if !self.tree() {
            return self.exchange(0, RESULT, bytes);
        }
        let leader = self.leaders[self.rank];
        if leader != self.rank {
            return self.exchange(leader, RESULT, bytes);
        }
        let mut merger = Merger::new(true);
        let c = self.collect(bytes, &mut merger);
        let part = HostPart {
            leader,
            merger,
            failed: c.failed,
            silent: c.silent.into_iter().map(|(r, _)| r).collect(),
            received_bytes: c.received_bytes,
            receive_ms: c.receive_ms,
        };
        let bytes = serde_json::to_vec(&part).expect("a merge serialises");
        drop(part);
        self.exchange(0, PARTIAL, bytes)
    }
}
