//! fio's `file_service_type` for a job with several files: which file each I/O goes to.
//! `roundrobin:N` moves to the next file after N I/Os, `sequential` finishes a file before
//! the next, `random:N` picks a random file every N I/Os. Within its file, a sequential I/O
//! takes that file's next block (per direction) and a random one a block of that file (each
//! once per pass with the random map, as fio's per-file map). A file whose blocks of this
//! pass are all issued is left out until every file's are, so a size-bounded pass covers
//! each file once, as fio's does, whatever the order. Plain `roundrobin` (N = 1) is not
//! built here: the workload's own block order is that already.

use rand_core::RngCore;
use rand_xoshiro::Xoshiro256PlusPlus;

use super::Permutation;
use crate::engine::Dir;

/// The kinds, as fio names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServiceKind {
    RoundRobin,
    Sequential,
    Random,
}

/// `file_service_type`: the kind and the I/Os per turn (`:N`; 1 by default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileService {
    pub kind: ServiceKind,
    pub per_turn: u64,
}

impl FileService {
    /// fio's default: the next file after every I/O.
    pub const ROUND_ROBIN: FileService = FileService {
        kind: ServiceKind::RoundRobin,
        per_turn: 1,
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
}

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
        self.issued(file);
        (file, block)
    }

    /// The file whose turn it is.
    fn pick(&mut self, rng: &mut Xoshiro256PlusPlus) -> usize {
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
