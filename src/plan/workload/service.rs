//! fio's `file_service_type` for a job with several files: which file each I/O goes to.
//! `roundrobin:N` moves to the next file after N I/Os, `sequential` finishes a file before
//! the next, `random:N` picks a random file every N I/Os. Within its file, a sequential I/O
//! takes that file's next block (per direction) and a random one a block of that file (each
//! once per pass with the random map, as fio's per-file map). A file whose blocks of this
//! pass are all issued is left out until every file's are, so a size-bounded pass covers
//! each file once, as fio's does, whatever the order. Plain `roundrobin` (N = 1) is not
//! built here: the workload's own block order is that already. `zipf`, `pareto` and `normal`
//! draw each I/O's file as fio's do: a rank over 1,024 per file from the distribution
//! (zipf's exact, fio's pareto and twelve-draw normal formulas), moved by an offset drawn
//! from the seed (zipf, pareto; normal is centred), divided by 1,024. As in fio, no file is
//! ever done: a hot file's blocks come round again (its random order starts over when used
//! up), and a pass is the job's I/O count, not every block of every file.

use rand_core::RngCore;
use rand_xoshiro::Xoshiro256PlusPlus;

use super::Permutation;
use crate::engine::Dir;

/// The kinds, as fio names them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ServiceKind {
    RoundRobin,
    Sequential,
    Random,
    /// Zipf over the files with exponent theta (not 1).
    Zipf(f64),
    /// Pareto over the files with parameter h (0 < h < 1).
    Pareto(f64),
    /// Gaussian around the middle of the ranked files, deviation in percent of them.
    Normal(f64),
}

impl ServiceKind {
    fn skewed(self) -> bool {
        matches!(
            self,
            ServiceKind::Zipf(_) | ServiceKind::Pareto(_) | ServiceKind::Normal(_)
        )
    }
}

/// `file_service_type`: the kind and the I/Os per turn (`:N`; 1 by default, and always 1 for
/// the distributions).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FileService {
    pub kind: ServiceKind,
    pub per_turn: u64,
    /// A distribution's center (fio's `zipf:THETA:CENTER`, 0 to 1): where its hottest rank
    /// sits among the files, instead of an offset drawn from the seed.
    pub center: Option<f64>,
}

impl FileService {
    /// fio's default: the next file after every I/O.
    pub const ROUND_ROBIN: FileService = FileService {
        kind: ServiceKind::RoundRobin,
        per_turn: 1,
        center: None,
    };
}

/// The state of one job's file service.
#[derive(Debug, Clone)]
pub(super) struct Service {
    svc: FileService,
    blocks: u64,
    file: usize,
    /// I/Os issued in the current turn.
    used: u64,
    /// The current file is done for this pass (or the first random file is yet to be drawn).
    switch: bool,
    /// Per file, blocks issued this pass; a file at `blocks` waits for the next pass.
    issued: Vec<u64>,
    /// Files with blocks left this pass, and where each stands in that list.
    undone: Vec<usize>,
    slot: Vec<usize>,
    /// Sequential I/O: per direction and file, the next block.
    seq: [Vec<u64>; 3],
    /// Random I/O with the map: per file, its pass's order and how far it is.
    perms: Vec<Option<(Permutation, u64)>>,
    /// The distributions: zipf's sampler over the ranks, and the offset of rank 0 (drawn at
    /// the first pick).
    skew: Option<(Option<super::Sampler>, Option<u64>)>,
}

/// Ranks per file (fio's FIO_FSERVICE_SHIFT of 10).
const RANKS_SHIFT: u32 = 10;

impl Service {
    pub(super) fn new(svc: FileService, nfiles: usize, blocks: u64) -> Service {
        Service {
            svc,
            blocks,
            file: 0,
            used: 0,
            switch: svc.kind == ServiceKind::Random,
            issued: vec![0; nfiles],
            undone: (0..nfiles).collect(),
            slot: (0..nfiles).collect(),
            seq: [(); 3].map(|_| vec![0; nfiles]),
            perms: vec![None; nfiles],
            skew: svc.kind.skewed().then(|| {
                let zipf = match svc.kind {
                    ServiceKind::Zipf(t) => Some(super::Sampler::new(
                        &super::Distribution::Zipf(t),
                        (nfiles as u64) << RANKS_SHIFT,
                        1,
                    )),
                    _ => None,
                };
                (zipf, None)
            }),
        }
    }

