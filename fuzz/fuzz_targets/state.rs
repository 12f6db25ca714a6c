//! Any bytes as a verify state journal (`verify_state_load`): a header and records, or an
//! error, never a panic; what parses is exactly what a journal with that header and those
//! records holds (rebuilt, it gives the same bytes, a record cut short at the end aside), so
//! garbage can never turn into a block's history.
#![no_main]

use iogauge::verify::{STATE_RECORD_LEN, parse_state, state_record};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok((h, records)) = parse_state(data) else {
        return;
    };
    let mut rebuilt = h.bytes();
    let header_len = rebuilt.len();
    for r in &records {
        assert!(r.file < h.files && r.block < h.blocks);
        rebuilt.extend_from_slice(&state_record(h.run_id, r.file, r.block, r.seq));
    }
    let whole = header_len + (data.len() - header_len) / STATE_RECORD_LEN * STATE_RECORD_LEN;
    assert_eq!(rebuilt, &data[..whole]);
});
