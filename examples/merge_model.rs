//! Rank 0's merge at scales this machine cannot launch, simulated: one real report (a rank's,
//! with its latency histograms) becomes the result of each of N ranks on H hosts, sent as
//! the bytes rank 0 would receive; each is parsed and folded into the merge as it comes and
//! dropped, as `iogauge` under mpirun does. Measured: the time to parse them and to fold them, the
//! finish, rank 0's peak memory over the merge (VmHWM, reset first) and the merged report's
//! size, with a row per rank's job (`each`), per host and job (`host`: every result to rank
//! 0), and per host and job through a tree of host leaders (`tree`, what `iogauge` does with a
//! row per host and job on more than one host: each host's leader folds its host's results
//! and sends rank 0 one merge; the leaders' work, done at once on their hosts under mpirun,
//! is done here first, one host after another, and its longest is reported).
//!
//! Usage: cargo run --release --example merge_model -- REPORT.json RANKS PER_HOST each|host|tree
//! (bench/mpi_merge.py --simulate runs it over a range of ranks.)

use iogauge::studies::scaleout::{HostPart, Merger, RankResult};

fn peak_rss_kib() -> u64 {
    iogauge::runner::limits::peak_rss_kib().unwrap_or(0)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 5 {
        eprintln!("usage: merge_model REPORT.json RANKS PER_HOST each|host|tree");
        std::process::exit(2);
    }
    let report: iogauge::result::RunReport =
        serde_json::from_slice(&std::fs::read(&args[1]).expect("the report")).expect("a report");
    let ranks: usize = args[2].parse().expect("RANKS");
    let per_host: usize = args[3].parse().expect("PER_HOST");
    let by_host = args[4] != "each";
    let tree = args[4] == "tree";
    let start_ns = 1_000_000_000_000_000u64;
    let bytes_of = |rank: usize| {
        let mut r = report.clone();
        let host = format!("node{:05}", rank / per_host.max(1));
        for g in &mut r.groups {
            for j in &mut g.jobs {
                j.name = format!("{}.r{rank}", j.name);
            }
        }
        // What a real rank sends besides its report: each group's device check.
        let device_checks = r
            .groups
            .iter()
            .map(|g| {
                Some(iogauge::result::DeviceCheck {
                    group: iogauge::result::group_label(
                        g.id,
                        g.jobs.iter().map(|j| j.name.as_str()),
                    ),
                    read: g.total.read.bytes,
                    written: g.total.write.bytes,
                    buffered_reads: false,
                    direct_reads: true,
                    unflushed: false,
                })
            })
            .collect();
        serde_json::to_vec(&RankResult {
            rank,
            host,
            exit_code: 0,
            group_start_unix_ns: vec![start_ns + (rank as u64 % 97) * 1000; r.groups.len()],
            clock_offset_ns: 0,
            stonewall: false,
            stonewalled_by: Vec::new(),
            read_shift: None,
            report: r,
            device_checks,
            rounds: None,
        })
        .expect("serialises")
    };
    // The first result made before the peak is reset: what every process holds anyway.
    let first = bytes_of(0);
    let per_rank = first.len();
    // Tree: every other host's leader's merge, made first (its longest is the leaders' share).
    let per_host = per_host.max(1);
    let mut parts: Vec<Vec<u8>> = Vec::new();
    let mut leader_ms = 0f64;
    if tree {
        for leader in (per_host..ranks).step_by(per_host) {
            let t = std::time::Instant::now();
            let mut m = Merger::new(true);
            let mut got = 0u64;
            for rank in leader..(leader + per_host).min(ranks) {
                let b = bytes_of(rank);
                got += b.len() as u64;
                m.add(serde_json::from_slice(&b).expect("parses"));
            }
            parts.push(
                serde_json::to_vec(&HostPart {
                    leader,
                    merger: m,
                    failed: Vec::new(),
                    silent: Vec::new(),
                    received_bytes: got,
                    receive_ms: 0.0,
                })
                .expect("serialises"),
            );
            leader_ms = leader_ms.max(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    let direct = if tree { per_host.min(ranks) } else { ranks };
    // Linux: writing 5 to clear_refs resets the peak resident memory.
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let base_kib = peak_rss_kib();
    let mut merger = Merger::new(by_host);
    let (mut parsing, mut folding) = (std::time::Duration::ZERO, std::time::Duration::ZERO);
    let mut received = 0usize;
    for rank in 0..direct {
        let b = if rank == 0 {
            first.clone()
        } else {
            bytes_of(rank)
        };
        received += b.len();
        let t = std::time::Instant::now();
        let p: RankResult = serde_json::from_slice(&b).expect("parses");
        drop(b);
        parsing += t.elapsed();
        let t = std::time::Instant::now();
        merger.add(p);
        folding += t.elapsed();
    }
    for b in parts {
        received += b.len();
        let t = std::time::Instant::now();
        let p: HostPart = serde_json::from_slice(&b).expect("parses");
        drop(b);
        parsing += t.elapsed();
        let t = std::time::Instant::now();
        merger.absorb(p.merger, 0);
        folding += t.elapsed();
    }
    let t = std::time::Instant::now();
    let (merged, _) = merger.finish().expect("a result");
    let finish = t.elapsed();
    let out = serde_json::to_vec(&merged).expect("serialises");
    let rows: usize = merged.groups.iter().map(|g| g.jobs.len()).sum();
    println!(
        "{{\"ranks\": {ranks}, \"per_host\": {per_host}, \"jobs\": \"{}\", \"result_bytes\": \
         {per_rank}, \"received_bytes\": {received}, \"parse_ms\": {:.3}, \"fold_ms\": {:.3}, \
         \"finish_ms\": {:.3}, \"leader_ms_max\": {leader_ms:.3}, \
         \"peak_rss_growth_kib\": {}, \"report_bytes\": {}, \"job_rows\": {rows}}}",
        args[4],
        parsing.as_secs_f64() * 1e3,
        folding.as_secs_f64() * 1e3,
        finish.as_secs_f64() * 1e3,
        peak_rss_kib().saturating_sub(base_kib),
        out.len()
    );
}
