//! verify_state_save and verify_state_load: the journal of durable writes a job keeps, and
//! reading it back into the map a later run checks against.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use crate::plan::{JobSpec, Verify};
use crate::stats::{BAD_BLOCKS_KEPT, BadBlock};
use crate::units::unix_ns;
use crate::verify::{GenMap, StateHeader};

/// A journal read back: its header, and per (file, block) the write made durable.
pub(super) struct Loaded {
    pub(super) header: StateHeader,
    pub(super) seqs: HashMap<(usize, usize), u64>,
}

/// The largest state journal read back (44 M durable writes).
const MAX_STATE_BYTES: u64 = 1 << 30;

fn state_path(job: &JobSpec) -> PathBuf {
    crate::verify::state_path(&job.name, job.clone)
}

/// verify_state_save: the job's journal, its header written. Its later records go to the file
/// written here, whatever its name comes to name (the writer's rules: new or iogauge's own,
/// never through a link).
pub(super) fn open(job: &JobSpec, header: &StateHeader) -> std::io::Result<std::fs::File> {
    let path = state_path(job);
    crate::files::writer::write_path_open(&path, &header.bytes(), false).map_err(|e| {
        std::io::Error::other(format!(
            "verify_state_save: {}: {e}",
            crate::rawpath::display(&path)
        ))
    })
}

/// verify_state_load: the job's journal read back, each durable block acknowledged in
/// `maps`; and the blocks it says were durable past the end of a file cut short since.
pub(super) fn load(
    job: &JobSpec,
    spec: Verify,
    header: &StateHeader,
    maps: &mut [GenMap],
) -> std::io::Result<(Loaded, (u64, Vec<BadBlock>))> {
    let path = state_path(job);
    let shown = crate::rawpath::display(&path).to_string();
    let failed = |e: &dyn std::fmt::Display| {
        std::io::Error::other(format!("verify_state_load: {shown}: {e}"))
    };
    // Bounded: a record per durable write, 24 bytes each.
    let bytes = crate::files::named::read_input(
        &path,
        MAX_STATE_BYTES,
        "a journal holds 24 bytes per durable write",
    )
    .map_err(|e| failed(&e))?;
    let (h, records) = crate::verify::parse_state(&bytes).map_err(|e| failed(&e))?;
    let same_shape = (h.checksum, h.files, h.interval, h.base)
        == (spec.checksum, header.files, header.interval, header.base);
    // The same job's journal over a longer region: the file was cut short since (its size now
    // sets this job's region). What the journal says was durable past the end is lost, each
    // such block a lost write; the rest is checked as usual.
    let truncated = same_shape && h.blocks > header.blocks;
    if !same_shape || (h.blocks != header.blocks && !truncated) {
        return Err(std::io::Error::other(format!(
            "verify_state_load: {shown} was written by another job ({} file(s) of {} blocks of \
             {} bytes from offset {}, {}); this one has {} of {} of {} from {}, {}",
            h.files,
            h.blocks,
            h.interval,
            h.base,
            h.checksum.name(),
            header.files,
            header.blocks,
            header.interval,
            header.base,
            spec.checksum.name()
        )));
    }
    let (files, blocks) = (maps.len(), header.blocks as usize);
    let mut seqs = HashMap::new();
    let mut past_end = BTreeMap::new();
    for r in records {
        let (f, b, seq) = (r.file as usize, r.block as usize, r.seq);
        if f < files && b < blocks {
            maps[f].acknowledge(b, 1, false);
            seqs.insert((f, b), seq);
        } else if f < files {
            past_end.insert((f, b), seq);
        }
    }
    let lost = match truncated {
        true => lost_past_end(job, spec, &past_end),
        false => (0, Vec::new()),
    };
    Ok((Loaded { header: h, seqs }, lost))
}

/// The blocks a state journal says were made durable past the end of a file that has been
/// cut short since: each a lost write (counted, the first few kept in full).
fn lost_past_end(
    job: &JobSpec,
    spec: Verify,
    past_end: &BTreeMap<(usize, usize), u64>,
) -> (u64, Vec<BadBlock>) {
    let paths = job.paths();
    let end = job.offset + job.per_file_bytes();
    let kept = past_end
        .iter()
        .take(BAD_BLOCKS_KEPT)
        .map(|(&(f, b), &seq)| BadBlock {
            file: paths.get(f).cloned().unwrap_or_default(),
            offset: job.offset + b as u64 * spec.interval,
            len: spec.interval,
            expected_generation: 0,
            fault: crate::verify::Fault {
                kind: "lost write".into(),
                detail: format!(
                    "the file ends at byte {end}: write #{seq} of this block was acknowledged \
                     durable, and the file was cut short after it"
                ),
                found: None,
                first_bad_byte: None,
            },
            found_unix_ns: unix_ns(),
            dumped: Vec::new(),
        })
        .collect();
    (past_end.len() as u64, kept)
}
