//! Threads told to end by another task of the program: their ends follow what told them, and
//! what they would not have reached on faster storage holds no one.

use super::*;

/// Thread `tid`'s predicted end in `p`.
fn end(p: &Prediction, tid: u32) -> Option<u64> {
    p.threads
        .iter()
        .find(|t| t.tid == tid)
        .and_then(|t| t.predicted_end_ns)
}

/// A server (1) writes at its start and at its shutdown (1000..1010, 500 faster here); its
/// helper (2) makes one call (20..30) and sleeps until the server tells it to exit (woken at
/// 1012 after 980 asleep), ending at 1050; the server ends at 1100, after the helper.
fn a_helper_told_to_exit(woken: bool) -> Recording {
    let mut r = recording(
        vec![
            ev(0, 10, 1, Op::Write),
            ev(20, 10, 2, Op::Write),
            ev(1000, 10, 1, Op::Write),
        ],
        vec![thread(1, None, 0, 1100), thread(2, Some(1), 5, 1050)],
        1100,
    );
    r.footer.wakes_seen = true;
    if woken {
        r.footer.wakes = vec![crate::trace::recording::Wake {
            t: 1012,
            tid: 2,
            by: 1,
            asleep_ns: 980,
        }];
    }
    r
}

#[test]
fn a_helper_woken_to_exit_ends_after_what_woke_it() {
    let tl = timeline(&[10, 30, 510], &[10, 10, 10]);
    // The helper's end follows the server's shutdown call: 510 + (1050 - 1010) = 550, not
    // its own call plus its recorded tail (30 + 1020); the server waits for it, and ends
    // 50 after: 600.
    let p = predict_with(&a_helper_told_to_exit(true), std::slice::from_ref(&tl));
    let helper = p.threads.iter().find(|t| t.tid == 2).unwrap();
    assert_eq!(helper.predicted_end_ns, Some(550));
    assert_eq!(p.predicted_ns, 600);
    assert_eq!(p.critical_tid, Some(1));
    // Where the trace does not say who woke the helper, its tail stays as recorded: it ends
    // at 1050 and the server at 1100.
    let p = predict_with(&a_helper_told_to_exit(false), &[tl]);
    assert_eq!(p.predicted_ns, 1100);
    assert_eq!(p.critical_tid, Some(2));
}

#[test]
fn a_helpers_call_on_a_timer_after_it_would_have_been_told_to_exit_does_not_hold_it() {
    // As above, and the helper flushes on a timer at 600..610 before it is woken at 1012
    // (400 asleep since); the server's shutdown call completes at 410 here.
    let mut r = a_helper_told_to_exit(true);
    r.events.insert(2, ev(600, 10, 2, Op::Fsync));
    r.footer.wakes[0].asleep_ns = 400;
    // Its end: 410 + 40 after the shutdown call; its flush, issued at its recorded timer
    // (600) after that, would not have been made: it ends at 450, not 610 + 40.
    let tl = timeline(&[10, 30, 610, 410], &[10, 10, 10, 10]);
    let p = predict_with(&r, &[tl]);
    let helper = p.threads.iter().find(|t| t.tid == 2).unwrap();
    assert_eq!(helper.predicted_end_ns, Some(450));
    // Issued at 250, before the shutdown made its end due, and slow: it ends 40 after it.
    let tl = timeline(&[10, 30, 500, 410], &[10, 10, 250, 10]);
    let p = predict_with(&r, &[tl]);
    let helper = p.threads.iter().find(|t| t.tid == 2).unwrap();
    assert_eq!(helper.predicted_end_ns, Some(540));
}

/// A server (1) writes at its start and at its shutdown (1000..1010); its helper (2), made at
/// 5, makes no call itself but runs two workers, each with one call 10 after it is made: 3,
/// made at 10 and ending at `first_end`, and 4, made and ending at `second`; the server wakes
/// the helper at 1012 to exit (asleep since its last worker was made), and it ends at 1020;
/// the server at 1100.
fn a_helper_with_two_workers(first_end: u64, second: (u64, u64)) -> Recording {
    let mut r = recording(
        vec![
            ev(0, 10, 1, Op::Write),
            ev(20, 10, 3, Op::Write),
            ev(second.0 + 10, 10, 4, Op::Write),
            ev(1000, 10, 1, Op::Write),
        ],
        vec![
            thread(1, None, 0, 1100),
            thread(2, Some(1), 5, 1020),
            thread(3, Some(2), 10, first_end),
            thread(4, Some(2), second.0, second.1),
        ],
        1100,
    );
    r.footer.wakes_seen = true;
    r.footer.wakes = vec![crate::trace::recording::Wake {
        t: 1012,
        tid: 2,
        by: 1,
        asleep_ns: 1012 - second.0,
    }];
    r
}

