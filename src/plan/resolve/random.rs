//! A job's randomness: its seed (`randseed`, `randrepeat`), the distribution of its random
//! offsets, the share of random I/O, fio's random map, and `blockalign`.

use super::DEFAULT_SEED;
use super::values::Values;
use crate::plan::SpecError;
use crate::plan::job::*;
use crate::plan::value;

/// The seed, the random distribution, the share of random I/O, the random map and the
/// alignment of random offsets (`blockalign`).
pub(super) fn randomness(
    v: &Values<'_>,
    rw: RwMode,
    (bs, max_bs): (u64, u64),
    warnings: &mut Vec<String>,
) -> Result<Randomness, SpecError> {
    let seed = match v.int("randseed")? {
        Some(s) => s,
        None if v.bool("randrepeat")? => DEFAULT_SEED,
        None => {
            // randrepeat=0: a new seed each run, kept in the report's options.
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default();
            now.as_nanos() as u64 ^ u64::from(std::process::id()).rotate_left(32)
        }
    };
    let (distribution, center) = {
        let (t, _) = v.text("random_distribution").expect("has a default");
        let (t, center) = split_center(v, &t)?;
        let d = value::parse_distribution(&t, v.kb_base)
            .map_err(|acc| v.error("random_distribution", format!("expected {acc}")))?;
        (d, center)
    };
    if !distribution.is_uniform() && !rw.is_random() {
        warnings.push(format!(
            "random_distribution applies to random patterns; rw={} ignores it",
            rw.as_str()
        ));
    }
    let pct_random = match v.text("percentage_random") {
        Some((t, _)) => {
            value::per_direction(&t, 100u8, |p| value::parse_int(p, 0, 100).map(|n| n as u8))
                .map_err(|acc| v.error("percentage_random", format!("expected {acc}")))?
        }
        None => [100; 3],
    };
    // lfsr visits every block once per pass, map or no map (fio's).
    let lfsr = v.choice("random_generator")? == "lfsr";
    let randommap = !v.bool("norandommap")? || lfsr;
    Ok(Randomness {
        seed,
        distribution,
        center,
        pct_random,
        randommap,
        repeatable: v.bool("randrepeat")?,
        job_number: 0,
        align: blockalign(v, rw, (bs, max_bs), randommap)?,
    })
}

/// fio's center of a skewed distribution (`zipf:1.2:0.3`, `pareto:0.9:0.7`, `normal:10:0.2`):
/// the text without it, and the center (0 to 1).
fn split_center(v: &Values<'_>, text: &str) -> Result<(String, Option<f64>), SpecError> {
    let t = text.trim();
    let kind = t.split(':').next().unwrap_or("").to_ascii_lowercase();
    let mut parts = t.splitn(3, ':');
    let (Some(k), Some(val), Some(c)) = (parts.next(), parts.next(), parts.next()) else {
        return Ok((t.to_string(), None));
    };
    if !matches!(kind.as_str(), "zipf" | "pareto" | "normal" | "gauss") {
        return Ok((t.to_string(), None));
    }
    match c.trim().parse::<f64>() {
        Ok(c) if (0.0..=1.0).contains(&c) => Ok((format!("{k}:{val}"), Some(c))),
        _ => Err(v.error(
            "random_distribution",
            format!(
                "expected {k}:VALUE:CENTER with CENTER from 0 to 1 (where in the region the \
                 skew sits), not {c}"
            ),
        )),
    }
}

/// `blockalign`: random offsets on multiples of it (fio's; by default the smallest block).
/// 0 when it is the smallest block, where nothing changes.
fn blockalign(
    v: &Values<'_>,
    rw: RwMode,
    (bs, _max_bs): (u64, u64),
    randommap: bool,
) -> Result<u64, SpecError> {
    let Some((text, _)) = v.text("blockalign") else {
        return Ok(0);
    };
    let kb = v.kb_base;
    let per_dir =
        value::per_direction(&text, 0, |p| value::parse_size_base(p, kb).map(|s| s.bytes))
            .map_err(|acc| v.error("blockalign", format!("expected {acc}")))?;
    let align = per_dir.iter().copied().max().unwrap_or(0);
    if per_dir.iter().any(|&a| a != 0 && a != align) {
        return Err(v.error(
            "blockalign",
            "one alignment for every direction (different ones per direction are not done)".into(),
        ));
    }
    if align == 0 || align == bs || !rw.is_random() {
        return Ok(0);
    }
    if align % bs != 0 {
        return Err(v.error(
            "blockalign",
            format!("must be a multiple of the smallest block size ({bs} bytes)"),
        ));
    }
    if randommap {
        return Err(v.error(
            "blockalign",
            "above the smallest block size needs norandommap (the random map covers every \
             smallest block once per pass, and aligned offsets would repeat them)"
                .into(),
        ));
    }
    Ok(align)
}
