//! The prediction's arithmetic on traces and timelines made by hand, where the answer is known.

use super::*;
use crate::trace::recording::{Event, FileInfo, Footer, Header, NO_FILE, Op, Overhead, ThreadInfo};
use crate::trace::replayed::ReplayReport;

mod told;

fn ev(t: u64, dur: u64, tid: u32, op: Op) -> Event {
    Event::test(t, dur, tid, op)
}

fn thread(tid: u32, parent: Option<u32>, born: u64, ended: u64) -> ThreadInfo {
    ThreadInfo {
        tid,
        pid: tid,
        first_ns: born,
        last_ns: ended,
        parent,
        born_ns: parent.map(|_| born),
        ended_ns: Some(ended),
        off_cpu: None,
    }
}

fn recording(events: Vec<Event>, threads: Vec<ThreadInfo>, duration: u64) -> Recording {
    Recording {
        header: Header {
            format: "iogauge-trace".into(),
            version: 1,
            iogauge: "test".into(),
            command: vec!["prog".into()],
            started_unix_ms: 0,
            host: "h".into(),
            method: "test".into(),
        },
        events,
        footer: Footer {
            duration_ns: duration,
            exit_code: Some(0),
            files: vec![FileInfo {
                path: "/data/f".into(),
                kind: "regular".into(),
                size_at_open: None,
                extent: 1 << 20,
                removed: false,
                in_memory: false,
            }],
            threads,
            ..Default::default()
        },
    }
}

/// A timeline: each event's replayed completion and duration; no replay delays; every
/// event one call on its chain per call before it in its thread.
fn timeline(done: &[u64], took: &[u64]) -> Timeline {
    Timeline {
        done_ns: done.iter().map(|&d| Some(d)).collect(),
        took_ns: took.to_vec(),
        chain_late_ns: vec![0; done.len()],
        chain_capture_ns: vec![0; done.len()],
        chain_calls: (1..=done.len() as u64).collect(),
        slept: vec![false; done.len()],
        after: (0..done.len()).map(|i| i.checked_sub(1)).collect(),
    }
}

fn report() -> ReplayReport {
    ReplayReport {
        trace: "t".into(),
        speed: 1.0,
        directory: "d".into(),
        ..Default::default()
    }
}

fn predict_with(r: &Recording, tls: &[Timeline]) -> Prediction {
    predict_with_report(r, &report(), tls)
}

/// `predict_with`, every replay reporting `rep`.
fn predict_with_report(r: &Recording, rep: &ReplayReport, tls: &[Timeline]) -> Prediction {
    let runs: Vec<Replayed<'_>> = tls
        .iter()
        .map(|t| Replayed {
            report: rep,
            timeline: t,
        })
        .collect();
    let to = Target {
        directory: "d",
        cold: ColdStart::default(),
    };
    predict(r, "t", &to, &runs)
}

/// One thread: calls done at 150, 300, 500; it ends at 990, the recording at 1000. Replayed
/// twice as slow: the last call completes at 700 instead of 500.
fn one_thread() -> (Recording, Timeline) {
    let r = recording(
        vec![
            ev(100, 50, 1, Op::Write),
            ev(200, 100, 1, Op::Write),
            ev(400, 100, 1, Op::Fsync),
        ],
        vec![thread(1, None, 0, 990)],
        1000,
    );
    (r, timeline(&[200, 400, 700], &[100, 200, 200]))
}

#[test]
fn one_thread_ends_its_recorded_tail_after_its_last_replayed_call() {
    let (r, tl) = one_thread();
    let p = predict_with(&r, &[tl]);
    // 700 + (990 - 500) + (1000 - 990).
    assert_eq!(p.predicted_ns, 1200);
    assert_eq!(p.critical_tid, Some(1));
    // Nothing uncertain but the method's bias: 2% of 1200.
    assert_eq!(p.bound.model_ns, 24);
    assert_eq!(p.bound_ns, 24);
    assert_eq!(p.threads[0].recorded_io_ns, 250);
    assert_eq!(p.threads[0].replayed_io_ns, 500);
    assert_eq!(p.threads[0].predicted_end_ns, Some(1190));
    // The critical thread was in I/O 250 of 1000 ns recorded, 500 of 1200 predicted.
    assert!((p.io_share_recorded_pct - 25.0).abs() < 1e-9);
    assert!((p.io_share_predicted_pct - 500.0 / 12.0).abs() < 1e-9);
}

