//! `iogauge replay TRACE` checked by recording the replay itself: the replay of a trace of a
//! real program (sqlite3 with synchronous=FULL, dd with O_DIRECT, a multi-threaded fio job)
//! issues the same calls as the program did — same call types, offsets, lengths, sync points,
//! O_DIRECT — on copies of its files in a directory of its own, which it removes; the
//! recorded paths are not touched. And its bad input.

use std::collections::BTreeMap;

use super::*;

/// One call as `trace show` prints it: (call, offset, length, direct).
type Call = (String, String, String, bool);

/// The trace's I/O calls per file, in order: files named by `name(path)` (None: left out),
/// threads for which `keep(tid)` holds.
fn calls_by_file(
    shown: &str,
    name: &dyn Fn(&str) -> Option<String>,
    keep: &dyn Fn(&str) -> bool,
) -> BTreeMap<String, Vec<Call>> {
    let mut files: BTreeMap<String, String> = BTreeMap::new();
    for l in shown.lines() {
        if let Some(rest) = l.strip_prefix("# file ") {
            let (i, p) = rest.split_once(": ").unwrap();
            if let Some(n) = name(p.rsplit_once(" (").unwrap().0) {
                files.insert(i.to_string(), n);
            }
        }
    }
    let mut out: BTreeMap<String, Vec<Call>> = BTreeMap::new();
    for l in shown.lines().filter(|l| !l.starts_with('#')) {
        let w: Vec<&str> = l.split_whitespace().collect();
        let Some(f) = files.get(w[3]) else { continue };
        if !keep(w[1]) {
            continue;
        }
        let io = [
            "read",
            "write",
            "fsync",
            "fdatasync",
            "sync_file_range",
            "syncfs",
            "fallocate",
            "truncate",
        ];
        if !io.contains(&w[2]) {
            continue;
        }
        let (offset, len) = match w[2] {
            "fsync" | "fdatasync" | "syncfs" => ("-", "-"),
            _ => (w[4], w[5]),
        };
        out.entry(f.clone()).or_default().push((
            w[2].to_string(),
            offset.to_string(),
            len.to_string(),
            w[8].contains("direct"),
        ));
    }
    out
}

/// The opens in `trace show` output of the files whose `# file` line (path and kind) `wanted`
/// takes: each one's descriptor and its flags (`oflags=0o…`).
fn opens(shown: &str, wanted: &dyn Fn(&str) -> bool) -> Vec<(i64, Option<u32>)> {
    let files: std::collections::BTreeSet<&str> = shown
        .lines()
        .filter_map(|l| l.strip_prefix("# file ")?.split_once(": "))
        .filter(|(_, p)| wanted(p))
        .map(|(i, _)| i)
        .collect();
    shown
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|w| w.len() > 6 && w[2] == "open" && files.contains(w[3]))
        .filter_map(|w| {
            let flags = w.iter().find_map(|x| x.strip_prefix("oflags=0o"));
            let flags = flags.map(|o| u32::from_str_radix(o, 8).expect("octal flags"));
            Some((w[6].parse().ok()?, flags))
        })
        .collect()
}

/// `cmd` recorded in `dir` to `trace`: what `trace show` says of it.
pub(super) fn record(dir: &Path, trace: &Path, cmd: &[&str]) -> String {
    let mut args = vec!["record", "-o", trace.to_str().unwrap(), "--"];
    args.extend_from_slice(cmd);
    let o = run_in(dir, &args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    ok_in(dir, &["trace", "show", trace.to_str().unwrap()])
}

/// Records `cmd` in `work`, then records the replay of that trace in a fresh directory, and
/// asserts each of the program's files under `work` saw the same calls, per thread count.
fn replay_matches(work: &Path, cmd: &[&str], threads_sorted: bool) -> String {
    let t = tmp();
    let original = record(work, &t.path().join("a.iogtrace"), cmd);
    let place = tmp();
    let trace = t.path().join("a.iogtrace");
    let me = assert_cmd::cargo::cargo_bin!("iogauge");
    let replayed = record(
        place.path(),
        &t.path().join("b.iogtrace"),
        &[
            me.to_str().unwrap(),
            "replay",
            trace.to_str().unwrap(),
            "--directory",
            place.path().to_str().unwrap(),
            "--mode=afap",
        ],
    );
    assert!(
        entries(place.path()).is_empty(),
        "the replay removed its files: {:?}",
        entries(place.path())
    );
    let work_s = work.to_str().unwrap().to_string();
    // The original's files by name; the replay's by the trace file index in their names
    // (`f<i>-<name>`), which the original's show output gives.
    let mut index: BTreeMap<String, String> = BTreeMap::new();
    for l in original.lines() {
        if let Some(rest) = l.strip_prefix("# file ") {
            let (i, p) = rest.split_once(": ").unwrap();
            index.insert(format!("f{i}"), p.rsplit_once(" (").unwrap().0.to_string());
        }
    }
    let want = calls_by_file(
        &original,
        &|p| p.starts_with(&work_s).then(|| p.to_string()),
        &|_| true,
    );
    // The replay's main thread lays the files out; its other threads replay.
    let main_tid = replayed
        .lines()
        .find(|l| !l.starts_with('#'))
        .map(|l| l.split_whitespace().nth(1).unwrap().to_string())
        .unwrap();
    let place_s = place.path().to_str().unwrap().to_string();
    let mut got = calls_by_file(
        &replayed,
        &|p| {
            let rest = p.strip_prefix(&place_s)?;
            let name = rest.rsplit('/').next()?;
            let (i, _) = name.split_once('-')?;
            index.get(i).filter(|o| o.starts_with(&work_s)).cloned()
        },
        &|tid| tid != main_tid,
    );
    let mut want = want;
    if threads_sorted {
        for v in want.values_mut().chain(got.values_mut()) {
            v.sort();
        }
    }
    assert!(!want.is_empty());
    assert_eq!(
        got, want,
        "the replay's calls (left) against the program's (right)"
    );
    replayed
}

#[test]
fn a_replay_of_sqlite_issues_its_calls_and_syncs_again() {
    let d = tmp();
    if !super::record::sqlite_load(d.path(), 60, 300) {
        return;
    }
    let replayed = replay_matches(d.path(), &["sqlite3", "db.sqlite", ".read load.sql"], false);
    // Each of the 60 journals is opened and closed in turn: the replay closes what it opened,
    // so the descriptor numbers its opens get stay low (a leak would climb past 60).
    let fds: Vec<i64> = opens(&replayed, &|_| true).iter().map(|o| o.0).collect();
    assert!(fds.len() >= 60, "{fds:?}");
    assert!(fds.iter().all(|&fd| fd < 30), "descriptors leak: {fds:?}");
}

#[test]
fn a_file_systems_syncs_are_recorded_and_replayed_on_the_replays_own() {
    // `sync -f FILE` is syncfs(2) of the file's file system, `sync` sync(2) of all of them:
    // the slow end of a script's buffered writes. Until 2026-12-08 neither was recorded, and
    // their time stayed think time, the same on every storage.
    let d = tmp();
    let script = "echo hi > f; sync -f f; sync; mkdir d; sync -f d";
    if let Ok(o) = Command::new("strace")
        .current_dir(d.path())
        .args(["-f", "-qq", "-e", "trace=sync,syncfs", "-o", "strace.out"])
        .args(["sh", "-c", script])
        .output()
    {
        assert!(o.status.success());
        let seen = std::fs::read_to_string(d.path().join("strace.out")).unwrap();
        let calls = seen.lines().filter(|l| l.contains("sync")).count();
        assert_eq!(calls, 3, "strace saw: {seen}");
        for f in ["f", "d", "strace.out"] {
            let _ = std::fs::remove_dir(d.path().join(f));
            let _ = std::fs::remove_file(d.path().join(f));
        }
    } else {
        eprintln!("strace is not installed: the count is the script's own");
    }
    let replayed = replay_matches(d.path(), &["sh", "-c", script], false);
    let t = tmp();
    let shown = record(
        d.path(),
        &t.path().join("c.iogtrace"),
        &["sh", "-c", script],
    );
    let syncs: Vec<Vec<&str>> = shown
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|w| w[2] == "syncfs")
        .collect();
    let f = shown
        .lines()
        .find_map(|l| {
            let (i, p) = l.strip_prefix("# file ")?.split_once(": ")?;
            p.starts_with(&format!("{}/f (", d.path().display()))
                .then(|| i.to_string())
        })
        .expect("f is a file of the trace");
    assert_eq!(syncs.len(), 3, "{shown}");
    assert!(syncs[0][3] == f && syncs[0][6] == "0", "{:?}", syncs[0]);
    assert!(
        syncs[1][3] == "-" && syncs[1].last() == Some(&"all"),
        "{:?}",
        syncs[1]
    );
    assert!(
        syncs[2][3] == "-" && syncs[2][8].contains("directory"),
        "{:?}",
        syncs[2]
    );
    // The replay synced the file system of its own directory for the two on no file.
    let own: Vec<&str> = replayed
        .lines()
        .filter(|l| l.contains(" syncfs - ") && l.contains("directory"))
        .collect();
    assert_eq!(own.len(), 2, "{replayed}");
}

