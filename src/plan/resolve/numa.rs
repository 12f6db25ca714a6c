//! NUMA placement as fio's `numa_cpu_nodes` and `numa_mem_policy` give it: the CPUs of the
//! nodes named (from sysfs; a machine without NUMA has one node, 0, of every CPU), and the
//! memory policy of the job's buffers.

use crate::engine::MemPolicy;
use crate::plan::value::ValueError;

const NODES: &str = "/sys/devices/system/node";

/// A node this machine lacks, or one without CPUs: what the option's error says.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(super) struct NodeError(String);

/// The nodes this machine has (one, 0, where the kernel shows none).
fn online() -> Vec<usize> {
    std::fs::read_to_string(format!("{NODES}/online"))
        .ok()
        .and_then(|t| super::cpus::parse_list(t.trim()).ok())
        .unwrap_or_else(|| vec![0])
}

/// Every node in `nodes` is one this machine has; else which it has.
pub(super) fn nodes_exist(nodes: &[usize]) -> Result<(), NodeError> {
    let have = online();
    match nodes.iter().find(|n| !have.contains(n)) {
        Some(n) => {
            let list: Vec<String> = have.iter().map(|n| n.to_string()).collect();
            Err(NodeError(format!(
                "names NUMA node {n}, but this machine has node(s) {}",
                list.join(",")
            )))
        }
        None => Ok(()),
    }
}

/// The CPUs of `nodes`, sorted, each once.
pub(super) fn node_cpus(nodes: &[usize]) -> Result<Vec<usize>, NodeError> {
    nodes_exist(nodes)?;
    let all = || (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect();
    let mut cpus: Vec<usize> = Vec::new();
    for n in nodes {
        match std::fs::read_to_string(format!("{NODES}/node{n}/cpulist")) {
            Ok(t) if t.trim().is_empty() => {}
            Ok(t) => cpus
                .extend(super::cpus::parse_list(t.trim()).map_err(|e| NodeError(e.to_string()))?),
            // No NUMA in this kernel: node 0 is the machine.
            Err(_) => cpus = all(),
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    if cpus.is_empty() {
        return Err(NodeError("names NUMA node(s) without CPUs".into()));
    }
    Ok(cpus)
}

/// fio's `numa_mem_policy`: `default`, `local`, `prefer:N`, `bind:LIST`, `interleave:LIST`.
pub(super) fn parse_policy(text: &str) -> Result<MemPolicy, ValueError> {
    const SYNTAX: &str = "default, local, prefer:NODE, bind:NODES or interleave:NODES (0-1,3)";
    let (mode, nodes) = match text.trim().split_once(':') {
        Some((m, n)) => (m.trim(), Some(n.trim())),
        None => (text.trim(), None),
    };
    let list = || {
        nodes
            .ok_or(ValueError::Syntax(SYNTAX))
            .and_then(|n| super::cpus::parse_list(n).map_err(|_| ValueError::Syntax(SYNTAX)))
    };
    let (mode, nodes) = match mode {
        "default" if nodes.is_none() => (0, Vec::new()),
        "local" if nodes.is_none() => (4, Vec::new()),
        "prefer" => match list()?.as_slice() {
            [one] => (1, vec![*one]),
            _ => return Err(ValueError::Syntax(SYNTAX)),
        },
        "bind" => (2, list()?),
        "interleave" => (3, list()?),
        _ => return Err(ValueError::Syntax(SYNTAX)),
    };
    Ok(MemPolicy { mode, nodes })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_read_as_fio_writes_them() {
        assert_eq!(
            parse_policy("bind:0").unwrap(),
            MemPolicy {
                mode: 2,
                nodes: vec![0]
            }
        );
        assert_eq!(
            parse_policy("interleave:0-1").unwrap(),
            MemPolicy {
                mode: 3,
                nodes: vec![0, 1]
            }
        );
        assert_eq!(parse_policy("prefer:1").unwrap().mode, 1);
        assert_eq!(
            parse_policy("local").unwrap(),
            MemPolicy {
                mode: 4,
                nodes: vec![]
            }
        );
        for bad in ["bind", "prefer:0-1", "spread:0", "default:0", ""] {
            assert!(parse_policy(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn node_0_is_every_cpu_on_one_node_and_other_nodes_are_refused() {
        let cpus = node_cpus(&[0]).unwrap();
        assert!(!cpus.is_empty());
        if online() == [0] {
            let n = std::thread::available_parallelism().unwrap().get();
            assert_eq!(cpus, (0..n).collect::<Vec<_>>());
        }
        let e = node_cpus(&[999]).unwrap_err().to_string();
        assert!(e.contains("names NUMA node 999"), "{e}");
    }
}