#[test]
fn the_replays_delays_and_the_captures_cost_left_are_taken_away_and_bounded() {
    let (mut r, mut tl) = one_thread();
    // The replay issued 30 ns late along the chain; the capture costs 10 ns a call, and the
    // recording's 3 calls + 1 other call; 8 ns of stops on top.
    tl.chain_late_ns[2] = 30;
    r.footer.other_calls = 1;
    r.footer.overhead = Some(Overhead {
        per_call_ns: 10.0,
        per_path_call_ns: 0.0,
        per_unwatched_call_ns: 0.0,
        unwatched_calls: 0,
        added_ns: 48,
        added_pct: 4.8,
        between_calls_ns: None,
    });
    let p = predict_with(&r, &[tl.clone()]);
    // Chain: 3 calls of 3 (share 1), + 1 other call: 4 watched calls calibrated at 40 ns,
    // between none and 3 x 40 left (60 ± 60), and the 8 ns of stops all left.
    assert_eq!(p.replays[0].replay_delay_ns, 30);
    assert_eq!(p.replays[0].capture_left_ns, 68);
    assert_eq!(p.predicted_ns, 1200 - 30 - 68);
    assert_eq!(p.bound.capture_ns, 60);
    // A replay that took 20 ns of it out of the chain's think times itself: 48 left to take
    // away, the bound the same.
    let mut taken = tl.clone();
    taken.chain_capture_ns[2] = 20;
    let t = predict_with(&r, &[taken]);
    assert_eq!(t.replays[0].capture_taken_ns, 20);
    assert_eq!(t.replays[0].capture_left_ns, 48);
    assert_eq!(t.predicted_ns, 1200 - 30 - 48);
    assert_eq!(t.bound.capture_ns, 60);
    assert_eq!(p.recorded_untraced_ns, Some(1000 - 48));
}

#[test]
fn the_median_replay_is_the_prediction_and_their_spread_a_prediction_interval() {
    let (r, tl) = one_thread();
    let mut slow = tl.clone();
    slow.done_ns[2] = Some(800);
    let mut fast = tl.clone();
    fast.done_ns[2] = Some(650);
    let p = predict_with(&r, &[slow, tl, fast]);
    assert_eq!(p.predicted_ns, 1200);
    // s = √(((1300-1216.7)² + (1200-1216.7)² + (1150-1216.7)²) / 2) = 76.38; × t(0.975, 2)
    // 4.303 × √(4/3): 379.5.
    assert_eq!(p.bound.noise_ns, 379);
    assert_eq!(
        p.replays.iter().map(|x| x.predicted_ns).collect::<Vec<_>>(),
        vec![1300, 1200, 1150]
    );
    assert!((p.bound_pct - (379.0 + 24.0) / 12.0).abs() < 1e-9);
}

#[test]
fn the_thread_that_finishes_last_on_the_target_decides_the_end() {
    // Main (1) writes, starts workers 2 and 3, waits for both, ends 20 ns after the last.
    // Recorded, 2 ended last (at 900, 3 at 600); replayed, 3's I/O is much slower.
    let r = recording(
        vec![
            ev(0, 10, 1, Op::Write),
            ev(100, 700, 2, Op::Write),
            ev(100, 400, 3, Op::Write),
        ],
        vec![
            thread(1, None, 0, 920),
            thread(2, Some(1), 50, 900),
            thread(3, Some(1), 50, 600),
        ],
        930,
    );
    let tl = timeline(&[10, 800, 1500], &[10, 700, 1400]);
    let p = predict_with(&r, &[tl]);
    // 3 ends 100 after its last call: 1600; 2 at 800 + 100 = 900. Main ends 20 after the
    // last of them: 1620, and the recording 10 after main.
    assert_eq!(p.critical_tid, Some(3));
    assert_eq!(p.predicted_ns, 1630);
    let end = |tid| {
        p.threads
            .iter()
            .find(|t| t.tid == tid)
            .unwrap()
            .predicted_end_ns
            .unwrap()
    };
    assert_eq!((end(1), end(2), end(3)), (1620, 900, 1600));
}