#[test]
fn a_replay_of_dd_keeps_o_direct_and_the_offsets() {
    let d = tmp();
    std::fs::write(d.path().join("in"), vec![3u8; 2 << 20]).unwrap();
    let cmd = [
        "dd",
        "if=in",
        "of=out",
        "bs=64k",
        "iflag=direct",
        "oflag=direct",
        "conv=fsync",
        "status=none",
    ];
    let _ = replay_matches(d.path(), &cmd, false);
}

/// The replay's calls on a file go through the descriptor its replayed open made, as the
/// program's did: `cat` of 200 files opens each once in the replay too, and the descriptor
/// numbers stay low. Until 2026-12-03 each file's first read opened it a second time (inside
/// the read's timing) and kept that descriptor to the end: tar of /usr/include replayed its
/// reads at 4.2 µs against 1.5 µs recorded, its table of descriptors growing to 8,000.
#[test]
fn a_replays_calls_go_through_the_descriptors_its_opens_made() {
    let d = tmp();
    let names: Vec<String> = (0..200).map(|i| format!("f{i:03}")).collect();
    for n in &names {
        std::fs::write(d.path().join(n), vec![7u8; 5000]).unwrap();
    }
    let mut cmd = vec!["cat"];
    cmd.extend(names.iter().map(String::as_str));
    let replayed = replay_matches(d.path(), &cmd, false);
    // The replay's opens of the copies (`f<i>-<name>`), not the trace or its own files.
    let copies = |p: &str| p.contains(".replay/") && p.contains("-f");
    let fds: Vec<i64> = opens(&replayed, &copies).iter().map(|o| o.0).collect();
    // The layout's opens (one per file, on the main thread) and the replay's.
    assert_eq!(fds.len(), 400, "{fds:?}");
    assert!(fds.iter().all(|&fd| fd < 30), "descriptors leak: {fds:?}");
}

/// A descriptor opened O_DSYNC is replayed O_DSYNC, not O_SYNC (rustix's `OFlags::DSYNC`
/// is O_SYNC on Linux, which the replay used until 2026-12-03: a database's write-through
/// log replayed with every write's metadata synced too).
#[test]
fn a_replay_keeps_o_dsync_apart_from_o_sync() {
    let d = tmp();
    std::fs::write(d.path().join("in"), vec![3u8; 64 << 10]).unwrap();
    std::fs::write(d.path().join("log"), vec![0u8; 64 << 10]).unwrap();
    let cmd = [
        "dd",
        "if=in",
        "of=log",
        "bs=4k",
        "oflag=dsync",
        "conv=notrunc",
        "status=none",
    ];
    let replayed = replay_matches(d.path(), &cmd, false);
    let log = |p: &str| p.contains(".replay/") && p.contains("-log (");
    let oflags: Vec<u32> = opens(&replayed, &log)
        .iter()
        .map(|o| o.1.expect("an open shows its flags"))
        .collect();
    // The layout's open, then the replay's of dd's, and one for dd's writes: dd writes
    // through a dup of what it opened (its standard output) and closes the original, and
    // the replay, which sees no dup, opens the file for them with the same flags.
    assert_eq!(oflags.len(), 3, "{replayed}");
    for dd in &oflags[1..] {
        assert_eq!(dd & libc::O_DSYNC as u32, libc::O_DSYNC as u32, "{dd:o}");
        assert_ne!(
            dd & libc::O_SYNC as u32,
            libc::O_SYNC as u32,
            "O_SYNC: {dd:o}"
        );
    }
}

