use super::*;

fn sample() -> Recording {
    Recording {
        header: Header {
            format: "iogauge-trace".into(),
            version: VERSION,
            iogauge: "0.1.0".into(),
            command: vec!["dd".into(), "if=x".into()],
            started_unix_ms: 1,
            host: "h".into(),
            method: "m".into(),
        },
        events: (0..10_000u64)
            .map(|i| Event {
                t: i * 1000,
                dur: 500 + i,
                offset: i * 4096,
                len: 4096,
                result: if i % 7 == 0 { -5 } else { 4096 },
                tid: 42,
                file: 0,
                arg: i as u32,
                op: if i % 2 == 0 { Op::Read } else { Op::Write },
                flags: flag::DIRECT | flag::POSITIONAL,
            })
            .collect(),
        footer: Footer {
            duration_ns: 10_000_000,
            exit_code: Some(0),
            files: vec![FileInfo {
                path: "/tmp/x".into(),
                kind: "regular".into(),
                size_at_open: None,
                extent: 40_960_000,
                removed: false,
                in_memory: false,
            }],
            other_calls: 3,
            wakes_seen: true,
            wakes: vec![Wake {
                t: 5_000,
                tid: 2,
                by: 1,
                asleep_ns: 700,
            }],
            signals_seen: true,
            // 1 signalled 2 at 4,000 ns (2 was running: no wake-up).
            signals: vec![Wake {
                t: 4_000,
                tid: 2,
                by: 1,
                asleep_ns: 0,
            }],
            gaps: Some(vec![Gap {
                event: 3,
                asleep_ns: 1_200,
                preempted_ns: 300,
            }]),
            ..Default::default()
        },
    }
}

#[test]
fn round_trips_and_is_compact() {
    let r = sample();
    let bytes = r.encode().unwrap();
    assert!(
        bytes.len() < r.events.len() * EVENT_BYTES / 4,
        "{} bytes",
        bytes.len()
    );
    assert_eq!(Recording::decode(&bytes[..]).unwrap(), r);
}

#[test]
fn tells_are_the_signals_and_wake_ups_in_time_order_a_signal_before_its_wake_up() {
    let mut r = sample();
    let tells: Vec<u64> = r.footer.tells().iter().map(|w| w.t).collect();
    assert_eq!(tells, [4_000, 5_000]);
    // In a tie, the signal first.
    r.footer.signals[0].t = 5_000;
    let tells = r.footer.tells();
    assert_eq!((tells[0].asleep_ns, tells[1].asleep_ns), (0, 700));
}

/// A replay in open mode waits for each event's recorded time; a layout writes each file's
/// recorded extent: a trace with times past its end, or sizes past any file's, is refused
/// as it is read.
#[test]
fn refuses_times_past_its_end_and_sizes_past_any_files() {
    let said = |r: &Recording| Recording::decode(&r.encode().unwrap()[..]).unwrap_err().0;
    let mut late = sample();
    late.events[9_999].t = 20_000_000_000;
    assert!(
        said(&late).contains("event 9999 runs from 20000000000 ns"),
        "{}",
        said(&late)
    );
    let mut wraps = sample();
    wraps.events[7].dur = u64::MAX;
    assert!(said(&wraps).starts_with("event 7 "), "{}", said(&wraps));
    let mut woken = sample();
    woken.footer.wakes[0].t = u64::MAX;
    assert!(said(&woken).contains("wake-up"), "{}", said(&woken));
    let mut signalled = sample();
    signalled.footer.signals[0].t = u64::MAX;
    assert!(
        said(&signalled).contains("signal at"),
        "{}",
        said(&signalled)
    );
    let mut born = sample();
    born.footer.threads.push(ThreadInfo {
        tid: 43,
        pid: 42,
        first_ns: 1_000,
        last_ns: 2_000,
        parent: Some(42),
        born_ns: Some(1_000_000_000_000),
        ended_ns: Some(3_000),
        off_cpu: None,
    });
    assert_eq!(
        said(&born),
        "thread 43 starts, calls or ends past the recording's end at 10000000 ns"
    );
    let mut faulted = sample();
    faulted.footer.faults = Some(vec![Fault {
        t: 1 << 40,
        tid: 42,
        file: 0,
        offset: 0,
        asleep_ns: 10,
    }]);
    assert!(said(&faulted).starts_with("a page fault or madvise at 1099511627776 ns"));
    let mut gap = sample();
    gap.footer.gaps.as_mut().unwrap()[0].event = 10_000;
    assert_eq!(said(&gap), "a time off the CPU before event 10000 of 10000");
    let mut huge = sample();
    huge.footer.files[0].size_at_open = Some(u64::MAX);
    assert!(
        said(&huge).contains("past the largest file offset"),
        "{}",
        said(&huge)
    );
    // An event issued before the one ahead of it (a replay's threads would wait for each
    // other): refused, naming both.
    let mut early = sample();
    early.events[5].t = early.events[4].t - 1;
    assert_eq!(
        said(&early),
        "event 5 starts at 3999 ns, before event 4 at 4000 ns: a trace's events are in issue \
         order"
    );
    // Within a second of its end (the capture reads its end after its last event): kept.
    let mut edge = sample();
    edge.events[9_999].t = edge.footer.duration_ns + 900_000_000 - edge.events[9_999].dur;
    assert!(Recording::decode(&edge.encode().unwrap()[..]).is_ok());
}

#[test]
fn refuses_what_is_not_a_whole_trace() {
    let bytes = sample().encode().unwrap();
    assert!(
        Recording::decode(&b"hello world!"[..])
            .unwrap_err()
            .0
            .contains("magic")
    );
    let cut = Recording::decode(&bytes[..bytes.len() / 2]).unwrap_err().0;
    assert!(cut.contains("cut short"), "{cut}");
    let mut v2 = bytes.clone();
    v2[8] = 2;
    assert!(
        Recording::decode(&v2[..])
            .unwrap_err()
            .0
            .contains("version 2")
    );
}

/// What a trace misses, each count in words that agree with it.
#[test]
fn what_is_missing_is_said_in_words_that_agree_with_the_counts() {
    assert_eq!(missing(0, 0, 0, 0, 0), None);
    let one = missing(1, 0, 1, 0, 1).unwrap();
    assert_eq!(
        one,
        "1 record dropped by the kernel (its buffer full), 1 call seen only half, 1 \
         process that ran a 32-bit program, and all its calls while it did (this build \
         decodes 64-bit programs' calls only)"
    );
    let more = missing(0, 2, 0, 3, 4).unwrap();
    assert!(more.starts_with("2 records past the recorder's memory cap, 3 tasks the program started, and all their calls"), "{more}");
    assert!(
        more.contains("4 processes that ran a 32-bit program, and all their calls while they did"),
        "{more}"
    );
}

#[test]
fn every_operation_has_its_place_in_a_table_by_operation() {
    // Tables sized by `Op::TABLE` (the replay's figures per call type) index by the number.
    for v in 0..=u8::MAX {
        if let Some(op) = Op::from_u8(v) {
            assert_eq!(op as u8, v);
            assert!((v as usize) < Op::TABLE, "{op:?} past the table");
        }
    }
    assert!(Op::from_u8((Op::TABLE - 1) as u8).is_some());
}
