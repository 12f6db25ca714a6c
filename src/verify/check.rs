//! The check of a block read back: its header found and whole, written for this place, run and
//! block size, its trailer from the same write, the write the one the map or journal expects,
//! and its data's digest intact. Each step names the first fault it finds.

use super::{
    CRC_AT, Checksum, DIGEST_AT, DIGEST_MAX, Expect, Fault, Gen, HEADER_LEN, MAGIC, Stamp,
    TRAILER_LEN, TRAILER_MAGIC, VERSION, job_text, read_stamp, u32_at, u64_at,
};

type Checked = Result<(), Box<Fault>>;

fn fault(kind: &str, detail: String, found: Option<Stamp>) -> Box<Fault> {
    Box::new(Fault {
        kind: kind.into(),
        detail,
        found,
        first_bad_byte: None,
    })
}

/// Checks a block read back against what should be there; `kind` is the job's checksum.
pub fn check(block: &[u8], kind: Checksum, want: &Expect) -> Checked {
    if kind == Checksum::Null || want.generation == Gen::Unwritten {
        return Ok(());
    }
    let Some(found) = read_stamp(block) else {
        return Err(no_header(block));
    };
    header(block, &found, kind, want)?;
    trailer(block, &found)?;
    history(&found, want)?;
    digest(block, found)
}

/// What a block without a readable header holds.
fn no_header(block: &[u8]) -> Box<Fault> {
    if block.iter().all(|&b| b == 0) {
        fault(
            "lost write",
            "the block reads as zeros: the write never reached the media".into(),
            None,
        )
    } else if block[..4] == MAGIC {
        fault(
            "corrupted header",
            format!(
                "header version {} (this iogauge writes {VERSION})",
                block[4]
            ),
            None,
        )
    } else {
        fault(
            "lost write",
            "no iogauge header: the block holds data iogauge did not write there (a lost \
             write, or another program's data)"
                .into(),
            None,
        )
    }
}

/// The header is whole (its CRC), and was written for this offset, by this run, for a block
/// of this size, with this checksum.
fn header(block: &[u8], found: &Stamp, kind: Checksum, want: &Expect) -> Checked {
    let len = block.len();
    let mut crc_block = [0u8; HEADER_LEN];
    crc_block.copy_from_slice(&block[..HEADER_LEN]);
    crc_block[CRC_AT..CRC_AT + 4].copy_from_slice(&[0; 4]);
    if crc32c::crc32c(&crc_block) != u32_at(block, CRC_AT) {
        return Err(fault(
            "corrupted header",
            "the header's CRC does not match: bits flipped in the block's first bytes".into(),
            Some(*found),
        ));
    }
    if found.offset != want.offset {
        return Err(fault(
            "misdirected write",
            format!(
                "the block was written for offset {} and found at offset {}",
                found.offset, want.offset
            ),
            Some(*found),
        ));
    }
    if let Some(run) = want.run_id {
        if found.run_id != run {
            return Err(fault(
                "another run's data",
                format!(
                    "the block holds run {:016x}'s data, not this run's ({run:016x}): this \
                     run's write was lost",
                    found.run_id
                ),
                Some(*found),
            ));
        }
    }
    // Sealed as a block of another size, or with another checksum: the options given to this
    // check are not those it was written with; no fault of the media.
    let sealed_len = u32_at(block, 8) as usize;
    if sealed_len != len {
        return Err(fault(
            "options mismatch",
            format!(
                "the block was sealed as {sealed_len} bytes, and is read as {len}: give the \
                 verify_interval (or bs) it was written with"
            ),
            Some(*found),
        ));
    }
    match Checksum::from_code(block[5]) {
        Some(stored) if stored != kind && kind != Checksum::Meta => Err(fault(
            "options mismatch",
            format!(
                "the block was sealed with {}, and this check was given verify={}: give the \
                 checksum it was written with",
                stored.name(),
                kind.name()
            ),
            Some(*found),
        )),
        _ => Ok(()),
    }
}

/// The trailer (the block's last sector) is from the write the header names: another write's
/// whole trailer is a torn write, the same write's a few bits off a bit flip.
fn trailer(block: &[u8], found: &Stamp) -> Checked {
    let len = block.len();
    let t = &block[len - TRAILER_LEN..];
    let (t_seq, t_run) = (u64_at(t, 0), u32_at(t, 8));
    let mut expected = [0u8; TRAILER_LEN];
    expected[..8].copy_from_slice(&found.seq.to_le_bytes());
    expected[8..12].copy_from_slice(&(found.run_id as u32).to_le_bytes());
    expected[12..].copy_from_slice(&TRAILER_MAGIC);
    if t == expected {
        return Ok(());
    }
    let flipped: u32 = t
        .iter()
        .zip(expected)
        .map(|(a, b)| (a ^ b).count_ones())
        .sum();
    // Another write's trailer (whole, with another write number) is a tear. The same write's
    // trailer a few bits off, or a broken magic, is damage to those bytes.
    let another_write = t[12..16] == TRAILER_MAGIC && t_seq != found.seq;
    if !another_write && flipped <= 8 {
        return Err(fault(
            "bit flip",
            format!(
                "the block's trailer (its last {TRAILER_LEN} bytes) differs in {flipped} \
                 bit(s) from what write #{} wrote there",
                found.seq
            ),
            Some(*found),
        ));
    }
    Err(fault(
        "torn write",
        format!(
            "the block's first sector is from write #{} and its last sector {}",
            found.seq,
            if t[12..16] == TRAILER_MAGIC {
                format!("from write #{t_seq} (run {t_run:08x})")
            } else {
                "holds no trailer".into()
            }
        ),
        Some(*found),
    ))
}

