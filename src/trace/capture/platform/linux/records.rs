//! The records of a perf ring, as the kernel writes them (`struct perf_event_header`: a u32
//! type, u16 misc bits, u16 size, then the record), and the fields in them.

/// The native-endian u32 at byte `at` of `b`.
pub fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

/// The native-endian u64 at byte `at` of `b`.
pub fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_ne_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// The whole records in a ring's bytes, in order: each one's type, its `misc` bits and its
/// bytes (header included). A record cut short, or one whose size is no record's, ends them.
pub fn records(bytes: &[u8]) -> impl Iterator<Item = (u32, u16, &[u8])> {
    let mut at = 0usize;
    std::iter::from_fn(move || {
        let head = bytes.get(at..at.checked_add(8)?)?;
        let size = u16::from_ne_bytes([head[6], head[7]]) as usize;
        let r = bytes.get(at..at + size).filter(|_| size >= 8)?;
        at += size;
        Some((u32_at(head, 0), u16::from_ne_bytes([head[4], head[5]]), r))
    })
}

/// A sample's raw tracepoint data (`sample_type` TID, TIME and RAW: the header, pid and tid,
/// time, then the data's size and the data; a sample of at least 32 bytes), cut to the
/// sample's bytes.
pub fn sample_raw(r: &[u8]) -> &[u8] {
    let len = u32_at(r, 24) as usize;
    &r[28..28usize.saturating_add(len).min(r.len())]
}
