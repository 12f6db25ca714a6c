//! Where a job's thread runs and how nicely: `cpus_allowed` (a CPU list) or `cpumask` (a
//! mask), `numa_cpu_nodes` (the CPUs of NUMA nodes), `cpus_allowed_policy` (the jobs share
//! the set, or each takes one CPU of it), `numa_mem_policy`, and `nice`, as fio sets them on
//! each job before its first I/O.

use super::numa;
use super::values::Values;
use crate::plan::job::CpuSpec;
use crate::plan::{JobSpec, SpecError};

/// The CPUs the job may run on, if it names any (a CPU this host lacks is refused, as fio
/// refuses it).
pub(super) fn cpus(v: &Values<'_>) -> Result<Option<CpuSpec>, SpecError> {
    let split = v.choice("cpus_allowed_policy")? == "split";
    let list = v.parsed("cpus_allowed", parse_list)?;
    let mask = v.parsed("cpumask", parse_mask)?;
    let (option, mut cpus) = match (list, mask) {
        (Some(l), _) => ("cpus_allowed", l),
        (None, Some(m)) => ("cpumask", m),
        (None, None) => ("", Vec::new()),
    };
    if !option.is_empty() {
        on_host(v, option, &cpus)?;
    }
    if let Some(nodes) = v.parsed("numa_cpu_nodes", parse_list)? {
        let on_nodes =
            numa::node_cpus(&nodes).map_err(|m| v.error("numa_cpu_nodes", m.to_string()))?;
        cpus = if option.is_empty() {
            on_nodes
        } else {
            cpus.into_iter().filter(|c| on_nodes.contains(c)).collect()
        };
        if cpus.is_empty() {
            return Err(v.error(
                "numa_cpu_nodes",
                format!("has none of the CPUs {option} names"),
            ));
        }
    }
    let mem = v.parsed("numa_mem_policy", numa::parse_policy)?;
    if let Some(m) = &mem {
        numa::nodes_exist(&m.nodes).map_err(|e| v.error("numa_mem_policy", e.to_string()))?;
    }
    if cpus.is_empty() && mem.is_none() {
        return Ok(None);
    }
    Ok(Some(CpuSpec { cpus, split, mem }))
}

/// `verify_async_cpus`: the CPUs of the verify phase's checking threads.
pub(super) fn verify_cpus(v: &Values<'_>) -> Result<Option<Vec<usize>>, SpecError> {
    let Some(cpus) = v.parsed("verify_async_cpus", parse_list)? else {
        return Ok(None);
    };
    on_host(v, "verify_async_cpus", &cpus)?;
    Ok(Some(cpus))
}

/// Every CPU named is one this host has (fio refuses the others too). The host is asked only
/// here, where a job names CPUs.
fn on_host(v: &Values<'_>, option: &'static str, cpus: &[usize]) -> Result<(), SpecError> {
    let available = std::thread::available_parallelism().map_or(1, |n| n.get());
    match cpus.iter().find(|&&c| c >= available) {
        Some(&c) => Err(v.error(
            option,
            format!(
                "names CPU {c}, but this host has CPUs 0 to {}",
                available - 1
            ),
        )),
        None => Ok(()),
    }
}

/// `nice`: -20 (least nice) to 19.
pub(super) fn nice(v: &Values<'_>) -> Result<Option<i32>, SpecError> {
    v.parsed("nice", |t| {
        t.trim()
            .parse::<i32>()
            .ok()
            .filter(|n| (-20..=19).contains(n))
            .ok_or(crate::plan::value::ValueError::Syntax(
                "a whole number from -20 to 19",
            ))
    })
}

/// cpus_allowed_policy=split: the job numbered `n` in the run (from 0) takes the CPU of its
/// set that fio's split gives it, the (n mod size)th.
pub(super) fn split(job: &mut JobSpec, n: usize) {
    if let Some(c) = job.cpus.as_mut().filter(|c| c.split && !c.cpus.is_empty()) {
        c.cpus = vec![c.cpus[n % c.cpus.len()]];
        c.split = false;
    }
}

/// fio's CPU list: CPUs and ranges joined by commas (`0-3,6`), sorted, each once.
pub(super) fn parse_list(text: &str) -> Result<Vec<usize>, crate::plan::value::ValueError> {
    const SYNTAX: &str = "CPU numbers and ranges joined by commas (0-3,6)";
    let bad = || crate::plan::value::ValueError::Syntax(SYNTAX);
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (usize, usize) = (
            a.trim().parse().map_err(|_| bad())?,
            b.trim().parse().map_err(|_| bad())?,
        );
        if a > b || b >= 1 << 16 {
            return Err(bad());
        }
        out.extend(a..=b);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// fio's cpumask: a number (decimal, or hex with 0x) whose set bits are the CPUs.
fn parse_mask(text: &str) -> Result<Vec<usize>, crate::plan::value::ValueError> {
    let t = text.trim();
    let n = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u128::from_str_radix(h, 16),
        None => t.parse::<u128>(),
    };
    match n {
        Ok(m) if m != 0 => Ok((0..128).filter(|b| m >> b & 1 == 1).collect()),
        _ => Err(crate::plan::value::ValueError::Syntax(
            "a mask of CPUs, decimal or 0x and hex digits, not 0 (0x3: CPUs 0 and 1)",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_and_masks_read_as_fio_reads_them() {
        assert_eq!(parse_list("0-3,6").unwrap(), [0, 1, 2, 3, 6]);
        assert_eq!(parse_list("2, 1,1").unwrap(), [1, 2]);
        for bad in ["", "3-1", "a", "1-", "0-70000"] {
            assert!(parse_list(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_mask("0x5").unwrap(), [0, 2]);
        assert_eq!(parse_mask("3").unwrap(), [0, 1]);
        assert!(parse_mask("0").is_err() && parse_mask("0xg").is_err());
    }
}
