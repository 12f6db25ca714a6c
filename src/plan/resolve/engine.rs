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

/// The engines that have each switch: a switch turned on for another engine is refused,
/// naming them.
fn owners(v: &Values<'_>, engine: EngineKind, f: &Flags) -> Result<(), SpecError> {
    use EngineKind::{IoUring, Libaio, Pvsync2};
    const URING: &[EngineKind] = &[IoUring];
    const AIO: &[EngineKind] = &[Libaio];
    const POLLED: &[EngineKind] = &[IoUring, Pvsync2];
    const PER_CALL: &[EngineKind] = &[IoUring, Libaio, Pvsync2];
    let switches: [(&str, bool, &[EngineKind]); 11] = [
        ("force_async", f.force_async > 0, URING),
        ("fixedbufs", f.fixedbufs, URING),
        ("registerfiles", f.registerfiles, URING),
        ("sqthread_poll", f.sqthread_poll, URING),
        ("sqthread_poll_cpu", f.sqthread_poll_cpu.is_some(), URING),
        ("userspace_reap", f.userspace_reap, AIO),
        ("hipri", f.hipri, POLLED),
        ("nowait", f.nowait, PER_CALL),
        ("uncached", f.uncached, POLLED),
        ("atomic", f.atomic, PER_CALL),
        ("thp", f.thp, &[EngineKind::Mmap]),
    ];
    for (name, on, owners) in switches {
        if on && !owners.contains(&engine) {
            let names: Vec<&str> = owners.iter().map(|e| e.as_str()).collect();
            let list = match names.split_last() {
                Some((last, [])) => last.to_string(),
                Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
                None => String::new(),
            };
            return Err(v.error(
                name,
                format!("applies only to ioengine={list}, not {}", engine.as_str()),
            ));
        }
    }
    Ok(())
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
        uncached: v.int("uncached")?.unwrap_or(0) != 0,
        atomic: v.bool("atomic")?,
        userspace_reap: v.bool("userspace_reap")?,
        force_async: v.int("force_async")?.unwrap_or(0) as u32,
        stat_call: super::fileops::stat_call(v, engine)?,
        cpu: cpu_load(v, engine)?,
        inplace: v.bool("inplace")?,
        thp: v.bool("thp")?,
    };
    owners(v, engine, &f)?;
    if f.atomic && !direct {
        return Err(v.error(
            "atomic",
            "needs direct=1: the kernel takes RWF_ATOMIC (torn-write protection) on direct \
             writes only"
                .into(),
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
    scatter_rules(v, spec)?;
    per_call_rules(v, spec, w)?;
    spec.program = super::exec::program(v, spec)?;
    spec.donor = super::defrag::donor(v, spec)?;
    spec.net = super::net::endpoint(v, spec, u64::from(numjobs), w)?;
    Ok(())
}

/// `uncached` and `atomic` on the job as resolved: uncached does nothing to direct I/O (fio
/// ignores it there; iogauge says so), atomic nothing to a job that does not write (fio drops
/// it; iogauge says so), and an atomic write must be one power-of-two size at offsets that are
/// multiples of it, or the kernel refuses each one with EINVAL: refused here instead.
fn per_call_rules(
    v: &Values<'_>,
    spec: &mut JobSpec,
    w: &mut Vec<String>,
) -> Result<(), SpecError> {
    if spec.flags.uncached && spec.direct {
        spec.flags.uncached = false;
        w.push(
            "uncached=1 has no effect with direct=1: direct I/O does not use the page cache \
             (RWF_DONTCACHE is for buffered I/O)"
                .into(),
        );
    }
    if !spec.flags.atomic {
        return Ok(());
    }
    if !spec.rw.writes() {
        spec.flags.atomic = false;
        w.push("atomic=1 has no effect: the job does not write".into());
        return Ok(());
    }
    let refuse = |why: String| Err(v.error("atomic", why));
    let BlockSizes::Fixed(size) = spec.sizes[1] else {
        return refuse(format!(
            "writes of sizes {}: an atomic write must be one power-of-two size at offsets that \
             are multiples of it (the kernel refuses any other with EINVAL); give one write bs",
            spec.sizes[1].describe()
        ));
    };
    let align = spec.random.align.max(spec.bs);
    let misaligned = [
        ("bs", spec.bs),
        ("blockalign", align),
        ("offset", spec.offset),
        ("rw", spec.gap.unsigned_abs()),
    ]
    .into_iter()
    .find(|(_, at)| at % size != 0);
    if !size.is_power_of_two() {
        return refuse(format!(
            "write bs={size} is not a power of two: the kernel takes atomic writes of \
             power-of-two sizes only"
        ));
    }
    if let Some((what, at)) = misaligned {
        return refuse(format!(
            "{what} puts writes at multiples of {at} bytes, but an atomic write of {size} bytes \
             must start at a multiple of {size} (the kernel refuses it with EINVAL otherwise)"
        ));
    }
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

/// windowsaio's scatter/gather (`numpages` above 1) is ReadFileScatter/WriteFileGather, which
/// move whole pages of a file opened without buffering: refused without direct=1 rather than
/// failing at the first I/O.
fn scatter_rules(v: &Values<'_>, spec: &JobSpec) -> Result<(), SpecError> {
    if spec.engine != EngineKind::Windowsaio || spec.numpages <= 1 || spec.direct {
        return Ok(());
    }
    Err(v.error(
        "numpages",
        format!(
            "numpages={} with ioengine=windowsaio is ReadFileScatter/WriteFileGather, which \
             Windows runs only on a file opened without buffering: give direct=1",
            spec.numpages
        ),
    ))
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
    if spec.flags.thp && (spec.rw.writes() || spec.verify.is_some()) {
        return Err(v.error(
            "thp",
            format!(
                "thp=1 with rw={}: fio's thp maps the file privately (MAP_PRIVATE), so writes \
                 would never reach the file; iogauge takes thp for jobs that only read",
                spec.rw.as_str()
            ),
        ));
    }
    Ok(())
}

/// The engine `ioengine` names, if this build has it (Linux's own engines are not in the
/// Windows build).
pub(super) fn engine_kind(v: &Values<'_>) -> Result<EngineKind, SpecError> {
    let name = v.choice("ioengine")?;
    let kind =
        EngineKind::from_name(&name).unwrap_or_else(|| unreachable!("engine {name} not handled"));
    if crate::engine::platform::has(kind) {
        return Ok(kind);
    }
    let crate::plan::options::Kind::Choice(words) = super::values::def("ioengine").kind else {
        unreachable!("ioengine is a choice")
    };
    let here: Vec<&str> = (words.iter().copied())
        .filter(|w| EngineKind::from_name(w).is_some_and(crate::engine::platform::has))
        .collect();
    Err(v.error(
        "ioengine",
        format!(
            "{name} is one of {} own engines, not in this build for {}; it has {}",
            match crate::engine::platform::WINDOWS_KINDS.contains(&kind) {
                true => "Windows'",
                false => "Linux's",
            },
            std::env::consts::OS,
            here.join(", ")
        ),
    ))
}
