//! Any bytes as an iogauge trace (`iogauge trace`, `replay`): a recording or an error, never a
//! panic, and what decodes is what encoding it gives back; then its figures, its cross-thread
//! order and its export as fio's I/O log, none of which may panic on any recording (offsets,
//! lengths and times at the ends of their ranges included). Each input is tried twice: as it
//! is, and as the compressed body of a trace of the current version, so the fuzzer reaches
//! the header, the events and the footer behind the magic and the zlib stream. And as the
//! logs `trace import` reads (a blktrace binary, fio's I/O log): an error or a trace that
//! passes the same checks.
#![no_main]

use iogauge::trace::recording::{MAGIC, Recording, VERSION};
use libfuzzer_sys::fuzz_target;
use std::io::Write;

fn check(data: &[u8]) {
    let Ok(r) = Recording::decode(data) else {
        return;
    };
    let again = Recording::decode(&r.encode().expect("encodes")[..]).expect("decodes again");
    assert_eq!(again, r);
    let _ = iogauge::trace::stats::stats(&r);
    let deps = iogauge::trace::order::dependencies(&r.events);
    assert_eq!(deps.len(), r.events.len());
    for i in 0..deps.len() {
        for &j in deps.of(i) {
            assert!(j < i && r.events[j].tid != r.events[i].tid);
        }
    }
    let x = iogauge::trace::export::iolog(&r, None);
    assert!(x.entries.iter().all(|e| (e.file as usize) < x.files.len()));
    let _ = iogauge::report::trace::stats_text(&iogauge::trace::stats::stats(&r));
    // What replay and predict work out from a trace before any I/O: the calls each call
    // starts from (wake-ups, sleeps split by the gaps), how each thread's end follows, and
    // the polls; the footer's lists may name any event, thread or time.
    let side = r.footer.sleeps();
    let anchors = iogauge::trace::anchor::anchors(&r.events, side, |_| true);
    // Each call starts only from calls issued before it (else a replay's threads could wait
    // for each other for ever).
    for (&i, list) in &anchors {
        assert!(i < r.events.len());
        assert!(list.iter().all(|a| a.event < i));
    }
    for told in iogauge::trace::anchor::ends(&r.events, side, |_| true).values() {
        assert!(told.anchors.iter().all(|a| a.event < r.events.len()));
    }
    let paths: Vec<String> = r.footer.files.iter().map(|x| x.path.clone()).collect();
    let _ = iogauge::trace::poll::polls(&r.events, &paths, |i| anchors.contains_key(&i));
    predict_as_recorded(&r);
}

/// `predict`'s arithmetic over a replay in which every call took its recorded time, issued
/// after its thread's previous call: the figures, the bound and the warnings of any trace.
fn predict_as_recorded(r: &Recording) {
    use iogauge::studies::predict::{Replayed, Target, predict};
    use iogauge::trace::recording::flag;
    use iogauge::trace::replayed::{ReplayReport, Timeline};
    let mut last: std::collections::HashMap<u32, (usize, u64)> = Default::default();
    let mut tl = Timeline::default();
    for (i, e) in r.events.iter().enumerate() {
        let before = last.get(&e.tid).copied();
        let calls = before.map_or(1, |(_, c)| c + 1);
        last.insert(e.tid, (i, calls));
        tl.done_ns.push(Some(e.done_ns()));
        tl.took_ns.push(e.dur);
        tl.chain_late_ns.push(0);
        tl.chain_calls.push(calls);
        tl.slept.push(e.flags & flag::SLEPT != 0);
        tl.after.push(before.map(|(j, _)| j));
    }
    let report = ReplayReport {
        trace: "fuzz".into(),
        speed: 1.0,
        directory: "fuzz".into(),
        recorded_span_ns: r.footer.duration_ns,
        replayed_span_ns: r.footer.duration_ns,
        ..Default::default()
    };
    let to = Target {
        directory: "fuzz",
        cold: Default::default(),
    };
    let runs = [Replayed {
        report: &report,
        timeline: &tl,
    }];
    let _ = predict(r, "fuzz", &to, &runs);
}

fuzz_target!(|data: &[u8]| {
    check(data);
    for imported in [
        iogauge::trace::import::from_blktrace(data, "fuzz"),
        iogauge::trace::import::from_iolog(data, "fuzz"),
    ]
    .into_iter()
    .flatten()
    {
        check(&imported.encode().expect("encodes"));
    }
    let mut framed = MAGIC.to_vec();
    framed.extend_from_slice(&VERSION.to_le_bytes());
    let mut z = flate2::write::ZlibEncoder::new(framed, flate2::Compression::fast());
    z.write_all(data).unwrap();
    check(&z.finish().unwrap());
});