#[test]
fn a_shell_that_ran_its_commands_one_after_the_other_ends_after_the_last() {
    // The shell (1) reads its script, runs `a` (2) then `b` (3); on the target `a` is faster.
    let r = recording(
        vec![
            ev(0, 10, 1, Op::Read),
            ev(100, 400, 2, Op::Write),
            ev(700, 100, 3, Op::Write),
        ],
        vec![
            thread(1, None, 0, 1000),
            thread(2, Some(1), 50, 550),
            thread(3, Some(1), 600, 900),
        ],
        1000,
    );
    // The replay's anchors start `b` 200 after `a`'s last call (the recorded gap): a's call
    // completes at 300, b's at 300 + 200 + 100.
    let tl = timeline(&[10, 300, 600], &[10, 200, 100]);
    let p = predict_with(&r, &[tl]);
    // b ends 100 after its call (700), the shell 100 after b (800) — not at its recorded
    // 1000, which held a's slower run.
    assert_eq!(p.predicted_ns, 800);
    assert_eq!(p.critical_tid, Some(3));
}

#[test]
fn io_the_trace_cannot_see_is_in_the_bound_and_said() {
    let (mut r, mut tl) = one_thread();
    r.events.push(ev(600, 200, 1, Op::UringEnter));
    tl.done_ns.push(None);
    tl.took_ns.push(0);
    tl.chain_late_ns.push(0);
    tl.chain_calls.push(0);
    let p = predict_with(&r, &[tl]);
    assert_eq!(p.bound.unseen_io_ns, 200);
    assert_eq!(p.predicted_ns, 1200);
    assert!(
        p.warnings.iter().any(|w| w.contains("io_uring/libaio")),
        "{:?}",
        p.warnings
    );
}

#[test]
fn files_read_from_memory_when_recorded_are_said() {
    let mut big = ev(0, 2_000, 1, Op::Read);
    big.len = 1 << 20;
    big.result = 1 << 20;
    let mut r = recording(
        vec![big, Event { t: 10_000, ..big }],
        vec![thread(1, None, 0, 20_000)],
        20_000,
    );
    let tl = timeline(&[2_000, 12_000], &[2_000, 2_000]);
    // A file the program created: nothing to say.
    let p = predict_with(&r, std::slice::from_ref(&tl));
    assert!(
        !p.warnings.iter().any(|w| w.contains("from memory")),
        "{:?}",
        p.warnings
    );
    // One that existed, read at 2 µs a MiB: it was cached.
    r.footer.files[0].size_at_open = Some(1 << 20);
    let p = predict_with(&r, &[tl]);
    assert!(
        p.warnings.iter().any(|w| w.starts_with(
            "files that existed and were read from memory when recorded: 1 (2.00 MiB read)"
        )),
        "{:?}",
        p.warnings
    );
    assert_eq!(p.patterns[0].pattern, "1 MiB reads, not sequential");
    assert_eq!(p.patterns[0].calls, 2);
}

#[test]
fn mappings_of_libraries_are_not_data_and_mappings_of_data_files_are_said() {
    let (mut r, mut tl) = one_thread();
    r.footer.files.push(FileInfo {
        path: "/opt/app/lib/libc.so.6".into(),
        kind: "regular".into(),
        size_at_open: Some(2 << 20),
        extent: 0,
        removed: false,
        in_memory: false,
    });
    // libc mapped read-only private, then read-execute (a library, wherever it lives); then
    // the data file mapped shared.
    let mut lib = ev(10, 1, 1, Op::Mmap);
    lib.file = 1;
    lib.arg = 1 | (2 << 8);
    let mut code = lib;
    code.arg = 5 | (2 << 8);
    // A file of its own like libc's, mapped at `t` with `arg` (protection | flags << 8).
    let mapped = |r: &mut Recording, path: &str, t: u64, arg: u32| {
        r.footer.files.push(FileInfo {
            path: path.into(),
            ..r.footer.files[1].clone()
        });
        let mut e = ev(t, 1, 1, Op::Mmap);
        e.file = r.footer.files.len() as u32 - 1;
        e.arg = arg;
        e
    };
    // A call the replay does not make, inserted at `at`.
    let unreplayed = |r: &mut Recording, tl: &mut Timeline, at: usize, e: Event| {
        r.events.insert(at, e);
        tl.done_ns.insert(at, None);
        tl.took_ns.insert(at, 0);
        tl.chain_late_ns.insert(at, 0);
        tl.chain_calls.insert(at, 0);
    };
    // And a locale file mapped shared: the system's, not the program's data.
    let locale = mapped(&mut r, "/usr/lib/locale/C.utf8/LC_CTYPE", 15, 1 | (1 << 8));
    // A POSIX shared memory object (shm_open: PostgreSQL's dynamic shared memory), read and
    // written: memory, not storage. (A file in a directory of /dev/shm is a file.)
    let shm = mapped(&mut r, "/dev/shm/PostgreSQL.664298292", 16, 3 | (1 << 8));
    for e in [locale, shm, lib, code] {
        unreplayed(&mut r, &mut tl, 0, e);
    }
    let p = predict_with(&r, std::slice::from_ref(&tl));
    assert!(
        !p.warnings.iter().any(|w| w.contains("mappings")),
        "{:?}",
        p.warnings
    );
    let mut data = ev(20, 1, 1, Op::Mmap);
    data.arg = 3 | (1 << 8);
    unreplayed(&mut r, &mut tl, 3, data);
    let p = predict_with(&r, &[tl]);
    assert!(
        p.warnings
            .iter()
            .any(|w| w.starts_with("mappings of data files (1)")),
        "{:?}",
        p.warnings
    );
}

