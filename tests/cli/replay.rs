//! Replaying fio's I/O logs (`read_iolog`, `replay_*`): the replay issues exactly the log's
//! reads, writes, trims and syncs (checked by recording the replay with `write_iolog` and
//! comparing the logs line for line, and by the real fio replaying the same log), at the
//! log's times (scaled, or not at all), onto the files the log names or the one it is
//! redirected to, under the same safety rules as any run.

use super::*;

/// A log's actions without their times: `FILE ACTION [OFFSET LEN]`.
fn actions(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split_once(' ').unwrap().1.to_string())
        .filter(|l| !l.ends_with(" add") && !l.ends_with(" open") && !l.ends_with(" close"))
        .collect()
}

/// The issue times (µs) of a log's reads, writes and trims.
fn io_times(path: &Path) -> Vec<u64> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .skip(1)
        .filter(|l| {
            [" read ", " write ", " trim "]
                .iter()
                .any(|a| l.contains(a))
        })
        .map(|l| l.split(' ').next().unwrap().parse().unwrap())
        .collect()
}

/// fio's JSON (the first job): read and write bytes, trims, syncs.
fn fio_counts(json: &str) -> (u64, u64, u64, u64) {
    let doc: Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"));
    let j = &doc["jobs"][0];
    let n = |v: &Value| v.as_u64().unwrap_or(0);
    (
        n(&j["read"]["io_bytes"]),
        n(&j["write"]["io_bytes"]),
        n(&j["trim"]["total_ios"]),
        n(&j["sync"]["total_ios"]),
    )
}

/// What a log asks for, counted from its lines: read and write bytes, trims, syncs.
fn log_counts(path: &Path) -> (u64, u64, u64, u64) {
    let mut c = (0, 0, 0, 0);
    for a in actions(path) {
        let w: Vec<&str> = a.split(' ').collect();
        match w[1] {
            "read" => c.0 += w[3].parse::<u64>().unwrap(),
            "write" => c.1 += w[3].parse::<u64>().unwrap(),
            "trim" => c.2 += 1,
            "sync" | "datasync" => c.3 += 1,
            other => panic!("{other}"),
        }
    }
    c
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

#[test]
fn a_recorded_job_replays_exactly_as_recorded() {
    let d = tmp();
    if !uring_runs(d.path()) {
        return;
    }
    ok_in(
        d.path(),
        &[
            "fio",
            "--name=w",
            "--filename=data",
            "--rw=randrw",
            "--bsrange=512-16k",
            "--size=2m",
            "--fsync=7",
            "--write_iolog=rec.log",
            "--output=/dev/null",
        ],
    );
    let out = ok_in(
        d.path(),
        &[
            "fio",
            "--name=r",
            "--read_iolog=rec.log",
            "--write_iolog=replay.log",
            "--iodepth=8",
            "--ioengine=io_uring",
            "--output-format=json",
        ],
    );
    let recorded = actions(&d.path().join("rec.log"));
    assert!(recorded.len() > 200, "{} actions", recorded.len());
    assert!(recorded.iter().any(|a| a.contains(" sync ")));
    // The same reads, writes and syncs, in the same order, on the same file.
    assert_eq!(actions(&d.path().join("replay.log")), recorded);
    assert_eq!(fio_counts(&out), log_counts(&d.path().join("rec.log")));
}

#[test]
fn fios_own_logs_replay_as_fio_replays_them() {
    let d = tmp();
    let Ok(made) = Command::new("fio")
        .current_dir(d.path())
        .args([
            "--name=w",
            "--filename=data",
            "--rw=randrw",
            "--size=1m",
            "--fsync=4",
            "--write_iolog=fio.log",
            "--output=/dev/null",
        ])
        .output()
    else {
        skip!("fio is not installed: its logs are not replayed");
        return;
    };
    assert!(made.status.success(), "{}", stderr(&made));
    // fio made the file: iogauge writes it only when allowed.
    let args = [
        "fio",
        "--name=r",
        "--read_iolog=fio.log",
        "--output-format=json",
    ];
    let o = run_in(d.path(), &args);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("--read_iolog=fio.log: data: exists and iogauge did not create it"),
        "{e}"
    );
    let ours = ok_in(d.path(), &[&args[..], &["--allow-overwrite"]].concat());
    let theirs = Command::new("fio")
        .current_dir(d.path())
        .args(&args[1..])
        .output()
        .unwrap();
    assert!(theirs.status.success(), "{}", stderr(&theirs));
    let want = log_counts(&d.path().join("fio.log"));
    assert!(want.0 > 0 && want.1 > 0 && want.3 > 0, "{want:?}");
    assert_eq!(fio_counts(&ours), want);
    assert_eq!(fio_counts(&stdout(&theirs)), want);
}

