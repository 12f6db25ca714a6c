use super::*;
use std::collections::HashMap;

fn region(nfiles: u64, blocks: u64) -> Region {
    Region {
        nfiles,
        blocks_per_file: blocks,
        bs: 4096,
        base: 8192,
    }
}

#[test]
fn permutation_is_a_bijection_for_awkward_sizes() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    for n in [1u64, 2, 3, 5, 17, 64, 100, 1000, 4097] {
        let p = Permutation::new(n, &mut rng);
        let mut seen = vec![false; n as usize];
        for i in 0..n {
            let x = p.get(i);
            assert!(x < n && !seen[x as usize], "n={n} i={i} x={x}");
            seen[x as usize] = true;
        }
    }
}

#[test]
fn random_with_map_covers_every_block_once_per_pass() {
    let r = region(3, 100);
    let w = Workload::new(RwMode::RandRead, r, 50, true, 7, Some(2));
    let mut count: HashMap<(usize, u64), u32> = HashMap::new();
    for io in w {
        assert_eq!(io.dir, Dir::Read);
        assert!(io.offset >= 8192 && (io.offset - 8192) % 4096 == 0);
        *count.entry((io.file, io.offset)).or_default() += 1;
    }
    assert_eq!(count.len(), 300);
    assert!(count.values().all(|&c| c == 2));
}

#[test]
fn random_variable_sizes_with_map_cover_every_byte_once_per_pass() {
    for (nfiles, seed) in [(1u64, 3u64), (3, 4)] {
        let r = Region {
            nfiles,
            blocks_per_file: 256,
            bs: 512,
            base: 0,
        };
        let sizes = [(); 3].map(|_| BlockSizes::Range {
            min: 512,
            max: 4096,
        });
        let w = Workload::new(RwMode::RandTrimWrite, r, 0, true, seed, Some(2)).with_sizes(&sizes);
        let mut covered = vec![vec![0u32; 256]; nfiles as usize];
        let mut lens = std::collections::BTreeSet::new();
        let ios: Vec<IoReq> = w.collect();
        for pair in ios.chunks(2) {
            let [t, wr] = pair else { panic!("{pair:?}") };
            assert_eq!((t.dir, wr.dir), (Dir::Trim, Dir::Write));
            assert_eq!((t.file, t.offset, t.len), (wr.file, wr.offset, wr.len));
            lens.insert(t.len);
            for s in t.offset / 512..(t.offset + t.len) / 512 {
                covered[t.file][s as usize] += 1;
            }
        }
        // Two passes: every sector of every file exactly twice, whatever the sizes drawn.
        assert!(covered.iter().flatten().all(|&c| c == 2), "{covered:?}");
        assert!(lens.len() > 4, "sizes vary: {lens:?}");
    }
}

#[test]
fn random_is_not_sequential_and_is_reproducible() {
    let r = region(1, 1000);
    let a: Vec<_> = Workload::new(RwMode::RandRead, r, 50, true, 9, Some(1)).collect();
    let b: Vec<_> = Workload::new(RwMode::RandRead, r, 50, true, 9, Some(1)).collect();
    assert_eq!(a, b);
    let in_order = a
        .windows(2)
        .filter(|w| w[1].offset == w[0].offset + 4096)
        .count();
    assert!(in_order < 20, "{in_order} sequential steps out of 999");
}

#[test]
fn sequential_rotates_files_and_wraps() {
    let r = region(2, 2);
    let got: Vec<_> = Workload::new(RwMode::Write, r, 0, true, 1, Some(2))
        .map(|i| (i.file, i.offset))
        .collect();
    let pass = [(0, 8192), (1, 8192), (0, 12288), (1, 12288)];
    assert_eq!(got, [pass, pass].concat());
}

#[test]
fn a_gap_skips_bytes_and_a_pass_ends_where_an_io_no_longer_fits() {
    // fio's t0007: 1m reads, 512k apart, over 128 MiB: 85 of them (87040 KiB), not 128.
    let r = Region {
        nfiles: 1,
        blocks_per_file: 128,
        bs: 1 << 20,
        base: 0,
    };
    let got: Vec<_> = Workload::new(RwMode::Read, r, 0, true, 1, Some(1))
        .with_gap(512 << 10)
        .map(|i| (i.offset, i.len))
        .collect();
    assert_eq!(got.len(), 85);
    assert!(
        got.iter()
            .enumerate()
            .all(|(k, &(o, l))| o == k as u64 * (3 << 19) && l == 1 << 20)
    );
    // Two files, two passes, blocks 4 apart: each file's pass 0, 4, 8 (12 would not fit).
    let got: Vec<_> = Workload::new(RwMode::Read, region(2, 10), 0, true, 1, Some(2))
        .with_gap(3 * 4096)
        .map(|i| (i.file, (i.offset - 8192) / 4096))
        .collect();
    let pass = [(0, 0), (1, 0), (0, 4), (1, 4), (0, 8), (1, 8)];
    assert_eq!(got, [pass, pass].concat());
}