/// The write found is the one expected: not older than the durable one the journal names,
/// this job's, the generation the map counts.
fn history(found: &Stamp, want: &Expect) -> Checked {
    if let Some(min) = want.min_seq {
        if found.seq < min {
            return Err(fault(
                "lost write",
                format!(
                    "the block holds write #{} but write #{min} of it was acknowledged durable \
                     (after its fsync or write-through): a durable write was lost",
                    found.seq
                ),
                Some(*found),
            ));
        }
    }
    if let Some(job) = want.job {
        if found.job != job {
            return Err(fault(
                "another job's data",
                format!(
                    "the block holds the write of {}, not of this job ({})",
                    job_text(found.job),
                    job_text(job)
                ),
                Some(*found),
            ));
        }
    }
    if let Gen::Is(g) = want.generation {
        if found.generation != u32::from(g) {
            return Err(fault(
                "stale data",
                format!(
                    "the block holds its write #{} but write #{g} was acknowledged (counting \
                     round 254): a lost write left older data",
                    found.generation
                ),
                Some(*found),
            ));
        }
    }
    Ok(())
}

/// The data between header and trailer has the digest written with it.
fn digest(block: &[u8], found: Stamp) -> Checked {
    let len = block.len();
    let Some(stored) = Checksum::from_code(block[5]) else {
        return Err(fault(
            "corrupted header",
            format!("unknown checksum kind {}", block[5]),
            Some(found),
        ));
    };
    if stored != Checksum::Meta {
        let mut digest = [0u8; DIGEST_MAX];
        stored.digest(&block[HEADER_LEN..len - TRAILER_LEN], &mut digest);
        if digest[..] != block[DIGEST_AT..DIGEST_AT + DIGEST_MAX] {
            return Err(fault(
                "bit flip",
                format!(
                    "the data's {} does not match the one written with it",
                    stored.name()
                ),
                Some(found),
            ));
        }
    }
    Ok(())
}

/// What a write of fio's pattern carries, `from` bytes into the write, for `out.len()`
/// bytes: the pattern restarted every `segment` bytes of the write (fio's
/// verify_pattern_interval; 0: once, at the write's start), each restart with fio's `%o`
/// pieces (at `offsets`) holding its own offset, `write_at` plus where it starts.
pub fn fill_pattern(
    out: &mut [u8],
    (pattern, offsets): (&[u8], &[usize]),
    segment: u64,
    write_at: u64,
    from: u64,
) {
    let seg_len = if segment == 0 { u64::MAX } else { segment };
    let mut k = from;
    let mut done = 0;
    while done < out.len() {
        let seg = k / seg_len;
        let into = k % seg_len;
        let p = pasted_pattern(pattern, offsets, write_at + seg * seg_len);
        let n = ((seg_len - into).min((out.len() - done) as u64)) as usize;
        for (i, b) in out[done..done + n].iter_mut().enumerate() {
            *b = p[((into + i as u64) % p.len() as u64) as usize];
        }
        done += n;
        k += n as u64;
    }
}

/// `pattern` with each `%o` (at `offsets`) holding `at`, the offset of the write (or the
/// restart within it) it fills.
fn pasted_pattern(pattern: &[u8], offsets: &[usize], at: u64) -> Vec<u8> {
    let mut p = pattern.to_vec();
    let bytes = at.to_le_bytes();
    for &o in offsets {
        let n = (p.len() - o).min(8);
        p[o..o + n].copy_from_slice(&bytes[..n]);
    }
    p
}

/// verify=pattern: the block must be `pattern` repeated, from its byte `phase`.
pub fn check_pattern(block: &[u8], pattern: &[u8], phase: usize) -> Result<(), Box<Fault>> {
    let want = |i: usize| pattern[(phase + i) % pattern.len()];
    let Some(at) = block.iter().enumerate().position(|(i, &b)| b != want(i)) else {
        return Ok(());
    };
    let zeros = block.iter().all(|&b| b == 0);
    Err(Box::new(Fault {
        kind: if zeros { "lost write" } else { "wrong data" }.into(),
        detail: if zeros {
            "the block reads as zeros: the write never reached the media".into()
        } else {
            format!(
                "byte {at} is 0x{:02x} where the pattern has 0x{:02x}",
                block[at],
                want(at)
            )
        },
        found: None,
        first_bad_byte: Some(at as u64),
    }))
}