#[test]
fn what_a_helper_would_have_made_on_a_timer_after_it_was_told_to_exit_is_not_waited_for() {
    // A server (1) writes at its start and at its shutdown (1000..1010, done at 110 here);
    // its helper (2) makes no call itself but runs a worker on a timer: 3 (made at 10, a
    // call at 20..30, ends at 40) and 4 (made at 300, a call at 310..320, ends at 330); the
    // server wakes the helper at 1012 to exit, and it ends at 1020; the server at 1100.
    let r = a_helper_with_two_workers(40, (300, 330));
    let tl = timeline(&[10, 30, 320, 110], &[10, 10, 10, 10]);
    let p = predict_with(&r, &[tl]);
    // Told at 110 + 10 here: worker 4, which it started at 310, it would not have made; it
    // ends then, and the server 80 after.
    let end = |tid: u32| {
        p.threads
            .iter()
            .find(|t| t.tid == tid)
            .and_then(|t| t.predicted_end_ns)
    };
    assert_eq!(end(2), Some(120));
    assert_eq!(p.predicted_ns, 200);
    assert_eq!(p.critical_tid, Some(1));
}

/// A server (1) writes at its start and at its shutdown (1000..1010, done at 110 here); its
/// helper (2) makes no call itself but runs a sleeper on a timer: 3 (made at 10, a call at
/// 20..30, sleeps to its end at 500) and 4 (made at 600, a call at 610..620); the server wakes
/// the helper at 1012 to exit, and the helper's trap kills 4 at 1015 (`killed`), which ends at
/// 1018, and ends at 1020; the server at 1100.
fn a_helper_whose_trap_kills_its_sleeper(killed: bool) -> Recording {
    let mut r = a_helper_with_two_workers(500, (600, 1018));
    r.footer.signals_seen = true;
    if killed {
        r.footer.signals = vec![crate::trace::recording::Wake {
            t: 1015,
            tid: 4,
            by: 2,
            asleep_ns: 0,
        }];
    }
    r
}

#[test]
fn a_child_running_when_its_parent_is_told_here_ends_as_the_one_it_killed_when_recorded() {
    let tl = timeline(&[10, 30, 620, 110], &[10, 10, 10, 10]);
    let p = predict_with(
        &a_helper_whose_trap_kills_its_sleeper(true),
        std::slice::from_ref(&tl),
    );
    // The helper ends 10 after the server's shutdown call here: 120, told at 112. Sleeper 3,
    // running since 20, ends as 4 did when recorded, 2 before the helper: 118, not at its
    // recorded 500; 4 it would not have made. The server waits for the helper: 200.
    assert_eq!(end(&p, 2), Some(120));
    assert_eq!(end(&p, 3), Some(118));
    assert_eq!(p.predicted_ns, 200);
    assert_eq!(p.critical_tid, Some(1));
    // The same where the server killed the sleeper with the helper (a script's `kill 0`).
    let mut r = a_helper_whose_trap_kills_its_sleeper(true);
    r.footer.signals[0].by = 1;
    let p = predict_with(&r, std::slice::from_ref(&tl));
    assert_eq!(end(&p, 3), Some(118));
    assert_eq!(p.predicted_ns, 200);
    // Where the trap killed nothing (the helper let its child finish), sleeper 3 runs to its
    // own end, and decides the program's.
    let p = predict_with(&a_helper_whose_trap_kills_its_sleeper(false), &[tl]);
    assert_eq!(end(&p, 3), Some(500));
    assert_eq!(p.predicted_ns, 500);
    assert_eq!(p.critical_tid, Some(3));
}