#[test]
fn update_reads_then_writes_the_same_block() {
    let w: Vec<_> = Workload::new(RwMode::Update, region(1, 50), 50, true, 3, Some(1)).collect();
    assert_eq!(w.len(), 100);
    for pair in w.chunks(2) {
        assert_eq!((pair[0].dir, pair[1].dir), (Dir::Read, Dir::Write));
        assert_eq!(pair[0].offset, pair[1].offset);
    }
}

#[test]
fn mixes_follow_the_percentage() {
    let w = Workload::new(RwMode::RandRw, region(1, 10_000), 70, false, 5, Some(1));
    let reads = w.filter(|i| i.dir == Dir::Read).count();
    assert!((6700..7300).contains(&reads), "{reads}");
}

fn hits(w: Workload, n: usize) -> Vec<u32> {
    let mut h = vec![0u32; n];
    for io in w {
        h[((io.offset - 8192) / 4096) as usize] += 1;
    }
    h
}

#[test]
fn skewed_distributions_concentrate_and_zones_follow_their_shares() {
    let r = region(1, 10_000);
    let draws = Some(5); // 50,000 I/Os
    let top_share = |d: Distribution| {
        let w = Workload::new(RwMode::RandRead, r, 50, true, 3, draws).with_distribution(
            &d,
            None,
            &[7],
        );
        let mut h = hits(w, 10_000);
        h.sort_unstable_by(|a, b| b.cmp(a));
        let top: u32 = h[..1000].iter().sum();
        f64::from(top) / 50_000.0
    };
    // Uniform: the busiest 10% of blocks get little more than 10% of I/Os.
    assert!(top_share(Distribution::Uniform) < 0.2);
    assert!(top_share(Distribution::Zipf(1.2)) > 0.6);
    // pareto:0.8 sends ~80% of I/Os to 20% of the blocks, so over half to the top 10%.
    assert!(top_share(Distribution::Pareto(0.8)) > 0.5);
    // fio's normal:5 is the mean of 12 uniform draws (a deviation of about 8% of the
    // region) plus a jitter of up to 2.5% either way: the densest tenth holds about 45%.
    let normal = top_share(Distribution::Normal(5.0));
    assert!((0.35..0.55).contains(&normal), "{normal}");
    let zoned = Distribution::Zoned {
        abs: false,
        zones: vec![(60, 1000), (40, 9000)],
    };
    let w = Workload::new(RwMode::RandRead, r, 50, true, 3, draws).with_distribution(
        &zoned,
        None,
        &[7],
    );
    let h = hits(w, 10_000);
    let first: u32 = h[..1000].iter().sum();
    assert!(
        (0.57..0.63).contains(&(f64::from(first) / 50_000.0)),
        "{first}"
    );
}

#[test]
fn pct_random_mixes_sequential_runs_in() {
    let w = Workload::new(RwMode::RandRead, region(1, 100_000), 50, false, 4, None)
        .with_pct_random([25, 100, 100]);
    let v: Vec<_> = w.take(20_000).collect();
    let seq = v
        .windows(2)
        .filter(|p| p[1].offset == p[0].offset + 4096)
        .count();
    // 75% of I/Os continue the sequential cursor; consecutive only when both are.
    assert!((9_000..14_000).contains(&seq), "{seq}");
}