#[test]
fn the_logs_times_are_kept_scaled_or_dropped() {
    let d = tmp();
    // Writes 0, 150 and 300 ms apart after the first I/O; the add and open lines come earlier.
    write(
        d.path(),
        "t.log",
        "fio version 3 iolog\n5 f add\n7 f open\n1000 f write 0 4096\n\
         151000 f write 4096 4096\n301000 f read 0 4096\n301500 f close\n",
    );
    let replay = |extra: &[&str]| {
        let _ = std::fs::remove_file(d.path().join("f"));
        ok_in(
            d.path(),
            &[
                &[
                    "fio",
                    "--name=r",
                    "--read_iolog=t.log",
                    "--write_iolog=out.log",
                    "--overwrite-output",
                    "--output=/dev/null",
                ][..],
                extra,
            ]
            .concat(),
        );
        let t = io_times(&d.path().join("out.log"));
        t.iter().map(|x| x - t[0]).collect::<Vec<u64>>()
    };
    // Times are from the first I/O, which may itself be issued late by the scheduler on a
    // machine busy with the other tests, so the later ones (kept to the replay's start)
    // look early by as much (CI saw the third at 299.94 ms after a first 60 µs late, and
    // 598.88 ms of 600 after a first 1.04 ms late): up to 5 ms early counts as on time.
    let on_time = |got: &[u64], want: &[u64]| {
        got.iter()
            .zip(want)
            .all(|(g, w)| *g + 5_000 >= *w && *g < *w + 100_000)
    };
    let t = replay(&[]);
    assert!(on_time(&t, &[0, 150_000, 300_000]), "{t:?}");
    let t = replay(&["--replay_time_scale=300"]);
    assert!(on_time(&t, &[0, 50_000, 100_000]), "{t:?}");
    let t = replay(&["--replay_time_scale=50"]);
    assert!(on_time(&t, &[0, 300_000, 600_000]), "{t:?}");
    let t = replay(&["--replay_no_stall=1"]);
    assert!(t[2] < 100_000, "{t:?}");
}

#[test]
fn a_version_2_wait_holds_the_replay_until_its_millisecond() {
    let d = tmp();
    write(
        d.path(),
        "v2.log",
        "fio version 2 iolog\nf add\nf open\nf write 0 4096\nf wait 250 0\n\
         f write 4096 4096\nf sync 0 0\nf close\n",
    );
    let out = ok_in(
        d.path(),
        &[
            "fio",
            "--name=r",
            "--read_iolog=v2.log",
            "--write_iolog=out.log",
            "--output-format=json",
        ],
    );
    assert_eq!(fio_counts(&out), (0, 8192, 0, 1));
    let t = io_times(&d.path().join("out.log"));
    // The wait puts the second write at 250 ms on the replay's one clock (not 250 ms after
    // the first write ended: a late first write does not push the second out).
    assert!(t[1] >= 250_000 && t[1] - t[0] < 400_000, "{t:?}");
    // replay_no_stall drops the wait, as fio's does.
    std::fs::remove_file(d.path().join("f")).unwrap();
    let o = run_in(
        d.path(),
        &[
            "fio",
            "--name=r",
            "--read_iolog=v2.log",
            "--replay_no_stall=1",
            "--output-format=json",
        ],
    );
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(doc["jobs"][0]["job_runtime"].as_u64().unwrap() < 200);
}

#[test]
fn redirect_scale_align_and_skip_change_where_and_what_is_replayed() {
    let d = tmp();
    // Files in a directory that does not exist here: the redirect sends everything to one.
    write(
        d.path(),
        "r.log",
        "fio version 3 iolog\n0 /no/such/a add\n0 /no/such/b add\n1 /no/such/a write 1048576 4096\n\
         2 /no/such/b write 3000000 8192\n3 /no/such/a trim 0 4096\n4 /no/such/b read 1048576 4096\n\
         5 /no/such/a sync 0 0\n",
    );
    let out = ok_in(
        d.path(),
        &[
            "fio",
            "--name=r",
            "--read_iolog=r.log",
            "--replay_redirect=one",
            "--replay_scale=4",
            "--replay_align=64k",
            "--replay_skip=trim,sync",
            "--write_iolog=out.log",
            "--output-format=json",
        ],
    );
    assert_eq!(
        actions(&d.path().join("out.log")),
        [
            "one write 262144 4096",
            "one write 720896 8192",
            "one read 262144 4096"
        ]
    );
    assert_eq!(fio_counts(&out), (4096, 12288, 0, 0));
    assert!(!Path::new("/no/such").exists());
}

