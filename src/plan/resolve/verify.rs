//! `verify=` and its options, and what the written bytes are (`buffer_pattern`,
//! `zero_buffers`, `refill_buffers`, compression and dedupe shapes), which a pattern check
//! reads back.

use super::values::Values;
use crate::plan::SpecError;
use crate::plan::errors::ContinueOn;
use crate::plan::job::*;
use crate::plan::value;

/// A trimmed block holds nothing to check.
fn refuse_trims(v: &Values<'_>, rw: RwMode) -> Result<(), SpecError> {
    if !rw.trims() {
        return Ok(());
    }
    Err(v.error(
        "verify",
        format!(
            "cannot check rw={}: a trimmed block holds nothing to check, and one trimmed as \
             the run stops is never written again (verify a write or randwrite job)",
            rw.as_str()
        ),
    ))
}

/// `verify=` and its options; with `verify_only`, the job becomes a sequential read of its
/// region (it writes nothing).
pub(super) fn verification(
    v: &Values<'_>,
    (rw, gap): (RwMode, i64),
    (sizes, bs): (&[BlockSizes; 3], u64),
    shape: &DataShape,
    w: &mut Vec<String>,
) -> Result<(Option<Verify>, RwMode), SpecError> {
    let checksum = match v.text("verify") {
        Some((t, _)) => crate::verify::Checksum::parse(&t)
            .map_err(|acc| v.error("verify", format!("expected {acc}")))?,
        None => None,
    };
    let only = v.bool("verify_only")?;
    let (after_write, fatal) = (v.bool("do_verify")?, v.bool("verify_fatal")?);
    let dump = v.bool("verify_dump")?;
    let backlog = v.int("verify_backlog")?.unwrap_or(0);
    let backlog_batch = v.int("verify_backlog_batch")?.unwrap_or(backlog);
    let (state_save, state_load) = (v.bool("verify_state_save")?, v.bool("verify_state_load")?);
    let interval = v.size("verify_interval", w)?;
    let threads = v.int("verify_async")?.unwrap_or(0) as u32;
    let header_at = v.size("verify_offset", w)?.unwrap_or(0);
    let Some(checksum) = checksum else {
        for o in [
            "verify_only",
            "verify_interval",
            "verify_fatal",
            "verify_dump",
            "verify_state_save",
            "verify_state_load",
            "verify_backlog",
            "verify_backlog_batch",
            "verify_offset",
        ] {
            if v.given(o) && (o != "verify_only" || only) {
                return Err(v.error(o, "needs verify= (the checksum to check with)".into()));
            }
        }
        return Ok((None, rw));
    };
    refuse_trims(v, rw)?;
    // A job that only reads checks each block as it reads it (fio's way): the data an
    // earlier job of the run, or a kept file, holds.
    let inline = !rw.writes() && !only;
    if checksum.is_pattern() && !v.given("verify_pattern") {
        return Err(v.error(
            "verify",
            "pattern checks the data against verify_pattern: give it (verify_pattern=0xaa55)"
                .into(),
        ));
    }
    let write_sizes = if inline { &sizes[0] } else { &sizes[1] };
    let smallest = write_sizes.min().min(bs);
    let interval = match interval {
        // fio's rule: a block checked can be no larger than the smallest write.
        Some(i) if i > smallest => {
            w.push(format!(
                "verify_interval={i} is larger than the job's smallest {} ({smallest} bytes): \
                 each {smallest} bytes are checked, as fio does",
                if inline { "read" } else { "write" }
            ));
            smallest
        }
        i => i.unwrap_or(smallest),
    };
    let (interval, header_at) = if checksum.is_pattern() {
        let header = checksum == crate::verify::Checksum::PatternHdr;
        let layout = (bs, write_sizes, gap);
        pattern_layout(v, (interval, header_at, header), layout, shape, w)?
    } else {
        (interval, header_at)
    };
    check_layout(v, interval, header_at, (bs, write_sizes))?;
    let backlog = if only || inline {
        ignored_backlog(backlog, w)
    } else {
        backlog
    };
    check_modes(v, only, backlog, (state_save, state_load), w)?;
    let verify = Verify {
        given_rw: rw,
        checksum,
        interval,
        after_write: (after_write && !inline) || only,
        inline,
        only,
        fatal,
        backlog,
        backlog_batch: backlog_batch.max(1),
        dump,
        state_save,
        state_load,
        threads,
        header_at: header_at as u32,
    };
    Ok((Some(verify), if only { RwMode::Read } else { rw }))
}

