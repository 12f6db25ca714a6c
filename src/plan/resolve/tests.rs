use super::*;
use crate::plan::Origin;

fn section(pairs: &[(&str, &str)]) -> Section {
    let mut s = Section::new("t");
    for (k, v) in pairs {
        s.set(k, v, Origin::Cli);
    }
    s
}

fn one(pairs: &[(&str, &str)]) -> Result<JobSpec, SpecError> {
    resolve(&[section(pairs)], false).map(|p| p.groups[0].jobs[0].clone())
}

#[test]
fn defaults_are_fio_defaults() {
    let j = one(&[]).unwrap();
    assert_eq!(
        (j.rw, j.bs, j.engine, j.timing.loops),
        (RwMode::Read, 4096, EngineKind::Psync, 1)
    );
    assert!(j.cache.invalidate && j.random.randommap && !j.direct && !j.timing.time_based);
    assert_eq!(j.target, TargetSpec::Directory(".".into()));
}

#[test]
fn stonewall_starts_a_group_and_a_gap_is_bytes_skipped() {
    let p = resolve(
        &[
            section(&[("rw", "write")]),
            section(&[("rw", "write")]),
            section(&[("rw", "read:12k"), ("stonewall", "1")]),
        ],
        false,
    )
    .unwrap();
    assert_eq!(
        p.groups.iter().map(|g| g.jobs.len()).collect::<Vec<_>>(),
        [2, 1]
    );
    let j = &p.groups[1].jobs[0];
    assert_eq!((j.rw, j.gap), (RwMode::Read, 12288));
    for (rw, want) in [
        ("randread:4k", "sequential patterns only"),
        ("bogus", "expected one of read"),
        ("read:x", "the gap after ':'"),
    ] {
        let e = one(&[("rw", rw)]).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("--rw={rw}: ")) && e.contains(want),
            "{e}"
        );
    }
}

#[test]
fn numjobs_clones_with_distinct_seeds() {
    let p = resolve(&[section(&[("numjobs", "3"), ("rw", "randread")])], false).unwrap();
    let jobs = &p.groups[0].jobs;
    assert_eq!(jobs.len(), 3);
    assert_eq!(
        jobs.iter().map(|j| j.clone).collect::<Vec<_>>(),
        vec![0, 1, 2]
    );
    assert_ne!(jobs[0].random.seed, jobs[1].random.seed);
    assert_eq!(jobs[1].paths(), vec![PathBuf::from("./t.1.0")]);
}

#[test]
fn errors_name_option_value_and_what_is_accepted() {
    let e = one(&[("bs", "4x")]).unwrap_err().to_string();
    assert!(e.starts_with("--bs=4x: expected a whole number"), "{e}");
    let e = one(&[("rw", "sideways")]).unwrap_err().to_string();
    assert!(e.contains("--rw=sideways") && e.contains("randread"), "{e}");
    let e = one(&[("bs", "8k"), ("size", "4k")])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("--bs=8k") && e.contains("larger than size=4096"),
        "{e}"
    );
    let e = one(&[("bogus", "1")]).unwrap_err().to_string();
    assert!(e.starts_with("--bogus=1: unknown option"), "{e}");
    // time_based without runtime: refused here; dropped in a job file, as fio drops it.
    let e = one(&[("time_based", "1")]).unwrap_err().to_string();
    assert!(e.contains("needs --runtime"), "{e}");
    // Any size from one byte, as fio (direct I/O's alignment is the target's check).
    assert_eq!(one(&[("bs", "256")]).unwrap().bs, 256);
    let e = one(&[("bs", "0")]).unwrap_err().to_string();
    assert!(e.contains("at least 1 byte"), "{e}");
    let e = one(&[("rwmixread", "70"), ("rwmixwrite", "20")])
        .unwrap_err()
        .to_string();
    assert!(e.contains("add up to 100"), "{e}");
}