#[test]
fn a_scripts_kill_0_here_ends_the_helpers_child_that_ended_before_it_when_recorded() {
    // As above, but the helper (2) was between two sleepers when recorded: 4 ended at 1010,
    // before the server signalled its process group (kill 0) at 1015, which told the helper
    // alone. Here the server's shutdown call is done at 110 and the helper ends 10 after it,
    // told at 115 — while sleeper 3, made at 10, still runs: the signal reaches it too.
    let mut r = a_helper_with_two_workers(500, (600, 1010));
    r.footer.signals_seen = true;
    r.footer.signals = vec![crate::trace::recording::Wake {
        t: 1015,
        tid: 2,
        by: 1,
        asleep_ns: 0,
    }];
    let groups = |groups: Vec<(u32, u32)>| crate::trace::recording::Kills {
        to_groups: vec![(1015, 1, 7)],
        groups,
        late: Vec::new(),
        unfollowed: 0,
    };
    r.footer.kills = Some(groups(vec![(1, 7), (2, 7), (3, 7), (4, 7)]));
    let tl = timeline(&[10, 30, 620, 110], &[10, 10, 10, 10]);
    // Sleeper 3 ends when the helper is told: 115, not at its recorded 500; the server
    // waits for the helper and ends 80 after it: 200.
    let p = predict_with(&r, std::slice::from_ref(&tl));
    assert_eq!(end(&p, 2), Some(120));
    assert_eq!(end(&p, 3), Some(115));
    assert_eq!((p.predicted_ns, p.critical_tid), (200, Some(1)));
    // A sleeper that had left the group (setpgid), the signal did not reach: it runs to its
    // own end and decides the program's; nor does a signal to another group end it.
    r.footer.kills = Some(groups(vec![(1, 7), (2, 7), (3, 3), (4, 7)]));
    let p = predict_with(&r, std::slice::from_ref(&tl));
    assert_eq!(
        (end(&p, 3), p.predicted_ns, p.critical_tid),
        (Some(500), 500, Some(3))
    );
    r.footer.kills = Some(crate::trace::recording::Kills {
        to_groups: vec![(1015, 1, 8)],
        ..groups(vec![(1, 7), (2, 7), (3, 7), (4, 7)])
    });
    let p = predict_with(&r, std::slice::from_ref(&tl));
    assert_eq!((end(&p, 3), p.predicted_ns), (Some(500), 500));
    // Nor where the trace has no groups (older traces): the tell is one to the helper.
    r.footer.kills = None;
    let p = predict_with(&r, &[tl]);
    assert_eq!((end(&p, 3), p.predicted_ns), (Some(500), 500));
}

#[test]
fn a_helpers_trap_that_killed_its_child_too_late_when_recorded_kills_it_here() {
    // The helper (2) was told at 1012 just after its sleeper 4 ended (1010); its trap's
    // `kill` of 4 at 1014 failed there (4 was gone: `Kills::late`). Here, told at 112, it
    // ends sleeper 3, running since 20, at once: 112 + (1014 - 1012) = 114.
    let mut r = a_helper_with_two_workers(500, (600, 1010));
    r.footer.signals_seen = true;
    let late = crate::trace::recording::Wake {
        t: 1014,
        tid: 4,
        by: 2,
        asleep_ns: 0,
    };
    r.footer.kills = Some(crate::trace::recording::Kills {
        late: vec![late],
        ..Default::default()
    });
    let tl = timeline(&[10, 30, 620, 110], &[10, 10, 10, 10]);
    let p = predict_with(&r, std::slice::from_ref(&tl));
    assert_eq!((end(&p, 2), end(&p, 3)), (Some(120), Some(114)));
    assert_eq!((p.predicted_ns, p.critical_tid), (200, Some(1)));
    // The same where the kill reached 4 after its end, before the helper waited for it.
    r.footer.kills = None;
    r.footer.signals = vec![late];
    let p = predict_with(&r, std::slice::from_ref(&tl));
    assert_eq!((end(&p, 3), p.predicted_ns), (Some(114), 200));
    // A kill by someone else (not the helper, nor what told it) says nothing of its trap.
    r.footer.signals[0].by = 5;
    let p = predict_with(&r, &[tl]);
    assert_eq!((end(&p, 3), p.predicted_ns), (Some(500), 500));
}
