//! Generation maps: which write each block must hold — a job's own (`GenMap`), one shared by
//! the jobs writing a file at once (`SharedMap`), and the one a group's writers hand to a
//! later group's readers (`Handed`).

use super::Gen;

/// The generation of every block of a file, a byte each: 0 never written, 255 uncertain
/// (overlapping writes were in flight), else 1..=254 counting the block's writes round.
/// 1 TiB at 4 KiB blocks costs 256 MiB.
#[derive(Debug, Clone, Default)]
pub struct GenMap {
    gens: Vec<u8>,
}

const ANY: u8 = 255;

impl GenMap {
    /// A block reported bad is not checked again (a backlog pause and the final check would
    /// both find it).
    pub fn forget(&mut self, block: usize) {
        self.gens[block] = 0;
    }

    pub fn new(blocks: usize) -> Self {
        GenMap {
            gens: vec![0; blocks],
        }
    }

    pub fn get(&self, block: usize) -> Gen {
        match self.gens[block] {
            0 => Gen::Unwritten,
            ANY => Gen::Any,
            g => Gen::Is(g),
        }
    }

    /// The generation a new write of `block` carries.
    pub fn next(&self, block: usize) -> u32 {
        match self.gens[block] {
            0 | ANY | 254 => 1,
            g => u32::from(g) + 1,
        }
    }

    /// The write of `block` with generation `g` was acknowledged; `overlapped`: another
    /// write of it was in flight at the same time, so the media may hold either.
    pub fn acknowledge(&mut self, block: usize, g: u32, overlapped: bool) {
        self.gens[block] = if overlapped { ANY } else { g as u8 };
    }

    /// Blocks written at least once.
    pub fn written(&self) -> usize {
        self.gens.iter().filter(|&&g| g != 0).count()
    }

    pub fn len(&self) -> usize {
        self.gens.len()
    }

    pub fn is_empty(&self) -> bool {
        self.gens.is_empty()
    }
}

/// What the verifying writers of a run left in one file, block by block: the job whose
/// write each block must hold and that write's generation. Handed from a group's writers to
/// a later group's jobs that check the file as they read it, so a block holding an older
/// write of the same run (a rewrite lost, an earlier copy) is caught, not taken for data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handed {
    /// Where block 0 is in the file.
    pub base: u64,
    pub interval: u64,
    /// Per block: the job (or [`ANY_WRITER`] when several wrote the file at once) and the
    /// generation of its last acknowledged write (`Gen::Unwritten`: none of this run).
    pub blocks: Vec<(u32, Gen)>,
}

/// [`Handed`]'s job for a block any of a file's writers may hold.
pub const ANY_WRITER: u32 = u32::MAX;

impl Handed {
    /// `later` written over `self`: its written blocks win, the others stay. On another
    /// block grid the earlier map cannot be matched block for block, and `later` alone is
    /// kept.
    pub fn overwritten_by(&self, later: &Handed) -> Handed {
        if (self.base, self.interval) != (later.base, later.interval) {
            return later.clone();
        }
        let n = self.blocks.len().max(later.blocks.len());
        let blocks = (0..n)
            .map(|b| match later.blocks.get(b) {
                Some(&(j, g)) if g != Gen::Unwritten => (j, g),
                _ => self
                    .blocks
                    .get(b)
                    .copied()
                    .unwrap_or((ANY_WRITER, Gen::Unwritten)),
            })
            .collect();
        Handed {
            base: self.base,
            interval: self.interval,
            blocks,
        }
    }

    /// The writer and generation of the block at byte `offset`, if this map has it.
    pub fn at(&self, offset: u64) -> Option<(u32, Gen)> {
        let rel = offset.checked_sub(self.base)?;
        if rel % self.interval != 0 {
            return None;
        }
        self.blocks
            .get((rel / self.interval) as usize)
            .copied()
            .filter(|(_, g)| *g != Gen::Unwritten)
    }
}

/// The generation map of a file several jobs write at once: per block its generation (as
/// [`GenMap`]) and how many writes of it are in flight, both atomic. A write that starts while
/// another of the same block is in flight, from any job, leaves the block uncertain; one that
/// ends alone records its generation only if nothing changed the block meanwhile. Three bytes
/// per block.
/// [`SharedMap`]'s in-flight count, and the flag that writes of the block overlapped.
const COUNT: u16 = 0x7FFF;
const TAINT: u16 = 0x8000;

