//! The sizes and steps of a job's I/O: `bs`, `bsrange` and `bssplit` per direction, sizes
//! and offsets given as a share of the file, and `rw=read:GAP`'s stride.

use super::values::Values;
use crate::plan::SpecError;
use crate::plan::job::*;
use crate::plan::{options, value};

/// The option that set the I/O sizes, for errors about them.
pub(super) fn size_option(v: &Values<'_>) -> &'static str {
    ["bssplit", "bsrange"]
        .into_iter()
        .find(|o| v.given(o))
        .unwrap_or("bs")
}

/// Read and write I/O sizes from bssplit, else bsrange, else bs (fio's order).
pub(super) fn block_sizes(
    v: &Values<'_>,
    warnings: &mut Vec<String>,
) -> Result<[BlockSizes; 2], SpecError> {
    let kb = v.kb_base;
    let iec = std::cell::Cell::new(false);
    let bytes = |t: &str| -> Result<u64, value::ValueError> {
        let s = value::parse_size_base(t, kb)?;
        iec.set(iec.get() || s.iec_reversed);
        Ok(s.bytes)
    };
    let (bs_text, _) = v.text("bs").expect("bs has a default");
    let bs = value::per_direction(&bs_text, 4096, bytes)
        .map_err(|acc| v.error("bs", format!("expected {acc}")))?;
    for option in ["bs", "bsrange", "bssplit"] {
        if let Some((t, _)) = v.text(option) {
            if let Some(trim) = t.split(',').nth(2).map(str::trim).filter(|p| !p.is_empty()) {
                warnings.push(format!(
                    "{option}={t}: the third value ({trim}) is fio's size for trims, which \
                     iogauge does not issue: it has no effect"
                ));
            }
        }
    }
    let mut sizes = bs.map(BlockSizes::Fixed);
    if let Some((t, _)) = v.text("bsrange") {
        let [r, w] = value::per_direction(&t, None, |p| value::parse_range(p, bytes).map(Some))
            .map_err(|acc| v.error("bsrange", format!("expected MIN-MAX sizes: {acc}")))?;
        for (slot, range) in sizes.iter_mut().zip([r, w]) {
            match range {
                Some((min, max)) if min == max => *slot = BlockSizes::Fixed(min),
                Some((min, max)) if min > 0 => *slot = BlockSizes::Range { min, max },
                Some(_) => return Err(v.error("bsrange", "expected sizes above 0".into())),
                None => {}
            }
        }
    }
    if let Some((t, _)) = v.text("bssplit") {
        let [r, w] = value::per_direction(&t, None, |p| value::parse_split(p, bytes).map(Some))
            .map_err(|acc| v.error("bssplit", format!("expected {acc}")))?;
        for (slot, split) in sizes.iter_mut().zip([r, w]) {
            match split {
                Some(v) if v.len() == 1 => *slot = BlockSizes::Fixed(v[0].0),
                Some(v) => *slot = BlockSizes::Split(v),
                None => {}
            }
        }
    }
    if iec.get() {
        let what = match &sizes {
            [BlockSizes::Fixed(a), BlockSizes::Fixed(b)] if a == b => {
                format!("bs={} means {a} bytes", bs_text.trim())
            }
            _ => format!("{}: a size in KiB/MiB/GiB", size_option(v)),
        };
        warnings.push(format!(
            "{what}: fio reads KiB/MiB/GiB as powers of 1000 (its kb_base=1024 rule) and \
             iogauge does the same; write 4k/1m/1g for powers of 1024"
        ));
    }
    Ok(sizes)
}

/// A size, or `N%` (1..=100) of what is there.
pub(super) fn size_or_pct(
    v: &Values<'_>,
    name: &'static str,
    warnings: &mut Vec<String>,
) -> Result<(Option<u64>, Option<u8>), SpecError> {
    match v.text(name) {
        Some((t, _)) if t.trim().ends_with('%') => {
            let n = t.trim().trim_end_matches('%');
            let lo = if name == "offset" { 0 } else { 1 };
            let pct = value::parse_int(n, lo, 100).map_err(|_| {
                v.error(
                    name,
                    format!("expected a size, or a percentage from {lo}% to 100%"),
                )
            })?;
            Ok((None, Some(pct as u8)))
        }
        _ => Ok((v.size(name, warnings)?, None)),
    }
}

/// `rw` and its optional `:GAP` suffix (bytes).
pub(super) fn rw_and_gap(v: &Values<'_>) -> Result<(String, u64), SpecError> {
    let (text, _) = v.text("rw").expect("rw has a default");
    let (word, gap) = match text.split_once(':') {
        Some((w, g)) => (w.trim().to_ascii_lowercase(), Some(g.trim())),
        None => (text.trim().to_ascii_lowercase(), None),
    };
    if !options::RW_MODES.contains(&word.as_str()) {
        return Err(v.error(
            "rw",
            format!(
                "expected one of {}, optionally with ':GAP'",
                options::RW_MODES.join(", ")
            ),
        ));
    }
    let gap = match gap {
        None => 0,
        Some(g) if g.starts_with('-') => {
            return Err(v.error(
                "rw",
                "a negative gap (fio's backwards sequential I/O) is not supported; gaps skip \
                 forward"
                    .into(),
            ));
        }
        Some(g) => match value::parse_size(g) {
            Ok(s) => s.bytes,
            Err(accepted) => {
                return Err(v.error("rw", format!("the gap after ':' must be {accepted}")));
            }
        },
    };
    Ok((word, gap))
}

/// Blocks between consecutive sequential I/Os: 1 + gap / (bs x numpages).
pub(super) fn stride_blocks(
    v: &Values<'_>,
    rw: RwMode,
    gap: u64,
    xfer: u64,
) -> Result<u64, SpecError> {
    if gap == 0 {
        return Ok(1);
    }
    if rw.is_random() {
        return Err(v.error(
            "rw",
            "a ':GAP' applies to sequential patterns only (read, write, rw)".into(),
        ));
    }
    if gap % xfer != 0 {
        return Err(v.error(
            "rw",
            format!("the gap ({gap} bytes) must be a multiple of bs x numpages ({xfer} bytes)"),
        ));
    }
    Ok(1 + gap / xfer)
}
