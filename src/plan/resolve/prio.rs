//! I/O priorities: `prio`/`prioclass` (the job's own) and fio's per-command priorities
//! (`cmdprio_percentage`, `cmdprio_class`, `cmdprio`, `cmdprio_bssplit`), which only a queued
//! engine can carry: fio has them for libaio and io_uring only.

use super::values::Values;
use crate::plan::prio::{self, CmdPrio, Priorities};
use crate::plan::value::{self, ValueError};
use crate::plan::{EngineKind, RwMode, SpecError};

const CMDPRIO: [&str; 4] = [
    "cmdprio_percentage",
    "cmdprio_class",
    "cmdprio",
    "cmdprio_bssplit",
];

pub(super) fn priorities(
    v: &Values<'_>,
    engine: EngineKind,
    rw: RwMode,
) -> Result<Priorities, SpecError> {
    let (level, class) = (v.int("prio")?, v.int("prioclass")?);
    let set = level.is_some() || class.is_some();
    let default = if set {
        prio::ioprio(class.unwrap_or(0) as u16, level.unwrap_or(0) as u16)
    } else {
        0
    };
    let by_total = v.bool("lat_percentiles")?;
    let mut p = Priorities {
        default,
        set,
        cmd: [Vec::new(), Vec::new()],
        by_total,
    };
    let given = CMDPRIO.iter().copied().filter(|&o| v.given(o));
    if let Some(first) = given.clone().next() {
        if !engine.queued() {
            return Err(v.error(
                first,
                format!(
                    "per-command priorities go in each queued submission: they need \
                     ioengine=io_uring or libaio (as in fio), not {}",
                    engine.as_str()
                ),
            ));
        }
    }
    // Each per direction (reads, writes); an empty value or none keeps fio's default.
    let int_list = |name: &'static str, min: u64, max: u64, default: u64| {
        v.parsed(name, |t| {
            value::per_direction(t, default, |x| value::parse_int(x, min, max))
        })
        .map(|o| o.unwrap_or([default; 3]))
    };
    let pct = int_list("cmdprio_percentage", 0, 100, 0)?;
    // fio: per-command priorities are real-time unless cmdprio_class says otherwise.
    let class = int_list("cmdprio_class", 1, 3, u64::from(prio::CLASS_RT))?;
    let level = int_list("cmdprio", 0, 7, 0)?;
    let implicit = |d: usize| prio::ioprio(class[d] as u16, level[d] as u16);
    let kb = v.kb_base;
    let split = v.parsed("cmdprio_bssplit", |t| {
        value::per_direction(t, Vec::new(), |x| bssplit(x, kb))
    })?;
    if split.is_some() && pct.iter().any(|&x| x > 0) {
        return Err(v.error(
            "cmdprio_bssplit",
            "cmdprio_percentage and cmdprio_bssplit cannot be used together (as in fio)".into(),
        ));
    }
    let does = [rw.reads(), rw.writes()];
    for d in 0..2 {
        if !does[d] {
            continue;
        }
        p.cmd[d] = match &split {
            Some(s) => {
                let entries: Vec<CmdPrio> = s[d]
                    .iter()
                    .map(|&(bs, pct, prio)| CmdPrio {
                        bs: Some(bs),
                        pct,
                        ioprio: prio.unwrap_or_else(|| implicit(d)),
                    })
                    .collect();
                if let Some(e) = entries.iter().find(|e| p_share(&entries, e.bs) > 100) {
                    return Err(v.error(
                        "cmdprio_bssplit",
                        format!(
                            "the percentages for {} bytes add up to {}: at most 100",
                            e.bs.unwrap_or(0),
                            p_share(&entries, e.bs)
                        ),
                    ));
                }
                entries
            }
            None if pct[d] > 0 => vec![CmdPrio {
                bs: None,
                pct: pct[d] as u8,
                ioprio: implicit(d),
            }],
            None => Vec::new(),
        };
    }
    Ok(p)
}

fn p_share(entries: &[CmdPrio], bs: Option<u64>) -> u32 {
    entries
        .iter()
        .filter(|e| e.bs == bs)
        .map(|e| u32::from(e.pct))
        .sum()
}

/// One direction's `cmdprio_bssplit`: `bs/pct[/class/level]` entries joined by ':'. An entry
/// without a class and level takes `cmdprio_class`/`cmdprio`; entries with no share are left
/// out, as fio does.
fn bssplit(text: &str, kb: u64) -> Result<Vec<(u64, u8, Option<u16>)>, ValueError> {
    const SYNTAX: &str = "bs/percent[/class/level] entries joined by ':' (64k/25/1/1:1m/50), a \
                          percentage from 0 to 100, a class from 0 to 3, a level from 0 to 7";
    let mut out = Vec::new();
    for entry in text.split(':').map(str::trim) {
        if entry.is_empty() {
            break;
        }
        let parts: Vec<&str> = entry.split('/').map(str::trim).collect();
        let bs = value::parse_size_base(parts[0], kb)
            .map_err(|_| ValueError::Syntax(SYNTAX))?
            .bytes;
        let num = |i: usize, max: u64| -> Result<u64, ValueError> {
            match parts.get(i) {
                None | Some(&"") => Ok(0),
                Some(t) => value::parse_int(t, 0, max).map_err(|_| ValueError::Syntax(SYNTAX)),
            }
        };
        let pct = num(1, 100)? as u8;
        let prio = match parts.len() {
            1 | 2 => None,
            4 => Some(prio::ioprio(num(2, 3)? as u16, num(3, 7)? as u16)),
            _ => return Err(ValueError::Syntax(SYNTAX)),
        };
        if pct > 0 {
            out.push((bs, pct, prio));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bssplit_entries_as_fio_reads_them() {
        let e = bssplit("64k/25/1/1:64k/75/3/2:1024k/0", 1024).unwrap();
        assert_eq!(
            e,
            vec![(65536, 25, Some(0x2001)), (65536, 75, Some(0x6002))],
            "the 0% entry is left out"
        );
        assert_eq!(bssplit("4k/50", 1024).unwrap(), vec![(4096, 50, None)]);
        assert!(bssplit("4k/50/1", 1024).is_err(), "a class needs its level");
        assert!(bssplit("4k/101", 1024).is_err());
        assert!(bssplit("4k/50/4/0", 1024).is_err());
        assert!(bssplit("x/50", 1024).is_err());
    }
}
