//! What a plan will hold while it runs — memory and open files — worked out before anything
//! is created, and the refusal of a plan that cannot fit: a run that would exhaust memory is
//! stopped by the kernel or the allocator half-way (killed, or aborted under `ulimit -v`),
//! and one that runs out of descriptors fails after creating files, either way with files
//! left behind. The open-file limit is raised to the hard limit where the plan needs it. Counted per job, for the jobs of a group at once (groups run one after
//! another): the I/O buffers (iodepth × the largest transfer), the write template, the
//! verify maps and read-back buffers, and the statistics (a fixed size per job). Nothing here
//! allocates, prints or touches a file.

use crate::plan::{JobSpec, Plan};
use crate::units::human_bytes;

/// Statistics, histograms and the thread's own bookkeeping per job: measured at 1.2 MiB for a
/// job with no buffers worth counting (`bench/scale.py`), rounded up.
const PER_JOB_FIXED: u64 = 2 << 20;
/// Address space a job thread reserves for its stack (Rust's default), counted against
/// `RLIMIT_AS` only: it is reserved, not used.
const STACK_RESERVED: u64 = 2 << 20;

/// A plan's memory, at the group that needs the most.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Estimate {
    /// Bytes the busiest group's jobs hold at once.
    pub bytes: u64,
    /// Address space they reserve (stacks included).
    pub address_space: u64,
    /// The group (1-based) and the largest part, for the message.
    pub group: usize,
    pub largest: String,
}

/// One job's bytes, and what the largest part of them is.
fn job_bytes(j: &JobSpec) -> (u64, String) {
    let depth = u64::from(j.queue.depth.max(1));
    let xfer = j.max_xfer();
    let buffers = depth.saturating_mul(xfer);
    let mut total = buffers.saturating_add(xfer).saturating_add(PER_JOB_FIXED);
    let mut why = format!(
        "iodepth={depth} × {} buffers = {}",
        human_bytes(xfer),
        human_bytes(buffers)
    );
    if let Some(v) = j.verify {
        let files = j.paths().len().max(1) as u64;
        let blocks = j.size.unwrap_or(0) / v.interval.max(1);
        // A generation byte per block (a shared map adds a 2-byte in-flight count), and per
        // verify thread a read-back buffer of one transfer.
        let maps = blocks.saturating_mul(3);
        let threads = u64::from(v.threads.max(1));
        let readback = threads.saturating_mul(xfer.max(v.interval));
        let backlog = if v.backlog > 0 {
            v.backlog.saturating_mul(24)
        } else {
            0
        };
        let verify = maps.saturating_add(readback).saturating_add(backlog);
        total = total.saturating_add(verify);
        if verify > buffers {
            why = format!(
                "verify maps of {} block(s) in {files} file(s) and read-back buffers = {}",
                blocks,
                human_bytes(verify)
            );
        }
    }
    (total, why)
}

/// What `plan` holds at once, at its busiest group.
pub fn estimate(plan: &Plan) -> Estimate {
    let mut best = Estimate {
        bytes: 0,
        address_space: 0,
        group: 1,
        largest: String::new(),
    };
    for (gi, g) in plan.groups.iter().enumerate() {
        let mut bytes = 0u64;
        let mut largest = (0, String::new());
        for j in &g.jobs {
            let (b, why) = job_bytes(j);
            bytes = bytes.saturating_add(b);
            if b > largest.0 {
                largest = (b, format!("job {}: {why}", j.name));
            }
        }
        if bytes > best.bytes {
            let jobs = g.jobs.len() as u64;
            best = Estimate {
                bytes,
                address_space: bytes.saturating_add(jobs.saturating_mul(STACK_RESERVED)),
                group: gi + 1,
                largest: if jobs > 1 {
                    format!("{jobs} jobs at once; the largest, {}", largest.1)
                } else {
                    largest.1
                },
            };
        }
    }
    best
}

/// The memory a run may use, and where that limit comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limit {
    pub bytes: u64,
    /// Counted against address space (`ulimit -v`) rather than memory in use.
    pub address_space: bool,
    pub source: String,
}

/// What this machine lets the run use: the smallest of the memory available
/// (`/proc/meminfo`'s MemAvailable) and the cgroup's room (`memory.max` − `memory.current`).
pub fn machine_limit() -> Option<Limit> {
    let mut limits = Vec::new();
    if let Some(avail) = meminfo_available() {
        limits.push(Limit {
            bytes: avail,
            address_space: false,
            source: "memory available (MemAvailable)".into(),
        });
    }
    if let Some(room) = cgroup_room() {
        limits.push(Limit {
            bytes: room,
            address_space: false,
            source: "room left under this cgroup's memory.max".into(),
        });
    }
    limits.into_iter().min_by_key(|l| l.bytes)
}

/// The most I/Os each of `loggers` jobs keeps in its per-I/O log (and I/O log): together a
/// quarter of the memory this machine lets the run use, at least
/// [`MIN_IO_SAMPLES`](crate::stats::MIN_IO_SAMPLES) each. fio keeps every I/O; so does
/// iogauge until that share is used.
pub fn io_log_cap(loggers: usize) -> usize {
    let room = machine_limit().map_or(4 << 30, |l| l.bytes);
    let each =
        room / 4 / loggers.max(1) as u64 / std::mem::size_of::<crate::stats::IoSample>() as u64;
    usize::try_from(each)
        .unwrap_or(usize::MAX)
        .max(crate::stats::MIN_IO_SAMPLES)
}