#[test]
fn the_captures_cost_left_is_never_more_than_the_think_time_it_lies_in() {
    // A calibration on a loaded machine measured 1 ms a call: far more than the thread's
    // 990 - 250 = 740 ns outside its calls.
    let (mut r, tl) = one_thread();
    r.footer.overhead = Some(Overhead {
        per_call_ns: 1e6,
        per_path_call_ns: 0.0,
        per_unwatched_call_ns: 0.0,
        unwatched_calls: 0,
        added_ns: 3_000_000,
        added_pct: 300_000.0,
        between_calls_ns: None,
    });
    let p = predict_with(&r, &[tl]);
    assert_eq!(p.replays[0].capture_left_ns, 740);
    assert_eq!(p.bound.capture_ns, 740);
    assert_eq!(p.predicted_ns, 1200 - 740);
}

#[test]
fn a_thread_that_made_no_replayed_call_does_not_decide_the_end() {
    // Main (1) runs worker 2 and a helper 3 that only seeks (no replayed call) and ends last,
    // when main tells it to: on faster storage it would end earlier too.
    let r = recording(
        vec![
            ev(0, 10, 1, Op::Write),
            ev(100, 500, 2, Op::Write),
            ev(150, 1, 3, Op::Seek),
        ],
        vec![
            thread(1, None, 0, 1000),
            thread(2, Some(1), 50, 700),
            thread(3, Some(1), 60, 990),
        ],
        1000,
    );
    let mut tl = timeline(&[10, 400, 0], &[10, 300, 0]);
    tl.done_ns[2] = None;
    let p = predict_with(&r, &[tl]);
    // 2 ends 100 after its call: 500; main 300 after 2's end (its recorded wait for the
    // helper is taken as its own time after the last thread that says anything).
    assert_eq!(p.critical_tid, Some(2));
    assert_eq!(p.predicted_ns, 800);
    let helper = p.threads.iter().find(|t| t.tid == 3).unwrap();
    assert_eq!(helper.predicted_end_ns, None);
}

#[test]
fn a_file_read_ahead_from_a_device_is_cold_though_most_reads_were_fast() {
    // 64 reads of 4 KiB, every 32nd waiting 120 µs for the device (read-ahead served the
    // rest in 1 µs): cold. All fast: cached. On tmpfs: its reads say nothing.
    let reads = |slow_every: usize| {
        (0..64)
            .map(|i| {
                let slow = slow_every > 0 && i % slow_every == 0;
                ev(
                    i as u64 * 200_000,
                    if slow { 120_000 } else { 1_000 },
                    1,
                    Op::Read,
                )
            })
            .collect::<Vec<_>>()
    };
    let mut r = recording(reads(32), vec![thread(1, None, 0, 20_000_000)], 20_000_000);
    r.footer.files[0].size_at_open = Some(1 << 20);
    assert_eq!(crate::trace::stats::read_from_memory(&r), vec![false]);
    r.events = reads(0);
    assert_eq!(crate::trace::stats::read_from_memory(&r), vec![true]);
    r.footer.files[0].in_memory = true;
    assert_eq!(crate::trace::stats::read_from_memory(&r), vec![false]);
}