#[test]
fn variable_sizes_move_exact_bytes_and_stay_inside_the_files() {
    let r = region(2, 64); // 2 files of 256 KiB, base 8 KiB
    let split = BlockSizes::Split(vec![(4096, 50), (16384, 80), (65536, 100)]);
    for mode in [RwMode::Read, RwMode::RandWrite, RwMode::RandRw] {
        let sizes = [
            split.clone(),
            BlockSizes::Range {
                min: 4096,
                max: 32768,
            },
            BlockSizes::Fixed(4096),
        ];
        let w = Workload::new(mode, r, 50, true, 9, Some(3)).with_sizes(&sizes);
        let (mut bytes, mut lens) = (0, std::collections::BTreeSet::new());
        for io in w {
            assert!(
                io.offset >= 8192 && io.offset + io.len <= 8192 + 64 * 4096,
                "{io:?}"
            );
            assert_eq!(io.offset % 4096, 0);
            bytes += io.len;
            lens.insert(io.len);
        }
        let want = 3 * 2 * 64 * 4096;
        match mode {
            // Sizes of their own per direction: as fio's, the last I/O is whole, so the job
            // ends past its bytes by less than one I/O.
            RwMode::RandRw => assert!((want..want + 65536).contains(&bytes), "{bytes}"),
            _ => assert_eq!(bytes, want, "{mode:?}"),
        }
        assert!(lens.len() >= 3, "{mode:?}: {lens:?}");
    }
    // Sequential variable sizes tile the files: every byte once per pass.
    let w = Workload::new(RwMode::Read, r, 50, true, 9, Some(1)).with_sizes(&[
        split.clone(),
        split.clone(),
        split,
    ]);
    let mut seen = vec![0u8; 128];
    for io in w {
        for b in 0..io.len / 4096 {
            seen[io.file * 64 + ((io.offset - 8192) / 4096 + b) as usize] += 1;
        }
    }
    assert!(seen.iter().all(|&c| c == 1), "{seen:?}");
}

#[test]
fn total_bytes_and_number_ios_bound_the_job() {
    let w = Workload::new(RwMode::Read, region(1, 10), 50, true, 1, Some(1))
        .with_total_bytes(25 * 4096);
    let v: Vec<_> = w.collect();
    assert_eq!(v.len(), 25, "io_size beyond the region wraps around");
    let w =
        Workload::new(RwMode::Update, region(1, 10), 50, true, 1, Some(1)).with_number_ios(Some(7));
    assert_eq!(w.count(), 7);
}

#[test]
fn norandommap_repeats_blocks() {
    let w = Workload::new(RwMode::RandRead, region(1, 1000), 50, false, 5, Some(1));
    let distinct: std::collections::HashSet<_> = w.map(|i| i.offset).collect();
    // Drawing 1000 of 1000 with replacement leaves about 1/e of blocks untouched.
    assert!((560..720).contains(&distinct.len()), "{}", distinct.len());
}

#[test]
fn blockalign_puts_random_offsets_on_its_multiples_of_the_region() {
    // JESD219's shape: 512 B to 64 KiB I/Os, random offsets 4 KiB aligned, no random map.
    let r = Region {
        nfiles: 1,
        blocks_per_file: 2048,
        bs: 512,
        base: 1024,
    };
    let sizes = [
        BlockSizes::Split(vec![(512, 50), (4096, 30), (65536, 20)]),
        BlockSizes::Split(vec![(512, 50), (4096, 30), (65536, 20)]),
        BlockSizes::Fixed(512),
    ];
    let mut offsets = std::collections::BTreeSet::new();
    let w = Workload::new(RwMode::RandRw, r, 40, false, 3, None)
        .with_sizes(&sizes)
        .with_align(4096);
    for io in w.take(5000) {
        assert_eq!((io.offset - 1024) % 4096, 0, "{io:?}");
        assert!(io.offset + io.len <= 1024 + 2048 * 512, "{io:?}");
        offsets.insert(io.offset);
    }
    // Spread over the aligned positions (256 of them), not piled on a few.
    assert!(offsets.len() > 200, "{}", offsets.len());
    // Fixed sizes too; and the smallest block as the alignment changes nothing.
    let w = Workload::new(RwMode::RandRead, r, 100, false, 3, None).with_align(8192);
    assert!(w.take(1000).all(|io| (io.offset - 1024) % 8192 == 0));
    let a: Vec<_> = Workload::new(RwMode::RandRead, r, 100, false, 3, None)
        .take(100)
        .collect();
    let b: Vec<_> = Workload::new(RwMode::RandRead, r, 100, false, 3, None)
        .with_align(512)
        .take(100)
        .collect();
    assert_eq!(a, b);
}

fn service(kind: ServiceKind, per_turn: u64) -> FileService {
    FileService {
        kind,
        per_turn,
        center: None,
    }
}

