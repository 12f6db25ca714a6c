//! A job's workload as the worker draws it: the plan's job turned into the generator of its
//! I/Os, with fio's own random offsets where the job's own seed is used.

use super::planned_bytes;
use crate::plan::JobSpec;
use crate::plan::workload::{Region, Workload, fiorand};

/// The job's workload from `seed`. With the job's own seed, its random offsets are fio's (the
/// generators seeded as fio seeds them); with another (the measured part after a ramp, which
/// starts afresh), iogauge's, so the measured I/O does not repeat the ramp's blocks.
pub(super) fn workload(job: &JobSpec, seed: u64) -> Workload {
    let fio = seed == job.random.seed;
    let nfiles = job.paths().len() as u64;
    let region = Region {
        nfiles,
        blocks_per_file: job.blocks_per_file(),
        bs: job.xfer(),
        base: job.offset,
    };
    let passes = (!job.timing.time_based).then_some(u64::from(job.timing.loops));
    let mut wl = Workload::new(
        job.rw,
        region,
        job.read_pct,
        job.random.randommap,
        seed,
        passes,
    )
    .with_gap(job.gap);
    if !job.fixed_size() {
        // Variable sizes come with numpages = 1 (resolve checks), so sizes are bytes per I/O.
        wl = wl.with_sizes(&job.sizes);
    }
    if let Some(z) = job.zones {
        wl = wl.with_zones(z.range, z.size, z.skip);
    }
    wl = wl.with_file_service(job.file_service);
    wl = wl
        .with_distribution(
            &job.random.distribution,
            job.random.center,
            &skew_seeds(job, fio, seed),
        )
        .with_pct_random(job.random.pct_random)
        .with_align(job.random.align)
        .with_number_ios(job.number_ios);
    if fio {
        wl = wl.with_fio_offsets(job.fio_seeds(), &job.random.distribution);
    }
    if job.io_bytes.is_some() {
        if let Some(total) = planned_bytes(job) {
            wl = wl.with_total_bytes(total);
        }
    }
    wl
}

/// Each file's seed for a skewed distribution: fio's (see `JobSpec::skew_seeds`), or, for a
/// workload started afresh, ones from `seed`.
fn skew_seeds(job: &JobSpec, fio: bool, seed: u64) -> Vec<u32> {
    match fio {
        true => job.skew_seeds(),
        false => (0..job.paths().len() as u64)
            .map(|i| fiorand::fold(seed) ^ i.wrapping_mul(0x9E37_79B9) as u32)
            .collect(),
    }
}