#[test]
fn where_the_trace_knows_sleeps_a_file_with_a_read_that_slept_was_read_cold() {
    // GNU sort's 5,187 reads of an evicted 24 MiB file, 4 KiB each, with an 8 MiB read-ahead
    // window: read-ahead kept ahead, 2 reads slept, and a 40th (as timed, fewer than one in
    // 256) took longer than a copy from memory while starting the next read-ahead.
    let reads = |slept: &[usize], slow_every: usize| {
        (0..5_187)
            .map(|i| {
                let mut e = ev(i as u64 * 100_000, 2_000, 1, Op::Read);
                if slow_every > 0 && i % slow_every == 0 {
                    e.dur = 20_000;
                }
                if slept.contains(&i) {
                    e.dur = 400_000;
                    e.flags |= crate::trace::recording::flag::SLEPT;
                }
                e
            })
            .collect::<Vec<_>>()
    };
    let mut r = recording(
        reads(&[0, 15], 0),
        vec![thread(1, None, 0, 600_000_000)],
        600_000_000,
    );
    r.footer.files[0].size_at_open = Some(24 << 20);
    // Timed alone (a trace without the scheduler's view), 2 slow reads of 5,187: cached.
    assert_eq!(crate::trace::stats::read_from_memory(&r), vec![true]);
    // With it: the two that slept say cold.
    r.footer.threads[0].off_cpu = Some(crate::trace::recording::OffCpu {
        calls_slept: 2,
        ..Default::default()
    });
    assert_eq!(crate::trace::stats::read_from_memory(&r), vec![false]);
    // Reads that took long without sleeping (preempted, starting read-ahead) say nothing:
    // one in 40 slow, none slept — cached.
    r.events = reads(&[], 40);
    assert_eq!(crate::trace::stats::read_from_memory(&r), vec![true]);
    // A major page fault on it read storage: cold, whatever its reads say.
    r.footer.faults = Some(vec![(50_000, 1, 0, 8192, 300_000).into()]);
    assert_eq!(crate::trace::stats::read_from_memory(&r), vec![false]);
    r.footer.faults = Some(vec![(50_000, 1, NO_FILE, 0, 300_000).into()]);
    assert_eq!(crate::trace::stats::read_from_memory(&r), vec![true]);
    r.footer.faults = None;
    // A file the program created, or held in memory, is never "read from memory".
    r.events = reads(&[], 0);
    r.footer.files[0].in_memory = true;
    assert_eq!(crate::trace::stats::read_from_memory(&r), vec![false]);
}

#[test]
fn calls_that_sleep_differently_move_the_prediction_by_the_middle_of_what_waking_costs() {
    // Reads at 0 (slept when recorded: 100 ns), 150, 200 (slept: 100), 400; the thread ends
    // at 470. In the replay the first does not sleep and the last newly does.
    let slept = |mut e: Event| {
        e.flags |= crate::trace::recording::flag::SLEPT;
        e
    };
    let mut th = thread(1, None, 0, 470);
    th.off_cpu = Some(Default::default());
    let r = recording(
        vec![
            slept(ev(0, 100, 1, Op::Read)),
            ev(150, 10, 1, Op::Read),
            slept(ev(200, 100, 1, Op::Read)),
            ev(400, 10, 1, Op::Read),
        ],
        vec![th],
        500,
    );
    let mut tl = timeline(&[100, 160, 300, 410], &[100, 10, 100, 10]);
    tl.slept = vec![false, false, true, true];
    // Work twice as slow right after a wake-up, 50 ns more at most.
    let cold = ColdStart::from_points(
        vec![crate::stats::cold::ColdPoint {
            kind: "code",
            bytes: 64 << 10,
            warm_ns: 50,
            cold_ns: 100,
        }],
        None,
    );
    // Think up to the next call that sleeps in either run: after the first 50 + 40 = 90 (the
    // second does not sleep), after the last 60 (to the thread's end). The first's recorded
    // 90 ran cold: half of it may go, 45. The last's 60 ran warm: cold it may double, capped
    // at 50.
    let w = super::wake::wakes(&r, &tl, Some(3), &cold);
    assert_eq!(
        w,
        Wakes {
            fewer: 1,
            shrink_ns: 45,
            more: 1,
            grow_ns: 50,
        }
    );
    assert_eq!((w.shift_ns(), w.half_ns()), (2, 47));
    let rep = report();
    let runs = [Replayed {
        report: &rep,
        timeline: &tl,
    }];
    let at = |cold| {
        predict(
            &r,
            "t",
            &Target {
                directory: "d",
                cold,
            },
            &runs,
        )
    };
    let (plain, moved) = (at(ColdStart::default()), at(cold.clone()));
    assert_eq!(moved.predicted_ns, plain.predicted_ns + 2);
    assert_eq!(moved.replays[0].wake_shift_ns, 2);
    assert_eq!(moved.bound.wake_ns, 47);
    assert_eq!(
        moved.bound_ns - moved.bound.model_ns,
        plain.bound_ns - plain.bound.model_ns + 47
    );
    // A trace that does not say which calls slept moves nothing, and says so.
    let mut unknown = r.clone();
    unknown.footer.threads[0].off_cpu = None;
    assert_eq!(
        super::wake::wakes(&unknown, &tl, Some(3), &cold),
        Wakes::default()
    );
    let p = predict(
        &unknown,
        "t",
        &Target {
            directory: "d",
            cold,
        },
        &runs,
    );
    assert!(
        p.warnings
            .iter()
            .any(|w| w.contains("does not say which calls slept")),
        "{:?}",
        p.warnings
    );
}

