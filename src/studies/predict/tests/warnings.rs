//! What the warnings say, and when they are said.

use super::*;

#[test]
fn a_capture_cost_that_is_much_of_the_think_time_is_warned_of() {
    let warned = |per_call_ns: f64| {
        let (mut r, tl) = one_thread();
        r.footer.overhead = Some(Overhead {
            per_call_ns,
            per_path_call_ns: 0.0,
            per_unwatched_call_ns: 0.0,
            unwatched_calls: 0,
            added_ns: (per_call_ns * 3.0) as u64,
            added_pct: 0.0,
            between_calls_ns: None,
        });
        let p = predict_with(&r, &[tl]);
        p.warnings
            .iter()
            .any(|w| w.contains("up to 3x what its calibration measures"))
    };
    // Three calls on the chain and about 500 ns between them and after: 3 x 100 ns is more
    // than a fifth of it, 3 x 1 ns is not.
    assert!(warned(100.0));
    assert!(!warned(1.0));
}

/// Major page faults a replay kept as recorded (none on the trace's files: the program's first
/// touches of its libraries) are said where their time is 1% of the prediction or more, in
/// words that do not speak of replayed faults; replayed ones are always said.
#[test]
fn faults_kept_as_recorded_are_said_where_their_time_counts() {
    let said = |kept_asleep_ns: u64, replayed: u64| {
        let (mut r, tl) = one_thread();
        r.footer.faults = Some(vec![(50, 1, NO_FILE, 0, kept_asleep_ns).into(); 2]);
        let mut rep = report();
        rep.faults = Some(crate::trace::replayed::FaultFigures {
            recorded: 2,
            replayed,
            kept: 2 - replayed,
            kept_asleep_ns,
            ..Default::default()
        });
        let p = predict_with_report(&r, &rep, &[tl]);
        let w: Vec<String> = (p.warnings.iter())
            .filter(|w| w.contains("major page faults"))
            .cloned()
            .collect();
        (w, p.predicted_ns)
    };
    // A prediction of about 1,000 ns: 5 ns kept is under 1% of it, 50 ns is not.
    let (quiet, predicted) = said(5, 0);
    assert!(
        quiet.is_empty() && predicted < 2_000,
        "{quiet:?} {predicted}"
    );
    let (loud, _) = said(50, 0);
    assert_eq!(loud.len(), 1, "{loud:?}");
    assert!(
        loud[0].starts_with(
            "2 major page faults when recorded (I/O through mappings), none replayed (2 \
             outside the trace's files"
        ) && loud[0].contains("0.0 ms asleep in them, in the bound"),
        "{loud:?}"
    );
    let (replayed, _) = said(5, 1);
    assert!(
        replayed[0].contains(": 1 replayed as page reads"),
        "{replayed:?}"
    );
}

/// A SQPOLL thread's batches, or I/Os no io_getevents reaped, keep their recorded pace: the
/// prediction says so.
#[test]
fn ios_no_call_waited_for_are_warned_of() {
    let warned = |r: &Recording| {
        let (_, tl) = one_thread();
        predict_with(r, &[tl])
            .warnings
            .iter()
            .any(|w| w.contains("no call of the program waited for"))
    };
    let (mut r, _) = one_thread();
    assert!(!warned(&r));
    r.footer.aio_unreaped = 4;
    assert!(warned(&r));
    let (mut r, _) = one_thread();
    r.events[0].op = Op::UringEnter;
    r.events[0].flags =
        crate::trace::recording::flag::ASYNC | crate::trace::recording::flag::SQPOLL;
    assert!(warned(&r));
}