/// The address space left under `ulimit -v`: a hard fact no option can raise.
pub fn address_space_limit() -> Option<Limit> {
    address_space_room().map(|bytes| Limit {
        bytes,
        address_space: true,
        source: "address space left under `ulimit -v`".into(),
    })
}

fn meminfo_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    kib_field(&text, "MemAvailable:")
}

/// `NAME:   123 kB` → bytes.
fn kib_field(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    let kib: u64 = line[name.len()..].split_whitespace().next()?.parse().ok()?;
    Some(kib * 1024)
}

fn cgroup_room() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = text.lines().find_map(|l| l.strip_prefix("0::"))?;
    let dir = std::path::Path::new("/sys/fs/cgroup").join(path.trim_start_matches('/'));
    let max = std::fs::read_to_string(dir.join("memory.max")).ok()?;
    let max: u64 = max.trim().parse().ok()?; // "max": no limit
    let current: u64 = std::fs::read_to_string(dir.join("memory.current"))
        .ok()?
        .trim()
        .parse()
        .ok()?;
    Some(max.saturating_sub(current))
}

/// The process's peak resident memory, KiB (`VmHWM` in /proc/self/status): what scale-out's
/// rank 0 reports its merge cost it, and what the merge model measures.
pub fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    kib_field(&status, "VmHWM:").map(|b| b / 1024)
}

fn address_space_room() -> Option<u64> {
    let max = crate::platform::process::address_space_limit()?;
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let used = kib_field(&status, "VmSize:").unwrap_or(0);
    Some(max.saturating_sub(used))
}

/// Descriptors a run holds besides its files (standard streams, the io_uring rings, the
/// signal thread, reading /proc): generous, as running out is worse.
const FDS_SPARE: u64 = 64;

/// Files the run holds open at once, at its busiest group: one descriptor per path for the
/// whole run (the held identity) and one per directory they are in, one per file each job of
/// the group opens, and one per job for its engine.
pub fn open_files(plan: &Plan) -> u64 {
    let mut paths = std::collections::BTreeSet::new();
    let mut busiest = 0u64;
    for g in &plan.groups {
        let mut n = 0u64;
        for j in &g.jobs {
            let p = j.paths();
            n += p.len() as u64 + 1;
            paths.extend(p);
        }
        busiest = busiest.max(n);
    }
    let dirs: std::collections::BTreeSet<_> = paths
        .iter()
        .map(|p| crate::files::fsinfo::parent_dir(p))
        .collect();
    (paths.len() + dirs.len()) as u64 + busiest + FDS_SPARE
}

/// A plan this process cannot hold: the one line that says what it needs and what it has.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimitError {
    #[error(
        "nrfiles: the run holds about {need} files open at once (every file, and each job's \
         own), but this process may open at most {may} (ulimit -n; hard limit {hard}); lower \
         nrfiles or numjobs, or raise the limit"
    )]
    OpenFiles { need: u64, may: u64, hard: String },
    #[error(
        "the run needs about {} of memory (group {group}: {largest}) but has {} ({whose}); \
         {advice}",
        human_bytes(*need),
        human_bytes(*has)
    )]
    Memory {
        need: u64,
        group: usize,
        largest: String,
        has: u64,
        whose: String,
        advice: &'static str,
    },
}

/// Refuses a plan that needs more open files than this process may have, raising the soft
/// limit to what the plan needs (up to the hard limit) where it can.
pub fn check_open_files(plan: &Plan) -> Result<(), LimitError> {
    let need = open_files(plan);
    let (soft, hard) = crate::platform::process::open_file_limits();
    let (maximum, soft) = (hard, soft.unwrap_or(u64::MAX));
    if need <= soft {
        return Ok(());
    }
    let hard = maximum.unwrap_or(u64::MAX);
    if need <= hard && crate::platform::process::raise_open_files(need) {
        return Ok(());
    }
    Err(LimitError::OpenFiles {
        need,
        may: soft.min(hard),
        hard: maximum.map_or("none".into(), |h| h.to_string()),
    })
}

/// Refuses a plan that does not fit: the user's `--max-memory`, else the memory the machine
/// has available, and always the address space `ulimit -v` leaves. One line naming what it
/// needs, where it comes from, the limit and its source.
pub fn check(plan: &Plan, max_memory: Option<u64>) -> Result<Estimate, LimitError> {
    check_open_files(plan)?;
    let e = estimate(plan);
    let memory = match max_memory {
        Some(bytes) => Some(Limit {
            bytes,
            address_space: false,
            source: "--max-memory".into(),
        }),
        None => machine_limit(),
    };
    for limit in [memory, address_space_limit()].into_iter().flatten() {
        let need = if limit.address_space {
            e.address_space
        } else {
            e.bytes
        };
        if need > limit.bytes {
            let advice = if limit.address_space {
                "lower iodepth, bs, numjobs or the verified size, or raise `ulimit -v`"
            } else {
                "lower iodepth, bs, numjobs or the verified size, or give --max-memory=SIZE to \
                 set the limit yourself"
            };
            return Err(LimitError::Memory {
                need,
                group: e.group,
                largest: e.largest.clone(),
                has: limit.bytes,
                whose: limit.source,
                advice,
            });
        }
    }
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_read_as_bytes() {
        let t = "MemTotal:       24576000 kB\nMemAvailable:    1000 kB\n";
        assert_eq!(kib_field(t, "MemAvailable:"), Some(1_024_000));
        assert_eq!(kib_field(t, "Nope:"), None);
    }
}