    /// The file and block of the next I/O.
    pub(super) fn next(
        &mut self,
        dir: Dir,
        random: bool,
        map: bool,
        rng: &mut Xoshiro256PlusPlus,
    ) -> (usize, u64) {
        let file = self.pick(rng);
        let n = self.blocks;
        let block = if !random {
            let c = &mut self.seq[dir as usize][file];
            let b = *c;
            *c = if b + 1 >= n { 0 } else { b + 1 };
            b
        } else if map {
            let (p, at) = self.perms[file].get_or_insert_with(|| (Permutation::new(n, rng), 0));
            let b = p.get(*at);
            *at += 1;
            if *at >= n {
                self.perms[file] = None;
            }
            b
        } else {
            ((u128::from(rng.next_u64()) * u128::from(n)) >> 64) as u64
        };
        // A distribution's files are never done (fio's): no pass bookkeeping.
        if self.skew.is_none() {
            self.issued(file);
        }
        (file, block)
    }

    /// A file drawn from the distribution, as fio draws it.
    fn skewed(&mut self, rng: &mut Xoshiro256PlusPlus) -> usize {
        let n = (self.issued.len() as u64) << RANKS_SHIFT;
        let (zipf, off) = self.skew.as_mut().expect("a distribution");
        let rank = match self.svc.kind {
            ServiceKind::Zipf(_) => zipf.as_ref().expect("zipf's sampler").draw(rng, n),
            ServiceKind::Pareto(h) => {
                ((n - 1) as f64 * super::draw::unit(rng).powf(h.ln() / (1.0 - h).ln())) as u64
            }
            ServiceKind::Normal(dev) => {
                // Twelve uniform draws in [0, n], averaged, then up to half of DEV percent
                // either way.
                let sum: u64 = (0..12).map(|_| rng.next_u64() % (n + 1)).sum();
                let mut at = sum.div_ceil(12) as i64;
                let spread = ((n as f64 * dev / 100.0).ceil() as i64).min(n as i64 / 2);
                if spread > 0 {
                    let mut d = (spread as f64 * super::draw::unit(rng)) as i64 - spread / 2;
                    while d + at >= n as i64 {
                        d /= 2;
                    }
                    at += d;
                }
                at.max(0) as u64
            }
            _ => unreachable!("a distribution"),
        };
        // fio's rand_off: zipf's and pareto's drawn, or n × center; normal's 0, or
        // n × (center − 0.5) kept in 32 bits (wrapping below 0.5, as fio's conversion does).
        let off = match (self.svc.kind, self.svc.center) {
            (ServiceKind::Normal(_), None) => 0,
            (ServiceKind::Normal(_), Some(c)) => u64::from((n as f64 * (c - 0.5)) as i64 as u32),
            (_, Some(c)) => (n as f64 * c) as u64,
            _ => *off.get_or_insert_with(|| rng.next_u64() % n),
        };
        (((rank + off) % n) >> RANKS_SHIFT) as usize
    }

    /// The file whose turn it is.
    fn pick(&mut self, rng: &mut Xoshiro256PlusPlus) -> usize {
        if self.skew.is_some() {
            self.file = self.skewed(rng);
            return self.file;
        }
        let turn_over = self.svc.kind != ServiceKind::Sequential && self.used >= self.svc.per_turn;
        if turn_over || self.switch {
            self.switch = false;
            self.file = match self.svc.kind {
                ServiceKind::Random => {
                    self.undone[(rng.next_u64() % self.undone.len() as u64) as usize]
                }
                // The next file in order that has blocks left.
                _ => {
                    let n = self.issued.len();
                    (1..=n)
                        .map(|k| (self.file + k) % n)
                        .find(|&f| self.issued[f] < self.blocks)
                        .expect("a file with blocks left")
                }
            };
            self.used = 0;
        }
        self.used += 1;
        self.file
    }

    /// Counts a block of `file`; when every file's are issued, a new pass begins.
    fn issued(&mut self, file: usize) {
        self.issued[file] += 1;
        if self.issued[file] < self.blocks {
            return;
        }
        self.switch = true;
        let at = self.slot[file];
        self.undone.swap_remove(at);
        if let Some(&moved) = self.undone.get(at) {
            self.slot[moved] = at;
        }
        if self.undone.is_empty() {
            let n = self.issued.len();
            self.issued.iter_mut().for_each(|i| *i = 0);
            self.undone = (0..n).collect();
            self.slot = (0..n).collect();
        }
    }
}
