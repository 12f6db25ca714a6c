//! The engine's options as a job sets them: iodepth and fio's batching options (with fio's
//! defaults and clamps), and the io_uring, libaio and pvsync2 flags, each refused where the chosen
//! engine cannot honour it.

use super::values::Values;
use crate::engine::{Flags, Queue};
use crate::plan::SpecError;
use crate::plan::job::*;

/// iodepth and the batching options, with fio's defaults and clamps. Synchronous engines get
/// depth 1 and a warning when more was asked, because fio users expect it to matter.
pub(super) fn queue_options(
    v: &Values<'_>,
    engine: EngineKind,
    warnings: &mut Vec<String>,
) -> Result<Queue, SpecError> {
    let depth = v.int("iodepth")?.unwrap_or(1) as u32;
    if !engine.queued() {
        let batch = [
            "iodepth_batch_submit",
            "iodepth_batch_complete_min",
            "iodepth_batch_complete_max",
            "iodepth_low",
        ]
        .into_iter()
        .filter(|o| v.given(o))
        .collect::<Vec<_>>();
        if depth > 1 || !batch.is_empty() {
            let what = if depth > 1 {
                format!("iodepth={depth}")
            } else {
                batch.join(", ")
            };
            warnings.push(format!(
                "{what} has no effect with ioengine={}: it issues one I/O at a time and waits \
                 for it; use ioengine=io_uring or libaio for I/Os in flight",
                engine.as_str()
            ));
        }
        return Ok(Queue::single());
    }
    let batch_submit = match v.int("iodepth_batch_submit")?.unwrap_or(1) as u32 {
        0 => depth,
        n => n.min(depth),
    };
    let complete_min = (v.int("iodepth_batch_complete_min")?.unwrap_or(1) as u32).min(depth);
    // fio's posixaio takes every finished request at each reap, whatever the maximum.
    let default_max = match engine {
        EngineKind::Posixaio => depth,
        _ => complete_min,
    };
    let complete_max = v
        .int("iodepth_batch_complete_max")?
        .map_or(default_max, |m| m as u32)
        .max(complete_min)
        .clamp(1, depth);
    let low = v.int("iodepth_low")?.map_or(depth, |l| l as u32).min(depth);
    Ok(Queue {
        depth,
        batch_submit,
        complete_min,
        complete_max,
        low,
    })
}

/// Engine-specific switches: each is an error with an engine that has no such thing.
pub(super) fn engine_flags(
    v: &Values<'_>,
    engine: EngineKind,
    direct: bool,
    numpages: u32,
) -> Result<Flags, SpecError> {
    let f = Flags {
        fixedbufs: v.bool("fixedbufs")?,
        registerfiles: v.bool("registerfiles")?,
        sqthread_poll: v.bool("sqthread_poll")?,
        sqthread_poll_cpu: v.int("sqthread_poll_cpu")?.map(|c| c as u32),
        hipri: v.bool("hipri")?,
        nowait: v.bool("nowait")?,
        userspace_reap: v.bool("userspace_reap")?,
        force_async: v.int("force_async")?.unwrap_or(0) as u32,
        stat_call: super::fileops::stat_call(v, engine)?,
        cpu: cpu_load(v, engine)?,
        inplace: v.bool("inplace")?,
    };
    let uring_only = [
        ("force_async", f.force_async > 0),
        ("fixedbufs", f.fixedbufs),
        ("registerfiles", f.registerfiles),
        ("sqthread_poll", f.sqthread_poll),
        ("sqthread_poll_cpu", f.sqthread_poll_cpu.is_some()),
    ];
    for (name, on) in uring_only {
        if on && engine != EngineKind::IoUring {
            return Err(v.error(
                name,
                format!("applies only to ioengine=io_uring, not {}", engine.as_str()),
            ));
        }
    }
    if f.userspace_reap && engine != EngineKind::Libaio {
        return Err(v.error(
            "userspace_reap",
            format!("applies only to ioengine=libaio, not {}", engine.as_str()),
        ));
    }
    if f.hipri && !matches!(engine, EngineKind::IoUring | EngineKind::Pvsync2) {
        return Err(v.error(
            "hipri",
            format!(
                "applies only to ioengine=io_uring or pvsync2, not {}",
                engine.as_str()
            ),
        ));
    }
    if f.nowait
        && !matches!(
            engine,
            EngineKind::IoUring | EngineKind::Libaio | EngineKind::Pvsync2
        )
    {
        return Err(v.error(
            "nowait",
            format!(
                "applies only to ioengine=io_uring, libaio or pvsync2, not {}",
                engine.as_str()
            ),
        ));
    }
    if f.hipri && !direct {
        return Err(v.error(
            "hipri",
            "needs direct=1: polled completion exists only for direct I/O".into(),
        ));
    }
    if f.fixedbufs && numpages > 1 {
        return Err(v.error(
            "fixedbufs",
            format!("cannot be combined with numpages={numpages} (vectored I/O has no fixed form)"),
        ));
    }
    if f.sqthread_poll_cpu.is_some() && !f.sqthread_poll {
        return Err(v.error("sqthread_poll_cpu", "needs sqthread_poll=1".into()));
    }
    Ok(f)
}

