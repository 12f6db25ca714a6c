//! `--sweep NAME=VALUES`: an axis's grammar (a list, or a range with a step), its values as
//! the option reads them, and the grid of every combination.

use serde::{Deserialize, Serialize};

use super::{AxisError, SweepError};
use crate::plan::options::{Kind, lookup};

/// Most points one axis may have: a range with a small step over a wide span is a typo.
pub const MAX_AXIS_POINTS: usize = 1000;
/// Most points a sweep may have.
pub const MAX_POINTS: usize = 10_000;

/// One swept option and its values, in the order they run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Axis {
    pub name: String,
    pub values: Vec<String>,
}

/// Parses `NAME=V1,V2,…`, or a range `NAME=FROM..TO[:xF|:+S]` (default step +1): sizes
/// (`bs=4k..1m:x2`) or whole numbers (`iodepth=1..256:x2`). The name must be a workload
/// option; the values are checked when each point resolves.
pub fn parse_axis(arg: &str) -> Result<Axis, SweepError> {
    let bad = |problem: AxisError| SweepError::Axis {
        arg: arg.to_string(),
        problem,
    };
    let (name, values) = arg.split_once('=').ok_or_else(|| bad(AxisError::Syntax))?;
    let name = name.trim();
    let def = lookup(name).ok_or_else(|| bad(AxisError::NotAnOption(name.to_string())))?;
    let values = values.trim();
    let list: Vec<String> = if let Some((from, rest)) = values.split_once("..") {
        let (to, step) = rest.split_once(':').unwrap_or((rest, "+1"));
        range(def.kind, from.trim(), to.trim(), step.trim()).map_err(bad)?
    } else {
        values
            .split(',')
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
            .collect()
    };
    if list.is_empty() {
        return Err(bad(AxisError::Empty));
    }
    if list.len() > MAX_AXIS_POINTS {
        return Err(bad(AxisError::TooMany(list.len())));
    }
    let mut seen = std::collections::HashMap::new();
    for v in &list {
        if let Some(first) = seen.insert(meaning(def.kind, v), v) {
            return Err(bad(if first == v {
                AxisError::Twice(v.clone())
            } else {
                AxisError::Same {
                    value: v.clone(),
                    first: first.clone(),
                }
            }));
        }
    }
    Ok(Axis {
        name: def.name.to_string(),
        values: list,
    })
}

/// The values of a range, written as the option takes them (sizes in their largest exact
/// unit: 4k, 1m).
fn range(kind: Kind, from: &str, to: &str, step: &str) -> Result<Vec<String>, AxisError> {
    let size = matches!(kind, Kind::Size | Kind::Spec(_));
    let num = |t: &str| -> Result<u64, AxisError> {
        if size {
            crate::plan::value::parse_size(t)
                .map(|s| s.bytes)
                .map_err(|accepted| AxisError::Size {
                    text: t.to_string(),
                    accepted,
                })
        } else {
            t.parse::<u64>()
                .map_err(|_| AxisError::NotWhole(t.to_string()))
        }
    };
    if !size && !matches!(kind, Kind::Int { .. } | Kind::Seconds) {
        return Err(AxisError::NotRangeable);
    }
    let (a, b) = (num(from)?, num(to)?);
    if a > b {
        return Err(AxisError::Downwards {
            from: from.to_string(),
            to: to.to_string(),
        });
    }
    let next: Box<dyn Fn(u64) -> u64> = if let Some(f) = step.strip_prefix('x') {
        let f: u64 = f
            .parse()
            .ok()
            .filter(|&f| f >= 2)
            .ok_or_else(|| AxisError::Factor(step.to_string()))?;
        if a == 0 {
            return Err(AxisError::ProductFromZero {
                from: from.to_string(),
                to: to.to_string(),
                step: step.to_string(),
            });
        }
        Box::new(move |v| v.saturating_mul(f))
    } else {
        let s: u64 = step
            .strip_prefix('+')
            .unwrap_or(step)
            .parse()
            .ok()
            .filter(|&s| s >= 1)
            .ok_or_else(|| AxisError::Step(step.to_string()))?;
        Box::new(move |v| v.saturating_add(s))
    };
    // Counted before any value is made: a range of 100,000 says so, and makes nothing.
    let count = match step.strip_prefix('x') {
        Some(_) => {
            let (mut n, mut v) = (0u64, a);
            while v <= b {
                n += 1;
                let w = next(v);
                if w == v {
                    break;
                }
                v = w;
            }
            n
        }
        None => (b - a) / (next(a) - a) + 1,
    };
    if count > MAX_AXIS_POINTS as u64 {
        return Err(AxisError::RangeTooLong {
            from: from.to_string(),
            to: to.to_string(),
            step: step.to_string(),
            count,
        });
    }
    let mut out = Vec::with_capacity(count as usize);
    let mut v = a;
    while v <= b && out.len() < count as usize {
        out.push(if size { size_text(v) } else { v.to_string() });
        v = next(v);
    }
    Ok(out)
}

/// A value as the option means it, for telling repeats apart: sizes in bytes (`4k` is
/// `4096`), whole numbers as numbers (`08` is `8`), anything else as written.
fn meaning(kind: Kind, v: &str) -> String {
    match kind {
        Kind::Size | Kind::Spec(_) => crate::plan::value::parse_size(v)
            .map(|s| s.bytes.to_string())
            .unwrap_or_else(|_| v.to_string()),
        Kind::Int { .. } | Kind::Seconds => v
            .parse::<u64>()
            .map(|n| n.to_string())
            .unwrap_or_else(|_| v.to_string()),
        _ => v.to_string(),
    }
}

/// Bytes in the largest unit that divides them exactly (fio's syntax: 512, 4k, 1m, 2g).
pub fn size_text(b: u64) -> String {
    for (unit, shift) in [("t", 40), ("g", 30), ("m", 20), ("k", 10)] {
        if b >= 1 << shift && b % (1 << shift) == 0 {
            return format!("{}{unit}", b >> shift);
        }
    }
    b.to_string()
}

/// Every combination of the axes' values, the first axis changing slowest.
pub fn grid(axes: &[Axis]) -> Result<Vec<Vec<String>>, SweepError> {
    let total = axes
        .iter()
        .fold(1u128, |n, a| n.saturating_mul(a.values.len() as u128));
    if total > MAX_POINTS as u128 {
        return Err(SweepError::TooManyPoints {
            sizes: axes
                .iter()
                .map(|a| a.values.len().to_string())
                .collect::<Vec<_>>()
                .join(" x "),
            total,
        });
    }
    let total = total as usize;
    let mut points = Vec::with_capacity(total);
    for i in 0..total {
        let mut rest = i;
        let mut p = vec![String::new(); axes.len()];
        for (k, a) in axes.iter().enumerate().rev() {
            p[k] = a.values[rest % a.values.len()].clone();
            rest /= a.values.len();
        }
        points.push(p);
    }
    Ok(points)
}

/// A point's name in the index and for `--resume`: its values, `bs=16k numpages=3`.
pub fn point_label(axes: &[Axis], values: &[String]) -> String {
    axes.iter()
        .zip(values)
        .map(|(a, v)| format!("{}={v}", a.name))
        .collect::<Vec<_>>()
        .join(" ")
}
