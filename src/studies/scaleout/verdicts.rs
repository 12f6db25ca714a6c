//! The device counters' verdicts of a scale-out run: the ranks on one host share its devices,
//! so each rank judging a device against its own jobs alone would call the other ranks'
//! traffic "another process's" (and give a line per rank, each with its own figures). The
//! ranks leave the verdicts to the merge instead ([`crate::result::Context`]'s
//! `defer_device_verdicts`) and send what they compare ([`DeviceCheck`]); the merge adds a
//! host's ranks' checks of each group together and judges the host's devices (the fullest view
//! of each: see `merger::fold_device`) once, against all of the host's jobs.

use serde::{Deserialize, Serialize};

use super::merge::{RankResult, rank_neutral, ranks_text};
use super::merger::{GroupSums, Merger};
use crate::result::{DeviceCheck, DeviceIo};

/// One group's jobs on one host, as its device verdicts compare them with the host's devices.
#[derive(Serialize, Deserialize)]
pub(super) struct HostCheck {
    pub(super) host: String,
    pub(super) ranks: Vec<usize>,
    /// The lowest of `ranks`: the group is named as that rank's report named it (rank-neutral).
    pub(super) lowest: usize,
    pub(super) check: DeviceCheck,
}

/// Rank `p`'s check of group `gi` added to its host's.
pub(super) fn add_check(sums: &mut GroupSums, p: &RankResult, gi: usize) {
    let Some(Some(c)) = p.device_checks.get(gi) else {
        return;
    };
    let mut check = c.clone();
    check.group = rank_neutral(&check.group, p.rank);
    fold_check(
        &mut sums.checks,
        HostCheck {
            host: p.host.clone(),
            ranks: vec![p.rank],
            lowest: p.rank,
            check,
        },
    );
}

/// A check (one rank's, or a host leader's of several) into a group's: one per host.
pub(super) fn fold_check(out: &mut Vec<HostCheck>, c: HostCheck) {
    let Some(o) = out.iter_mut().find(|o| o.host == c.host) else {
        out.push(c);
        return;
    };
    o.ranks.extend_from_slice(&c.ranks);
    o.check.add(&c.check);
    if c.lowest < o.lowest {
        o.lowest = c.lowest;
        o.check.group = c.check.group;
    }
}

impl Merger {
    /// Every group's verdicts on each host's devices, each line naming the host's ranks (as
    /// the merged report's other warnings do): in group order, and by lowest rank within one.
    pub fn device_verdicts(&self) -> Vec<String> {
        let mut out = Vec::new();
        for g in &self.groups {
            let mut checks: Vec<&HostCheck> = g.checks.iter().collect();
            checks.sort_unstable_by_key(|c| c.lowest);
            for c in checks {
                let devices: Vec<DeviceIo> = g
                    .devices
                    .iter()
                    .filter(|d| d.host.as_deref() == Some(c.host.as_str()))
                    .cloned()
                    .collect();
                let mut ranks = c.ranks.clone();
                ranks.sort_unstable();
                let which = if ranks.len() == 1 { "rank" } else { "ranks" };
                let who = format!("{which} {} ({})", ranks_text(&ranks), c.host);
                out.extend(
                    c.check
                        .verdicts(&devices)
                        .into_iter()
                        .map(|v| format!("{who}: {v}")),
                );
            }
        }
        out
    }
}