/// A shell (1) runs a client (2) that talks to a server thread (3) through a socket the trace
/// does not hold: the client makes one call at its start and sleeps `client_asleep` of its
/// life after it; the shell's next call comes after the client ended.
fn waits_through_a_socket(client_asleep: u64) -> (Recording, Timeline) {
    let mut r = recording(
        vec![
            ev(0, 10, 1, Op::Write),
            ev(100, 10, 2, Op::Write),
            ev(200, 8_800, 3, Op::Write),
            ev(10_100, 10, 1, Op::Write),
        ],
        vec![
            thread(1, None, 0, 10_200),
            thread(2, Some(1), 50, 10_050),
            thread(3, None, 0, 9_000),
        ],
        10_200,
    );
    let off = |asleep| {
        Some(crate::trace::recording::OffCpu {
            think_asleep_ns: asleep,
            ..Default::default()
        })
    };
    // The shell slept waiting for the client: a wait the replay makes (the anchor).
    r.footer.threads[0].off_cpu = off(10_000);
    r.footer.threads[1].off_cpu = off(client_asleep);
    r.footer.threads[2].off_cpu = off(0);
    let mut tl = timeline(&[10, 110, 9_000, 10_110], &[10, 10, 8_800, 10]);
    tl.after = vec![None, Some(0), None, Some(1)];
    (r, tl)
}

#[test]
fn a_deciding_chain_kept_asleep_on_what_the_trace_does_not_hold_is_said() {
    let (r, tl) = waits_through_a_socket(9_500);
    let p = predict_with(&r, &[tl]);
    assert_eq!(p.critical_tid, Some(1));
    let w = p
        .warnings
        .iter()
        .find(|w| w.contains("spent asleep outside their calls"))
        .unwrap_or_else(|| panic!("{:?}", p.warnings));
    // 9,990 ns from the client's call to the shell's, the client asleep 9,500 of its 9,990
    // outside its call; 90 before its call at the same share; the shell's waits are its
    // child's: 9,500 + 85.6 = 9,585 ns.
    assert!(
        w.contains("keeps 0.000 s") && w.contains("(thread 2 the most)"),
        "{w}"
    );
    let (r, tl) = waits_through_a_socket(9_500);
    let k = super::asleep::kept_waits(&r, &tl, &program_end(&r, &tl));
    assert_eq!(k.map(|k| (k.asleep_ns, k.tid)), Some((9_585, 2)));
    // Where the trace knows the server woke the client after 9,400 of its 9,500 ns asleep,
    // the replay follows that wait: 100 of the client's sleep is kept.
    let (mut r, tl) = waits_through_a_socket(9_500);
    r.footer.wakes_seen = true;
    r.footer.wakes = vec![crate::trace::recording::Wake {
        t: 9_000,
        tid: 2,
        by: 3,
        asleep_ns: 9_400,
    }];
    let k = super::asleep::kept_waits(&r, &tl, &program_end(&r, &tl));
    assert_eq!(
        k.map(|k| (k.asleep_ns, k.tid)),
        Some((100 * 9_585 / 9_500, 2))
    );
    // A client that computed all that time: nothing is kept asleep.
    let (r, tl) = waits_through_a_socket(0);
    let p = predict_with(&r, &[tl]);
    assert!(
        !p.warnings.iter().any(|w| w.contains("asleep outside")),
        "{:?}",
        p.warnings
    );
}