/// serialize_overlap=1: taken where it holds by construction, one I/O in flight.
pub(super) fn serialize_overlap(v: &Values<'_>, depth: u32) -> Result<(), SpecError> {
    if v.bool("serialize_overlap")? && depth > 1 {
        return Err(v.error(
            "serialize_overlap",
            format!(
                "with iodepth={}: iogauge does not hold back an I/O that overlaps one in \
                 flight; it takes serialize_overlap=1 with one I/O in flight (iodepth=1)",
                depth
            ),
        ));
    }
    Ok(())
}

/// An option of `owner`'s own (`options::ENGINE_OPTIONS`) given to a job of another engine:
/// refused, naming the first one given.
pub(super) fn own_options_only(
    v: &Values<'_>,
    engine: EngineKind,
    owner: EngineKind,
) -> Result<(), SpecError> {
    if engine == owner {
        return Ok(());
    }
    let own = crate::plan::options::engine_options(owner.as_str());
    match own.iter().find(|o| v.given(o)) {
        Some(o) => Err(v.error(
            o,
            format!(
                "applies only to ioengine={}, not {}",
                owner.as_str(),
                engine.as_str()
            ),
        )),
        None => Ok(()),
    }
}

/// verify with an engine that moves no data (null, falloc, ftruncate): refused.
pub(super) fn null_verify(
    v: &Values<'_>,
    verify: bool,
    engine: EngineKind,
) -> Result<(), SpecError> {
    if verify && engine.moves_no_data() {
        return Err(v.error(
            "verify",
            format!(
                "ioengine={} moves no data: there is nothing to read back",
                engine.as_str()
            ),
        ));
    }
    Ok(())
}

/// cpuio's options: the share of a CPU to burn (required), the spin per cycle and the mode;
/// an error with any other engine.
fn cpu_load(v: &Values<'_>, engine: EngineKind) -> Result<crate::engine::cpu::CpuLoad, SpecError> {
    use crate::engine::cpu::{CpuLoad, CpuMode};
    own_options_only(v, engine, EngineKind::Cpuio)?;
    if engine != EngineKind::Cpuio {
        return Ok(CpuLoad::default());
    }
    let load = v.int("cpuload")?.unwrap_or(0);
    if load == 0 {
        return Err(v.error(
            "ioengine",
            "ioengine=cpuio needs cpuload (the share of a CPU each job burns, 1 to 100)".into(),
        ));
    }
    if v.bool("exit_on_io_done")? {
        return Err(v.error(
            "exit_on_io_done",
            "not done yet: give the cpuio job the I/O jobs' runtime instead".into(),
        ));
    }
    Ok(CpuLoad {
        load: load.min(100) as u32,
        chunk_us: v.int("cpuchunks")?.unwrap_or(50_000) as u32,
        mode: match v.choice("cpumode")?.as_str() {
            "qsort" => CpuMode::Qsort,
            _ => CpuMode::Noop,
        },
    })
}

/// The rules of the engines with options or limits of their own (cpuio, exec, mmap, e4defrag,
/// net), once the job is resolved; exec's program, e4defrag's donor and net's endpoint set.
pub(super) fn rules(
    v: &Values<'_>,
    spec: &mut JobSpec,
    numjobs: u32,
    w: &mut Vec<String>,
) -> Result<(), SpecError> {
    cpuio_rules(v, spec)?;
    mmap_rules(v, spec)?;
    spec.program = super::exec::program(v, spec)?;
    spec.donor = super::defrag::donor(v, spec)?;
    spec.net = super::net::endpoint(v, spec, u64::from(numjobs), w)?;
    Ok(())
}

/// cpuio and exec run for a time (they have no size to reach): `time_based` with a
/// `runtime`. Their one block of region is nominal.
fn cpuio_rules(v: &Values<'_>, spec: &mut JobSpec) -> Result<(), SpecError> {
    let what = match spec.engine {
        EngineKind::Cpuio => "burns CPU",
        EngineKind::Exec => "runs its program",
        _ => return Ok(()),
    };
    if !spec.timing.time_based || spec.timing.runtime.is_none() {
        return Err(v.error(
            "ioengine",
            format!(
                "ioengine={} {what} for a time: give time_based and runtime",
                spec.engine.as_str()
            ),
        ));
    }
    if spec.size.is_none() {
        spec.size = Some(spec.xfer());
    }
    Ok(())
}

/// mmap reads and writes through the page cache (a mapping has no O_DIRECT; fio's only
/// msyncs each I/O) and has no trim: both refused rather than measured as something else.
fn mmap_rules(v: &Values<'_>, spec: &JobSpec) -> Result<(), SpecError> {
    if spec.engine != EngineKind::Mmap {
        return Ok(());
    }
    if spec.direct {
        return Err(v.error(
            "direct",
            "ioengine=mmap copies through the page cache (a mapping cannot bypass it; fio's \
             mmap only msyncs each I/O): use psync, libaio or io_uring for direct I/O"
                .into(),
        ));
    }
    if spec.rw.trims() {
        return Err(v.error(
            "rw",
            "ioengine=mmap has no trim: use psync, libaio or io_uring to trim".into(),
        ));
    }
    Ok(())
}
