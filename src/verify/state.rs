//! The verify state journal (`verify_state_save`, `verify_state_load`): its layout, its
//! records and its reader, which trusts nothing its checksums do not cover.

use super::{Checksum, u32_at, u64_at};

/// A verify state file (`verify_state_save`): which write of each block was acknowledged
/// durable, appended as it happens, so that after a crash `verify_only` with
/// `verify_state_load` knows exactly what must have survived. Layout (little-endian): magic
/// "IOGVSTAT", version u32 (2), checksum code u32, run id u64, job u32, files u32, block bytes
/// u64, region start u64, blocks per file u64, CRC32C of the header so far u32; then records
/// of file u32, block u64, write number u64 and the CRC32C of those 20 bytes (seeded with the
/// run id, so a record of another run's journal pasted in does not pass), one per block made
/// durable (a later record for a block wins). A damaged header or record is an error, never
/// read as a block's history: garbage must not turn into lost writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StateHeader {
    pub checksum: Checksum,
    pub run_id: u64,
    pub job: u32,
    pub files: u32,
    pub interval: u64,
    pub base: u64,
    pub blocks: u64,
}

/// Job `name`.`clone`'s journal: NAME-CLONE-verify.state in the current directory.
pub fn state_path(name: &str, clone: u32) -> std::path::PathBuf {
    std::path::PathBuf::from(format!("{name}-{clone}-verify.state"))
}

const STATE_MAGIC: &[u8; 8] = b"IOGVSTAT";
const STATE_VERSION: u32 = 2;
pub(super) const STATE_HEADER_LEN: usize = 8 + 4 + 4 + 8 + 4 + 4 + 8 + 8 + 8 + 4;
pub const STATE_RECORD_LEN: usize = 24;

impl StateHeader {
    pub fn bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(STATE_HEADER_LEN);
        b.extend_from_slice(STATE_MAGIC);
        b.extend_from_slice(&STATE_VERSION.to_le_bytes());
        b.extend_from_slice(&u32::from(self.checksum.code()).to_le_bytes());
        b.extend_from_slice(&self.run_id.to_le_bytes());
        b.extend_from_slice(&self.job.to_le_bytes());
        b.extend_from_slice(&self.files.to_le_bytes());
        b.extend_from_slice(&self.interval.to_le_bytes());
        b.extend_from_slice(&self.base.to_le_bytes());
        b.extend_from_slice(&self.blocks.to_le_bytes());
        let crc = crc32c::crc32c(&b);
        b.extend_from_slice(&crc.to_le_bytes());
        b
    }
}

/// A journal record: `file`'s `block` holds write `seq` of the job, durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Durable {
    pub file: u32,
    pub block: u64,
    pub seq: u64,
}

/// One record of run `run_id`'s journal: `file`'s `block` holds write `seq`, durable.
pub fn state_record(run_id: u64, file: u32, block: u64, seq: u64) -> [u8; STATE_RECORD_LEN] {
    let mut r = [0u8; STATE_RECORD_LEN];
    r[..4].copy_from_slice(&file.to_le_bytes());
    r[4..12].copy_from_slice(&block.to_le_bytes());
    r[12..20].copy_from_slice(&seq.to_le_bytes());
    let crc = record_crc(run_id, &r[..20]);
    r[20..].copy_from_slice(&crc.to_le_bytes());
    r
}

fn record_crc(run_id: u64, body: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c(&run_id.to_le_bytes()), body)
}

/// Why a state file cannot be read as a journal of this run's durable writes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StateError {
    #[error("not an iogauge verify state file")]
    NotState,
    #[error(
        "a state file of an older iogauge, without checksums: it cannot be trusted; run the \
         writing job again with verify_state_save"
    )]
    Unchecked,
    #[error("an iogauge verify state file of unknown version {0}")]
    Version(u32),
    #[error("the state file's header is cut short")]
    ShortHeader,
    #[error("the state file's header is damaged (its checksum does not match)")]
    DamagedHeader,
    #[error("unknown checksum in the state file")]
    Checksum,
    /// A record whose checksum does not match: its number (from 1) and byte offset.
    #[error(
        "record {number} of the state file (byte {at}) is damaged: its checksum does not \
         match; the journal cannot say which writes were durable"
    )]
    DamagedRecord { number: usize, at: usize },
    #[error(
        "record {number} of the state file names block {block} of file {file}, outside the \
         {blocks} block(s) of {files} file(s) its header describes"
    )]
    Outside {
        number: usize,
        block: u64,
        file: u32,
        blocks: u64,
        files: u32,
    },
}

/// A state file read back: its header and each block's last durable write. A record cut
/// short at the end (the crash came while it was written) is left out.
pub fn parse_state(b: &[u8]) -> Result<(StateHeader, Vec<Durable>), StateError> {
    if b.len() < 12 || &b[..8] != STATE_MAGIC {
        return Err(StateError::NotState);
    }
    match u32_at(b, 8) {
        STATE_VERSION => {}
        1 => return Err(StateError::Unchecked),
        v => return Err(StateError::Version(v)),
    }
    if b.len() < STATE_HEADER_LEN {
        return Err(StateError::ShortHeader);
    }
    let crc_at = STATE_HEADER_LEN - 4;
    if crc32c::crc32c(&b[..crc_at]) != u32_at(b, crc_at) {
        return Err(StateError::DamagedHeader);
    }
    let checksum = u8::try_from(u32_at(b, 12))
        .ok()
        .and_then(Checksum::from_code)
        .ok_or(StateError::Checksum)?;
    let h = StateHeader {
        checksum,
        run_id: u64_at(b, 16),
        job: u32_at(b, 24),
        files: u32_at(b, 28),
        interval: u64_at(b, 32),
        base: u64_at(b, 40),
        blocks: u64_at(b, 48),
    };
    let mut records = Vec::new();
    for (i, r) in b[STATE_HEADER_LEN..]
        .chunks_exact(STATE_RECORD_LEN)
        .enumerate()
    {
        if record_crc(h.run_id, &r[..20]) != u32_at(r, 20) {
            return Err(StateError::DamagedRecord {
                number: i + 1,
                at: STATE_HEADER_LEN + i * STATE_RECORD_LEN,
            });
        }
        let d = Durable {
            file: u32_at(r, 0),
            block: u64_at(r, 4),
            seq: u64_at(r, 12),
        };
        if d.file >= h.files || d.block >= h.blocks {
            return Err(StateError::Outside {
                number: i + 1,
                block: d.block,
                file: d.file,
                blocks: h.blocks,
                files: h.files,
            });
        }
        records.push(d);
    }
    Ok((h, records))
}
