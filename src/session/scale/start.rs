//! The start of a launch, right after MPI_Init (which itself waits for every rank): every
//! rank's host, and rank 0's measure of each host's clock offset.

use iogauge::units::unix_ns;
use mpi::traits::*;

use super::CLOCK;

/// Rank 0's estimate of each rank's clock offset (its clock minus rank 0's): the best of
/// 5 round trips, the reply taken as read halfway (Cristian's method), with the first rank
/// of each host; the other ranks of a host share its clock and its offset (rank 0's host:
/// none), so the round trips grow with the hosts, not the ranks. `leaders`: each rank's
/// host's first rank ([`leaders_of`]). Empty on the other ranks.
pub(super) fn clock_offsets(
    world: &mpi::topology::SimpleCommunicator,
    leaders: &[usize],
) -> Vec<i64> {
    let (me, n) = (world.rank(), world.size());
    let first_of = |r: usize| leaders.get(r).copied().unwrap_or(r);
    let mut offsets = vec![0i64; n as usize];
    for r in 1..n {
        if first_of(r as usize) != r as usize {
            continue;
        }
        let mut best: Option<(u64, i64)> = None;
        for _ in 0..5 {
            if me == 0 {
                let peer = world.process_at_rank(r);
                let t0 = unix_ns();
                peer.send_with_tag(&t0, CLOCK);
                let (theirs, _) = peer.receive_with_tag::<u64>(CLOCK);
                let t1 = unix_ns();
                let rtt = t1.saturating_sub(t0);
                let offset = theirs as i64 - ((t0 / 2 + t1 / 2) as i64);
                if best.is_none_or(|(b, _)| rtt < b) {
                    best = Some((rtt, offset));
                }
            } else if me == r {
                let root = world.process_at_rank(0);
                let _ = root.receive_with_tag::<u64>(CLOCK);
                root.send_with_tag(&unix_ns(), CLOCK);
            }
        }
        if let Some((_, o)) = best {
            offsets[r as usize] = o;
        }
    }
    for r in 0..n as usize {
        offsets[r] = offsets[first_of(r)];
    }
    if me == 0 { offsets } else { Vec::new() }
}

/// Each rank's host's first rank (its leader in a tree of host leaders), indexed by rank.
pub(super) fn leaders_of(hosts: &[String]) -> Vec<usize> {
    let mut first: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    (0..hosts.len())
        .map(|r| *first.entry(hosts[r].as_str()).or_insert(r))
        .collect()
}

/// Every rank's host name, indexed by rank (the same on every rank).
pub(super) fn all_hosts(world: &mpi::topology::SimpleCommunicator, host: &str) -> Vec<String> {
    const MAX: usize = 256;
    let mut mine = [0u8; MAX];
    let b = host.as_bytes();
    let n = b.len().min(MAX);
    mine[..n].copy_from_slice(&b[..n]);
    let mut all = vec![0u8; MAX * world.size() as usize];
    world.all_gather_into(&mine[..], &mut all[..]);
    all.chunks(MAX)
        .map(|c| {
            let end = c.iter().position(|&x| x == 0).unwrap_or(MAX);
            String::from_utf8_lossy(&c[..end]).into_owned()
        })
        .collect()
}