#[test]
fn the_logs_files_are_created_laid_out_and_relative_to_directory() {
    let d = tmp();
    std::fs::create_dir(d.path().join("sub")).unwrap();
    write(
        d.path(),
        "m.log",
        "fio version 3 iolog\n0 a add\n0 b add\n1 a read 61440 4096\n2 b write 0 512\n\
         3 b read 8192 512\n",
    );
    let out = ok_in(
        d.path(),
        &[
            "fio",
            "--name=r",
            "--read_iolog=m.log",
            "--directory=sub",
            "--output-format=json",
        ],
    );
    assert_eq!(fio_counts(&out), (4608, 512, 0, 0));
    // Each file laid out to its furthest read or write, and kept (fio's default).
    let len = |f: &str| {
        std::fs::metadata(d.path().join("sub").join(f))
            .unwrap()
            .len()
    };
    assert_eq!((len("a"), len("b")), (65536, 8704));
    assert!(!d.path().join("a").exists());
}

#[test]
fn numjobs_clones_take_the_logs_in_turn_and_standard_input_is_a_log() {
    let d = tmp();
    write(
        d.path(),
        "a.log",
        "fio version 2 iolog\nx add\nx write 0 4096\n",
    );
    write(
        d.path(),
        "b.log",
        "fio version 2 iolog\ny add\ny write 0 8192\ny write 8192 8192\n",
    );
    let out = ok_in(
        d.path(),
        &[
            "fio",
            "--name=r",
            "--read_iolog=a.log:b.log",
            "--numjobs=3",
            "--output-format=json",
        ],
    );
    let doc: Value = serde_json::from_str(&out).unwrap();
    let bytes: Vec<u64> = (0..3)
        .map(|i| doc["jobs"][i]["write"]["io_bytes"].as_u64().unwrap())
        .collect();
    assert_eq!(bytes, [4096, 16384, 4096]);
    let mut child = bin()
        .current_dir(d.path())
        .args(["fio", "--name=s", "--read_iolog=-", "--output-format=json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"fio version 2 iolog\nz add\nz write 0 512\n")
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(fio_counts(&stdout(&o)), (0, 512, 0, 0));
}

/// fio's t0038, in its own words: a log of huge trims and small writes on the null engine
/// sizes its buffers by the writes, not the trims.
#[test]
fn trims_do_not_size_the_buffers() {
    let d = tmp();
    let mut log = String::from("fio version 3 iolog\n30 /dev/null add\n40 /dev/null open\n");
    for i in 0..10u64 {
        log += &format!("{} /dev/null trim {} 2147483648\n", 50 + i, i * 4096);
        log += &format!("{} /dev/null write {} 4096\n", 50 + i, i * 4096);
    }
    write(d.path(), "n.log", &log);
    let out = ok_in(
        d.path(),
        &[
            "fio",
            "--name=n",
            "--read_iolog=n.log",
            "--ioengine=null",
            "--iodepth=128",
            "--output-format=json",
        ],
    );
    assert_eq!(fio_counts(&out), (0, 40960, 10, 0));
}

#[test]
fn bad_logs_and_options_are_refused_before_anything_is_created() {
    let d = tmp();
    write(
        d.path(),
        "bad.log",
        "fio version 3 iolog\n0 f add\n1 f write 0 4096\n2 f copy 0 1\n",
    );
    write(
        d.path(),
        "sync.log",
        "fio version 3 iolog\n0 f add\n1 f sync 0 0\n",
    );
    write(d.path(), "blk.bin", "\u{0}tae and then some");
    let cases: &[(&[&str], &str)] = &[
        (
            &["--read_iolog=bad.log"],
            "--read_iolog=bad.log: line 4: unknown action `copy`",
        ),
        (
            &["--read_iolog=missing.log"],
            "--read_iolog=missing.log: cannot read",
        ),
        (&["--read_iolog=sync.log"], "has no reads, writes or trims"),
        (&["--read_iolog=blk.bin"], "blktrace"),
        (
            &["--read_iolog=bad.log", "--verify=crc32c"],
            "--verify=crc32c: verifying a replay",
        ),
        (
            &["--replay_no_stall=1", "--size=1m"],
            "--replay_no_stall=1: applies only to a replay",
        ),
        (
            &["--read_iolog=sync.log", "--replay_align=3000"],
            "not a power of two",
        ),
        (
            &["--read_iolog=sync.log", "--replay_skip=copy"],
            "--replay_skip=copy: expected",
        ),
        (
            &["--read_iolog=sync.log", "--merge_blktrace_file=m"],
            "not replayed yet",
        ),
    ];
    for (extra, want) in cases {
        let o = run_in(d.path(), &[&["fio", "--name=r"][..], extra].concat());
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(e.contains(want), "{extra:?}: {e}");
        assert_eq!(e.trim().lines().count(), 1, "{extra:?}: {e}");
        assert!(!d.path().join("f").exists(), "{extra:?}");
    }
}

/// Whether io_uring runs here; prints the reason when it does not.
fn uring_runs(dir: &Path) -> bool {
    let o = run_in(
        dir,
        &[
            "fio",
            "--name=probe",
            "--ioengine=io_uring",
            "--filename=probe",
            "--size=64k",
            "--output=/dev/null",
        ],
    );
    if !o.status.success() {
        skip!("io_uring does not run here: {}", stderr(&o).trim());
    }
    o.status.success()
}

/// An I/O held back (a rate cap, a replay's schedule) lets queued I/O complete meanwhile:
/// each completion is still counted in its own direction with its own size, the same I/Os
/// the job's I/O log says it issued (a slot taken before the wait was once handed out again
/// while still in flight).
#[test]
fn paced_queued_io_counts_each_io_in_its_own_direction() {
    let d = tmp();
    if !uring_runs(d.path()) {
        return;
    }
    let out = ok_in(
        d.path(),
        &[
            "fio",
            "--name=w",
            "--filename=data",
            "--rw=randrw",
            "--bsrange=512-16k",
            "--size=1m",
            "--ioengine=io_uring",
            "--iodepth=8",
            "--rate_iops=4000",
            "--write_iolog=paced.log",
            "--output-format=json",
        ],
    );
    let c = fio_counts(&out);
    assert_eq!(c, log_counts(&d.path().join("paced.log")));
}

/// A log faster than the storage: the replay says it fell behind (in the report and on
/// stderr), with how late its I/Os were, instead of passing the figures off as the log's pace.
#[test]
fn a_replay_that_falls_behind_its_log_says_so() {
    let d = tmp();
    let mut log = String::from("fio version 3 iolog\n0 f add\n");
    // 1 MiB writes 10 us apart: 100 GB/s, which no storage here keeps up with.
    for i in 0..200u64 {
        log += &format!("{} f write {} 1048576\n", i * 10, (i % 16) << 20);
    }
    write(d.path(), "fast.log", &log);
    let o = run_in(
        d.path(),
        &[
            "run",
            "--name=r",
            "--read_iolog=fast.log",
            "--output-format=json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("the replay fell behind its log"),
        "{}",
        stderr(&o)
    );
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let r = &job(&doc)["replay"];
    assert_eq!(r["ios"], 200, "{r}");
    assert!(r["behind_ios"].as_u64().unwrap() > 2, "{r}");
    assert!(r["replayed_s"].as_f64().unwrap() > r["scheduled_s"].as_f64().unwrap());
    let warned = doc["warnings"].as_array().unwrap();
    assert!(
        warned
            .iter()
            .any(|w| w.as_str().unwrap().contains("fell behind"))
    );
    // A pace it keeps (100 small writes 3 ms apart, on tmpfs where there is one): no such
    // warning. On a 2-CPU test machine busy with the other tests, a wake-up can be a
    // millisecond late from the scheduler alone — up to a time slice, 3–4 ms, behind another
    // test's busy thread (2 and 3 of 30 writes 10 ms apart were, in CI, three tries running) —
    // and a 4 KiB write to the disk can wait for another test's syncs (2 ms apart, 4 to 6 of
    // 50 were, in CI): the pace must be kept, a twentieth late at most, in one of three tries.
    // Where the line between the two lies is the unit test of `result::build::replay::note`.
    let shm = shm_tmp();
    let mut log = String::from("fio version 3 iolog\n0 g add\n");
    for i in 0..100u64 {
        log += &format!("{} g write {} 4096\n", i * 3_000, i * 4096);
    }
    write(shm.path(), "slow.log", &log);
    let mut said = Vec::new();
    for _ in 0..3 {
        let o = run_in(
            shm.path(),
            &[
                "run",
                "--name=r",
                "--read_iolog=slow.log",
                "--output-format=json",
            ],
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        if !stderr(&o).contains("fell behind") {
            return;
        }
        said.push(stderr(&o));
    }
    panic!("a 3 ms pace said it fell behind three times: {said:?}");
}
