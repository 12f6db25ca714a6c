//! Native AIO recorded I/O for I/O and replayed as it was made: fio with libaio, whose own
//! I/O log (`write_iolog`) says which I/Os it submitted.

use super::*;
use std::collections::{BTreeMap, BTreeSet};

/// fio's I/O log (version 3: time, file, action, offset, length): (read|write, offset) →
/// count, on the file `f`.
fn fio_iolog(path: &Path) -> BTreeMap<(String, u64), u32> {
    let mut got = BTreeMap::new();
    for l in std::fs::read_to_string(path).unwrap().lines() {
        let w: Vec<&str> = l.split_whitespace().collect();
        if w.len() == 5 && w[1] == "f" && (w[2] == "read" || w[2] == "write") {
            *got.entry((w[2].to_string(), w[3].parse().unwrap()))
                .or_default() += 1;
        }
    }
    got
}

/// Whether fio is missing (the test skips, saying so).
fn no_fio() -> bool {
    let missing = Command::new("fio").arg("--version").output().is_err();
    if missing {
        skip!("fio is not installed; scripts/test-deps.sh installs it");
    }
    missing
}

const BATCHES_OF_4: [&str; 2] = ["--iodepth=8", "--iodepth_batch_submit=4"];

#[test]
fn libaio_ios_are_recorded_one_by_one_and_replayed_asynchronously() {
    let got = recorded_as_fios_log_says("libaio", "io_submit", &BATCHES_OF_4);
    assert!(got.is_none_or(|(most, _)| most <= 4), "{got:?}");
}

#[test]
fn io_urings_ios_are_recorded_one_by_one_and_replayed_asynchronously() {
    let got = recorded_as_fios_log_says("io_uring", "io_uring_enter", &BATCHES_OF_4);
    assert!(got.is_none_or(|(_, sqpoll)| sqpoll == 0), "{got:?}");
}