/// A data set read, its new version written aside and renamed over it at the step's end (as
/// SAS writes NAME.sas7bdat.lck and renames it), read back, then renamed to a name no file of
/// the trace has: the replay renames its copy onto the replaced file's copy, and then to a
/// name of its own, and its later opens find it there.
#[test]
fn a_replay_renames_as_the_program_did() {
    let d = tmp();
    std::fs::write(d.path().join("ds.sas7bdat"), vec![1u8; 8192]).unwrap();
    let script = "cat ds.sas7bdat > /dev/null \
                  && dd if=/dev/zero of=ds.sas7bdat.lck bs=4k count=4 status=none \
                  && mv ds.sas7bdat.lck ds.sas7bdat && cat ds.sas7bdat > /dev/null \
                  && mv ds.sas7bdat kept && cat kept > /dev/null";
    let replayed = replay_matches(d.path(), &["sh", "-c", script], false);
    let name = |i: &str| -> String {
        let line = replayed
            .lines()
            .find(|l| l.starts_with(&format!("# file {i}: ")))
            .unwrap();
        line.rsplit('/').next().unwrap().to_string()
    };
    let renames: Vec<(String, String, Option<String>)> = replayed
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|w| w.len() > 6 && w[2] == "rename")
        .map(|w| {
            let over = w.iter().find_map(|x| x.strip_prefix("over="));
            (name(w[3]), w[6].to_string(), over.map(name))
        })
        .collect();
    assert_eq!(renames.len(), 2, "{replayed}");
    for (file, result, _) in &renames {
        assert!(file.contains("-ds.sas7bdat.lck ("), "{file}");
        assert_eq!(result, "0", "{replayed}");
    }
    let over = renames[0]
        .2
        .as_deref()
        .expect("the first onto the data set's copy");
    assert!(over.contains("-ds.sas7bdat ("), "{over}");
    assert_eq!(renames[1].2, None, "the second to a name of its own");
    // The copy's reads after each rename found it (the same calls as the program's are
    // checked above); and nothing under the recorded paths changed but by the program.
    assert_eq!(
        std::fs::read(d.path().join("kept")).unwrap(),
        vec![0u8; 16384]
    );
    assert!(!d.path().join("ds.sas7bdat").exists());
}

/// An afap replay drops the think time, not the order the program's processes kept: a shell
/// runs `dd a; dd b`, and the replay's first call on b's copy comes after its last on a's —
/// no file orders them, the shell's wait for the first dd does (until 2026-12-02 every thread
/// of an afap replay started at once, and the two copies were read side by side).
#[test]
fn an_afap_replay_keeps_the_order_of_a_shells_commands() {
    let d = tmp();
    for f in ["a", "b"] {
        std::fs::write(d.path().join(f), vec![1u8; 256 << 10]).unwrap();
    }
    let script = "dd if=a of=/dev/null bs=4k status=none && dd if=b of=/dev/null bs=4k status=none";
    let replayed = replay_matches(d.path(), &["sh", "-c", script], false);
    // The copies' file indices, by the name the replay gave them (`f<i>-a`).
    let index = |name: &str| -> String {
        let line = replayed
            .lines()
            .find(|l| l.starts_with("# file ") && l.contains(&format!("-{name} (")))
            .unwrap_or_else(|| panic!("{name}'s copy: {replayed}"));
        line["# file ".len()..]
            .split(':')
            .next()
            .unwrap()
            .to_string()
    };
    let (a, b) = (index("a"), index("b"));
    let times = |file: &str| -> Vec<f64> {
        replayed
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .filter(|w| w.len() > 7 && w[3] == file && w[2] == "read")
            .map(|w| w[0].parse().unwrap())
            .collect()
    };
    let (ta, tb) = (times(&a), times(&b));
    assert_eq!(
        (ta.len(), tb.len()),
        (65, 65),
        "64 reads and the end's: {replayed}"
    );
    let last_a = ta.iter().cloned().fold(f64::MIN, f64::max);
    let first_b = tb.iter().cloned().fold(f64::MAX, f64::min);
    assert!(
        first_b > last_a,
        "b's first read at {first_b} ms, a's last at {last_a} ms"
    );
}

/// A file renamed away and back 40 times (names no other file of the trace has): every
/// rename replayed with result 0 — a name that grew at each would pass NAME_MAX — and the
/// reads after them found the file.
#[test]
fn a_file_renamed_again_and_again_keeps_a_name_the_replay_can_take() {
    let d = tmp();
    std::fs::write(d.path().join("a"), vec![1u8; 4096]).unwrap();
    let script = "cat a > /dev/null; for n in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; \
                  do mv a b && mv b a || exit 1; done; cat a > /dev/null";
    let replayed = replay_matches(d.path(), &["sh", "-c", script], false);
    let results: Vec<&str> = replayed
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|w| w.len() > 6 && w[2] == "rename")
        .map(|w| w[6])
        .collect();
    assert_eq!(results.len(), 40, "{replayed}");
    assert!(results.iter().all(|&r| r == "0"), "{results:?}");
}

#[test]
fn a_replay_of_a_multi_threaded_fio_job_issues_every_threads_calls() {
    if Command::new("fio").arg("--version").output().is_err() {
        skip!("fio is not installed; scripts/test-deps.sh installs it");
        return;
    }
    let d = tmp();
    let cmd = [
        "fio",
        "--name=t",
        "--thread",
        "--numjobs=2",
        "--filename=f",
        "--rw=randwrite",
        "--bs=4k",
        "--size=1m",
        "--ioengine=psync",
        "--randrepeat=1",
        "--fdatasync=8",
        "--output=/dev/null",
    ];
    let _ = replay_matches(d.path(), &cmd, true);
}