#[test]
fn recorded_waits_for_a_cpu_are_taken_away_by_half_unless_the_replay_left_them_out() {
    let (mut r, tl) = one_thread();
    // Of its 740 ns outside calls, the thread waited 100 for a CPU.
    r.footer.threads[0].off_cpu = Some(crate::trace::recording::OffCpu {
        think_preempted_ns: 100,
        ..Default::default()
    });
    let p = predict_with(&r, std::slice::from_ref(&tl));
    assert_eq!(p.predicted_ns, 1200 - 50);
    assert_eq!(p.bound.preempted_ns, 50);
    assert_eq!(p.replays[0].think, None);
    // A replay that split the think times left those waits out itself, call by call, and
    // waited for a CPU here as the program would: nothing is taken away, nothing bounded.
    let mut rep = report();
    let think = crate::trace::replayed::ThinkFigures {
        computed_ns: 640,
        left_out_ns: 100,
    };
    rep.think = Some(think);
    let p = predict_with_report(&r, &rep, &[tl]);
    assert_eq!(p.predicted_ns, 1200);
    assert_eq!(p.bound.preempted_ns, 0);
    assert_eq!(p.replays[0].think, Some(think));
}

/// A damaged or hostile trace — times out of order within a thread, sizes and sleeps at the
/// ends of their ranges — gives a prediction, never an overflow (the trace fuzzer found
/// several: the recorded think time to a thread's next sleep, summed over calls whose times
/// overlap; the bound's parts; the patterns' sizes).
#[test]
fn times_and_sizes_at_the_ends_of_their_ranges_give_a_prediction_not_an_overflow() {
    use crate::trace::recording::OffCpu;
    let max = u64::MAX;
    let mut events = vec![
        ev(0, 0, 1, Op::Read),
        ev(max - 1, 0, 1, Op::Read),
        ev(0, 0, 1, Op::Write),
        ev(5, max, 2, Op::Read),
    ];
    for e in &mut events {
        (e.offset, e.len, e.result) = (max - 1, max, i64::MAX);
    }
    let threads = vec![thread(1, None, 0, max), thread(2, Some(1), 1, max)];
    let mut r = recording(events, threads, max);
    for th in &mut r.footer.threads {
        th.off_cpu = Some(OffCpu {
            calls_slept: 1,
            think_asleep_ns: max,
            think_sleeps: 1,
            think_preempted_ns: max,
        });
    }
    r.footer.wakes = vec![(3, 2, 1, max).into(), (max, 2, 1, max).into()];
    r.footer.wakes_seen = true;
    r.footer.gaps = Some(vec![(1, max, max).into(), (2, max, 0).into()]);
    let done: Vec<u64> = r.events.iter().map(|e| e.done_ns()).collect();
    let took: Vec<u64> = r.events.iter().map(|e| e.dur).collect();
    let tl = timeline(&done, &took);
    let p = predict_with(&r, &[tl.clone(), tl]);
    assert!(p.predicted_ns > 0 && p.bound.model_ns > 0);
    // What replay works out from the same trace.
    let anchors = crate::trace::anchor::anchors(&r.events, r.footer.sleeps(), |_| true);
    assert!(anchors.values().flatten().all(|a| a.event < r.events.len()));
    let _ = crate::trace::anchor::ends(&r.events, r.footer.sleeps(), |_| true);
}

#[test]
fn a_replay_that_waited_longer_for_a_cpu_than_the_recording_says_the_machine_was_busier() {
    use crate::trace::replayed::CpuWait;
    let c = |replayed_ns, recorded_ns| {
        Some(CpuWait {
            replayed_ns,
            recorded_ns,
        })
    };
    // 30 ms more than recorded in a 100 ms prediction: said, with both figures.
    let w = super::busier(c(40_000_000, Some(10_000_000)), 100_000_000).unwrap();
    assert!(w.contains("0.040 s for a CPU, 0.030 s more"), "{w}");
    // Within a twentieth of the prediction, or within 2 ms, or nothing to compare with.
    assert!(super::busier(c(14_000_000, Some(10_000_000)), 100_000_000).is_none());
    assert!(super::busier(c(3_000_000, Some(1_500_000)), 1_000_000).is_none());
    assert!(super::busier(c(40_000_000, None), 100_000_000).is_none());
    assert!(super::busier(None, 100_000_000).is_none());
}

mod warnings;