/// verify=pattern: no header (a verify_offset is ignored, as fio ignores it), and blocks laid
/// so each one's place in the pattern is known. The block size and header offset to use.
fn pattern_layout(
    v: &Values<'_>,
    (interval, header_at, header): (u64, u64, bool),
    (bs, write_sizes, gap): (u64, &BlockSizes, i64),
    shape: &DataShape,
    w: &mut Vec<String>,
) -> Result<(u64, u64), SpecError> {
    if header_at > 0 && !header {
        w.push(format!(
            "verify_offset={header_at} is ignored with verify=pattern (as fio ignores it): \
             the pattern check writes no header to move"
        ));
    }
    // One write size: fio checks a verify_interval that does not divide it piece by piece,
    // but a pattern check needs no pieces (the pattern runs through each write from its
    // start): each write is checked whole.
    let fixed = match write_sizes {
        BlockSizes::Fixed(b) if *b == bs => Some(bs),
        _ => None,
    };
    let interval = match fixed {
        Some(f) if f % interval != 0 => {
            w.push(format!(
                "verify_interval={interval} does not divide bs ({f}): verify=pattern checks \
                 each write whole (the pattern runs through it from its start, as in fio)"
            ));
            f
        }
        _ => interval,
    };
    let len = shape.pattern.len().max(1) as u64;
    let pastes = shape.pattern_per_write();
    // Each write carries the pattern from its start (fio's), so a block inside a write starts
    // where its distance from the write's start says: known when every write has one size and
    // starts a whole number of writes from the job's offset.
    let zoned = v
        .text("zonemode")
        .is_some_and(|(t, _)| t.trim() == "strided");
    let laid_out = fixed.is_some() && gap == 0 && !zoned;
    if pastes && !laid_out {
        return Err(v.error(
            "verify_pattern",
            "pastes each write's offset (%o) or restarts within it \
             (verify_pattern_interval): with I/O sizes that vary, gaps or zones iogauge cannot \
             tell which write a block belongs to"
                .into(),
        ));
    }
    if interval % len != 0 && Some(interval) != fixed && !laid_out {
        return Err(v.error(
            "verify_pattern",
            format!(
                "is {len} bytes, which does not divide verify_interval ({interval}): with I/O \
                 sizes that vary, gaps or zones iogauge cannot tell where in the pattern a \
                 block starts"
            ),
        ));
    }
    Ok((interval, if header { header_at } else { 0 }))
}

/// verify_backlog on a job that writes nothing: fio accepts it and does nothing with it.
fn ignored_backlog(backlog: u64, w: &mut Vec<String>) -> u64 {
    if backlog > 0 {
        w.push(format!(
            "verify_backlog={backlog} is ignored: it reads back what the job writes as it \
             goes, and this job writes nothing (fio ignores it too)"
        ));
    }
    0
}

/// The warning that the data written may be stored in less than it takes.
pub(super) fn flattering(shape: &DataShape, mode: DataMode) -> String {
    format!(
        "the data written is {}: a device or file system that compresses or deduplicates \
         (ZFS, btrfs, VDO, many SSDs and arrays) may store less than the figures say",
        shape.describe(mode)
    )
}

/// What the written bytes are, and a warning when a device could compress or deduplicate
/// them.
pub(super) fn data(
    v: &Values<'_>,
    w: &mut Vec<String>,
) -> Result<(DataMode, DataShape), SpecError> {
    let zero = v.bool("zero_buffers")?;
    let refill = v.bool("refill_buffers")?;
    // (bytes, where fio's %o pastes each write's offset: verify_pattern only)
    type Pieces = (Vec<u8>, Vec<usize>);
    let parse = |name: &'static str| -> Result<Option<Pieces>, SpecError> {
        let read = |t: &str| match name {
            "verify_pattern" => value::parse_pattern_pieces(t),
            _ => value::parse_pattern(t).map(|b| (b, Vec::new())),
        };
        match v.text(name) {
            Some((t, _)) => Ok(Some(
                read(&t).map_err(|acc| v.error(name, format!("expected {acc}")))?,
            )),
            None => Ok(None),
        }
    };
    // verify_pattern is the data to verify; buffer_pattern, if given too, must agree.
    let pattern = match (parse("buffer_pattern")?, parse("verify_pattern")?) {
        (Some(b), Some(p)) if b != p => {
            return Err(v.error(
                "verify_pattern",
                "differs from buffer_pattern: the data written is one pattern".into(),
            ));
        }
        (b, p) => p.or(b),
    };
    let mut shape = DataShape {
        compress_pct: v.int("buffer_compress_percentage")?.unwrap_or(0) as u8,
        compress_chunk: v.size("buffer_compress_chunk", w)?.unwrap_or(512).max(1),
        dedupe_pct: v.int("dedupe_percentage")?.unwrap_or(0) as u8,
        // dedupe_mode=working_set: set with the job's size (resolve's dedupe.rs).
        dedupe_set: 0,
        dedupe_share: None,
        scramble: v.bool("scramble_buffers")?,
        pattern: Vec::new(),
        pattern_offsets: Vec::new(),
        pattern_segment: v.size("verify_pattern_interval", w)?.unwrap_or(0),
    };
    let pattern_option = if v.given("verify_pattern") {
        "verify_pattern"
    } else {
        "buffer_pattern"
    };
    let exclusive = [
        ("zero_buffers", zero),
        ("refill_buffers", refill),
        (pattern_option, pattern.is_some()),
    ];
    let chosen: Vec<&str> = exclusive.iter().filter(|e| e.1).map(|e| e.0).collect();
    if let [a, b, ..] = chosen[..] {
        return Err(v.error(b, format!("cannot be combined with {a}")));
    }
    let mode = if zero {
        DataMode::Zero
    } else if refill {
        DataMode::Refill
    } else if let Some((p, offsets)) = pattern {
        (shape.pattern, shape.pattern_offsets) = (p, offsets);
        DataMode::Pattern
    } else {
        DataMode::Random
    };
    if shape.compress_pct > 0 && matches!(mode, DataMode::Zero | DataMode::Pattern) {
        return Err(v.error(
            "buffer_compress_percentage",
            format!("shapes random data; {} is compressible already", chosen[0]),
        ));
    }
    if shape.dedupe_pct > 0 && mode != DataMode::Random {
        return Err(v.error(
            "dedupe_percentage",
            "repeats the default random data; it cannot be combined with zero_buffers, \
             refill_buffers or buffer_pattern"
                .into(),
        ));
    }
    let flatters = match mode {
        DataMode::Zero | DataMode::Pattern => true,
        DataMode::Random => shape.compress_pct > 0 || shape.dedupe_pct > 0 || !shape.scramble,
        DataMode::Refill => shape.compress_pct > 0,
    };
    if flatters {
        w.push(flattering(&shape, mode));
    }
    Ok((mode, shape))
}

