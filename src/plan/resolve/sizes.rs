//! The sizes and steps of a job's I/O: `bs`, `bsrange` and `bssplit` per direction, sizes
//! and offsets given as a share of the file, and `rw=read:GAP`'s gap.

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

/// Read, write and trim I/O sizes from bssplit, else bsrange, else bs (fio's order).
pub(super) fn block_sizes(
    v: &Values<'_>,
    warnings: &mut Vec<String>,
) -> Result<[BlockSizes; 3], SpecError> {
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
    let mut sizes = bs.map(BlockSizes::Fixed);
    if let Some((t, _)) = v.text("bsrange") {
        let fio_read = std::cell::RefCell::new(Vec::new());
        let ranges = value::per_direction(&t, None, |p| {
            value::parse_range(p, bytes).map(Some).or_else(|e| {
                // fio reads each end's leading number and unit and ignores what follows
                // (`512/25:1k:25` is 512-1k); so does iogauge, saying so.
                let (a, b) = fio_range_ends(p).ok_or(e.clone())?;
                let r = value::parse_range(&format!("{a}-{b}"), bytes).map_err(|_| e)?;
                fio_read.borrow_mut().push(format!("{p} as {a}-{b}"));
                Ok(Some(r))
            })
        })
        .map_err(|acc| v.error("bsrange", format!("expected MIN-MAX sizes: {acc}")))?;
        for read in fio_read.into_inner() {
            warnings.push(format!(
                "bsrange={t}: fio reads {read} (the number and unit at the start of each end,                  the rest ignored); iogauge does the same"
            ));
        }
        for (slot, range) in sizes.iter_mut().zip(ranges) {
            match range {
                Some((min, max)) if min == max => *slot = BlockSizes::Fixed(min),
                Some((min, max)) if min > 0 => *slot = BlockSizes::Range { min, max },
                Some(_) => return Err(v.error("bsrange", "expected sizes above 0".into())),
                None => {}
            }
        }
    }
    if let Some((t, _)) = v.text("bssplit") {
        let splits = value::per_direction(&t, None, |p| value::parse_split(p, bytes).map(Some))
            .map_err(|acc| v.error("bssplit", format!("expected {acc}")))?;
        for (slot, split) in sizes.iter_mut().zip(splits) {
            match split {
                Some(v) if v.len() == 1 => *slot = BlockSizes::Fixed(v[0].0),
                Some(v) => *slot = BlockSizes::Split(v),
                None => {}
            }
        }
    }
    if iec.get() {
        let what = match &sizes {
            [BlockSizes::Fixed(a), BlockSizes::Fixed(b), _] if a == b => {
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

/// fio's reading of a range whose ends carry more than a size: each end's leading digits
/// and letters (`512/25:1k:25:2k` → 512, 1k). `None` when an end starts with no digit.
fn fio_range_ends<'a>(text: &'a str) -> Option<(&'a str, &'a str)> {
    let (a, b) = text.split_once('-').or_else(|| text.split_once(':'))?;
    let lead = |t: &'a str| value::leading_size(t).or(Some(t.trim()));
    Some((lead(a)?, lead(b)?))
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

/// `rw` and its optional `:GAP` suffix (bytes; negative: backwards).
pub(super) fn rw_and_gap(v: &Values<'_>) -> Result<(String, i64), SpecError> {
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
        Some(g) => {
            // A negative gap moves back (fio's backwards sequential I/O, `rw=read:-8k`).
            let (sign, g) = match g.strip_prefix('-') {
                Some(rest) => (-1, rest.trim()),
                None => (1, g),
            };
            match value::parse_size(g) {
                Ok(s) if s.bytes <= i64::MAX as u64 => sign * s.bytes as i64,
                Ok(_) => return Err(v.error("rw", "the gap after ':' is too large".into())),
                Err(accepted) => {
                    return Err(v.error("rw", format!("the gap after ':' must be {accepted}")));
                }
            }
        }
    };
    Ok((word, gap))
}

/// The bytes a sequential pattern skips after each I/O (`rw=read:GAP`): any number, as fio's,
/// negative to go backwards.
pub(super) fn sequential_gap(v: &Values<'_>, rw: RwMode, gap: i64) -> Result<i64, SpecError> {
    if gap != 0 && rw.is_random() {
        return Err(v.error(
            "rw",
            "a ':GAP' applies to sequential patterns only (read, write, rw)".into(),
        ));
    }
    Ok(gap)
}
