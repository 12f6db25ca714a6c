//! A tree of host leaders: with a row per host and job, each host's first rank takes its
//! host's results and folds them into a merge of its own ([`Merger`]), which it sends to rank 0
//! as one [`HostPart`]; rank 0 takes each host's part in with [`Merger::absorb`]. Rank 0 then
//! receives and parses one message per host instead of one per rank, and the hosts' leaders
//! do the rest at once, each on its own host.

use serde::{Deserialize, Serialize};

use super::merge::add_verify;
use super::merger::{GroupSums, Merger, Said, add_weighted, fold_device};

/// What a host's leader sends rank 0: its host's results folded together (on the leader's
/// own clock), the ranks of its host that sent a reason instead of a result (`failed`: rank,
/// code, why) and those that sent nothing within the leader's patience (`silent`), and what
/// taking them cost the leader.
#[derive(Serialize, Deserialize)]
pub struct HostPart {
    pub leader: usize,
    pub merger: Merger,
    pub failed: Vec<(usize, u8, String)>,
    pub silent: Vec<usize>,
    pub received_bytes: u64,
    pub receive_ms: f64,
}

impl Merger {
    /// The ranks whose results are in this merge.
    pub fn merged_ranks(&self) -> impl Iterator<Item = usize> + '_ {
        self.hosts
            .values()
            .flat_map(|(ranks, _)| ranks.iter().copied())
    }

    /// A host leader's merge (`part`, its windows on that host's clock, `offset_ns` from rank
    /// 0's) taken into this one: the same sums, rows and lines as adding each of its results
    /// here would give.
    pub fn absorb(&mut self, part: Merger, offset_ns: i64) {
        self.ranks += part.ranks;
        self.code = self.code.max(part.code);
        self.interrupted |= part.interrupted;
        self.stonewall |= part.stonewall;
        self.max_offset_ns = self
            .max_offset_ns
            .max(part.max_offset_ns)
            .max(offset_ns.unsigned_abs());
        if self.read_shift.is_none() {
            self.read_shift = part.read_shift;
        }
        for (host, (ranks, cpus)) in part.hosts {
            let row = self.hosts.entry(host).or_insert_with(|| (Vec::new(), 0));
            row.0.extend(ranks);
            row.1 = row.1.max(cpus);
        }
        self.warnings.absorb(part.warnings);
        self.errors.absorb(part.errors);
        for (options, ranks) in part.options {
            for r in ranks {
                self.add_options(r, options.clone());
            }
        }
        for (rank, host, t) in part.targets {
            self.add_target(rank, &host, &t);
        }
        for (gi, g) in part.groups.into_iter().enumerate() {
            if gi == self.groups.len() {
                if self.base.is_some() {
                    // Rank 0's plan has no such group (only with --rank-mixed).
                    break;
                }
                self.groups.push(GroupSums::default());
            }
            absorb_group(&mut self.groups[gi], g, offset_ns);
        }
    }
}

fn absorb_group(s: &mut GroupSums, g: GroupSums, offset_ns: i64) {
    if let Some(t) = g.total {
        add_weighted(&mut s.total, &t.m, t.weight);
    }
    if let Some(v) = &g.verify {
        add_verify(&mut s.verify, v);
    }
    for mut w in g.windows {
        w.start = w.start.saturating_add_signed(-offset_ns);
        w.end = w.end.saturating_add_signed(-offset_ns);
        s.windows.push(w);
    }
    for (host, sum) in g.by_host {
        let mine = s.by_host.entry(host).or_default();
        if let Some(r) = sum {
            add_weighted(mine, &r.m, r.weight);
        }
    }
    for d in g.devices {
        fold_device(&mut s.devices, d);
    }
    for c in g.checks {
        super::verdicts::fold_check(&mut s.checks, c);
    }
    s.rank_jobs.extend(g.rank_jobs);
    for hj in g.host_jobs {
        let same = s
            .host_jobs
            .iter_mut()
            .find(|r| r.host == hj.host && r.name == hj.name && r.clone == hj.clone);
        let Some(row) = same else {
            s.host_jobs.push(hj);
            continue;
        };
        if hj.first.0 < row.first.0 {
            row.first = hj.first;
        }
        if let Some(sum) = hj.sum {
            add_weighted(&mut row.sum, &sum.m, sum.weight);
        }
        row.ranks.extend(hj.ranks);
    }
}

impl Said {
    /// Another merge's lines: each line once, its ranks together, where it comes first.
    fn absorb(&mut self, other: Said) {
        for (w, who, at) in other.0 {
            match self.0.iter_mut().find(|(x, _, _)| *x == w) {
                Some((_, mine, first)) => {
                    mine.extend(who);
                    *first = (*first).min(at);
                }
                None => self.0.push((w, who, at)),
            }
        }
    }
}