/// The block a checksum covers (`verify_interval`) fits the job's writes, and a header moved
/// by `verify_offset` fits in it.
fn check_layout(
    v: &Values<'_>,
    interval: u64,
    header_at: u64,
    (bs, write_sizes): (u64, &BlockSizes),
) -> Result<(), SpecError> {
    let min = crate::verify::MIN_BLOCK as u64;
    let ok = interval >= min
        && interval <= bs
        && bs % interval == 0
        && write_sizes
            .alignment_sizes()
            .iter()
            .all(|s| s % interval == 0);
    if !ok {
        return Err(v.error(
            "verify_interval",
            format!(
                "{interval} bytes does not fit the job's blocks: expected at least {min} \
                 bytes, at most bs ({bs}), dividing bs and every write size"
            ),
        ));
    }
    if header_at > 0 {
        use crate::verify::{HEADER_LEN, TRAILER_LEN};
        let (h, t) = (HEADER_LEN as u64, TRAILER_LEN as u64);
        if header_at < h || header_at + h + t > interval {
            return Err(v.error(
                "verify_offset",
                format!(
                    "{header_at} bytes into a block of {interval}: expected 0, or from {h} (the \
                     header it swaps with must not overlap it) to {} (the header must end \
                     before the block's {t}-byte trailer)",
                    interval.saturating_sub(h + t)
                ),
            ));
        }
    }
    Ok(())
}

/// The state journal fits the job: saved by a writer and loaded by verify_only.
fn check_modes(
    v: &Values<'_>,
    only: bool,
    backlog: u64,
    (state_save, state_load): (bool, bool),
    w: &mut Vec<String>,
) -> Result<(), SpecError> {
    if backlog > 0 {
        w.push(format!(
            "verify_backlog={backlog}: the job pauses every {backlog} writes to read them back \
             and check them; its figures include those pauses (the reads are not counted)"
        ));
    }
    if state_load && !only {
        return Err(v.error(
            "verify_state_load",
            "checks what an earlier run's journal says was durable: give it with \
             verify_only=1"
                .into(),
        ));
    }
    if state_save && only {
        return Err(v.error(
            "verify_state_save",
            "a job with verify_only writes nothing to journal".into(),
        ));
    }
    Ok(())
}

/// `continue_on_error` and `ignore_error`. Going past verify failures is refused on a job that
/// verifies: iogauge stops at the first block that does not check and keeps the file as the
/// evidence.
pub(super) fn continue_on(v: &Values<'_>, verifies: bool) -> Result<ContinueOn, SpecError> {
    let on = ContinueOn {
        classes: ContinueOn::classes_of(&v.choice("continue_on_error")?),
        ..ContinueOn::default()
    };
    let on = match v.parsed("ignore_error", |t| on.clone().with_ignored(t))? {
        Some(with) => with,
        None => on,
    };
    if verifies && on.classes & crate::plan::errors::VERIFY != 0 {
        let option = match v.given("ignore_error") && !v.given("continue_on_error") {
            true => "ignore_error",
            false => "continue_on_error",
        };
        return Err(v.error(
            option,
            "going past verify failures is not done: iogauge stops the job at the first block \
             that does not check and keeps its file as the evidence; continue_on_error=io goes \
             past read and write errors"
                .into(),
        ));
    }
    Ok(on)
}