/// Buffered io_uring (no O_DIRECT: native AIO's io_submit would do each I/O inline, where
/// io_uring does not), and the replay recorded in turn: its I/Os went through io_uring_enter,
/// each of the 512 held by one, none through io_submit.
#[test]
fn io_urings_ios_are_replayed_through_io_uring() {
    if no_fio() {
        return;
    }
    let d = tmp();
    let dir = d.path();
    std::fs::write(dir.join("f"), vec![1u8; 2 << 20]).unwrap();
    let o = run_in(
        dir,
        &[
            "record",
            "-o",
            "t.iogtrace",
            "--",
            "fio",
            "--name=u",
            "--filename=f",
            "--ioengine=io_uring",
            "--rw=randrw",
            "--bs=4k",
            "--size=2m",
            "--iodepth=8",
            "--iodepth_batch_submit=4",
            "--randrepeat=1",
            "--output=/dev/null",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    if !stderr(&o).contains(" and 512 asynchronous I/Os") {
        skip!(
            "io_uring's I/Os were not seen here (no eBPF probes): {}",
            stderr(&o)
        );
        return;
    }
    let place = dir.join("replay");
    std::fs::create_dir(&place).unwrap();
    let me = assert_cmd::cargo::cargo_bin!("iogauge");
    let o = run_in(
        dir,
        &[
            "record",
            "-o",
            "r.iogtrace",
            "--",
            me.to_str().unwrap(),
            "replay",
            "t.iogtrace",
            "--directory",
            place.to_str().unwrap(),
            "--output-format=json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(v.get("uring_as_aio").is_none(), "{v}");
    assert_eq!(v["results_differ"], 0, "{v}");
    let shown = ok_in(dir, &["trace", "show", "r.iogtrace"]);
    let (mut held, mut submits, mut aio) = (0u64, 0u64, 0u64);
    for l in shown.lines().filter(|l| !l.starts_with('#')) {
        let w: Vec<&str> = l.split_whitespace().collect();
        let async_ = w[8].contains("async");
        match w[2] {
            "io_uring_enter" if async_ && w[5] != "0" => {
                submits += 1;
                held += w[5].parse::<u64>().unwrap();
            }
            "io_submit" => aio += 1,
            _ => {}
        }
    }
    assert_eq!(aio, 0, "no native AIO in the replay");
    assert_eq!(
        held, 512,
        "the replay's io_uring_enter calls hold its 512 I/Os ({submits} submits)"
    );
    assert!(
        submits < 512,
        "submitted in batches, as recorded: {submits}"
    );
}

/// Registered files: each request names a slot of the ring's table, which the trace follows
/// to the file the program registered there (and fixed buffers: IORING_OP_READ/WRITE_FIXED).
#[test]
fn io_urings_ios_on_registered_files_are_on_their_files() {
    let args = [
        BATCHES_OF_4[0],
        BATCHES_OF_4[1],
        "--registerfiles=1",
        "--fixedbufs=1",
    ];
    recorded_as_fios_log_says("io_uring", "io_uring_enter", &args);
}

/// A ring's table of 100 registered files (fio registers every file of its job): the
/// descriptors come from the eBPF program in records of 64, and each request on any slot is
/// on its file — with the calls as the ring's records and as perf's samples alike.
#[test]
fn io_urings_ios_on_a_hundred_registered_files_are_on_their_files() {
    if no_fio() {
        return;
    }
    for env in [&[][..], &[("IOGAUGE_RECORD_SAMPLES", "1")][..]] {
        let d = tmp();
        let dir = d.path();
        let directory = format!("--directory={}", dir.display());
        let o = run_in_env(
            dir,
            &[
                "record",
                "-o",
                "t.iogtrace",
                "--",
                "fio",
                "--name=j",
                &directory,
                "--nrfiles=100",
                "--filesize=16k",
                "--ioengine=io_uring",
                "--registerfiles=1",
                "--direct=1",
                "--rw=randread",
                "--bs=4k",
                "--iodepth=8",
                "--randrepeat=1",
                "--write_iolog=fio.iolog",
                "--output=/dev/null",
            ],
            env,
        );
        let Some(shown) = shown_with_async(dir, &o) else {
            return;
        };
        // fio's log: (path, offset) of each read.
        let mut want: BTreeMap<(String, u64), u32> = BTreeMap::new();
        for l in std::fs::read_to_string(dir.join("fio.iolog"))
            .unwrap()
            .lines()
        {
            let w: Vec<&str> = l.split_whitespace().collect();
            if w.len() == 5 && w[2] == "read" {
                *want
                    .entry((w[1].to_string(), w[3].parse().unwrap()))
                    .or_default() += 1;
            }
        }
        assert_eq!(want.values().sum::<u32>(), 400, "fio read 100 x 16 KiB");
        assert_eq!(
            want.keys().map(|k| &k.0).collect::<BTreeSet<_>>().len(),
            100
        );
        let paths: BTreeMap<&str, &str> = shown
            .lines()
            .filter_map(|l| l.strip_prefix("# file ")?.split_once(": "))
            .map(|(i, rest)| (i, rest.rsplit_once(" (").map_or(rest, |r| r.0)))
            .collect();
        let mut got: BTreeMap<(String, u64), u32> = BTreeMap::new();
        for l in shown.lines().filter(|l| !l.starts_with('#')) {
            let w: Vec<&str> = l.split_whitespace().collect();
            if w[2] == "read" && w[8].contains("async") {
                let path = paths.get(w[3]).expect("a file of the trace");
                *got.entry((path.to_string(), w[4].parse().unwrap()))
                    .or_default() += 1;
            }
        }
        let missing: Vec<_> = want.keys().filter(|k| !got.contains_key(*k)).collect();
        assert!(
            got == want,
            "{env:?}: {} reads on {} files in the trace, {} in fio's log; {} not in the trace, \
             the first {:?}",
            got.values().sum::<u32>(),
            got.keys().map(|k| &k.0).collect::<BTreeSet<_>>().len(),
            want.values().sum::<u32>(),
            missing.len(),
            missing.first()
        );
        let said = stderr(&o);
        assert!(said.contains(" and 400 asynchronous I/Os"), "{said}");
        assert!(!said.contains("not in the trace"), "{said}");
    }
}

/// A ring's file table made and filled every other way a program can (the way liburing's
/// `io_uring_register_files_sparse`, `_update`, `_update_tag` and `_tags` do): a sparse table
/// of 200 (IORING_REGISTER_FILES2) with slot 100 filled by FILES_UPDATE and slot 150 by
/// FILES_UPDATE2, and on a second ring a table of 130 given whole by FILES2 — what the eBPF
/// code copies from the program's memory, each struct read where the kernel reads it. Each
/// read on a slot is on the file put there.
#[test]
fn io_urings_file_tables_updated_in_place_are_followed() {
    let d = tmp();
    let dir = d.path();
    let me = std::env::current_exe().unwrap();
    let me = me.to_str().unwrap();
    let client = [("IOGAUGE_URING_CLIENT", dir.to_str().unwrap())];
    let args = [
        "record",
        "-o",
        "t.iogtrace",
        "--",
        me,
        "--exact",
        "record_aio::uring_client",
        "--ignored",
        "--test-threads=1",
        "--quiet",
    ];
    let o = run_in_env(dir, &args, &client);
    let Some(shown) = shown_with_async(dir, &o) else {
        return;
    };
    let name: BTreeMap<&str, &str> = shown
        .lines()
        .filter_map(|l| l.strip_prefix("# file ")?.split_once(": "))
        .filter_map(|(i, rest)| Some((i, rest.strip_prefix(dir.to_str()?)?.get(1..2)?)))
        .collect();
    let reads: BTreeSet<(String, u64)> = shown
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|w| w[2] == "read" && w[8].contains("async"))
        .map(|w| {
            let f = name.get(w[3]).map_or("?", |n| n);
            (f.to_string(), w[4].parse().unwrap())
        })
        .collect();
    let want = [("a", 0), ("b", 4096), ("c", 8192), ("c", 12288)];
    let want: BTreeSet<(String, u64)> = want.iter().map(|(f, o)| (f.to_string(), *o)).collect();
    assert_eq!(reads, want, "{}", stderr(&o));
    assert!(!stderr(&o).contains("not in the trace"), "{}", stderr(&o));
    // Replayed in a directory of its own: the same reads, each with the recorded result.
    std::fs::create_dir(dir.join("r")).unwrap();
    let out = ok_in(
        dir,
        &[
            "replay",
            "t.iogtrace",
            "--directory=r",
            "--output-format=json",
        ],
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["results_differ"], 0, "{v}");
    let reads = v["ops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["op"] == "read");
    assert!(reads.is_some_and(|o| o["calls"].as_u64() >= Some(4)), "{v}");
}

/// Not a test by itself (ignored): the program
/// [`io_urings_file_tables_updated_in_place_are_followed`] records, run with `--ignored` and
/// IOGAUGE_URING_CLIENT naming its directory (without it, it returns at once). Files a, b, c of 64 KiB; on ring one a sparse table of 200, a in slot 100
/// (FILES_UPDATE), b in 150 (FILES_UPDATE2); on ring two, c in all 130 slots (FILES2); one
/// 4 KiB read each on slots 100 (at 0), 150 (4096), 129 (8192) and 0 (12288).
#[test]
#[ignore = "the program a test records, not a test by itself"]
fn uring_client() {
    use io_uring::{IoUring, opcode, types};
    use std::io::Write as _;
    use std::os::fd::AsRawFd;
    let Some(dir) = std::env::var_os("IOGAUGE_URING_CLIENT") else {
        return;
    };
    let files: Vec<std::fs::File> = ["a", "b", "c"]
        .iter()
        .map(|n| {
            let mut f = std::fs::File::create_new(Path::new(&dir).join(n)).unwrap();
            f.write_all(&[7u8; 65536]).unwrap();
            f
        })
        .collect();
    let fd = |i: usize| files[i].as_raw_fd();
    // io_uring_register with a 32-byte struct: FILES2 {nr, flags, resv2, data, tags},
    // FILES_UPDATE2 {offset, resv, data, tags, nr, resv2}.
    let register = |ring: i32, opcode: u64, words: [u64; 4]| {
        // SAFETY: the struct and the descriptors it points at live across the call.
        let r = unsafe { libc::syscall(libc::SYS_io_uring_register, ring, opcode, &words, 32) };
        assert!(r >= 0, "{}", std::io::Error::last_os_error());
    };
    let read = |ring: &mut IoUring, slot: u32, offset: u64| {
        let mut buf = vec![0u8; 4096];
        let sqe = opcode::Read::new(types::Fixed(slot), buf.as_mut_ptr(), 4096)
            .offset(offset)
            .build();
        // SAFETY: the buffer outlives the request, which is waited for here.
        unsafe { ring.submission().push(&sqe).unwrap() };
        ring.submit_and_wait(1).unwrap();
        assert_eq!(ring.completion().next().unwrap().result(), 4096);
    };
    let mut one = IoUring::new(8).unwrap();
    one.submitter().register_files_sparse(200).unwrap();
    assert_eq!(
        one.submitter()
            .register_files_update(100, &[fd(0)])
            .unwrap(),
        1
    );
    let b = [fd(1)];
    register(one.as_raw_fd(), 14, [150, b.as_ptr() as u64, 0, 1]);
    let mut two = IoUring::new(8).unwrap();
    let c = [fd(2); 130];
    register(two.as_raw_fd(), 13, [130, 0, c.as_ptr() as u64, 0]);
    read(&mut one, 100, 0);
    read(&mut one, 150, 4096);
    read(&mut two, 129, 8192);
    read(&mut two, 0, 12288);
}

/// The recording `o` made as `t.iogtrace` in `dir`, shown (`trace show`); None (after saying
/// why) where perf or the eBPF probes of io_uring's I/Os are not available here.
fn shown_with_async(dir: &Path, o: &Output) -> Option<String> {
    if !o.status.success() && stderr(o).contains("perf") {
        skip!("perf cannot record here: {}", stderr(o));
        return None;
    }
    assert_eq!(o.status.code(), Some(0), "{}", stderr(o));
    let shown = ok_in(dir, &["trace", "show", "t.iogtrace"]);
    if !shown.contains(" async") {
        skip!("io_uring's I/Os were not seen here (no eBPF probes)");
        return None;
    }
    Some(shown)
}

/// SQPOLL: a kernel thread of the ring takes the requests from the submission queue, and
/// the program makes no system call to submit them (nor, here, to reap them). Each batch
/// the thread took is an io_uring_enter of that thread flagged `sqpoll`, holding them; on
/// registered files too.
#[test]
fn io_urings_ios_a_sqpoll_thread_submits_are_held() {
    for files in ["--registerfiles=0", "--registerfiles=1"] {
        let args = ["--iodepth=8", "--sqthread_poll=1", files];
        let got = recorded_as_fios_log_says("io_uring", "io_uring_enter", &args);
        assert!(got.is_none_or(|(_, sqpoll)| sqpoll > 0), "{files}: {got:?}");
    }
}

/// 200 iocbs in one io_submit (and reaped 200 at a time): every one is in the trace.
#[test]
fn libaio_batches_of_200_are_held_whole() {
    let args = [
        "--iodepth=200",
        "--iodepth_batch_submit=200",
        "--iodepth_batch_complete_min=200",
    ];
    let got = recorded_as_fios_log_says("libaio", "io_submit", &args);
    assert!(got.is_none_or(|(most, _)| most == 200), "{got:?}");
}

/// Where the eBPF ring cannot be had, the calls are perf's samples and the AIO and io_uring
/// code runs as programs of its own on every call of every task, rather than inside the
/// ring's programs (IOGAUGE_RECORD_SAMPLES=1 takes that path here): the same I/Os, on
/// registered files too.
#[test]
fn with_perfs_samples_the_asynchronous_ios_are_read_by_programs_of_their_own() {
    let samples = [("IOGAUGE_RECORD_SAMPLES", "1")];
    let files = [BATCHES_OF_4[0], BATCHES_OF_4[1], "--registerfiles=1"];
    for (engine, submit, queue) in [
        ("libaio", "io_submit", &BATCHES_OF_4[..]),
        ("io_uring", "io_uring_enter", &files[..]),
    ] {
        // Where the ring's programs see them here, the programs of their own must too.
        if recorded_as_fios_log_says(engine, submit, queue).is_some() {
            let seen = recorded_as_fios_log_says_with(&samples, engine, submit, queue);
            assert!(
                seen.is_some(),
                "{engine}'s I/Os not seen with perf's samples"
            );
        }
    }
}

/// fio with `engine` (O_DIRECT, queue depth and batches as `queue` says) recorded: its I/Os,
/// one event each, are fio's own I/O log, each complete with a latency, submitted by `submit`
/// calls that hold them (fio submitted in batches, or a SQPOLL thread did); replayed, the
/// same calls and I/Os again. The most I/Os one submit held and how many submits were a
/// SQPOLL thread's (None: the test skipped).
fn recorded_as_fios_log_says(engine: &str, submit: &str, queue: &[&str]) -> Option<(u64, u64)> {
    recorded_as_fios_log_says_with(&[], engine, submit, queue)
}

/// [`recorded_as_fios_log_says`], iogauge recording with `env` added to its environment.
fn recorded_as_fios_log_says_with(
    env: &[(&str, &str)],
    engine: &str,
    submit: &str,
    queue: &[&str],
) -> Option<(u64, u64)> {
    if no_fio() {
        return None;
    }
    let d = tmp();
    let dir = d.path();
    std::fs::write(dir.join("f"), vec![1u8; 2 << 20]).unwrap();
    let engine_arg = format!("--ioengine={engine}");
    let mut args = vec![
        "record",
        "-o",
        "t.iogtrace",
        "--",
        "fio",
        "--name=aio",
        "--filename=f",
    ];
    args.extend([
        engine_arg.as_str(),
        "--direct=1",
        "--rw=randrw",
        "--bs=4k",
        "--size=2m",
    ]);
    args.extend([
        "--randrepeat=1",
        "--write_iolog=fio.iolog",
        "--output=/dev/null",
    ]);
    args.extend(queue);
    let o = run_in_env(dir, &args, env);
    if !o.status.success() && stderr(&o).contains("perf") {
        skip!("perf cannot record here: {}", stderr(&o));
        return None;
    }
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let said = stderr(&o);
    let shown = ok_in(dir, &["trace", "show", "t.iogtrace"]);
    if !shown.contains(" async") {
        let stats = ok_in(dir, &["trace", "stats", "t.iogtrace"]);
        skip!("{engine}'s I/Os were not seen here (no eBPF probes): {stats}");
        return None;
    }
    if !env.is_empty() {
        let stats = ok_in(dir, &["trace", "stats", "t.iogtrace"]);
        assert!(stats.contains("the calls as perf samples"), "{stats}");
    }
    let file = shown
        .lines()
        .find_map(|l| {
            l.strip_prefix("# file ")
                .filter(|r| r.contains(&format!("{}/f ", dir.display())))
        })
        .and_then(|r| r.split_once(':'))
        .map(|(i, _)| i.to_string())
        .expect("the data file is in the trace");
    let mut got: BTreeMap<(String, u64), u32> = BTreeMap::new();
    let (mut submits, mut held, mut most, mut sqpoll) = (0u64, 0u64, 0u64, 0u64);
    for l in shown.lines().filter(|l| !l.starts_with('#')) {
        let w: Vec<&str> = l.split_whitespace().collect();
        let (call, f, offset, len, ret, dur, flags) = (w[2], w[3], w[4], w[5], w[6], w[7], w[8]);
        if call == submit && flags.contains("async") && len != "0" {
            submits += 1;
            sqpoll += u64::from(flags.contains("sqpoll"));
            let n = len.parse::<u64>().unwrap();
            held += n;
            most = most.max(n);
        }
        if f != file || !flags.contains("async") {
            continue;
        }
        assert_eq!((len, ret), ("4096", "4096"), "{l}");
        assert!(
            flags.contains("direct") && flags.contains("positional"),
            "{l}"
        );
        assert!(
            dur.parse::<f64>().unwrap() > 0.0,
            "reaped, so it has a latency: {l}"
        );
        *got.entry((call.to_string(), offset.parse().unwrap()))
            .or_default() += 1;
    }
    let want = fio_iolog(&dir.join("fio.iolog"));
    assert_eq!(
        want.values().sum::<u32>(),
        512,
        "fio's log holds its 512 I/Os"
    );
    assert_eq!(
        got, want,
        "the trace's async I/Os (left) against fio's I/O log (right)"
    );
    assert_eq!(held, 512, "each submit holds its I/Os");
    assert!(said.contains(" and 512 asynchronous I/Os"), "{said}");
    assert!(!said.contains("not in the trace"), "{said}");
    assert!(
        submits < 512 || sqpoll == submits,
        "fio submitted in batches: {submits} submits"
    );

    // Replayed on the same storage: the same I/Os, submitted asynchronously, reaped.
    let out = ok_in(
        dir,
        &[
            "replay",
            "t.iogtrace",
            "--directory=.",
            "--output-format=json",
        ],
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(v.get("async_one_by_one").is_none(), "{v}");
    assert_eq!(v["results_differ"], 0, "{v}");
    let calls = |op: &str| {
        v["ops"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["op"] == op)
            .map_or(0, |o| o["calls"].as_u64().unwrap())
    };
    let recorded = |op: &str, only_async: bool| {
        shown
            .lines()
            .filter(|l| l.split_whitespace().nth(2) == Some(op))
            .filter(|l| {
                !only_async
                    || l.split_whitespace()
                        .last()
                        .is_some_and(|f| f.contains("async"))
            })
            .count() as u64
    };
    assert_eq!(calls(submit), recorded(submit, true), "{v}");
    assert_eq!(
        calls("read") + calls("write"),
        recorded("read", false) + recorded("write", false),
        "{v}"
    );
    Some((most, sqpoll))
}

/// Under ptrace no eBPF program reads the iocbs: the trace keeps the calls, counts the I/Os it
/// lacks, and record says so.
#[test]
fn without_the_probes_libaios_ios_are_counted_and_record_says_so() {
    if no_fio() {
        return;
    }
    let d = tmp();
    let o = run_in(
        d.path(),
        &[
            "record",
            "--method=ptrace",
            "-o",
            "t.iogtrace",
            "--",
            "fio",
            "--name=aio",
            "--filename=f",
            "--ioengine=libaio",
            "--iodepth=4",
            "--rw=randread",
            "--bs=4k",
            "--size=256k",
            "--output=/dev/null",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let said = stderr(&o);
    assert!(
        said.contains(
            "64 asynchronous I/Os submitted are not in the trace, only the calls that submitted \
             them (libaio's I/Os not seen; io_uring's I/Os not seen)"
        ),
        "{said}"
    );
    let v: Value = serde_json::from_str(&ok_in(
        d.path(),
        &["trace", "stats", "t.iogtrace", "--json"],
    ))
    .unwrap();
    assert_eq!(
        (v["async_ios"].as_u64(), v["async_unseen"].as_u64()),
        (Some(0), Some(64)),
        "{v}"
    );
}