#[test]
fn mix_and_flags() {
    let j = one(&[("rw", "randrw"), ("rwmixwrite", "30")]).unwrap();
    assert_eq!(j.read_pct, 70);
    let j = one(&[("rw", "randread")]).unwrap();
    assert_eq!(j.cache.fadvise, Fadvise::Random);
    let j = one(&[("sync", "dsync"), ("direct", "1"), ("norandommap", "1")]).unwrap();
    assert!(j.direct && !j.random.randommap && j.sync.mode == SyncMode::Dsync);
}

#[test]
fn queue_options_follow_fios_defaults_and_clamps() {
    if !crate::engine::platform::has(crate::engine::Kind::IoUring) {
        eprintln!("skipped: io_uring is not in this build");
        return;
    }
    let j = one(&[("ioengine", "io_uring"), ("iodepth", "32")]).unwrap();
    assert_eq!(
        (
            j.queue.depth,
            j.queue.batch_submit,
            j.queue.complete_min,
            j.queue.complete_max,
            j.queue.low
        ),
        (32, 1, 1, 1, 32)
    );
    let j = one(&[
        ("ioengine", "io_uring"),
        ("iodepth", "16"),
        ("iodepth_batch", "0"),
        ("iodepth_batch_complete_min", "4"),
        ("iodepth_batch_complete_max", "2"),
        ("iodepth_low", "64"),
    ])
    .unwrap();
    // batch 0 = iodepth; max never below min; low never above iodepth.
    assert_eq!(
        (
            j.queue.batch_submit,
            j.queue.complete_min,
            j.queue.complete_max,
            j.queue.low
        ),
        (16, 4, 4, 16)
    );
    let p = resolve(
        &[section(&[("iodepth", "8"), ("ioengine", "pvsync")])],
        false,
    )
    .unwrap();
    assert_eq!(p.groups[0].jobs[0].queue.depth, 1);
    assert!(p.warnings[0].contains("iodepth=8 has no effect with ioengine=pvsync"));
    let j = one(&[
        ("ioengine", "pvsync"),
        ("bufno", "8"),
        ("bs", "64k"),
        ("size", "4m"),
    ])
    .unwrap();
    assert_eq!((j.numpages, j.xfer()), (8, 512 << 10));
}

#[test]
fn iec_suffix_warns() {
    let p = resolve(&[section(&[("bs", "1MiB"), ("size", "10m")])], false).unwrap();
    assert_eq!(p.groups[0].jobs[0].bs, 1_000_000);
    assert!(
        p.warnings[0].contains("bs=1MiB means 1000000 bytes"),
        "{:?}",
        p.warnings
    );
}

/// Every option of the table lands in the job: given alone with a valid value, it is either
/// applied or refused with its own name, never accepted and ignored.
#[test]
fn every_option_in_the_table_is_applied_or_refused() {
    use crate::plan::options::{Kind, OPTIONS};
    for def in OPTIONS {
        let sample = match (def.default, def.kind) {
            (Some(d), _) => d.to_string(),
            (None, Kind::Size) => "8k".into(),
            (None, Kind::Seconds) => "1".into(),
            (None, Kind::Micros) => "10".into(),
            (None, Kind::Bool) => "1".into(),
            (None, Kind::Int { min, max }) => min.max(1).min(max).to_string(),
            (None, Kind::Choice(words)) => words[0].to_string(),
            (None, Kind::Text | Kind::Spec(_)) => match def.name {
                "rate" | "rate_iops" => "1000".into(),
                "filename" => "/tmp/x".into(),
                "percentage_random" => "50".into(),
                "bssplit" => "4k/50:8k/50".into(),
                "bsrange" => "4k-8k".into(),
                _ => "x".into(),
            },
        };
        match one(&[(def.name, &sample)]) {
            Ok(_) => {}
            Err(e) => {
                assert_eq!(e.option, def.name, "{}={sample}: {e}", def.name);
                assert!(!e.message.contains("an iogauge bug"), "{e}");
            }
        }
    }
}