#[derive(Debug)]
pub struct SharedMap {
    /// Where block 0 starts in the file: the writers' regions are whole blocks from here.
    pub base: u64,
    gens: Vec<std::sync::atomic::AtomicU8>,
    inflight: Vec<std::sync::atomic::AtomicU16>,
}

impl SharedMap {
    /// See [`GenMap::forget`].
    pub fn forget(&self, block: usize) {
        self.gens[block].store(0, std::sync::atomic::Ordering::Release);
    }

    pub fn new(base: u64, blocks: usize) -> Self {
        SharedMap {
            base,
            gens: (0..blocks).map(|_| Default::default()).collect(),
            inflight: (0..blocks).map(|_| Default::default()).collect(),
        }
    }

    pub fn len(&self) -> usize {
        self.gens.len()
    }

    pub fn is_empty(&self) -> bool {
        self.gens.is_empty()
    }

    pub fn get(&self, block: usize) -> Gen {
        match self.gens[block].load(std::sync::atomic::Ordering::Acquire) {
            0 => Gen::Unwritten,
            ANY => Gen::Any,
            g => Gen::Is(g),
        }
    }

    /// A write of `block` is being sealed: the generation it carries, the map's value it
    /// replaces, and whether another write of the block is in flight (all for
    /// [`SharedMap::end`]).
    pub fn begin(&self, block: usize) -> (u32, u8, bool) {
        use std::sync::atomic::Ordering::AcqRel;
        let overlapped = self.inflight[block].fetch_add(1, AcqRel) & COUNT > 0;
        if overlapped {
            // Another write of it is in flight: either may reach the media last. The taint
            // stays until the last of them ends, so each of them leaves the block uncertain.
            self.inflight[block].fetch_or(TAINT, AcqRel);
            self.gens[block].store(ANY, std::sync::atomic::Ordering::Release);
        }
        let old = self.gens[block].load(std::sync::atomic::Ordering::Acquire);
        let next = match old {
            0 | ANY | 254 => 1,
            g => u32::from(g) + 1,
        };
        (next, old, overlapped)
    }

    /// The write begun with `(generation, old, overlapped)` ended: acknowledged (`ok`) or not.
    pub fn end(&self, block: usize, (generation, old, overlapped): (u32, u8, bool), ok: bool) {
        use std::sync::atomic::Ordering::{AcqRel, Acquire, Release};
        let mut tainted = false;
        let _ = self.inflight[block].fetch_update(AcqRel, Acquire, |cur| {
            tainted = cur & TAINT != 0;
            // The last one out clears the taint.
            Some(if cur & COUNT <= 1 { 0 } else { cur - 1 })
        });
        if !ok || tainted || overlapped {
            // A failed write may have landed in part; with others in flight, either data may
            // be there.
            self.gens[block].store(ANY, Release);
        } else {
            // Unless another write began (and marked it) meanwhile.
            let _ = self.gens[block].compare_exchange(old, generation as u8, AcqRel, Acquire);
        }
    }

    /// The block's map byte as it is now, for [`SharedMap::settled`].
    pub fn snapshot(&self, block: usize) -> u8 {
        self.gens[block].load(std::sync::atomic::Ordering::Acquire)
    }

    /// What a read of `block` may be held to: its generation if the map still holds
    /// `before` (taken when the read was issued) and no write of it is in flight now; else
    /// [`Gen::Any`], since another job's write may have landed before or after the read
    /// (or unwritten, if it was when the read was issued: the read may predate the write).
    /// (A write in flight when the read was issued has ended with the map changed, or is
    /// still in flight.)
    pub fn settled(&self, block: usize, before: u8) -> Gen {
        use std::sync::atomic::Ordering::Acquire;
        let now = self.get(block);
        let busy = self.inflight[block].load(Acquire) & COUNT > 0;
        if busy || self.snapshot(block) != before {
            // Unwritten when the read was issued: it may have read nothing of the write.
            if now == Gen::Unwritten || before == 0 {
                Gen::Unwritten
            } else {
                Gen::Any
            }
        } else {
            now
        }
    }

    /// Blocks written at least once.
    pub fn written(&self) -> usize {
        (0..self.len())
            .filter(|&b| self.get(b) != Gen::Unwritten)
            .count()
    }
}
