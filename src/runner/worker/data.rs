//! The data a job writes: one random pattern per job (or zeros), copied into every slot so
//! what is written does not depend on which slot carried it, each block stamped with its
//! offset-independent sequence number so no two blocks are alike (no deduplication), or
//! refilled from a seed per write (`refill_buffers`). Which files were written, for the final
//! flush.

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::Loop;
use crate::engine::{AlignedBuf, Engine, IoUnit};
use crate::plan::{DataMode, DataShape, JobSpec};
use crate::verify::fill_pattern;

pub(super) struct Pattern {
    pub(super) template: AlignedBuf,
    /// Indexed like the workload's files (the null engine opens none, but still rotates).
    pub(super) wrote: Vec<bool>,
    /// The next write's sequence number, taken in workload order.
    pub(super) write_seq: u64,
}

impl Pattern {
    pub(super) fn new(template: AlignedBuf, files: usize) -> Self {
        Pattern {
            template,
            wrote: vec![false; files],
            write_seq: 0,
        }
    }
}

/// Makes each written block unique (defeating deduplication) without the cost of refilling:
/// the first 8 bytes of every 512-byte sector get a stamp from the write's sequence number.
/// Sectors are numbered across the unit's pages.
#[inline]
pub(super) fn stamp(u: &mut IoUnit, seq: u64, shape: &DataShape) {
    let mut first = 0u64;
    for page in u.pages_mut() {
        stamp_page(page, seq, first, shape);
        first += (page.len() / 512) as u64;
    }
}

/// Stamps one page of write `seq` whose first sector is the write's sector `first`. Sectors in
/// a chunk's zeros (buffer_compress_percentage) keep them.
#[inline]
pub(super) fn stamp_page(page: &mut [u8], seq: u64, first: u64, shape: &DataShape) {
    let base = seq.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    for (k, sector) in page.chunks_exact_mut(512).enumerate() {
        if shape.stamps_sector(k * 512) {
            sector[..8].copy_from_slice(&(base ^ (first + k as u64)).to_le_bytes());
        }
    }
}

/// refill_buffers: write `seq`'s generator, seeded by its number, so its bytes are the same
/// whatever the completion order (and can be made again to check them).
pub(super) fn refill_rng(job: &JobSpec, seq: u64) -> Xoshiro256PlusPlus {
    Xoshiro256PlusPlus::seed_from_u64(job.random.seed ^ seq.wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// Fills one page (or its start) of a refill write, shaped as the job asks.
pub(super) fn refill_page(rng: &mut Xoshiro256PlusPlus, page: &mut [u8], shape: &DataShape) {
    rng.fill_bytes(page);
    shape.shape(page);
}

pub(super) fn copy_template(u: &mut IoUnit, template: &[u8]) {
    copy_template_prefix(u, template, u.page_len());
}

/// Puts the template back into the first `n` bytes of each page: what a read left there.
fn copy_template_prefix(u: &mut IoUnit, template: &[u8], n: usize) {
    let page_len = u.page_len();
    for (page, src) in u.buffers_mut().zip(template.chunks(page_len)) {
        page[..n].copy_from_slice(&src[..n]);
    }
}

impl<E: Engine> Loop<'_, '_, E> {
    /// Fills slot `i`'s buffers for a write. `write_back`: update mode's write of the block
    /// just read, which keeps the data read.
    pub(super) fn prepare_write(&mut self, i: usize, write_back: bool) {
        let (u, s) = (&mut self.slab[i], &mut self.st[i]);
        if !write_back {
            s.write_seq = self.data.write_seq;
            self.data.write_seq += 1;
            if s.dirty > 0 {
                // Only what reads overwrote: a 4 KiB read in a slot sized for 64 KiB I/Os
                // costs a 4 KiB copy, not 64.
                let n = (s.dirty as usize).min(u.page_len());
                copy_template_prefix(u, &self.data.template, n);
            }
        }
        s.dirty = 0;
        let job = self.w.job;
        match job.data {
            DataMode::Random => {
                // Unique per write unless dedupe_percentage repeats it or scrambling is off.
                if let Some(stamp_seq) = job.data_shape.stamp_of(job.data, s.write_seq) {
                    stamp(u, stamp_seq, &job.data_shape);
                }
            }
            DataMode::Refill => {
                let mut rng = refill_rng(job, s.write_seq);
                for page in u.pages_mut() {
                    refill_page(&mut rng, page, &job.data_shape);
                }
            }
            DataMode::Pattern if job.data_shape.pattern_per_write() => {
                // fio's %o and verify_pattern_interval: the bytes depend on where they go.
                let shape = &job.data_shape;
                let pattern = (&shape.pattern[..], &shape.pattern_offsets[..]);
                let (at, mut from) = (u.offset, 0);
                for page in u.pages_mut() {
                    fill_pattern(page, pattern, shape.pattern_segment, at, from);
                    from += page.len() as u64;
                }
            }
            DataMode::Zero | DataMode::Pattern => {}
        }
        self.seal_write(i, write_back);
    }
}

/// The template's seed for jobs sharing a dedupe working set (`dedupe_global`).
const SHARED_TEMPLATE_SEED: u64 = 0xDEDE_0F10_5EED_0001;

/// The pattern every slot starts from (`bs` × `npages` bytes), so what is written does not
/// depend on which slot carried it: the same workload writes the same bytes at any depth, on
/// any engine.
pub(super) fn template(job: &JobSpec, bs: usize, npages: usize) -> AlignedBuf {
    let mut template = AlignedBuf::zeroed(bs * npages);
    match job.data {
        DataMode::Random | DataMode::Refill => {
            // Jobs sharing a dedupe working set write from one template, so that a write of
            // one repeating another's carries the same bytes.
            let seed = match job.data_shape.dedupe_share {
                Some(_) => SHARED_TEMPLATE_SEED,
                None => job.random.seed ^ 0xDA7A,
            };
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
            rng.fill_bytes(&mut template);
            for page in template.chunks_mut(bs) {
                job.data_shape.shape(page);
            }
        }
        DataMode::Pattern => {
            // The pattern from the write's start (a write that pastes its offset or restarts
            // the pattern is filled again as it is prepared).
            fill_pattern(&mut template, (&job.data_shape.pattern, &[]), 0, 0, 0);
        }
        DataMode::Zero => {}
    }
    template
}
