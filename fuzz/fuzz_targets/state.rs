//! Any bytes as a verify state journal (`verify_state_load`): a header and records, or an
//! error, never a panic; what parses is exactly what a journal with that header and those
//! records holds (rebuilt, it gives the same bytes, a record cut short at the end aside), so
//! garbage can never turn into a block's history. Each input is tried twice: as it is (the
//! checksums reject nearly everything), and with its checksums made right, so the fuzzer
//! reaches the header's fields and the records behind them.
#![no_main]

use iogauge::verify::{STATE_RECORD_LEN, parse_state, state_record};
use libfuzzer_sys::fuzz_target;

/// The header's length (its CRC32C is its last 4 bytes): a header written and measured.
fn header_len() -> usize {
    iogauge::verify::StateHeader {
        checksum: iogauge::verify::Checksum::Crc32c,
        run_id: 0,
        job: 0,
        files: 0,
        interval: 0,
        base: 0,
        blocks: 0,
    }
    .bytes()
    .len()
}

fn check(data: &[u8]) {
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
}

fuzz_target!(|data: &[u8]| {
    check(data);
    // The same bytes with the version and checksums a journal would carry.
    let n = header_len();
    if data.len() < n {
        return;
    }
    let mut fixed = data.to_vec();
    fixed[..8].copy_from_slice(b"IOGVSTAT");
    fixed[8..12].copy_from_slice(&2u32.to_le_bytes());
    let crc = crc32c::crc32c(&fixed[..n - 4]);
    fixed[n - 4..n].copy_from_slice(&crc.to_le_bytes());
    let run_id = u64::from_le_bytes(fixed[16..24].try_into().unwrap());
    for r in fixed[n..].chunks_exact_mut(STATE_RECORD_LEN) {
        let file = u32::from_le_bytes(r[..4].try_into().unwrap());
        let block = u64::from_le_bytes(r[4..12].try_into().unwrap());
        let seq = u64::from_le_bytes(r[12..20].try_into().unwrap());
        r.copy_from_slice(&state_record(run_id, file, block, seq));
    }
    check(&fixed);
});
