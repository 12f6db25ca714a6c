//! A job's thread as fio sets it up (its I/O priority, CPUs and nice value) and its I/O
//! priorities as it runs: each I/O's draw of a per-command one (`cmdprio_*`), and the
//! per-priority latencies its stats keep.

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::plan::JobSpec;
use crate::plan::prio::{Priorities, class_of, level_of};
use crate::plan::workload::Dir;
use crate::stats::JobStats;

use super::end::setup_error;
use super::{JobResult, Worker};

/// Sets what fio sets on a job's thread before its first I/O, on the calling (job) thread:
/// its I/O priority (`prio`/`prioclass`), the CPUs it may run on (`cpus_allowed`, `cpumask`,
/// `numa_cpu_nodes`), its memory policy (`numa_mem_policy`) and its nice value. On failure,
/// the job's result (the errno kept, the call named).
pub(super) fn settle_thread(w: &Worker<'_>) -> Option<JobResult> {
    let job = w.job;
    let p = job.prio.default;
    let ioprio = || crate::engine::set_thread_ioprio(p).err();
    let (what, e) = if let Some(e) = job.prio.set.then(ioprio).flatten() {
        let what = format!(
            "ioprio_set (prioclass {}, prio {})",
            class_of(p),
            level_of(p)
        );
        (what, e)
    } else if let Some((c, e)) = job
        .cpus
        .as_ref()
        .filter(|c| !c.cpus.is_empty())
        .and_then(|c| pin(&c.cpus).err().map(|e| (c, e)))
    {
        (format!("sched_setaffinity (CPUs {:?})", c.cpus), e)
    } else if let Some((m, e)) = job
        .cpus
        .as_ref()
        .and_then(|c| c.mem.as_ref())
        .and_then(|m| crate::engine::set_thread_mempolicy(m).err().map(|e| (m, e)))
    {
        (
            format!("set_mempolicy (mode {}, nodes {:?})", m.mode, m.nodes),
            e,
        )
    } else if let Some((n, e)) = job.nice.and_then(|n| set_nice(n).err().map(|e| (n, e))) {
        (format!("setpriority (nice {n})"), e)
    } else {
        return None;
    };
    let mut r = setup_error(w, e);
    if let Some(err) = r.error.as_mut() {
        err.message = format!("{what}: {}", err.message);
    }
    Some(r)
}

/// Lets the calling thread run on `cpus` only.
pub(super) fn pin(cpus: &[usize]) -> std::io::Result<()> {
    crate::platform::process::pin_thread(cpus)
}

/// The calling thread's nice value (Linux keeps one per thread).
fn set_nice(n: i32) -> std::io::Result<()> {
    crate::platform::process::set_thread_nice(n)
}

/// The directions measured per priority get their priorities in fio's order: the job's own,
/// then the per-command ones as configured.
pub(super) fn track(stats: &mut JobStats, job: &JobSpec) {
    for (d, ps) in stats.prios.iter_mut().enumerate() {
        if !job.prio.tracked(d) {
            continue;
        }
        ps.total = job.prio.by_total;
        let own = std::iter::once(job.prio.default);
        for p in own.chain(job.prio.cmd[d].iter().map(|c| c.ioprio)) {
            ps.entry(p);
        }
    }
}

/// Each I/O's priority: a per-command one for its share of the I/Os, else the job's own.
pub(super) struct Draw {
    /// Per-command priorities are in use.
    pub(super) cmd: bool,
    /// fio's prio_state: a draw from 0..100 per I/O that may get one.
    rng: Xoshiro256PlusPlus,
}

impl Draw {
    pub(super) fn new(job: &JobSpec) -> Draw {
        Draw {
            cmd: job.prio.cmd.iter().any(|c| !c.is_empty()),
            rng: Xoshiro256PlusPlus::seed_from_u64(job.random.seed ^ 0x10_9210),
        }
    }

    /// The priority of the next I/O of direction `dir` and `len` bytes (per-command
    /// priorities in use): a per-command one for its share of the I/Os, else the job's own.
    pub(super) fn draw(&mut self, p: &Priorities, dir: Dir, len: u64) -> u16 {
        if p.share(dir as usize, len) == 0 {
            return p.default;
        }
        let roll = (self.rng.next_u64() % 100) as u32;
        p.pick(dir as usize, len, roll)
    }
}