#[test]
fn replay_refuses_bad_input_and_touches_nothing() {
    let d = tmp();
    let t = d.path().join("t.iogtrace");
    record(d.path(), &t, &["sh", "-c", "echo x > y"]);
    let ts = t.to_str().unwrap();
    // The same trace with its last event a century after its end (an open-mode replay waited
    // for it, hung), with its first and last events swapped (out of issue order: a replay's
    // threads could wait for each other for ever), and with a file past the largest file
    // offset.
    use iogauge::trace::recording::Recording;
    let good = Recording::decode(&std::fs::read(&t).unwrap()[..]).unwrap();
    let [late, swapped, huge] =
        ["late", "swapped", "huge"].map(|n| d.path().join(format!("{n}.iogtrace")));
    let last = good.events.len() - 1;
    let mut r = good.clone();
    r.events[last].t = 100 * 365 * 86_400 * 1_000_000_000;
    std::fs::write(&late, r.encode().unwrap()).unwrap();
    let mut r = good.clone();
    r.events.swap(0, last);
    std::fs::write(&swapped, r.encode().unwrap()).unwrap();
    let mut r = good;
    r.footer.files[0].extent = u64::MAX;
    std::fs::write(&huge, r.encode().unwrap()).unwrap();
    let [late, swapped, huge] = [&late, &swapped, &huge].map(|p| p.to_str().unwrap());
    let late_says = format!("event {last} runs from 3153600000000000000 ns");
    for (args, says) in [
        (vec!["replay", late, "--mode=open"], late_says.as_str()),
        (vec!["replay", swapped], "before event 0 at"),
        (
            vec!["predict", swapped],
            "a trace's events are in issue order",
        ),
        (vec!["replay", huge], "past the largest file offset"),
        (vec!["predict", late], "past the recording's end"),
        (vec!["replay", ts, "--speed=0"], "--speed=0"),
        (vec!["replay", ts, "--speed=fast"], "--speed=fast"),
        (vec!["replay", ts, "--mode=burst"], "--mode=burst"),
        (
            vec!["replay", ts, "--directory=/no/such/dir"],
            "no such directory",
        ),
        (vec!["replay", "/etc/hostname"], "not an iogauge trace"),
    ] {
        let before = entries(d.path());
        let o = run_in(d.path(), &args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
        assert_eq!(entries(d.path()), before);
    }
    // The recorded path is not the replay's: y stays as the program left it.
    std::fs::write(d.path().join("y"), "mine").unwrap();
    let o = run_in(
        d.path(),
        &[
            "replay",
            ts,
            "--directory",
            d.path().to_str().unwrap(),
            "--output-format=json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["results_differ"], 0, "{v}");
    assert!(
        v["ops"]
            .as_array()
            .unwrap()
            .iter()
            .any(|op| op["op"] == "write" && op["bytes"] == 2)
    );
    assert_eq!(std::fs::read_to_string(d.path().join("y")).unwrap(), "mine");
}

#[test]
fn an_exported_iolog_replays_the_programs_io_under_iogauge_and_fio() {
    let d = tmp();
    std::fs::write(d.path().join("in"), vec![9u8; 1 << 20]).unwrap();
    let t = d.path().join("t.iogtrace");
    record(
        d.path(),
        &t,
        &[
            "dd",
            "if=in",
            "of=out",
            "bs=32k",
            "conv=fdatasync",
            "status=none",
        ],
    );
    let log = d.path().join("t.log");
    let o = run_in(
        d.path(),
        &[
            "trace",
            "export",
            t.to_str().unwrap(),
            "--iolog",
            log.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.starts_with("fio version 3 iolog\n"), "{text}");
    assert!(
        !text.contains(d.path().to_str().unwrap()),
        "no recorded path in the log:\n{text}"
    );
    let count = |word: &str, file: &str| {
        text.lines()
            .filter(|l| {
                l.split_whitespace()
                    .nth(1)
                    .is_some_and(|f| f.ends_with(file))
            })
            .filter(|l| l.split_whitespace().nth(2) == Some(word))
            .count()
    };
    // dd's 32 reads of 32 KiB; the one that found the end moved nothing: left out.
    assert_eq!(count("read", "-in"), 32, "{text}");
    assert_eq!(count("write", "-out"), 32);
    assert_eq!(count("datasync", "-out"), 1);
    // Replayed by iogauge's fio mode in another directory: the same I/O.
    let place = tmp();
    let o = run_in(
        place.path(),
        &[
            "fio",
            "--name=r",
            &format!("--read_iolog={}", log.display()),
            "--output-format=json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let j = &v["jobs"][0];
    let reads: u64 = text
        .lines()
        .filter(|l| l.split_whitespace().nth(2) == Some("read"))
        .count() as u64;
    assert_eq!(j["read"]["total_ios"], reads);
    assert_eq!(j["write"]["total_ios"], 32);
    assert_eq!(j["write"]["io_bytes"], 1 << 20);
    // fio 3.33 itself replays it where the files are (iogauge's replay above left them, as fio
    // does; fio 3.33 crashes on a log with `directory=`, so it runs in that directory).
    if Command::new("fio").arg("--version").output().is_err() {
        skip!("fio is not installed; the log is checked with iogauge's fio mode only");
    } else {
        let o = Command::new("fio")
            .current_dir(place.path())
            .args([
                "--name=r",
                &format!("--read_iolog={}", log.display()),
                "--output-format=json",
            ])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let out = stdout(&o);
        let v: Value = serde_json::from_str(&out[out.find('{').unwrap()..]).unwrap();
        let j = &v["jobs"][0];
        assert_eq!(j["read"]["total_ios"], reads, "fio's replay");
        assert_eq!(j["write"]["total_ios"], 32, "fio's replay");
    }
    // Overwriting a file iogauge did not write is refused.
    std::fs::write(d.path().join("mine"), "x").unwrap();
    let o = run_in(
        d.path(),
        &["trace", "export", t.to_str().unwrap(), "--iolog", "mine"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(std::fs::read_to_string(d.path().join("mine")).unwrap(), "x");
}

#[test]
fn ctrl_c_stops_a_replay_cleanly_and_removes_its_files() {
    let d = tmp();
    let t = d.path().join("t.iogtrace");
    record(
        d.path(),
        &t,
        &["sh", "-c", "echo a > x; sleep 3; echo b >> x"],
    );
    let place = tmp();
    let child = bin()
        .args([
            "replay",
            t.to_str().unwrap(),
            "--mode=open",
            "--directory",
            place.path().to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The replay waits for the second write's recorded time, 3 s in.
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(
        entries(place.path()).len(),
        1,
        "its directory, while it runs"
    );
    interrupt(&child);
    let started = Instant::now();
    let o = child.wait_with_output().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "stopped at once, not after the wait"
    );
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("STOPPED before the end"),
        "{}",
        stdout(&o)
    );
    assert!(
        entries(place.path()).is_empty(),
        "{:?}",
        entries(place.path())
    );
}

/// `iogauge replay trace --directory dir` (`extra` options after), once it has laid out its
/// files there: its directory made, and what is in it (names and sizes) unchanged for a
/// quarter of a second. The traces these tests replay think for a second before their first
/// call. (Until 2026-12-07 this waited only for the directory, and a test that filled the file
/// system then sometimes filled it before the lay-out, under CI's load.)
fn laid_out(trace: &Path, dir: &Path, extra: &[&str]) -> std::process::Child {
    let child = bin()
        .args(["replay", trace.to_str().unwrap(), "--directory"])
        .arg(dir)
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while entries(dir).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let listing = || -> Vec<(PathBuf, u64)> {
        let Some(replay) = entries(dir).pop() else {
            return Vec::new();
        };
        std::fs::read_dir(replay).map_or_else(
            |_| Vec::new(),
            |r| {
                let mut l: Vec<_> = r
                    .filter_map(|e| e.ok())
                    .map(|e| (e.path(), e.metadata().map_or(0, |m| m.len())))
                    .collect();
                l.sort();
                l
            },
        )
    };
    let (mut seen, mut since) = (listing(), Instant::now());
    while since.elapsed() < Duration::from_millis(250) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        let now = listing();
        if now != seen {
            (seen, since) = (now, Instant::now());
        }
    }
    child
}

#[test]
fn a_replay_whose_file_system_fills_up_stops_at_that_call_and_says_which() {
    // Until 2026-12-07 a replay went on past a write the storage refused (ENOSPC) where the
    // recording's succeeded, and ended with exit 0: its figures were another program's, the
    // failure one count among "results unlike the recording's".
    let Some(fs) = SmallFs::mount("4m") else {
        return;
    };
    let d = tmp();
    let t = d.path().join("t.iogtrace");
    // A second of thought first: time for this test to fill the file system once the
    // replay has laid out its files (and checked the room it needs: 2 MiB, there then).
    record(
        d.path(),
        &t,
        &[
            "sh",
            "-c",
            "sleep 1; dd if=/dev/zero of=a bs=64k count=32 status=none",
        ],
    );
    let child = laid_out(&t, fs.path(), &["--output-format=json"]);
    // Full, then 256 KiB given back: a few of the 32 writes land, then one fails.
    let filler = fs.path().join("filler");
    let mut f = std::fs::File::create(&filler).unwrap();
    let chunk = vec![1u8; 64 << 10];
    while std::io::Write::write_all(&mut f, &chunk).is_ok() {}
    let len = f.metadata().unwrap().len();
    f.set_len(len.saturating_sub(256 << 10)).unwrap();
    drop(f);
    let o = child.wait_with_output().unwrap();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("FAILED: the storage failed a call whose recording succeeded (write of 64.00 KiB at offset "), "{e}");
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let failed = &v["storage_failed"];
    assert_eq!(failed["op"], "write", "{v}");
    assert!(failed["file"].as_str().unwrap().ends_with("/a"), "{v}");
    assert_eq!(failed["len"], 64 << 10, "{v}");
    let at = failed["offset"].as_u64().unwrap();
    assert!(at > 0 && at < 2 << 20 && at % (64 << 10) == 0, "{v}");
    assert!(
        failed["error"].as_str().unwrap().contains("No space left"),
        "{v}"
    );
    // The writes up to it, the failed one counted as an error; none after it.
    let write = v["ops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|op| op["op"] == "write")
        .unwrap();
    assert_eq!(write["calls"].as_u64().unwrap(), at / (64 << 10) + 1, "{v}");
    assert_eq!(
        (&write["errors"], &write["bytes"]),
        (&1.into(), &at.into()),
        "{v}"
    );
    assert_eq!(v["stopped"], false, "not a signal's stop: {v}");
    // Set against the recorded calls it made, not the whole recording.
    assert!(v["recorded_span_ns"].as_u64().unwrap() > 900_000_000, "{v}");
    // Its directory removed; the test's own file left alone.
    assert_eq!(entries(fs.path()), vec![filler]);
}

#[test]
fn a_replay_whose_file_system_turns_read_only_stops_and_says_its_directory_is_left() {
    // ext4's errors=remount-ro, made by hand: the replay stops at the first call refused
    // (EROFS), and its directory, which nothing can remove then, is said to be left (until
    // 2026-12-07 the report said "removed at the end" and nothing more).
    let Some(fs) = SmallFs::mount("4m") else {
        return;
    };
    let d = tmp();
    let t = d.path().join("t.iogtrace");
    record(d.path(), &t, &["sh", "-c", "sleep 1; echo b > b"]);
    let child = laid_out(&t, fs.path(), &[]);
    let remount = |how: &str| {
        Command::new("mount")
            .args(["-o", &format!("remount,{how}")])
            .arg(fs.path())
            .status()
            .is_ok_and(|s| s.success())
    };
    assert!(remount("ro"), "a tmpfs mounted here can be made read-only");
    let o = child.wait_with_output().unwrap();
    let left = entries(fs.path());
    assert!(remount("rw"));
    let (out, e) = (stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(
        out.contains("FAILED: the storage failed a call whose recording succeeded (open of "),
        "{out}"
    );
    assert!(out.contains("Read-only file system"), "{out}");
    assert_eq!(left.len(), 1, "{left:?}");
    let shown = left[0].display().to_string();
    assert!(
        e.contains(&format!(
            "NOT REMOVED: the replay's directory {shown} is still there"
        )),
        "{e}"
    );
    std::fs::remove_dir_all(&left[0]).unwrap();
}

#[test]
fn fios_own_iolog_imported_is_a_trace_that_replays_its_io() {
    if Command::new("fio").arg("--version").output().is_err() {
        skip!("fio is not installed; scripts/test-deps.sh installs it");
        return;
    }
    let d = tmp();
    let o = Command::new("fio")
        .current_dir(d.path())
        .args([
            "--name=j",
            "--filename=data",
            "--rw=randrw",
            "--bs=4k",
            "--size=1m",
            "--ioengine=psync",
            "--randrepeat=1",
            "--fsync=8",
            "--write_iolog=job.log",
            "--output=/dev/null",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let log = std::fs::read_to_string(d.path().join("job.log")).unwrap();
    let count = |word: &str| {
        log.lines()
            .filter(|l| l.split_whitespace().nth(2) == Some(word))
            .count() as u64
    };
    let (reads, writes, syncs) = (count("read"), count("write"), count("sync"));
    assert!(reads > 0 && writes > 0 && syncs > 0, "{log}");
    let o = run_in(
        d.path(),
        &["trace", "import", "--iolog", "job.log", "-o", "j.iogtrace"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v = trace_stats(d.path(), "j.iogtrace");
    let f = &v["files"][0];
    assert!(f["path"].as_str().unwrap().ends_with("data"), "{f}");
    assert_eq!(f["reads"]["calls"], reads);
    assert_eq!(f["writes"]["calls"], writes);
    assert_eq!(f["reads"]["bytes"], reads * 4096);
    assert_eq!(f["syncs"], syncs);
    assert!(
        v["method"]
            .as_str()
            .unwrap()
            .contains("fio's I/O log version 3")
    );
    // Replayed elsewhere, call for call.
    let r = replayed(d.path(), "j.iogtrace", &[]);
    assert_eq!(op_bytes(&r, "read"), reads * 4096, "{r}");
    assert_eq!(op_bytes(&r, "write"), writes * 4096, "{r}");
    // Bad input: refused, nothing written; an existing output is kept.
    let before = entries(d.path());
    for (args, text) in [
        (
            &["trace", "import", "--iolog", "data", "-o", "x.iogtrace"][..],
            "not fio's I/O log",
        ),
        (
            &[
                "trace",
                "import",
                "--blktrace",
                "job.log",
                "-o",
                "x.iogtrace",
            ][..],
            "not a blktrace",
        ),
        (
            &["trace", "import", "--iolog", "job.log", "-o", "job.log"][..],
            "job.log",
        ),
        (&["trace", "import", "-o", "x.iogtrace"][..], "--iolog"),
        // The log given without its option: no workload option's hint, the command's help.
        (
            &["trace", "import", "job.log", "-o", "x.iogtrace"][..],
            "job.log: unexpected word; 'iogauge trace --help' lists its options",
        ),
    ] {
        let o = run_in(d.path(), args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(text), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o).trim().lines().count(), 1, "{}", stderr(&o));
    }
    assert_eq!(entries(d.path()), before);
    assert_eq!(
        std::fs::read_to_string(d.path().join("job.log")).unwrap(),
        log
    );
}

/// `trace` (in `dir`) replayed in a directory of its own with `extra` options: its JSON
/// report, checked to have done what the trace did and removed its files.
fn replayed(dir: &Path, trace: &str, extra: &[&str]) -> Value {
    let place = tmp();
    let mut args = vec![
        "replay",
        trace,
        "--directory",
        place.path().to_str().unwrap(),
        "--output-format=json",
    ];
    args.extend_from_slice(extra);
    let o = run_in(dir, &args);
    assert!(o.status.success(), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["results_differ"], 0, "{r}");
    assert!(
        entries(place.path()).is_empty(),
        "the replay removed its files"
    );
    r
}

/// The bytes a replay report's calls of one kind moved.
fn op_bytes(r: &Value, name: &str) -> u64 {
    r["ops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["op"] == name)
        .map_or(0, |o| o["bytes"].as_u64().unwrap())
}

/// A loop device over a file of `size` bytes in `dir`, detached when dropped.
struct Loop(String);

impl Loop {
    fn new(dir: &Path, size: u64) -> Option<Loop> {
        let back = dir.join("back");
        std::fs::File::create(&back).ok()?.set_len(size).ok()?;
        let o = Command::new("losetup")
            .args(["-f", "--show"])
            .arg(&back)
            .output()
            .ok()?;
        o.status
            .success()
            .then(|| Loop(stdout(&o).trim().to_string()))
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.0]).status();
    }
}

#[test]
fn a_devices_block_requests_are_recorded_and_replay() {
    let d = tmp();
    let Some(dev) = Loop::new(d.path(), 16 << 20) else {
        skip!("no loop device here (losetup needs root)");
        return;
    };
    let dev = dev.0.clone();
    let stats = |trace: &str| trace_stats(d.path(), trace);
    let o = run_in(
        d.path(),
        &[
            "record",
            "--block",
            &dev,
            "-o",
            "w.iogtrace",
            "--",
            "dd",
            "if=/dev/zero",
            &format!("of={dev}"),
            "bs=64k",
            "count=32",
            "oflag=direct",
            "status=none",
        ],
    );
    if !o.status.success() && stderr(&o).contains("perf_event_open") {
        skip!("perf cannot trace the block layer here: {}", stderr(&o));
        return;
    }
    assert!(o.status.success(), "{}", stderr(&o));
    let v = stats("w.iogtrace");
    assert!(
        v["method"].as_str().unwrap().contains("block_rq_issue"),
        "{v}"
    );
    let f = &v["files"][0];
    assert_eq!(f["path"], dev.as_str());
    assert_eq!(f["kind"], "block");
    // However the block layer split or merged them, what dd wrote reached the device.
    assert_eq!(f["writes"]["bytes"], 2 << 20, "{v}");
    assert_eq!(f["reads"]["bytes"], 0);
    let o = run_in(
        d.path(),
        &[
            "record",
            "--block",
            &dev,
            "-o",
            "r.iogtrace",
            "--",
            "dd",
            &format!("if={dev}"),
            "of=/dev/null",
            "bs=4k",
            "count=128",
            "iflag=direct",
            "status=none",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v = stats("r.iogtrace");
    assert_eq!(v["files"][0]["reads"]["bytes"], 128 * 4096, "{v}");
    assert_eq!(v["files"][0]["reads"]["calls"], 128, "{v}");
    // The write trace replays, in open mode, on a file in a directory of its own.
    let r = replayed(d.path(), "w.iogtrace", &["--mode=open"]);
    assert_eq!(op_bytes(&r, "write"), 2 << 20, "{r}");
    // Not a block device: refused in one line, nothing run, nothing written.
    let before = entries(d.path());
    let o = run_in(
        d.path(),
        &[
            "record",
            "--block",
            "/dev/null",
            "-o",
            "n.iogtrace",
            "--",
            "touch",
            "ran",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("not a block device"), "{}", stderr(&o));
    assert_eq!(entries(d.path()), before);
}

/// A program that never stops computing on CPU 0, ended when dropped (a failing test must not
/// leave it busy under the tests that follow).
struct Busy(std::process::Child);

impl Drop for Busy {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A directory on tmpfs to record and replay in, where `taskset` can keep programs on one CPU
/// (None: the test is skipped, the reason printed).
fn on_one_cpu() -> Option<tempfile::TempDir> {
    let Some(shm) = shm_tmpfs() else {
        skip!("no tmpfs at /dev/shm to record and replay on");
        return None;
    };
    if Command::new("taskset").arg("-V").output().is_err() {
        skip!("no taskset to keep programs on one CPU");
        return None;
    }
    Some(tempfile::tempdir_in(shm).unwrap())
}

/// A Python program that writes 4 KiB to `out`, then computes for `secs` by `clock` (a
/// function of Python's `time`), `n` times.
fn computing(n: u32, secs: f64, clock: &str) -> String {
    format!(
        "import os,time\n\
         fd=os.open('out',os.O_WRONLY|os.O_CREAT,0o644)\n\
         for i in range({n}):\n\
         \x20   os.write(fd,b'x'*4096)\n\
         \x20   t=time.{clock}()\n\
         \x20   while time.{clock}()-t<{secs}: pass\n"
    )
}

/// iogauge with `args`, run in `dir` on CPU 0.
fn iogauge_on_cpu_0(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new("taskset");
    c.args(["-c", "0"])
        .arg(assert_cmd::cargo::cargo_bin!("iogauge"))
        .args(args)
        .current_dir(dir);
    c
}

/// Runs `cmd` on CPU 0 beside a program that never stops computing there; its output, and how
/// long it took.
fn beside_a_busy_program(cmd: &mut Command) -> (Output, Duration) {
    let _busy = Busy(
        Command::new("taskset")
            .args(["-c", "0", "sh", "-c", "while :; do :; done"])
            .spawn()
            .unwrap(),
    );
    std::thread::sleep(Duration::from_millis(50));
    let t0 = Instant::now();
    let o = cmd.output().unwrap();
    (o, t0.elapsed())
}

#[test]
fn a_replay_beside_a_busy_program_waits_out_its_think_times_as_the_program_did() {
    // A program that writes 4 KiB, then computes for 300 µs, 150 times: its think times are
    // its own work, which keeps the CPU. A replay that yielded the CPU in them gave it to the
    // busy program for a time slice at each, and took 10-18 times as long as the program.
    let Some(work) = on_one_cpu() else {
        return;
    };
    let w = work.path();
    let program = &computing(150, 0.0003, "perf_counter");
    record(w, &w.join("t.iogtrace"), &["python3", "-c", program]);
    let (o, program_took) = beside_a_busy_program(
        Command::new("taskset")
            .args(["-c", "0", "python3", "-c", program])
            .current_dir(w),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let place = tempfile::tempdir_in(w.parent().unwrap()).unwrap();
    let (o, _) = beside_a_busy_program(&mut iogauge_on_cpu_0(
        w,
        &[
            "replay",
            "t.iogtrace",
            "--output-format=json",
            "--directory",
            place.path().to_str().unwrap(),
        ],
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let span = Duration::from_nanos(r["replayed_span_ns"].as_u64().unwrap());
    assert!(
        span < 3 * program_took,
        "the replay took {span:?} beside the busy program, the program {program_took:?}"
    );
}

#[test]
fn a_replay_computes_what_the_program_computed_and_leaves_out_its_waits_for_a_cpu() {
    // A program that writes 4 KiB, then computes for 2 ms, 100 times, recorded on CPU 0
    // beside a busy program: about half of each think time it waited for the CPU. The replay,
    // run alone, uses the CPU for what the program computed (the trace says which part of
    // each think time ran, slept, or waited for a CPU: a replay that slept through its think
    // times used next to none) and leaves the waits out (it has no busy neighbour).
    let Some(work) = on_one_cpu() else {
        return;
    };
    let w = work.path();
    let program = &computing(100, 0.002, "thread_time");
    let (o, _) = beside_a_busy_program(&mut iogauge_on_cpu_0(
        w,
        &["record", "-o", "t.iogtrace", "--", "python3", "-c", program],
    ));
    assert!(o.status.success(), "{}", stderr(&o));
    // The replay's CPU time, as its parent counts it.
    let place = tempfile::tempdir_in(w.parent().unwrap()).unwrap();
    let o = Command::new("python3")
        .args([
            "-c",
            "import resource,subprocess,sys\n\
             r=subprocess.run(sys.argv[1:],capture_output=True)\n\
             sys.stdout.buffer.write(r.stdout)\n\
             u=resource.getrusage(resource.RUSAGE_CHILDREN)\n\
             sys.stderr.write('%d' % ((u.ru_utime+u.ru_stime)*1e9))\n\
             sys.exit(r.returncode)",
        ])
        .arg(assert_cmd::cargo::cargo_bin!("iogauge"))
        .args([
            "replay",
            "t.iogtrace",
            "--output-format=json",
            "--directory",
        ])
        .arg(place.path())
        .current_dir(w)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let stats: Value =
        serde_json::from_str(&ok_in(w, &["trace", "stats", "t.iogtrace", "--json"])).unwrap();
    if stats["threads"][0]["off_cpu"].is_null() {
        skip!("the capture did not see the scheduler (ptrace): no split think times");
        return;
    }
    let ms = |v: &Value| v.as_u64().unwrap() as f64 / 1e6;
    let (computed, left_out) = (
        ms(&r["think"]["computed_ns"]),
        ms(&r["think"]["left_out_ns"]),
    );
    let cpu = stderr(&o).trim().parse::<f64>().unwrap() / 1e6;
    let (recorded, replayed) = (ms(&r["recorded_span_ns"]), ms(&r["replayed_span_ns"]));
    // Its own waits for a CPU (a machine busy with other tests): not the program's.
    let waited = r["cpu_wait"]["replayed_ns"]
        .as_u64()
        .map_or(0.0, |n| n as f64 / 1e6);
    let said = format!(
        "computed {computed:.1} ms, left out {left_out:.1} ms, replay CPU {cpu:.1} ms, \
         span {replayed:.1} ms (its waits for a CPU {waited:.1} ms) against {recorded:.1} ms \
         recorded"
    );
    // What the program computed: 200 ms in its loop, and Python's own work between its
    // calls as it starts (3,500 of them, its imports).
    assert!((180.0..recorded).contains(&computed), "{said}");
    assert!(cpu >= 0.9 * computed, "{said}");
    // What it waited for the CPU beside the busy program (about as much, with one CPU shared).
    assert!(left_out > 50.0, "{said}");
    assert!(replayed - waited < recorded - left_out / 2.0, "{said}");
}

/// A replay of `trace` in `place`, killed (SIGKILL) once the file its program makes there
/// (`made`, 256 KiB) is written: the directory it leaves, and its files' count.
fn killed_replay(trace: &Path, place: &Path) -> (PathBuf, usize) {
    let mut child = laid_out(trace, place, &[]);
    let dir = entries(place).pop().expect("the replay's directory");
    let deadline = Instant::now() + Duration::from_secs(10);
    let made = |dir: &Path| {
        entries(dir).iter().any(|p| {
            p.to_string_lossy().ends_with("-made")
                && std::fs::metadata(p).is_ok_and(|m| m.len() == 256 << 10)
        })
    };
    while !made(&dir) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(made(&dir), "{:?}", entries(&dir));
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(dir.is_dir(), "SIGKILL leaves it");
    let n = entries(&dir).len();
    (dir, n)
}

/// A trace of a program that makes `made` (256 KiB), thinks for two seconds, then reads it.
fn made_then_sleep(d: &Path) -> PathBuf {
    let t = d.join("t.iogtrace");
    let script = "dd if=/dev/zero of=made bs=64k count=4 status=none; sleep 2; cat made";
    record(d, &t, &["sh", "-c", script]);
    t
}

#[test]
fn a_killed_replays_directory_is_removed_by_the_next_one_there_and_a_running_ones_is_not() {
    // Until 2026-12-07 a replay killed before its end (SIGKILL, the OOM killer) left its
    // directory, the laid-out copies and all, for good; the files it made for the program were
    // not even marked as iogauge's.
    let d = tmp();
    let place = tmp();
    if !super::safety::has_user_xattrs(place.path()) {
        return;
    }
    let t = made_then_sleep(d.path());
    let quick = d.path().join("quick.iogtrace");
    record(d.path(), &quick, &["sh", "-c", "echo x > y"]);
    let (dir, n) = killed_replay(&t, place.path());
    // The next replay there removes it (saying so before it starts), and runs two seconds…
    let mut next = bin()
        .args(["replay", t.to_str().unwrap(), "--directory"])
        .arg(place.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut said = String::new();
    let mut err = std::io::BufReader::new(next.stderr.take().unwrap());
    std::io::BufRead::read_line(&mut err, &mut said).unwrap();
    let line = format!("iogauge: replay: removed {} ({n} files of ", dir.display());
    assert!(said.starts_with(&line), "{line}\n{said}");
    assert!(
        said.contains("left by a replay that did not finish (killed before it could remove it)"),
        "{said}"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while entries(place.path()).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let running = entries(place.path())
        .pop()
        .expect("the next replay's directory");
    // …while a third one comes and goes, leaving the running one's directory (its lock held).
    let place_arg = place.path().to_str().unwrap();
    let o = run_in(
        d.path(),
        &["replay", quick.to_str().unwrap(), "--directory", place_arg],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("removed"), "{}", stderr(&o));
    assert!(running.is_dir());
    assert!(next.wait().unwrap().success());
    assert!(
        entries(place.path()).is_empty(),
        "{:?}",
        entries(place.path())
    );
}

#[test]
fn a_killed_replays_directory_holding_someones_file_keeps_it_and_says_so() {
    let d = tmp();
    let place = tmp();
    if !super::safety::has_user_xattrs(place.path()) {
        return;
    }
    let t = made_then_sleep(d.path());
    let (dir, n) = killed_replay(&t, place.path());
    std::fs::write(dir.join("notes.txt"), b"mine").unwrap();
    std::os::unix::fs::symlink(d.path().join("t.iogtrace"), dir.join("link")).unwrap();
    // Predict, replaying there too, finds it alike.
    let o = run_in(
        d.path(),
        &[
            "predict",
            t.to_str().unwrap(),
            "--directory",
            place.path().to_str().unwrap(),
            "--repeat",
            "1",
        ],
    );
    let e = stderr(&o);
    assert!(o.status.success(), "{e}");
    let line = format!(
        "iogauge: predict: found {}, left by a replay that did not finish (killed before it \
         could remove it): removed its {n} files of ",
        dir.display()
    );
    assert!(e.contains(&line), "{line}\n{e}");
    assert!(e.contains("NOT the rest ("), "{e}");
    assert!(
        e.contains("link is not a file a run of iogauge made"),
        "{e}"
    );
    assert!(
        e.contains("notes.txt is not a file a run of iogauge made"),
        "{e}"
    );
    assert!(e.contains("); remove it by hand"), "{e}");
    let mut left = entries(&dir);
    left.sort();
    assert_eq!(left, vec![dir.join("link"), dir.join("notes.txt")]);
    assert_eq!(std::fs::read(dir.join("notes.txt")).unwrap(), b"mine");
    // The predict's own replay directory is gone; only the leftover stays.
    assert_eq!(entries(place.path()), vec![dir]);
}

/// The capture's cost between two recorded calls is measured at record time and kept in the
/// trace; a closed replay takes it out of each think time — never more than the computation
/// there — and says how much, and a prediction counts what the replay took. A trace measured
/// as costing 1 ms between calls, of a program that computes 3 ms between its 40 reads,
/// replays 39 ms shorter than the same trace without the figure; open and afap replays and
/// traces without it take nothing out.
#[test]
fn a_closed_replay_takes_the_captures_cost_out_of_the_think_times() {
    use iogauge::trace::recording::Recording;
    let w = tmp();
    std::fs::write(w.path().join("data"), vec![7u8; 1 << 16]).unwrap();
    let program = "import os, time\n\
        fd = os.open('data', os.O_RDONLY)\n\
        for i in range(40):\n\
        \x20   os.pread(fd, 4096, 4096 * (i % 16))\n\
        \x20   t = time.perf_counter()\n\
        \x20   while time.perf_counter() - t < 0.003: pass\n";
    std::fs::write(w.path().join("think.py"), program).unwrap();
    let py = super::predict::python();
    let cmd = ["record", "--output", "t.iogtrace", "--", py, "think.py"];
    let o = run_in(w.path(), &cmd);
    assert!(o.status.success(), "{}", stderr(&o));
    let t = w.path().join("t.iogtrace");
    let good = Recording::decode(&std::fs::read(&t).unwrap()[..]).unwrap();
    let o = good
        .footer
        .overhead
        .clone()
        .expect("the capture measured its cost");
    let Some(between) = o.between_calls_ns else {
        panic!("the calibration measured no cost between calls: {o:?}");
    };
    // Some of the capture's cost lies between the calls, and no more than a few of its
    // whole cost per call (the way into the kernel and back counts in with it).
    assert!(
        between > 0.0 && between < 4.0 * o.per_call_ns.max(1_000.0),
        "{o:?}"
    );
    let stats = ok_in(w.path(), &["trace", "stats", "t.iogtrace"]);
    assert!(
        stats.contains("a call lies between the recorded calls"),
        "{stats}"
    );
    // The same trace, measured at 1 ms between calls, and without the figure.
    let with = |between: Option<f64>, name: &str| {
        let mut r = good.clone();
        r.footer.overhead.as_mut().unwrap().between_calls_ns = between;
        std::fs::write(w.path().join(name), r.encode().unwrap()).unwrap();
    };
    with(Some(1e6), "ms.iogtrace");
    with(None, "none.iogtrace");
    let (mut spans, mut taken) = (Vec::new(), 0);
    for _ in 0..3 {
        let ms = replayed(w.path(), "ms.iogtrace", &[]);
        let none = replayed(w.path(), "none.iogtrace", &[]);
        assert!(none.get("capture_taken").is_none(), "{none}");
        let c = &ms["capture_taken"];
        assert_eq!(c["between_calls_ns"], 1_000_000, "{c}");
        taken = c["taken_ns"].as_u64().unwrap();
        let span = |r: &Value| r["replayed_span_ns"].as_i64().unwrap();
        spans.push(span(&none) - span(&ms));
    }
    // Each of the 39 gaps after a read holds 3 ms of computation: 1 ms out of each; the
    // interpreter's own calls before them, less (what ran between them, at most 1 ms each).
    assert!(taken >= 39_000_000, "taken out {taken} ns");
    let recorded_think: u64 = good
        .events
        .windows(2)
        .map(|p| p[1].t.saturating_sub(p[0].done_ns()))
        .sum();
    assert!(taken <= recorded_think, "{taken} of {recorded_think} ns");
    spans.sort_unstable();
    assert!(
        spans[1] >= 25_000_000,
        "the replays taking 1 ms out of each think time were shorter by {spans:?} ns"
    );
    for mode in ["--mode=open", "--mode=afap"] {
        let r = replayed(w.path(), "ms.iogtrace", &[mode]);
        assert!(r.get("capture_taken").is_none(), "{mode}: {r}");
    }
    let text = ok_in(
        w.path(),
        &[
            "replay",
            "ms.iogtrace",
            "--directory",
            w.path().to_str().unwrap(),
        ],
    );
    assert!(
        text.contains("the capture's cost taken out of the think times: ")
            && text.contains("1000.00 µs before each replayed call"),
        "{text}"
    );
}