/// file_service_type: the files each order visits, and every block of every file once a pass.
#[test]
fn file_service_orders_the_files_as_fio_names_them() {
    let files = |mode, svc, passes| -> Vec<IoReq> {
        Workload::new(mode, region(3, 4), 50, true, 9, Some(passes))
            .with_file_service(svc)
            .collect()
    };
    let order = |ios: &[IoReq]| ios.iter().map(|io| io.file).collect::<Vec<_>>();
    // roundrobin:2 — two I/Os per file, each file's blocks in order.
    let ios = files(RwMode::Read, service(ServiceKind::RoundRobin, 2), 1);
    assert_eq!(order(&ios), [0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2]);
    let offsets: Vec<u64> = ios
        .iter()
        .filter(|io| io.file == 1)
        .map(|io| io.offset)
        .collect();
    assert_eq!(offsets, [8192, 12288, 16384, 20480]);
    // sequential — each file to its end, then the next; the second pass starts over.
    let ios = files(RwMode::Read, service(ServiceKind::Sequential, 1), 2);
    let want: Vec<usize> = [0, 1, 2, 0, 1, 2].iter().flat_map(|&f| [f; 4]).collect();
    assert_eq!(order(&ios), want);
    // random — any order, but each pass covers each block of each file once; with :3, turns
    // of three I/Os unless a file runs out.
    for (mode, per) in [
        (RwMode::Read, 1),
        (RwMode::RandRead, 1),
        (RwMode::RandRead, 3),
    ] {
        let ios = files(mode, service(ServiceKind::Random, per), 2);
        assert_eq!(ios.len(), 24);
        for pass in ios.chunks(12) {
            let mut seen: Vec<(usize, u64)> = pass.iter().map(|io| (io.file, io.offset)).collect();
            seen.sort();
            seen.dedup();
            assert_eq!(seen.len(), 12, "{mode:?}:{per}: {pass:?}");
        }
        let switches = ios.windows(2).filter(|w| w[0].file != w[1].file).count();
        assert!(switches > 0 && switches < 24, "{switches}");
    }
    // Random order differs from round robin's for one seed; the default is the workload's
    // own order (file after file each I/O).
    let rr = files(RwMode::Read, FileService::ROUND_ROBIN, 1);
    assert_eq!(order(&rr), [0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2]);
}

/// file_service_type=zipf, pareto, normal: each I/O's file drawn as fio draws it (ranks of
/// 1,024 per file; zipf and pareto from an offset drawn from the seed, normal centred), no
/// file ever done: a pass is the job's I/O count, the hot file's blocks coming round again.
#[test]
fn skewed_file_service_draws_the_files_as_fio_does() {
    for (kind, hottest) in [
        (ServiceKind::Zipf(1.2), 0.85..0.93),
        (ServiceKind::Pareto(0.2), 0.62..0.74),
        (ServiceKind::Normal(0.0), 0.20..0.36),
    ] {
        // 16 files of 256 blocks, one pass: 4,096 I/Os.
        let ios: Vec<IoReq> =
            Workload::new(RwMode::RandRead, region(16, 256), 100, true, 5, Some(1))
                .with_file_service(service(kind, 1))
                .collect();
        assert_eq!(ios.len(), 4096, "{kind:?}");
        let mut per_file = vec![0usize; 16];
        ios.iter().for_each(|io| per_file[io.file] += 1);
        let top = *per_file.iter().max().unwrap() as f64 / 4096.0;
        assert!(hottest.contains(&top), "{kind:?}: {per_file:?}");
        if let ServiceKind::Normal(_) = kind {
            // Centred: the middle six files take nearly all.
            let middle: usize = per_file[5..11].iter().sum();
            assert!(middle > 4096 * 9 / 10, "{per_file:?}");
        }
    }
}

#[test]
fn the_short_path_gives_the_general_paths_ios() {
    let cases = [
        (RwMode::Read, 1, true, None),
        (RwMode::RandRead, 1, true, None),
        (RwMode::RandRead, 3, true, None),
        (RwMode::RandWrite, 1, false, None),
        (RwMode::RandRead, 2, false, Some(7)),
        (RwMode::Trim, 2, true, None),
    ];
    for (mode, nfiles, map, ios) in cases {
        let make = || {
            Workload::new(mode, region(nfiles, 37), 50, map, 11, Some(3))
                .with_number_ios(ios)
                .with_total_bytes(nfiles * 37 * 4096 * 2 + 1000)
        };
        let fast: Vec<IoReq> = make().collect();
        let mut general = make();
        general.fast = Fast::No;
        let general: Vec<IoReq> = general.collect();
        assert_eq!(fast, general, "{mode:?} nfiles={nfiles} map={map}");
        assert!(
            make().decide_fast() != Fast::No,
            "{mode:?} takes the short path"
        );
        assert_eq!(fast.len() as u64, ios.unwrap_or(nfiles * 37 * 2 + 1));
    }
    // Mixed directions and read-then-write pairs keep the general path.
    for mode in [RwMode::RandRw, RwMode::Update, RwMode::TrimWrite] {
        assert_eq!(
            Workload::new(mode, region(1, 8), 50, true, 1, Some(1)).decide_fast(),
            Fast::No
        );
    }
}
