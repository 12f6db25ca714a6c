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
